"""Running inkwell for a team (API.md §19): key scopes on every route, expiry, the
/admin routes (users, quotas, keys, usage: objects, pages, 422s, 404s, 405s),
GET /usage, monthly quotas (exactly at the limit, the month's end with the settable
clock INKWELL_TEST_NOW), user deletion leaving no file, the command line, and the
metrics. Both backends (INKWELL_TEST_BACKEND)."""
import os
import re
import threading
import unittest
import urllib.parse

from harness import Server, ServerTest
from test_ops import parse_metrics, value

NOW = "2026-11-30T23:50:00Z"  # the clock of these servers: ten minutes before December
API = "/api/v1"


class TeamTest(ServerTest):
    """One server (clock at NOW) with an admin key and alice's write and read keys."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(env={"INKWELL_TEST_NOW": NOW}).start()
        cls.admin = cls.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.srv.keys.append(cls.admin)
        cls.alice = cls.srv.key("alice")
        cls.bob = cls.srv.key("bob")
        cls.reader = cls.srv.cli("key", "create", "--user", "alice", "--scope", "read").stdout.strip()
        cls.srv.keys.append(cls.reader)

    def a(self, method, path, **kw):
        return self.srv.request(method, API + path, key=self.admin, **kw)

    def new_user(self, name, **quotas):
        r = self.a("POST", "/admin/users", form=dict(name=name, **quotas))
        self.assertEqual(r.status, 201, r)
        return r.json["data"]

    def new_key(self, user_id, **fields):
        r = self.a("POST", f"/admin/users/{user_id}/keys", form=fields)
        self.assertEqual(r.status, 201, r)
        self.srv.keys.append(r.json["data"]["key"])
        return r.json["data"]

    # ---- scopes ----

    def test_scope_of_each_key_on_each_route(self):
        doc = self.make_doc()
        img = self.make_image()
        unauthorized = "This action is unauthorized."
        read_only = "This key may only read."
        user_routes = [
            ("GET", "/documents", None), ("POST", "/documents", {"name": "n", "prompt": "p"}),
            ("GET", f"/documents/{doc['id']}", None),
            ("PATCH", f"/documents/{doc['id']}", {"name": "m"}),
            ("PUT", f"/documents/{doc['id']}", {"name": "m"}),
            ("GET", f"/documents/{doc['id']}/export", None),
            ("GET", "/images", None), ("GET", f"/images/{img['id']}", None),
            ("POST", "/images", {"name": "n", "description": "d", "resolution": "1024x1024"}),
            ("PATCH", f"/images/{img['id']}", {"name": "m"}),
            ("GET", "/templates", None), ("GET", "/usage", None),
            ("DELETE", f"/images/{img['id']}", None), ("DELETE", f"/documents/{doc['id']}", None),
        ]
        for method, path, form in user_routes:
            with self.subTest(key="admin", method=method, path=path):
                r = self.a(method, path, form=form)
                self.assertError(r, 403, unauthorized)
                self.assertNotIn("data", r.json)
            with self.subTest(key="read", method=method, path=path):
                r = self.req(method, API + path, key=self.reader, form=form)
                if method == "GET":
                    self.assertEqual(r.status, 200, r)
                else:
                    self.assertError(r, 403, read_only)
        # the read key changed nothing; the write key still may
        self.assertEqual(self.req("GET", f"{API}/documents/{doc['id']}").json["data"]["name"], "Doc")
        self.assertEqual(self.req("HEAD", f"{API}/documents/{doc['id']}", key=self.reader).status, 200)
        admin_routes = [("GET", "/admin/users"), ("POST", "/admin/users"), ("GET", "/admin/users/1"),
                        ("PATCH", "/admin/users/1"), ("DELETE", "/admin/users/1"),
                        ("GET", "/admin/users/1/keys"), ("POST", "/admin/users/1/keys"),
                        ("DELETE", "/admin/keys/1"), ("GET", "/admin/usage")]
        for method, path in admin_routes:
            for who, key in (("write", self.alice), ("read", self.reader)):
                with self.subTest(key=who, method=method, path=path):
                    self.assertError(self.req(method, API + path, key=key, form={"name": "x"}),
                                     403, unauthorized)
        self.assertEqual(self.a("GET", "/admin/users/1").status, 200)  # nothing was deleted
        # unknown paths and refused methods are answered as before, whatever the key
        self.assertError(self.a("GET", "/nothing"), 404)
        r = self.req("POST", f"{API}/admin/usage", key=self.reader)
        self.assertError(r, 405)
        self.assertEqual(r.header("Allow"), "GET, HEAD")

    def test_admin_key_sees_no_records(self):
        doc = self.make_doc()
        for path in (f"/documents/{doc['id']}", "/documents", "/images", f"/documents/{doc['id']}/export"):
            r = self.a("GET", path)
            self.assertError(r, 403, "This action is unauthorized.")
            self.assertNotIn(doc["name"], r.body.decode())

    # ---- admin routes ----

    def test_users_create_show_change_and_page(self):
        u = self.new_user("carol", quota_words="500", quota_images="")
        self.assertEqual(set(u), {"id", "name", "quota_words", "quota_images", "role", "created_at"})
        self.assertEqual((u["name"], u["quota_words"], u["quota_images"]), ("carol", 500, None))
        self.assertRegex(u["created_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        r = self.a("GET", f"/admin/users/{u['id']}")
        self.assertEqual(r.json, {"data": u, "status": 200})
        r = self.a("PATCH", f"/admin/users/{u['id']}", json_body={"quota_words": None, "quota_images": 7})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["quota_words"], r.json["data"]["quota_images"]), (None, 7))
        r = self.a("PATCH", f"/admin/users/{u['id']}", form={"name": "carol2"})
        self.assertEqual(r.json["data"]["name"], "carol2")
        self.assertEqual(r.json["data"]["quota_images"], 7)
        # pages of users, as §4 envelopes
        for i in range(11):
            self.new_user(f"page-user-{i}")
        r = self.a("GET", "/admin/users?per_page=10&page=2")
        self.assertEqual(r.status, 200, r)
        meta = r.json["meta"]
        total = meta["total"]
        self.assertGreaterEqual(total, 14)
        self.assertEqual((meta["current_page"], meta["per_page"], meta["from"]), (2, 10, 11))
        self.assertEqual(meta["last_page"], (total + 9) // 10)
        self.assertEqual(meta["path"], self.srv.url(API + "/admin/users"))
        self.assertEqual(r.json["links"]["prev"], self.srv.url(API + "/admin/users?per_page=10&page=1"))
        ids = [x["id"] for x in r.json["data"]]
        self.assertEqual(ids, sorted(ids))
        r = self.a("GET", "/admin/users?per_page=7&page=9999")  # fallbacks and a page past the end
        self.assertEqual((r.json["meta"]["per_page"], r.json["data"], r.json["meta"]["from"]), (10, [], None))
        self.assertIsNone(r.json["links"]["next"])

    def test_validation(self):
        cases = [
            ({}, "name"), ({"name": ""}, "name"), ({"name": "x" * 256}, "name"),
            ({"name": "root"}, "name"),  # taken
            ({"name": "v1", "quota_words": "-1"}, "quota_words"),
            ({"name": "v1", "quota_words": "ten"}, "quota_words"),
            ({"name": "v1", "quota_images": "1.5"}, "quota_images"),
            ({"name": "v1", "quota_images": "%G1"}, "quota_images"),
        ]
        for form, field in cases:
            with self.subTest(form=form):
                body = form if "%G1" not in str(form) else "name=v1&quota_images=%G1"
                r = self.a("POST", "/admin/users", form=body)
                self.assertEqual(r.status, 422, r)
                self.assertEqual(list(r.json["message"]), [field], r)
        self.assertEqual(self.a("POST", "/admin/users", form={"name": "y" * 255}).status, 201)
        u = self.new_user("valid")
        r = self.a("PATCH", f"/admin/users/{u['id']}", form={"name": "root"})
        self.assertEqual(list(r.json["message"]), ["name"])
        r = self.a("PATCH", f"/admin/users/{u['id']}", json_body={"quota_words": -3})
        self.assertEqual(list(r.json["message"]), ["quota_words"])
        for form, field in [({"scope": "root"}, "scope"), ({"expires_at": "tomorrow"}, "expires_at"),
                            ({"expires_at": "2026-11-30T23:49:59Z"}, "expires_at"),  # before now
                            ({"expires_at": "2027-02-30T00:00:00Z"}, "expires_at"),
                            ({"expires_at": "2027-01-01T10:00:00"}, "expires_at")]:  # no offset
            with self.subTest(form=form):
                r = self.a("POST", f"/admin/users/{u['id']}/keys", form=form)
                self.assertEqual(r.status, 422, r)
                self.assertEqual(list(r.json["message"]), [field])
        k = self.new_key(u["id"], expires_at="2027-01-01T01:00:00+01:00")
        self.assertEqual(k["expires_at"], "2027-01-01T00:00:00.000000Z")
        for period in ("2026-13", "26-11", "2026-1", "x", "2026-11-01"):
            r = self.a("GET", "/admin/usage?period=" + urllib.parse.quote(period))
            self.assertEqual(r.status, 422, r)
            self.assertEqual(list(r.json["message"]), ["period"])
        for method, path in [("GET", "/admin/users/999999"), ("PATCH", "/admin/users/999999"),
                             ("DELETE", "/admin/users/999999"), ("GET", "/admin/users/999999/keys"),
                             ("POST", "/admin/users/999999/keys"), ("DELETE", "/admin/keys/999999"),
                             ("GET", "/admin/users/abc"), ("GET", "/admin/users/1/other")]:
            with self.subTest(method=method, path=path):
                self.assertError(self.a(method, path), 404, "Resource not found.")
        for method, path, allow in [("PUT", "/admin/users", "GET, HEAD, POST"),
                                    ("PUT", "/admin/users/1", "GET, HEAD, PATCH, DELETE"),
                                    ("GET", "/admin/keys/1", "DELETE"),
                                    ("DELETE", "/admin/usage", "GET, HEAD")]:
            r = self.a(method, path)
            self.assertError(r, 405, "Method not allowed.")
            self.assertEqual(r.header("Allow"), allow)

    def test_me_tells_every_key_who_it_is(self):
        """GET /me (the contract is silent on a "who am I"; the web app shows who is
        signed in with it): the key's user and the key itself, for a key of any scope;
        the key's secret never; 401 without a valid key, 405 for another method."""
        u = self.new_user("mona", quota_words="500")
        keys = {s: self.new_key(u["id"], scope=s) for s in ("write", "read")}
        for scope, k in keys.items():
            r = self.req("GET", API + "/me", key=k["key"])
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json["status"], 200)
            self.assertEqual(r.json["data"]["user"], self.a("GET", f"/admin/users/{u['id']}").json["data"])
            self.assertEqual(r.json["data"]["key"], {x: k[x] for x in k if x != "key"})
            self.assertEqual(r.json["data"]["key"]["scope"], scope)
            self.assertNotIn(k["key"], r.body.decode())
        r = self.req("GET", API + "/me", key=self.admin)
        self.assertEqual((r.status, r.json["data"]["user"]["name"], r.json["data"]["key"]["scope"]),
                         (200, "root", "admin"))
        self.assertError(self.req("GET", API + "/me", key="ink_not_a_key"), 401, "Unauthenticated.")
        r = self.req("POST", API + "/me", key=keys["write"]["key"])
        self.assertEqual((r.status, r.header("Allow")), (405, "GET, HEAD"))
        self.a("DELETE", f"/admin/keys/{keys['read']['id']}")
        self.assertError(self.req("GET", API + "/me", key=keys["read"]["key"]), 401, "Unauthenticated.")

    def test_keys_shown_once_listed_and_revoked(self):
        u = self.new_user("dave")
        k = self.new_key(u["id"], scope="read")
        self.assertEqual(set(k), {"id", "user_id", "prefix", "scope", "expires_at", "revoked",
                                  "created_at", "name", "key"})
        self.assertEqual((k["user_id"], k["scope"], k["expires_at"], k["revoked"], k["name"]),
                         (u["id"], "read", None, False, None))
        self.assertTrue(k["key"].startswith(k["prefix"]) and len(k["prefix"]) == 10)
        self.assertEqual(self.req("GET", API + "/documents", key=k["key"]).status, 200)
        self.assertError(self.req("POST", API + "/documents", key=k["key"], form={"name": "n", "prompt": "p"}),
                         403, "This key may only read.")
        w = self.new_key(u["id"])
        self.assertEqual(w["scope"], "write")
        r = self.a("GET", f"/admin/users/{u['id']}/keys")
        self.assertEqual([x["id"] for x in r.json["data"]], [k["id"], w["id"]])
        self.assertNotIn(k["key"], r.body.decode())
        self.assertTrue(all("key" not in x for x in r.json["data"]))
        r = self.a("DELETE", f"/admin/keys/{k['id']}")
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.json["data"]["revoked"])
        self.assertError(self.req("GET", API + "/documents", key=k["key"]), 401, "Unauthenticated.")
        self.assertEqual(self.req("GET", API + "/documents", key=w["key"]).status, 200)
        self.assertEqual(self.a("DELETE", f"/admin/keys/{k['id']}").status, 200)  # again: still revoked

    def test_user_delete_removes_keys_records_and_pictures(self):
        u = self.new_user("erin")
        key = self.new_key(u["id"])["key"]
        img = self.make_image(key=key)
        self.make_doc(key=key)
        media = os.path.join(self.srv.data_dir, "media")
        files = set(os.listdir(media))
        name = urllib.parse.urlsplit(img["url"]).path.rsplit("/", 1)[1]
        self.assertIn(name, files)
        r = self.a("DELETE", f"/admin/users/{u['id']}")
        self.assertEqual(r.json, {"id": u["id"], "object": "user", "deleted": True, "status": 200})
        self.assertNotIn(name, os.listdir(media))
        self.assertEqual(files - set(os.listdir(media)), {name})  # others' pictures stay
        self.assertError(self.req("GET", API + "/documents", key=key), 401)
        self.assertError(self.a("GET", f"/admin/users/{u['id']}"), 404)
        self.assertEqual(self.srv.request("GET", urllib.parse.urlsplit(img["url"]).path).status, 404)
        self.assertEqual(self.a("POST", "/admin/users", form={"name": "erin"}).status, 201)  # name free

    # ---- usage and quotas ----

    def usage(self, key):
        r = self.req("GET", API + "/usage", key=key)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def test_word_quota_exactly_at_the_limit(self):
        u = self.new_user("frank", quota_words="1")
        key = self.new_key(u["id"])["key"]
        reader = self.new_key(u["id"], scope="read")["key"]
        self.assertEqual(self.usage(key), {"period": "2026-11", "words": {"used": 0, "limit": 1},
                                           "images": {"used": 0, "limit": None},
                                           "tokens": {"prompt": 0, "completion": 0}})
        before = parse_metrics(self.srv.request("GET", "/metrics").body.decode())
        d1 = self.make_doc(key=key)  # under the limit: generated whole, never cut off
        self.assertGreater(d1["words"], 1)
        used = self.usage(key)["words"]["used"]
        self.assertEqual(used, d1["words"])
        r = self.req("POST", API + "/documents", key=key, form={"name": "n", "prompt": "p"})
        self.assertError(r, 403, "Your monthly word quota is used up.")
        # the scope is checked first
        self.assertError(self.req("POST", API + "/documents", key=reader, form={"name": "n", "prompt": "p"}),
                         403, "This key may only read.")
        self.assertEqual(self.req("GET", API + "/documents", key=key).json["meta"]["total"], 1)
        # images have their own quota
        self.make_image(key=key)
        # exactly at the limit: refused; one word under it: allowed
        self.a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": str(used)})
        self.assertError(self.req("POST", API + "/documents", key=key, form={"name": "n", "prompt": "p"}), 403)
        self.a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": str(used + 1)})
        d2 = self.make_doc(key=key)
        self.assertEqual(self.usage(key)["words"]["used"], used + d2["words"])
        self.a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": ""})  # none
        self.make_doc(key=key, **{"name": "async"})
        after = parse_metrics(self.srv.request("GET", "/metrics").body.decode())
        self.assertEqual(value(after, "inkwell_quota_refusals_total", kind="words") -
                         value(before, "inkwell_quota_refusals_total", kind="words"), 2)
        self.assertGreaterEqual(value(after, "inkwell_generated_words_total", provider="builtin") -
                                value(before, "inkwell_generated_words_total", provider="builtin"),
                                d1["words"] + d2["words"])
        self.assertGreaterEqual(value(after, "inkwell_generated_images_total", provider="builtin") -
                                value(before, "inkwell_generated_images_total", provider="builtin"), 1)

    def test_retry_of_the_create_that_used_the_quota_is_replayed(self):
        u = self.new_user("ruth", quota_words="1")
        key = self.new_key(u["id"])["key"]
        form = {"name": "n", "prompt": "p"}
        first = self.req("POST", API + "/documents", key=key, form=form, headers={"Idempotency-Key": "k1"})
        self.assertEqual(first.status, 201, first)
        again = self.req("POST", API + "/documents", key=key, form=form, headers={"Idempotency-Key": "k1"})
        self.assertEqual((again.status, again.header("Idempotent-Replayed")), (201, "true"))
        self.assertEqual(again.json, first.json)
        r = self.req("POST", API + "/documents", key=key, form={"name": "other", "prompt": "p"},
                     headers={"Idempotency-Key": "k1"})
        self.assertEqual(r.status, 422, r)  # the key's own rule, nothing made
        self.assertError(self.req("POST", API + "/documents", key=key, form=form,
                                  headers={"Idempotency-Key": "k2"}), 403, "Your monthly word quota is used up.")
        self.assertEqual(self.req("GET", API + "/documents", key=key).json["meta"]["total"], 1)

    def test_image_quota_and_async_counting(self):
        u = self.new_user("gina", quota_images="2")
        key = self.new_key(u["id"])["key"]
        self.make_image(key=key)
        r = self.req("POST", API + "/images", key=key, headers={"Prefer": "respond-async"},
                     form={"name": "a", "description": "a blue lake", "resolution": "1024x1024"})
        self.assertEqual(r.status, 202, r)
        from harness import poll_state
        poll_state(self.srv, key, f"{API}/images/{r.json['data']['id']}")
        r = self.req("POST", API + "/documents", key=key, headers={"Prefer": "respond-async"},
                     form={"name": "a", "prompt": "a walk"})
        doc = poll_state(self.srv, key, f"{API}/documents/{r.json['data']['id']}")
        usage = self.usage(key)
        self.assertEqual(usage["images"], {"used": 2, "limit": 2})
        self.assertEqual(usage["words"]["used"], doc["words"])
        r = self.req("POST", API + "/images", key=key,
                     form={"name": "b", "description": "d", "resolution": "1024x1024"})
        self.assertError(r, 403, "Your monthly image quota is used up.")
        self.assertEqual(self.req("GET", API + "/images", key=key).json["meta"]["total"], 2)
        rows = self.a("GET", "/admin/usage?per_page=100").json
        mine = [x for x in rows["data"] if x["user_id"] == u["id"]]
        self.assertEqual(mine, [dict(user_id=u["id"], name="gina", **usage)])

    def test_regenerations_count_and_are_refused_at_the_quota(self):
        """§19: words and pictures of a regeneration count; a used-up quota refuses a
        regenerate (403, nothing changed) as it refuses a create."""
        u = self.new_user("hugo", quota_images="2")
        key = self.new_key(u["id"])["key"]
        d = self.make_doc(key=key)
        r = self.req("POST", f"{API}/documents/{d['id']}/regenerate", key=key)
        self.assertEqual(r.status, 200, r)
        d2 = r.json["data"]
        self.assertEqual(self.usage(key)["words"]["used"], d["words"] + d2["words"])
        img = self.make_image(key=key)
        r = self.req("POST", f"{API}/images/{img['id']}/regenerate", key=key)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.usage(key)["images"], {"used": 2, "limit": 2})
        r = self.req("POST", f"{API}/images/{img['id']}/regenerate", key=key)
        self.assertError(r, 403, "Your monthly image quota is used up.")
        now = self.req("GET", f"{API}/images/{img['id']}", key=key).json["data"]
        self.assertEqual(now["revision"], 2)
        used = self.usage(key)["words"]["used"]
        self.a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": str(used)})
        r = self.req("POST", f"{API}/documents/{d['id']}/regenerate", key=key)
        self.assertError(r, 403, "Your monthly word quota is used up.")
        self.assertEqual(self.req("GET", f"{API}/documents/{d['id']}", key=key).json["data"]["revision"], 2)

    def at_once(self, n, method, path, key, form, headers=None):
        """n requests sent together (a barrier), their answers in any order."""
        barrier, out, lock = threading.Barrier(n), [], threading.Lock()

        def one(i):
            barrier.wait()
            r = self.req(method, path, key=key, form=dict(form, name=f"n{i}"), headers=headers or {})
            with lock:
                out.append(r)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    def assert_one_past_the_limit(self, answers, made_status, kind):
        """Of creates sent at once near the limit, one is made; the others are told the
        quota is used up (403) or to try again once the one running has finished (429,
        Retry-After) — never a second generation past the limit (§19, one process)."""
        made = [r for r in answers if r.status == made_status]
        self.assertEqual(len(made), 1, sorted(r.status for r in answers))
        word = "image" if kind == "images" else "word"
        for r in answers:
            if r.status == 403:
                self.assertError(r, 403, f"Your monthly {word} quota is used up.")
            elif r.status == 429:
                self.assertError(r, 429)
                self.assertIn(f"monthly {word} quota", r.json["message"])
                self.assertEqual(r.header("Retry-After"), "1")
            else:
                self.assertEqual(r.status, made_status, r)
        return made[0]

    def test_creates_at_once_go_past_the_limit_by_one_generation_at_most(self):
        """Twelve creates at once for a user one word under the limit: one is generated
        (it started under the limit, so it is whole); none of the others starts. Before
        the in-flight reservations (records/quota.c) every create that read the usage
        before the first one was counted went on."""
        u = self.new_user("ivan")
        key = self.new_key(u["id"])["key"]
        self.make_doc(key=key)
        used = self.usage(key)["words"]["used"]
        self.a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": str(used + 1)})
        answers = self.at_once(12, "POST", API + "/documents", key, {"prompt": "a walk by the sea"})
        made = self.assert_one_past_the_limit(answers, 201, "documents")
        self.assertEqual(self.req("GET", API + "/documents", key=key).json["meta"]["total"], 2)
        self.assertEqual(self.usage(key)["words"]["used"], used + made.json["data"]["words"])
        self.assertError(self.req("POST", API + "/documents", key=key, form={"name": "n", "prompt": "p"}),
                         403, "Your monthly word quota is used up.")
        # far from the limit, creates at once all go on (nothing is held back)
        self.a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": "1000000"})
        answers = self.at_once(8, "POST", API + "/documents", key, {"prompt": "a walk"})
        self.assertEqual([r.status for r in answers], [201] * 8)

    def test_async_images_at_once_near_the_limit(self):
        """The same for pictures made by jobs (Prefer: respond-async): with one picture
        left, eight creates at once queue one job; the others 429 or 403; once it has
        finished the quota is used up exactly."""
        u = self.new_user("jane", quota_images="1")
        key = self.new_key(u["id"])["key"]
        answers = self.at_once(8, "POST", API + "/images", key,
                               {"description": "a red kite", "resolution": "1024x1024"},
                               headers={"Prefer": "respond-async"})
        made = self.assert_one_past_the_limit(answers, 202, "images")
        from harness import poll_state
        poll_state(self.srv, key, f"{API}/images/{made.json['data']['id']}")
        self.assertEqual(self.usage(key)["images"], {"used": 1, "limit": 1})
        self.assertEqual(self.req("GET", API + "/images", key=key).json["meta"]["total"], 1)
        r = self.req("POST", API + "/images", key=key,
                     form={"name": "b", "description": "d", "resolution": "1024x1024"})
        self.assertError(r, 403, "Your monthly image quota is used up.")

    # ---- the command line ----

    def test_cli(self):
        out = self.srv.cli("user", "create", "hank", "--quota-words", "100").stdout
        self.assertIn("hank", out)
        self.assertEqual(self.srv.cli("user", "create", "hank", check=False).returncode, 1)
        self.assertIn("hank", self.srv.cli("user", "list").stdout)
        out = self.srv.cli("user", "set-quota", "hank", "--words", "none", "--images", "3").stdout
        self.assertRegex(out, r"hank\s+none\s+3\s")
        self.assertEqual(self.srv.cli("user", "set-quota", "hank", "--words", "-2", check=False).returncode, 2)
        key = self.srv.cli("key", "create", "--user", "hank", "--scope", "read",
                           "--expires", "2027-01-01").stdout.strip()
        self.srv.keys.append(key)
        self.assertEqual(self.req("GET", API + "/usage", key=key).json["data"]["images"], {"used": 0, "limit": 3})
        self.assertEqual(self.req("POST", API + "/documents", key=key, form={"name": "n", "prompt": "p"}).status, 403)
        listing = self.srv.cli("key", "list").stdout
        self.assertRegex(listing, r"hank\s+ink_\w+\s+read\s+\S+\s+2027-01-01T00:00:00.000000Z\s+active")
        for bad in (["--scope", "root"], ["--expires", "2020-01-01"], ["--expires", "soon"]):
            p = self.srv.cli("key", "create", "--user", "hank", *bad, check=False)
            self.assertEqual(p.returncode, 2, bad)
            self.assertEqual(p.stdout, "")
        self.assertIn("hank", self.srv.cli("user", "show", "hank").stdout)
        self.assertIn("2026-11", self.srv.cli("usage").stdout)
        self.assertIn("2026-10", self.srv.cli("usage", "--period", "2026-10").stdout)
        self.assertEqual(self.srv.cli("usage", "--period", "2026-13", check=False).returncode, 2)
        self.assertEqual(self.srv.cli("user", "delete", "hank").returncode, 0)
        self.assertError(self.req("GET", API + "/usage", key=key), 401)
        self.assertEqual(self.srv.cli("user", "show", "hank", check=False).returncode, 1)


