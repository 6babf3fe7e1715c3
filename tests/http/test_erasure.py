"""A deleted user leaves nothing behind (API.md §19, issue 33): deleted by the admin route
and by `inkwell user delete`, a user whose documents and images have several revisions
(regenerated, edited, an action, restored) and revision pictures, custom templates,
idempotency answers and usage leaves no trace of their text in any table of the
database — every column of every row of every table the database lists itself (SQLite:
sqlite_schema, packed texts unpacked; PostgreSQL: a data-only pg_dump), so a table added
later is scanned too — and no picture file in the media directory. And what runs for
them ends: a stream of their running generation ends with the deletion, a waiting create
answers as for a deleted record (502), and the job stops. Both backends; two processes
on PostgreSQL are in test_pg_erasure.py."""
import json
import os
import sqlite3
import subprocess
import time
import unittest
import urllib.parse
import uuid

from harness import BACKEND, SLOW, Server, poll_state, slow, stored_text
from test_signin import Browser
from test_stream import Stream

API = "/api/v1"


def marker():
    """A unique string (lower case: the search index folds case) no generator makes."""
    return "zqx" + uuid.uuid4().hex[:16]


def media_files(srv):
    """Every file under the media directory, by path relative to it."""
    root = os.path.join(srv.data_dir, "media")
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def picture_names(urls):
    """The file names (<key>.png) of picture URLs."""
    return {urllib.parse.urlsplit(u).path.rsplit("/", 1)[1] for u in urls if u}


def sqlite_traces(srv, base):
    """(table, column) of every value of every row of every table of the SQLite database
    that holds base (case-insensitive; a packed text unpacked first)."""
    db = sqlite3.connect(f"file:{os.path.join(srv.data_dir, 'inkwell.db')}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")]
        assert "document_revisions" in tables and "users" in tables, tables
        found = []
        needle = base.lower()
        for t in tables:
            cur = db.execute(f'SELECT * FROM "{t}"')
            cols = [c[0] for c in cur.description]
            for row in cur:
                for col, v in zip(cols, row):
                    if isinstance(v, bytes):
                        if v[:1] == b"\x02":
                            try:
                                v = stored_text(v)
                            except Exception:  # not a packed text: the bytes as they are
                                v = v.decode("latin-1")
                        else:
                            v = v.decode("latin-1")
                    if isinstance(v, str) and needle in v.lower():
                        found.append((t, col))
        return found
    finally:
        db.close()


def pg_traces(srv, base):
    """The lines of a data-only dump of the whole PostgreSQL database that hold base."""
    out = subprocess.run(["pg_dump", "--data-only", "--no-owner", srv.database],
                         capture_output=True, check=True).stdout.decode("utf-8", "replace")
    needle = base.lower()
    return [line[:200] for line in out.splitlines() if needle in line.lower()]


def stream_end(s, limit_s):
    """The events of stream s to its end, which must come within limit_s seconds (checked
    at every line, keep-alive comments included: --stream-keepalive 0.5)."""
    until = time.monotonic() + limit_s
    out, ev, data = [], None, []
    while True:
        if time.monotonic() > until:
            raise AssertionError(f"the stream did not end in {limit_s:g} s: {out[-3:]}")
        line = s.resp.readline()
        if not line:
            return out
        line = line.decode("utf-8").rstrip("\n")
        if line == "":
            if ev is not None or data:
                out.append((ev, json.loads("\n".join(data))))
            ev, data = None, []
        elif line.startswith("event: "):
            ev = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])


def traces(srv, base):
    return pg_traces(srv, base) if BACKEND == "postgres" else sqlite_traces(srv, base)


