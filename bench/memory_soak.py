"""make bench (and by hand), the server's memory under load over time (issue 25 item 6).

  memory_soak.py BIN large
      Large answers read slowly: 100 documents of 100 KB each, then N (BENCH_LARGE_N,
      default 50) clients each reading GET /documents?per_page=100 (about 10 MB of
      JSON) a few KB at a time; then the same number of slow readers of exports of a
      1 MB document (HTML, DOCX and PDF in turn). Prints the server's RSS before, at the
      peak and 5 s after the readers closed, for each.

  memory_soak.py BIN soak [SECONDS]
      A mixed soak (default 1800 s, BENCH_SOAK_SECONDS; BENCH_SOAK_ARGS: more server
      options): 8 client threads create,
      list, search, show, stream, update, export and delete documents and make
      pictures, as users of an app would, on the default settings (the record cache's
      64 MB included); the RSS is sampled every 10 s. Prints the baseline (after the
      first minute), the peak, the last value, the slope of the second half (MB per 10
      minutes) and whether the RSS stayed flat (under 5 MB per 10 minutes in the second
      half) and under the baseline plus the caches' limits (the record cache's 64 MB and
      the export cache's 32 MB: issue 25 item 6's target, with the export cache its item
      2 added).

The server runs on SQLite in a fresh data directory. Python standard library only."""
import asyncio
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_memory import free_port, rss_kb, seed_text, slow_reader  # noqa: E402

CACHE_MB = 64 + 32  # the defaults of --record-cache-mb and --export-cache-mb


class Client:
    def __init__(self, port, key):
        self.port, self.key = port, key
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method, path, form=None, headers=None):
        body = urllib.parse.urlencode(form) if form is not None else None
        h = {"Authorization": f"Bearer {self.key}"}
        if body is not None:
            h["Content-Type"] = "application/x-www-form-urlencoded"
        h.update(headers or {})
        for attempt in range(2):
            try:
                self.c.request(method, path, body=body, headers=h)
                r = self.c.getresponse()
                data = r.read()
                return r.status, data
            except (ConnectionError, http.client.HTTPException):
                self.c.close()
                self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        return 0, b""


def start(binary, work, extra=()):
    port = free_port()
    key = subprocess.run([binary, "key", "create", "--user", "bench", "--data-dir", f"{work}/data"],
                         capture_output=True, text=True, check=True).stdout.strip()
    srv = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{work}/data",
                            "--rate-limit", "0", "--log-level", "warn", "--max-connections", "1000",
                            "--max-body", str(8 << 20), *extra])
    c = Client(port, key)
    for _ in range(400):
        try:
            if c.call("GET", "/healthz")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.05)
    return srv, port, key


def mb(kb):
    return kb / 1024


# ---- large answers ----

async def readers(port, req, n, pid, hold):
    stop = asyncio.Event()
    counts = [0] * n
    tasks = [asyncio.create_task(slow_reader(port, req, stop, counts, i, pause=0.05)) for i in range(n)]
    peak, t_end = 0, time.monotonic() + hold
    while time.monotonic() < t_end:
        peak = max(peak, rss_kb(pid))
        await asyncio.sleep(0.1)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return peak, sum(1 for c in counts if c > 0), sum(counts)


def large(binary):
    n = int(os.environ.get("BENCH_LARGE_N", "50"))
    hold = float(os.environ.get("BENCH_LARGE_HOLD", "8"))
    work = tempfile.mkdtemp(prefix="inkwell-memsoak-")
    srv, port, key = start(binary, work)
    try:
        c = Client(port, key)
        text = seed_text(100 * 1024)
        for i in range(100):
            st, body = c.call("POST", "/api/v1/documents", {"name": f"long {i}", "prompt": "soil"})
            rid = json.loads(body)["data"]["id"]
            c.call("PUT", f"/api/v1/documents/{rid}", {"result": text})
        st, body = c.call("GET", "/api/v1/documents?per_page=100")
        page = len(body)
        st, body = c.call("POST", "/api/v1/documents", {"name": "big", "prompt": "soil"})
        big = json.loads(body)["data"]["id"]
        c.call("PUT", f"/api/v1/documents/{big}", {"result": seed_text(1024 * 1024)})
        cases = [("list page of 100 x 100 KB", f"/api/v1/documents?per_page=100", page)]
        for fmt in ("html", "docx", "pdf"):
            st, body = c.call("GET", f"/api/v1/documents/{big}/export?format={fmt}")
            cases.append((f"export {fmt} of 1 MB", f"/api/v1/documents/{big}/export?format={fmt}", len(body)))
        for name, path, size in cases:
            req = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\r\n").encode()
            time.sleep(1)
            before = rss_kb(srv.pid)
            peak, opened, read = asyncio.run(readers(port, req, n, srv.pid, hold))
            time.sleep(5)
            after = rss_kb(srv.pid)
            print(f"memory-large      {name:26s} answer {size / 1048576:5.1f} MB  n={n} (read {opened})"
                  f"  RSS before {mb(before):.0f} MB  peak {mb(peak):.0f} MB (+{mb(peak - before):.0f},"
                  f" {mb(peak - before) / n * 1024:.0f} KB a reader)  5 s after {mb(after):.0f} MB"
                  f" (+{mb(after - before):.0f})", flush=True)
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(work, ignore_errors=True)


# ---- the mixed soak ----

