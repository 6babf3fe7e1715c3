"""IPv6 (API.md §25, last line): --listen takes [::1]:PORT and [::]:PORT (both families
where the system allows), the access log writes IPv6 client addresses, the bad-key
limit counts a /64 as one client, and --trusted-proxies takes IPv6 ranges.

Where the machine has no IPv6 loopback (a container started with IPv6 off) the module
prints why and defines no test: a skip would count as a failure in run.py, and there is
nothing on such a machine to test."""
import http.client
import re
import socket
import sys
import time
import unittest

from harness import Server, Resp, record_exchange

BAD_KEY = "ink_" + "6" * 64


def ipv6_loopback():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            s.bind(("::1", 0))
        finally:
            s.close()
        return None
    except OSError as e:
        return str(e)


def get(host, port, path, headers=None):
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        resp = Resp(r.status, r.getheaders(), r.read())
        record_exchange("GET", path, resp.status, resp.headers, resp.body)
        return resp
    finally:
        conn.close()


def access_addr(srv, path):
    """addr= of the access line of the request to path (a unique path)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        for line in srv.read_log().splitlines():
            if " access " in line and f'path="{path}"' in line:
                return re.search(r" addr=(\S+) ", line).group(1)
        time.sleep(0.05)
    raise AssertionError(f"no access line for {path}")


def v6_server(*args, host="::1"):
    srv = Server(*args)
    srv.host = host
    return srv


NO_V6 = ipv6_loopback()
if NO_V6:
    print(f"test_ipv6: not run: this machine has no IPv6 loopback ({NO_V6})", file=sys.stderr)
else:
    class Loopback6(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.srv = v6_server("--log-level", "info", "--rate-limit", "3").start()
            cls.key = cls.srv.key("alice")

        @classmethod
        def tearDownClass(cls):
            assert cls.srv.stop() == 0

        def test_serves_and_logs_v6(self):
            r = self.srv.request("POST", "/api/v1/documents", key=self.key,
                                 form={"name": "Six", "prompt": "tea over IPv6"})
            self.assertEqual(r.status, 201, r)
            # absolute links are the listen address's ([::1]:PORT) without --public-url
            self.assertTrue(r.header("Location").startswith(f"http://[::1]:{self.srv.port}/"), r)
            doc = self.srv.request("GET", f"/api/v1/documents/{r.json['data']['id']}",
                                   key=self.key)
            self.assertEqual(doc.status, 200, doc)
            path = f"/nowhere-{time.monotonic_ns()}"
            self.assertEqual(get("::1", self.srv.port, path).status, 404)
            self.assertEqual(access_addr(self.srv, path), "::1")

        def test_only_v6(self):
            # [::1] is IPv6's loopback alone: 127.0.0.1 is not served on that port
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", self.srv.port), timeout=5).close()

        def test_bad_key_limit(self):
            got = [get("::1", self.srv.port, "/api/v1/documents",
                       {"Authorization": f"Bearer {BAD_KEY}"}).status for _ in range(4)]
            self.assertEqual(got, [401, 401, 401, 429])

    class DualStack(unittest.TestCase):
        def test_both_families(self):
            srv = v6_server("--log-level", "info", host="::").start()
            try:
                for host, logged in (("::1", "::1"), ("127.0.0.1", "127.0.0.1")):
                    path = f"/nowhere-{time.monotonic_ns()}"
                    self.assertEqual(get(host, srv.port, path).status, 404)
                    # an IPv4 client on the IPv6 socket is written as IPv4 (::ffff:… mapped)
                    self.assertEqual(access_addr(srv, path), logged)
            finally:
                self.assertEqual(srv.stop(), 0)

    class Proxies6(unittest.TestCase):
        """A trusted IPv6 proxy (given as a range) forwards IPv6 clients: the bad-key
        limit counts each /64 as one client."""

        @classmethod
        def setUpClass(cls):
            cls.srv = v6_server("--log-level", "info", "--rate-limit", "3",
                                "--trusted-proxies", "::/120, 2001:db8:ff::/48").start()

        @classmethod
        def tearDownClass(cls):
            assert cls.srv.stop() == 0

        def bad(self, xff):
            return get("::1", self.srv.port, "/api/v1/documents",
                       {"Authorization": f"Bearer {BAD_KEY}", "X-Forwarded-For": xff}).status

        def test_forwarded_address_logged(self):
            path = f"/nowhere-{time.monotonic_ns()}"
            get("::1", self.srv.port, path, {"X-Forwarded-For": "2001:db8:7::9, 2001:db8:ff::1"})
            self.assertEqual(access_addr(self.srv, path), "2001:db8:7::9")

        def test_slash_64_is_one_client(self):
            # four addresses of one /64: one bucket of 3
            got = [self.bad(f"2001:db8:1:2::{i + 1:x}") for i in range(3)]
            got.append(self.bad("2001:db8:1:2:ffff:ffff:ffff:ffff"))
            self.assertEqual(got, [401, 401, 401, 429])
            # the next /64 is another client
            self.assertEqual(self.bad("2001:db8:1:3::1"), 401)
            # IPv4 clients keep one bucket per address
            self.assertEqual([self.bad("192.0.2.1") for _ in range(4)], [401, 401, 401, 429])
            self.assertEqual(self.bad("192.0.2.2"), 401)

    class ListenArgument(unittest.TestCase):
        def test_malformed_refused(self):
            for bad in ("[::1:8080", "[::1]8080", "[zz::1]:8080", "[127.0.0.1]:8080",
                        "::1:8080"):
                srv = Server()
                srv.args += ["--listen", bad]  # the last --listen is the one taken
                with self.assertRaises(RuntimeError, msg=bad) as e:
                    srv.start()
                self.assertIn("listen", str(e.exception), bad)


if __name__ == "__main__":
    unittest.main()
