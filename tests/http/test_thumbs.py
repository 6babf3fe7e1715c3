"""Black-box tests of picture thumbnails (GET /media/<key>.png?w=N, docs/webapp.md
"Thumbnails"): a square PNG of min(N, shorter side) pixels, no key needed, its own ETag
and 304, the same bytes from the cache, a clear 422 for any bad w, 404 for a missing or
deleted picture."""
import http.client
import json
import urllib.parse

from harness import ServerTest
from pngcheck import check_png


def fetch(url, query="", headers=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    c.request("GET", u.path + ("?" + query if query else ""), headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body


class Thumbs(ServerTest):
    def test_square_thumbnails_of_every_resolution(self):
        for res in ["1024x1024", "1792x1024", "1024x1792"]:
            img = self.make_image(resolution=res)
            _, full = fetch(img["url"])
            for w in [16, 256, 512, 1024]:
                r, body = fetch(img["url"], f"w={w}")
                self.assertEqual(r.status, 200, (res, w))
                self.assertEqual(r.getheader("Content-Type"), "image/png")
                self.assertEqual(check_png(body), (w, w))
                self.assertIn("immutable", r.getheader("Cache-Control"))
            r, body = fetch(img["url"], "w=256")
            self.assertLess(len(body) * 5, len(full))
            etag = r.getheader("ETag")
            self.assertNotEqual(etag, fetch(img["url"])[0].getheader("ETag"))
            self.assertEqual(fetch(img["url"], "w=256", {"If-None-Match": etag})[0].status, 304)
            # from the cache: the same bytes; the last w given wins; other parameters ignored
            self.assertEqual(fetch(img["url"], "w=256")[1], body)
            self.assertEqual(fetch(img["url"], "w=20&w=256&x=1")[1], body)

    def test_bad_w_is_a_422(self):
        img = self.make_image()
        for q in ["w=", "w", "w=abc", "w=0", "w=15", "w=1025", "w=99999999999", "w=25.5", "w=-1", "w=%20256",
                  "w=256px", "w=%ZZ", "w=1e3"]:
            r, body = fetch(img["url"], q)
            self.assertEqual(r.status, 422, q)
            self.assertEqual(json.loads(body), {"message": {"w": ["The w must be a whole number of pixels from 16 to 1024."]},
                                                "status": 422})

    def test_missing_and_deleted_pictures(self):
        img = self.make_image()
        self.assertEqual(fetch(img["url"], "w=256")[0].status, 200)
        key = img["url"].rsplit("/", 1)[1]
        r = self.srv.request("GET", "/media/" + "0" * 32 + ".png?w=256")
        self.assertEqual(r.status, 404)
        self.assertEqual(self.req("DELETE", f"/api/v1/images/{img['id']}").status, 200)
        self.assertEqual(fetch(img["url"], "w=256")[0].status, 404)  # cached, but the picture is gone
        self.assertEqual(self.srv.request("GET", "/media/" + key + "?w=256").status, 404)