class Person:
    """A user made by the admin route, with a write key, whose every text carries a
    unique marker (base + what it is)."""

    def __init__(self, test, srv, admin):
        self.t, self.srv, self.admin = test, srv, admin
        self.base = marker()
        r = srv.request("POST", f"{API}/admin/users", key=admin, form={"name": self.m("name")})
        test.assertEqual(r.status, 201, r)
        self.id = r.json["data"]["id"]
        self.name = r.json["data"]["name"]
        r = srv.request("POST", f"{API}/admin/users/{self.id}/keys", key=admin, form={})
        test.assertEqual(r.status, 201, r)
        self.key = r.json["data"]["key"]
        srv.keys.append(self.key)
        self.pictures = set()

    def m(self, what):
        return f"{self.base}{what}"

    def req(self, method, path, **kw):
        return self.srv.request(method, API + path, key=self.key, **kw)

    def ok(self, r, *statuses):
        self.t.assertIn(r.status, statuses or (200, 201), r)
        return r.json["data"] if r.json else None

    def settle(self, kind, rid):
        return poll_state(self.srv, self.key, f"{API}/{kind}/{rid}")

    def life(self):
        """Everything a person leaves: tags, a draft, a webhook endpoint, a session and a
        failed sign-in, a custom template, a document with five revisions
        (made with an Idempotency-Key, regenerated, edited, an action, restored) and an
        image with three revisions and their pictures; usage counted."""
        m = self.m
        tpl = self.ok(self.req("POST", "/templates", form={
            "name": m("tplname"), "description": m("tpldesc"), "instruction": m("tplinstr")}))
        d = self.ok(self.req("POST", "/documents", form={
            "name": m("docname"), "prompt": m("prompt1"), "template_id": str(tpl["id"])},
            headers={"Idempotency-Key": m("idem1")}))
        self.ok(self.req("POST", f"/documents/{d['id']}/regenerate", form={"prompt": m("prompt2")}),
                200, 201, 202)
        self.settle("documents", d["id"])
        self.ok(self.req("PATCH", f"/documents/{d['id']}", form={"result": " ".join(
            f"Sentence {i} of {m('edited')}, words of my own." for i in range(12))}))
        self.ok(self.req("POST", f"/documents/{d['id']}/actions", form={"action": "shorten"}),
                200, 201, 202)
        self.settle("documents", d["id"])
        self.ok(self.req("POST", f"/documents/{d['id']}/revisions/1/restore"))
        revs = self.ok(self.req("GET", f"/documents/{d['id']}/revisions"))
        self.t.assertGreaterEqual(len(revs), 5, revs)
        # a second document through its own Idempotency-Key, asynchronous
        d2 = self.ok(self.req("POST", "/documents", form={"name": m("doc2"), "prompt": m("prompt3")},
                              headers={"Idempotency-Key": m("idem2"), "Prefer": "respond-async"}),
                     202)
        self.settle("documents", d2["id"])
        img = self.ok(self.req("POST", "/images", form={
            "name": m("imgname"), "description": m("desc1"), "resolution": "1024x1024"},
            headers={"Idempotency-Key": m("idem3")}))
        self.ok(self.req("POST", f"/images/{img['id']}/regenerate", form={"description": m("desc2")}),
                200, 201, 202)
        self.settle("images", img["id"])
        self.ok(self.req("POST", f"/images/{img['id']}/revisions/1/restore"))
        revs = self.ok(self.req("GET", f"/images/{img['id']}/revisions"))
        self.t.assertEqual(len(revs), 3, revs)
        self.pictures = picture_names(r.get("url") for r in revs)
        self.t.assertEqual(len(self.pictures), 3, revs)  # each revision its own file
        # tags (§23) and a draft (§24) of the document, a tag of the image, a webhook
        # endpoint (§22) with its description
        self.ok(self.req("PATCH", f"/documents/{d['id']}", form={"tags": f"{m('tag1')},{m('tag2')}"}))
        self.ok(self.req("PATCH", f"/images/{img['id']}", form={"tags": m("tag3")}))
        self.ok(self.req("PUT", f"/documents/{d['id']}/draft", form={"result": m("draft") + " text"}))
        self.ok(self.req("POST", "/webhooks", form={"url": f"http://127.0.0.1:9/{m('hook')}",
                                                      "events": "*", "description": m("hookdesc")}))
        # a password, a session (its user agent kept) and a failed sign-in (counted by a
        # digest of the name: nothing readable)
        r = self.srv.request("PATCH", f"{API}/admin/users/{self.id}", key=self.admin,
                             form={"password": m("password")})
        self.t.assertEqual(r.status, 200, r)
        self.srv.keys.append(m("password"))
        b = Browser(self.srv, ua=m("useragent"))
        self.t.assertEqual(b.sign_in(self.name, m("password")).status, 200)
        self.t.assertEqual(b.sign_in(self.name, m("wrong-password")).status, 401)
        usage = self.ok(self.req("GET", "/usage"))
        self.t.assertGreater(usage["words"]["used"], 0)
        return d, img


