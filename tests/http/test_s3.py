"""Pictures in S3-compatible storage (API.md §25), black-box, on both backends: a real S3
server (s3rver, tests/s3/) behind a proxy that checks every request's SigV4 signature
(tests/s3/s3env.py says why). Pictures are checked in the bucket itself."""
import http.client
import os
import re
import struct
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "s3"))
import s3env  # noqa: E402
from harness import Server, poll_state, slow, wait_for  # noqa: E402

CREDS = {"AWS_ACCESS_KEY_ID": s3env.ACCESS, "AWS_SECRET_ACCESS_KEY": s3env.SECRET}
S3 = None


def setUpModule():
    global S3
    S3 = s3env.S3().start()


def tearDownModule():
    if S3:
        S3.stop()


class S3Server(Server):
    """A server on the bucket: the store's flags go with every command (serve and the CLI)."""

    def __init__(self, *args, prefix="pics", path_style=True, endpoint=None, env=None, extra=(),
                 data_dir=None, database=None):
        self.s3_args = ["--media-store", f"s3://{S3.bucket}/{prefix}",
                        "--s3-endpoint", endpoint or S3.url] + \
            (["--s3-path-style"] if path_style else []) + list(extra)
        super().__init__(*args, env=dict(CREDS, **(env or {})), data_dir=data_dir,
                         database=database)

    def storage_args(self):
        return super().storage_args() + self.s3_args


