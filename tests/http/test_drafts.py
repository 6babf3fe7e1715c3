"""Drafts (API.md §24), black-box, on the backend under test: PUT /documents/{id}/draft
keeps one draft beside a document without a revision (base_revision default the current
one; one of the document's revisions, else 422 naming it), GET shows it (404 when none),
DELETE drops it (404 when none); `stale` once the document's revision is past the
draft's base; an update of `result` drops the draft; documents show `has_draft` (show,
list, the very next answer after each change, with the record cache on and off); another
user's document is a 404; a deleted document's draft goes with it."""
import unittest
import uuid

from harness import ServerTest

API = "/api/v1"


class Drafts(ServerTest):
    def fresh(self):
        return self.srv.key("d-" + uuid.uuid4().hex[:8])

    def draft(self, key, i, method="GET", **fields):
        if method == "PUT" and any(not isinstance(v, str) for v in fields.values()):
            return self.req(method, f"{API}/documents/{i}/draft", key=key, json_body=fields)
        return self.req(method, f"{API}/documents/{i}/draft", key=key,
                        form=fields if method == "PUT" else None)

    def doc(self, key, i):
        r = self.req("GET", f"{API}/documents/{i}", key=key)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def listed(self, key, i):
        r = self.req("GET", f"{API}/documents?per_page=100", key=key)
        return next(x for x in r.json["data"] if x["id"] == i)

    def assert422(self, r, field):
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json["status"], 422)
        self.assertIn(field, r.json["message"], r)

    def test_lifecycle(self):
        k = self.fresh()
        d = self.make_doc(key=k)
        i = d["id"]
        self.assertIs(d["has_draft"], False)
        self.assertError(self.draft(k, i), 404, "Resource not found.")
        self.assertError(self.draft(k, i, "DELETE"), 404, "Resource not found.")
        r = self.draft(k, i, "PUT", result="My own words")
        self.assertEqual((r.status, r.json["status"]), (200, 200), r)
        got = r.json["data"]
        self.assertEqual((got["result"], got["base_revision"], got["stale"]),
                         ("My own words", 1, False))
        self.assertRegex(got["updated_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        self.assertEqual(self.draft(k, i).json["data"], got)
        now = self.doc(k, i)
        self.assertEqual((now["has_draft"], now["revision"], now["result"]),
                         (True, 1, d["result"]))
        self.assertIs(self.listed(k, i)["has_draft"], True)
        # again: replaced, still one draft, no revision
        r = self.draft(k, i, "PUT", result="Better words", base_revision=1)
        self.assertEqual(r.json["data"]["result"], "Better words")
        self.assertGreaterEqual(r.json["data"]["updated_at"], got["updated_at"])
        self.assertEqual(self.doc(k, i)["revision"], 1)
        # delete
        r = self.draft(k, i, "DELETE")
        self.assertEqual((r.status, r.json["status"]), (200, 200), r)
        self.assertError(self.draft(k, i), 404)
        self.assertIs(self.doc(k, i)["has_draft"], False)
        self.assertIs(self.listed(k, i)["has_draft"], False)

    def test_stale_and_update(self):
        k = self.fresh()
        i = self.make_doc(key=k)["id"]
        self.draft(k, i, "PUT", result="draft on 1")
        # a restore makes revision 2: the draft is stale, and stays
        r = self.req("POST", f"{API}/documents/{i}/revisions/1/restore", key=k)
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["revision"], r.json["data"]["has_draft"]), (2, True))
        got = self.draft(k, i).json["data"]
        self.assertEqual((got["base_revision"], got["stale"]), (1, True))
        # a draft on an older revision is stale at once
        r = self.draft(k, i, "PUT", result="old base", base_revision="1")
        self.assertEqual((r.json["data"]["base_revision"], r.json["data"]["stale"]), (1, True))
        r = self.draft(k, i, "PUT", result="new base")
        self.assertEqual((r.json["data"]["base_revision"], r.json["data"]["stale"]), (2, False))
        # a name or favorite change keeps it; an update of result drops it
        r = self.req("PATCH", f"{API}/documents/{i}", key=k, form={"name": "Renamed"})
        self.assertIs(r.json["data"]["has_draft"], True)
        r = self.req("PATCH", f"{API}/documents/{i}", key=k, form={"result": "Saved text"})
        self.assertEqual((r.json["data"]["has_draft"], r.json["data"]["revision"]), (False, 3))
        self.assertError(self.draft(k, i), 404)
        self.assertIs(self.doc(k, i)["has_draft"], False)

    def test_validation(self):
        k = self.fresh()
        i = self.make_doc(key=k)["id"]
        self.assert422(self.draft(k, i, "PUT"), "result")
        self.assert422(self.draft(k, i, "PUT", result=["x"]), "result")
        for bad in ("0", "2", "-1", "x", "1.0", ""):
            self.assert422(self.draft(k, i, "PUT", result="t", base_revision=bad),
                           "base_revision")
        self.assert422(self.draft(k, i, "PUT", result="t", base_revision=99), "base_revision")
        self.assertError(self.draft(k, i), 404)  # none kept by the refused ones
        self.assertIs(self.doc(k, i)["has_draft"], False)
        r = self.req("PUT", f"{API}/documents/{i}/draft", key=k, body="x",
                     headers={"Content-Type": "text/plain"})
        self.assertEqual(r.status, 415, r)
        # an empty text is a draft too (everything deleted)
        r = self.draft(k, i, "PUT", result="")
        self.assertEqual((r.status, r.json["data"]["result"]), (200, ""))
        # a document without a revision yet takes base 0 only
        r = self.req("POST", f"{API}/documents", key=k, form={"name": "q", "prompt": "p"},
                     headers={"Prefer": "respond-async"})
        q = r.json["data"]
        if q["revision"] == 0:
            r = self.draft(k, q["id"], "PUT", result="x")
            if r.status == 200:
                self.assertIn(r.json["data"]["base_revision"], (0, 1))

    def test_owner_and_delete(self):
        k = self.fresh()
        i = self.make_doc(key=k)["id"]
        self.draft(k, i, "PUT", result="mine")
        for method in ("GET", "DELETE"):
            self.assertError(self.draft("bob", i, method), 404, "Resource not found.")
        self.assertError(self.draft("bob", i, "PUT", result="theirs"), 404)
        self.assertEqual(self.draft(k, i).json["data"]["result"], "mine")
        self.assertError(self.draft(k, 999999), 404)
        self.assertEqual(self.req("GET", f"{API}/images/{i}/draft", key=k).status, 404)
        self.assertEqual(self.req("POST", f"{API}/documents/{i}/draft", key=k).status, 405)
        self.assertEqual(self.req("DELETE", f"{API}/documents/{i}", key=k).status, 200)
        self.assertError(self.draft(k, i), 404)


