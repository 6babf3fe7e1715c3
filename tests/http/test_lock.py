"""One server per SQLite data directory (store/datalock.h): a second `serve` on the
same directory is refused at once with a message naming it; the key CLI works beside a
running server; after kill -9 the next server releases the dead one's leases, so an
interrupted job finishes at once instead of after the whole lease."""
import os
import subprocess
import time
import unittest

from harness import BACKEND, BIN, Server, free_port, slow, wait_for


class DataDirLock(unittest.TestCase):
    def test_second_server_refused_and_cli_works_beside(self):
        srv = Server().start()
        try:
            if BACKEND == "postgres":
                # several servers share one PostgreSQL database (and media) by design: no lock
                other = Server(data_dir=srv.data_dir, database=srv.database).start()
                self.assertEqual(other.stop(), 0)
            else:
                cmd = [BIN, "serve", "--listen", f"127.0.0.1:{free_port()}"] + srv.storage_args()
                # refused, not blocked on the lock until the first server ends (the
                # timeout, scaled, only catches that)
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=slow(20))
                self.assertNotEqual(p.returncode, 0, p.stderr)
                self.assertIn("already running", p.stderr)
                self.assertIn(srv.data_dir, p.stderr)
            # the key CLI needs no lock
            key = srv.key("beside")
            self.assertTrue(key.startswith("ink_"))
            self.assertIn("beside", srv.cli("key", "list").stdout)
            r = srv.request("GET", "/api/v1/documents", key=key)
            self.assertEqual(r.status, 200, r)
            # the first server is unharmed
            self.assertEqual(srv.request("GET", "/healthz").status, 200)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_lock_released_by_a_dead_server(self):
        srv = Server().start()
        srv.kill()
        srv2 = Server(data_dir=srv.data_dir, database=srv.database).start()
        self.assertEqual(srv2.stop(), 0)
        if BACKEND != "postgres":
            self.assertTrue(os.path.exists(os.path.join(srv.data_dir, "inkwell.lock")))


class ResumeAfterKill(unittest.TestCase):
    def test_interrupted_job_resumes_at_once(self):
        # A lease of 30 s (the default, scaled by SLOW): the job completes before it could
        # run out, so only the release of the dead server's lease can have freed it —
        # at the start on SQLite, by its owner lock's end on PostgreSQL (docs/design.md);
        # the server's log says which.
        lease_s = slow(30)
        lease = ["--job-lease", str(lease_s)]
        srv = Server("--builtin-delay-ms", "1500", "--workers", "1", *lease).start()
        key = srv.key("resume")
        r = srv.request("POST", "/api/v1/documents", key=key, form={"name": "slow", "prompt": "x"},
                        headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        doc = r.json["data"]["id"]
        wait_for(lambda: srv.request("GET", f"/api/v1/documents/{doc}", key=key).json["data"]["state"] == "generating",
                 "the job started")
        srv.kill()  # mid-generation: the job's lease stays in the database
        srv2 = Server("--builtin-delay-ms", "1500", "--workers", "1", *lease,
                      data_dir=srv.data_dir, database=srv.database)
        t0 = time.monotonic()  # the lease was renewed before this, so it runs out after t0 + lease_s
        srv2.start()
        try:
            state = None
            while time.monotonic() - t0 < lease_s:
                state = srv2.request("GET", f"/api/v1/documents/{doc}", key=key).json["data"]["state"]
                if state in ("completed", "failed"):
                    break
                time.sleep(0.05)
            self.assertEqual(state, "completed", f"not completed before the lease ({lease_s:g} s) ran out")
            self.assertIn("released 1 job lease of a stopped process" if BACKEND == "postgres"
                          else "1 interrupted job(s) of a previous server released", srv2.read_log())
        finally:
            self.assertEqual(srv2.stop(), 0)
