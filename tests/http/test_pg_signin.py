"""Sessions across processes (API.md §21): two inkwell processes on one PostgreSQL
database. A session made on A works on B; ended on A (sign-out, a password change, the
user's own "sign out everywhere", an admin's password, a revoked key) it is refused by B
at the very next request; failed sign-ins on A count on B."""
import unittest

from harness import Server, pg_database
from test_signin import BAD_CREDS, Browser, set_password

API = "/api/v1"


class TwoProcessesSessions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        db = pg_database()
        data = Server().data_dir
        # the clock stands still: the failures' minute never turns over mid-test
        env = {"INKWELL_TEST_NOW": "2026-11-29T10:00:00Z"}
        cls.a = Server(data_dir=data, database=db, env=env).start()
        cls.b = Server(data_dir=data, database=db, env=env).start()
        cls.admin = cls.a.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.a.keys.append(cls.admin)
        cls.b.keys.append(cls.admin)

    @classmethod
    def tearDownClass(cls):
        for s in (cls.a, cls.b):
            assert s.stop() == 0

    def user(self, name):
        self.a.cli("user", "create", name)
        pw = f"{name}'s password"
        set_password(self.a, name, pw)
        self.b.keys.append(pw)
        return pw

    def on(self, srv, browser):
        """The same browser (cookies) speaking to another process."""
        other = Browser(srv)
        other.jar = browser.jar
        return other

    def test_made_on_a_works_on_b_and_ends_there_at_once(self):
        pw = self.user("ann")
        on_a = Browser(self.a)
        self.assertEqual(on_a.sign_in("ann", pw).status, 200)
        self.b.keys.append(on_a.session)
        on_b = self.on(self.b, on_a)
        self.assertEqual(on_b.req("GET", "/me").json["data"]["user"]["name"], "ann")
        r = on_b.req("POST", "/documents", form={"name": "from b", "prompt": "tea"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(on_b.req("POST", "/documents", form={"name": "x", "prompt": "y"},
                                  xsrf=False).status, 419)
        sid = dict(on_a.jar)
        self.assertEqual(on_a.req("DELETE", "/session").status, 200)
        gone = Browser(self.b)
        gone.jar = sid
        self.assertEqual(gone.req("GET", "/me").status, 401)

    def test_password_change_on_a_ends_others_on_b(self):
        pw = self.user("ben")
        here, there = Browser(self.a), Browser(self.b)
        self.assertEqual(here.sign_in("ben", pw).status, 200)
        self.assertEqual(there.sign_in("ben", pw).status, 200)
        for s in (here.session, there.session):
            self.a.keys.append(s)
            self.b.keys.append(s)
        r = here.req("PUT", "/me/password", form={"current": pw, "password": "ben's new password"})
        self.a.keys.append("ben's new password")
        self.b.keys.append("ben's new password")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(there.req("GET", "/me").status, 401)
        self.assertEqual(self.on(self.b, here).req("GET", "/me").status, 200)
        # sign out everywhere, from B: A's session ends
        again = Browser(self.a)
        self.assertEqual(again.sign_in("ben", "ben's new password").status, 200)
        r = self.on(self.b, here).req("DELETE", "/me/sessions")
        self.assertEqual(r.json["data"]["ended"], 1)
        self.assertEqual(again.req("GET", "/me").status, 401)

    def test_admin_password_and_revoked_key_on_a_end_sessions_on_b(self):
        pw = self.user("cat")
        s = Browser(self.b)
        self.assertEqual(s.sign_in("cat", pw).status, 200)
        uid = s.req("GET", "/me").json["data"]["user"]["id"]
        r = self.a.request("PATCH", f"{API}/admin/users/{uid}", key=self.admin,
                           form={"password": "cat's other password"})
        self.a.keys.append("cat's other password")
        self.b.keys.append("cat's other password")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(s.req("GET", "/me").status, 401)
        key = self.a.key("cat")
        self.b.keys.append(key)
        k = Browser(self.b)
        r = k.sign_in_key(key)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.a.request("DELETE", f"{API}/admin/keys/{r.json['data']['key']['id']}",
                                        key=self.admin).status, 200)
        self.assertEqual(k.req("GET", "/me").status, 401)

    def test_failures_count_across_processes(self):
        pw = self.user("dan")
        for i in range(5):
            srv = (self.a, self.b)[i % 2]
            r = Browser(srv).sign_in("dan", "not dan's password",
                                     headers={"X-Forwarded-For": "192.0.2.1"})
            self.assertEqual((r.status, r.json), (401, BAD_CREDS))
        r = Browser(self.b).sign_in("dan", pw)
        self.assertEqual(r.status, 429, r)
        self.assertIsNotNone(r.header("Retry-After"))


if __name__ == "__main__":
    unittest.main()
