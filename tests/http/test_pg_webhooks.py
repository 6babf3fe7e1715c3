"""Webhooks across processes and crashes (API.md §22, PostgreSQL): two inkwell processes
on one database, no fault — each event delivered exactly once (each attempt claimed by
one process: FOR UPDATE SKIP LOCKED and a lease); and at least once through kill -9 of
the process sending (its claims go again once their lease runs out). Deliveries are
verified by the npm standardwebhooks package (tests/webhooks/receiver.js)."""
import collections
import unittest

from harness import Server, pg_database, wait_for
from test_webhooks import Receiver

ARGS = ["--webhook-allow-private", "1", "--webhook-retry-scale", "0.001"]


class TwoProcesses(unittest.TestCase):
    def setUp(self):
        self.rx = Receiver()
        db = pg_database()
        data = Server().data_dir
        self.a = Server(*ARGS, data_dir=data, database=db).start()
        self.b = Server(*ARGS, data_dir=data, database=db).start()
        self.key = self.a.key("hooks")

    def tearDown(self):
        for s in (self.a, self.b):
            s.stop()
        self.rx.stop()

    def hook(self, srv, path):
        r = srv.request("POST", "/api/v1/webhooks", key=self.key,
                        form={"url": self.rx.base + path, "events": "*"})
        self.assertEqual(r.status, 201, r)
        self.rx.config(path, [r.json["data"]["secret"]])
        return r.json["data"]

    def test_each_event_exactly_once(self):
        self.hook(self.a, "/one")
        self.hook(self.b, "/two")
        n = 40
        for i in range(n):
            srv = self.a if i % 2 else self.b
            r = srv.request("POST", "/api/v1/documents", key=self.key,
                            form={"name": f"d{i}", "prompt": "tea"})
            self.assertEqual(r.status, 201, r)
        for path in ("/one", "/two"):
            got = wait_for(lambda: (lambda g: g if len(g) >= n else None)(self.rx.log(path)),
                           f"{n} deliveries to {path}", timeout=60)
            ids = collections.Counter(e["headers"]["webhook-id"] for e in got)
            self.assertEqual(len(ids), n)
            self.assertEqual(max(ids.values()), 1, ids.most_common(3))
            self.assertTrue(all(e["verified"] == [True] for e in got))
        # both processes sent some (the claims are shared), none twice
        one = {e["headers"]["webhook-id"] for e in self.rx.log("/one")}
        two = {e["headers"]["webhook-id"] for e in self.rx.log("/two")}
        self.assertEqual(one, two)  # one id per event, the same on every endpoint

    def test_at_least_once_through_kill_9(self):
        self.hook(self.a, "/slow")
        # the receiver holds each delivery 1.5 s: the first process is killed mid-send
        h = self.a.request("GET", "/api/v1/webhooks", key=self.key).json["data"][0]
        r = self.a.request("POST", f"/api/v1/webhooks/{h['id']}/rotate", key=self.key)
        secret = r.json["data"]["secret"]
        self.rx.config("/slow", [secret], delay_ms=1500)
        self.b.stop()  # only a sends
        made = []
        for i in range(6):
            r = self.a.request("POST", "/api/v1/documents", key=self.key,
                               form={"name": f"k{i}", "prompt": "tea"})
            self.assertEqual(r.status, 201, r)
            made.append(r.json["data"]["id"])
        wait_for(lambda: len(self.rx.log("/slow")) >= 1, "a first delivery")
        self.a.kill()
        self.rx.config("/slow", [secret])
        self.b.start()
        got = wait_for(lambda: (lambda g: g if {e_id(e) for e in g} >= set(made) else None)(
            self.rx.log("/slow")), "every event at least once after the kill", timeout=90)
        self.assertTrue(all(e["verified"] == [True] for e in got))


def e_id(entry):
    import json
    return json.loads(entry["body"])["data"]["id"]


if __name__ == "__main__":
    unittest.main()
