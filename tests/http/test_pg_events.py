"""The event sequence across processes (records.h, API.md §10): a stream on process B of a
generation that process A runs (one PostgreSQL database) gets A's text pieces as A's
model writes them — each NOTIFYed with its number, appended to the job's row in the
same statement — with nothing missing or repeated, and not by reading a snapshot of the
text every 250 ms.

How it can fail on a server that polls: the fake model writes many small pieces 0.1 s
apart (scaled by SLOW with everything else), and a stream fed by a 250 ms snapshot gets
two or three of them joined in each delta; here most deltas (after the first, which
carries whatever was written before B subscribed) must be exactly one piece.

And across an outage of A's database connection (PgBouncer stopped for a second while
A's model writes): the pieces A could not send are sent with the next ones once the
database answers again, so B's stream still joins to the result. A server that drops
them appends a later piece to the row as if it followed the text before the outage,
and B, which reads the row to fill what it missed, streams that tail as the start of
the text (the cluster test's CI failure of 2026-11-26: "joined deltas differ from the
result at byte 0")."""
import os
import time
import unittest

from bouncer import Bouncer
from harness import PG_URL, SLOW, Server, pg_database, poll_state
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


class PiecesAcrossAnOutage(unittest.TestCase):
    def setUp(self):
        self.fake = Fake()
        self.db = pg_database()
        self.data = Server().data_dir
        self.bouncer = Bouncer(PG_URL, "transaction").start()
        # A's statements (the pieces among them) go through the bouncer; its listener
        # and owner lock connect directly and stay up
        self.a = Server("--provider", "openai", "--openai-base-url", self.fake.base + "/v1",
                        "--provider-timeout", str(60 * SLOW),
                        "--database-pooled", self.bouncer.url(self.db),
                        data_dir=self.data, database=self.db,
                        env={"OPENAI_API_KEY": "sk-test-events"}).start()
        self.key = self.a.key("x")
        self.b = Server(data_dir=self.data, database=self.db).start()

    def tearDown(self):
        for s in (self.a, self.b):
            self.assertEqual(s.stop(), 0)
        self.bouncer.stop()
        self.fake.stop()

    def test_pieces_not_sent_during_an_outage_are_sent_after_it(self):
        # 8 s of pieces: the connection comes back (a reconnect waits for PgBouncer's
        # server_login_retry) while the model still writes
        pieces = [f"q{i:02d}·{'é' if i % 3 == 0 else 'x'} " for i in range(80)]
        self.fake.script(chat=[{"pieces": pieces, "delay": 0.1 * SLOW}])
        r = self.a.request("POST", "/api/v1/documents", key=self.key,
                           form={"name": "x", "prompt": "p"}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        rid = r.json["data"]["id"]
        s = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key, timeout=120)
        self.assertEqual(s.status, 200)
        first = [s.next_event(), s.next_event()]  # the record, then the first delta
        self.assertEqual([e[0] for e in first], ["record", "delta"], first)
        # A's database goes away for a second while its model writes (not scaled by
        # SLOW: the outage is the test's schedule, and A sends failed pieces again for
        # about 5 s of its own clock, remote.c's SEND_TRIES)
        self.bouncer.stop()
        time.sleep(1.0)
        self.bouncer.start(port=self.bouncer.port)
        evs = first + s.events()
        self.assertEqual(evs[-1][0], "done", evs[-1])
        result = evs[-1][2]["result"]
        self.assertEqual(result, "".join(pieces))
        self.assertEqual(check_deltas(self, evs), result)
        # the outage was seen, and B heard pieces after it (not only the end)
        self.assertRegex(self.a.read_log(), "text pieces could not be sent")
        self.assertGreater(sum(1 for e in evs if e[0] == "delta"), 5)
        self.assertRegex(self.a.read_log(), rf"record=document/{rid}: completed")


if __name__ == "__main__":
    unittest.main()
