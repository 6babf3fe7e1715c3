"""SIGTERM drains (API.md §20), on PostgreSQL with two processes: /readyz answers 503
at once while requests are still taken for --drain-delay; then the listener closes,
an open stream ends with a `retry:` field, and the client resumes on the other
process with Last-Event-ID, nothing missing or repeated; waiting creates answer 202
and their generations finish as jobs (the draining process finishes what it runs, the
other takes the queue); the process exits 0."""
import signal
import socket
import time
import unittest

from harness import Server, pg_database, poll_state, wait_for
from test_stream import MULTI, Stream, check_deltas

DRAIN = 3  # --drain-delay: long enough for the checks made during it


class Drain(unittest.TestCase):
    def setUp(self):
        self.db = pg_database()
        self.data = Server().data_dir
        self.servers = []

    def start(self, *args):
        s = Server("--stream-keepalive", "0.5", *args, data_dir=self.data,
                   database=self.db).start()
        self.servers.append(s)
        return s

    def tearDown(self):
        for s in self.servers:
            s.stop()

    def test_stream_ends_with_retry_and_resumes_elsewhere(self):
        # a slow generation: half the delay before the first piece, the rest spread
        a = self.start("--builtin-delay-ms", "12000", "--drain-delay", str(DRAIN))
        b = self.start("--builtin-delay-ms", "12000")
        key = a.key("drain")
        s = Stream(a.port, "POST", "/api/v1/documents", key,
                   form={"name": "d", "prompt": MULTI * 4, "creativity": "0"})
        self.assertEqual(s.status, 201)
        first = s.next_event()
        self.assertEqual(first[0], "record")
        rid = first[2]["id"]
        got = [s.next_event()]
        self.assertEqual(got[0][0], "delta")
        a.proc.send_signal(signal.SIGTERM)
        # as soon as the signal is taken (it is delivered asynchronously: a request sent
        # right after kill() may be answered first): not ready, yet requests are still
        # answered
        last = [None]

        def not_ready():
            last[0] = a.request("GET", "/readyz")
            return last[0].status == 503

        wait_for(not_ready, "/readyz to answer 503 after SIGTERM", timeout=10, interval=0.02)
        self.assertEqual(last[0].json["status"], 503)
        self.assertEqual(a.request("GET", "/api/v1/documents", key=key).status, 200)
        # the stream ends without `done`, with a reconnection delay
        while True:
            e = s.next_event()
            if e is None:
                break
            got.append(e)
        self.assertNotIn("done", [e[0] for e in got])
        self.assertIn(b"retry: ", b"".join(s.raw))
        s.close()
        # the listener is closed: new connections are refused
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", a.port), timeout=5).close()
        had = check_deltas(self, got).encode()
        evs = Stream(b.port, "GET", f"/api/v1/documents/{rid}", key,
                     headers={"Last-Event-ID": str(len(had))}).events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[-1][0], "done")
        rest = check_deltas(self, evs, start=len(had)).encode()
        self.assertEqual((had + rest).decode(), evs[-1][2]["result"])
        # the draining process finished the generation it ran, then stopped cleanly
        self.assertEqual(a.stop(), 0)
        self.assertRegex(a.read_log(), rf"record=document/{rid}: completed")
        self.assertEqual(poll_state(b, key, f"/api/v1/documents/{rid}")["result"],
                         evs[-1][2]["result"])

    def test_action_stream_resumes_elsewhere_with_the_part(self):
        """A streamed selection action (§17) ends with `retry:` at A's drain; resumed on B
        with Last-Event-ID (its ids: bytes within the part) while A finishes it, B sends
        the rest of the part, nothing missing or repeated, then the whole new text."""
        self.action_stream_resumed(completed=False)

    def test_action_stream_resumed_after_it_completed(self):
        """The same, resumed on B only once A has completed the action (and stopped): B
        takes the part from the action's revision (SQLite 31, PostgreSQL 24 keep it) and
        sends exactly its rest, then the whole new text."""
        self.action_stream_resumed(completed=True)

    def action_stream_resumed(self, completed):
        a = self.start("--builtin-delay-ms", "12000", "--drain-delay", str(DRAIN))
        b = self.start("--builtin-delay-ms", "12000")
        key = a.key("drain3")
        r = a.request("POST", "/api/v1/documents", key=key, form={"name": "d", "prompt": "tea"},
                      headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        poll_state(a, key, f"/api/v1/documents/{rid}")
        text = "Keep this. We do not know much about tea or the sea. Keep that too."
        s0, s1 = text.index("We"), text.index(" Keep that")
        r = a.request("PATCH", f"/api/v1/documents/{rid}", key=key, form={"result": text})
        self.assertEqual(r.status, 200, r)
        s = Stream(a.port, "POST", f"/api/v1/documents/{rid}/actions", key,
                   form={"action": "expand", "selection_start": s0, "selection_end": s1})
        self.assertEqual(s.status, 200)
        self.assertEqual(s.next_event()[0], "record")
        got = [s.next_event()]
        self.assertEqual(got[0][0], "delta")
        a.proc.send_signal(signal.SIGTERM)
        while True:
            e = s.next_event()
            if e is None:
                break
            got.append(e)
        s.close()
        self.assertIn(b"retry: ", b"".join(s.raw))
        had = check_deltas(self, got).encode()
        if completed:  # A finishes the action it runs, then exits
            self.assertEqual(a.stop(), 0)
            now = poll_state(b, key, f"/api/v1/documents/{rid}", until=("completed",))
            self.assertEqual(now["revision"], 3)
        evs = Stream(b.port, "GET", f"/api/v1/documents/{rid}", key,
                     headers={"Last-Event-ID": str(len(had))}).events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[-1][0], "done")
        done = evs[-1][2]
        rest = check_deltas(self, evs, start=len(had)).encode()
        part = (had + rest).decode()
        self.assertEqual(done["result"], text[:s0] + part + text[s1:])
        self.assertEqual(done["revision"], 3)
        if not completed:
            self.assertEqual(a.stop(), 0)

    def test_waiting_creates_answer_202_and_finish_as_jobs(self):
        # one worker in A: the first create is A's job, the second waits in the queue
        a = self.start("--builtin-delay-ms", "6000", "--workers", "1", "--drain-delay", "1")
        key = a.key("drain2")
        import threading
        answers = []

        def create(n):
            answers.append(a.request("POST", "/api/v1/documents", key=key,
                                     form={"name": f"w{n}", "prompt": "p"}, timeout=60))
        threads = [threading.Thread(target=create, args=(n,)) for n in range(2)]
        for t in threads:
            t.start()
        deadline = time.time() + 20
        while time.time() < deadline:
            docs = a.request("GET", "/api/v1/documents", key=key).json["data"]
            if len(docs) == 2 and any(d["state"] == "generating" for d in docs):
                break
            time.sleep(0.05)
        a.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(60)
        self.assertEqual(sorted(r.status for r in answers), [202, 202], answers)
        # B starts after A stopped taking jobs: it takes the queue
        b = self.start("--builtin-delay-ms", "100")
        for r in answers:
            rec = poll_state(b, key, f"/api/v1/documents/{r.json['data']['id']}", timeout=60)
            self.assertEqual(rec["state"], "completed")
        self.assertEqual(a.stop(), 0)
        self.assertEqual(b.request("GET", "/api/v1/documents", key=key).json["meta"]["total"], 2)


if __name__ == "__main__":
    unittest.main()
