"""Single sign-on (API.md §21) against a real OpenID provider: oidc-provider from the npm
registry (tests/oidc: pinned, `npm ci`, run on 127.0.0.1 with one client; its own
sign-in page driven with plain HTTP and a cookie jar). Black-box, on either backend
(INKWELL_TEST_BACKEND): the code flow with PKCE, state and nonce ending signed in; the
link by (iss, sub) set by an admin (PATCH /admin/users/{id} oidc_subject) and never by a
name; --oidc-create-users; and each failure — state mismatch (forged, another browser),
a replayed code, wrong audience, expired token, bad signature, wrong nonce, the issuer's
own error, a person not allowed — ending with no session and a 400 page saying why. The
provider changes ID tokens on request (tests/oidc/provider.mjs: re-signed with its own
key, so only the claim tested is wrong). No secret (client secret, codes, sessions) in
any log. One provider and two servers for the whole file."""
import os
import socket
import subprocess
import sys
import threading
import unittest
import urllib.parse

from harness import BIN, Server, free_port, record_exchange, record_secret

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "oidc"))
import oidcenv  # noqa: E402

API = "/api/v1"


def setUpModule():
    global PROVIDER, SRV, SRV_CREATE, ADMIN
    ports = [free_port(), free_port()]
    record_secret(oidcenv.CLIENT_SECRET)  # tests/secrets_check.py: in no server log
    PROVIDER = oidcenv.Provider([f"http://127.0.0.1:{p}/auth/oidc/callback" for p in ports]).start()

    def server(port, *extra):
        s = Server("--oidc-issuer", PROVIDER.issuer, "--oidc-client-id", oidcenv.CLIENT_ID,
                   "--public-url", f"http://127.0.0.1:{port}", *extra,
                   env={"INKWELL_OIDC_CLIENT_SECRET": oidcenv.CLIENT_SECRET})
        s.keys.append(oidcenv.CLIENT_SECRET)
        return s.start(port=port)
    SRV = server(ports[0])
    SRV_CREATE = server(ports[1], "--oidc-create-users")
    ADMIN = SRV.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
    SRV.keys.append(ADMIN)


def tearDownModule():
    try:
        for s in (SRV, SRV_CREATE):
            rc = s.stop()
            if rc != 0:
                raise AssertionError(f"server exited with {rc}: {s.read_log()[-2000:]}")
            log = s.read_log()
            assert oidcenv.CLIENT_SECRET not in log, "the client secret in the server log"
    finally:
        PROVIDER.stop()


def user_id(srv, key, name):
    r = srv.request("GET", API + "/admin/users?per_page=100", key=key)
    return next(u["id"] for u in r.json["data"] if u["name"] == name)


class OidcTest(unittest.TestCase):
    srv = None

    def setUp(self):
        self.srv = self.srv or SRV
        PROVIDER.tamper("")

    def browser(self):
        return oidcenv.Browser(record=record_exchange, record_prefix=self.srv.url(""))

    def to_callback(self, b, login):
        """A sign-in at the provider as login: the callback address it sends us to."""
        cb = b.sign_in_at_provider(self.srv.url("/auth/oidc/login"), login,
                                   self.srv.url("/auth/oidc/callback"))
        record_secret(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(cb).query))["code"])
        return cb

    def session_of(self, b):
        return b.cookie("inkwell_session")

    def me(self, b):
        cookie = "; ".join(f"{c.name}={c.value}" for c in b.jar if c.domain.startswith("127.0.0.1")
                           and c.port in (None, str(self.srv.port)))
        return self.srv.request("GET", API + "/me", headers={"Cookie": cookie})

    def assertRefused(self, a, b, why):
        self.assertEqual(a.status, 400, a.text[:500])
        self.assertIn("text/html", a.header("Content-Type"))
        self.assertEqual(a.header("Referrer-Policy"), "no-referrer")
        self.assertIn(why, a.text)
        self.assertIsNone(self.session_of(b), "a failed sign-in set a session")
        for v in a.headers.get_all("Set-Cookie") or []:
            self.assertFalse(v.startswith("inkwell_session="), v)

    def signed_in(self, a, b):
        self.assertEqual(a.status, 302, a.text[:500])
        self.assertEqual(a.header("Location"), "/")
        sid = self.session_of(b)
        self.assertTrue(sid)
        self.srv.keys.append(sid)
        record_secret(sid)
        self.assertIsNone(b.cookie("inkwell_oidc"), "the flow's cookie outlived its use")
        r = self.me(b)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]


