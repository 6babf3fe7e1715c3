"""Backups (docs/deployment.md): `inkwell backup --to FILE` on SQLite, taken while the
server keeps writing, restored into a new data directory: every record the backup
holds is there with its picture, and the copy is consistent. PostgreSQL: the command
points to pg_dump; the documented pg_dump / pg_restore + media copy is exercised the
same way."""
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import unittest

from harness import BACKEND, BIN, PG_URL, Server, pg_database
from pngcheck import check_png


class Backup(unittest.TestCase):
    def make_records(self, srv, key, n):
        ids = {"documents": [], "images": []}
        for i in range(n):
            r = srv.request("POST", "/api/v1/documents", key=key, form={"name": f"d{i}", "prompt": f"p{i}"})
            self.assertEqual(r.status, 201, r)
            ids["documents"].append(r.json["data"])
            if i % 3 == 0:
                r = srv.request("POST", "/api/v1/images", key=key,
                                form={"name": f"i{i}", "description": f"sea {i}", "resolution": "1024x1024"})
                self.assertEqual(r.status, 201, r)
                ids["images"].append(r.json["data"])
        return ids

    def check_restored(self, srv, key, before):
        for kind in ("documents", "images"):
            for rec in before[kind]:
                r = srv.request("GET", f"/api/v1/{kind}/{rec['id']}", key=key)
                self.assertEqual(r.status, 200, (kind, rec["id"]))
                got = r.json["data"]
                self.assertEqual((got["name"], got["state"]), (rec["name"], "completed"))
                if kind == "documents":
                    self.assertEqual(got["result"], rec["result"])
                else:
                    self.assertEqual(got["url"].rsplit("/", 1)[1], rec["url"].rsplit("/", 1)[1])
        # every image of the backup (those made during it too) has its picture
        page = 1
        while True:
            body = srv.request("GET", f"/api/v1/images?per_page=100&page={page}", key=key).json
            for got in body["data"]:
                r = srv.request("GET", got["url"][len(srv.url("")):])
                self.assertEqual(r.status, 200, got["url"])
                self.assertEqual(check_png(r.body), (1024, 1024))
            if page >= body["meta"]["last_page"]:
                break
            page += 1

    def test_backup_while_serving_then_restore(self):
        srv = Server().start()
        key = srv.key("backup")
        before = self.make_records(srv, key, 12)
        dest = os.path.join(tempfile.mkdtemp(prefix="inkwell-backup-"), "inkwell-backup.db")
        stop = threading.Event()

        def writer():  # the server keeps writing during the backup
            i = 0
            while not stop.is_set():
                srv.request("POST", "/api/v1/documents", key=key, form={"name": f"during {i}", "prompt": "x"})
                i += 1
        t = threading.Thread(target=writer)
        t.start()
        try:
            if BACKEND == "postgres":
                p = subprocess.run([BIN, "backup", "--to", dest] + srv.storage_args(), capture_output=True, text=True)
                self.assertEqual(p.returncode, 2)
                self.assertIn("pg_dump", p.stderr)
                dump = dest + ".dump"
                subprocess.run(["pg_dump", "-Fc", "-f", dump, srv.database], check=True, capture_output=True)
                shutil.copytree(os.path.join(srv.data_dir, "media"), dest + ".media")
            else:
                p = subprocess.run([BIN, "backup", "--to", dest] + srv.storage_args(), capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(dest, p.stdout)
        finally:
            stop.set()
            t.join()
        self.assertEqual(srv.stop(), 0)
        # restore into a fresh data directory (the documented steps)
        data = tempfile.mkdtemp(prefix="inkwell-restored-")
        shutil.copytree(dest + ".media", os.path.join(data, "media"))
        database = None
        if BACKEND == "postgres":
            database = pg_database()
            subprocess.run(["pg_restore", "--no-owner", "-d", database, dest + ".dump"], check=True,
                           capture_output=True)
        else:
            db = sqlite3.connect(dest)
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            self.assertEqual(db.execute("PRAGMA journal_mode").fetchone()[0], "delete")
            db.close()
            self.assertFalse(os.path.exists(dest + "-wal"))
            shutil.copy(dest, os.path.join(data, "inkwell.db"))
        restored = Server(data_dir=data, database=database).start()
        try:
            self.check_restored(restored, key, before)
            # the old key works: users and keys are in the backup
            self.assertEqual(restored.request("GET", "/api/v1/documents", key=key).status, 200)
        finally:
            self.assertEqual(restored.stop(), 0)

    def test_backup_refuses_a_missing_database_and_no_target(self):
        d = tempfile.mkdtemp(prefix="inkwell-nodb-")
        p = subprocess.run([BIN, "backup", "--data-dir", d], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--to", p.stderr)
        p = subprocess.run([BIN, "backup", "--to", os.path.join(d, "b.db"), "--data-dir", d],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no database", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "b.db")))
