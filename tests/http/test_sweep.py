"""The media sweeper (issue 17 item 4), on the backend the suite runs on: while the
server runs, temporary media files and pictures no record refers to are removed once
older than --media-sweep-age, and nothing younger, nor any picture a record refers to,
whatever its age. The sweeps are observed through the files themselves (a marker file
old enough to go shows that a sweep ran), never through timing."""
import os
import time
import unittest
import uuid

from harness import Server, ServerTest

AGE = 120  # seconds: the fresh files of this test stay far younger than this


def touch(path, age=0):
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\nnot really")
    t = time.time() - age
    os.utime(path, (t, t))
    return path


class Sweeper(ServerTest):
    server_args = ["--media-sweep-age", str(AGE), "--media-sweep-interval", "0.2"]

    def media(self, name=""):
        return os.path.join(self.srv.data_dir, "media", name)

    def wait_gone(self, path, timeout=60):
        deadline = time.time() + timeout
        while os.path.exists(path) and time.time() < deadline:
            time.sleep(0.05)
        self.assertFalse(os.path.exists(path), path)

    def test_old_strays_go_young_ones_and_referenced_pictures_stay(self):
        img = self.make_image()
        key = img["url"].rsplit("/", 1)[1][:-4]
        kept = self.media(f"{key}.png")
        self.assertTrue(os.path.exists(kept))
        os.utime(kept, (time.time() - 10 * AGE,) * 2)  # old, but a record refers to it
        old = [touch(self.media(f".{uuid.uuid4().hex}.tmp-0123abcd"), 10 * AGE),
               touch(self.media(f"{uuid.uuid4().hex}.png"), 10 * AGE)]
        young = [touch(self.media(f".{uuid.uuid4().hex}.tmp-4567ef01")),
                 touch(self.media(f"{uuid.uuid4().hex}.png"))]
        other = touch(self.media("notes.txt"), 10 * AGE)  # not a media file's name
        for p in old:
            self.wait_gone(p)
        # one more whole sweep after those: a new old marker goes
        marker = touch(self.media(f"{uuid.uuid4().hex}.png"), 10 * AGE)
        self.wait_gone(marker)
        for p in young + [kept, other]:
            self.assertTrue(os.path.exists(p), p)
        r = self.srv.request("GET", f"/media/{key}.png")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.body.startswith(b"\x89PNG"))
        # a picture whose record is deleted goes with it; one made now stays
        img2 = self.make_image(name="second")
        key2 = img2["url"].rsplit("/", 1)[1][:-4]
        marker = touch(self.media(f"{uuid.uuid4().hex}.png"), 10 * AGE)
        self.wait_gone(marker)
        self.assertTrue(os.path.exists(self.media(f"{key2}.png")))
        # an older revision's picture (§16) is referred to by its revision: it stays
        r = self.req("POST", f"/api/v1/images/{img2['id']}/regenerate")
        self.assertEqual(r.status, 200, r)
        self.assertNotEqual(r.json["data"]["url"], img2["url"])
        os.utime(self.media(f"{key2}.png"), (time.time() - 10 * AGE,) * 2)
        marker = touch(self.media(f"{uuid.uuid4().hex}.png"), 10 * AGE)
        self.wait_gone(marker)
        self.assertTrue(os.path.exists(self.media(f"{key2}.png")))
        log = self.srv.read_log()
        self.assertIn("temporary file(s) of interrupted writes removed", log)
        self.assertIn("picture(s) without a record removed", log)


class SweeperAtStart(unittest.TestCase):
    """Shared with PostgreSQL (no lock on the directory), a start removes only strays
    older than the age; with SQLite (one server per directory) every stray at once."""

    def test_start_sweep(self):
        srv = Server("--media-sweep-age", str(AGE), "--media-sweep-interval", "0").start()
        try:
            media = os.path.join(srv.data_dir, "media")
        finally:
            srv.stop()
        old = touch(os.path.join(media, f"{uuid.uuid4().hex}.png"), 10 * AGE)
        young = touch(os.path.join(media, f".{uuid.uuid4().hex}.tmp-0000"))
        srv.start()
        try:
            self.assertEqual(srv.request("GET", "/healthz").status, 200)
            deadline = time.time() + 30
            while os.path.exists(old) and time.time() < deadline:
                time.sleep(0.05)
            self.assertFalse(os.path.exists(old))
            self.assertEqual(os.path.exists(young), srv.database is not None)
        finally:
            srv.stop()