def fetch(url, headers=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        c.request("GET", u.path + ("?" + u.query if u.query else ""), headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def key_of(img):
    return re.search(r"/media/([0-9a-f]{32})\.png$", img["url"]).group(1)


class Base(unittest.TestCase):
    server_args = []
    server_kw = {}
    prefix = "pics"

    @classmethod
    def setUpClass(cls):
        cls.srv = S3Server(*cls.server_args, prefix=cls.prefix, **cls.server_kw).start()
        cls.alice = cls.srv.key("alice")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        log = cls.srv.read_log()
        assert s3env.SECRET not in log, "the S3 secret in the server log"
        if rc != 0:
            raise AssertionError(f"server exited with {rc}: {log[-2000:]}")

    def tearDown(self):
        self.assertEqual(S3.rejected, [], "requests the S3 server refused as badly signed")

    def create(self, key=None, **fields):
        form = {"name": "Pic", "description": "a red sunset", "resolution": "1024x1024"}
        form.update(fields)
        r = self.srv.request("POST", "/api/v1/images", key=key or self.alice, form=form)
        self.assertEqual(r.status, 201, r)
        return r.json["data"]

    def objects(self):
        return set(S3.keys(self.prefix + "/"))

    def media_path(self, img):
        return urllib.parse.urlsplit(img["url"]).path


class PathStyle(Base):
    server_args = ["--max-revisions", "2"]

    def test_create_show_delete(self):
        img = self.create()
        k = key_of(img)
        obj = f"{self.prefix}/{k}.png"
        self.assertIn(obj, self.objects())
        status, stored = S3.get(obj)
        self.assertEqual(status, 200)
        # the same URL, headers and bytes as from a directory
        r = self.srv.request("GET", self.media_path(img))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Content-Type"), "image/png")
        self.assertEqual(r.header("ETag"), f'"{k}"')
        self.assertEqual(r.header("Cache-Control"), "public, max-age=31536000, immutable")
        self.assertEqual(r.body, stored)
        self.assertEqual(png_size(r.body), (1024, 1024))
        r = self.srv.request("GET", self.media_path(img), headers={"If-None-Match": f'"{k}"'})
        self.assertEqual(r.status, 304)
        # a thumbnail made from the object
        r = self.srv.request("GET", self.media_path(img) + "?w=64")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(png_size(r.body), (64, 64))
        # nothing in the data directory
        self.assertFalse(os.path.exists(os.path.join(self.srv.data_dir, "media", f"{k}.png")))
        # delete: the object goes with the record
        r = self.srv.request("DELETE", f"/api/v1/images/{img['id']}", key=self.alice)
        self.assertIn(r.status, (200, 204), r)
        self.assertNotIn(obj, self.objects())
        self.assertEqual(self.srv.request("GET", self.media_path(img)).status, 404)

    def test_regenerate_past_the_cap(self):
        img = self.create(description="a harbour at dawn")
        seen = [key_of(img)]
        for i in range(3):
            r = self.srv.request("POST", f"/api/v1/images/{img['id']}/regenerate",
                                 key=self.alice, form={"description": f"a harbour at dawn {i}"})
            self.assertIn(r.status, (200, 201, 202), r)
            cur = poll_state(self.srv, self.alice, f"/api/v1/images/{img['id']}")
            self.assertEqual(cur["state"], "completed", cur)
            seen.append(key_of(cur))
        objs = self.objects()
        # --max-revisions 2: the last two pictures are kept, the older ones removed
        for k in seen[-2:]:
            self.assertIn(f"{self.prefix}/{k}.png", objs)
        for k in seen[:-2]:
            self.assertNotIn(f"{self.prefix}/{k}.png", objs)
        r = self.srv.request("GET", f"/api/v1/images/{img['id']}/revisions", key=self.alice)
        self.assertEqual(r.status, 200, r)
        revs = r.json["data"]
        for rev in revs:
            if rev.get("url"):
                self.assertIn(f"{self.prefix}/{key_of(rev)}.png", objs)
        # restoring an older revision copies its picture within the bucket
        old = min(revs, key=lambda v: v["number"])
        old_png = S3.get(f"{self.prefix}/{key_of(old)}.png")[1]
        r = self.srv.request("POST", f"/api/v1/images/{img['id']}/revisions/{old['number']}/restore",
                             key=self.alice)
        self.assertIn(r.status, (200, 201), r)
        k = key_of(r.json["data"])
        self.assertNotIn(k, seen)
        self.assertEqual(S3.get(f"{self.prefix}/{k}.png"), (200, old_png))
        # the new revision pushed the one it came from past the cap: its object went
        self.assertNotIn(f"{self.prefix}/{key_of(old)}.png", self.objects())

    def test_user_deletion_removes_objects(self):
        carol = self.srv.key("carol")
        mine = [key_of(self.create(key=carol, description=f"carol's cat {i}")) for i in range(2)]
        p = self.srv.cli("user", "delete", "carol")
        self.assertEqual(p.returncode, 0, p.stderr)
        objs = self.objects()
        for k in mine:
            self.assertNotIn(f"{self.prefix}/{k}.png", objs)

    def test_backup_downloads_pictures(self):
        if self.srv.database:
            return  # PostgreSQL: pg_dump's job (backup says so); the SQLite run covers it
        img = self.create(description="a lighthouse")
        k = key_of(img)
        to = os.path.join(self.srv.data_dir, "backup.db")
        p = self.srv.cli("backup", "--to", to)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(to + ".media", f"{k}.png"), "rb") as f:
            self.assertEqual(f.read(), S3.get(f"{self.prefix}/{k}.png")[1])


class VirtualHost(Base):
    """Virtual-host addressing: BUCKET.s3.localhost (libcurl resolves *.localhost)."""
    prefix = "vhost/deeper"
    server_kw = {"path_style": False}

    @classmethod
    def setUpClass(cls):
        cls.srv = S3Server(prefix=cls.prefix, path_style=False, endpoint=S3.vhost_url).start()
        cls.alice = cls.srv.key("alice")

    def test_create_and_show(self):
        img = self.create(description="a forest path")
        self.assertIn(f"{self.prefix}/{key_of(img)}.png", self.objects())
        r = self.srv.request("GET", self.media_path(img))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.body, S3.get(f"{self.prefix}/{key_of(img)}.png")[1])


