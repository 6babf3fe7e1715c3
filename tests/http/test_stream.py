"""Streamed generation (API.md §10): Server-Sent Events on creates and shows, byte-offset
ids, Last-Event-ID resume, keep-alive comments, errors before the stream, clients that go
away, many streams at once, failures mid-stream."""
import http.client
import json
import socket
import threading
import time
import unittest

from harness import BACKEND, Server, ServerTest, poll_state, record_exchange, slow

MULTI = "café ☕ 日本語 naïve Ωmega 🚀 test"


class Stream:
    """An SSE response read event by event."""

    def __init__(self, port, method, path, key, form=None, headers=None, timeout=30):
        h = {"Accept": "text/event-stream"}
        if key:
            h["Authorization"] = f"Bearer {key}"
        h.update(headers or {})
        body = None
        if form is not None:
            import urllib.parse
            body = urllib.parse.urlencode(form)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=slow(timeout))  # a hang bound
        self.conn.request(method, path, body=body, headers=h)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.comments = []
        self.method, self.path, self.raw, self.recorded = method, path, [], False

    def record(self, body=None):
        """Keeps the answer (what was read of it) for the OpenAPI conformance check."""
        if not self.recorded:
            self.recorded = True
            record_exchange(self.method, self.path, self.status, self.resp.getheaders(),
                            b"".join(self.raw) if body is None else body)

    def header(self, name):
        return self.resp.getheader(name)

    def json_body(self):
        body = self.resp.read()
        self.record(body)
        return json.loads(body)

    def next_event(self):
        """(event, id, data) of the next event, or None at the end of the stream."""
        ev, eid, data = None, None, []
        while True:
            line = self.resp.readline()
            if not line:
                self.record()
                return None
            self.raw.append(line)
            line = line.decode("utf-8").rstrip("\n")
            if line == "":
                if ev is None and not data:
                    continue
                return ev, eid, json.loads("\n".join(data))
            if line.startswith(":"):
                self.comments.append(line)
            elif line.startswith("event: "):
                ev = line[7:]
            elif line.startswith("id: "):
                eid = int(line[4:])
            elif line.startswith("data: "):
                data.append(line[6:])

    def events(self, limit_s=60):
        """Every event to the end of the stream (which must come within slow(limit_s): a
        bound that only catches a stream that never ends)."""
        limit_s = slow(limit_s)
        out = []
        until = time.time() + limit_s
        while True:
            if time.time() > until:
                raise AssertionError(f"the stream did not end in {limit_s} s: {out[-3:]}")
            e = self.next_event()
            if e is None:
                return out
            out.append(e)

    def close(self):
        self.record()
        self.conn.close()


def check_deltas(test, events, start=0):
    """The deltas' ids are byte offsets; returns the joined text."""
    text = b""
    for ev, eid, data in events:
        if ev != "delta":
            continue
        piece = data["text"].encode("utf-8")
        test.assertTrue(piece, "an empty delta")
        text += piece
        test.assertEqual(eid, start + len(text))
    return text.decode("utf-8")