class Erased(ServerTest):
    """Tags and drafts go with their record and their user: no trace of their text in any
    table (test_erasure's scan of every table of the database)."""

    def test_record_and_user(self):
        from test_erasure import marker, traces
        name = "e-" + uuid.uuid4().hex[:8]
        k = self.srv.key(name)
        gone, kept = marker(), marker()
        d = self.make_doc(key=k, tags=f"{gone}a,{kept}a")
        self.make_doc(key=k, tags=f"{kept}a")
        img = self.make_image(key=k, tags=f"{gone}b")
        r = self.req("PUT", f"{API}/documents/{d['id']}/draft", key=k, form={"result": f"{gone}c"})
        self.assertEqual(r.status, 200, r)
        self.assertTrue(traces(self.srv, gone))
        # a record's delete takes its draft and the tags no other record carries
        self.assertEqual(self.req("DELETE", f"{API}/documents/{d['id']}", key=k).status, 200)
        self.assertEqual(self.req("DELETE", f"{API}/images/{img['id']}", key=k).status, 200)
        self.assertEqual(traces(self.srv, gone), [])
        self.assertTrue(traces(self.srv, kept))
        # the user's delete takes everything else
        self.assertEqual(self.srv.cli("user", "delete", name, check=False).returncode, 0)
        self.assertEqual(traces(self.srv, kept), [])


class DraftsNoCache(Drafts):
    server_args = ["--record-cache-mb", "0"]


if __name__ == "__main__":
    unittest.main()
