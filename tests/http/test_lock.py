"""One server per SQLite data directory (store/datalock.h): a second `serve` on the
same directory is refused at once with a message naming it; the key CLI works beside a
running server; after kill -9 the next server releases the dead one's leases, so an
interrupted job finishes at once instead of after the whole lease."""
import os
import subprocess
import time
import unittest

from harness import BACKEND, BIN, Server, free_port


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
                t = time.time()
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
                self.assertNotEqual(p.returncode, 0, p.stderr)
                self.assertLess(time.time() - t, 5)
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
        # SQLite: the default lease (30 s); only the release at start can make this fast.
        # PostgreSQL: servers share the queue and a lease may belong to a live process, so
        # it runs out first (docs/design.md): a 3 s lease there.
        lease = ["--job-lease", "3"] if BACKEND == "postgres" else []
        srv = Server("--builtin-delay-ms", "1500", "--workers", "1", *lease).start()
        key = srv.key("resume")
        r = srv.request("POST", "/api/v1/documents", key=key, form={"name": "slow", "prompt": "x"},
                        headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        doc = r.json["data"]["id"]
        deadline = time.time() + 10
        while srv.request("GET", f"/api/v1/documents/{doc}", key=key).json["data"]["state"] != "generating":
            self.assertLess(time.time(), deadline, "the job never started")
            time.sleep(0.05)
        srv.kill()  # mid-generation: the job's lease stays in the database
        srv2 = Server("--builtin-delay-ms", "1500", "--workers", "1", *lease,
                      data_dir=srv.data_dir, database=srv.database)
        t0 = time.time()
        srv2.start()
        try:
            state = None
            while time.time() - t0 < 15:
                state = srv2.request("GET", f"/api/v1/documents/{doc}", key=key).json["data"]["state"]
                if state in ("completed", "failed"):
                    break
                time.sleep(0.05)
            took = time.time() - t0
            self.assertEqual(state, "completed")
            limit = 5.0 + (3 if BACKEND == "postgres" else 0)
            self.assertLess(took, limit, f"the job resumed only after {took:.1f} s")
        finally:
            self.assertEqual(srv2.stop(), 0)
