"""Races of a record's life (issue 33 item 2), black-box, on the backend under test
(SQLite or PostgreSQL):
- an action racing an edit or a restore (API.md §24): the action's outcome is not
  stored, the edit (restore) is kept, a waiting client gets 409 "The document changed
  while it was being rewritten.", a streamed one an `error` event of that 409, an async
  one finds the record as the edit left it, and nothing is counted;
- an action whose text comes back equal to the document's makes no revision (200, the
  record as it was) and its words count;
- concurrent regenerations of one record (many answered 409) by a waiting client and a
  streamed one, with async ones in between: each accepted waiting one is answered 200
  (never 202 at the wait limit: the generations take milliseconds), each accepted
  stream ends with `done`. Images, and documents on the job path."""
import json
import socket
import threading
import time
import unittest

from harness import Server, ServerTest, poll_state, slow, wait_for, words_of
from test_stream import Stream

API = "/api/v1"
CHANGED = "The document changed while it was being rewritten."
BUSY = "The record is being generated."
DELAY_MS = "1500"
TEXT = ("tea is is good .it helps  focus. We utilize numerous methods to facilitate "
        "learning. We do not know. It is fine.")


def events_until(st, limit_s):
    """The stream's events to its end, or None when it has not ended within limit_s (a
    bound far above a generation's milliseconds; keep-alives do not extend it: the
    socket is shut at the bound)."""
    timed_out = threading.Event()

    def cut():
        timed_out.set()
        try:
            st.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    timer = threading.Timer(limit_s, cut)
    timer.start()
    out, ev, data = [], None, []
    try:
        while True:
            try:
                line = st.resp.readline()
            except OSError:
                line = b""
            if not line:
                break
            line = line.decode("utf-8").rstrip("\n")
            if line == "":
                if ev is not None:
                    out.append((ev, None, json.loads("\n".join(data))))
                ev, data = None, []
            elif line.startswith(":"):
                st.comments.append(line)
            elif line.startswith("event: "):
                ev = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
    finally:
        timer.cancel()
    return None if timed_out.is_set() and not (out and out[-1][0] in ("done", "error")) else out