class TestFlow(OidcTest):
    @classmethod
    def setUpClass(cls):
        SRV.cli("user", "create", "carol")
        SRV.cli("user", "create", "stranger")  # a local user named as a subject's login
        cls.carol = user_id(SRV, ADMIN, "carol")
        r = SRV.request("PATCH", f"{API}/admin/users/{cls.carol}", key=ADMIN,
                        form={"oidc_subject": "carol-at-idp"})
        assert r.status == 200, r

    def test_info_and_login_redirect(self):
        r = self.srv.request("GET", "/auth/oidc")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"], {"name": "127.0.0.1", "login_url": "/auth/oidc/login"})
        r = self.srv.request("GET", "/auth/oidc/login")
        self.assertEqual(r.status, 302, r)
        loc = r.header("Location")
        self.assertTrue(loc.startswith(PROVIDER.issuer + "/auth?"), loc)
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(loc).query))
        self.assertEqual(q["response_type"], "code")
        self.assertEqual(q["client_id"], oidcenv.CLIENT_ID)
        self.assertEqual(q["redirect_uri"], self.srv.url("/auth/oidc/callback"))
        self.assertEqual(q["code_challenge_method"], "S256")
        for k in ("state", "nonce", "code_challenge"):
            self.assertGreaterEqual(len(q[k]), 43, k)
        self.assertIn("openid", q["scope"].split())
        cookie = r.header("Set-Cookie")
        self.assertTrue(cookie.startswith("inkwell_oidc="), cookie)
        self.assertIn("HttpOnly", cookie)
        self.assertIn("Max-Age=600", cookie)
        # the redirect URI is --public-url's, never the Host's
        r = self.srv.request("GET", "/auth/oidc/login", headers={"Host": "evil.example",
                                                                 "X-Forwarded-Host": "evil.example"})
        self.assertNotIn("evil", r.header("Location"))

    def test_linked_user_signs_in(self):
        b = self.browser()
        cb = self.to_callback(b, "carol-at-idp")
        me = self.signed_in(b.get(cb), b)
        self.assertEqual(me["user"]["name"], "carol")
        self.assertEqual(me["auth"], "session")
        self.assertIsNone(me["key"])
        self.assertEqual(me["scope"], "write")

    def test_not_allowed(self):
        # "stranger" is a local user's name, and the subject's login: no link by name
        b = self.browser()
        a = b.get(self.to_callback(b, "stranger"))
        self.assertRefused(a, b, "not allowed")

    def test_state_mismatch(self):
        b = self.browser()
        cb = self.to_callback(b, "carol-at-idp")
        parts = urllib.parse.urlsplit(cb)
        q = dict(urllib.parse.parse_qsl(parts.query))
        forged = dict(q, state="A" * 43)
        a = b.get(self.srv.url("/auth/oidc/callback?" + urllib.parse.urlencode(forged)))
        self.assertRefused(a, b, "state mismatch")
        # the right state from another browser (a link sent to a victim)
        other = self.browser()
        b2 = self.browser()
        cb2 = self.to_callback(b2, "carol-at-idp")
        a = other.get(cb2)
        self.assertRefused(a, other, "another browser")
        self.assertIsNone(b2.cookie("inkwell_session"))

    def test_replayed_code(self):
        b = self.browser()
        cb = self.to_callback(b, "carol-at-idp")
        self.signed_in(b.get(cb), b)
        # the same callback again: its state is used up
        b2 = self.browser()
        for c in b.jar:
            if c.name == "inkwell_oidc":
                b2.jar.set_cookie(c)
        a = b2.get(cb)
        self.assertRefused(a, b2, "used already")
        # the code with a fresh sign-in's state and cookie: the provider refuses it
        b3 = self.browser()
        cb3 = self.to_callback(b3, "carol-at-idp")
        old = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(cb).query))
        new = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(cb3).query))
        a = b3.get(self.srv.url("/auth/oidc/callback?" + urllib.parse.urlencode(
            dict(new, code=old["code"]))))
        self.assertRefused(a, b3, "refused the code")

    def tampered(self, mode, why):
        PROVIDER.tamper(mode)
        b = self.browser()
        a = b.get(self.to_callback(b, "carol-at-idp"))
        self.assertRefused(a, b, why)

    def test_wrong_audience(self):
        self.tampered("aud", "another client (audience)")

    def test_expired_token(self):
        self.tampered("expired", "has expired")

    def test_bad_signature(self):
        self.tampered("signature", "signature does not verify")

    def test_wrong_nonce(self):
        self.tampered("nonce", "nonce")

    def test_issuer_error_escaped(self):
        b = self.browser()
        start = b.get(self.srv.url("/auth/oidc/login"))
        state = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(start.header("Location")).query))["state"]
        a = b.get(self.srv.url("/auth/oidc/callback?" + urllib.parse.urlencode(
            {"state": state, "error": "access_denied",
             "error_description": "<script>alert(1)</script> said no"})))
        self.assertRefused(a, b, "access_denied: &lt;script&gt;alert(1)&lt;/script&gt; said no")
        self.assertNotIn("<script>", a.text)

    def test_admin_links(self):
        SRV.cli("user", "create", "linkme")
        uid = user_id(SRV, ADMIN, "linkme")
        r = SRV.request("PATCH", f"{API}/admin/users/{uid}", key=ADMIN,
                        form={"oidc_subject": "carol-at-idp"})
        self.assertEqual(r.status, 422, r)
        self.assertIn("oidc_subject", r.json["message"])
        r = SRV.request("PATCH", f"{API}/admin/users/{uid}", key=ADMIN,
                        form={"oidc_subject": "linkme-sub"})
        self.assertEqual(r.status, 200, r)
        b = self.browser()
        self.assertEqual(self.signed_in(b.get(self.to_callback(b, "linkme-sub")), b)["user"]["name"],
                         "linkme")
        r = SRV.request("PATCH", f"{API}/admin/users/{uid}", key=ADMIN, form={"oidc_subject": ""})
        self.assertEqual(r.status, 200, r)
        b = self.browser()
        self.assertRefused(b.get(self.to_callback(b, "linkme-sub")), b, "not allowed")
        r = SRV.request("PATCH", f"{API}/admin/users/999999", key=ADMIN,
                        form={"oidc_subject": "x"})
        self.assertEqual(r.status, 404, r)


