"""A hostile client (issue 17, items 1, 5 and the export limits of 2): request lines and
header fields split or forged with control bytes never put a key in any log and get a
JSON 400; heads and query strings over the limits get a JSON 431 whatever their size;
a malformed request line gets a 400; connections over the per-address cap get a 503
with Retry-After; exports are bounded per user and cached by the document's version.
Raw sockets throughout: http.client refuses to send most of these."""
import json
import os
import socket
import tempfile
import threading
import time

from harness import Server, ServerTest, metric, wait_for


def exchange(port, data, timeout=10, src="127.0.0.1"):
    """Sends data; returns everything the server sent until it closed (or timeout)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(src, 0))
    out = b""
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
    finally:
        s.close()
    return out


def parse(out):
    """(status, headers dict lower-cased, body bytes) of the first answer in out."""
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1]) if lines[0].startswith(b"HTTP/1.1 ") else None
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        headers[k.strip().lower().decode()] = v.strip().decode()
    n = int(headers.get("content-length", len(body)))
    return status, headers, body[:n]


class Hostile(ServerTest):
    def assertJsonError(self, out, status, message, case=None):
        st, headers, body = parse(out)
        self.assertEqual(st, status, (case, out[:300]))
        self.assertTrue(headers.get("content-type", "").startswith("application/json"), (case, headers))
        self.assertEqual(json.loads(body), {"message": message, "status": status}, case)

    def assertNoKeyInLog(self, key):
        # A request's access line is written when it completes, before it leaves the
        # in-flight gauge (src/http/server.c: on_completed logs, then req_free counts it
        # out; a request that never reached on_access is neither counted nor logged). Once
        # only this /metrics request is in flight, every line of the requests above is in
        # the log, however slow the server.
        wait_for(lambda: metric(self.srv, "inkwell_http_requests_in_flight") <= 1,
                 "every request above completed (and its access line written)")
        log = self.srv.read_log()
        for k in (key, key[4:], key[4:24], key[-20:]):
            self.assertNotIn(k, log)
        # nor the split header's text, escaped or not
        for t in ("Authorization: ", "Authorization:\\x20", "Bearer ", "Bearer\\x20", "Bearer\\x09"):
            self.assertNotIn(t, log)

    def test_every_control_byte_in_the_request_target_is_400_and_never_logged(self):
        key = self.srv.key("victim")
        k = key.encode()
        for b in list(range(0x00, 0x21)) + [0x7f]:
            c = bytes([b])
            # the split: the header rides in the target after a control byte
            out = exchange(self.srv.port, b"GET /api/v1/documents" + c + b"Authorization: Bearer " + k +
                           b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            self.assertJsonError(out, 400, "Bad request.", hex(b))
            # and in the query string
            out = exchange(self.srv.port, b"GET /api/v1/documents?q=1" + c + b"Bearer%20" + k +
                           b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            self.assertJsonError(out, 400, "Bad request.", hex(b))
        self.assertNoKeyInLog(key)

    def test_header_splitting_tricks_never_reach_a_log(self):
        key = self.srv.key("victim")
        k = key.encode()
        tail = b"Host: x\r\nConnection: close\r\n\r\n"
        refused = [
            # a bare CR or LF, NUL, in the request line
            b"GET /api/v1/documents\rAuthorization: Bearer " + k + b" HTTP/1.1\r\n" + tail,
            b"GET /api/v1/documents\nAuthorization: Bearer " + k + b" HTTP/1.1\r\n" + tail,
            b"GET /api/v1/documents\r\nAuthorization: Bearer " + k + b" HTTP/1.1\r\n" + tail,
            b"GET /api/v1/documents\x00Authorization: Bearer " + k + b" HTTP/1.1\r\n" + tail,
            b"GET /api/v1/documents Authorization: Bearer " + k + b" HTTP/1.1\r\n" + tail,
            b"GET /api/v1/documents HTTP/1.1\rAuthorization: Bearer " + k + b"\r\n" + tail,
            b"GET\t/api/v1/documents\tHTTP/1.1\r\nAuthorization: Bearer " + k + b"\r\n" + tail,
            # bare CR, NUL inside a header field
            b"GET /healthz HTTP/1.1\r\nX-A: 1\rAuthorization: Bearer " + k + b"\r\n" + tail,
            b"GET /healthz HTTP/1.1\r\nX-A: 1\x00Authorization: Bearer " + k + b"\r\n" + tail,
            b"GET /healthz HTTP/1.1\r\nX-A\r: 1\r\nAuthorization: Bearer " + k + b"\r\n" + tail,
            # malformed request lines
            b"GARBAGE\r\n\r\n",
            b"GET\r\n\r\n",
            b"GET /healthz\r\n\r\n",
            b"GET /healthz HTTP/1.1 extra\r\n" + tail,
            b"GET  /healthz HTTP/1.1\r\n" + tail,
            b"G(T /healthz HTTP/1.1\r\n" + tail,
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + k + b"\r\n\r\n",  # TLS to a plain port
        ]
        for i, req in enumerate(refused):
            self.assertJsonError(exchange(self.srv.port, req), 400, "Bad request.", (i, req[:40]))
        # the same tricks as the second request of a kept-alive connection (the gate sees
        # only the first): the server checks what libmicrohttpd parsed — a CR, NUL or SP
        # in the target, a CR in a field — and answers its JSON 400; the others are
        # libmicrohttpd's alone (docs/status.md), but none puts the key in a log either
        for i, second in enumerate(refused[:10]):
            out = exchange(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + second)
            self.assertTrue(out.startswith(b"HTTP/1.1 200"), out[:100])
            if i in (0, 3, 4, 7, 9):
                self.assertJsonError(out[out.index(b"HTTP/1.1", 10):], 400, "Bad request.", ("second", i))
        # accepted, but the key is still nowhere: obs-fold, LF-only lines, encoded CR LF
        for req in [b"GET /healthz HTTP/1.1\r\nX-A: 1\r\n Authorization: Bearer " + k + b"\r\n" + tail,
                    b"GET /healthz HTTP/1.1\nHost: x\nX-A: Bearer " + k + b"\nConnection: close\n\n",
                    b"GET /api/v1/documents%0d%0aAuthorization:%20Bearer%20" + k + b" HTTP/1.1\r\n" + tail,
                    b"GET /api/v1/" + k + b" HTTP/1.1\r\n" + tail,
                    b"GET /api/v1/" + k[4:] + b" HTTP/1.1\r\n" + tail]:
            out = exchange(self.srv.port, req)
            self.assertTrue(out.startswith(b"HTTP/1.1 "), out[:100])
        self.assertNoKeyInLog(key)
        self.assertIn("[redacted]", self.srv.read_log())

    def test_heads_and_queries_over_the_limits_get_a_json_431(self):
        # every size, with no window of silence: the old pool closed 16,001-16,128 silently
        for size in list(range(15900, 16500, 23)) + [17000, 40000, 100000, 300000, 1000000]:
            req = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + b"a" * (size - 55) + b"\r\n\r\n"
            out = exchange(self.srv.port, req)
            if len(req) <= 16384:
                self.assertTrue(out.startswith(b"HTTP/1.1 200"), (len(req), out[:100]))
            else:
                self.assertJsonError(out, 431, "Request header fields too large.", len(req))
        # many small header lines
        for n in (2000, 8000):
            req = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + b"".join(
                b"x%d: 1\r\n" % i for i in range(n)) + b"\r\n"
            self.assertJsonError(exchange(self.srv.port, req), 431, "Request header fields too large.", n)
        # a 15,800-character search (the case) is answered
        r = self.req("GET", "/api/v1/documents?search=" + "s" * 15800)
        self.assertEqual(r.status, 200, r)
        # query parameters: 226 and more were closed silently; up to 1,000 are fine
        for n in (226, 240, 1000):
            r = self.req("GET", "/api/v1/documents?" + "&".join(f"a{i}=1" for i in range(n)))
            self.assertEqual(r.status, 200, (n, r))
        for n in (1001, 5000):
            out = exchange(self.srv.port, ("GET /api/v1/documents?" + "&".join("a" for _ in range(n)) +
                                           " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").encode())
            self.assertJsonError(out, 431, "Request header fields too large.", n)
        # on a kept-alive connection (past the first request): over the limit is a 431 too
        out = exchange(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n"
                                      b"X-Big: " + b"a" * 18000 + b"\r\nConnection: close\r\n\r\n")
        second = out[out.index(b"HTTP/1.1", 10):]
        self.assertJsonError(second, 431, "Request header fields too large.")

    def test_a_later_head_at_the_limit_is_served(self):
        # the connection's memory pool (server.c) holds a later head of exactly 16 KiB
        # with the index of its lines and the answer, in 1 to 48 lines; one byte more is
        # inkwell's 431
        first = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        start = b"GET /api/v1/documents?per_page=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + \
            b"Authorization: Bearer " + self.alice.encode() + b"\r\n"
        for lines in (1, 12, 48):
            for size in (16384, 16385):
                room = size - len(start) - 2
                fields = b"".join(b"x%02d: " % i + b"a" * (room // lines - 7) + b"\r\n" for i in range(lines))
                fields = fields[:-2] + b"a" * (room - len(fields)) + b"\r\n"
                req = start + fields + b"\r\n"
                self.assertEqual(len(req), size)
                out = exchange(self.srv.port, first + req)
                second = out[out.index(b"HTTP/1.1", 10):]
                if size == 16384:
                    self.assertTrue(second.startswith(b"HTTP/1.1 200"), (lines, second[:200]))
                    self.assertIn(b'"data"', second)
                else:
                    self.assertJsonError(second, 431, "Request header fields too large.")


class Caps(ServerTest):
    server_args = ["--max-connections", "64", "--max-connections-per-address", "8",
                   "--connection-timeout", "60", "--request-timeout", "60"]

    def test_over_the_per_address_cap_a_503_with_retry_after(self):
        held = []
        try:
            for _ in range(8):
                s = socket.create_connection(("127.0.0.1", self.srv.port))
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # kept alive
                s.settimeout(10)
                self.assertTrue(s.recv(65536).startswith(b"HTTP/1.1 200"))
                held.append(s)
            for _ in range(5):
                out = exchange(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                st, headers, body = parse(out)
                self.assertEqual(st, 503, out[:200])
                self.assertEqual(headers.get("retry-after"), "1")
                self.assertEqual(headers.get("connection"), "close")
                self.assertEqual(json.loads(body)["status"], 503)
                self.assertIsInstance(json.loads(body)["message"], str)
            # another address is served
            out = exchange(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                           src="127.0.0.2")
            self.assertTrue(out.startswith(b"HTTP/1.1 200"), out[:100])
        finally:
            for s in held:
                s.close()
        # the slots come back once the connections close
        deadline = time.time() + 10
        while True:
            out = exchange(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if out.startswith(b"HTTP/1.1 200") or time.time() > deadline:
                break
            time.sleep(0.1)
        self.assertTrue(out.startswith(b"HTTP/1.1 200"), out[:100])
        self.assertIn("per-address connection limit reached", self.srv.read_log())


class Exports(ServerTest):
    """Exports run on the export pool: per-user and total limits answer at once (429,
    503, Retry-After) while others are served; every export names its version (ETag,
    304). INKWELL_TEST_EXPORT_HOLD holds each job on the pool until a file exists, so
    that places stay taken for as long as the test needs, whatever the machine's speed."""

    @classmethod
    def setUpClass(cls):
        cls.hold = os.path.join(tempfile.mkdtemp(prefix="inkwell-hold-"), "go")
        cls.srv = Server("--export-per-user", "2", "--export-max", "3", "--export-threads", "3",
                         "--threads", "2", env={"INKWELL_TEST_EXPORT_HOLD": cls.hold}).start()
        cls.alice = cls.srv.key("alice")
        cls.bob = cls.srv.key("bob")

    def held(self):
        try:
            with open(self.hold + ".log") as f:
                return f.read().count("held")
        except FileNotFoundError:
            return 0

    def test_limits_answer_at_once_and_others_are_served(self):
        if os.path.exists(self.hold):
            os.remove(self.hold)  # jobs hold from now on
        base = self.held()
        carol = self.srv.key("carol")
        docs = [self.make_doc(name=f"d{i}") for i in range(3)]
        bobs = self.make_doc(key="bob", name="b")
        carols = self.make_doc(key=carol, name="c")
        results = {}

        def export(name, key, doc_id):
            results[name] = self.req("GET", f"/api/v1/documents/{doc_id}/export?format=pdf", key=key, timeout=120)

        threads = [threading.Thread(target=export, args=a) for a in
                   (("a0", "alice", docs[0]["id"]), ("a1", "alice", docs[1]["id"]), ("b", "bob", bobs["id"]))]
        for t in threads:
            t.start()
        try:
            deadline = time.time() + 60
            while self.held() - base < 3 and time.time() < deadline:
                time.sleep(0.02)
            self.assertEqual(self.held() - base, 3)
            # alice has her two: a third is hers to wait for
            r = self.req("GET", f"/api/v1/documents/{docs[2]['id']}/export?format=pdf")
            self.assertEqual((r.status, r.json), (429, {"message": "Too Many Attempts.", "status": 429}))
            self.assertEqual(r.header("Retry-After"), "1")
            # the pool is full: carol is told to come back
            r = self.req("GET", f"/api/v1/documents/{carols['id']}/export?format=docx", key=carol)
            self.assertError(r, 503)
            self.assertEqual(r.header("Retry-After"), "1")
            # cheap formats are made in the request, and everyone else is served meanwhile
            r = self.req("GET", f"/api/v1/documents/{carols['id']}/export?format=md", key=carol)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(self.srv.request("GET", "/healthz").status, 200)
            self.assertEqual(self.req("GET", "/api/v1/documents", key=carol).json["meta"]["total"], 1)
        finally:
            open(self.hold, "w").close()
            for t in threads:
                t.join(120)
        for name in ("a0", "a1", "b"):
            self.assertEqual(results[name].status, 200, results[name])
            self.assertTrue(results[name].body.startswith(b"%PDF-"), name)
        # the places are given back
        r = self.req("GET", f"/api/v1/documents/{docs[2]['id']}/export?format=pdf")
        self.assertEqual(r.status, 200, r)

    def test_etag_304_and_a_new_version(self):
        open(self.hold, "w").close()
        d = self.make_doc(name="versioned")
        for fmt in ("md", "txt", "html", "docx", "pdf"):
            path = f"/api/v1/documents/{d['id']}/export?format={fmt}"
            r1 = self.req("GET", path)
            self.assertEqual(r1.status, 200, (fmt, r1))
            etag = r1.header("ETag")
            self.assertRegex(etag, r'^"[^"]+"$')
            r2 = self.req("GET", path)  # the same version: the same bytes (the cache's, for the pool's)
            self.assertEqual((r2.status, r2.header("ETag"), r2.body), (200, etag, r1.body))
            r3 = self.req("GET", path, headers={"If-None-Match": etag})
            self.assertEqual((r3.status, r3.body, r3.header("ETag")), (304, b"", etag))
            r3 = self.req("GET", path, headers={"If-None-Match": f'"other", W/{etag}'})
            self.assertEqual(r3.status, 304)
            r3 = self.req("GET", path, headers={"If-None-Match": '"other"'})
            self.assertEqual(r3.status, 200)
        # another version of the document: another ETag, the old one no longer matches
        old = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=pdf")
        self.assertEqual(self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"name": "renamed"}).status, 200)
        r = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=pdf",
                     headers={"If-None-Match": old.header("ETag")})
        self.assertEqual(r.status, 200)
        self.assertNotEqual(r.header("ETag"), old.header("ETag"))
        self.assertIn("renamed", r.header("Content-Disposition"))
        # another user's document is still a 404, whatever the ETag
        r = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=pdf", key="bob",
                     headers={"If-None-Match": old.header("ETag")})
        self.assertError(r, 404)