class StreamedCreates(ServerTest):
    server_args = ["--stream-keepalive", "1"]

    def stream(self, method, path, key="alice", **kw):
        k = {"alice": self.alice, "bob": self.bob, None: None}.get(key, key)
        return Stream(self.srv.port, method, path, k, **kw)

    def test_document_create_streams_record_deltas_done(self):
        s = self.stream("POST", "/api/v1/documents", form={"name": "s", "prompt": MULTI, "template_id": 3})
        self.assertEqual(s.status, 201)
        self.assertEqual(s.header("Content-Type"), "text/event-stream")
        self.assertEqual(s.header("Cache-Control"), "no-store")
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        rec = evs[0][2]
        self.assertIsInstance(rec["id"], int)
        self.assertIsNone(rec["result"])
        self.assertTrue(s.header("Location").endswith(f"/api/v1/documents/{rec['id']}"))
        self.assertEqual(evs[-1][0], "done")
        done = evs[-1][2]
        self.assertEqual(done["state"], "completed")
        self.assertEqual(check_deltas(self, evs), done["result"])
        self.assertTrue(any(ord(c) > 127 for c in done["result"]), "multibyte text expected")
        # stored as streamed
        r = self.req("GET", f"/api/v1/documents/{rec['id']}")
        self.assertEqual(r.json["data"], done)

    def test_image_create_streams_record_then_done(self):
        s = self.stream("POST", "/api/v1/images",
                        form={"name": "i", "description": "red sky", "resolution": "1024x1024"})
        self.assertEqual(s.status, 201)
        evs = s.events()
        self.assertEqual([e[0] for e in evs], ["record", "done"])
        self.assertIsNone(evs[0][2]["url"])
        self.assertTrue(evs[1][2]["url"].endswith(".png"))
        self.assertEqual(evs[1][2]["state"], "completed")

    def test_show_of_finished_document_and_resume(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "f", "prompt": MULTI, "template_id": 5})
        doc = r.json["data"]
        s = self.stream("GET", f"/api/v1/documents/{doc['id']}")
        self.assertEqual(s.status, 200)
        evs = s.events()
        self.assertEqual(evs[0], ("record", None, doc))
        self.assertEqual(evs[-1], ("done", None, doc))
        self.assertEqual(check_deltas(self, evs), doc["result"])
        whole = doc["result"].encode()
        # resume from the middle (and from a byte inside a character: sent from its start)
        for cut in (len(whole) // 2, 1, len(whole)):
            s = self.stream("GET", f"/api/v1/documents/{doc['id']}", headers={"Last-Event-ID": str(cut)})
            evs = s.events()
            while cut > 0 and cut < len(whole) and (whole[cut] & 0xC0) == 0x80:
                cut -= 1
            rest = check_deltas(self, evs, start=cut)
            self.assertEqual(whole[:cut] + rest.encode(), whole)
            self.assertEqual(evs[-1][0], "done")

    def test_errors_before_the_stream_are_json(self):
        s = self.stream("POST", "/api/v1/documents", key=None, form={"name": "x", "prompt": "y"})
        self.assertEqual(s.status, 401)
        self.assertEqual(s.json_body(), {"message": "Unauthenticated.", "status": 401})
        s = self.stream("GET", "/api/v1/documents/999999")
        self.assertEqual(s.status, 404)
        self.assertEqual(s.json_body()["status"], 404)
        s = self.stream("GET", "/api/v1/documents/1", key="bob")
        self.assertEqual(s.status, 404)
        s = self.stream("POST", "/api/v1/documents", form={"prompt": "y"})
        self.assertEqual(s.status, 422)
        self.assertIn("name", s.json_body()["message"])
        s = self.stream("POST", "/api/v1/images", form={"name": "x", "description": "d", "resolution": "800x600"})
        self.assertEqual(s.status, 422)

    def test_rate_limited_stream_is_a_json_429(self):
        srv = Server("--rate-limit", "2").start()
        try:
            k = srv.key("rl")
            for _ in range(2):
                self.assertEqual(srv.request("GET", "/api/v1/documents", key=k).status, 200)
            s = Stream(srv.port, "POST", "/api/v1/documents", k, form={"name": "x", "prompt": "y"})
            self.assertEqual(s.status, 429)
            self.assertTrue(s.header("Retry-After"))
            self.assertEqual(s.json_body(), {"message": "Too Many Attempts.", "status": 429})
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_builtin_failure_before_any_record_is_a_json_502(self):
        srv = Server("--builtin-fail-pattern", "FAILNOW").start()
        try:
            k = srv.key("f")
            s = Stream(srv.port, "POST", "/api/v1/documents", k, form={"name": "x", "prompt": "FAILNOW"})
            self.assertEqual(s.status, 502)
            self.assertEqual(s.json_body()["status"], 502)
            r = srv.request("GET", "/api/v1/documents", key=k)
            self.assertEqual(r.json["meta"]["total"], 0)
        finally:
            self.assertEqual(srv.stop(), 0)


class SlowGenerations(unittest.TestCase):
    """Generations that take a while (the builtin test delay: the job path)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server("--builtin-delay-ms", "1500", "--builtin-fail-pattern", "FAILNOW",
                         "--stream-keepalive", "0.3", "--workers", "8").start()
        cls.key = cls.srv.key("slow")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}")

    def stream(self, method, path, **kw):
        return Stream(self.srv.port, method, path, self.key, **kw)

    def test_streamed_create_through_a_job_with_keepalives(self):
        s = self.stream("POST", "/api/v1/documents", form={"name": "j", "prompt": MULTI})
        self.assertEqual(s.status, 201)
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        self.assertIn(evs[0][2]["state"], ("queued", "generating"))
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual(check_deltas(self, evs), evs[-1][2]["result"])
        # the builtin generator spreads its delay over its pieces: the text grows
        self.assertGreater(sum(1 for e in evs if e[0] == "delta"), 1)

    def test_keepalives_while_nothing_is_sent(self):
        # an image has no deltas: for the 1.5 s of its generation nothing but
        # keep-alive comments may be sent (a document's pieces now arrive more often
        # than any keep-alive interval, since the test delay is spread over them)
        s = self.stream("POST", "/api/v1/images",
                        form={"name": "k", "description": "a quiet lake", "resolution": "1024x1024"})
        self.assertEqual(s.status, 201)
        evs = s.events()
        self.assertEqual([e[0] for e in evs], ["record", "done"])
        self.assertGreaterEqual(s.comments.count(": keep-alive"), 2, s.comments)

    def test_show_of_a_running_record(self):
        r = self.srv.request("POST", "/api/v1/documents", key=self.key,
                             form={"name": "run", "prompt": MULTI}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        rid = r.json["data"]["id"]
        # at once: the job sleeps 1.5 s (the test delay) however fast the machine, so the
        # show meets it queued or generating
        s = self.stream("GET", f"/api/v1/documents/{rid}")
        self.assertEqual(s.status, 200)
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        self.assertIn(evs[0][2]["state"], ("queued", "generating"))
        self.assertIsNone(evs[0][2]["result"])
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual(check_deltas(self, evs), evs[-1][2]["result"])

    def test_failure_mid_stream_leaves_no_record(self):
        s = self.stream("POST", "/api/v1/documents", form={"name": "bad", "prompt": "FAILNOW please"})
        self.assertEqual(s.status, 201)
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        rid = evs[0][2]["id"]
        self.assertEqual(evs[-1][0], "error")
        self.assertEqual(evs[-1][2]["status"], 502)
        self.assertTrue(evs[-1][2]["message"])
        self.assertEqual(self.srv.request("GET", f"/api/v1/documents/{rid}", key=self.key).status, 404)
        s = self.stream("POST", "/api/v1/images", form={"name": "bad", "description": "FAILNOW",
                                                        "resolution": "1024x1024"})
        evs = s.events()
        self.assertEqual([e[0] for e in evs], ["record", "error"])
        self.assertEqual(self.srv.request("GET", f"/api/v1/images/{evs[0][2]['id']}", key=self.key).status, 404)

    def test_show_of_a_failed_record_is_record_then_error(self):
        r = self.srv.request("POST", "/api/v1/documents", key=self.key,
                             form={"name": "bad", "prompt": "FAILNOW"}, headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        poll_state(self.srv, self.key, f"/api/v1/documents/{rid}")
        evs = self.stream("GET", f"/api/v1/documents/{rid}").events()
        self.assertEqual([e[0] for e in evs], ["record", "error"])
        self.assertEqual(evs[0][2]["state"], "failed")
        # on a show the record stays
        self.assertEqual(self.srv.request("GET", f"/api/v1/documents/{rid}", key=self.key).status, 200)

    def test_record_deleted_mid_stream_ends_it(self):
        r = self.srv.request("POST", "/api/v1/documents", key=self.key,
                             form={"name": "del", "prompt": "p"}, headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        s = self.stream("GET", f"/api/v1/documents/{rid}")
        self.assertEqual(s.next_event()[0], "record")
        self.assertEqual(self.srv.request("DELETE", f"/api/v1/documents/{rid}", key=self.key).status, 200)
        evs = s.events()
        self.assertEqual(evs[-1][0], "error")
        self.assertEqual(evs[-1][2]["message"], "The record was deleted.")

    def test_client_that_goes_away_loses_nothing(self):
        s = self.stream("POST", "/api/v1/documents", form={"name": "gone", "prompt": "p"})
        ev = s.next_event()
        self.assertEqual(ev[0], "record")
        rid = ev[2]["id"]
        s.close()
        rec = poll_state(self.srv, self.key, f"/api/v1/documents/{rid}")
        self.assertEqual(rec["state"], "completed")
        self.assertTrue(rec["result"])

    def test_200_concurrent_streams(self):
        r = self.srv.request("POST", "/api/v1/documents", key=self.key,
                             form={"name": "many", "prompt": MULTI}, headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        results, errors = [], []

        def one():
            try:
                evs = Stream(self.srv.port, "GET", f"/api/v1/documents/{rid}", self.key, timeout=60).events()
                results.append((check_deltas(self, evs), evs[-1]))
            except Exception as e:  # noqa: BLE001 - collected and reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=one) for _ in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 200)
        final = results[0][1]
        self.assertEqual(final[0], "done")
        for text, last in results:
            self.assertEqual(last, final)
            self.assertEqual(text, final[2]["result"])


if __name__ == "__main__":
    unittest.main()