class TestCreateUsers(OidcTest):
    srv = None

    def setUp(self):
        self.srv = SRV_CREATE
        super().setUp()

    def test_new_member_named_from_claim(self):
        b = self.browser()
        me = self.signed_in(b.get(self.to_callback(b, "newperson")), b)
        self.assertEqual(me["user"]["name"], "newperson")
        self.assertEqual(me["role"], "member")
        # the same subject again: the same user
        b = self.browser()
        me2 = self.signed_in(b.get(self.to_callback(b, "newperson")), b)
        self.assertEqual(me2["user"]["id"], me["user"]["id"])

    def test_local_name_taken_is_not_linked(self):
        self.srv.cli("user", "create", "dave")
        b = self.browser()
        me = self.signed_in(b.get(self.to_callback(b, "dave")), b)
        self.assertEqual(me["user"]["name"], "dave-2")


class TestConfig(unittest.TestCase):
    def test_not_configured(self):
        srv = Server().start()
        try:
            r = srv.request("GET", "/auth/oidc")
            self.assertEqual((r.status, r.json), (200, {"data": None, "status": 200}))
            for path in ("/auth/oidc/login", "/auth/oidc/callback?state=x&code=y"):
                self.assertEqual(srv.request("GET", path).status, 404, path)
            admin = srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
            srv.keys.append(admin)
            uid = user_id(srv, admin, "root")
            r = srv.request("PATCH", f"{API}/admin/users/{uid}", key=admin,
                            form={"oidc_subject": "someone"})
            self.assertEqual(r.status, 422, r)
            self.assertIn("oidc_subject", r.json["message"])
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_starts_limited_per_address(self):
        # each start keeps a flow row for 10 minutes: --rate-limit bounds one address's
        # starts (the issuer here answers nothing: the allowed ones are the 502 page)
        srv = Server("--oidc-issuer", f"http://127.0.0.1:{free_port()}", "--oidc-client-id", "x",
                     "--rate-limit", "2").start()
        try:
            got = [srv.request("GET", "/auth/oidc/login") for _ in range(3)]
            self.assertEqual([r.status for r in got], [502, 502, 429])
            last = got[-1]
            self.assertTrue((last.header("Content-Type") or "").startswith("text/html"), last.headers)
            self.assertIn("Too many sign-ins", last.body.decode())
            self.assertGreaterEqual(int(last.header("Retry-After")), 1)
            self.assertIsNone(last.header("Location"))
            # another client's key still works (the limit is the address's, not the server's)
            key = srv.key("erin")
            self.assertEqual(srv.request("GET", API + "/documents", key=key).status, 200)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_slow_issuer_holds_no_http_thread(self):
        # an issuer that accepts and answers nothing until the test lets it go: with one
        # HTTP thread, /healthz is answered while a sign-in's start waits for it (the call
        # runs on the sign-in pool), and past --signin-max a start is refused at once
        lsock = socket.socket()
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(8)
        accepted, release, conns = threading.Event(), threading.Event(), []

        def issuer():
            while not release.is_set():
                try:
                    c, _ = lsock.accept()
                except OSError:
                    return
                conns.append(c)
                accepted.set()
        threading.Thread(target=issuer, daemon=True).start()
        srv = Server("--oidc-issuer", f"http://127.0.0.1:{lsock.getsockname()[1]}",
                     "--oidc-client-id", "x", "--threads", "1", "--signin-threads", "1",
                     "--signin-max", "1").start()
        try:
            got = {}
            t = threading.Thread(target=lambda: got.update(r=srv.request("GET", "/auth/oidc/login",
                                                                        timeout=60)))
            t.start()
            self.assertTrue(accepted.wait(30), "the issuer was never called")
            self.assertEqual(srv.request("GET", "/healthz").status, 200)
            self.assertTrue(t.is_alive(), "the start answered before /healthz: it held the HTTP thread")
            busy = srv.request("GET", "/auth/oidc/login")
            self.assertEqual(busy.status, 503, busy)
            self.assertGreaterEqual(int(busy.header("Retry-After")), 1)
            self.assertIn("Too many sign-ins", busy.body.decode())
            cb = srv.request("GET", "/auth/oidc/callback?state=x&code=y")  # refused before any use
            self.assertEqual(cb.status, 503, cb)
            self.assertTrue((cb.header("Content-Type") or "").startswith("text/html"), cb.headers)
            release.set()
            for c in conns:
                c.close()
            t.join(60)
            self.assertEqual(got["r"].status, 502, got.get("r"))
            self.assertIn("could not be reached", got["r"].body.decode())
        finally:
            release.set()
            lsock.close()
            for c in conns:
                c.close()
            self.assertEqual(srv.stop(), 0)

    def test_issuer_must_be_https(self):
        p = subprocess.run([BIN, "serve", "--oidc-issuer", "http://idp.example.com",
                            "--oidc-client-id", "x", "--listen", "127.0.0.1:1"],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("https", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
