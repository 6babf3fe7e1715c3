"""inkwell migrate (API.md §25): a SQLite deployment with every kind of row, made through
the API (users with roles and passwords, key scopes, an expiring key, a session, records
with revisions and revision pictures, a user's template, tags, a draft, a webhook with
its deliveries, usage, an idempotency answer), copied to PostgreSQL and back to a new
data directory. Every answer of every list and show route is the same JSON before and
after each step; a key, a session and the kept idempotency answer still work; new ids
come after the copied ones (sequences). A non-empty target, a bad URL, a missing source
and a table the migrate list does not name are each refused with a clear message.
It needs both backends: PostgreSQL runs only (run.py keeps test_pg_* for it)."""
import http.server
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse

from harness import BIN, SUPPRESSIONS, VALGRIND, Server, pg_database, poll_state, slow, wait_for
from test_signin import Browser, set_password

API = "/api/v1"


class _Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def migrate(src, dst):
    cmd = [BIN, "migrate", "--from", src, "--to", dst]
    if VALGRIND:  # the copy's own code under valgrind too (exit 99 on an error or a leak)
        cmd = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
               "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
               f"--suppressions={SUPPRESSIONS}/valgrind.supp"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=slow(300))


class MigrateBothWays(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
        threading.Thread(target=cls.hook.serve_forever, daemon=True).start()
        cls.src = Server("--webhook-allow-private", database=False).start()
        s = cls.src
        cls.admin = s.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.alice = s.key("alice")
        cls.reader = s.cli("key", "create", "--user", "alice", "--scope", "read").stdout.strip()
        s.keys += [cls.admin, cls.reader]
        cls.dirs = []
        cls.build(s)

    @classmethod
    def tearDownClass(cls):
        cls.hook.shutdown()
        if cls.src.proc and cls.src.proc.poll() is None:
            cls.src.stop()

    @classmethod
    def build(cls, s):
        def req(method, path, key=None, **kw):
            r = s.request(method, API + path, key=key or cls.alice, **kw)
            assert r.status in (200, 201, 202, 204), (method, path, r)
            return r.json.get("data") if r.json else None

        # users: an admin, a member with a password and a session, quotas
        u = req("POST", "/admin/users", key=cls.admin, form={"name": "carol", "quota_words": "50000"})
        cls.carol_id = u["id"]
        exp = req("POST", f"/admin/users/{u['id']}/keys", key=cls.admin,
                  form={"scope": "write", "expires_at": "2099-01-01T00:00:00Z"})
        cls.carol_key = exp["key"]
        s.keys.append(cls.carol_key)
        cls.pw = "carol's long passphrase"
        set_password(s, "carol", cls.pw)
        cls.browser = Browser(s)
        r = cls.browser.sign_in("carol", cls.pw)
        assert r.status == 200, r
        # a template of alice's, documents with tags, revisions, a draft, an edit
        t = req("POST", "/templates", form={"name": "Memo", "description": "short memo",
                                             "instruction": "Write a short memo."})
        cls.template = t["id"]
        docs = []
        for i, name in enumerate(["Tea notes", "Café menu ☕", "Quarterly memo", "Zebra"]):
            body = {"name": name, "prompt": f"a post about {name} number {i}"}
            if i == 0:
                body["tags"] = ["Travel", "notes"]
            if i == 2:
                body["template_id"] = cls.template
            docs.append(req("POST", "/documents", json_body=body))
        d0, d1 = docs[0]["id"], docs[1]["id"]
        req("POST", f"/documents/{d0}/regenerate", form={"prompt": "tea, again"})
        poll_state(s, cls.alice, f"{API}/documents/{d0}")
        req("PATCH", f"/documents/{d1}", json_body={"result": "An edited text.\tWith a tab,\n"
                                                     "a new line and a back\\slash.",
                                                     "favorite": True, "tags": ["café"]})
        req("PUT", f"/documents/{d0}/draft", form={"result": "a draft not yet saved"})
        # idempotency: an answer kept under a key
        r = s.request("POST", API + "/documents", key=cls.alice, form={"name": "Once", "prompt": "x"},
                      headers={"Idempotency-Key": "migrate-once"})
        assert r.status == 201, r
        cls.once = (r.status, r.json)
        # images with a revision and its picture
        im = req("POST", "/images", form={"name": "Sunset", "description": "a red sunset",
                                         "resolution": "1024x1024"})
        poll_state(s, cls.alice, f"{API}/images/{im['id']}")
        req("POST", f"/images/{im['id']}/regenerate", form={"description": "a blue sunset"})
        poll_state(s, cls.alice, f"{API}/images/{im['id']}")
        # a webhook whose deliveries are all made (a final state: nothing moves after)
        hook = f"http://127.0.0.1:{cls.hook.server_address[1]}/in"
        w = req("POST", "/webhooks", form={"url": hook, "events": "document.completed, "
                                            "document.revised, document.deleted"})
        cls.webhook = w["id"]
        d = req("POST", "/documents", form={"name": "Hooked", "prompt": "hooks"})
        req("DELETE", f"/documents/{d['id']}")
        # carol's own document (through her key)
        req("POST", "/documents", key=cls.carol_key, form={"name": "Carol's", "prompt": "plans"})

        def delivered():
            r = s.request("GET", f"{API}/webhooks/{cls.webhook}/deliveries", key=cls.alice)
            items = r.json["data"]
            return len(items) >= 2 and all(x["state"] == "delivered" for x in items)
        wait_for(delivered, "every webhook delivery made", timeout=30)
        cls.docs = [x["id"] for x in docs]
        cls.image = im["id"]

    def paths(self):
        """(key, path) of every list and show route, for alice, carol and the admin."""
        a, adm = self.alice, self.admin
        out = [(a, "/me"), (a, "/keys"), (a, "/usage"), (a, "/templates"),
               (a, f"/templates/{self.template}"), (a, "/tags"), (a, "/documents"),
               (a, "/documents?sort=name&order=asc"), (a, "/documents?search=tea"),
               (a, "/documents?search=caf%C3%A9"), (a, "/documents?tag=notes"),
               (a, "/documents?favorite=true"), (a, "/images"), (a, "/webhooks"),
               (a, f"/webhooks/{self.webhook}"), (a, f"/webhooks/{self.webhook}/deliveries"),
               (a, f"/documents/{self.docs[0]}/draft"), (self.reader, "/documents"),
               (self.carol_key, "/me"), (self.carol_key, "/documents"),
               (adm, "/admin/users"), (adm, f"/admin/users/{self.carol_id}"),
               (adm, f"/admin/users/{self.carol_id}/keys"), (adm, "/admin/usage"),
               (adm, "/keys")]
        for i in self.docs:
            out += [(a, f"/documents/{i}"), (a, f"/documents/{i}/revisions")]
        out += [(a, f"/documents/{self.docs[0]}/revisions/1"),
                (a, f"/documents/{self.docs[0]}/revisions/2"),
                (a, f"/images/{self.image}"), (a, f"/images/{self.image}/revisions"),
                (a, f"/images/{self.image}/revisions/1"), (a, f"/images/{self.image}/revisions/2")]
        return out

    def snapshot(self, srv):
        base = srv.url("")
        got = {}
        for key, path in self.paths():
            r = srv.request("GET", API + path, key=key)
            text = r.body.decode().replace(base, "BASE")
            got[(key[:12], path)] = (r.status, json.loads(text) if text else None)
        r = self.session_on(srv).req("GET", "/me/sessions")
        sessions = json.loads(r.body.decode().replace(base, "BASE"))
        for x in sessions.get("data") or []:
            x.pop("last_seen_at", None)  # moves with every use of the session
        got[("session", "/me/sessions")] = (r.status, sessions)
        return got

    def session_on(self, srv):
        b = Browser(srv)
        b.jar = dict(self.browser.jar)
        return b

    def assertSame(self, before, after, what):
        self.assertEqual(sorted(before), sorted(after))
        for k in before:
            self.assertEqual(before[k], after[k], f"{what}: {k}")

    def test_round_trip(self):
        before = self.snapshot(self.src)
        self.assertEqual(self.src.stop(), 0)
        db = pg_database()
        p = migrate(self.src.data_dir, db)
        self.assertEqual(p.returncode, 0, p.stderr)
        for table in ["documents", "document_revisions", "image_revisions", "sessions", "tags",
                      "record_tags", "drafts", "webhook_deliveries", "webhook_snap_docs",
                      "idempotency_keys", "usage_months", "templates"]:
            m = re.search(table + r"\s+(\d+) rows, checksum [0-9a-f]{32} verified", p.stderr)
            self.assertTrue(m and int(m.group(1)) > 0, f"{table} copied: {p.stderr[-3000:]}")
        self.assertIn("verified", p.stderr)
        self.assertIn("migrate: done", p.stderr)
        for secret in [self.alice, self.admin, self.pw, self.carol_key]:
            self.assertNotIn(secret, p.stderr + p.stdout)
        # PostgreSQL: the same data directory for the pictures
        pg = Server("--webhook-allow-private", data_dir=self.src.data_dir, database=db)
        pg.keys = list(self.src.keys)
        pg.start()
        try:
            self.assertSame(before, self.snapshot(pg), "sqlite -> postgres")
            self.check_alive(pg)
            self.wait_delivered(pg)  # the deliveries of check_alive's changes
            before_back = self.snapshot(pg)
        finally:
            self.assertEqual(pg.stop(), 0)
        # and back, into a new data directory (the pictures copied as media copy would)
        new = tempfile.mkdtemp(prefix="inkwell-migrated-")
        shutil.copytree(os.path.join(self.src.data_dir, "media"), os.path.join(new, "media"))
        p = migrate(db, new)
        self.assertEqual(p.returncode, 0, p.stderr)
        back = Server("--webhook-allow-private", data_dir=new, database=False)
        back.keys = list(self.src.keys)
        back.start()
        try:
            self.assertSame(before_back, self.snapshot(back), "postgres -> sqlite")
            self.check_alive(back)
        finally:
            self.assertEqual(back.stop(), 0)
        # a non-empty target: refused, nothing changed
        for src, dst in [(self.src.data_dir, db), (db, new)]:
            p = migrate(src, dst)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("the target database is not empty", p.stderr)

    def wait_delivered(self, srv):
        def done():
            r = srv.request("GET", f"{API}/webhooks/{self.webhook}/deliveries", key=self.alice)
            return all(x["state"] == "delivered" for x in r.json["data"])
        wait_for(done, "every webhook delivery made", timeout=30)

    def check_alive(self, srv):
        """A key, a session and the kept idempotency answer work; new ids follow the old."""
        r = srv.request("GET", API + "/me", key=self.carol_key)
        self.assertEqual(r.status, 200, r)
        r = self.session_on(srv).req("GET", "/me")
        self.assertEqual((r.status, r.json["data"]["user"]["name"]), (200, "carol"), r)
        r = srv.request("POST", API + "/documents", key=self.alice,
                        form={"name": "Once", "prompt": "x"},
                        headers={"Idempotency-Key": "migrate-once"})
        self.assertEqual((r.status, r.json), self.once)
        r = srv.request("POST", API + "/documents", key=self.alice,
                        form={"name": "After the move", "prompt": "after the move"})
        self.assertEqual(r.status, 201, r)
        self.assertGreater(r.json["data"]["id"], max(self.docs) + 2)
        new_id = r.json["data"]["id"]
        r = srv.request("GET", API + "/documents?search=after%20the", key=self.alice)
        self.assertIn(new_id, [x["id"] for x in r.json["data"]])
        r = srv.request("DELETE", f"{API}/documents/{new_id}", key=self.alice)
        self.assertIn(r.status, (200, 204), r)
        r = srv.request("GET", API + "/documents?search=tea", key=self.alice)
        self.assertIn(self.docs[0], [x["id"] for x in r.json["data"]])


class MigrateRefusals(unittest.TestCase):
    """Errors said plainly, with nothing written."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inkwell-mig-")
        p = subprocess.run([BIN, "key", "create", "--user", "u", "--data-dir", cls.dir],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr

    def test_bad_target_url(self):
        p = migrate(self.dir, "postgres://nobody@127.0.0.1:1/none")
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot open the target database", p.stderr)
        p = migrate(self.dir, "mysql://x/y")
        self.assertEqual(p.returncode, 2)
        self.assertIn("one side must be a SQLite data directory", p.stderr)
        p = migrate(self.dir, self.dir)
        self.assertEqual(p.returncode, 2)
        p = migrate(os.path.join(self.dir, "nothing-here"), pg_database())
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a data directory", p.stderr)

    def test_a_table_not_in_the_list_stops_the_copy(self):
        d = tempfile.mkdtemp(prefix="inkwell-mig-")
        shutil.copy(os.path.join(self.dir, "inkwell.db"), os.path.join(d, "inkwell.db"))
        with sqlite3.connect(os.path.join(d, "inkwell.db")) as c:
            c.execute("CREATE TABLE added_later (id INTEGER PRIMARY KEY)")
        db = pg_database()
        p = migrate(d, db)
        self.assertEqual(p.returncode, 1)
        self.assertIn("table added_later of the sqlite schema is neither copied nor skipped",
                      p.stderr)
        # the target got its schema and nothing else
        p = migrate(self.dir, db)
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main()
