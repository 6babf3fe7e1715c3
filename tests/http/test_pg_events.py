"""The event sequence across processes (records.h, API.md §10): a stream on process B of a
generation that process A runs (one PostgreSQL database) gets A's text pieces as A's
model writes them — each NOTIFYed with its number, appended to the job's row in the
same statement — with nothing missing or repeated, and not by reading a snapshot of the
text every 250 ms.

How it can fail on a server that polls: the fake model writes many small pieces 0.1 s
apart (scaled by SLOW with everything else), and a stream fed by a 250 ms snapshot gets
two or three of them joined in each delta; here most deltas (after the first, which
carries whatever was written before B subscribed) must be exactly one piece."""
import os
import unittest

from harness import SLOW, Server, pg_database, poll_state
from test_openai import Fake
from test_stream import Stream, check_deltas

PIECES = [f"p{i:02d}·{'é' if i % 3 == 0 else 'x'} " for i in range(30)]


class PiecesAcrossProcesses(unittest.TestCase):
    def setUp(self):
        self.fake = Fake()
        self.db = pg_database()
        self.data = Server().data_dir
        self.a = Server("--provider", "openai", "--openai-base-url", self.fake.base + "/v1",
                        "--provider-timeout", str(60 * SLOW),
                        data_dir=self.data, database=self.db,
                        env={"OPENAI_API_KEY": "sk-test-events"}).start()
        self.key = self.a.key("x")
        self.b = None

    def tearDown(self):
        for s in (self.a, self.b):
            if s:
                self.assertEqual(s.stop(), 0)
        self.fake.stop()

    def test_b_gets_every_piece_of_a_in_order_as_it_is_written(self):
        self.fake.script(chat=[{"pieces": PIECES, "delay": 0.1 * SLOW}])
        r = self.a.request("POST", "/api/v1/documents", key=self.key,
                           form={"name": "x", "prompt": "p"}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        rid = r.json["data"]["id"]
        poll_state(self.a, self.key, f"/api/v1/documents/{rid}", until=("generating",))
        # B starts once A holds the job, so the generation is A's
        self.b = Server(data_dir=self.data, database=self.db).start()
        evs = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key).events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[-1][0], "done", evs[-1])
        result = evs[-1][2]["result"]
        self.assertEqual(result, "".join(PIECES))
        # every byte once, in order (ids are byte offsets)
        self.assertEqual(check_deltas(self, evs), result)
        deltas = [e[2]["text"] for e in evs if e[0] == "delta"]
        # each delta is whole pieces: the pieces as A's model wrote them
        at = 0
        sizes = []
        for d in deltas:
            n, joined = 0, ""
            while joined != d:
                self.assertTrue(d.startswith(joined + PIECES[at + n]), (d, at, n))
                joined += PIECES[at + n]
                n += 1
            sizes.append(n)
            at += n
        self.assertEqual(at, len(PIECES))
        # after the first delta (what was written before B subscribed), one piece each
        # (a piece or two may still arrive joined on a loaded machine; a 250 ms snapshot
        # would join two or three every time)
        later = sizes[1:]
        self.assertGreater(len(later), 0, sizes)
        single = sum(1 for n in later if n == 1)
        self.assertGreaterEqual(single * 4, len(later) * 3, sizes)
        # A generated it (B never ran the job)
        self.assertRegex(self.a.read_log(), rf"record=document/{rid}: completed")
        self.assertNotRegex(self.b.read_log(), rf"record=document/{rid}: completed")


if __name__ == "__main__":
    unittest.main()
