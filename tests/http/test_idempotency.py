"""Idempotent creates (API.md §11): replay with Idempotent-Replayed, the same request
whatever its form (form or JSON, field order, percent-encoding), 422 for another body
or an invalid key, 409 while the first is in progress, keys per user, nothing kept for
an answer other than 201/202, a key freed by a restart, and (PostgreSQL) the rules
across two server processes."""
import json
import socket
import threading
import time
import unittest

from harness import BACKEND, SLOW, Server, ServerTest, metric, pg_database, poll_state, slow, wait_for

MISMATCH = {"message": {"idempotency_key": ["The key was already used with other parameters."]},
            "status": 422}
BUSY = {"message": "A request with this idempotency key is in progress.", "status": 409}


def jobs(srv):
    """Jobs queued or running (GET /metrics): a create has been taken in once it counts."""
    return metric(srv, "inkwell_jobs_queued") + metric(srv, "inkwell_jobs_running")


def total(srv, key, kind="documents"):
    return srv.request("GET", f"/api/v1/{kind}", key=key).json["meta"]["total"]


class Idempotency(ServerTest):
    server_args = ["--builtin-fail-pattern", "FAILME"]

    def post(self, path="/api/v1/documents", key="alice", idem=None, headers=None, **kw):
        h = dict(headers or {})
        if idem is not None:
            h["Idempotency-Key"] = idem
        return self.req("POST", path, key=key, headers=h, **kw)

    def test_replay_same_answer_nothing_new(self):
        before = total(self.srv, self.alice)
        r1 = self.post(idem="k-replay-1", form={"name": "once", "prompt": "only once", "creativity": "0.25"})
        self.assertEqual(r1.status, 201, r1)
        self.assertIsNone(r1.header("Idempotent-Replayed"))
        # the same request in other clothes: JSON, other order, other percent-encoding
        variants = [
            dict(form={"name": "once", "prompt": "only once", "creativity": "0.25"}),
            dict(form="prompt=only%20once&creativity=0.25&name=%6Fnce"),
            dict(form="creativity=0.25&name=once&prompt=only+once"),
            dict(json_body={"prompt": "only once", "creativity": 0.25, "name": "once"}),
            dict(body='{"creativity":"0.25","name":"once","prompt":"only once"}',
                 headers={"Content-Type": "application/json; charset=utf-8"}),
        ]
        for v in variants:
            r = self.post(idem="k-replay-1", **v)
            self.assertEqual(r.status, 201, (v, r))
            self.assertEqual(r.body, r1.body, v)
            self.assertEqual(r.header("Idempotent-Replayed"), "true", v)
            self.assertEqual(r.header("Location"), r1.header("Location"))
            self.assertIsNotNone(r.header("X-RateLimit-Remaining"))
        self.assertEqual(total(self.srv, self.alice), before + 1)
        # a later change to the record does not change the kept answer
        doc = r1.json["data"]["id"]
        self.req("PATCH", f"/api/v1/documents/{doc}", form={"name": "renamed"})
        r = self.post(idem="k-replay-1", form={"name": "once", "prompt": "only once", "creativity": "0.25"})
        self.assertEqual(r.json["data"]["name"], "once")

    def test_images_and_async_202_replayed(self):
        form = {"name": "pic", "description": "a quiet harbour", "resolution": "1024x1024"}
        r1 = self.post("/api/v1/images", idem="k-img", form=form, headers={"Prefer": "respond-async"})
        self.assertEqual(r1.status, 202, r1)
        r2 = self.post("/api/v1/images", idem="k-img", form=form)  # Prefer is not the body
        self.assertEqual((r2.status, r2.body), (202, r1.body))
        self.assertEqual(r2.header("Idempotent-Replayed"), "true")
        self.assertEqual(r2.header("Location"), r1.header("Location"))
        poll_state(self.srv, self.alice, f"/api/v1/images/{r1.json['data']['id']}")
        # the same key on the other route is another request
        r3 = self.post("/api/v1/documents", idem="k-img", form={"name": "pic", "prompt": "x"})
        self.assertEqual((r3.status, r3.json), (422, MISMATCH))

    def test_other_body_422(self):
        r = self.post(idem="k-other", form={"name": "a", "prompt": "b"})
        self.assertEqual(r.status, 201)
        before = total(self.srv, self.alice)
        for other in ({"name": "a", "prompt": "c"}, {"name": "a", "prompt": "b", "creativity": "1"},
                      {"name": "a", "prompt": "b", "extra": "x"}):
            r = self.post(idem="k-other", form=other)
            self.assertEqual((r.status, r.json), (422, MISMATCH), other)
        self.assertEqual(total(self.srv, self.alice), before)

    def test_keys_are_per_user(self):
        form = {"name": "mine", "prompt": "per user"}
        ra = self.post(idem="shared-key", form=form)
        rb = self.post(idem="shared-key", key="bob", form=form)
        self.assertEqual((ra.status, rb.status), (201, 201))
        self.assertIsNone(rb.header("Idempotent-Replayed"))
        self.assertNotEqual(ra.json["data"]["id"], rb.json["data"]["id"])
        rb2 = self.post(idem="shared-key", key="bob", form={"name": "other", "prompt": "x"})
        self.assertEqual((rb2.status, rb2.json), (422, MISMATCH))

    def test_failed_first_request_keeps_nothing(self):
        form = {"name": "f", "prompt": "please FAILME"}
        before = total(self.srv, self.alice)
        for _ in range(2):  # each is processed anew: no replay of a 502
            r = self.post(idem="k-fail", form=form)
            self.assertEqual(r.status, 502, r)
            self.assertIsNone(r.header("Idempotent-Replayed"))
        # nor of a 422: the key is free for a valid request
        r = self.post(idem="k-invalid", form={"name": "", "prompt": "x"})
        self.assertEqual(r.status, 422)
        r = self.post(idem="k-invalid", form={"name": "ok", "prompt": "x"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(total(self.srv, self.alice), before + 1)

    def test_invalid_keys_422(self):
        for bad in ["", "x" * 256, "caf\u00e9", "tab\there", "del\x7f"]:
            raw = bad.encode("latin-1")
            s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
            body = b"name=a&prompt=b"
            s.sendall(b"POST /api/v1/documents HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      b"Authorization: Bearer " + self.alice.encode() + b"\r\n"
                      b"Content-Type: application/x-www-form-urlencoded\r\n"
                      b"Idempotency-Key: " + raw + b"\r\n"
                      b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
            s.close()
            head, _, payload = out.partition(b"\r\n\r\n")
            if bad == "tab\there":  # MHD reads "tab\there" as a valid value with a tab: refused too
                pass
            self.assertTrue(head.startswith(b"HTTP/1.1 422"), (bad, out[:200]))
            self.assertEqual(list(json.loads(payload)["message"].keys()), ["idempotency_key"], bad)
        self.assertEqual(self.post(idem="x" * 255, form={"name": "a", "prompt": "b"}).status, 201)
        self.assertEqual(self.post(idem="~!@ #$%", form={"name": "a", "prompt": "b"}).status, 201)

    def test_half_closed_client_retries_and_gets_the_answer(self):
        # test_edges.py: a half-closed client may lose its answer; the key gets it back
        form = "name=retry-me&prompt=closed"
        req = (f"POST /api/v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {self.alice}\r\n"
               "Content-Type: application/x-www-form-urlencoded\r\nIdempotency-Key: k-half\r\n"
               f"Content-Length: {len(form)}\r\n\r\n{form}").encode()
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
        s.sendall(req)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
        s.close()
        r = wait_for(lambda: (lambda r: r if r.status != 409 else None)(self.post(idem="k-half", form=form)),
                     "the key's first use finished")
        self.assertEqual(r.status, 201, r)
        listed = self.req("GET", "/api/v1/documents?search=retry-me").json["data"]
        self.assertEqual(len(listed), 1)
        self.assertEqual(r.json["data"]["id"], listed[0]["id"])


class Streamed(ServerTest):
    server_args = ["--builtin-delay-ms", "300"]

    def test_streamed_create_replays_its_json_201(self):
        form = {"name": "streamed", "prompt": "a streamed tea post"}
        r1 = self.req("POST", "/api/v1/documents", form=form,
                      headers={"Accept": "text/event-stream", "Idempotency-Key": "k-sse"})
        self.assertEqual(r1.status, 201, r1)
        self.assertTrue(r1.header("Content-Type").startswith("text/event-stream"))
        self.assertIn(b"event: done", r1.body)
        loc = r1.header("Location")
        # the replay is the kept JSON: the record as stored, status 201, not a stream
        for accept in ("text/event-stream", "application/json"):
            r = self.req("POST", "/api/v1/documents", form=form,
                         headers={"Accept": accept, "Idempotency-Key": "k-sse"})
            self.assertEqual((r.status, r.header("Idempotent-Replayed")), (201, "true"), r)
            self.assertTrue(r.header("Content-Type").startswith("application/json"))
            self.assertEqual(r.header("Location"), loc)
            self.assertEqual(r.json["status"], 201)
            self.assertEqual(self.srv.url(f"/api/v1/documents/{r.json['data']['id']}"), loc)
        self.assertEqual(total(self.srv, self.alice), 1)
        # the record itself finished: a GET has the whole text
        done = poll_state(self.srv, self.alice, loc[len(self.srv.url("")):])
        self.assertEqual(done["state"], "completed")


class InFlight(ServerTest):
    # the first create's generation sleeps 1.5 s (scaled): the second meets it in progress
    server_args = ["--builtin-delay-ms", str(int(1500 * SLOW))]

    def test_in_progress_409_then_replay(self):
        form = {"name": "slow", "description": "a slow sea", "resolution": "1024x1024"}
        first = {}

        def create():
            first["r"] = self.req("POST", "/api/v1/images", form=form, headers={"Idempotency-Key": "k-slow"})
        t = threading.Thread(target=create)
        t.start()
        wait_for(lambda: jobs(self.srv) >= 1, "the first create's job")  # the key is taken
        r = self.req("POST", "/api/v1/images", form=form, headers={"Idempotency-Key": "k-slow"})
        self.assertEqual((r.status, r.json), (409, BUSY))
        t.join()
        self.assertEqual(first["r"].status, 201, first["r"])
        r = self.req("POST", "/api/v1/images", form=form, headers={"Idempotency-Key": "k-slow"})
        self.assertEqual((r.status, r.body), (201, first["r"].body))
        self.assertEqual(total(self.srv, self.alice, "images"), 1)


class Restart(unittest.TestCase):
    def test_key_of_a_killed_request_is_free_after_restart(self):
        if BACKEND == "postgres":
            # shared database: a key stays leased for --wait-limit + 10 s (docs)
            lease = ["--wait-limit", "1"]
        else:
            lease = []
        srv = Server("--builtin-delay-ms", "3000", *lease).start()
        key = srv.key("restart")
        form = {"name": "killed", "description": "x", "resolution": "1024x1024"}
        t = threading.Thread(target=lambda: self._swallow(srv, key, form))
        t.start()
        wait_for(lambda: jobs(srv) >= 1, "the create's job")  # stored with its key
        srv.kill()
        t.join()
        srv2 = Server("--builtin-delay-ms", "10", *lease, data_dir=srv.data_dir, database=srv.database).start()
        try:
            # the record was stored with its 202 (queued) kept for a retry after a crash:
            # the retry gets that answer (SQLite at once: the start finishes the key, so
            # the first retry; PostgreSQL once the dead holder's lease, 11 s, has run out),
            # not a second record
            deadline = time.monotonic() + (slow(25) if BACKEND == "postgres" else 0)
            while True:
                r = srv2.request("POST", "/api/v1/images", key=key, form=form, headers={"Idempotency-Key": "k-kill"})
                if r.status != 409 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            self.assertEqual((r.status, r.header("Idempotent-Replayed")), (202, "true"), r)
            self.assertEqual(r.json["data"]["state"], "queued")
            self.assertEqual(total(srv2, key, "images"), 1)
            done = poll_state(srv2, key, f"/api/v1/images/{r.json['data']['id']}")
            self.assertEqual(done["state"], "completed")
        finally:
            self.assertEqual(srv2.stop(), 0)

    def _swallow(self, srv, key, form):
        try:
            srv.request("POST", "/api/v1/images", key=key, form=form, headers={"Idempotency-Key": "k-kill"})
        except Exception:
            pass


class CrashAfterCommit(unittest.TestCase):
    """The process dies right after the commit that stored a keyed create (a test hook:
    INKWELL_TEST_EXIT_AFTER_KEPT_COMMIT=1 makes it kill itself with SIGKILL there, before any answer
    or later write). The key's answer was kept in that same transaction: a retry after
    the restart gets it, and there is exactly one record."""
    CASES = [
        # (route, form, headers, kind, status the retry gets)
        ("documents", {"name": "inline", "prompt": "a crash after the commit"}, {}, 201),
        ("documents", {"name": "streamed", "prompt": "a streamed crash"},
         {"Accept": "text/event-stream"}, 201),
        ("images", {"name": "async", "description": "a crash", "resolution": "1024x1024"},
         {"Prefer": "respond-async"}, 202),
        ("images", {"name": "streamed", "description": "a crash", "resolution": "1024x1024"},
         {"Accept": "text/event-stream"}, 201),
    ]
    if BACKEND == "sqlite":
        # a waiting create keeps its 202 for a crash; on PostgreSQL the retry waits for
        # the dead holder's lease (--wait-limit + 10 s): Restart above covers that
        CASES.append(("images", {"name": "waiting", "description": "a crash",
                                 "resolution": "1024x1024"}, {}, 202))

    def test_key_kept_with_the_record(self):
        first = Server(env={"INKWELL_TEST_EXIT_AFTER_KEPT_COMMIT": "1"})
        db, data = first.database, first.data_dir
        for i, (route, form, headers, status) in enumerate(self.CASES):
            srv = first if i == 0 else Server(data_dir=data, database=db,
                                              env={"INKWELL_TEST_EXIT_AFTER_KEPT_COMMIT": "1"})
            srv.start()
            key = srv.key(f"crash{i}")
            h = dict(headers, **{"Idempotency-Key": f"crash-{i}"})
            with self.assertRaises(Exception, msg=(route, headers)):
                srv.request("POST", f"/api/v1/{route}", key=key, form=form, headers=h, timeout=10)
            self.assertEqual(srv.proc.wait(slow(10)), -9, srv.read_log()[-2000:])
            srv.log.close()
            srv.check_sanitizers()
            again = Server(data_dir=data, database=db).start()
            try:
                h.pop("Accept", None)  # a replay is the kept JSON whatever the Accept
                r = again.request("POST", f"/api/v1/{route}", key=key, form=form, headers=h)
                self.assertEqual((r.status, r.header("Idempotent-Replayed")), (status, "true"),
                                 (route, headers, r))
                self.assertEqual(r.json["data"]["name"], form["name"])
                self.assertEqual(total(again, key, route), 1, (route, headers))
                # (the first server's address: another port)
                self.assertTrue(r.header("Location").endswith(f"/api/v1/{route}/{r.json['data']['id']}"))
                poll_state(again, key, f"/api/v1/{route}/{r.json['data']['id']}")
            finally:
                self.assertEqual(again.stop(), 0)


class TwoProcesses(unittest.TestCase):
    def test_rules_hold_across_processes(self):
        if BACKEND != "postgres":
            # one SQLite server per data directory (test_lock.py): a second process
            # cannot run; the single-process rules are tested above
            return
        db = pg_database()
        data = Server().data_dir
        # generations sleep 1.5 s (scaled): a second create meets the first in progress
        delay = str(int(1500 * SLOW))
        a = Server("--builtin-delay-ms", delay, data_dir=data, database=db).start()
        b = Server("--builtin-delay-ms", delay, data_dir=data, database=db).start()
        try:
            key = a.key("multi")
            form = {"name": "across", "description": "two servers", "resolution": "1024x1024"}
            first = {}
            t = threading.Thread(target=lambda: first.update(
                r=a.request("POST", "/api/v1/images", key=key, form=form, headers={"Idempotency-Key": "m1"})))
            t.start()
            wait_for(lambda: jobs(a) >= 1, "the first create's job")  # the key is taken
            r = b.request("POST", "/api/v1/images", key=key, form=form, headers={"Idempotency-Key": "m1"})
            self.assertEqual((r.status, r.json), (409, BUSY))
            t.join()
            self.assertEqual(first["r"].status, 201, first["r"])
            r = b.request("POST", "/api/v1/images", key=key, form=form, headers={"Idempotency-Key": "m1"})
            self.assertEqual((r.status, r.body, r.header("Idempotent-Replayed")), (201, first["r"].body, "true"))
            r = b.request("POST", "/api/v1/images", key=key, form=dict(form, name="other"),
                          headers={"Idempotency-Key": "m1"})
            self.assertEqual((r.status, r.json), (422, MISMATCH))
            # racing first uses on both: exactly one record
            results = []
            ts = [threading.Thread(target=lambda s=s: results.append(
                s.request("POST", "/api/v1/documents", key=key, form={"name": "race", "prompt": "p"},
                          headers={"Idempotency-Key": "m2"}))) for s in (a, b, a, b)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(sorted(r.status for r in results).count(201), sum(1 for r in results if r.status == 201))
            self.assertTrue(all(r.status in (201, 409) for r in results), results)
            r = wait_for(lambda: (lambda r: r if r.status != 409 else None)(
                a.request("POST", "/api/v1/documents", key=key, form={"name": "race", "prompt": "p"},
                          headers={"Idempotency-Key": "m2"})), "the racing key finished")
            self.assertEqual(r.status, 201)
            self.assertEqual(total(a, key), 1)
        finally:
            a.stop()
            b.stop()
