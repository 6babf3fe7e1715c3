"""Black-box tests of the images half: routes, lists, the PNG at its URL, media rules."""
import http.client
import urllib.parse
import uuid

from harness import ServerTest
from pngcheck import check_png

NOTFOUND = {"message": "Resource not found.", "status": 404}


def fetch(url, headers=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", u.path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body


class Images(ServerTest):
    def test_create_and_fetch_png_without_auth(self):
        for res in ["1024x1024", "1792x1024", "1024x1792"]:
            img = self.make_image(resolution=res, style="vivid")
            self.assertEqual(set(img), {"id", "name", "description", "resolution", "style", "url", "favorite",
                                        "state", "error", "created_at", "updated_at", "revised_prompt",
                                        "revision", "tags"})
            self.assertEqual((img["state"], img["style"], img["resolution"]), ("completed", "vivid", res))
            self.assertRegex(img["url"], r"^http://127\.0\.0\.1:\d+/media/[0-9a-f]{32}\.png$")
            r, body = fetch(img["url"])
            self.assertEqual(r.status, 200)
            self.assertEqual(r.getheader("Content-Type"), "image/png")
            self.assertEqual(int(r.getheader("Content-Length")), len(body))
            self.assertTrue(r.getheader("ETag"))
            self.assertIn("max-age=31536000", r.getheader("Cache-Control"))
            w, h = check_png(body)
            self.assertEqual(f"{w}x{h}", res)
            r2, _ = fetch(img["url"], {"If-None-Match": r.getheader("ETag")})
            self.assertEqual(r2.status, 304)

    def test_style_null_when_absent_and_natural(self):
        a = self.make_image()
        self.assertIsNone(a["style"])
        b = self.make_image(style="natural")
        self.assertEqual(b["style"], "natural")
        _, pa = fetch(a["url"])
        _, pb = fetch(b["url"])
        self.assertNotEqual(pa, pb)

    def test_same_description_same_picture(self):
        a = self.make_image(description="a snowy mountain at night", style="natural")
        b = self.make_image(description="a snowy mountain at night", style="natural")
        self.assertNotEqual(a["url"], b["url"])
        self.assertEqual(fetch(a["url"])[1], fetch(b["url"])[1])

    def test_validation(self):
        cases = [({"description": "d", "resolution": "1024x1024"}, "name"),
                 ({"name": "n", "resolution": "1024x1024"}, "description"),
                 ({"name": "n", "description": "d"}, "resolution"),
                 ({"name": "n", "description": "d", "resolution": "800x600"}, "resolution"),
                 ({"name": "n", "description": "d", "resolution": "1024x1024", "style": "pastel"}, "style"),
                 ({"name": "n", "description": "x" * 4001, "resolution": "1024x1024"}, "description")]
        for form, field in cases:
            r = self.req("POST", "/api/v1/images", form=form)
            self.assertEqual(r.status, 422, (form, r))
            self.assertIn(field, r.json["message"])
        r = self.req("POST", "/api/v1/images", form={"name": "n", "description": "d", "resolution": "800x600"})
        self.assertEqual(r.json["message"], {"resolution": ["The selected resolution is invalid."]})

    def test_update_and_delete_removes_file(self):
        img = self.make_image()
        r = self.req("PATCH", f"/api/v1/images/{img['id']}", form={"name": "Renamed", "favorite": "true",
                                                                  "description": "ignored"})
        self.assertEqual(r.status, 200)
        self.assertEqual((r.json["data"]["name"], r.json["data"]["favorite"], r.json["data"]["description"]),
                         ("Renamed", True, img["description"]))
        r = self.req("DELETE", f"/api/v1/images/{img['id']}")
        self.assertEqual(r.json, {"id": img["id"], "object": "image", "deleted": True, "status": 200})
        self.assertEqual(fetch(img["url"])[0].status, 404)
        self.assertEqual(self.req("GET", f"/api/v1/images/{img['id']}").json, NOTFOUND)

    def test_cross_user_404(self):
        img = self.make_image()
        for method in ["GET", "PATCH", "PUT", "DELETE"]:
            r = self.req(method, f"/api/v1/images/{img['id']}", key="bob",
                         form={"name": "x", "favorite": "1"} if method in ("PATCH", "PUT") else None)
            self.assertEqual((r.status, r.json), (404, NOTFOUND))
        self.assertEqual(fetch(img["url"])[0].status, 200)
        after = self.req("GET", f"/api/v1/images/{img['id']}").json["data"]
        self.assertEqual(after, img)  # nothing changed

    def test_media_paths_cannot_escape(self):
        img = self.make_image()
        key = img["url"].rsplit("/", 1)[1][:-4]
        for path in ["/media/../inkwell.db", "/media/%2e%2e/inkwell.db", "/media/" + key,
                     "/media/" + key.upper() + ".png", "/media/" + key + ".png/", "/media/" + key[:-1] + ".png",
                     "/media/..%2finkwell.db", "/media/" + "0" * 32 + ".png", "/media/"]:
            r = self.srv.request("GET", path)
            self.assertEqual(r.status, 404, path)
        self.assertEqual(self.srv.request("POST", "/media/" + key + ".png").status, 405)

    def test_list_filters(self):
        k = self.srv.key("img" + uuid.uuid4().hex[:6])
        self.make_image(key=k, name="sq vivid", resolution="1024x1024", style="vivid")
        self.make_image(key=k, name="wide natural", resolution="1792x1024", style="natural")
        self.make_image(key=k, name="tall plain", resolution="1024x1792")

        def names(q):
            r = self.req("GET", "/api/v1/images" + q, key=k)
            self.assertEqual(r.status, 200, r)
            return [x["name"] for x in r.json["data"]]
        self.assertEqual(names(""), ["tall plain", "wide natural", "sq vivid"])
        self.assertEqual(names("?resolution=1792x1024"), ["wide natural"])
        self.assertEqual(names("?style=vivid"), ["sq vivid"])
        self.assertEqual(names("?style=pastel"), ["tall plain", "wide natural", "sq vivid"])
        self.assertEqual(names("?search=WIDE"), ["wide natural"])
        # images are searched by name only: search_by=result falls back to name
        self.assertEqual(names("?search=wide&search_by=result"), ["wide natural"])
        self.assertEqual(names("?sort_by=name&sort=asc"), ["sq vivid", "tall plain", "wide natural"])
        self.assertEqual(names("?favorite=1"), [])
        r = self.req("GET", "/api/v1/images?per_page=25", key=k)
        self.assertEqual((r.json["meta"]["per_page"], r.json["meta"]["total"]), (25, 3))
        self.assertEqual(self.req("GET", "/api/v1/images", key="bob").json["meta"]["total"], 0)
