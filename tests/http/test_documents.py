"""Black-box tests of the documents half of the API (API.md §1-§6, §8), two users."""
import json
import re
import socket
import uuid

from harness import words_of, ServerTest, slow

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
UNAUTH = {"message": "Unauthenticated.", "status": 401}
NOTFOUND = {"message": "Resource not found.", "status": 404}


class Auth(ServerTest):
    def test_missing_malformed_unknown_revoked_all_401_same_body(self):
        cases = [None, "Basic abc", "Bearer", "Bearer ", "Bearer ink_123",
                 "Bearer ink_" + "0" * 64, "Bearer " + self.alice[:-1] + "g", self.alice]
        for auth in cases:
            headers = {"Authorization": auth} if auth else {}
            r = self.srv.request("GET", "/api/v1/documents", headers=headers)
            self.assertEqual(r.status, 401, (auth, r))
            self.assertEqual(r.json, UNAUTH)
            self.assertEqual(r.header("WWW-Authenticate"), "Bearer")

    def test_revoked_key_refused_at_once(self):
        user = "rev-" + uuid.uuid4().hex[:6]
        key = self.srv.key(user)
        self.assertEqual(self.req("GET", "/api/v1/documents", key=key).status, 200)
        listing = self.srv.cli("key", "list").stdout
        line = [l for l in listing.splitlines() if user in l][0]
        self.assertIn("active", line)
        self.assertNotIn(key, listing)  # only a prefix is shown
        self.srv.cli("key", "revoke", line.split()[0])
        r = self.req("GET", "/api/v1/documents", key=key)
        self.assertEqual((r.status, r.json), (401, UNAUTH))
        self.assertIn("revoked", [l for l in self.srv.cli("key", "list").stdout.splitlines() if user in l][0])
        self.assertNotEqual(self.srv.cli("key", "revoke", "999999", check=False).returncode, 0)

    def test_keys_have_prefix_and_256_bits(self):
        self.assertRegex(self.alice, r"^ink_[0-9a-f]{64}$")
        self.assertNotEqual(self.alice, self.bob)

    def test_key_never_in_log(self):
        self.req("GET", "/api/v1/documents")
        self.req("GET", "/api/v1/documents", key="ink_" + "1" * 64)
        log = self.srv.read_log()
        self.assertIn("access", log)
        self.assertNotIn(self.alice, log)
        self.assertNotIn(self.alice[4:20], log)


class Misc(ServerTest):
    def test_templates(self):
        r = self.req("GET", "/api/v1/templates")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["status"], 200)
        data = r.json["data"]
        self.assertEqual(len(data), 52)
        for i, name in ((0, "Freestyle"), (16, "Hashtags"), (51, "Feature section")):
            self.assertEqual(set(data[i]), {"id", "name", "description", "custom"})
            self.assertIs(data[i]["custom"], False)
            self.assertEqual((data[i]["id"], data[i]["name"]), (i + 1, name))
        # §14: one sentence for people, different for each template
        descriptions = [t["description"] for t in data]
        self.assertEqual(len(set(descriptions)), 52)
        for d in descriptions:
            self.assertRegex(d, r"^[A-Z][^\n]{15,}\.$")
        self.assertIn("hashtags", data[16]["description"])

    def test_health_and_ready_without_auth(self):
        r = self.srv.request("GET", "/healthz")
        self.assertEqual((r.status, r.json["status"]), (200, 200))
        r = self.srv.request("GET", "/readyz")
        self.assertEqual((r.status, r.json["status"]), (200, 200))

    def test_unknown_paths_404_and_methods_405(self):
        for path in ["/api/v1/nope", "/api/v1/documents/1/extra", "/api/v2/documents", "/api/x", "/nope"]:
            r = self.req("GET", path)
            self.assertEqual((r.status, r.json), (404, NOTFOUND), path)
        r = self.req("PUT", "/api/v1/documents")
        self.assertError(r, 405, "Method not allowed.")
        self.assertEqual(r.header("Allow"), "GET, HEAD, POST")
        r = self.req("POST", "/api/v1/documents/1", form={"name": "x"})
        self.assertError(r, 405, "Method not allowed.")
        self.assertEqual(r.header("Allow"), "GET, HEAD, PUT, PATCH, DELETE")
        r = self.req("DELETE", "/api/v1/templates")
        self.assertError(r, 405)
        self.assertEqual(r.header("Allow"), "GET, HEAD, POST")

    def test_bad_ids_are_404(self):
        for bad in ["abc", "0", "-1", "01", "1.5", "1e3", "%31", "99999999999999999999", "9223372036854775807"]:
            for method in ["GET", "PATCH", "DELETE"]:
                r = self.req(method, f"/api/v1/documents/{bad}", form={} if method == "PATCH" else None)
                self.assertEqual((r.status, r.json), (404, NOTFOUND), (method, bad))


