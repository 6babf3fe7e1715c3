"""Image creates with pictures in S3 vs in a directory (API.md §25), interleaved rounds.

    python3 bench/s3_images.py BIN [ROUNDS] [CREATES_PER_ROUND]

Three servers on SQLite, each with 2 client threads sending POST /api/v1/images
(1024x1024, builtin provider): pictures in <data-dir>/media; in s3rver (tests/s3/,
on this machine, talked to directly); in s3rver behind the tests' SigV4-checking proxy
(Python: its cost is in that figure). Rounds alternate between them so that the
machine's other load falls on all alike. Prints creates/s and p50/p99 of each, and
the ratios to the directory."""
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "s3"))
import s3env  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/inkwell"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
PER_ROUND = int(sys.argv[3]) if len(sys.argv) > 3 else 60
CREDS = {"AWS_ACCESS_KEY_ID": s3env.ACCESS, "AWS_SECRET_ACCESS_KEY": s3env.SECRET}


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Srv:
    def __init__(self, name, extra):
        self.name, self.port = name, free_port()
        self.dir = tempfile.mkdtemp(prefix="inkwell-bench-s3-")
        env = dict(os.environ, **CREDS)
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{self.port}",
                                      "--data-dir", self.dir, "--rate-limit", "0",
                                      "--log-level", "warn"] + extra,
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        for _ in range(600):
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.05)
        self.key = subprocess.run([BIN, "key", "create", "--user", "bench", "--data-dir", self.dir],
                                  check=True, capture_output=True, text=True, env=env).stdout.strip()
        self.lat = []
        self.secs = 0.0
        self.n = 0

    def round(self, n):
        body = urllib.parse.urlencode({"name": "B", "description": "a red sunset over the sea",
                                       "resolution": "1024x1024"})
        h = {"Authorization": f"Bearer {self.key}",
             "Content-Type": "application/x-www-form-urlencoded"}
        lock = threading.Lock()
        left = [n]

        def worker():
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            while True:
                with lock:
                    if left[0] == 0:
                        break
                    left[0] -= 1
                t = time.perf_counter()
                c.request("POST", "/api/v1/images", body=body, headers=h)
                r = c.getresponse()
                r.read()
                assert r.status == 201, r.status
                with lock:
                    self.lat.append(time.perf_counter() - t)
            c.close()

        t0 = time.perf_counter()
        ts = [threading.Thread(target=worker) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.secs += time.perf_counter() - t0
        self.n += n

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)


def main():
    s3 = s3env.S3().start()
    try:
        store = ["--media-store", f"s3://{s3.bucket}/bench", "--s3-path-style"]
        servers = [Srv("directory", []),
                   Srv("s3 (s3rver, direct)", store + ["--s3-endpoint",
                                                       f"http://127.0.0.1:{s3.backend_port}"]),
                   Srv("s3 (behind the SigV4 check)", store + ["--s3-endpoint", s3.url])]
        try:
            for s in servers:
                s.round(5)  # warm-up, not counted
                s.lat, s.secs, s.n = [], 0.0, 0
            for _ in range(ROUNDS):
                for s in servers:
                    s.round(PER_ROUND)
        finally:
            for s in servers:
                s.stop()
        base = servers[0].n / servers[0].secs
        print(f"image creates, 1024x1024, 2 connections, {ROUNDS} interleaved rounds of "
              f"{PER_ROUND}:")
        for s in servers:
            rate = s.n / s.secs
            lat = sorted(s.lat)
            p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
            print(f"  {s.name:30s} {rate:6.1f}/s  p50 {statistics.median(lat) * 1000:6.1f} ms  "
                  f"p99 {p99 * 1000:6.1f} ms  ratio {rate / base:.2f}")
    finally:
        s3.stop()


if __name__ == "__main__":
    main()
