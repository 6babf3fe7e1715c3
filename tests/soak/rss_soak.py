"""Record-cache memory soak (issue 14): one server with a small rendered-record cache
(--record-cache-mb, default 8 here so that it is full within minutes), many more
records than fit, and a steady mix of list pages, shows and updates (each update makes
a new version to render). Prints the server's RSS every SAMPLE seconds; the cache is
bounded when RSS stops rising once the cache is full. Not part of make check.

  INKWELL_BIN=build/inkwell python3 tests/soak/rss_soak.py [MINUTES] [CACHE_MB]
"""
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http"))
from harness import Server  # noqa: E402

MINUTES = float(sys.argv[1]) if len(sys.argv) > 1 else 30
CACHE_MB = sys.argv[2] if len(sys.argv) > 2 else "8"
RECORDS = 30000
SAMPLE = 30


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    srv = Server("--record-cache-mb", CACHE_MB, "--log-level", "warn").start()
    key = srv.key("soak")
    t0 = time.time()
    print(f"cache {CACHE_MB} MiB; creating {RECORDS} documents...", flush=True)
    for i in range(RECORDS):
        r = srv.request("POST", "/api/v1/documents", key=key,
                        form={"name": f"soak {i} " + "n" * (i % 200), "prompt": f"memory soak {i}",
                              "template_id": str(i % 52 + 1)})
        assert r.status == 201, r
    print(f"created in {time.time() - t0:.0f} s; rss {rss_kb(srv.proc.pid)} kB", flush=True)
    stop = time.time() + MINUTES * 60
    counts = {"lists": 0, "shows": 0, "updates": 0}

    def load(seed):
        rnd = random.Random(seed)
        while time.time() < stop:
            x = rnd.random()
            if x < 0.6:
                page = rnd.randint(1, RECORDS // 100)
                srv.request("GET", f"/api/v1/documents?per_page=100&page={page}", key=key)
                counts["lists"] += 1
            elif x < 0.9:
                srv.request("GET", f"/api/v1/documents/{rnd.randint(1, RECORDS)}", key=key)
                counts["shows"] += 1
            else:
                srv.request("PATCH", f"/api/v1/documents/{rnd.randint(1, RECORDS)}", key=key,
                            form={"favorite": rnd.choice(["1", "0"])})
                counts["updates"] += 1

    threads = [threading.Thread(target=load, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    start = time.time()
    samples = []
    while time.time() < stop:
        samples.append((time.time() - start, rss_kb(srv.proc.pid)))
        print(f"t={samples[-1][0]:7.0f} s  rss={samples[-1][1]:8d} kB  {counts}", flush=True)
        time.sleep(SAMPLE)
    for t in threads:
        t.join()
    samples.append((time.time() - start, rss_kb(srv.proc.pid)))
    print(f"t={samples[-1][0]:7.0f} s  rss={samples[-1][1]:8d} kB  {counts}", flush=True)
    half = [kb for s, kb in samples if s >= (MINUTES * 60) / 2]
    print(f"rss first sample {samples[0][1]} kB, max {max(k for _, k in samples)} kB, "
          f"second half min {min(half)} max {max(half)} kB (spread {max(half) - min(half)} kB)")
    srv.stop()


if __name__ == "__main__":
    main()
