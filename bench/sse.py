"""make bench, streams (API.md §10). Two figures:

  ttfd PORT KEY N        time to first delta of N streamed builtin document creates, one
                         after the other on fresh connections: from the request's first
                         byte sent to the first `delta` event read (p50, p99, max); then
                         the same creates answered in JSON, to the end of the answer
  regen PORT KEY N       a regenerate of a builtin document (POST /documents/{id}/regenerate,
                         waiting: 200 with the new revision) against a create (POST
                         /documents, waiting: 201), measured the same way: N of each one
                         after the other, interleaved, on fresh connections, from the first
                         byte sent to the end of the answer (p50, p99, and requests/s)
  regen-fresh PORT KEY N  the same, each regenerate on a document created just before it
                         (not yet reached by SQLite's background search indexer, so its
                         text is not re-indexed in the regenerate's transaction)
  remote PORT_A PORT_B KEY N  time to first delta of a stream attached on process B to a
                         generation process A runs (PostgreSQL): A's create without waiting,
                         then B's stream, from B's request to its first `delta` (A's
                         builtin generator takes --builtin-delay-ms to write its pieces)
  drain PORT KEY N       N documents created without waiting (Prefer: respond-async, one
                         keep-alive connection), then /readyz polled until the job queue is
                         empty: jobs/s from the first create to the last job's end (what
                         sending every text piece to other processes costs, PostgreSQL)
  streams PORT KEY N PID N show streams held open at once on one running generation (the
                         server runs with a long --builtin-delay-ms): the server's RSS
                         before and with all N open (each has had its `record` event)

Python standard library only."""
import asyncio
import resource
import socket
import sys
import time
import urllib.parse


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def request(method, path, key, body=None, accept_sse=True, extra=""):
    h = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
    if accept_sse:
        h += "Accept: text/event-stream\r\n"
    if body is not None:
        h += f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
    return (h + extra + "\r\n" + (body or "")).encode()


def ttfd(port, key, n, sse=True):
    body = urllib.parse.urlencode({"name": "bench", "prompt": "a short note on garden soil"})
    req = request("POST", "/api/v1/documents", key, body, accept_sse=sse)
    mark = b"event: delta" if sse else b'"status":201}'
    times = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t0 = time.perf_counter()
        s.sendall(req)
        buf = b""
        while mark not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise SystemExit("stream ended before a delta: " + buf[:300].decode(errors="replace"))
            buf += chunk
        times.append(time.perf_counter() - t0)
        s.close()
    times.sort()
    pct = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1000
    if sse:
        print(f"sse-ttfd          n={n}  p50 {pct(0.50):.2f} ms  p99 {pct(0.99):.2f} ms  max {times[-1] * 1000:.2f} ms"
              "  (target p99 <= 5 ms)")
    else:
        print(f"json-create       n={n}  p50 {pct(0.50):.2f} ms  p99 {pct(0.99):.2f} ms  max {times[-1] * 1000:.2f} ms"
              "  (the same creates answered in JSON, for comparison)")