class Redirect(Base):
    prefix = "redir"
    server_args = ["--media-redirect"]

    def test_302_to_a_presigned_url(self):
        img = self.create(description="a mountain lake")
        k = key_of(img)
        before = S3.presigned_seen
        r = self.srv.request("GET", self.media_path(img))
        self.assertEqual(r.status, 302, r)
        self.assertEqual(r.header("Cache-Control"), "private, max-age=60")
        loc = r.header("Location")
        self.assertTrue(loc.startswith(f"{S3.url}/{S3.bucket}/{self.prefix}/{k}.png?"), loc)
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(loc).query))
        self.assertLessEqual(int(q["X-Amz-Expires"]), 900)
        self.assertTrue(q["X-Amz-Credential"].startswith(s3env.ACCESS + "/"))
        self.assertNotIn(s3env.SECRET, loc)
        status, headers, body = fetch(loc)  # the proxy checks the query signature
        self.assertEqual(status, 200)
        self.assertEqual(S3.presigned_seen, before + 1)
        self.assertEqual(body, S3.get(f"{self.prefix}/{k}.png")[1])
        # a tampered URL is refused by the store
        status, _, _ = fetch(loc.replace(f"{k}.png", f"{'0' * 32}.png"))
        self.assertEqual(status, 403)
        S3.rejected.clear()
        # thumbnails are made by the server (no object to redirect to)
        r = self.srv.request("GET", self.media_path(img) + "?w=32")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(png_size(r.body), (32, 32))


class Sweeper(Base):
    """Objects named as pictures, under the prefix, older than the age, that no record
    names, are removed; nothing else is."""
    prefix = "swept"
    AGE = 2
    server_args = ["--media-sweep-age", str(AGE), "--media-sweep-interval", "0.2"]

    def test_orphans_removed_others_kept(self):
        img = self.create(description="a kept picture")
        kept = f"{self.prefix}/{key_of(img)}.png"
        orphan = f"{self.prefix}/{'ab' * 16}.png"
        others = [f"{self.prefix}/notes.txt", f"{self.prefix}/{'cd' * 16}.jpg",
                  f"{self.prefix}/sub/{'ef' * 16}.png", f"elsewhere/{'12' * 16}.png"]
        for o in [orphan] + others:
            S3.put(o, b"not a picture of ours")
        wait_for(lambda: orphan not in self.objects(), "the orphan swept",
                 timeout=slow(30))
        objs = set(S3.keys(""))
        self.assertIn(kept, objs)
        for o in others:
            self.assertIn(o, objs)
        self.assertEqual(self.srv.request("GET", self.media_path(img)).status, 200)

    def test_young_orphan_kept(self):
        # an upload whose record is not committed yet looks like this: younger than the
        # age, it stays (checked right after a sweep that saw it has run)
        young = f"{self.prefix}/{'9a' * 16}.png"
        S3.put(young, b"an upload in progress")
        t = time.time()
        self.assertIn(young, self.objects())
        # at least one sweep ran while it was younger than the age
        wait_for(lambda: time.time() - t > 0.6, "a few sweeps")
        if time.time() - t < self.AGE - 0.5:
            self.assertIn(young, self.objects())


