"""Actions across processes (API.md §17) on one PostgreSQL database: process B streams a
document whose action process A runs, and gets the part rewritten as deltas (the bounds
of the part travel with A's announcement), then the whole new text in `done`; an action
sent to B while A runs one is a 409."""
import unittest

from harness import VALGRIND, Server, pg_database, poll_state
from test_stream import Stream, check_deltas

BUSY = "The record is being generated."
DELAY_MS = "20000" if VALGRIND else "2500"  # A's action must outlast B's start


class CrossProcessAction(unittest.TestCase):
    def setUp(self):
        self.db = pg_database()
        self.data = Server().data_dir
        self.a = Server("--builtin-delay-ms", DELAY_MS, data_dir=self.data, database=self.db).start()
        self.key = self.a.key("x")
        self.b = None

    def tearDown(self):
        for s in (self.a, self.b):
            if s:
                self.assertEqual(s.stop(), 0)

    def test_b_streams_the_part_a_rewrites(self):
        r = self.a.request("POST", "/api/v1/documents", key=self.key,
                           form={"name": "x", "prompt": "tea"}, headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        poll_state(self.a, self.key, f"/api/v1/documents/{rid}")
        text = "Keep this. We do not know. Keep that too."
        r = self.a.request("PATCH", f"/api/v1/documents/{rid}", key=self.key, form={"result": text})
        self.assertEqual(r.status, 200, r)
        s0, s1 = text.index("We"), text.index(" Keep that")
        r = self.a.request("POST", f"/api/v1/documents/{rid}/actions", key=self.key,
                           form={"action": "change_tone", "tone": "casual",
                                 "selection_start": s0, "selection_end": s1},
                           headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        poll_state(self.a, self.key, f"/api/v1/documents/{rid}", until=("generating",))
        self.b = Server("--builtin-delay-ms", DELAY_MS, "--stream-keepalive", "0.5",
                        data_dir=self.data, database=self.db).start()
        r = self.b.request("POST", f"/api/v1/documents/{rid}/actions", key=self.key,
                           form={"action": "shorten"})
        self.assertEqual((r.status, r.json), (409, {"message": BUSY, "status": 409}))
        st = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key)
        evs = st.events()
        self.assertEqual(evs[-1][0], "done")
        done = evs[-1][2]
        part = "So, here's the deal. We don't know."
        self.assertEqual(done["result"], "Keep this. " + part + " Keep that too.")
        self.assertEqual((done["tone"], done["revision"]), ("casual", 3))
        self.assertEqual(check_deltas(self, evs), part)


if __name__ == "__main__":
    unittest.main()
