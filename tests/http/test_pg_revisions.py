"""Revisions and regeneration across processes (API.md §16) on one PostgreSQL database:
process B streams a record whose regeneration process A runs (the new text, then the
new revision; or the error of a failed regeneration, the record keeping its text), a
regenerate sent to B while A generates the record is a 409. (The conversion of an
existing database is in test_revisions.py, on both backends.)"""
import unittest

from harness import VALGRIND, Server, pg_database, poll_state
from test_stream import Stream, check_deltas

BUSY = "The record is being generated."
# A's generation must outlast B's start (B starts once A holds the job): under valgrind a
# start takes seconds, so the generation is made that much longer.
DELAY_MS = "20000" if VALGRIND else "2500"


class CrossProcessRegeneration(unittest.TestCase):
    def setUp(self):
        self.db = pg_database()
        self.data = Server().data_dir
        self.a = Server("--builtin-delay-ms", DELAY_MS, "--builtin-fail-pattern", "FAILNOW",
                        data_dir=self.data, database=self.db).start()
        self.key = self.a.key("x")
        self.b = None

    def tearDown(self):
        for s in (self.a, self.b):
            if s:
                self.assertEqual(s.stop(), 0)

    def start_b(self):
        self.b = Server("--builtin-delay-ms", DELAY_MS, "--stream-keepalive", "0.5",
                        data_dir=self.data, database=self.db).start()

    def doc_regenerating_in_a(self, prompt):
        r = self.a.request("POST", "/api/v1/documents", key=self.key,
                           form={"name": "x", "prompt": "the first text"})
        self.assertEqual(r.status, 201, r)
        first = r.json["data"]
        r = self.a.request("POST", f"/api/v1/documents/{first['id']}/regenerate", key=self.key,
                           form={"prompt": prompt}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        poll_state(self.a, self.key, f"/api/v1/documents/{first['id']}", until=("generating",))
        return first

    def test_b_streams_the_regeneration_a_runs(self):
        first = self.doc_regenerating_in_a("a second text")
        self.start_b()
        rid = first["id"]
        # B sees the latest finished revision meanwhile, and refuses a second regenerate
        during = self.b.request("GET", f"/api/v1/documents/{rid}", key=self.key).json["data"]
        self.assertEqual((during["state"], during["result"], during["revision"]),
                         ("generating", first["result"], 1))
        r = self.b.request("POST", f"/api/v1/documents/{rid}/regenerate", key=self.key)
        self.assertEqual((r.status, r.json), (409, {"message": BUSY, "status": 409}))
        s = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key)
        self.assertEqual(s.status, 200)
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[-1][0], "done")
        done = evs[-1][2]
        self.assertEqual((done["revision"], done["prompt"]), (2, "a second text"))
        self.assertNotEqual(done["result"], first["result"])
        self.assertEqual(check_deltas(self, evs), done["result"])
        self.assertRegex(self.a.read_log(), rf"record=document/{rid}: completed")
        revs = self.b.request("GET", f"/api/v1/documents/{rid}/revisions", key=self.key).json
        self.assertEqual([(x["number"], x["source"]) for x in revs["data"]],
                         [(2, "regeneration"), (1, "generation")])

    def test_b_hears_that_a_regeneration_failed(self):
        first = self.doc_regenerating_in_a("FAILNOW this time")
        self.start_b()
        rid = first["id"]
        s = Stream(self.b.port, "GET", f"/api/v1/documents/{rid}", self.key)
        evs = s.events()
        self.assertEqual([e[0] for e in evs if e[0] != "delta"], ["record", "error"])
        self.assertEqual(evs[-1][2]["status"], 502)
        now = self.b.request("GET", f"/api/v1/documents/{rid}", key=self.key).json["data"]
        self.assertEqual((now["state"], now["result"], now["revision"], now["prompt"]),
                         ("completed", first["result"], 1, "the first text"))
        self.assertEqual(now["error"], evs[-1][2]["message"])

    def test_image_regeneration_in_a_seen_by_b(self):
        r = self.a.request("POST", "/api/v1/images", key=self.key,
                           form={"name": "i", "description": "a hill", "resolution": "1024x1024"})
        self.assertEqual(r.status, 201, r)
        img = r.json["data"]
        r = self.a.request("POST", f"/api/v1/images/{img['id']}/regenerate", key=self.key,
                           form={"style": "natural"}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        self.start_b()
        s = Stream(self.b.port, "GET", f"/api/v1/images/{img['id']}", self.key)
        evs = s.events()
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual((evs[-1][2]["revision"], evs[-1][2]["style"]), (2, "natural"))
        self.assertNotEqual(evs[-1][2]["url"], img["url"])
        revs = self.b.request("GET", f"/api/v1/images/{img['id']}/revisions", key=self.key).json
        self.assertEqual(len(revs["data"]), 2)


if __name__ == "__main__":
    unittest.main()
