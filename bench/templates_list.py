"""A list page of 100 documents (API.md §18): of a builtin template against one of the
user's own, with the record cache off (every row rendered, so the custom rows need
their template's name). Starts its own server through the test harness; the backend
is the harness's (INKWELL_TEST_BACKEND, INKWELL_TEST_PG_URL...), the binary
INKWELL_BIN. Not part of `make bench`: run it by hand,
  INKWELL_BIN=build/inkwell python3 bench/templates_list.py"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "http"))
from harness import Server
srv = Server("--record-cache-mb", "0").start()
k = srv.key("alice")
r = srv.request("POST", "/api/v1/templates", key=k, form={"name": "T", "description": "d", "instruction": "i"})
tid = str(r.json["data"]["id"])
for which, t in (("builtin", "6"), ("custom", tid)):
    for i in range(100):
        srv.request("POST", "/api/v1/documents", key=k, form={"name": f"{which}{i}", "prompt": "tea", "template_id": t})
res = {}
for which, t in (("builtin", "6"), ("custom", tid)):
    path = f"/api/v1/documents?per_page=100&template_id={t}"
    for _ in range(20):
        srv.request("GET", path, key=k)
    best = []
    for rep in range(5):
        t0 = time.perf_counter()
        for _ in range(50):
            r = srv.request("GET", path, key=k)
            assert r.status == 200 and len(r.json["data"]) == 100
        best.append((time.perf_counter() - t0) / 50 * 1000)
    res[which] = sorted(best)
srv.stop()
print(os.environ.get("INKWELL_TEST_BACKEND", "sqlite"), {k: [round(x, 2) for x in v] for k, v in res.items()}, "ms per page (5 runs of 50)")
