"""Black-box tests of two answers independent tools found wrong: a 304 carries no
Content-Length (RFC 9110 §8.6 allows only the 200's length; libmicrohttpd would send 0),
and a 413 under /api/v1 that passed authentication carries the rate-limit headers
(API.md §7), like every other such answer."""
from harness import ServerTest, record_exchange

TOO_LARGE = {"message": "Payload too large.", "status": 413}


class NotModified(ServerTest):
    def test_304_has_no_content_length(self):
        img = self.make_image()
        media = "/media/" + img["url"].rsplit("/media/", 1)[1]
        for path, key in (("/", None), ("/app.js", None), (media, None)):
            r = self.srv.request("GET", path)
            self.assertEqual(r.status, 200, path)
            self.assertEqual(int(r.header("Content-Length")), len(r.body))
            again = self.srv.request("GET", path, headers={"If-None-Match": r.header("ETag")})
            self.assertEqual((again.status, again.body), (304, b""), path)
            self.assertIsNone(again.header("Content-Length"), path)
            self.assertIsNone(again.header("Transfer-Encoding"), path)
            self.assertEqual(again.header("ETag"), r.header("ETag"))


class TooLarge(ServerTest):
    server_args = ["--max-body", "2048"]

    def test_413_after_authentication_has_rate_limit_headers(self):
        big = "name=n&prompt=" + "a" * 4096
        for method, path in (("POST", "/api/v1/documents"), ("PATCH", "/api/v1/documents/1"),
                             ("POST", "/api/v1/nowhere")):
            r = self.req(method, path, form=big)
            self.assertEqual((r.status, r.json), (413, TOO_LARGE), path)
            self.assertEqual(r.header("X-RateLimit-Limit"), "1000000")
            self.assertIsNotNone(r.header("X-RateLimit-Remaining"))
        # without a valid key the 401 comes first (and its own headers)
        r = self.req("POST", "/api/v1/documents", key=None, form=big)
        self.assertEqual(r.status, 401)
        # outside /api/v1 there is no rate limit, and the 413 stays
        r = self.srv.request("POST", "/healthz", body=big)
        self.assertEqual((r.status, r.json), (413, TOO_LARGE))
        self.assertIsNone(r.header("X-RateLimit-Limit"))

    def test_413_chunked_body(self):
        # no Content-Length: the body is read up to the limit, then refused the same way
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=30)
        try:
            conn.putrequest("POST", "/api/v1/documents")
            conn.putheader("Authorization", f"Bearer {self.alice}")
            conn.putheader("Content-Type", "application/x-www-form-urlencoded")
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            chunk = b"a" * 1024
            for _ in range(4):
                conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            conn.send(b"0\r\n\r\n")
            r = conn.getresponse()
            body = r.read()
            record_exchange("POST", "/api/v1/documents", r.status, r.getheaders(), body)
            self.assertEqual(r.status, 413)
            self.assertIsNotNone(r.getheader("X-RateLimit-Remaining"))
        finally:
            conn.close()
