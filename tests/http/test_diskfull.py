"""A full disk (issue 14): the data directory on a small tmpfs filled to the last byte.
Creates, updates and deletes answer 503 in the contract's shape (a waiting image too),
nothing is half-written, /readyz says the storage is full, and everything works again
once space returns. Needs root to mount the tmpfs: if the mount fails the test fails —
it is never skipped."""
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
import unittest

from harness import BACKEND, Server, poll_state, slow, wait_for
from test_stream import Stream


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
            # (every other one with an Idempotency-Key: the key's own write meets the full
            # disk first, and its 503 carries Retry-After too)
            for i in range(40):
                h = {"Idempotency-Key": f"full-{i}"} if i % 2 == 0 else {}
                r = srv.request("POST", "/api/v1/documents", key=key, headers=h,
                                form={"name": f"full {i}", "prompt": "p" * 8000})
                statuses.setdefault("doc", set()).add(r.status)
                if r.status != 201:
                    self.assert503(r)
                    self.assertIn(r.header("Retry-After"), ("1", "60"), (i, r))
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

    def stream_image(self, srv, key):
        s = Stream(srv.port, "POST", "/api/v1/images", key, timeout=slow(30),
                   form={"name": "streamed", "description": "a large sea", "resolution": "1792x1024"})
        self.assertEqual(s.status, 201)
        ev = s.next_event()
        self.assertEqual(ev[0], "record", ev)
        return s, ev[2]["id"]

    def end_of(self, s, limit_s=30):
        """The stream's last event; it must end within slow(limit_s), a bound that only
        catches a stream that never ends (keep-alives or not)."""
        limit_s = slow(limit_s)
        got = {}
        t = threading.Thread(target=lambda: got.update(evs=s.events(limit_s)), daemon=True)
        t.start()
        t.join(limit_s)
        if t.is_alive():
            s.conn.sock.shutdown(socket.SHUT_RDWR)  # ends the reader
            t.join(5)
            raise AssertionError(f"the stream did not end in {limit_s} s")
        self.assertTrue(got.get("evs"), "the stream ended without an event")
        return got["evs"][-1]

    def test_streamed_image_without_room_for_its_picture_ends_503(self):
        data = os.path.join(self.mnt, "data")
        os.mkdir(data)
        srv = Server("--min-free-mb", "0", "--builtin-delay-ms", "1500",
                     data_dir=data).start()
        key = srv.key("stream")
        try:
            s, rid = self.stream_image(srv, key)
            filler = fill(self.mnt)
            # room for the database's small writes, not for the picture
            os.truncate(filler, os.path.getsize(filler) - 256 * 1024)
            ev = self.end_of(s)
            self.assertEqual(ev[0], "error", ev)
            self.assertEqual(ev[2], {"message": "Storage is full; please try again later.", "status": 503})
            # nothing half-written: the record is removed, no picture or temporary file
            self.assertEqual(srv.request("GET", f"/api/v1/images/{rid}", key=key).status, 404)
            self.assertEqual(os.listdir(os.path.join(data, "media")), [])
            os.unlink(filler)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_streamed_create_whose_outcome_cannot_be_stored_ends_503(self):
        if BACKEND != "sqlite":
            return  # PostgreSQL's own storage is not on this disk: the case above covers it
        data = os.path.join(self.mnt, "data")
        os.mkdir(data)
        # a short lease so that the job runs again soon once space returns; it must
        # outlast the picture's rendering (seconds under valgrind), hence slow()
        srv = Server("--min-free-mb", "0", "--builtin-delay-ms", "3000", "--job-lease", str(slow(2)),
                     data_dir=data).start()
        key = srv.key("stream")
        try:
            s, rid = self.stream_image(srv, key)
            # the disk fills once the job is claimed (its generation running): filled
            # before, the claim itself is refused and nothing runs until space returns
            # (a server under valgrind may claim later than the stream's first event)
            wait_for(lambda: srv.request("GET", f"/api/v1/images/{rid}", key=key)
                     .json["data"]["state"] == "generating", "the job's claim")
            filler = fill(self.mnt)  # the picture and then the database refuse
            # the stream ends (after 20 attempts to store the outcome, 0.5 s apart,
            # docs/operations.md) instead of waiting for ever: end_of fails a stream that hangs
            ev = self.end_of(s)
            self.assertEqual(ev[0], "error", ev)
            self.assertEqual(ev[2], {"message": "Storage is full; please try again later.", "status": 503})
            self.assertEqual([n for n in os.listdir(os.path.join(data, "media"))], [])
            self.assertIn("cannot store the outcome", srv.read_log())
            # space returns: the record (its removal was refused too) is generated again
            os.unlink(filler)
            r = srv.request("GET", f"/api/v1/images/{rid}", key=key)
            if r.status == 200:
                done = poll_state(srv, key, f"/api/v1/images/{rid}", timeout=20 + 2)  # + the lease
                self.assertEqual(done["state"], "completed", done)
                self.assertEqual(srv.request("GET", done["url"][len(srv.url("")):]).status, 200)
            else:
                self.assertEqual(r.status, 404, r)
        finally:
            self.assertEqual(srv.stop(), 0)
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
