"""Black-box tests of §26 compression: the coding each Accept-Encoding picks (q-values,
ties zstd > br > gzip, identity and "*"), bodies decoded by outside decoders (Python's
gzip module, the zstd and brotli commands), Vary on every answer of a compressible type
(small ones too), ETags per coding with If-None-Match matching only its own (304s), and
no compression for small answers, PDF and DOCX exports, streams, pictures and answers
that carry a key. Both backends (INKWELL_TEST_BACKEND)."""
import gzip
import http.client
import subprocess
import urllib.parse

from harness import ServerTest, record_exchange, slow, wait_for

API = "/api/v1"
LONG = ("A garden of words, written slowly, read quickly. " * 60).strip()


def decode(coding, body):
    """The body decoded by a decoder that is not inkwell's."""
    if coding is None:
        return body
    if coding == "gzip":
        return gzip.decompress(body)
    cmd = {"zstd": ["zstd", "-d", "-q", "-c"], "br": ["brotli", "-d", "-c"]}[coding]
    out = subprocess.run(cmd, input=body, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


class Raw:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        vals = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(vals) if vals else None


class Compression(ServerTest):
    def get(self, path, ae=None, key="alice", method="GET", headers=None, form=None):
        """One request with Accept-Encoding as given (None: the header is not sent);
        the answer as it came on the wire, and its decoded body is recorded for the
        OpenAPI check."""
        k = {"alice": self.alice, "bob": self.bob, None: None}.get(key, key)
        h = dict(headers or {})
        if k:
            h["Authorization"] = f"Bearer {k}"
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            h["Content-Type"] = "application/x-www-form-urlencoded"
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=slow(30))
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            if ae is not None:
                conn.putheader("Accept-Encoding", ae)
            for n, v in h.items():
                conn.putheader(n, v)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            r = conn.getresponse()
            resp = Raw(r.status, r.getheaders(), r.read())
        finally:
            conn.close()
        coding = resp.header("Content-Encoding")
        plain = decode(coding, resp.body) if resp.body else resp.body
        record_exchange(method, path, resp.status,
                        [(n, v) for n, v in resp.headers if n.lower() != "content-encoding"],
                        plain)
        resp.plain = plain
        return resp

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for i in range(12):
            r = cls.srv.request("POST", API + "/documents", key=cls.alice,
                                form={"name": f"Doc {i}", "prompt": "a post about gardens"})
            assert r.status == 201, r
        cls.doc = r.json["data"]["id"]
        r = cls.srv.request("PUT", f"{API}/documents/{cls.doc}", key=cls.alice,
                            form={"result": LONG})
        assert r.status == 200, r

    def test_codings_decode_to_the_same_json(self):
        path = API + "/documents?per_page=12"
        plain = self.get(path)
        self.assertEqual(plain.status, 200)
        self.assertIsNone(plain.header("Content-Encoding"))
        self.assertGreater(len(plain.body), 1024)
        for coding in ("gzip", "br", "zstd"):
            r = self.get(path, coding)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.header("Content-Encoding"), coding)
            self.assertEqual(r.header("Vary"), "Accept-Encoding")
            self.assertEqual(int(r.header("Content-Length")), len(r.body))
            self.assertLess(len(r.body), len(plain.body) / 2)
            self.assertEqual(r.plain, plain.body, coding)
        # HEAD: the same headers, no body
        h = self.get(path, "gzip", method="HEAD")
        self.assertEqual(h.header("Content-Encoding"), "gzip")
        self.assertEqual(h.body, b"")

    def test_q_values_ties_and_identity(self):
        path = API + "/documents?per_page=12"
        cases = [
            (None, None), ("", None), ("identity", None), ("deflate, compress", None),
            ("gzip", "gzip"), ("br", "br"), ("zstd", "zstd"), ("x-gzip", "gzip"),
            ("gzip, br", "br"), ("gzip, br, zstd", "zstd"), ("gzip, deflate, br", "br"),
            ("*", "zstd"), ("*, zstd;q=0", "br"), ("*;q=0", None),
            ("zstd;q=0.2, br;q=0.5, gzip;q=0.9", "gzip"),
            ("zstd;q=0.9, br;q=0.9, gzip;q=0.8", "zstd"),
            ("gzip;q=0.5, br;q=0.5", "br"),
            ("gzip;q=0", None), ("gzip;q=0, br;q=0, zstd;q=0", None),
            ("gzip;q=0.5, identity", None),          # identity named with a higher q
            ("gzip, identity;q=0", "gzip"),
            ("identity;q=0", None),                  # nothing acceptable: uncompressed
            ("identity;q=0, *;q=0", None),
            ("gzip;q=2", None), ("gzip;q=oops", None),  # not a qvalue: the entry is void
            ("GZIP ; Q=0.5", "gzip"),
        ]
        for ae, want in cases:
            r = self.get(path, ae)
            self.assertEqual(r.status, 200, ae)
            self.assertEqual(r.header("Content-Encoding"), want, ae)
            self.assertEqual(r.header("Vary"), "Accept-Encoding", ae)

    def test_shows_compressed_once_and_never_stale(self):
        """A show is compressed once per version (kept beside the record cache's
        rendering): asked again it is the same bytes; after a change it is the new text."""
        d = self.make_doc(prompt="a long note about gardens")
        path = f"{API}/documents/{d['id']}"
        self.req("PUT", path, form={"result": LONG + " first"})
        for round_ in range(2):
            text = LONG + (" first" if round_ == 0 else " second")
            plain = self.get(path)
            self.assertIsNone(plain.header("Content-Encoding"))
            self.assertEqual(__import__("json").loads(plain.body)["data"]["result"], text)
            for coding in ("gzip", "br", "zstd", "zstd", "br", "gzip"):
                r = self.get(path, coding)
                self.assertEqual(r.status, 200)
                self.assertEqual(r.header("Content-Encoding"), coding)
                self.assertEqual(r.header("Vary"), "Accept-Encoding")
                self.assertEqual(r.plain, plain.body, coding)
            again = [self.get(path, "zstd").body for _ in range(2)]
            self.assertEqual(again[0], again[1])
            self.req("PUT", path, form={"result": LONG + " second"})

    def test_small_answers_vary_but_stay_plain(self):
        r = self.get(API + "/documents/999999", "gzip, br, zstd")
        self.assertEqual(r.status, 404)
        self.assertIsNone(r.header("Content-Encoding"))
        self.assertEqual(r.header("Vary"), "Accept-Encoding")
        r = self.get("/healthz", "gzip")
        self.assertIsNone(r.header("Content-Encoding"))
        self.assertEqual(r.header("Vary"), "Accept-Encoding")
        r = self.get(API + "/documents?per_page=1&search=nothing-has-this", "zstd")
        self.assertLess(len(r.body), 1024)
        self.assertIsNone(r.header("Content-Encoding"))
        self.assertEqual(r.header("Vary"), "Accept-Encoding")

    def check_etags(self, path, key="alice"):
        plain = self.get(path, None, key=key)
        self.assertEqual(plain.status, 200)
        tag = plain.header("ETag")
        self.assertRegex(tag, r'^(W/)?".*"$')
        self.assertEqual(plain.header("Vary"), "Accept-Encoding")
        tags = {None: tag}
        for coding in ("gzip", "br", "zstd"):
            r = self.get(path, coding, key=key)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.header("Content-Encoding"), coding)
            self.assertEqual(r.plain, plain.body)
            self.assertEqual(r.header("ETag"), tag[:-1] + "-" + coding + '"')
            tags[coding] = r.header("ETag")
        for coding, own in tags.items():
            r = self.get(path, coding, key=key, headers={"If-None-Match": own})
            self.assertEqual(r.status, 304, (coding, own))
            self.assertEqual(r.body, b"")
            self.assertEqual(r.header("ETag"), own)
            self.assertEqual(r.header("Vary"), "Accept-Encoding")
            self.assertIsNone(r.header("Content-Encoding"))
            for other, theirs in tags.items():
                if other == coding:
                    continue
                r = self.get(path, coding, key=key, headers={"If-None-Match": theirs})
                self.assertEqual(r.status, 200, (coding, theirs))
                self.assertEqual(r.header("ETag"), own)
        # a list of tags holding its own, and a weak form of it
        r = self.get(path, "gzip", key=key, headers={"If-None-Match": f'"x", {tags["gzip"]}'})
        self.assertEqual(r.status, 304)
        r = self.get(path, "br", key=key, headers={"If-None-Match": "W/" + tags["br"]})
        self.assertEqual(r.status, 304)

    def test_web_app_files_etag_per_coding(self):
        # the br and zstd copies are made once, by a thread the first request starts:
        # until then the file goes as it is (or gzipped); wait for them
        wait_for(lambda: self.get("/app.js", "br", key=None).header("Content-Encoding") == "br"
                 and self.get("/", "zstd", key=None).header("Content-Encoding") == "zstd",
                 "the web app's br and zstd copies", timeout=30)
        self.check_etags("/app.js", key=None)
        self.check_etags("/", key=None)

    def test_exports_etag_per_coding(self):
        for fmt in ("md", "txt", "html"):
            self.check_etags(f"{API}/documents/{self.doc}/export?format={fmt}")

    def test_pdf_and_docx_exports_never_compressed(self):
        for fmt in ("pdf", "docx"):
            r = self.get(f"{API}/documents/{self.doc}/export?format={fmt}", "gzip, br, zstd")
            self.assertEqual(r.status, 200, r.body[:200])
            self.assertIsNone(r.header("Content-Encoding"), fmt)
            self.assertIsNone(r.header("Vary"), fmt)
            tag = r.header("ETag")
            self.assertNotRegex(tag, r"-(gzip|br|zstd)\"$")
            r = self.get(f"{API}/documents/{self.doc}/export?format={fmt}", "gzip",
                         headers={"If-None-Match": tag})
            self.assertEqual(r.status, 304, fmt)

    def test_streams_never_compressed(self):
        r = self.get(f"{API}/documents/{self.doc}", "gzip, br, zstd",
                     headers={"Accept": "text/event-stream"})
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Type").startswith("text/event-stream"))
        self.assertIsNone(r.header("Content-Encoding"))
        self.assertIn(b"event: done", r.body)

    def test_pictures_never_compressed(self):
        img = self.make_image()
        path = urllib.parse.urlsplit(img["url"]).path
        r = self.get(path, "gzip, br, zstd", key=None)
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "image/png")
        self.assertIsNone(r.header("Content-Encoding"))
        self.assertTrue(r.body.startswith(b"\x89PNG"))

    def test_answers_with_a_key_never_compressed(self):
        admin = self.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        self.srv.keys.append(admin)
        r = self.get(API + "/admin/users", None, key=admin, method="POST",
                     form={"name": "carol-" + "x" * 60})
        self.assertEqual(r.status, 201, r.body)
        uid = __import__("json").loads(r.body)["data"]["id"]
        r = self.get(f"{API}/admin/users/{uid}/keys", "gzip, br, zstd", key=admin,
                     method="POST", form={"name": "k" * 90})
        self.assertEqual(r.status, 201, r.body)
        self.assertIsNone(r.header("Content-Encoding"))
        self.assertIn(b'"key"', r.body)


if __name__ == "__main__":
    import unittest
    unittest.main()