class ActionRaces(ServerTest):
    # the builtin generator delayed: the action runs long enough to be raced
    server_args = ["--builtin-delay-ms", DELAY_MS, "--stream-keepalive", "0.5"]

    def doc(self):
        d = self.make_doc()
        r = self.req("PATCH", f"{API}/documents/{d['id']}", form={"result": TEXT})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["revision"], 2)
        return r.json["data"]

    def usage_words(self):
        r = self.req("GET", f"{API}/usage")
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["words"]["used"]

    def revisions(self, rid):
        r = self.req("GET", f"{API}/documents/{rid}/revisions?per_page=100")
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def generating(self, rid):
        poll_state(self.srv, self.alice, f"{API}/documents/{rid}", until=("generating",))

    def check_kept(self, rid, text, revision, words_before):
        d = poll_state(self.srv, self.alice, f"{API}/documents/{rid}")
        self.assertEqual((d["state"], d["result"], d["revision"]), ("completed", text, revision))
        revs = self.revisions(rid)
        self.assertEqual(revs[0]["number"], revision)
        self.assertNotEqual(revs[0]["source"], "action")
        self.assertEqual(self.usage_words(), words_before)  # nothing counted
        return d

    def test_async_action_then_edit_keeps_the_edit(self):
        d = self.doc()
        before = self.usage_words()
        r = self.req("POST", f"{API}/documents/{d['id']}/actions", form={"action": "shorten"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        self.generating(d["id"])
        r = self.req("PATCH", f"{API}/documents/{d['id']}", form={"result": "NEW words here"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["revision"], 3)
        # the action ends (its job is gone) without storing its rewrite of the old text
        wait_for(lambda: self.req("GET", f"{API}/documents/{d['id']}").json["data"]["state"]
                 == "completed", "the action's end", timeout=30)
        kept = self.check_kept(d["id"], "NEW words here", 3, before)
        self.assertEqual(kept["error"], CHANGED)

    def waiting_action_raced(self, race):
        d = self.doc()
        before = self.usage_words()
        out = {}

        def act():
            out["r"] = self.req("POST", f"{API}/documents/{d['id']}/actions",
                                form={"action": "shorten"})
        t = threading.Thread(target=act)
        t.start()
        self.generating(d["id"])
        text = race(d["id"])
        t.join()
        self.assertError(out["r"], 409, CHANGED)
        self.check_kept(d["id"], text, 3, before)

    def test_waiting_action_raced_by_an_edit_is_409(self):
        def edit(rid):
            r = self.req("PATCH", f"{API}/documents/{rid}", form={"result": "edited meanwhile"})
            self.assertEqual(r.status, 200, r)
            return "edited meanwhile"
        self.waiting_action_raced(edit)

    def test_waiting_action_raced_by_a_restore_is_409(self):
        def restore(rid):
            first = self.req("GET", f"{API}/documents/{rid}/revisions/1").json["data"]["result"]
            r = self.req("POST", f"{API}/documents/{rid}/revisions/1/restore")
            self.assertEqual(r.status, 200, r)
            return first
        self.waiting_action_raced(restore)

    def test_streamed_action_raced_by_an_edit_ends_with_409(self):
        d = self.doc()
        before = self.usage_words()
        st = Stream(self.srv.port, "POST", f"{API}/documents/{d['id']}/actions", self.alice,
                    form={"action": "shorten"})
        self.assertEqual(st.status, 200)
        first = st.next_event()
        self.assertEqual(first[0], "record")
        self.generating(d["id"])
        r = self.req("PATCH", f"{API}/documents/{d['id']}", form={"result": "edited meanwhile"})
        self.assertEqual(r.status, 200, r)
        evs = st.events()
        self.assertEqual(evs[-1][0], "error", evs)
        self.assertEqual(evs[-1][2], {"message": CHANGED, "status": 409})
        self.check_kept(d["id"], "edited meanwhile", 3, before)

    def test_action_with_the_same_text_makes_no_revision(self):
        d = self.doc()
        before = self.usage_words()
        # an empty selection rewrites nothing: the text comes back as it was
        r = self.req("POST", f"{API}/documents/{d['id']}/actions",
                     form={"action": "improve", "selection_start": 3, "selection_end": 3})
        self.assertEqual(r.status, 200, r)
        got = r.json["data"]
        self.assertEqual((got["state"], got["result"], got["revision"], got["error"]),
                         ("completed", TEXT, 2, None))
        self.assertEqual(len(self.revisions(d["id"])), 2)
        self.assertEqual(self.usage_words(), before + words_of(TEXT))


class RecordEventOfARegeneration(unittest.TestCase):
    """The `record` event of a streamed regeneration or action shows the record as a GET
    shows it meanwhile (§16): the latest finished revision's result, words (url)."""

    def check(self, srv, key, path, form=None, field="result"):
        before = srv.request("GET", path, key=key).json["data"]
        st = Stream(srv.port, "POST", path + ("/actions" if form else "/regenerate"), key,
                    form=form)
        self.assertEqual(st.status, 200)
        evs = events_until(st, slow(30))
        self.assertIsNotNone(evs)
        self.assertEqual(evs[0][0], "record")
        rec = evs[0][2]
        self.assertIn(rec["state"], ("queued", "generating"))
        for k in (field, "revision") + (("words",) if field == "result" else ()):
            self.assertEqual(rec[k], before[k], k)
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual(evs[-1][2]["revision"], before["revision"] + 1)

    def run_on(self, *args):
        srv = Server(*args).start()
        try:
            key = srv.key("u")
            r = srv.request("POST", f"{API}/documents", key=key, form={"name": "d", "prompt": "tea"})
            self.assertEqual(r.status, 201, r)
            doc = f"{API}/documents/{r.json['data']['id']}"
            self.check(srv, key, doc)
            self.check(srv, key, doc, form={"action": "expand"})
            r = srv.request("POST", f"{API}/images", key=key,
                            form={"name": "i", "description": "a red sunset",
                                  "resolution": "1024x1024"})
            self.assertEqual(r.status, 201, r)
            self.check(srv, key, f"{API}/images/{r.json['data']['id']}", field="url")
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_in_the_request(self):  # the builtin generator: no job
        self.run_on()

    def test_through_a_job(self):
        self.run_on("--builtin-delay-ms", "200")


class RestoreRacingTheCap(unittest.TestCase):
    """A restore of an image revision that the revision cap removes meanwhile (with its
    picture) answers 404, as it would a moment later — never 503."""

    def test_restore_of_a_revision_being_trimmed(self):
        srv = Server("--max-revisions", "2", "--builtin-delay-ms", "1").start()
        try:
            key = srv.key("u")
            r = srv.request("POST", f"{API}/images", key=key,
                            form={"name": "i", "description": "a red sunset",
                                  "resolution": "1024x1024"})
            self.assertEqual(r.status, 201, r)
            path = f"{API}/images/{r.json['data']['id']}"
            stop, statuses = threading.Event(), {}

            def regenerate():
                while not stop.is_set():
                    srv.request("POST", f"{path}/regenerate", key=key)
            bad = []

            def restore():
                for _ in range(100):
                    rev = srv.request("GET", path, key=key).json["data"]["revision"]
                    # the oldest kept revision: the next revision's cap removes it
                    r = srv.request("POST", f"{path}/revisions/{max(rev - 1, 1)}/restore", key=key)
                    statuses[r.status] = statuses.get(r.status, 0) + 1
                    if r.status not in (200, 404):
                        bad.append(r)
            ts = [threading.Thread(target=regenerate)] + \
                [threading.Thread(target=restore) for _ in range(3)]
            for t in ts:
                t.start()
            for t in ts[1:]:
                t.join()
            stop.set()
            ts[0].join()
            self.assertEqual(bad, [], statuses)
        finally:
            self.assertEqual(srv.stop(), 0)


class RegenerationRaces(unittest.TestCase):
    """Regenerations of one record sent at once: each accepted client hears its own end."""
    ROUNDS = 40  # accepted waiting regenerations per kind

    @classmethod
    def setUpClass(cls):
        # a wait limit far above a generation's milliseconds: a 202 is a missed completion
        cls.srv = Server("--builtin-delay-ms", "1", "--wait-limit", str(int(slow(20))),
                         "--stream-keepalive", "0.5").start()
        cls.key = cls.srv.key("racer")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}")

    def race(self, srv_for, path, rounds):
        stop = threading.Event()
        failures, counts = [], {"wait": 0, "stream": 0, "async": 0, "busy": 0}
        lock = threading.Lock()

        def note(k):
            with lock:
                counts[k] += 1

        def waiter(srv):
            while not stop.is_set():
                r = srv.request("POST", f"{path}/regenerate", key=self.key)
                if r.status == 409:
                    note("busy")
                    continue
                note("wait")
                if r.status != 200 or r.json["data"]["state"] != "completed":
                    failures.append(f"waiting regenerate: {r.status} {r.body[:200]!r}")
                    stop.set()
                if counts["wait"] >= rounds:
                    stop.set()

        def streamer(srv):
            while not stop.is_set():
                st = Stream(srv.port, "POST", f"{path}/regenerate", self.key, timeout=slow(20))
                if st.status == 409:
                    st.json_body()
                    note("busy")
                    continue
                note("stream")
                evs = events_until(st, slow(20))
                if evs is None:  # only keep-alives: the end was missed
                    failures.append(f"stream: no end in {slow(20):g} s "
                                    f"({len(st.comments)} keep-alives)")
                    stop.set()
                    st.close()
                    continue
                if not evs or evs[-1][0] != "done":
                    failures.append(f"stream ended with {evs[-1:]!r}")
                    stop.set()

        def asyncer(srv):
            while not stop.is_set():
                r = srv.request("POST", f"{path}/regenerate", key=self.key,
                                headers={"Prefer": "respond-async"})
                note("async" if r.status == 202 else "busy")

        srvs = srv_for()
        threads = [threading.Thread(target=waiter, args=(srvs[0],)),
                   threading.Thread(target=streamer, args=(srvs[-1],)),
                   threading.Thread(target=asyncer, args=(srvs[0],)),
                   threading.Thread(target=asyncer, args=(srvs[-1],))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [], counts)
        self.assertGreaterEqual(counts["wait"], rounds, counts)

    def test_document_regenerations(self):
        r = self.srv.request("POST", f"{API}/documents", key=self.key,
                             form={"name": "r", "prompt": "tea"})
        self.assertEqual(r.status, 201, r)
        self.race(lambda: [self.srv], f"{API}/documents/{r.json['data']['id']}", self.ROUNDS)

    def test_image_regenerations(self):
        r = self.srv.request("POST", f"{API}/images", key=self.key,
                             form={"name": "r", "description": "a red sunset",
                                   "resolution": "1024x1024"})
        self.assertEqual(r.status, 201, r)
        self.race(lambda: [self.srv], f"{API}/images/{r.json['data']['id']}", self.ROUNDS)


if __name__ == "__main__":
    unittest.main()