class Fault(unittest.TestCase):
    """The S3 server stopped under a load of creates: those that cannot store their
    picture fail (502, and a waiting create's record is not kept), no record says it has a picture that is not in the
    bucket, and creates work again once it is back."""

    def states(self, srv, key):
        out, page = [], 1
        while True:
            r = srv.request("GET", f"/api/v1/images?per_page=100&page={page}", key=key)
            out += [i["state"] for i in r.json["data"]]
            if not r.json.get("links", {}).get("next"):
                return out
            page += 1

    def test_s3_stopped_mid_load(self):
        srv = S3Server(prefix="fault").start()
        try:
            key = srv.key("alice")
            results = []
            stop = threading.Event()

            def load(n):
                i = 0
                # the last thread's creates do not wait (202): their failures stay as
                # records in state failed, without a picture
                h = {"Prefer": "respond-async"} if n == 3 else {}
                while not stop.is_set():
                    r = srv.request("POST", "/api/v1/images", key=key, timeout=120, headers=h,
                                    form={"name": "L", "description": f"load {n} {i}",
                                          "resolution": "1024x1024"})
                    results.append(r.status)
                    i += 1
                    if h:
                        time.sleep(0.2)

            threads = [threading.Thread(target=load, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            wait_for(lambda: results.count(201) >= 3, "creates before the fault", timeout=slow(60))
            S3.stop_backend()
            n0 = len(results)
            wait_for(lambda: results[n0:].count(502) >= 3 and
                     "failed" in self.states(srv, key),
                     "waiting creates failing with 502, a background one failed",
                     timeout=slow(60))
            S3.start_backend()
            n1 = len(results)
            wait_for(lambda: results[n1:].count(201) >= 3, "creates after the fault",
                     timeout=slow(60))
            stop.set()
            for t in threads:
                t.join()
            self.assertEqual(set(results) - {201, 202, 502}, set(), results)
            # the background ones end (completed or failed)
            wait_for(lambda: set(self.states(srv, key)) <= {"completed", "failed"},
                     "background creates ended", timeout=slow(60))
            # every record: completed with its object in the bucket, or failed with none
            objs = set(S3.keys("fault/"))
            page, seen, failed = 1, 0, 0
            while True:
                r = srv.request("GET", f"/api/v1/images?per_page=100&page={page}", key=key)
                self.assertEqual(r.status, 200, r)
                for img in r.json["data"]:
                    seen += 1
                    if img["state"] == "completed":
                        self.assertIn(f"fault/{key_of(img)}.png", objs, img)
                    else:
                        self.assertEqual(img["state"], "failed", img)
                        self.assertIsNone(img["url"], img)
                        failed += 1
                if not r.json.get("links", {}).get("next"):
                    break
                page += 1
            # a waiting create whose generation failed leaves no record (§5); a
            # background one stays, failed
            self.assertEqual(seen, results.count(201) + results.count(202))
            self.assertGreater(failed, 0)
            log = srv.read_log()
            self.assertIn("media: s3 upload of", log)
        finally:
            if S3.proc is None:
                S3.start_backend()
            self.assertEqual(srv.stop(), 0)
        self.assertEqual(S3.rejected, [])


class MediaCopy(unittest.TestCase):
    """inkwell media copy both ways: every picture, verified, resumable; a server started
    on the new store serves the same pictures."""

    def copy(self, src, dst, env=CREDS):
        import subprocess
        from harness import BIN
        p = subprocess.run([BIN, "media", "copy", "--from", src, "--to", dst, "--s3-endpoint",
                            S3.url, "--s3-path-style"], capture_output=True, text=True,
                           env=dict(os.environ, **env))
        self.assertNotIn(s3env.SECRET, p.stdout + p.stderr)
        return p

    def test_directory_to_bucket_and_back(self):
        srv = Server().start()  # pictures in its data directory
        try:
            key = srv.key("alice")
            imgs = []
            for i in range(3):
                r = srv.request("POST", "/api/v1/images", key=key,
                                form={"name": "C", "description": f"copy me {i}",
                                      "resolution": "1024x1024"})
                self.assertEqual(r.status, 201, r)
                imgs.append(r.json["data"])
        finally:
            self.assertEqual(srv.stop(), 0)
        media = os.path.join(srv.data_dir, "media")
        keys = sorted(key_of(i) for i in imgs)
        files = {k: open(os.path.join(media, f"{k}.png"), "rb").read() for k in keys}
        # an interrupted earlier run left one object, and a damaged one
        S3.put(f"copied/{keys[0]}.png", files[keys[0]])
        S3.put(f"copied/{keys[1]}.png", b"half a picture")
        p = self.copy(media, f"s3://{S3.bucket}/copied")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "copied 2, already there 1, failed 0", p.stderr)
        self.assertNotIn("cannot be reached", p.stderr)
        self.assertIn("verified by SHA-256", p.stderr)
        for k in keys:
            self.assertEqual(S3.get(f"copied/{k}.png"), (200, files[k]))
        # run again: nothing to do
        p = self.copy(media, f"s3://{S3.bucket}/copied")
        self.assertEqual(p.stdout.strip(), "copied 0, already there 3, failed 0", p.stderr)
        # the same data directory served from the bucket
        srv2 = S3Server(prefix="copied", data_dir=srv.data_dir, database=srv.database)
        srv2.start()
        try:
            for img in imgs:
                r = srv2.request("GET", urllib.parse.urlsplit(img["url"]).path)
                self.assertEqual(r.status, 200, r)
                self.assertEqual(r.body, files[key_of(img)])
        finally:
            self.assertEqual(srv2.stop(), 0)
        # and back to a new directory
        back = os.path.join(srv.data_dir, "media-back")
        p = self.copy(f"s3://{S3.bucket}/copied", back)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "copied 3, already there 0, failed 0", p.stderr)
        for k in keys:
            with open(os.path.join(back, f"{k}.png"), "rb") as f:
                self.assertEqual(f.read(), files[k])
        self.assertEqual(S3.rejected, [])

    def test_refusals(self):
        p = self.copy("/tmp/x", "/tmp/x")
        self.assertEqual(p.returncode, 2)
        p = self.copy(f"s3://{S3.bucket}/a", "/tmp/y", env={"AWS_ACCESS_KEY_ID": "",
                                                           "AWS_SECRET_ACCESS_KEY": ""})
        self.assertEqual(p.returncode, 1)
        self.assertIn("no S3 credentials", p.stderr)


