"""Single sign-on across processes (API.md §21): two inkwell processes on one PostgreSQL
database behind one public address (as a load balancer spreads them). Process A begins
the sign-in (its flow is kept in the database), the issuer — oidc-provider, as in
test_oidc.py — sends the browser back, and process B takes the callback: the person is
signed in, the session works on A, and the same callback replayed on A is refused."""
import os
import sys
import unittest

from harness import Server, free_port, pg_database, record_exchange, record_secret

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "oidc"))
import oidcenv  # noqa: E402

API = "/api/v1"


class CallbackOnAnotherProcess(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        port_a = free_port()
        public = f"http://127.0.0.1:{port_a}"
        cls.provider = oidcenv.Provider([public + "/auth/oidc/callback"]).start()
        db = pg_database()
        data = Server().data_dir
        args = ("--oidc-issuer", cls.provider.issuer, "--oidc-client-id", oidcenv.CLIENT_ID,
                "--public-url", public)
        env = {"INKWELL_OIDC_CLIENT_SECRET": oidcenv.CLIENT_SECRET}
        cls.a = Server(*args, data_dir=data, database=db, env=env).start(port=port_a)
        cls.b = Server(*args, data_dir=data, database=db, env=env).start()
        for s in (cls.a, cls.b):
            s.keys.append(oidcenv.CLIENT_SECRET)
        admin = cls.a.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.a.keys.append(admin)
        cls.b.keys.append(admin)
        cls.a.cli("user", "create", "pat")
        users = cls.a.request("GET", API + "/admin/users?per_page=100", key=admin).json["data"]
        pat = next(u["id"] for u in users if u["name"] == "pat")
        r = cls.b.request("PATCH", f"{API}/admin/users/{pat}", key=admin,
                          form={"oidc_subject": "pat-sub"})
        assert r.status == 200, r

    @classmethod
    def tearDownClass(cls):
        try:
            for s in (cls.a, cls.b):
                assert s.stop() == 0, s.read_log()[-2000:]
        finally:
            cls.provider.stop()

    def test_begun_on_a_taken_on_b(self):
        br = oidcenv.Browser(record=record_exchange, record_prefix=self.a.url(""))
        cb = br.sign_in_at_provider(self.a.url("/auth/oidc/login"), "pat-sub",
                                    self.a.url("/auth/oidc/callback"))
        on_b = cb.replace(self.a.url(""), self.b.url(""), 1)
        self.assertNotEqual(on_b, cb)
        r = br.get(on_b)  # the jar's cookies are the host's (any port), as a browser's
        self.assertEqual(r.status, 302, r.text[:500])
        sid = br.cookie("inkwell_session")
        self.assertTrue(sid)
        self.a.keys.append(sid)
        record_secret(sid)
        self.b.keys.append(sid)
        me = self.a.request("GET", API + "/me", headers={"Cookie": f"inkwell_session={sid}"})
        self.assertEqual(me.status, 200, me)
        self.assertEqual(me.json["data"]["user"]["name"], "pat")
        # the flow was taken on B: A does not take it again
        again = oidcenv.Browser()
        for c in br.jar:
            if c.name != "inkwell_session":
                again.jar.set_cookie(c)
        r = again.get(cb)
        self.assertEqual(r.status, 400, r.text[:500])
        self.assertIn("used already", r.text)
        self.assertIsNone(again.cookie("inkwell_session"))


if __name__ == "__main__":
    unittest.main()