class ProviderTokens(unittest.TestCase):
    """Tokens as the provider reported them (the fake OpenAI-compatible server), summed in
    GET /usage and counted by provider in the metrics; words too."""

    def test_tokens_counted(self):
        from test_openai import Fake, SECRET
        fake = Fake()
        srv = Server("--provider", "openai", "--openai-base-url", fake.base + "/v1",
                     env={"OPENAI_API_KEY": SECRET, "INKWELL_TEST_NOW": NOW}).start()
        try:
            key = srv.key("tok")
            fake.script(chat=[{"pieces": ["one ", "two ", "three"], "usage": {"prompt_tokens": 11, "completion_tokens": 5}},
                              {"pieces": ["four five"], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}])
            docs = []
            for i in range(2):
                r = srv.request("POST", API + "/documents", key=key, form={"name": f"t{i}", "prompt": "p"})
                self.assertEqual(r.status, 201, r)
                docs.append(r.json["data"])
            self.assertEqual([d["usage"] for d in docs], [{"prompt_tokens": 11, "completion_tokens": 5},
                                                          {"prompt_tokens": 7, "completion_tokens": 2}])
            u = srv.request("GET", API + "/usage", key=key).json["data"]
            self.assertEqual(u["tokens"], {"prompt": 18, "completion": 7})
            self.assertEqual(u["words"]["used"], 5)
            m = parse_metrics(srv.request("GET", "/metrics").body.decode())
            self.assertEqual(value(m, "inkwell_generated_tokens_total", provider="openai", type="prompt"), 18)
            self.assertEqual(value(m, "inkwell_generated_tokens_total", provider="openai", type="completion"), 7)
            self.assertEqual(value(m, "inkwell_generated_words_total", provider="openai"), 5)
        finally:
            self.assertEqual(srv.stop(), 0)
            fake.stop()