class ErasureTest(unittest.TestCase):
    """One server (jobs for every document: --builtin-delay-ms) with an admin key; a
    bystander's records must stay whole."""
    delay_ms = 50

    @classmethod
    def setUpClass(cls):
        cls.srv = Server("--builtin-delay-ms", str(cls.delay_ms), "--job-lease", "2",
                         "--webhook-allow-private", "1").start()
        cls.admin = cls.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.srv.keys.append(cls.admin)
        cls.other = cls.srv.key("bystander")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}: {cls.srv.read_log()[-2000:]}")

    def bystander(self):
        r = self.srv.request("POST", f"{API}/images", key=self.other,
                             form={"name": "theirs", "description": "kept", "resolution": "1024x1024"})
        self.assertEqual(r.status, 201, r)
        return picture_names([r.json["data"]["url"]])

    def delete(self, p, how):
        if how == "admin":
            r = self.srv.request("DELETE", f"{API}/admin/users/{p.id}", key=self.admin)
            self.assertEqual(r.json, {"id": p.id, "object": "user", "deleted": True, "status": 200}, r)
        else:
            c = self.srv.cli("user", "delete", p.name, check=False)
            self.assertEqual(c.returncode, 0, c.stderr)

    def check_erased(self, how):
        theirs = self.bystander()
        p = Person(self, self.srv, self.admin)
        p.life()
        files = media_files(self.srv)
        self.assertTrue(p.pictures <= files, (p.pictures, files))
        self.assertTrue(traces(self.srv, p.base))  # the scan sees them while they exist
        self.delete(p, how)
        self.assertEqual(traces(self.srv, p.base), [])
        left = media_files(self.srv)
        self.assertEqual(p.pictures & left, set())
        self.assertEqual(files - left, p.pictures)  # nothing else went
        self.assertTrue(theirs <= left)
        self.assertEqual(self.srv.request("GET", f"{API}/images", key=self.other).status, 200)
        self.assertEqual(self.srv.request("GET", f"{API}/documents", key=p.key).status, 401)

    def test_admin_route_leaves_no_trace(self):
        self.check_erased("admin")

    def test_command_line_leaves_no_trace(self):
        self.check_erased("cli")


class RunningTest(unittest.TestCase):
    """A generation that runs for a long time (30 s, scaled) while its user is deleted."""

    @classmethod
    def setUpClass(cls):
        # SQLite: the command line beside the server reaches it through the job's lease
        # (renewed each quarter of it), which finds the record gone; PostgreSQL: by its
        # notification (the lease left at 30 s, so that is what is tested)
        lease = ["--job-lease", "2"] if BACKEND == "sqlite" else []
        cls.srv = Server("--builtin-delay-ms", str(int(30000 * SLOW)), "--stream-keepalive", "0.5",
                         *lease).start()
        cls.admin = cls.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.srv.keys.append(cls.admin)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}: {cls.srv.read_log()[-2000:]}")

    def delete(self, p, how):
        if how == "admin":
            r = self.srv.request("DELETE", f"{API}/admin/users/{p.id}", key=self.admin)
            self.assertEqual(r.status, 200, r)
        else:
            c = self.srv.cli("user", "delete", p.name, check=False)
            self.assertEqual(c.returncode, 0, c.stderr)

    def check_stream_ends(self, how, kind):
        p = Person(self, self.srv, self.admin)
        form = ({"name": p.m("n"), "prompt": p.m("p")} if kind == "documents" else
                {"name": p.m("n"), "description": p.m("d"), "resolution": "1024x1024"})
        r = p.req("POST", f"/{kind}", form=form, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        rid = r.json["data"]["id"]
        poll_state(self.srv, p.key, f"{API}/{kind}/{rid}", until=("generating",))
        s = Stream(self.srv.port, "GET", f"{API}/{kind}/{rid}", p.key)
        self.assertEqual(s.next_event()[0], "record")
        self.delete(p, how)
        # the deletion ends it (the generation would take 30 s): within 2 s
        evs = stream_end(s, slow(2))
        s.conn.close()
        self.assertEqual(evs[-1][0], "error", evs)
        self.assertEqual(evs[-1][1]["message"], "The record was deleted.")

    def check_waiting_create(self, how):
        p = Person(self, self.srv, self.admin)
        out = {}

        def create():
            out["r"] = p.req("POST", "/documents", form={"name": p.m("n"), "prompt": p.m("p")})

        import threading
        t = threading.Thread(target=create, daemon=True)
        t.start()
        # its record is stored (queued or generating) before the user goes
        from harness import wait_for
        wait_for(lambda: self.srv.request("GET", f"{API}/documents", key=p.key).json["meta"]["total"],
                 "the waiting create's record")
        self.delete(p, how)
        t.join(slow(2))  # as a stream: within 2 s (the generation takes 30 s)
        self.assertFalse(t.is_alive(), "the waiting create did not answer in 2 s")
        r = out["r"]
        self.assertEqual(r.status, 502, r)
        self.assertEqual(r.json["message"], "The record was deleted before its generation finished.")

    def test_stream_of_a_document_ends_admin(self):
        self.check_stream_ends("admin", "documents")

    def test_stream_of_an_image_ends_admin(self):
        self.check_stream_ends("admin", "images")

    def test_stream_of_a_document_ends_cli(self):
        self.check_stream_ends("cli", "documents")

    def test_waiting_create_answers_admin(self):
        self.check_waiting_create("admin")

    def test_waiting_create_answers_cli(self):
        self.check_waiting_create("cli")


if __name__ == "__main__":
    unittest.main()
