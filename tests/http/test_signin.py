"""People sign in (API.md §21), black-box on either backend (INKWELL_TEST_BACKEND):
passwords (NFC, 8 to 1024 bytes, Argon2id) and roles, the CSRF cookie and its 419,
sign-in by password and by key, the session cookie on every route (its scope, the
order 429 401 419 403, Authorization alone deciding), sign-out, a new session at every
sign-in, idle and absolute expiry (a clock moved on by INKWELL_TEST_CLOCK_FILE), the
user's sessions, own password and own keys, sessions ended by an admin's or the command
line's password, by user deletion and by the revocation of the key a session was made
from, the failed sign-in limits (per name, per address and IPv6 /64, only failures
counted), __Host- cookies over https, no CORS, and no secret in any log."""
import datetime
import os
import re
import subprocess
import tempfile
import unittest

from harness import BIN, Server, ServerTest, wait_for

API = "/api/v1"
PW = {"carol": "carol's long passphrase", "dave": "dave-secret-42", "erin2": "erin's password"}
BAD_CREDS = {"message": "These credentials do not match our records.", "status": 401}
MISMATCH = {"message": "CSRF token mismatch.", "status": 419}


class Browser:
    """A cookie jar speaking to one server, as a browser does (the X-XSRF-TOKEN header
    copied from the XSRF-TOKEN cookie on unsafe methods, as the web app does)."""

    def __init__(self, srv, https=False, ua="test-browser/1.0"):
        self.srv = srv
        self.jar = {}
        self.ua = ua
        self.session_name = "__Host-inkwell_session" if https else "inkwell_session"
        self.xsrf_name = "__Host-XSRF-TOKEN" if https else "XSRF-TOKEN"
        self.set_cookies = []  # every Set-Cookie seen, as sent

    def absorb(self, r):
        for k, v in r.headers:
            if k.lower() != "set-cookie":
                continue
            self.set_cookies.append(v)
            name, _, rest = v.partition("=")
            value = rest.split(";", 1)[0]
            if re.search(r"(?i)max-age=0(;|$)", v):
                self.jar.pop(name, None)
            else:
                self.jar[name] = value
                if name == self.session_name:
                    self.srv.keys.append(value)  # never in a log
        return r

    @property
    def session(self):
        return self.jar.get(self.session_name)

    @property
    def xsrf(self):
        return self.jar.get(self.xsrf_name)

    def req(self, method, path, form=None, xsrf=True, headers=None, key=None, **kw):
        h = {"User-Agent": self.ua}
        if self.jar:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        if xsrf and self.xsrf and method not in ("GET", "HEAD"):
            h["X-XSRF-TOKEN"] = self.xsrf
        h.update(headers or {})
        return self.absorb(self.srv.request(method, API + path, form=form, key=key, headers=h, **kw))

    def csrf(self):
        r = self.req("GET", "/session/csrf")
        assert r.status == 204, r
        return r

    def sign_in(self, name, password, **kw):
        if not self.xsrf:
            self.csrf()
        if len(password) >= 8:  # (a shorter one is found anywhere in a log by chance)
            self.srv.keys.append(password)
        return self.req("POST", "/session", form={"name": name, "password": password}, **kw)

    def sign_in_key(self, key):
        if not self.xsrf:
            self.csrf()
        return self.req("POST", "/session", form={"key": key})


def set_password(srv, name, password):
    """inkwell user set-password NAME, the password on standard input."""
    srv.keys.append(password)
    p = subprocess.run([BIN, "user", "set-password", name] + srv.storage_args(),
                       input=password + "\n", capture_output=True, text=True, env=srv.env)
    assert p.returncode == 0, p.stderr
    assert password not in p.stderr and password not in p.stdout
    return p


def cookie_attrs(set_cookies, name):
    """The attributes of the last Set-Cookie of name, lower-cased, as a dict."""
    for v in reversed(set_cookies):
        if v.startswith(name + "="):
            parts = [p.strip() for p in v.split(";")]
            out = {"value": parts[0].split("=", 1)[1]}
            for p in parts[1:]:
                k, _, val = p.partition("=")
                out[k.lower()] = val
            return out
    return None