def worker(port, key, stop, n, errors, ops):
    rnd = random.Random(n)
    c = Client(port, key)
    mine = []
    words = ["garden", "river", "stone", "tea", "winter", "harbour", "kite", "lamp"]
    while not stop.is_set():
        x = rnd.random()
        try:
            if x < 0.25 or not mine:
                st, body = c.call("POST", "/api/v1/documents",
                                  {"name": f"{rnd.choice(words)} {n}-{len(mine)}", "template_id": str(rnd.randint(1, 52)),
                                   "prompt": " ".join(rnd.choice(words) for _ in range(5))})
                if st == 201:
                    mine.append(json.loads(body)["data"]["id"])
            elif x < 0.45:
                st, _ = c.call("GET", f"/api/v1/documents?per_page={rnd.choice([10, 25, 100])}"
                                      f"&page={rnd.randint(1, 5)}&sort_by={rnd.choice(['name', 'created_at'])}")
            elif x < 0.55:
                st, _ = c.call("GET", f"/api/v1/documents?search={rnd.choice(words)}&per_page=25")
            elif x < 0.70:
                st, _ = c.call("GET", f"/api/v1/documents/{rnd.choice(mine)}")
            elif x < 0.75:
                st, _ = c.call("GET", f"/api/v1/documents/{rnd.choice(mine)}",
                               headers={"Accept": "text/event-stream"})
            elif x < 0.82:
                st, _ = c.call("PATCH", f"/api/v1/documents/{rnd.choice(mine)}",
                               {"result": seed_text(rnd.randint(1, 40) * 1024)})
            elif x < 0.87:
                st, _ = c.call("GET", f"/api/v1/documents/{rnd.choice(mine)}/export?format="
                                      f"{rnd.choice(['html', 'docx', 'pdf', 'md', 'txt'])}")
            elif x < 0.90:
                st, _ = c.call("POST", f"/api/v1/documents/{rnd.choice(mine)}/regenerate")
            elif x < 0.93:
                st, _ = c.call("POST", "/api/v1/images", {"name": "pic", "description": rnd.choice(words),
                                                          "resolution": "1024x1024"})
            elif x < 0.96 and len(mine) > 20:
                rid = mine.pop(rnd.randrange(len(mine)))
                st, _ = c.call("DELETE", f"/api/v1/documents/{rid}")
            else:
                st, _ = c.call("GET", "/api/v1/images?per_page=25")
            ops[n] += 1
            if st >= 500 or st == 0:
                errors.append(st)
        except Exception as e:  # noqa: BLE001 — a soak counts failures, it does not stop
            errors.append(repr(e))


def soak(binary, seconds):
    work = tempfile.mkdtemp(prefix="inkwell-memsoak-")
    # BENCH_SOAK_ARGS: more server options (e.g. "--record-cache-mb 0 --export-cache-mb 0")
    srv, port, key = start(binary, work, os.environ.get("BENCH_SOAK_ARGS", "").split())
    stop, errors, ops = threading.Event(), [], [0] * 8
    threads = [threading.Thread(target=worker, args=(port, key, stop, i, errors, ops)) for i in range(8)]
    samples = []
    time.sleep(1)
    idle = rss_kb(srv.pid)
    t0 = time.monotonic()
    try:
        for t in threads:
            t.start()
        while time.monotonic() - t0 < seconds:
            time.sleep(10)
            samples.append((time.monotonic() - t0, rss_kb(srv.pid)))
            if os.environ.get("BENCH_SOAK_VERBOSE"):
                print(f"  {samples[-1][0]:6.0f} s  RSS {mb(samples[-1][1]):.1f} MB  ops {sum(ops)}", flush=True)
        stop.set()
        for t in threads:
            t.join()
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(work, ignore_errors=True)
    base = next((kb for t, kb in samples if t >= 60), samples[0][1])
    peak = max(kb for _, kb in samples)
    half = [(t, kb) for t, kb in samples if t >= seconds / 2]
    # least-squares slope of the second half, MB per 10 minutes
    mt = sum(t for t, _ in half) / len(half)
    mk = sum(kb for _, kb in half) / len(half)
    den = sum((t - mt) ** 2 for t, _ in half) or 1
    slope = sum((t - mt) * (kb - mk) for t, kb in half) / den * 600 / 1024
    ok = peak <= base + CACHE_MB * 1024 and abs(slope) < 5
    print(f"memory-soak       {seconds:.0f} s, 8 clients, {sum(ops)} requests ({sum(ops) / seconds:.0f}/s),"
          f" {len(errors)} failed  RSS idle {mb(idle):.0f} MB, at 1 min {mb(base):.0f} MB  peak {mb(peak):.0f} MB"
          f"  last {mb(samples[-1][1]):.0f} MB"
          f"  second half {slope:+.1f} MB/10 min  (target: flat, peak under 1 min + {CACHE_MB} MB of caches:"
          f" {'met' if ok else 'NOT met'})", flush=True)
    if errors:
        print("  failures:", errors[:10])
    return ok and not errors


def main():
    binary, mode = sys.argv[1], sys.argv[2]
    if mode == "large":
        large(binary)
    else:
        seconds = float(sys.argv[3]) if len(sys.argv) > 3 else float(os.environ.get("BENCH_SOAK_SECONDS", "1800"))
        sys.exit(0 if soak(binary, seconds) else 1)


if __name__ == "__main__":
    main()
