"""What PgBouncer in transaction mode costs inkwell (docs/benchmarks.md, "PgBouncer"):
the same server on one PostgreSQL database, direct (named prepared statements), through
a session-mode PgBouncer (the hop alone), and with --database-pooled through a
transaction-mode PgBouncer (the hop and statements sent whole),
under wrk: a show, a list and a waiting create. Not part of make bench.

Usage: python3 bench/pgbouncer.py   (needs wrk, pgbouncer, PostgreSQL; BENCH_DUR seconds)"""
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "http"))
from bouncer import Bouncer, free_port  # noqa: E402

BIN = os.environ.get("INKWELL_BIN", os.path.join(ROOT, "build", "inkwell"))
DUR = os.environ.get("BENCH_DUR", "8")


def wrk(url, key, script=None):
    cmd = ["wrk", "-t1", "-c32", f"-d{DUR}s", "--latency", "-H", f"Authorization: Bearer {key}", url]
    if script:
        cmd[1:1] = ["-s", script]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = dict(re.findall(r"\s+(50|99)%\s+([\d.]+\w+)", out))
    return rps, lat.get("50"), lat.get("99")


def main():
    pgdir = tempfile.mkdtemp(prefix="inkwell-bench-pg-")
    url = subprocess.run([os.path.join(ROOT, "scripts", "pg-test.sh"), "start", pgdir], check=True,
                         capture_output=True, text=True).stdout.strip()
    bouncer = Bouncer(url, "transaction", pool_size=20).start()
    session = Bouncer(url, "session", pool_size=40).start()
    procs = []
    try:
        subprocess.run(["psql", url, "-qAtc", "CREATE DATABASE bench"], check=True, capture_output=True)
        db = url.rsplit("/", 1)[0] + "/bench"
        key = subprocess.run([BIN, "key", "create", "--user", "bench", "--database", db],
                             check=True, capture_output=True, text=True).stdout.strip()
        data = tempfile.mkdtemp(prefix="inkwell-bench-")
        post = os.path.join(data, "post.lua")
        with open(post, "w") as f:
            f.write('wrk.method = "POST"\nwrk.body = "name=b&prompt=tea"\n'
                    'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n')
        rows = []
        for label, dburl, extra in (("direct", db, []),
                                    ("PgBouncer (session), --database", session.url(db), []),
                                    ("PgBouncer (transaction), --database-pooled", db,
                                     ["--database-pooled", bouncer.url(db)])):
            port = free_port()
            p = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
                                  "--database", dburl, "--rate-limit", "0", "--log-level", "warn",
                                  "--threads", "2"] + extra)
            procs.append(p)
            base = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    urllib.request.urlopen(base + "/readyz")
                    break
                except OSError:
                    time.sleep(0.05)
            for _ in range(50):  # something to show and list
                req = urllib.request.Request(base + "/api/v1/documents", data=b"name=s&prompt=tea",
                                             headers={"Authorization": f"Bearer {key}"})
                urllib.request.urlopen(req).read()
            for name, path, script in (("show", "/api/v1/documents/1", None),
                                       ("list", "/api/v1/documents", None),
                                       ("create (waits)", "/api/v1/documents", post)):
                rps, p50, p99 = wrk(base + path, key, script)
                rows.append((label, name, rps, p50, p99))
            p.terminate()
            p.wait(60)
        print("| path | scenario | req/s | p50 | p99 |\n|---|---|---:|---:|---:|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]:,.0f} | {r[3]} | {r[4]} |")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        bouncer.stop()
        session.stop()
        subprocess.run([os.path.join(ROOT, "scripts", "pg-test.sh"), "stop", pgdir], capture_output=True)


if __name__ == "__main__":
    main()