class SigninTest(ServerTest):
    """One server: carol (admin) and dave (member) with passwords, erin without one,
    alice and bob with keys. Its clock is moved on by a file (INKWELL_TEST_CLOCK_FILE)."""

    @classmethod
    def setUpClass(cls):
        fd, cls.clock = tempfile.mkstemp(prefix="inkwell-clock-")
        os.write(fd, b"0\n")
        os.close(fd)
        cls.srv = Server("--session-idle", "300", "--session-max", "900",
                         env={"INKWELL_TEST_CLOCK_FILE": cls.clock}).start()
        cls.alice = cls.srv.key("alice")
        cls.bob = cls.srv.key("bob")
        cls.admin = cls.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.srv.keys.append(cls.admin)
        cls.srv.cli("user", "create", "carol", "--role", "admin")
        cls.srv.cli("user", "create", "dave")
        cls.srv.cli("user", "create", "erin")
        for name in ("carol", "dave"):
            cls.set_password_cli(name, PW[name])

    @classmethod
    def set_password_cli(cls, name, password):
        return set_password(cls.srv, name, password)

    def setUp(self):
        self.set_clock(0)

    def set_clock(self, seconds):
        with open(self.clock, "w") as f:
            f.write(f"{seconds}\n")

    def a(self, method, path, **kw):
        return self.srv.request(method, API + path, key=self.admin, **kw)

    def user_id(self, name):
        r = self.a("GET", "/admin/users?per_page=100")
        return next(u["id"] for u in r.json["data"] if u["name"] == name)

    def signed_in(self, name="dave", **kw):
        b = Browser(self.srv, **kw)
        r = b.sign_in(name, PW[name])
        self.assertEqual(r.status, 200, r)
        return b

    # ---- the CSRF cookie and sign-in ----

    def test_csrf_cookie(self):
        b = Browser(self.srv)
        r = b.csrf()
        self.assertEqual(r.body, b"")
        c = cookie_attrs(b.set_cookies, "XSRF-TOKEN")
        self.assertRegex(c["value"], r"^[A-Za-z0-9_-]{43}$")
        self.assertEqual(c["path"], "/")
        self.assertEqual(c["samesite"], "Lax")
        self.assertNotIn("httponly", c)  # scripts read it
        self.assertNotIn("secure", c)  # over http
        self.assertIsNone(r.header("Access-Control-Allow-Origin"))

    def test_signin_needs_the_token(self):
        b = Browser(self.srv)
        form = {"name": "dave", "password": PW["dave"]}
        r = b.req("POST", "/session", form=form)  # no cookie, no header
        self.assertEqual((r.status, r.json), (419, MISMATCH))
        b.csrf()
        r = b.req("POST", "/session", form=form, xsrf=False)
        self.assertEqual((r.status, r.json), (419, MISMATCH))
        r = b.req("POST", "/session", form=form, headers={"X-XSRF-TOKEN": "x" * 43})
        self.assertEqual((r.status, r.json), (419, MISMATCH))
        self.assertIsNone(b.session)
        r = b.req("POST", "/session", form=form)
        self.assertEqual(r.status, 200, r)

    def test_signin_with_password(self):
        b = Browser(self.srv)
        r = b.sign_in("dave", PW["dave"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Cache-Control"), "no-store")
        d = r.json["data"]
        self.assertEqual(d["user"]["name"], "dave")
        self.assertEqual(d["user"]["role"], "member")
        self.assertIsNone(d["key"])
        self.assertEqual((d["auth"], d["role"], d["scope"]), ("session", "member", "write"))
        s = cookie_attrs(b.set_cookies, "inkwell_session")
        self.assertRegex(s["value"], r"^[A-Za-z0-9_-]{43}$")
        self.assertNotIn(s["value"].encode(), r.body)
        self.assertIn("httponly", s)
        self.assertEqual((s["path"], s["samesite"], s["max-age"]), ("/", "Lax", "900"))
        x = cookie_attrs(b.set_cookies, "XSRF-TOKEN")
        self.assertNotIn("httponly", x)
        self.assertEqual(x["max-age"], "900")
        r = b.req("GET", "/me")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["auth"], "session")
        self.assertEqual(r.json["data"]["user"]["name"], "dave")
        # the same token however often the page asks for it (one per session)
        token = b.xsrf
        b.csrf()
        self.assertEqual(b.xsrf, token)

    def test_wrong_credentials_answer_alike(self):
        b = Browser(self.srv)
        for name, pw in (("dave", "not dave's password"), ("nobody-here", "whatever123"),
                         ("erin", "erin has none"), ("dave", "short")):
            with self.subTest(name=name):
                r = b.sign_in(name, pw)
                self.assertEqual((r.status, r.json), (401, BAD_CREDS))
                self.assertIsNone(b.session)
        r = b.req("POST", "/session", form={"name": "dave"})
        self.assertEqual(r.status, 422, r)
        self.assertIn("password", r.json["message"])

    def test_new_session_at_each_signin(self):
        b = self.signed_in()
        first = b.session
        r = b.sign_in("dave", PW["dave"])
        self.assertEqual(r.status, 200, r)
        self.assertNotEqual(b.session, first)
        old = Browser(self.srv)
        old.jar = {"inkwell_session": first}
        self.assertEqual(old.req("GET", "/me").status, 401)
        self.assertEqual(b.req("GET", "/me").status, 200)

    def test_sign_out(self):
        b = self.signed_in()
        sid = b.session
        r = b.req("DELETE", "/session", xsrf=False)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(cookie_attrs(b.set_cookies, "inkwell_session")["max-age"], "0")
        self.assertEqual(cookie_attrs(b.set_cookies, "XSRF-TOKEN")["max-age"], "0")
        self.assertIsNone(b.session)
        old = Browser(self.srv)
        old.jar = {"inkwell_session": sid}
        r = old.req("GET", "/documents")
        self.assertEqual((r.status, r.json["message"]), (401, "Unauthenticated."))
        # always 200, with or without a session
        self.assertEqual(old.req("DELETE", "/session", xsrf=False).status, 200)
        self.assertEqual(Browser(self.srv).req("DELETE", "/session").status, 200)

    # ---- the cookie on the API ----

    def test_cookie_changes_need_the_token(self):
        b = self.signed_in()
        self.assertEqual(b.req("GET", "/documents").status, 200)
        form = {"name": "By cookie", "prompt": "a note about tea"}
        r = b.req("POST", "/documents", form=form, xsrf=False)
        self.assertEqual((r.status, r.json), (419, MISMATCH))
        r = b.req("POST", "/documents", form=form, headers={"X-XSRF-TOKEN": b.xsrf[:-1] + ("B" if b.xsrf.endswith("A") else "A")})
        self.assertEqual((r.status, r.json), (419, MISMATCH))
        # the pre-session token of another browser is not this session's
        other = Browser(self.srv)
        other.csrf()
        r = b.req("POST", "/documents", form=form, headers={"X-XSRF-TOKEN": other.xsrf})
        self.assertEqual(r.status, 419)
        r = b.req("POST", "/documents", form=form)
        self.assertEqual(r.status, 201, r)
        doc = r.json["data"]
        for method in ("PATCH", "PUT", "DELETE"):
            r = b.req(method, f"/documents/{doc['id']}", form={"name": "x"}, xsrf=False)
            self.assertEqual(r.status, 419, (method, r))
        self.assertEqual(b.req("DELETE", f"/documents/{doc['id']}").status, 200)
        # dave's records are dave's: alice's key does not see them
        self.assertEqual(self.req("GET", f"{API}/documents/{doc['id']}").status, 404)

    def test_authorization_alone_decides(self):
        b = self.signed_in()
        r = b.req("GET", "/me", headers={"Authorization": "Bearer ink_" + "0" * 64})
        self.assertEqual(r.status, 401)
        r = b.req("GET", "/me", key=self.bob)
        self.assertEqual((r.status, r.json["data"]["user"]["name"], r.json["data"]["auth"]),
                         (200, "bob", "key"))
        # a key's change needs no CSRF token even with a cookie beside it
        r = b.req("POST", "/documents", form={"name": "k", "prompt": "tea"}, xsrf=False, key=self.bob)
        self.assertEqual(r.status, 201, r)

    def test_order_401_419_403(self):
        reader = self.srv.cli("key", "create", "--user", "alice", "--scope", "read").stdout.strip()
        self.srv.keys.append(reader)
        b = Browser(self.srv)
        r = b.sign_in_key(reader)
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["scope"], r.json["data"]["auth"]), ("read", "session"))
        self.assertEqual(r.json["data"]["key"]["scope"], "read")
        form = {"name": "n", "prompt": "p"}
        self.assertEqual(b.req("POST", "/documents", form=form, xsrf=False).status, 419)
        r = b.req("POST", "/documents", form=form)
        self.assertEqual((r.status, r.json["message"]), (403, "This key may only read."))
        self.assertEqual(b.req("GET", "/documents").status, 200)
        # an ended session: 401 before the token is looked at
        sid = b.session
        b.req("DELETE", "/session")
        gone = Browser(self.srv)
        gone.jar = {"inkwell_session": sid}
        self.assertEqual(gone.req("POST", "/documents", form=form, xsrf=False).status, 401)

    def test_admin_session_uses_both(self):
        b = self.signed_in("carol")
        me = b.req("GET", "/me").json["data"]
        self.assertEqual((me["role"], me["scope"]), ("admin", "admin"))
        self.assertEqual(b.req("GET", "/documents").status, 200)
        self.assertEqual(b.req("GET", "/admin/users").status, 200)
        r = b.req("POST", "/documents", form={"name": "admin's", "prompt": "tea"})
        self.assertEqual(r.status, 201, r)
        # a session made from an admin key has that key's scope: admin routes only
        k = Browser(self.srv)
        self.assertEqual(k.sign_in_key(self.admin).status, 200)
        self.assertEqual(k.req("GET", "/admin/users").status, 200)
        self.assertEqual(k.req("GET", "/documents").status, 403)

    def test_key_session_ends_with_its_key(self):
        key = self.srv.key("frank")
        b = Browser(self.srv)
        r = b.sign_in_key(key)
        self.assertEqual(r.status, 200, r)
        kid = r.json["data"]["key"]["id"]
        self.assertEqual(b.req("GET", "/documents").status, 200)
        self.assertEqual(self.a("DELETE", f"/admin/keys/{kid}").status, 200)
        self.assertEqual(b.req("GET", "/documents").status, 401)
        # a wrong key: the same 401 as a wrong password
        r = Browser(self.srv).sign_in_key("ink_" + "1" * 64)
        self.assertEqual((r.status, r.json), (401, BAD_CREDS))

    # ---- roles and passwords ----

    def test_roles(self):
        users = {u["name"]: u for u in self.a("GET", "/admin/users?per_page=100").json["data"]}
        self.assertEqual(users["root"]["role"], "admin")  # key create --scope admin
        self.assertEqual(users["carol"]["role"], "admin")  # user create --role admin
        self.assertEqual(users["alice"]["role"], "member")
        r = self.a("POST", "/admin/users", form={"name": "gina", "role": "admin"})
        self.assertEqual((r.status, r.json["data"]["role"]), (201, "admin"))
        r = self.a("PATCH", f"/admin/users/{r.json['data']['id']}", form={"role": "member"})
        self.assertEqual((r.status, r.json["data"]["role"]), (200, "member"))
        r = self.a("PATCH", f"/admin/users/{r.json['data']['id']}", form={"role": "owner"})
        self.assertEqual(r.status, 422)
        self.assertIn("role", r.json["message"])

    def test_password_lengths_and_nfc(self):
        r = self.a("POST", "/admin/users", form={"name": "hugo"})
        uid = r.json["data"]["id"]
        for pw in ("ééé", "x" * 7, "y" * 1025, "é" * 513):
            with self.subTest(n=len(pw.encode())):
                r = self.a("PATCH", f"/admin/users/{uid}", form={"password": pw})
                self.assertEqual(r.status, 422, r)
                self.assertIn("password", r.json["message"])
        composed = "caf\u00e9 au lait"  # NFC
        r = self.a("PATCH", f"/admin/users/{uid}", form={"password": composed})
        self.assertEqual((r.status, r.json["data"]["name"]), (200, "hugo"))
        self.srv.keys.append(composed)
        r = Browser(self.srv).sign_in("hugo", "cafe\u0301 au lait")  # the same after NFC
        self.assertEqual(r.status, 200, r)
        r = self.a("PATCH", f"/admin/users/{uid}", form={"password": "z" * 1024})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(Browser(self.srv).sign_in("hugo", "z" * 1024).status, 200)

    def test_admin_password_ends_every_session(self):
        r = self.a("POST", "/admin/users", form={"name": "ivy"})
        uid = r.json["data"]["id"]
        self.assertEqual(self.a("PATCH", f"/admin/users/{uid}",
                                form={"password": "ivy's first one"}).status, 200)
        self.srv.keys.append("ivy's first one")
        one, two = Browser(self.srv), Browser(self.srv)
        self.assertEqual(one.sign_in("ivy", "ivy's first one").status, 200)
        self.assertEqual(two.sign_in("ivy", "ivy's first one").status, 200)
        r = self.a("PATCH", f"/admin/users/{uid}", form={"password": "ivy's second", "quota_words": "5"})
        self.srv.keys.append("ivy's second")
        self.assertEqual((r.status, r.json["data"]["quota_words"]), (200, 5))
        self.assertEqual(one.req("GET", "/me").status, 401)
        self.assertEqual(two.req("GET", "/me").status, 401)
        self.assertEqual(Browser(self.srv).sign_in("ivy", "ivy's first one").status, 401)
        self.assertEqual(Browser(self.srv).sign_in("ivy", "ivy's second").status, 200)
        self.assertEqual(self.a("PATCH", "/admin/users/999999", form={"password": "whatever1"}).status, 404)

    def test_cli_password_ends_every_session(self):
        self.srv.cli("user", "create", "jack")
        self.set_password_cli("jack", "jack's first pw")
        b = Browser(self.srv)
        self.assertEqual(b.sign_in("jack", "jack's first pw").status, 200)
        p = self.set_password_cli("jack", "jack's second pw")
        self.assertIn("1 session", p.stderr)
        self.assertEqual(b.req("GET", "/me").status, 401)
        self.assertEqual(Browser(self.srv).sign_in("jack", "jack's second pw").status, 200)

    def test_own_password_change(self):
        self.srv.cli("user", "create", "kim")
        self.set_password_cli("kim", "kim's old password")
        here, there = Browser(self.srv), Browser(self.srv)
        self.assertEqual(here.sign_in("kim", "kim's old password").status, 200)
        self.assertEqual(there.sign_in("kim", "kim's old password").status, 200)
        r = here.req("PUT", "/me/password", form={"current": "not it at all", "password": "kim's new password"})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(list(r.json["message"]), ["current"])
        r = here.req("PUT", "/me/password", form={"current": "kim's old password", "password": "short"})
        self.assertEqual(r.status, 422, r)
        self.assertIn("password", r.json["message"])
        r = here.req("PUT", "/me/password", form={"current": "kim's old password",
                                                   "password": "kim's new password"}, xsrf=False)
        self.assertEqual(r.status, 419)
        self.srv.keys.append("kim's new password")
        r = here.req("PUT", "/me/password", form={"current": "kim's old password",
                                                   "password": "kim's new password"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["user"]["name"], "kim")
        self.assertEqual(here.req("GET", "/me").status, 200)  # this one goes on
        self.assertEqual(there.req("GET", "/me").status, 401)  # every other ends
        self.assertEqual(Browser(self.srv).sign_in("kim", "kim's old password").status, 401)
        self.assertEqual(Browser(self.srv).sign_in("kim", "kim's new password").status, 200)

    def test_user_deletion_ends_sessions(self):
        r = self.a("POST", "/admin/users", form={"name": "leo"})
        uid = r.json["data"]["id"]
        self.a("PATCH", f"/admin/users/{uid}", form={"password": "leo's password"})
        self.srv.keys.append("leo's password")
        b = Browser(self.srv)
        self.assertEqual(b.sign_in("leo", "leo's password").status, 200)
        self.assertEqual(self.a("DELETE", f"/admin/users/{uid}").status, 200)
        self.assertEqual(b.req("GET", "/me").status, 401)
        r = Browser(self.srv).sign_in("leo", "leo's password")
        self.assertEqual((r.status, r.json), (401, BAD_CREDS))

    # ---- the user's sessions ----

    def test_my_sessions(self):
        self.srv.cli("user", "create", "mia")
        self.set_password_cli("mia", "mia's password")
        here = Browser(self.srv, ua="Here/1.0")
        there = Browser(self.srv, ua="There/2.0")
        self.assertEqual(here.sign_in("mia", "mia's password").status, 200)
        self.assertEqual(there.sign_in("mia", "mia's password").status, 200)
        r = here.req("GET", "/me/sessions")
        self.assertEqual(r.status, 200, r)
        rows = r.json["data"]
        self.assertEqual(r.json["meta"]["total"], 2)
        self.assertEqual(sorted(s["user_agent"] for s in rows), ["Here/1.0", "There/2.0"])
        self.assertEqual([s["user_agent"] for s in rows if s["current"]], ["Here/1.0"])
        for s in rows:
            self.assertEqual(set(s), {"id", "created_at", "last_seen_at", "user_agent", "current"})
        self.assertEqual(here.req("DELETE", "/me/sessions", xsrf=False).status, 419)
        r = here.req("DELETE", "/me/sessions")
        self.assertEqual((r.status, r.json), (200, {"data": {"ended": 1}, "status": 200}))
        self.assertEqual(there.req("GET", "/me").status, 401)
        self.assertEqual(here.req("GET", "/me/sessions").json["meta"]["total"], 1)

    # ---- the user's own keys ----

    def test_own_keys(self):
        b = self.signed_in()
        r = b.req("GET", "/keys")
        self.assertEqual(r.status, 200, r)
        before = r.json["meta"]["total"]
        r = b.req("POST", "/keys", form={"scope": "admin"})
        self.assertEqual(r.status, 422)
        self.assertEqual(list(r.json["message"]), ["scope"])
        r = b.req("POST", "/keys", form={"name": "n" * 101})
        self.assertEqual(r.status, 422)
        self.assertIn("name", r.json["message"])
        r = b.req("POST", "/keys", form={"scope": "read", "name": "laptop"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.header("Cache-Control"), "no-store")
        k = r.json["data"]
        self.srv.keys.append(k["key"])
        self.assertEqual(k["scope"], "read")
        self.assertTrue(k["key"].startswith(k["prefix"]))
        r = self.srv.request("GET", API + "/me", key=k["key"])
        self.assertEqual(r.json["data"]["user"]["name"], "dave")
        self.assertEqual(k["name"], "laptop")
        r = b.req("GET", "/keys")
        self.assertEqual(r.json["meta"]["total"], before + 1)
        self.assertNotIn(k["key"].encode(), r.body)
        # the name is kept: in the key lists, /me and the admin's list of the user's keys
        self.assertEqual([x["name"] for x in r.json["data"] if x["id"] == k["id"]], ["laptop"])
        r = self.srv.request("GET", API + "/me", key=k["key"])
        self.assertEqual(r.json["data"]["key"]["name"], "laptop")
        uid = r.json["data"]["user"]["id"]
        r = self.a("GET", f"/admin/users/{uid}/keys")
        self.assertEqual([x["name"] for x in r.json["data"] if x["id"] == k["id"]], ["laptop"])
        # a name of any script, kept as given; none given (or empty) is null
        r = b.req("POST", "/keys", json_body={"name": "ノート 💻"})
        self.assertEqual((r.status, r.json["data"]["name"]), (201, "ノート 💻"), r)
        self.srv.keys.append(r.json["data"]["key"])
        r = b.req("POST", "/keys", form={"name": ""})
        self.assertEqual((r.status, r.json["data"]["name"]), (201, None), r)
        self.srv.keys.append(r.json["data"]["key"])
        # another user's key answers as a missing one
        other = self.srv.request("GET", API + "/me", key=self.alice).json["data"]["key"]["id"]
        self.assertEqual(b.req("DELETE", f"/keys/{other}").status, 404)
        self.assertEqual(b.req("DELETE", "/keys/999999").status, 404)
        r = b.req("DELETE", f"/keys/{k['id']}")
        self.assertEqual((r.status, r.json["data"]["revoked"]), (200, True))
        self.assertEqual(self.srv.request("GET", API + "/me", key=k["key"]).status, 401)
        # an admin key makes no own keys (it sees no records)
        self.assertEqual(self.a("GET", "/keys").status, 403)

    def test_keys_made_by_a_key_end_with_it(self):
        r = self.a("POST", "/admin/users", form={"name": "nora"})
        uid = r.json["data"]["id"]
        r = self.a("POST", f"/admin/users/{uid}/keys", form={"expires_at": "2099-01-01T00:00:00Z"})
        parent = r.json["data"]["key"]
        self.srv.keys.append(parent)
        r = self.srv.request("POST", API + "/keys", key=parent, form={"expires_at": "2100-01-01T00:00:00Z"})
        self.assertEqual(r.status, 422, r)
        self.assertIn("expires_at", r.json["message"])
        r = self.srv.request("POST", API + "/keys", key=parent, form={})
        self.assertEqual((r.status, r.json["data"]["expires_at"]), (201, "2099-01-01T00:00:00.000000Z"))
        self.srv.keys.append(r.json["data"]["key"])
        b = Browser(self.srv)
        self.assertEqual(b.sign_in_key(parent).status, 200)
        r = b.req("POST", "/keys", form={"expires_at": "2098-01-01"})
        self.assertEqual((r.status, r.json["data"]["expires_at"]), (201, "2098-01-01T00:00:00.000000Z"))
        self.srv.keys.append(r.json["data"]["key"])
        self.assertEqual(b.req("POST", "/keys", form={"expires_at": "2099-06-01"}).status, 422)

    # ---- expiry ----

    def test_idle_and_absolute_expiry(self):
        b = self.signed_in()
        self.set_clock(200)  # idle 300: still alive, and seen now
        self.assertEqual(b.req("GET", "/me").status, 200)
        self.set_clock(450)  # 250 s since last seen
        self.assertEqual(b.req("GET", "/me").status, 200)
        self.set_clock(751)  # 301 s without a request
        self.assertEqual(b.req("GET", "/me").status, 401)
        # absolute: 900 s however busy
        self.set_clock(0)
        b = self.signed_in()
        for t in (250, 500, 750, 899):
            self.set_clock(t)
            self.assertEqual(b.req("GET", "/me").status, 200, t)
        self.set_clock(901)
        self.assertEqual(b.req("GET", "/me").status, 401)

    def test_session_of_an_expiring_key(self):
        r = self.a("POST", "/admin/users", form={"name": "olga"})
        uid = r.json["data"]["id"]
        at = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=120))
        r = self.a("POST", f"/admin/users/{uid}/keys", form={"expires_at": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
        key = r.json["data"]["key"]
        self.srv.keys.append(key)
        b = Browser(self.srv)
        self.assertEqual(b.sign_in_key(key).status, 200)
        self.assertEqual(b.req("GET", "/documents").status, 200)
        self.set_clock(200)
        self.assertEqual(b.req("GET", "/documents").status, 401)

    # ---- other ----

    def test_no_cors(self):
        b = self.signed_in()
        for method, path in (("GET", "/me"), ("OPTIONS", "/me"), ("GET", "/session/csrf")):
            r = b.req(method, path, headers={"Origin": "https://evil.example"})
            for k, _ in r.headers:
                self.assertFalse(k.lower().startswith("access-control-"), (method, path, k))


class HttpsCookies(unittest.TestCase):
    def test_host_prefixed_and_secure(self):
        srv = Server("--public-url", "https://ink.example.com").start()
        try:
            srv.cli("user", "create", "pia")
            set_password(srv, "pia", "pia's password!")
            b = Browser(srv, https=True)
            r = b.sign_in("pia", "pia's password!")
            self.assertEqual(r.status, 200, r)
            for name in ("__Host-inkwell_session", "__Host-XSRF-TOKEN"):
                c = cookie_attrs(b.set_cookies, name)
                self.assertIsNotNone(c, name)
                self.assertIn("secure", c)
                self.assertEqual(c["path"], "/")
                self.assertNotIn("domain", c)
            self.assertEqual(b.req("GET", "/me").status, 200)
            self.assertFalse(any(v.startswith("inkwell_session=") for v in b.set_cookies))
        finally:
            self.assertEqual(srv.stop(), 0)


class PasswordPool(unittest.TestCase):
    """Password checks run on a bounded pool off the HTTP threads: with its one place
    held (INKWELL_TEST_SIGNIN_HOLD), another sign-in is refused at once with 429 and
    Retry-After, and other requests are answered meanwhile; released, the held one
    ends as it should."""

    def test_full_pool_refuses_at_once_and_starves_nothing(self):
        hold = tempfile.mktemp(prefix="inkwell-signin-hold-")
        srv = Server("--signin-threads", "1", "--signin-max", "1", "--threads", "2",
                     env={"INKWELL_TEST_SIGNIN_HOLD": hold}).start()
        try:
            srv.cli("user", "create", "sam")
            set_password(srv, "sam", "sam's password")
            key = srv.key("other")
            held = {}

            def first():
                held["r"] = Browser(srv).sign_in("sam", "sam's password")

            import threading
            t = threading.Thread(target=first)
            t.start()
            wait_for(lambda: os.path.exists(hold + ".log"), "the held check")
            r = Browser(srv).sign_in("sam", "sam's password")
            self.assertEqual((r.status, r.json["message"]), (429, "Too Many Attempts."))
            self.assertEqual(r.header("Retry-After"), "1")
            for _ in range(5):  # the HTTP threads are free: nothing waits on the check
                self.assertEqual(srv.request("GET", API + "/documents", key=key).status, 200)
            open(hold, "w").close()
            t.join()
            self.assertEqual(held["r"].status, 200, held["r"])
            # a refused sign-in is no failure: the name may sign in again at once
            self.assertEqual(Browser(srv).sign_in("sam", "sam's password").status, 200)
        finally:
            self.assertEqual(srv.stop(), 0)
            for p in (hold, hold + ".log"):
                if os.path.exists(p):
                    os.unlink(p)


class SigninLimits(unittest.TestCase):
    """Failed sign-ins: 5 a minute per name, 20 per client address (IPv6 by /64), 429
    with Retry-After for the rest of the minute, only failures counted. The clock stands
    still (INKWELL_TEST_NOW) so the minute never turns over during the test."""

    def setUp(self):
        self.srv = Server("--trusted-proxies", "127.0.0.1",
                          env={"INKWELL_TEST_NOW": "2026-11-29T10:00:20Z"}).start()
        for name in ("quinn", "rose"):
            self.srv.cli("user", "create", name)
            set_password(self.srv, name, f"{name}'s password")

    def tearDown(self):
        self.assertEqual(self.srv.stop(), 0)

    def attempt(self, name, pw, addr="192.0.2.1"):
        b = Browser(self.srv)
        b.csrf()
        return b.sign_in(name, pw, headers={"X-Forwarded-For": addr})

    def test_per_name(self):
        for _ in range(3):  # successes do not count
            self.assertEqual(self.attempt("quinn", "quinn's password").status, 200)
        # a 419 is no failed sign-in
        b = Browser(self.srv)
        for _ in range(6):
            self.assertEqual(b.req("POST", "/session", form={"name": "quinn", "password": "x"}).status, 419)
        for i in range(5):
            r = self.attempt("quinn", "wrong password", addr=f"192.0.2.{10 + i}")
            self.assertEqual(r.status, 401, (i, r))
        r = self.attempt("quinn", "quinn's password", addr="192.0.2.99")  # right, still refused
        self.assertEqual((r.status, r.json["message"]), (429, "Too Many Attempts."))
        self.assertEqual(r.header("Retry-After"), "40")  # the rest of the minute (10:00:20)
        self.assertEqual(self.attempt("rose", "rose's password", addr="192.0.2.99").status, 200)

    def test_per_address_and_ipv6_64(self):
        for i in range(20):
            addr = f"2001:db8:0:1::{i + 1:x}"  # one /64
            r = self.attempt(f"nobody{i}", "wrong password", addr=addr)
            self.assertEqual(r.status, 401, (i, r))
        r = self.attempt("rose", "rose's password", addr="2001:db8:0:1:ffff::1")
        self.assertEqual(r.status, 429, r)
        self.assertEqual(r.header("Retry-After"), "40")
        # another /64 and an IPv4 address are other clients
        self.assertEqual(self.attempt("rose", "rose's password", addr="2001:db8:0:2::1").status, 200)
        self.assertEqual(self.attempt("rose", "rose's password", addr="192.0.2.7").status, 200)


if __name__ == "__main__":
    unittest.main()
