"""HTTP and input edge cases found by a hostile client (issue 14): page overflow,
NUL in JSON fields, absolute-form request lines (RFC 9112 §3.2.2), a client that
half-closes after its request, one address holding many connections, and temporary
media files of interrupted writes and pictures without a record."""
import json
import os
import socket
import time
import threading

from harness import BACKEND, Server, ServerTest, slow, wait_for, wait_for_log


def raw(port, data, half_close=False, timeout=10, src="127.0.0.1"):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(src, 0))
    try:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


class Edges(ServerTest):
    server_args = ["--builtin-delay-ms", "300"]

    def test_page_overflow_is_an_empty_page_as_asked(self):
        self.make_doc()
        r = self.req("GET", "/api/v1/documents?per_page=100&page=1000000000000000000")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"], [])
        self.assertEqual(r.json["meta"]["current_page"], 1000000000000000000)
        self.assertIsNone(r.json["meta"]["from"])
        self.assertIsNone(r.json["links"]["next"])
        self.assertIn("page=999999999999999999", r.json["links"]["prev"])
        # the largest 64-bit page too; one more falls back to page 1 (not an integer we keep)
        r = self.req("GET", "/api/v1/documents?page=9223372036854775807")
        self.assertEqual((r.status, r.json["meta"]["current_page"], r.json["data"]), (200, 9223372036854775807, []))
        r = self.req("GET", "/api/v1/documents?page=9223372036854775808")
        self.assertEqual((r.status, r.json["meta"]["current_page"]), (200, 1))

    def test_refusals_inside_libmicrohttpd_leave_a_log_line(self):
        # A kept-alive connection's second head, larger than the connection's memory pool,
        # is refused by the library itself (docs/status.md: the first head of a connection
        # is inkwell's, test_hostile.py); the log says so. A bad chunk size gets its 400
        # and a log line too.
        out = raw(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n"
                                 b"X-Big: " + b"a" * 400000 + b"\r\nConnection: close\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.1 200"), out[:100])
        self.assertIn(b"HTTP/1.1 431", out)
        out = raw(self.srv.port, b"POST /api/v1/documents HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                 b"Connection: close\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.1 400"), out[:100])
        wait_for_log(self.srv, "http: Error processing request (HTTP response code is 431")
        wait_for_log(self.srv, "chunked encoding was syntactically incorrect")

    def test_other_http_versions_get_a_json_505(self):
        # (issue 33: libmicrohttpd answered these with its own HTML page)
        for version in (b"HTTP/0.1", b"HTTP/9.1", b"HTTP/2.0", b"HTTP/0.9"):
            with self.subTest(version=version):
                out = raw(self.srv.port, b"GET /healthz " + version + b"\r\nHost: x\r\n\r\n")
                head, _, body = out.partition(b"\r\n\r\n")
                self.assertTrue(head.startswith(b"HTTP/1.1 505 "), out[:200])
                self.assertIn(b"Content-Type: application/json", head)
                self.assertEqual(json.loads(body), {"message": "HTTP version not supported.",
                                                    "status": 505})
        out = raw(self.srv.port, b"GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.0 200") or out.startswith(b"HTTP/1.1 200"), out[:100])

    def test_a_later_request_of_another_http_version_gets_a_json_505(self):
        # a kept-alive connection's second request (issue 33: libmicrohttpd parses it and
        # answered with its own HTML page; src/http/heads.h)
        for version in (b"HTTP/0.1", b"HTTP/9.1", b"HTTP/2.0", b"HTTP/0.9"):
            with self.subTest(version=version):
                s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
                try:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    first = b""
                    while b"\r\n\r\n" not in first or not first.endswith(b"}"):
                        d = s.recv(65536)
                        self.assertTrue(d, first)
                        first += d
                    self.assertTrue(first.startswith(b"HTTP/1.1 200 "), first[:100])
                    s.sendall(b"GET /healthz " + version + b"\r\nHost: x\r\n\r\n")
                    out = b""
                    while True:  # answered, then closed
                        d = s.recv(65536)
                        if not d:
                            break
                        out += d
                finally:
                    s.close()
                head, _, body = out.partition(b"\r\n\r\n")
                self.assertTrue(head.startswith(b"HTTP/1.1 505 "), out[:200])
                self.assertIn(b"Content-Type: application/json", head)
                self.assertEqual(json.loads(body), {"message": "HTTP version not supported.",
                                                    "status": 505})
        # a later request of HTTP/1.0 or 1.1 is answered on the same connection
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
        try:
            for version in (b"HTTP/1.1", b"HTTP/1.0", b"HTTP/1.1"):
                s.sendall(b"GET /healthz " + version + b"\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
                got = b""
                while not got.endswith(b'"status":200}'):
                    d = s.recv(65536)
                    self.assertTrue(d, (version, got))
                    got += d
                self.assertTrue(got.startswith(b"HTTP/1."), got[:100])
        finally:
            s.close()

    def test_nul_in_a_json_string_names_the_field(self):
        body = '{"name":"a\\u0000b","prompt":"fine"}'
        r = self.req("POST", "/api/v1/documents", body=body, headers={"Content-Type": "application/json"})
        self.assertError(r, 422)
        self.assertEqual(list(r.json["message"].keys()), ["name"], r)
        body = '{"name":"ok","prompt":"x\\u0000"}'
        r = self.req("POST", "/api/v1/documents", body=body, headers={"Content-Type": "application/json"})
        self.assertEqual(list(r.json["message"].keys()), ["prompt"], r)
        # numbers given as strings with a NUL are not silently cut at it
        body = '{"name":"ok","prompt":"p","creativity":"0.5\\u0000junk"}'
        r = self.req("POST", "/api/v1/documents", body=body, headers={"Content-Type": "application/json"})
        self.assertEqual(list(r.json["message"].keys()), ["creativity"], r)
        # an update too
        d = self.make_doc()
        r = self.req("PATCH", f"/api/v1/documents/{d['id']}", body='{"result":"x\\u0000"}',
                     headers={"Content-Type": "application/json"})
        self.assertEqual((r.status, list(r.json["message"].keys())), (422, ["result"]), r)

    def test_absolute_form_request_line(self):
        d = self.make_doc(name="absolute")
        req = (f"GET http://127.0.0.1:{self.srv.port}/api/v1/documents/{d['id']}?x=1 HTTP/1.1\r\n"
               f"Host: 127.0.0.1:{self.srv.port}\r\nAuthorization: Bearer {self.alice}\r\n"
               "Connection: close\r\n\r\n").encode()
        out = raw(self.srv.port, req)
        self.assertTrue(out.startswith(b"HTTP/1.1 200"), out[:200])
        body = json.loads(out.split(b"\r\n\r\n", 1)[1])
        self.assertEqual(body["data"]["name"], "absolute")
        # the authority is not checked (RFC 9112 lets an origin server ignore it)
        req = (f"GET HTTP://example.com/healthz HTTP/1.1\r\nHost: example.com\r\n"
               "Connection: close\r\n\r\n").encode()
        self.assertTrue(raw(self.srv.port, req).startswith(b"HTTP/1.1 200"))
        # an empty path is "/": answered exactly as "/" is
        req = (f"GET http://example.com HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n").encode()
        root = self.srv.request("GET", "/")
        out = raw(self.srv.port, req)
        self.assertTrue(out.startswith(f"HTTP/1.1 {root.status}".encode()), (root.status, out[:100]))
        self.assertTrue(out.endswith(root.body), out[-100:])

    def test_half_closed_client_loses_nothing(self):
        # libmicrohttpd 0.9.75 closes a connection when it reads the end of the client's
        # stream, even with the request whole (docs/design.md, "HTTP edge cases"): the
        # answer cannot be sent. What must hold: the create is stored exactly once, and a
        # retry with the same Idempotency-Key gets the kept answer (test_idempotency.py).
        before = self.req("GET", "/api/v1/documents").json["meta"]["total"]
        form = "name=half-closed&prompt=closed"
        req = (f"POST /api/v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {self.alice}\r\n"
               "Content-Type: application/x-www-form-urlencoded\r\n"
               f"Content-Length: {len(form)}\r\n\r\n{form}").encode()
        out = raw(self.srv.port, req, half_close=True)
        self.assertTrue(out == b"" or out.startswith(b"HTTP/1.1 201"), out[:200])
        def listed():
            return self.req("GET", "/api/v1/documents?search=half-closed").json["data"]
        wait_for(lambda: any(d["state"] == "completed" for d in listed()), "the document completed")
        self.assertEqual(self.req("GET", "/api/v1/documents").json["meta"]["total"], before + 1)
        self.assertEqual(len(listed()), 1)


class ConnectionShare(ServerTest):
    # the hog's connections must outlive the test however slow the run
    server_args = ["--max-connections", "1024", "--connection-timeout", str(int(slow(60))),
                   "--request-timeout", str(int(slow(60)))]

    def test_one_address_cannot_take_every_connection(self):
        hog = []
        try:
            for _ in range(1200):
                try:
                    s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHo")  # slow: never finished
                    hog.append(s)
                except OSError:
                    break
            # another address is served while the hog holds its connections: without a
            # share per address the hog would hold all 1024 and this one would get no
            # answer before its timeout (far below the hog's connection timeout)
            out = raw(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                      src="127.0.0.2", timeout=slow(5))
            self.assertTrue(out.startswith(b"HTTP/1.1 200"), out[:100])

            # the hog's connections past its share are answered 503 and closed by the server
            def closed():
                n = 0
                for s in hog:
                    s.settimeout(0)
                    try:
                        got = s.recv(12)
                        if got == b"" or got.startswith(b"HTTP/1.1 503"):
                            n += 1
                    except (socket.timeout, BlockingIOError):
                        pass
                    except OSError:
                        n += 1
                return n >= 1200 - 512
            wait_for(closed, "the hog's connections past its share closed", interval=0.2)
        finally:
            for s in hog:
                s.close()
        self.assertIn("limit", self.srv.read_log().lower())


class TempMediaFiles(ServerTest):
    def test_temporary_files_removed_at_start(self):
        srv = Server().start()
        key = srv.key("tmp")
        media = os.path.join(srv.data_dir, "media")
        r = srv.request("POST", "/api/v1/images", key=key,
                        form={"name": "p", "description": "sea", "resolution": "1024x1024"})
        self.assertEqual(r.status, 201, r)
        srv.kill()
        junk = "." + "ab" * 16 + ".tmp-0123456789abcdef"
        other = "keep-me.tmp-1"
        orphan = "ef" * 16 + ".png"  # a picture whose record never committed
        for name in (junk, other, orphan):
            with open(os.path.join(media, name), "wb") as f:
                f.write(b"half a picture")
        if BACKEND == "postgres":
            # shared directory: only files older than an hour are sure to be abandoned
            young = "." + "cd" * 16 + ".tmp-fedcba9876543210"
            with open(os.path.join(media, young), "wb") as f:
                f.write(b"another server's write in progress")
            old = time.time() - 7200
            os.utime(os.path.join(media, junk), (old, old))
            os.utime(os.path.join(media, orphan), (old, old))
            young_png = "12" * 16 + ".png"
            with open(os.path.join(media, young_png), "wb") as f:
                f.write(b"another server's picture, its record about to commit")
        srv2 = Server(data_dir=srv.data_dir, database=srv.database).start()
        try:
            names = os.listdir(media)
            self.assertNotIn(junk, names)
            self.assertNotIn(orphan, names)
            self.assertIn(other, names)  # not a name media_put writes: not ours to remove
            if BACKEND == "postgres":
                self.assertIn(young, names)
                self.assertIn(young_png, names)
                os.unlink(os.path.join(media, young_png))
            pngs = [n for n in os.listdir(media) if n.endswith(".png")]
            self.assertEqual(len(pngs), 1)
            img = srv2.request("GET", f"/api/v1/images/{r.json['data']['id']}", key=key).json["data"]
            self.assertEqual(srv2.request("GET", img["url"][len(srv2.url("")):]).status, 200)
        finally:
            self.assertEqual(srv2.stop(), 0)
