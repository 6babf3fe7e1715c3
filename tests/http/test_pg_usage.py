"""Usage counted exactly across processes (API.md §19): two inkwell processes on one
PostgreSQL database complete generations for one user at the same time (waiting
creates through the group commit, async creates and images through jobs); the month's
usage is the sum of every record's words and pictures, none lost to a race. And near
the limit, creates sent at once to both processes start at most one generation past it
per process (records/quota.c)."""
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

    def test_creates_at_once_near_the_limit_at_most_one_per_process(self):
        admin = self.a.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        self.a.keys.append(admin)
        me = self.a.request("GET", f"{API}/admin/users?per_page=100", key=admin).json["data"]
        uid = next(u["id"] for u in me if u["name"] == "shared-user")
        r = self.a.request("POST", f"{API}/documents", key=self.key, form={"name": "n", "prompt": "p"})
        self.assertEqual(r.status, 201, r)
        used = self.a.request("GET", f"{API}/usage", key=self.key).json["data"]["words"]["used"]
        r = self.a.request("PATCH", f"{API}/admin/users/{uid}", key=admin, form={"quota_words": str(used + 1)})
        self.assertEqual(r.status, 200, r)
        barrier, answers, lock = threading.Barrier(12), [], threading.Lock()

        def one(srv, i):
            barrier.wait()
            r = srv.request("POST", f"{API}/documents", key=self.key, form={"name": f"n{i}", "prompt": "p"})
            with lock:
                answers.append(r)

        threads = [threading.Thread(target=one, args=((self.a, self.b)[i % 2], i)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = sorted(r.status for r in answers)
        self.assertTrue(set(statuses) <= {201, 403, 429}, statuses)
        made = statuses.count(201)
        self.assertGreaterEqual(made, 1, statuses)
        self.assertLessEqual(made, 2, statuses)  # one per process at most
        total = self.a.request("GET", f"{API}/documents", key=self.key).json["meta"]["total"]
        self.assertEqual(total, 1 + made)
        words = sum(x["words"] for x in self.a.request("GET", f"{API}/documents?per_page=100",
                                                          key=self.key).json["data"])
        self.assertEqual(self.b.request("GET", f"{API}/usage", key=self.key).json["data"]["words"]["used"], words)



if __name__ == "__main__":
    unittest.main()