class Create(ServerTest):
    def test_create_defaults_and_shape(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "Tea", "prompt": "green tea benefits"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json["status"], 201)
        d = r.json["data"]
        self.assertEqual(set(d), {"id", "name", "prompt", "creativity", "creativity_label", "template_id",
                                  "template", "result", "words", "usage", "truncated", "favorite",
                                  "state", "error", "created_at", "updated_at",
                                  "tone", "language", "length", "revision", "tags", "has_draft"})
        # the builtin generator counts no tokens and never stops at a limit
        self.assertEqual((d["usage"], d["truncated"]), (None, False))
        self.assertEqual((d["name"], d["prompt"], d["creativity"], d["creativity_label"]),
                         ("Tea", "green tea benefits", 0.5, "Original"))
        self.assertEqual((d["template_id"], d["template"], d["state"], d["error"], d["favorite"]),
                         (1, "Freestyle", "completed", None, False))
        self.assertTrue(d["result"])
        self.assertEqual(d["words"], words_of(d["result"]))
        self.assertRegex(d["created_at"], TS)
        self.assertRegex(d["updated_at"], TS)
        self.assertEqual(r.header("Location"), self.srv.url(f"/api/v1/documents/{d['id']}"))
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"], d)

    def test_every_creativity_and_template(self):
        labels = {"0": "Repetitive", "0.25": "Deterministic", "0.5": "Original", "0.75": "Creative", "1": "Imaginative"}
        for value, label in labels.items():
            d = self.make_doc(creativity=value)
            self.assertEqual(d["creativity_label"], label)
            self.assertEqual(d["creativity"], float(value))
        d = self.make_doc(template_id="17", prompt="summer travel in Portugal")
        self.assertEqual((d["template_id"], d["template"]), (17, "Hashtags"))
        self.assertTrue(all(t.startswith("#") for t in d["result"].split()), d["result"])
        d = self.make_doc(template_id="6", prompt="how to brew coffee")
        self.assertRegex(d["result"], r"(?m)^1\.")

    def test_creativity_zero_repeatable(self):
        a = self.make_doc(creativity="0", template_id="4", prompt="electric bikes in cities")
        b = self.make_doc(creativity="0", template_id="4", prompt="electric bikes in cities")
        self.assertEqual(a["result"], b["result"])
        self.assertNotEqual(a["id"], b["id"])

    def test_json_body_and_charset(self):
        r = self.req("POST", "/api/v1/documents", json_body={"name": "J", "prompt": "p", "creativity": 0.25,
                                                             "template_id": 5, "unknown": [1]},
                     headers={"Content-Type": "application/json; charset=utf-8"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual((r.json["data"]["creativity"], r.json["data"]["template_id"]), (0.25, 5))
        r = self.req("POST", "/api/v1/documents", form="name=F&prompt=p",
                     headers={"Content-Type": "Application/X-WWW-Form-Urlencoded ; charset=UTF-8"})
        self.assertEqual(r.status, 201, r)

    def test_not_settable_fields_ignored(self):
        d = self.make_doc(id="999", state="failed", user_id="2", result="mine", words="7", favorite="1",
                          created_at="2000-01-01T00:00:00.000000Z")
        self.assertNotEqual(d["id"], 999)
        self.assertEqual(d["state"], "completed")
        self.assertNotEqual(d["result"], "mine")
        self.assertFalse(d["favorite"])
        self.assertNotEqual(d["created_at"], "2000-01-01T00:00:00.000000Z")

    def test_validation_errors(self):
        cases = [
            ({"prompt": "p"}, {"name": ["The name field is required."]}),
            ({"name": "", "prompt": "p"}, {"name": ["The name field is required."]}),
            ({"name": "   ", "prompt": "p"}, {"name": ["The name field is required."]}),
            ({}, {"name": ["The name field is required."], "prompt": ["The prompt field is required."]}),
            ({"name": "é" * 256, "prompt": "p"}, {"name": ["The name field must not be greater than 255 characters."]}),
            ({"name": "n", "prompt": "x" * 16385}, {"prompt": ["The prompt field must not be greater than 16384 characters."]}),
            ({"name": "n", "prompt": "p", "creativity": "0.3"}, {"creativity": ["The selected creativity is invalid."]}),
            ({"name": "n", "prompt": "p", "creativity": "abc"}, {"creativity": ["The selected creativity is invalid."]}),
            ({"name": "n", "prompt": "p", "template_id": "53"}, {"template_id": ["The selected template id is invalid."]}),
            ({"name": "n", "prompt": "p", "template_id": "0"}, {"template_id": ["The selected template id is invalid."]}),
        ]
        for form, errors in cases:
            r = self.req("POST", "/api/v1/documents", form=form)
            self.assertEqual(r.status, 422, (form, r))
            self.assertEqual(r.json, {"message": errors, "status": 422})

    def test_length_limits_count_code_points(self):
        d = self.make_doc(name="é" * 255, prompt="日本" * 8192)
        self.assertEqual(len(d["name"]), 255)
        self.assertEqual(len(d["prompt"]), 16384)

    def test_strict_decoding(self):
        for raw, field in [("name=%G1&prompt=p", "name"), ("name=n&prompt=%", "prompt"),
                           ("name=n&prompt=%4", "prompt"), ("name=%FF&prompt=p", "name"),
                           ("name=n&prompt=a%00b", "prompt"), ("name=%C0%AF&prompt=p", "name"),
                           ("name=%ED%A0%80&prompt=p", "name")]:
            r = self.req("POST", "/api/v1/documents", form=raw)
            self.assertEqual(r.status, 422, (raw, r))
            self.assertIn(field, r.json["message"], raw)
        # a bad value in a field that is not used is ignored
        r = self.req("POST", "/api/v1/documents", form="name=n&prompt=p&junk=%G1")
        self.assertEqual(r.status, 201, r)
        # JSON: invalid JSON, non-object, NUL
        for body in ['{"name":', '[1,2]', '{"name":"a\\u0000b","prompt":"p"}', '{"name":{"x":1},"prompt":"p"}']:
            r = self.req("POST", "/api/v1/documents", body=body, headers={"Content-Type": "application/json"})
            self.assertEqual(r.status, 422, (body, r))
            self.assertEqual(r.json["status"], 422)

    def test_unsupported_media_type(self):
        for ct in ["text/plain", "multipart/form-data; boundary=x", "application/xml"]:
            r = self.req("POST", "/api/v1/documents", body="name=a&prompt=b", headers={"Content-Type": ct})
            self.assertEqual((r.status, r.json), (415, {"message": "Unsupported media type.", "status": 415}), ct)
        r = self.req("POST", "/api/v1/documents", body="name=a&prompt=b")
        self.assertEqual(r.status, 415)

    def raw_exchange(self, head, chunks):
        """Sends a request by hand, tolerating a server that answers and closes early."""
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=slow(10))  # a hang bound
        data = b""
        try:
            s.sendall(head)
            for c in chunks:
                s.sendall(c)
        except OSError:
            pass
        try:
            while b"}" not in data:
                part = s.recv(65536)
                if not part:
                    break
                data += part
        except OSError:
            pass
        s.close()
        return data

    def test_payload_too_large(self):
        prefix = (f"POST /api/v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {self.alice}\r\n"
                  "Content-Type: application/x-www-form-urlencoded\r\n")
        chunk = b"a" * 65536
        # declared with Content-Length
        size = 1024 * 1024 + 10
        data = self.raw_exchange((prefix + f"Content-Length: {size}\r\n\r\n").encode(),
                                 [b"name=n&prompt="] + [chunk] * 17)
        self.assertIn(b" 413 ", data.split(b"\r\n")[0], data[:200])
        self.assertIn(b'{"message":"Payload too large.","status":413}', data)
        # chunked, no Content-Length
        data = self.raw_exchange((prefix + "Transfer-Encoding: chunked\r\n\r\n").encode(),
                                 [b"%x\r\n" % len(chunk) + chunk + b"\r\n"] * 20 + [b"0\r\n\r\n"])
        self.assertIn(b" 413 ", data.split(b"\r\n")[0], data[:200])
        self.assertIn(b'{"message":"Payload too large.","status":413}', data)
        # exactly at the limit is accepted (and then validated)
        body = "name=n&prompt=" + "a" * (1024 * 1024 - 14)
        r = self.req("POST", "/api/v1/documents", form=body)
        self.assertEqual(r.status, 422, r)
        self.assertIn("prompt", r.json["message"])


class UpdateDelete(ServerTest):
    def test_update_partial_put_and_patch(self):
        d = self.make_doc()
        r = self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"name": "New"})
        self.assertEqual(r.status, 200, r)
        u = r.json["data"]
        self.assertEqual((u["name"], u["result"], u["favorite"]), ("New", d["result"], False))
        r = self.req("PUT", f"/api/v1/documents/{d['id']}", form={"result": "one two  three\nfour", "favorite": "TRUE"})
        u = r.json["data"]
        self.assertEqual((r.status, u["name"], u["result"], u["words"], u["favorite"]),
                         (200, "New", "one two  three\nfour", 4, True))
        r = self.req("PATCH", f"/api/v1/documents/{d['id']}", json_body={"favorite": False, "prompt": "ignored"})
        self.assertEqual((r.json["data"]["favorite"], r.json["data"]["prompt"]), (False, d["prompt"]))
        for v in ["1", "0", "true", "false", "True", "FALSE"]:
            self.assertEqual(self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"favorite": v}).status, 200)

    def test_update_validation(self):
        d = self.make_doc()
        for form, field in [({"favorite": "yes"}, "favorite"), ({"favorite": ""}, "favorite"),
                            ({"name": ""}, "name"), ({"name": "x" * 256}, "name"), ("name=%ZZ", "name")]:
            r = self.req("PATCH", f"/api/v1/documents/{d['id']}", form=form)
            self.assertEqual(r.status, 422, (form, r))
            self.assertIn(field, r.json["message"])
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]["name"], d["name"])

    def test_delete(self):
        d = self.make_doc()
        r = self.req("DELETE", f"/api/v1/documents/{d['id']}")
        self.assertEqual((r.status, r.json), (200, {"id": d["id"], "object": "document", "deleted": True, "status": 200}))
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json, NOTFOUND)
        self.assertEqual(self.req("DELETE", f"/api/v1/documents/{d['id']}").status, 404)

    def test_other_users_records_are_404_and_unchanged(self):
        d = self.make_doc(name="Alice's")
        for method, form in [("GET", None), ("PATCH", {"name": "Bob was here"}), ("PUT", {"favorite": "1"}),
                             ("DELETE", None)]:
            r = self.req(method, f"/api/v1/documents/{d['id']}", key="bob", form=form)
            self.assertEqual((r.status, r.json), (404, NOTFOUND), method)
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"], d)
        bob_list = self.req("GET", "/api/v1/documents", key="bob").json
        self.assertNotIn(d["id"], [x["id"] for x in bob_list["data"]])


