"""A full disk (issue 14): the data directory on a small tmpfs filled to the last byte.
Creates, updates and deletes answer 503 in the contract's shape (a waiting image too),
nothing is half-written, /readyz says the storage is full, and everything works again
once space returns. Needs root to mount the tmpfs: if the mount fails the test fails —
it is never skipped."""
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from harness import BACKEND, Server


def fill(path):
    """Writes a file until the file system is full; returns its path."""
    f = os.path.join(path, "filler")
    fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for size in (1 << 20, 65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return f


class DiskFull(unittest.TestCase):
    def setUp(self):
        self.mnt = tempfile.mkdtemp(prefix="inkwell-full-")
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", self.mnt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            os.rmdir(self.mnt)
            raise AssertionError(f"cannot mount a tmpfs for the full-disk test (run as root): {p.stderr}")

    def tearDown(self):
        subprocess.run(["umount", "-l", self.mnt], check=False)
        shutil.rmtree(self.mnt, ignore_errors=True)

    def assert503(self, r):
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.json["status"], 503, r)
        self.assertIsInstance(r.json["message"], str)
        self.assertNotIn("/", r.json["message"])  # no path leaks

    def counts(self, srv, key):
        return tuple(srv.request("GET", f"/api/v1/{k}", key=key).json["meta"]["total"]
                     for k in ("documents", "images"))

    def test_full_disk_503_nothing_half_written_then_recovery(self):
        data = os.path.join(self.mnt, "data")
        os.mkdir(data)
        # --min-free-mb 0: only a truly full file system refuses, so every layer's own
        # handling is tested (SQLite's SQLITE_FULL, the picture's ENOSPC)
        srv = Server("--min-free-mb", "0", data_dir=data).start()
        key = srv.key("full")
        try:
            doc = srv.request("POST", "/api/v1/documents", key=key, form={"name": "before", "prompt": "x"})
            self.assertEqual(doc.status, 201, doc)
            img = srv.request("POST", "/api/v1/images", key=key,
                              form={"name": "before", "description": "sea", "resolution": "1024x1024"})
            self.assertEqual(img.status, 201, img)
            before = self.counts(srv, key)
            filler = fill(self.mnt)
            statuses = {}
            # enough writes that SQLite must grow its files, whatever room its WAL had
            for i in range(40):
                r = srv.request("POST", "/api/v1/documents", key=key,
                                form={"name": f"full {i}", "prompt": "p" * 8000})
                statuses.setdefault("doc", set()).add(r.status)
                if r.status != 201:
                    self.assert503(r)
            # PostgreSQL keeps documents in its own (not full) storage: only pictures meet the full disk
            self.assertIn(503 if BACKEND == "sqlite" else 201, statuses["doc"])
            r = srv.request("POST", "/api/v1/images", key=key,
                            form={"name": "full", "description": "a large sea", "resolution": "1792x1024"})
            if BACKEND == "sqlite" or r.status != 201:
                self.assert503(r)
            for _ in range(20):
                r = srv.request("PATCH", f"/api/v1/documents/{doc.json['data']['id']}", key=key,
                                form={"result": "q" * 60000})
                if r.status == 503:
                    break
                self.assertEqual(r.status, 200, r)
            if BACKEND == "sqlite":
                self.assert503(r)
            r = srv.request("DELETE", f"/api/v1/images/{img.json['data']['id']}", key=key)
            deleted = r.status == 200
            if BACKEND == "sqlite":
                self.assert503(r)
            # reads still work
            self.assertEqual(srv.request("GET", f"/api/v1/documents/{doc.json['data']['id']}", key=key).status, 200)
            self.assertEqual(srv.request("GET", "/readyz").status, 503)
            self.assertIn("full", srv.request("GET", "/readyz").json["message"].lower())
            # nothing half-written: no temporary file, no record without its picture
            media = os.path.join(data, "media")
            self.assertEqual([n for n in os.listdir(media) if ".tmp-" in n], [])
            # space returns: everything works again, at once
            os.unlink(filler)
            self.assertEqual(srv.request("GET", "/readyz").status, 200)
            r = srv.request("POST", "/api/v1/images", key=key,
                            form={"name": "after", "description": "sea", "resolution": "1024x1024"})
            self.assertEqual(r.status, 201, r)
            self.assertEqual(srv.request("GET", r.json["data"]["url"][len(srv.url("")):]).status, 200)
            if not deleted:
                r = srv.request("DELETE", f"/api/v1/images/{img.json['data']['id']}", key=key)
                self.assertEqual(r.status, 200, r)
            docs, imgs = self.counts(srv, key)
            self.assertEqual(imgs, before[1])  # one made, one deleted
            self.assertGreaterEqual(docs, before[0])
            listed = srv.request("GET", "/api/v1/images?per_page=100", key=key).json["data"]
            pngs = sorted(n[:-4] for n in os.listdir(media) if n.endswith(".png"))
            self.assertEqual(sorted(i["url"].rsplit("/", 1)[1][:-4] for i in listed), pngs)
        finally:
            self.assertEqual(srv.stop(), 0)
        if BACKEND == "sqlite":
            db = sqlite3.connect(os.path.join(data, "inkwell.db"))
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            db.close()

    def test_min_free_refuses_creates_before_the_disk_is_full(self):
        data = os.path.join(self.mnt, "data")
        os.mkdir(data)
        srv = Server("--min-free-mb", "64", data_dir=data).start()  # more than the 48 MiB tmpfs
        key = srv.key("reserve")
        try:
            r = srv.request("POST", "/api/v1/documents", key=key, form={"name": "a", "prompt": "b"})
            self.assert503(r)
            self.assertEqual(r.header("Retry-After"), "60")
            self.assertEqual(srv.request("GET", "/readyz").status, 503)
            self.assertEqual(self.counts(srv, key), (0, 0))
        finally:
            self.assertEqual(srv.stop(), 0)
