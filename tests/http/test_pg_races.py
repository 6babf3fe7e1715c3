"""Regenerations of one record sent at once to two processes on one PostgreSQL database
(issue 33 item 2): waiting regenerations on process A, streamed ones on process B, async
ones on both (many answered 409). Each accepted waiting client is answered 200 (never
202 at the wait limit), each accepted stream ends with `done`, though another
regeneration may have been accepted (anywhere) between its generation's end and the
moment its process hears of it: the end's NOTIFY names its job. Documents (on the job
path) and images."""
import unittest

from harness import Server, pg_database, slow
from test_races import API, RegenerationRaces


class TwoProcessRegenerationRaces(RegenerationRaces):
    ROUNDS = 30

    @classmethod
    def setUpClass(cls):
        db = pg_database()
        args = ["--builtin-delay-ms", "1", "--wait-limit", str(int(slow(20))),
                "--stream-keepalive", "0.5"]
        cls.srv = Server(*args, database=db).start()
        cls.other = Server(*args, database=db, data_dir=cls.srv.data_dir).start()
        cls.key = cls.srv.key("racer")

    @classmethod
    def tearDownClass(cls):
        for s in (cls.srv, cls.other):
            rc = s.stop()
            if rc != 0:
                raise AssertionError(f"server exited with {rc}")

    def test_document_regenerations(self):
        r = self.srv.request("POST", f"{API}/documents", key=self.key,
                             form={"name": "r", "prompt": "tea"})
        self.assertEqual(r.status, 201, r)
        self.race(lambda: [self.srv, self.other], f"{API}/documents/{r.json['data']['id']}",
                  self.ROUNDS)

    def test_image_regenerations(self):
        r = self.srv.request("POST", f"{API}/images", key=self.key,
                             form={"name": "r", "description": "a red sunset",
                                   "resolution": "1024x1024"})
        self.assertEqual(r.status, 201, r)
        self.race(lambda: [self.srv, self.other], f"{API}/images/{r.json['data']['id']}",
                  self.ROUNDS)


del RegenerationRaces  # (run by test_races.py)

if __name__ == "__main__":
    unittest.main()