class Refusals(unittest.TestCase):
    def start_fails(self, srv, text):
        with self.assertRaises(RuntimeError) as e:
            srv.start()
        self.assertIn(text, str(e.exception))
        return str(e.exception)

    def test_wrong_secret_refused_by_the_store(self):
        msg = self.start_fails(S3Server(env={"AWS_SECRET_ACCESS_KEY": "not-the-secret-x"}),
                               "HTTP 403")
        self.assertNotIn("not-the-secret-x", msg)
        self.assertTrue(S3.rejected)
        S3.rejected.clear()

    def test_no_credentials(self):
        srv = S3Server()
        srv.env.pop("AWS_ACCESS_KEY_ID")
        srv.env.pop("AWS_SECRET_ACCESS_KEY")
        self.start_fails(srv, "no S3 credentials")

    def test_flags_give_credentials(self):
        srv = S3Server(extra=["--s3-access-key", s3env.ACCESS, "--s3-secret-key", s3env.SECRET])
        srv.env.pop("AWS_ACCESS_KEY_ID")
        srv.env.pop("AWS_SECRET_ACCESS_KEY")
        srv.start()
        self.assertEqual(srv.stop(), 0)

    def test_bad_store_names(self):
        for bad in ("s3://", "s3://A_B/x", "ftp://x/y"):
            srv = Server("--media-store", bad, env=CREDS)
            self.start_fails(srv, "media store")

    def test_data_directory_full_still_refuses_creates(self):
        # the pictures are in the bucket, the database still fills the data directory:
        # --min-free-mb is checked there (a reserve above any disk's free space)
        srv = S3Server("--min-free-mb", "1048576")  # 1 TiB
        st = os.statvfs(srv.data_dir)
        self.assertLess(st.f_bavail * st.f_frsize, 1 << 40, "a disk with 1 TiB free")
        srv.start()
        try:
            key = srv.key("alice")
            r = srv.request("POST", "/api/v1/images", key=key,
                            form={"name": "F", "description": "full", "resolution": "1024x1024"})
            self.assertEqual(r.status, 503, r)
            self.assertEqual(srv.request("GET", "/readyz").status, 503)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_redirect_needs_s3(self):
        self.start_fails(Server("--media-redirect"), "media-redirect")


if __name__ == "__main__":
    unittest.main()
