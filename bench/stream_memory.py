"""make bench, memory of slow streams (API.md §10; issue 25 item 6).

  stream_memory.py BIN [N] [SIZE_KB]

Starts BIN (inkwell) on a fresh data directory, seeds one document whose result is
SIZE_KB KB of text (default 1024: one POST, then a PUT of the result), opens N
(default 200) streamed shows of it (`Accept: text/event-stream`) that read slowly (a
few KB, then a pause; each socket's receive buffer is set small so the kernel does not
read ahead for them), and prints the server's RSS (VmRSS of /proc/PID/status):
before the streams, the peak while they are open, and 5 s after they have all been
closed. One stream is then read whole to check its joined deltas are the text.

Python standard library only."""
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def call(port, key, method, path, form=None):
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Authorization": f"Bearer {key}"})
    if data is not None:
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def seed_text(size):
    """size bytes of text: ASCII words with some two- and three-byte characters."""
    rnd = random.Random(7)
    words = ["garden", "soil", "été", "naïve", "記事", "water", "root", "\"quoted\"", "line\n"]
    out, n = [], 0
    while n < size:
        w = rnd.choice(words) + " "
        out.append(w)
        n += len(w.encode())
    text = "".join(out).encode()[:size].decode(errors="ignore")
    return text


def request(port, key, rid):
    return (f"GET /api/v1/documents/{rid} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {key}\r\nAccept: text/event-stream\r\n\r\n").encode()


async def slow_reader(port, req, stop, counts, i, chunk=4096, pause=0.25):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)  # no autotuned read-ahead
    s.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(s, ("127.0.0.1", port))
    await loop.sock_sendall(s, req)
    try:
        while not stop.is_set():
            b = await loop.sock_recv(s, chunk)
            if not b:
                break
            counts[i] += len(b)
            await asyncio.sleep(pause)
    finally:
        s.close()


def read_whole(port, req):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(req)
    buf = bytearray()
    while True:
        b = s.recv(1 << 16)
        if not b:
            break
        buf += b
        if buf.endswith(b"0\r\n\r\n") and b"event: done" in buf:
            break
    s.close()
    body = bytes(buf).split(b"\r\n\r\n", 1)[1]
    # undo the chunked framing
    out, p = bytearray(), 0
    while True:
        e = body.index(b"\r\n", p)
        n = int(body[p:e], 16)
        if n == 0:
            break
        out += body[e + 2:e + 2 + n]
        p = e + 2 + n + 2
    deltas, ids, record, done = [], [], None, None
    for ev in out.decode().split("\n\n"):
        kind, eid, data = None, None, None
        for line in ev.split("\n"):
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("id: "):
                eid = int(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if kind == "delta":
            deltas.append(data["text"])
            ids.append(eid)
        elif kind == "record":
            record = data
        elif kind == "done":
            done = data
    return record, "".join(deltas), ids, done


async def streams(port, req, n, pid, hold):
    stop = asyncio.Event()
    counts = [0] * n
    tasks = [asyncio.create_task(slow_reader(port, req, stop, counts, i)) for i in range(n)]
    peak = 0
    t_end = time.monotonic() + hold
    while time.monotonic() < t_end:
        peak = max(peak, rss_kb(pid))
        await asyncio.sleep(0.1)
    opened = sum(1 for c in counts if c > 0)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return peak, opened, sum(counts)


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    size = (int(sys.argv[3]) if len(sys.argv) > 3 else 1024) * 1024
    hold = float(os.environ.get("BENCH_STREAM_HOLD", "8"))
    work = tempfile.mkdtemp(prefix="inkwell-streammem-")
    port = free_port()
    key = subprocess.run([binary, "key", "create", "--user", "bench", "--data-dir", f"{work}/data"],
                         capture_output=True, text=True, check=True).stdout.strip()
    srv = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{work}/data",
                            "--rate-limit", "0", "--log-level", "warn", "--max-connections", str(n + 100),
                            "--max-body", str(4 * size + 65536)])
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        rid = call(port, key, "POST", "/api/v1/documents", {"name": "big", "prompt": "soil"})["data"]["id"]
        text = seed_text(size)
        call(port, key, "PUT", f"/api/v1/documents/{rid}", {"result": text})
        req = request(port, key, rid)
        # one whole read first: the stream is right, and the server has served one
        record, joined, ids, done = read_whole(port, req)
        ok = record["result"] == text and joined == text and done["result"] == text and \
            ids[-1] == len(text.encode()) and all(a < b for a, b in zip(ids, ids[1:]))
        time.sleep(1)
        before = rss_kb(srv.pid)
        peak, opened, read = asyncio.run(streams(port, req, n, srv.pid, hold))
        time.sleep(5)
        after = rss_kb(srv.pid)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            still = [l for l in r.read().decode().splitlines() if l.startswith("inkwell_sse_streams_open")]
        if os.environ.get("BENCH_STREAM_DEBUG"):
            print("after close:", still, file=sys.stderr)
        mb = lambda kb: kb / 1024
        print(f"stream-memory     n={n} text={size // 1024} KB  RSS before {mb(before):.0f} MB"
              f"  peak {mb(peak):.0f} MB (+{mb(peak - before):.0f} MB, {mb(peak - before) / n * 1024:.0f} KB a stream)"
              f"  5 s after close {mb(after):.0f} MB (+{mb(after - before):.0f} MB)"
              f"  streams opened {opened}/{n}, {read // 1024} KB read; one whole stream {'right' if ok else 'WRONG'}"
              "  (target: +<100 MB at the peak, within 10 MB after)")
        if not ok:
            sys.exit(1)
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
