"""inkwell through PgBouncer (Debian's 1.18, started here on loopback).

Transaction pooling: the servers run with --database-pooled (the statements go
through the bouncer, sent whole, with no session state) beside --database (direct:
LISTEN and the owner's advisory lock). A good part of the PostgreSQL suite runs that
way: the classes below are the suites' own classes, run again with every server
started through a transaction-mode bouncer. Session pooling needs nothing special: a
server whose --database is a session-mode bouncer is tested on its own."""
import importlib
import os
import unittest

import harness
from bouncer import Bouncer
from harness import Server, pg_database, poll_state

# the suites run again through the bouncer (every class of each)
SUITES = ["test_documents", "test_stream", "test_idempotency", "test_jobs", "test_ratelimit",
          "test_pg_multi", "test_pg_stream", "test_pg_drain"]

# Not run through the bouncer: test_pg_multi's Outage restarts PostgreSQL and asserts
# what a direct connection sees. Through PgBouncer a request during the restart waits
# in the bouncer's queue instead of failing (no 503 at all, which that test requires to
# see), and a server login that failed while PostgreSQL was starting up makes the
# bouncer refuse its clients for server_login_retry (a 503 just after the restart,
# which that test forbids). The cluster test (tests/cluster) measures both instead.
EXCLUDE = {("test_pg_multi", "Outage")}

_bouncer = None
_orig_start = Server.start


def _start_pooled(self, port=None):
    if self.database and "--database-pooled" not in self.args:
        self.args = self.args + ["--database-pooled", _bouncer.url(self.database)]
    return _orig_start(self, port)


def setUpModule():
    global _bouncer
    _bouncer = Bouncer(harness.PG_URL, "transaction").start()
    Server.start = _start_pooled


def tearDownModule():
    Server.start = _orig_start
    if _bouncer:
        _bouncer.stop()


class PooledIsUsed(unittest.TestCase):
    def test_statements_go_through_the_bouncer(self):
        db = pg_database()
        srv = Server(database=db).start()
        try:
            self.assertIn("--database-pooled", srv.args)
            key = srv.key("pool")
            r = srv.request("POST", "/api/v1/documents", key=key, form={"name": "n", "prompt": "p"})
            self.assertEqual(r.status, 201, r)
            # the bouncer saw this database's clients (its log names each login)
            name = db.rsplit("/", 1)[1]
            self.assertIn(f"db={name}", _bouncer.log().replace("/", " "))
        finally:
            self.assertEqual(srv.stop(), 0)


class SessionMode(unittest.TestCase):
    """--database alone pointing at a session-mode bouncer: everything on it."""

    def test_session_mode(self):
        # session mode gives each client connection a server connection while it is held:
        # two servers at their defaults hold 11 each (threads, workers, webhook workers,
        # LISTEN, owner lock), and the command line needs its own (docs/deployment.md)
        b = Bouncer(harness.PG_URL, "session", pool_size=40).start()
        try:
            db = pg_database()
            data = Server().data_dir
            a = _orig_start(Server("--builtin-delay-ms", "300", data_dir=data, database=b.url(db)))
            c = _orig_start(Server("--builtin-delay-ms", "300", data_dir=data, database=b.url(db)))
            try:
                key = a.key("sess")
                r = a.request("POST", "/api/v1/documents", key=key,
                              form={"name": "s", "prompt": "p"}, headers={"Prefer": "respond-async"})
                self.assertEqual(r.status, 202, r)
                rec = poll_state(c, key, f"/api/v1/documents/{r.json['data']['id']}")
                self.assertEqual(rec["state"], "completed")
                self.assertEqual(c.request("GET", "/api/v1/documents", key=key).json["meta"]["total"], 1)
            finally:
                self.assertEqual(a.stop(), 0)
                self.assertEqual(c.stop(), 0)
        finally:
            b.stop()


def load_tests(loader, tests, pattern):
    suite = unittest.TestSuite(tests)
    for name in SUITES:
        mod = importlib.import_module(name)
        for attr in sorted(dir(mod)):
            cls = getattr(mod, attr)
            if (isinstance(cls, type) and issubclass(cls, unittest.TestCase)
                    and cls.__module__ == name and (name, attr) not in EXCLUDE):
                # a subclass of this module, so that setUpModule above runs first
                sub = type(f"Pooled_{name}_{attr}", (cls,), {"__module__": __name__})
                suite.addTests(loader.loadTestsFromTestCase(sub))
    return suite


if __name__ == "__main__":
    unittest.main()
