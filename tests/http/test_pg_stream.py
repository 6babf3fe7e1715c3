"""Streams across processes (API.md §10): process B streams a record that process A
generates, on one PostgreSQL database (the text so far kept in the database, NOTIFY
telling B there is more), with Last-Event-ID resume against B; a waiting create in B
whose job A runs is woken by A's NOTIFY."""
import re
import time
import unittest

from harness import SLOW, Server, pg_database, poll_state, slow
from test_stream import MULTI, Stream, check_deltas


class CrossProcessStreams(unittest.TestCase):
    def setUp(self):
        self.db = pg_database()
        self.data = Server().data_dir
        # A's generation sleeps 2.5 s (scaled): B starts and opens its stream before it ends
        self.a = Server("--builtin-delay-ms", str(int(2500 * SLOW)), "--builtin-fail-pattern", "FAILNOW",
                        data_dir=self.data, database=self.db).start()
        self.key = self.a.key("x")
        self.b = None

    def tearDown(self):
        for s in (self.a, self.b):
            if s:
                self.assertEqual(s.stop(), 0)

    def start_b(self):
        # B starts once A holds the job, so the generation is A's
        self.b = Server("--builtin-delay-ms", "2500", "--stream-keepalive", "0.5",
                        data_dir=self.data, database=self.db).start()

    def create_in_a(self, prompt):
        r = self.a.request("POST", "/api/v1/documents", key=self.key,
                           form={"name": "x", "prompt": prompt}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        rid = r.json["data"]["id"]
        poll_state(self.a, self.key, f"/api/v1/documents/{rid}", until=("generating",))
        return rid

    def test_b_streams_what_a_generates_and_resumes(self):
        rid = self.create_in_a(MULTI)
        self.start_b()
        s = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key)
        self.assertEqual(s.status, 200)
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[0][2]["state"], "generating")
        self.assertEqual(evs[-1][0], "done")
        result = evs[-1][2]["result"]
        self.assertEqual(check_deltas(self, evs), result)
        # the text so far reached B while A wrote it (kept every 250 ms), not all at the end
        self.assertGreater(sum(1 for e in evs if e[0] == "delta"), 1)
        # A generated it (B never ran the job)
        self.assertRegex(self.a.read_log(), rf"record=document/{rid}: completed")
        self.assertNotRegex(self.b.read_log(), rf"record=document/{rid}: completed")
        # resume against B from the middle
        whole = result.encode()
        cut = len(whole) // 2
        while (whole[cut] & 0xC0) == 0x80:
            cut -= 1
        evs = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key,
                     headers={"Last-Event-ID": str(cut)}).events()
        self.assertEqual(whole[:cut] + check_deltas(self, evs, start=cut).encode(), whole)

    def test_b_streams_a_failure_of_a(self):
        rid = self.create_in_a("FAILNOW")
        self.start_b()
        evs = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key).events()
        self.assertEqual([e[0] for e in evs], ["record", "error"])
        self.assertEqual(evs[1][2]["status"], 502)

    def test_delete_in_a_ends_the_stream_in_b(self):
        rid = self.create_in_a("p")
        self.start_b()
        s = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key)
        self.assertEqual(s.next_event()[0], "record")
        self.assertEqual(self.a.request("DELETE", f"/api/v1/documents/{rid}", key=self.key).status, 200)
        evs = s.events(limit_s=20)  # scaled in events()
        self.assertEqual(evs[-1][0], "error")

    def test_waiting_create_in_b_woken_by_a(self):
        # B's create waits; whichever process runs the job, B answers 201 at once
        self.start_b()
        t0 = time.time()
        r = self.b.request("POST", "/api/v1/documents", key=self.key, form={"name": "w", "prompt": "p"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json["data"]["state"], "completed")
        # woken when the job ended (2.5 s of sleep, scaled), long before B's wait limit
        # (60 s, scaled) at which a waiter nobody wakes would answer
        self.assertLess(time.time() - t0, slow(10))


if __name__ == "__main__":
    unittest.main()
