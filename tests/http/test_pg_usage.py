"""Usage counted exactly across processes (API.md §19): two inkwell processes on one
PostgreSQL database complete generations for one user at the same time (waiting
creates through the group commit, async creates and images through jobs); the month's
usage is the sum of every record's words and pictures, none lost to a race. And near
the limit, creates sent at once to both processes admit no more than one process does:
pictures exactly, words at most one generation past the limit (records/quota.c)."""
import threading
import unittest

from harness import Server, pg_database, poll_state

API = "/api/v1"
THREADS = 4  # per process
CREATES = 6  # per thread


class TwoProcessesCount(unittest.TestCase):
    def setUp(self):
        db = pg_database()
        data = Server().data_dir
        env = {"INKWELL_TEST_NOW": "2026-11-15T12:00:00Z"}
        self.a = Server(data_dir=data, database=db, env=env).start()
        self.b = Server(data_dir=data, database=db, env=env).start()
        self.key = self.a.key("shared-user")

    def tearDown(self):
        for s in (self.a, self.b):
            self.assertEqual(s.stop(), 0)

    def test_concurrent_completions_all_counted(self):
        errors, pending = [], []
        lock = threading.Lock()

        def client(srv, n):
            for i in range(CREATES):
                kind = ("documents", "images")[i % 3 == 2]
                form = ({"name": f"d{n}-{i}", "prompt": f"a note about tea number {n} {i}"}
                        if kind == "documents" else
                        {"name": f"i{n}-{i}", "description": "a quiet harbour", "resolution": "1024x1024"})
                headers = {"Prefer": "respond-async"} if i % 2 else {}
                r = srv.request("POST", f"{API}/{kind}", key=self.key, form=form, headers=headers)
                with lock:
                    if r.status not in (201, 202):
                        errors.append(r)
                    elif r.status == 202:
                        pending.append((srv, f"{API}/{kind}/{r.json['data']['id']}"))

        threads = [threading.Thread(target=client, args=(srv, n))
                   for n, srv in enumerate([self.a, self.b] * THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for srv, path in pending:
            self.assertEqual(poll_state(srv, self.key, path, timeout=60)["state"], "completed")
        words = images = 0
        for kind in ("documents", "images"):
            r = self.a.request("GET", f"{API}/{kind}?per_page=100", key=self.key)
            recs = r.json["data"]
            self.assertEqual(r.json["meta"]["total"], len(recs))
            self.assertTrue(all(x["state"] == "completed" for x in recs))
            if kind == "documents":
                words = sum(x["words"] for x in recs)
            else:
                images = len(recs)
        self.assertEqual(images, THREADS * 2 * (CREATES // 3))
        for srv in (self.a, self.b):
            u = srv.request("GET", f"{API}/usage", key=self.key).json["data"]
            self.assertEqual(u["period"], "2026-11")
            self.assertEqual(u["words"]["used"], words)
            self.assertEqual(u["images"]["used"], images)


class TwoProcessesQuota(unittest.TestCase):
    """Creates sent at once to two processes near a user's limit admit no more than one
    process does (records/quota.c: the holds of generations in flight are in the
    database, checked in the transaction that admits one). The generations take a
    while (--builtin-delay-ms), so every create is answered while the admitted ones
    still run: one process alone could not have counted any of them."""

    @classmethod
    def setUpClass(cls):
        db = pg_database()
        data = Server().data_dir
        env = {"INKWELL_TEST_NOW": "2026-11-15T12:00:00Z"}
        args = ["--builtin-delay-ms", "1500"]
        cls.a = Server(*args, data_dir=data, database=db, env=env).start()
        cls.b = Server(*args, data_dir=data, database=db, env=env).start()
        cls.admin = cls.a.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.a.keys.append(cls.admin)

    @classmethod
    def tearDownClass(cls):
        for s in (cls.a, cls.b):
            assert s.stop() == 0

    def user(self, name):
        key = self.a.key(name)
        users = self.a.request("GET", f"{API}/admin/users?per_page=100", key=self.admin).json["data"]
        uid = next(u["id"] for u in users if u["name"] == name)
        return key, uid

    def set_quota(self, uid, **quota):
        r = self.a.request("PATCH", f"{API}/admin/users/{uid}", key=self.admin,
                           form={k: str(v) for k, v in quota.items()})
        self.assertEqual(r.status, 200, r)

    def at_once(self, n, key, kind, form, headers):
        barrier, answers, lock = threading.Barrier(n), [], threading.Lock()

        def one(srv, i):
            barrier.wait()
            r = srv.request("POST", f"{API}/{kind}", key=key, form=dict(form, name=f"n{i}"),
                            headers=headers)
            with lock:
                answers.append((srv, r))

        threads = [threading.Thread(target=one, args=((self.a, self.b)[i % 2], i)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for _, r in answers:
            self.assertIn(r.status, (201, 202, 403, 429), r)
            if r.status == 429:
                self.assertEqual(r.header("Retry-After"), "1")
        return answers

    def finish(self, key, kind, answers):
        for srv, r in answers:
            if r.status == 202:
                rec = poll_state(srv, key, f"{API}/{kind}/{r.json['data']['id']}", timeout=60)
                self.assertEqual(rec["state"], "completed")

    def test_images_exact_across_processes(self):
        """A limit of 5 pictures and twelve creates at once, six on each process: five
        are made, exactly (each process alone admitted five before: ten were made)."""
        key, uid = self.user("img-user")
        self.set_quota(uid, quota_images=5)
        answers = self.at_once(12, key, "images", {"description": "a red kite", "resolution": "1024x1024"},
                               {"Prefer": "respond-async"})
        made = [r for _, r in answers if r.status == 202]
        self.assertEqual(len(made), 5, sorted(r.status for _, r in answers))
        self.finish(key, "images", answers)
        self.assertEqual(self.b.request("GET", f"{API}/usage", key=key).json["data"]["images"],
                         {"used": 5, "limit": 5})
        self.assertEqual(self.a.request("GET", f"{API}/images", key=key).json["meta"]["total"], 5)
        r = self.b.request("POST", f"{API}/images", key=key,
                           form={"name": "late", "description": "d", "resolution": "1024x1024"})
        self.assertEqual(r.status, 403, r)

    def test_words_one_generation_past_the_limit_across_processes(self):
        """One word under the limit, twelve document creates at once on two processes:
        one generation starts (it is whole), as with one process; before, one per
        process did."""
        key, uid = self.user("word-user")
        r = self.a.request("POST", f"{API}/documents", key=key, form={"name": "n", "prompt": "p"})
        self.assertEqual(r.status, 201, r)
        used = self.a.request("GET", f"{API}/usage", key=key).json["data"]["words"]["used"]
        self.set_quota(uid, quota_words=used + 1)
        answers = self.at_once(12, key, "documents", {"prompt": "a walk by the sea"},
                               {"Prefer": "respond-async"})
        made = [r for _, r in answers if r.status == 202]
        self.assertEqual(len(made), 1, sorted(r.status for _, r in answers))
        self.finish(key, "documents", answers)
        docs = self.a.request("GET", f"{API}/documents?per_page=100", key=key).json
        self.assertEqual(docs["meta"]["total"], 2)
        words = sum(x["words"] for x in docs["data"])
        self.assertEqual(self.b.request("GET", f"{API}/usage", key=key).json["data"]["words"]["used"], words)
        r = self.a.request("POST", f"{API}/documents", key=key, form={"name": "late", "prompt": "p"})
        self.assertEqual(r.status, 403, r)


if __name__ == "__main__":
    unittest.main()