class Lists(ServerTest):
    def fresh_user(self):
        return self.srv.key("u" + uuid.uuid4().hex[:8])

    def names(self, key, query=""):
        r = self.req("GET", "/api/v1/documents" + query, key=key)
        self.assertEqual(r.status, 200, r)
        return [d["name"] for d in r.json["data"]], r.json

    def test_envelope_and_pages(self):
        k = self.fresh_user()
        for i in range(27):
            self.make_doc(key=k, name=f"doc {i:02d}")
        names, j = self.names(k)
        self.assertEqual(names, [f"doc {i:02d}" for i in range(26, 16, -1)])
        base = self.srv.url("/api/v1/documents")
        self.assertEqual(j["meta"], {"current_page": 1, "from": 1, "last_page": 3, "path": base,
                                     "per_page": 10, "to": 10, "total": 27})
        self.assertEqual(j["links"], {"first": base + "?page=1", "last": base + "?page=3", "prev": None,
                                      "next": base + "?page=2"})
        self.assertEqual(j["status"], 200)
        names, j = self.names(k, "?page=3&sort=desc")
        self.assertEqual(len(names), 7)
        self.assertEqual((j["meta"]["from"], j["meta"]["to"]), (21, 27))
        self.assertEqual(j["links"]["prev"], base + "?page=2&sort=desc")
        self.assertIsNone(j["links"]["next"])
        names, j = self.names(k, "?page=9")
        self.assertEqual(names, [])
        self.assertEqual((j["meta"]["current_page"], j["meta"]["from"], j["meta"]["to"], j["meta"]["last_page"]),
                         (9, None, None, 3))
        # per_page and page fallbacks
        for q, per, page in [("?per_page=25", 25, 1), ("?per_page=7", 10, 1), ("?per_page=abc", 10, 1),
                             ("?per_page=100&page=0", 100, 1), ("?page=-2", 10, 1), ("?page=x", 10, 1),
                             ("?per_page=50&page=1", 50, 1)]:
            _, j = self.names(k, q)
            self.assertEqual((j["meta"]["per_page"], j["meta"]["current_page"]), (per, page), q)
        # links keep every parameter and set page
        _, j = self.names(k, "?search=doc&per_page=25&page=1&sort_by=name")
        self.assertEqual(j["links"]["next"], base + "?search=doc&per_page=25&page=2&sort_by=name")

    def test_page_walk_never_repeats_or_skips(self):
        k = self.fresh_user()
        for i in range(23):
            self.make_doc(key=k, name=["same", "other"][i % 2])
        for sort in ["asc", "desc"]:
            seen = []
            for page in range(1, 4):
                r = self.req("GET", f"/api/v1/documents?sort_by=name&sort={sort}&page={page}", key=k)
                seen += [(d["name"], d["id"]) for d in r.json["data"]]
            self.assertEqual(len(seen), 23)
            self.assertEqual(len(set(seen)), 23)
            expect = sorted(seen, reverse=(sort == "desc"))
            self.assertEqual(seen, expect, sort)

    def test_empty_list(self):
        k = self.fresh_user()
        names, j = self.names(k)
        self.assertEqual(names, [])
        self.assertEqual((j["meta"]["last_page"], j["meta"]["total"], j["meta"]["from"], j["meta"]["to"]),
                         (1, 0, None, None))
        self.assertIsNone(j["links"]["next"])

    def test_search_is_literal_and_case_insensitive(self):
        k = self.fresh_user()
        for n in ["100% pure", "100 percent", "a_b", "axb", "Tea Time", "back\\slash"]:
            self.make_doc(key=k, name=n)
        self.assertEqual(self.names(k, "?search=100%25")[0], ["100% pure"])
        self.assertEqual(self.names(k, "?search=a_b")[0], ["a_b"])
        self.assertEqual(self.names(k, "?search=tea%20TIME")[0], ["Tea Time"])
        self.assertEqual(self.names(k, "?search=%5C")[0], ["back\\slash"])
        self.assertEqual(len(self.names(k, "?search=")[0]), 6)
        r = self.req("GET", "/api/v1/documents?search=%G1", key=k)
        self.assertEqual(r.status, 422)
        self.assertIn("search", r.json["message"])

    def test_search_by_result_filters_and_sort(self):
        k = self.fresh_user()
        a = self.make_doc(key=k, name="alpha", template_id="17")
        b = self.make_doc(key=k, name="Beta")
        c = self.make_doc(key=k, name="gamma")
        self.req("PATCH", f"/api/v1/documents/{b['id']}", key=k, form={"result": "zebra crossing", "favorite": "1"})
        self.assertEqual(self.names(k, "?search=zebra&search_by=result")[0], ["Beta"])
        self.assertEqual(self.names(k, "?search=zebra")[0], [])
        self.assertEqual(self.names(k, "?search=zebra&search_by=bogus")[0], [])
        self.assertEqual(self.names(k, "?template_id=17")[0], ["alpha"])
        self.assertEqual(len(self.names(k, "?template_id=99")[0]), 3)
        self.assertEqual(self.names(k, "?favorite=1")[0], ["Beta"])
        self.assertEqual(self.names(k, "?favorite=true")[0], ["Beta"])
        self.assertEqual(self.names(k, "?favorite=0")[0], ["gamma", "alpha"])
        self.assertEqual(len(self.names(k, "?favorite=maybe")[0]), 3)
        # API.md §15: the CLDR root order, not bytes (test_unicode.py goes further)
        self.assertEqual(self.names(k, "?sort_by=name&sort=asc")[0], ["alpha", "Beta", "gamma"])
        self.assertEqual(self.names(k, "?sort_by=name")[0], ["gamma", "Beta", "alpha"])
        self.assertEqual(self.names(k, "?sort=asc")[0], ["alpha", "Beta", "gamma"])
        self.assertEqual(self.names(k, "?sort=sideways&sort_by=color")[0], ["gamma", "Beta", "alpha"])
        del a, c

    def test_lists_isolated_per_user(self):
        k1, k2 = self.fresh_user(), self.fresh_user()
        self.make_doc(key=k1, name="mine")
        self.assertEqual(self.names(k2)[1]["meta"]["total"], 0)
        self.assertEqual(self.names(k1)[1]["meta"]["total"], 1)

    def test_totals_follow_creates_and_deletes(self):
        k = self.fresh_user()
        docs = [self.make_doc(key=k, name=f"t{i}") for i in range(12)]
        for d in docs[:5]:
            self.assertEqual(self.req("DELETE", f"/api/v1/documents/{d['id']}", key=k).status, 200)
        self.assertEqual(self.req("DELETE", f"/api/v1/documents/{docs[5]['id']}", key="bob").status, 404)
        _, j = self.names(k)
        self.assertEqual((j["meta"]["total"], j["meta"]["last_page"], len(j["data"])), (7, 1, 7))
        _, j = self.names(k, "?search=t")
        self.assertEqual(j["meta"]["total"], 7)
        _, j = self.names(k, "?page=2")
        self.assertEqual((j["meta"]["total"], j["data"]), (7, []))