def exchange(port, req, mark, until=None):
    """Sends req on a fresh connection; the seconds until mark was read (or, with until,
    any of those), and the bytes."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.perf_counter()
    s.sendall(req)
    buf = b""
    while not (any(m in buf for m in until) if until else mark in buf):
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("answer ended early: " + buf[:300].decode(errors="replace"))
        buf += chunk
    took = time.perf_counter() - t0
    s.close()
    return took, buf


def summary(name, times, note=""):
    times = sorted(times)
    pct = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1000
    print(f"{name:<17} n={len(times)}  p50 {pct(0.50):.2f} ms  p99 {pct(0.99):.2f} ms"
          f"  {len(times) / sum(times):.0f} req/s one at a time{note}")


def regen(port, key, n):
    body = urllib.parse.urlencode({"name": "bench", "prompt": "a short note on garden soil"})
    create = request("POST", "/api/v1/documents", key, body, accept_sse=False)
    _, buf = exchange(port, create, b'"status":201}')
    rid = int(buf.split(b'"id":', 1)[1].split(b",", 1)[0])
    again = request("POST", f"/api/v1/documents/{rid}/regenerate", key, "", accept_sse=False)
    rt, ct = [], []
    for _ in range(n):
        rt.append(exchange(port, again, b'"status":200}')[0])
        ct.append(exchange(port, create, b'"status":201}')[0])
    summary("regenerate", rt)
    summary("create", ct, f"  (regenerate/create p50: {sorted(rt)[len(rt) // 2] / sorted(ct)[len(ct) // 2]:.2f};"
            " target <= 1)")


def regen_fresh(port, key, n):
    body = urllib.parse.urlencode({"name": "bench", "prompt": "a short note on garden soil"})
    create = request("POST", "/api/v1/documents", key, body, accept_sse=False)
    rt, ct = [], []
    for _ in range(n):
        took, buf = exchange(port, create, b'"status":201}')
        ct.append(took)
        rid = int(buf.split(b'"id":', 1)[1].split(b",", 1)[0])
        again = request("POST", f"/api/v1/documents/{rid}/regenerate", key, "", accept_sse=False)
        rt.append(exchange(port, again, b'"status":200}')[0])
    summary("regenerate-fresh", rt)
    summary("create", ct, f"  (regenerate/create p50: {sorted(rt)[len(rt) // 2] / sorted(ct)[len(ct) // 2]:.2f})")


def remote(port_a, port_b, key, n):
    body = urllib.parse.urlencode({"name": "bench", "prompt": "a short note on garden soil"})
    create = request("POST", "/api/v1/documents", key, body, accept_sse=False,
                     extra="Prefer: respond-async\r\n")
    times, finished = [], 0
    for _ in range(n):
        _, buf = exchange(port_a, create, b'"status":202}')
        rid = int(buf.split(b'"id":', 1)[1].split(b",", 1)[0])
        show = request("GET", f"/api/v1/documents/{rid}", key)
        took, buf = exchange(port_b, show, b"\n\n", until=(b"event: delta", b"event: done"))
        if b"event: delta" in buf:
            times.append(took)
        else:  # finished before B looked: its text came whole in the record event
            finished += 1
    if not times:
        print(f"sse-ttfd-remote   n={n}  every generation had finished before B's stream began")
        return
    times.sort()
    pct = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1000
    print(f"sse-ttfd-remote   n={n}  p50 {pct(0.50):.2f} ms  p99 {pct(0.99):.2f} ms  max {times[-1] * 1000:.2f} ms"
          f"  (a stream on B of A's generation, PostgreSQL; {finished} more had finished first)")


def drain(port, key, n):
    import http.client
    import json
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-www-form-urlencoded",
         "Prefer": "respond-async"}
    t0 = time.perf_counter()
    for i in range(n):
        c.request("POST", "/api/v1/documents", body=urllib.parse.urlencode(
            {"name": f"d{i}", "prompt": f"a short note on garden soil {i}"}), headers=h)
        r = c.getresponse()
        r.read()
        if r.status != 202:
            raise SystemExit(f"create {i}: {r.status}")
    while True:
        c.request("GET", "/readyz")
        jobs = json.loads(c.getresponse().read()).get("jobs", {})
        if jobs.get("queued", 1) == 0 and jobs.get("running", 1) == 0:
            break
        time.sleep(0.01)
    took = time.perf_counter() - t0
    print(f"drain             n={n}  {n / took:.0f} jobs/s (async creates until the queue is empty)")


async def hold(port, key, path, ready, stop):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(request("GET", path, key))
    await w.drain()
    buf = b""
    while b"event: record" not in buf:
        chunk = await r.read(65536)
        if not chunk:
            raise SystemExit("a stream ended early: " + buf[:300].decode(errors="replace"))
        buf += chunk
    ready.append(1)
    await stop.wait()
    w.close()


async def streams(port, key, n, pid):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 256)), hard))
    body = urllib.parse.urlencode({"name": "long", "prompt": "held open"})
    # one long generation (the server's --builtin-delay-ms), created without waiting
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(request("POST", "/api/v1/documents", key, body, accept_sse=False,
                    extra="Prefer: respond-async\r\n"))
    await w.drain()
    head = (await r.read(65536)).decode()
    w.close()
    loc = [l for l in head.split("\r\n") if l.lower().startswith("location:")][0].split(":", 1)[1].strip()
    path = urllib.parse.urlsplit(loc).path
    await asyncio.sleep(0.5)
    before = rss_kb(pid)
    ready, stop = [], asyncio.Event()
    tasks = [asyncio.create_task(hold(port, key, path, ready, stop)) for _ in range(n)]
    t0 = time.time()
    while len(ready) < n and time.time() - t0 < 120:
        await asyncio.sleep(0.1)
        for t in tasks:
            if t.done() and t.exception():
                raise t.exception()
    await asyncio.sleep(1)
    with_streams = rss_kb(pid)
    print(f"sse-streams       {len(ready)} open streams: server RSS {before / 1024:.1f} MB before, "
          f"{with_streams / 1024:.1f} MB with them (+{(with_streams - before) / 1024:.1f} MB; "
          "target <= 50 MB)")
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)


def main():
    if sys.argv[1] == "remote":
        remote(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
        return
    what, port, key, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    if what == "regen":
        regen(port, key, n)
    elif what == "regen-fresh":
        regen_fresh(port, key, n)
    elif what == "drain":
        drain(port, key, n)
    elif what == "ttfd":
        ttfd(port, key, n)
        ttfd(port, key, n, sse=False)
    else:
        asyncio.run(streams(port, key, n, int(sys.argv[5])))


if __name__ == "__main__":
    main()
