"""make bench, memory of slow readers of lists (issue 38 item 5).

  slow_lists.py BIN [N]

Starts BIN (inkwell, SQLite, a fresh data directory) and seeds one user with 1,000
templates of 8,000 characters, 100 documents of 20 KB and one document with 50
revisions of 20 KB. Then, for each list in turn — GET /templates, GET
/documents?per_page=100, GET /documents/{id}/revisions?per_page=100 — N (default 40)
clients read it slowly (a few KB, then a pause; small receive buffers), without and
then with `Accept-Encoding: gzip`. Prints the answer's size and the server's RSS
(VmRSS): before, at the peak while the readers are open, and 5 s after they closed.
The goal (issue 38): under 50 MB more at the peak, and given back.

Python standard library only."""
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_soak import Client, mb, readers, start  # noqa: E402
from stream_memory import rss_kb, seed_text  # noqa: E402


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    hold = float(os.environ.get("BENCH_LISTS_HOLD", "8"))
    work = tempfile.mkdtemp(prefix="inkwell-lists-")
    srv, port, key = start(binary, work, ["--max-revisions", "60"])
    try:
        c = Client(port, key)
        instr = ("Write a careful piece about the subject of the prompt. " * 160)[:8000]
        for i in range(1000):
            st, body = c.call("POST", "/api/v1/templates",
                              {"name": f"Template {i}", "description": f"What template {i} writes.",
                               "instruction": instr})
            assert st == 201, body[:200]
        text = seed_text(20 * 1024)
        for i in range(100):
            st, body = c.call("POST", "/api/v1/documents", {"name": f"doc {i}", "prompt": "soil"})
            rid = json.loads(body)["data"]["id"]
            c.call("PUT", f"/api/v1/documents/{rid}", {"result": text + str(i)})
        for v in range(50):
            c.call("PUT", f"/api/v1/documents/{rid}", {"result": text + f" revision {v}"})
        cases = [("templates (1,000 of 8,000 chars)", "/api/v1/templates"),
                 ("documents, 100 of 20 KB", "/api/v1/documents?per_page=100"),
                 ("revisions, 50 of 20 KB", f"/api/v1/documents/{rid}/revisions?per_page=100")]
        for name, path in cases:
            for coding in (None, "gzip"):
                h = {"Accept-Encoding": coding} if coding else {}
                st, body = c.call("GET", path, headers=h)
                assert st == 200, body[:200]
                req = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                       + (f"Accept-Encoding: {coding}\r\n" if coding else "") + "\r\n").encode()
                time.sleep(1)
                before = rss_kb(srv.pid)
                peak, opened, _ = asyncio.run(readers(port, req, n, srv.pid, hold))
                time.sleep(5)
                after = rss_kb(srv.pid)
                print(f"slow-lists  {name:34s} {coding or 'identity':8s} answer {len(body) / 1024:7.0f} KB"
                      f"  n={n} (read {opened})  RSS before {mb(before):.0f} MB  peak {mb(peak):.0f} MB"
                      f" (+{mb(peak - before):.0f})  5 s after {mb(after):.0f} MB (+{mb(after - before):.0f})",
                      flush=True)
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