class RecordCache(ServerTest):
    """Lists answer unchanged records from rendered JSON kept in memory (api/rcache.h),
    checked against each row's updated_us. Every change must show at once."""

    def listed(self, doc_id, key="alice"):
        for d in self.req("GET", "/api/v1/documents?per_page=100", key=key).json["data"]:
            if d["id"] == doc_id:
                return d
        return None

    def test_list_follows_every_change(self):
        d = self.make_doc(name="cached one", prompt="a note on cache coherence")
        first = self.listed(d["id"])
        self.assertEqual(first, d)
        self.assertEqual(self.listed(d["id"]), d)  # now from the cache: the same
        seen = {d["updated_at"]}
        # changes in quick succession, each seen by the very next list
        for i, patch in enumerate([{"name": "renamed 1"}, {"favorite": "1"}, {"result": "new text here"},
                                   {"name": "renamed 2"}, {"favorite": "0"}, {"result": "x"},
                                   {"name": "renamed 3", "favorite": "true"}]):
            r = self.req("PATCH", f"/api/v1/documents/{d['id']}", form=patch)
            self.assertEqual(r.status, 200, r)
            now = self.listed(d["id"])
            self.assertEqual(now, r.json["data"], (i, patch))
            for _ in range(2):  # a show, then a show from the cache
                self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"], now)
            self.assertNotIn(now["updated_at"], seen)  # every change moves updated_at forward
            self.assertGreater(now["updated_at"], max(seen))
            seen.add(now["updated_at"])
        self.assertEqual((now["name"], now["favorite"], now["result"], now["words"]),
                         ("renamed 3", True, "x", 1))
        # held in the cache now, and still another user's 404
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}", key="bob").json, NOTFOUND)
        # a filter or a sort answers the same rendering
        fav = self.req("GET", "/api/v1/documents?favorite=1&sort_by=name&sort=asc&per_page=100").json["data"]
        self.assertIn(now, fav)
        r = self.req("DELETE", f"/api/v1/documents/{d['id']}")
        self.assertEqual(r.status, 200)
        self.assertIsNone(self.listed(d["id"]))
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").status, 404)
        # another user's list never holds it, cached or not
        self.assertIsNone(self.listed(d["id"], key="bob"))

    def test_same_bytes_with_and_without_cache(self):
        from harness import Server
        srv = Server()
        srv.start()
        key = srv.key("bytes")
        for i in range(30):
            r = srv.request("POST", "/api/v1/documents", key=key,
                            form={"name": f"b{i % 7} \"q\" \\ é", "prompt": f"p {i}\n\ttab",
                                  "template_id": str(i % 52 + 1), "creativity": str((i % 5) / 4)})
            self.assertEqual(r.status, 201, r)
        srv.request("PATCH", "/api/v1/documents/3", key=key, form={"favorite": "1", "result": "ünïcode \u2028 ok"})
        paths = ["/api/v1/documents", "/api/v1/documents?per_page=25&page=2", "/api/v1/documents?sort_by=name",
                 "/api/v1/documents?favorite=1", "/api/v1/documents?search=b3&sort=asc",
                 "/api/v1/documents?template_id=4", "/api/v1/documents?per_page=100",
                 "/api/v1/documents/3", "/api/v1/documents/30", "/api/v1/documents/1"]
        warm = {}
        for p in paths:
            srv.request("GET", p, key=key)  # fills the cache
            warm[p] = srv.request("GET", p, key=key).body
        self.assertEqual(srv.stop(), 0)
        cold = Server("--record-cache-mb", "0", data_dir=srv.data_dir, database=srv.database)
        cold.start(port=srv.port)  # the same port: links name it
        try:
            for p in paths:
                self.assertEqual(cold.request("GET", p, key=key).body, warm[p], p)
        finally:
            self.assertEqual(cold.stop(), 0)
