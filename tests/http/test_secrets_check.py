"""tests/secrets_check.py, the end-of-run grep of the server logs for every secret the
suites used (issue 34): it finds a planted secret of each kind, names the log and line
but never prints the secret, passes clean logs, and refuses to pass with nothing to
check. The harness's recording of secrets is checked too (record_secrets)."""
import io
import os
import sys
import tempfile
import unittest

import harness

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import secrets_check  # noqa: E402


class SecretsCheck(unittest.TestCase):
    KEY = "ink_0123456789abcdef0123456789abcdef0123"
    WHSEC = "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"
    PASSWORD = "correct horse battery staple 7"

    def logdir(self, logs, secrets):
        d = tempfile.mkdtemp(prefix="inkwell-secrets-")
        for name, text in logs.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        with open(os.path.join(d, "secrets-sqlite-1.txt"), "w") as f:
            f.write("".join(s + "\n" for s in secrets))
        return d

    def run_check(self, d):
        out = io.StringIO()
        return secrets_check.check(d, out), out.getvalue()

    def test_clean_logs_pass(self):
        d = self.logdir({"server-a.log": "info: listening\ninfo: a key made for alice\n"},
                        [self.KEY, self.WHSEC, self.PASSWORD])
        rc, out = self.run_check(d)
        self.assertEqual(rc, 0, out)
        self.assertIn("0 found", out)

    def test_each_planted_secret_found_and_not_printed(self):
        for secret, kind in ((self.KEY, "API key"), (self.WHSEC, "webhook secret"),
                             (self.PASSWORD, "password")):
            with self.subTest(kind=kind):
                d = self.logdir({"server-a.log": "info: fine\n",
                                 "web-server-9.log": f"one\nwarn: got {secret} here\n"},
                                [self.KEY, self.WHSEC, self.PASSWORD])
                rc, out = self.run_check(d)
                self.assertEqual(rc, 1, out)
                self.assertIn(kind, out)
                self.assertIn("web-server-9.log:2", out)
                self.assertNotIn(secret, out)

    def test_other_files_are_not_server_logs(self):
        # the suites' own output (a failed assertion may print an answer) is not checked
        d = self.logdir({"server-a.log": "ok\n", "http-sqlite.log": f"FAIL {self.KEY}\n"},
                        [self.KEY])
        self.assertEqual(self.run_check(d)[0], 0)

    def test_nothing_to_check_fails(self):
        self.assertEqual(self.run_check(self.logdir({}, [self.KEY]))[0], 2)
        self.assertEqual(self.run_check(self.logdir({"server-a.log": "x\n"}, []))[0], 2)

    def test_the_harness_records_what_an_exchange_carries(self):
        seen = []
        saved = harness.record_secret
        harness.record_secret = seen.append
        try:
            harness.record_secrets({"Authorization": "Bearer " + self.KEY,
                                    "Cookie": "XSRF-TOKEN=abc; inkwell_session=sess0123456789abc"},
                                   form={"name": "x", "password": self.PASSWORD},
                                   answer={"data": {"secret": self.WHSEC, "url": "http://a/b"}})
            harness.record_secrets([("Set-Cookie", "inkwell_session=sessABCDEFGHIJKLMN; Path=/")])
        finally:
            harness.record_secret = saved
        self.assertEqual(seen, [self.KEY, "sess0123456789abc", self.PASSWORD, self.WHSEC,
                                "sessABCDEFGHIJKLMN"])


if __name__ == "__main__":
    unittest.main()
