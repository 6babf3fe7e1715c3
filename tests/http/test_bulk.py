"""Bulk actions (API.md §23), black-box, on the backend under test: POST /documents/bulk
and /images/bulk with `ids` (a comma list or a JSON array, 1 to 100, deduplicated,
anything not numeric a 422 naming `ids`) and `action` favorite, unfavorite, tag, untag,
delete: done and missing ascending, another user's and unknown ids missing and
untouched, all or nothing (a tag taking a record past 20 tags changes nothing), a
delete removing the picture as DELETE does; and the ZIP export of documents (names as
§12, duplicates numbered, UTF-8 names, contents equal to the single export, every format,
every id the user's and completed, a read key may export but do nothing else). The
delete is one store transaction: a store failing midway (a trigger the test installs
raises on the last id's row) leaves every record and picture, and a delete ends the open
streams of its records; the `*.deleted` webhook events are written for each record
deleted, none for a delete that failed."""
import io
import json
import os
import sqlite3
import subprocess
import unittest
import urllib.parse
import uuid
import zipfile

from harness import BACKEND, Server, ServerTest
from test_stream import Stream

API = "/api/v1"


class Bulk(ServerTest):
    server_args = ["--webhook-allow-private", "1"]  # an endpoint nobody listens at

    def fresh(self):
        return self.srv.key("b-" + uuid.uuid4().hex[:8])

    def bulk(self, key, kind="documents", **fields):
        if any(isinstance(v, list) for v in fields.values()):
            return self.req("POST", f"{API}/{kind}/bulk", key=key, json_body=fields)
        return self.req("POST", f"{API}/{kind}/bulk", key=key, form=fields)

    def show(self, key, kind, i):
        return self.req("GET", f"{API}/{kind}/{i}", key=key)

    def assert422(self, r, field):
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json["status"], 422)
        self.assertIn(field, r.json["message"], r)

    def test_ids(self):
        k = self.fresh()
        a, b = self.make_doc(key=k)["id"], self.make_doc(key=k)["id"]
        theirs = self.make_doc(key="bob")["id"]
        r = self.bulk(k, ids=f"{b}, {a},{a},{theirs},999999", action="favorite")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json, {"data": {"done": [a, b], "missing": [theirs, 999999]},
                                  "status": 200})
        self.assertIs(self.show("bob", "documents", theirs).json["data"]["favorite"], False)
        r = self.bulk(k, ids=[b, str(a), b], action="unfavorite")
        self.assertEqual(r.json["data"], {"done": [a, b], "missing": []})
        for i in (a, b):
            self.assertIs(self.show(k, "documents", i).json["data"]["favorite"], False)
        for bad in ("1,x", "", "1,,2", "-1", "0", "1.5", "1e3", "99999999999999999999"):
            self.assert422(self.bulk(k, ids=bad, action="favorite"), "ids")
        for bad in ([], ["x"], [1.5], [[1]], [0], [True]):
            self.assert422(self.bulk(k, ids=bad, action="favorite"), "ids")
        self.assert422(self.bulk(k, ids=list(range(1, 102)), action="favorite"), "ids")
        r = self.bulk(k, ids=list(range(1, 101)) + [1], action="unfavorite")  # 100 distinct
        self.assertEqual(r.status, 200, r)
        self.assert422(self.bulk(k, action="favorite"), "ids")
        self.assert422(self.bulk(k, ids=str(a)), "action")
        self.assert422(self.bulk(k, ids=str(a), action="explode"), "action")
        self.assert422(self.bulk(k, "images", ids=str(a), action="export"), "action")
        self.assert422(self.bulk(k, ids=str(a), action="tag"), "tags")
        self.assert422(self.bulk(k, ids=str(a), action="tag", tags=""), "tags")
        r = self.req("POST", f"{API}/documents/bulk", key=k, body="x",
                     headers={"Content-Type": "text/plain"})
        self.assertEqual(r.status, 415, r)
        self.assertEqual(self.req("GET", f"{API}/documents/bulk", key=k).status, 405)

    def test_tag_untag(self):
        k = self.fresh()
        a = self.make_doc(key=k, tags="one,Two")["id"]
        b = self.make_doc(key=k)["id"]
        r = self.bulk(k, ids=f"{a},{b}", action="tag", tags="two,three")
        self.assertEqual(r.json["data"], {"done": [a, b], "missing": []})
        self.assertEqual(self.show(k, "documents", a).json["data"]["tags"], ["one", "Two", "three"])
        self.assertEqual(self.show(k, "documents", b).json["data"]["tags"], ["Two", "three"])
        r = self.bulk(k, ids=[a, b], action="untag", tags=["TWO", "absent"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.show(k, "documents", a).json["data"]["tags"], ["one", "three"])
        self.assertEqual(self.show(k, "documents", b).json["data"]["tags"], ["three"])
        # past 20 on one record: nothing changes on any
        full = [f"t{i}" for i in range(19)]
        r = self.req("PATCH", f"{API}/documents/{a}", key=k, json_body={"tags": full})
        self.assertEqual(r.status, 200, r)
        before = {i: self.show(k, "documents", i).json["data"] for i in (a, b)}
        r = self.bulk(k, ids=f"{a},{b}", action="tag", tags="x,y")
        self.assert422(r, "tags")
        for i in (a, b):
            self.assertEqual(self.show(k, "documents", i).json["data"], before[i])
        r = self.bulk(k, ids=f"{a},{b}", action="tag", tags="x")  # 20: fine
        self.assertEqual(r.status, 200, r)
        self.assertEqual(len(self.show(k, "documents", a).json["data"]["tags"]), 20)
        self.assertEqual(self.show(k, "documents", b).json["data"]["revision"], 1)
        # images
        img = self.make_image(key=k)["id"]
        r = self.bulk(k, "images", ids=str(img), action="tag", tags="sky")
        self.assertEqual(r.json["data"], {"done": [img], "missing": []})
        self.assertEqual(self.show(k, "images", img).json["data"]["tags"], ["sky"])
        tags = {t["name"]: (t["documents"], t["images"])
                for t in self.req("GET", f"{API}/tags", key=k).json["data"]}
        self.assertEqual((tags["x"], tags["sky"], tags["three"]), ((2, 0), (0, 1), (1, 0)))

    def test_delete(self):
        k = self.fresh()
        imgs = [self.make_image(key=k) for _ in range(2)]
        theirs = self.make_image(key="bob")
        url = imgs[0]["url"]
        path = urllib.parse.urlsplit(url).path
        self.assertEqual(self.srv.request("GET", path).status, 200)
        r = self.bulk(k, "images", ids=[i["id"] for i in imgs] + [theirs["id"]], action="delete")
        self.assertEqual(r.json["data"], {"done": sorted(i["id"] for i in imgs),
                                          "missing": [theirs["id"]]})
        for i in imgs:
            self.assertEqual(self.show(k, "images", i["id"]).status, 404)
        self.assertEqual(self.srv.request("GET", path).status, 404)
        self.assertEqual(self.show("bob", "images", theirs["id"]).status, 200)
        d = self.make_doc(key=k, tags="gone")
        r = self.bulk(k, ids=str(d["id"]), action="delete")
        self.assertEqual(r.json["data"], {"done": [d["id"]], "missing": []})
        self.assertEqual(self.req("GET", f"{API}/tags", key=k).json["data"], [])

    def fail_deleting(self, table, rid):
        """Until the test ends, the store fails (an error raised in its transaction) when
        the row rid of table is deleted."""
        if BACKEND == "sqlite":
            def run(sql):
                db = sqlite3.connect(os.path.join(self.srv.data_dir, "inkwell.db"), timeout=30)
                try:
                    db.execute(sql)
                    db.commit()
                finally:
                    db.close()
            run(f"CREATE TRIGGER bulk_fail BEFORE DELETE ON {table} WHEN OLD.id = {int(rid)}"
                " BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
            self.addCleanup(run, "DROP TRIGGER bulk_fail")
            return

        def psql(sql):
            subprocess.run(["psql", self.srv.database, "-qAtc", sql], check=True,
                           capture_output=True)
        psql("CREATE FUNCTION bulk_fail() RETURNS trigger LANGUAGE plpgsql AS"
             " $$BEGIN RAISE EXCEPTION 'injected failure'; END$$;"
             f"CREATE TRIGGER bulk_fail BEFORE DELETE ON {table} FOR EACH ROW"
             f" WHEN (OLD.id = {int(rid)}) EXECUTE FUNCTION bulk_fail()")
        self.addCleanup(psql, f"DROP TRIGGER bulk_fail ON {table}; DROP FUNCTION bulk_fail()")

    def test_delete_failing_midway_deletes_nothing(self):
        k = self.fresh()
        # a webhook endpoint (nothing listens there): its deliveries show the events
        # the deletes wrote in their transaction (API.md §22)
        r = self.req("POST", f"{API}/webhooks", key=k,
                     form={"url": "http://127.0.0.1:9/hook", "events": "*"})
        self.assertEqual(r.status, 201, r)
        hook = r.json["data"]["id"]

        def deleted(kind):
            r = self.req("GET", f"{API}/webhooks/{hook}/deliveries?per_page=100", key=k)
            self.assertEqual(r.status, 200, r)
            return sorted(d["record_id"] for d in r.json["data"] if d["type"] == f"{kind}.deleted")
        imgs = [self.make_image(key=k) for _ in range(3)]
        ids = sorted(i["id"] for i in imgs)
        paths = [urllib.parse.urlsplit(i["url"]).path for i in imgs]
        self.fail_deleting("images", ids[-1])  # the last one: the others go first
        r = self.bulk(k, "images", ids=ids, action="delete")
        self.assertIn(r.status, (500, 503), r)
        self.assertEqual(r.json["status"], r.status)
        self.assertIn("message", r.json)
        for i in ids:
            self.assertEqual(self.show(k, "images", i).status, 200, i)
        for p in paths:
            self.assertEqual(self.srv.request("GET", p).status, 200, p)
        docs = sorted(self.make_doc(key=k, tags="kept")["id"] for _ in range(3))
        self.doCleanups()  # the images' trigger goes
        self.fail_deleting("documents", docs[-1])
        r = self.bulk(k, ids=docs, action="delete")
        self.assertIn(r.status, (500, 503), r)
        for i in docs:
            self.assertEqual(self.show(k, "documents", i).json["data"]["tags"], ["kept"])
        self.assertEqual((deleted("image"), deleted("document")), ([], []))
        self.doCleanups()
        # the store answers again: the same delete takes every one, and every picture
        r = self.bulk(k, "images", ids=ids, action="delete")
        self.assertEqual(r.json["data"], {"done": ids, "missing": []})
        for i in ids:
            self.assertEqual(self.show(k, "images", i).status, 404)
        for p in paths:
            self.assertEqual(self.srv.request("GET", p).status, 404, p)
        r = self.bulk(k, ids=docs, action="delete")
        self.assertEqual(r.json["data"], {"done": docs, "missing": []})
        self.assertEqual(self.req("GET", f"{API}/tags", key=k).json["data"], [])
        self.assertEqual((deleted("image"), deleted("document")), (ids, docs))

    def export(self, key, ids, fmt=None):
        f = {"ids": ",".join(map(str, ids)), "action": "export"}
        if fmt:
            f["format"] = fmt
        return self.req("POST", f"{API}/documents/bulk", key=key, form=f)

    def test_export_zip(self):
        k = self.fresh()
        docs = [self.make_doc(key=k, name=n) for n in
                ["Notes", "Café ☕ 東京", "Notes", "a/b:c", "Notes", "notes"]]
        ids = [d["id"] for d in docs]
        r = self.export(k, list(reversed(ids)) + [ids[0]])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Content-Type"), "application/zip")
        self.assertIn('filename="documents.zip"', r.header("Content-Disposition"))
        z = zipfile.ZipFile(io.BytesIO(r.body))
        self.assertIsNone(z.testzip())
        names = z.namelist()
        self.assertEqual(names, ["Notes.md", "Café ☕ 東京.md", "Notes (2).md", "a_b_c.md",
                                 "Notes (3).md", "notes.md"])
        for info in z.infolist():  # UTF-8 names flagged as such
            if any(ord(c) > 127 for c in info.filename):
                self.assertTrue(info.flag_bits & 0x800, info.filename)
        for name, d in zip(names, docs):
            single = self.req("GET", f"{API}/documents/{d['id']}/export?format=md", key=k)
            self.assertEqual(z.read(name), single.body)
            self.assertTrue(z.read(name).decode().startswith(f"# {d['name']}\n\n"))
        for fmt, magic in (("txt", None), ("html", b"<!DOCTYPE html"), ("docx", b"PK"),
                           ("pdf", b"%PDF")):
            r = self.export(k, ids[:2], fmt)
            self.assertEqual(r.status, 200, (fmt, r))
            z = zipfile.ZipFile(io.BytesIO(r.body))
            self.assertEqual(z.namelist(), [f"Notes.{fmt}", f"Café ☕ 東京.{fmt}"])
            first = z.read(f"Notes.{fmt}")
            if magic:
                self.assertTrue(first.startswith(magic), (fmt, first[:20]))
            else:
                self.assertEqual(first.decode(), docs[0]["result"])
        self.assert422(self.export(k, ids[:1], "rtf"), "format")
        # every id the user's and completed
        self.assert422(self.export(k, [ids[0], 999999]), "ids")
        self.assert422(self.export(k, [ids[0], self.make_doc(key="bob")["id"]]), "ids")
        queued = self.req("POST", f"{API}/documents", key=k, form={"name": "q", "prompt": "p"},
                          headers={"Prefer": "respond-async"})
        self.assertIn(queued.status, (201, 202), queued)
        if queued.json["data"]["state"] != "completed":
            r = self.export(k, [ids[0], queued.json["data"]["id"]])
            self.assertIn(r.status, (200, 422), r)  # it may have completed meanwhile

    def test_read_key(self):
        reader = self.srv.cli("key", "create", "--user", "alice", "--scope", "read").stdout.strip()
        self.srv.keys.append(reader)
        d = self.make_doc(key="alice")
        r = self.export(reader, [d["id"]])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(zipfile.ZipFile(io.BytesIO(r.body)).namelist(), ["Doc.md"])
        for action in ("favorite", "delete", "tag"):
            r = self.req("POST", f"{API}/documents/bulk", key=reader,
                         form={"ids": str(d["id"]), "action": action, "tags": "x"})
            self.assertError(r, 403, "This key may only read.")
        r = self.req("POST", f"{API}/images/bulk", key=reader, form={"ids": "1", "action": "export"})
        self.assertError(r, 403, "This key may only read.")
        self.assertEqual(self.req("GET", f"{API}/documents/{d['id']}").json["data"]["favorite"],
                         False)


class BulkDeleteStreams(unittest.TestCase):
    """A bulk delete ends the open streams of its records (generations long enough to be
    under way when the delete comes: the builtin delay, as test_stream.py's)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server("--builtin-delay-ms", "20000", "--workers", "4").start()

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}")

    def test_delete_ends_open_streams(self):
        k = self.srv.key("b-" + uuid.uuid4().hex[:8])
        rids = []
        for _ in range(2):
            r = self.srv.request("POST", f"{API}/documents", key=k,
                                 form={"name": "del", "prompt": "p"},
                                 headers={"Prefer": "respond-async"})
            rids.append(r.json["data"]["id"])
        streams = [Stream(self.srv.port, "GET", f"{API}/documents/{i}", k) for i in rids]
        for s in streams:
            self.assertEqual(s.next_event()[0], "record")
        r = self.srv.request("POST", f"{API}/documents/bulk", key=k,
                             form={"ids": ",".join(map(str, rids)), "action": "delete"})
        self.assertEqual(r.json["data"], {"done": sorted(rids), "missing": []})
        for s in streams:
            evs = s.events()
            self.assertEqual(evs[-1][0], "error")
            self.assertEqual(evs[-1][2]["message"], "The record was deleted.")


if __name__ == "__main__":
    unittest.main()