class MonthEnd(unittest.TestCase):
    """The month's end, with the settable clock: usage starts again at zero, quotas
    allow again, last month's usage stays readable; a key past its expiry is refused."""

    def test_month_boundary_and_expiry(self):
        srv = Server(env={"INKWELL_TEST_NOW": NOW}).start()
        try:
            admin = srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
            srv.keys.append(admin)
            u = srv.request("POST", API + "/admin/users", key=admin, form={"name": "ivy", "quota_words": "1"}).json["data"]
            r = srv.request("POST", f"{API}/admin/users/{u['id']}/keys", key=admin, form={})
            key = r.json["data"]["key"]
            r = srv.request("POST", f"{API}/admin/users/{u['id']}/keys", key=admin,
                            form={"expires_at": "2026-12-01T00:00:00Z"})
            short = r.json["data"]["key"]
            srv.keys += [key, short]
            self.assertEqual(srv.request("GET", API + "/usage", key=short).status, 200)
            doc = srv.request("POST", API + "/documents", key=key, form={"name": "n", "prompt": "p"}).json["data"]
            r = srv.request("POST", API + "/documents", key=key, form={"name": "n", "prompt": "p"})
            self.assertEqual(r.status, 403, r)
        finally:
            self.assertEqual(srv.stop(), 0)
        later = Server(data_dir=srv.data_dir, database=srv.database,
                       env={"INKWELL_TEST_NOW": "2026-12-01T00:00:30Z"})
        later.keys = srv.keys
        later.start()
        try:
            r = later.request("GET", API + "/usage", key=key)
            self.assertEqual(r.json["data"]["period"], "2026-12")
            self.assertEqual(r.json["data"]["words"], {"used": 0, "limit": 1})
            self.assertEqual(later.request("POST", API + "/documents", key=key,
                                           form={"name": "n", "prompt": "p"}).status, 201)
            r = later.request("GET", API + "/usage", key=key)
            self.assertGreater(r.json["data"]["words"]["used"], 0)
            r = later.request("GET", API + "/admin/usage?period=2026-11", key=admin)
            nov = [x for x in r.json["data"] if x["user_id"] == u["id"]]
            self.assertEqual(nov[0]["words"]["used"], doc["words"])
            r = later.request("GET", API + "/usage", key=short)  # expired at midnight
            self.assertEqual(r.status, 401, r)
            self.assertEqual(r.json, {"message": "Unauthenticated.", "status": 401})
            self.assertEqual(r.header("WWW-Authenticate"), "Bearer")
            keys = later.request("GET", f"{API}/admin/users/{u['id']}/keys", key=admin).json["data"]
            self.assertEqual([k["expires_at"] for k in keys], [None, "2026-12-01T00:00:00.000000Z"])
        finally:
            self.assertEqual(later.stop(), 0)


if __name__ == "__main__":
    unittest.main()
