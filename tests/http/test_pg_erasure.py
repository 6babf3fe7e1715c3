"""A user deleted while their generations run, with two processes on one PostgreSQL
database (API.md §19, issue 33): streams of the running generation open on both
processes end within 2 s of the deletion — made through the admin route of either
process or by `inkwell user delete` (a third process) — and a create waiting in the
other process answers as for a deleted record (502). Each process hears of the deletion
by its notification: the job's lease is left at its default (30 s), so no lease renewal
can be what tells them. After it, no trace of the user is left in a data-only dump."""
import threading
import time
import unittest

from harness import SLOW, Server, pg_database, poll_state, slow, wait_for
from test_erasure import Person, pg_traces, stream_end
from test_stream import Stream

API = "/api/v1"


class TwoProcesses(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        db = pg_database()
        data = Server(database=db).data_dir
        args = ["--builtin-delay-ms", str(int(30000 * SLOW)), "--stream-keepalive", "0.5"]
        cls.a = Server(*args, data_dir=data, database=db).start()
        cls.b = Server(*args, data_dir=data, database=db).start()
        cls.admin = cls.a.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.a.keys.append(cls.admin)
        cls.b.keys.append(cls.admin)

    @classmethod
    def tearDownClass(cls):
        for s in (cls.a, cls.b):
            rc = s.stop()
            if rc != 0:
                raise AssertionError(f"server exited with {rc}: {s.read_log()[-2000:]}")

    def delete(self, p, how):
        if how == "cli":
            c = self.a.cli("user", "delete", p.name, check=False)
            self.assertEqual(c.returncode, 0, c.stderr)
        else:
            srv = self.a if how == "admin-a" else self.b
            r = srv.request("DELETE", f"{API}/admin/users/{p.id}", key=self.admin)
            self.assertEqual(r.status, 200, r)

    def check(self, how):
        p = Person(self, self.a, self.admin)
        self.b.keys.append(p.key)
        streams = []
        for kind, form in (("documents", {"name": p.m("n"), "prompt": p.m("p")}),
                           ("images", {"name": p.m("i"), "description": p.m("d"),
                                       "resolution": "1024x1024"})):
            r = p.req("POST", f"/{kind}", form=form, headers={"Prefer": "respond-async"})
            self.assertEqual(r.status, 202, r)
            rid = r.json["data"]["id"]
            poll_state(self.a, p.key, f"{API}/{kind}/{rid}", until=("generating",))
            for srv in (self.a, self.b):
                s = Stream(srv.port, "GET", f"{API}/{kind}/{rid}", p.key)
                self.assertEqual(s.next_event()[0], "record")
                streams.append((srv, kind, s))
        # a create waiting in B (its job run by either process)
        out = {}

        def create():
            out["r"] = self.b.request("POST", f"{API}/documents", key=p.key,
                                      form={"name": p.m("w"), "prompt": p.m("wp")})

        t = threading.Thread(target=create, daemon=True)
        t.start()
        wait_for(lambda: self.a.request("GET", f"{API}/documents", key=p.key).json["meta"]["total"] == 2,
                 "the waiting create's record")
        self.delete(p, how)
        until = time.monotonic() + slow(2)  # every stream ends within 2 s of it
        for srv, kind, s in streams:
            with self.subTest(process="A" if srv is self.a else "B", kind=kind):
                evs = stream_end(s, max(0.05, until - time.monotonic()))
                s.conn.close()
                self.assertEqual(evs[-1][0], "error", evs)
                self.assertEqual(evs[-1][1]["message"], "The record was deleted.")
        t.join(max(0.05, until - time.monotonic()))
        self.assertFalse(t.is_alive(), "the waiting create did not answer in 2 s")
        self.assertEqual(out["r"].status, 502, out["r"])
        self.assertEqual(out["r"].json["message"],
                         "The record was deleted before its generation finished.")
        self.assertEqual(pg_traces(self.a, p.base), [])

    def test_admin_route_of_the_process_that_streams(self):
        self.check("admin-a")

    def test_admin_route_of_the_other_process(self):
        self.check("admin-b")

    def test_command_line(self):
        self.check("cli")


if __name__ == "__main__":
    unittest.main()
