"""A flood of wrong sign-ins beside everyone else (API.md §21, issue 34): 200 clients
send wrong passwords at once, without pause, each from its own address (through a
trusted proxy's X-Forwarded-For, so the per-address limit does not stop them) and for
its own name (so the per-name limit does not either: every one costs a password check
until the password pool is full, and then a 429), while another user's list is
measured on its own keep-alive connection in its own process.
usage: signin_flood.py PORT SECONDS KEY_LIST
Prints one line: the list's p50 and p99, sign-ins answered 401 and 429."""
import http.client
import multiprocessing as mp
import random
import sys
import threading
import time
import urllib.parse

CLIENTS = 200


def conn(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def flooder(port, n, until, out):
    c = conn(port)
    addr = f"10.{n // 250}.{n % 250}.{random.randint(1, 250)}"
    c.request("GET", "/api/v1/session/csrf", headers={"X-Forwarded-For": addr})
    r = c.getresponse()
    r.read()
    token = r.getheader("Set-Cookie").split(";")[0].split("=", 1)[1]
    counts = {}
    i = 0
    while time.time() < until:
        i += 1
        body = urllib.parse.urlencode({"name": f"flood{n}-{i}", "password": "not the password"})
        c.request("POST", "/api/v1/session", body=body,
                  headers={"Content-Type": "application/x-www-form-urlencoded",
                           "Cookie": f"XSRF-TOKEN={token}", "X-XSRF-TOKEN": token,
                           "X-Forwarded-For": addr})
        r = c.getresponse()
        r.read()
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status == 429:
            time.sleep(0.05)
    out.put(counts)


def flood(port, until, out):
    threads = [threading.Thread(target=flooder, args=(port, n, until, out)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def measure(port, key, start, until, out):
    c = conn(port)
    lat = []
    while time.time() < start:
        time.sleep(0.01)
    while time.time() < until:
        t = time.perf_counter()
        c.request("GET", "/api/v1/documents?per_page=10", headers={"Authorization": f"Bearer {key}"})
        r = c.getresponse()
        r.read()
        lat.append(time.perf_counter() - t)
        assert r.status == 200, r.status
        time.sleep(0.01)
    out.put(sorted(lat))


def main():
    port, secs, key = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    c = conn(port)
    for i in range(20):  # something to list
        c.request("POST", "/api/v1/documents", body=urllib.parse.urlencode({"name": f"d{i}", "prompt": "tea"}),
                  headers={"Authorization": f"Bearer {key}",
                           "Content-Type": "application/x-www-form-urlencoded"})
        r = c.getresponse()
        r.read()
    start = time.time() + 2  # the flood is on before measuring
    until = start + secs
    q = mp.Queue()
    f = mp.Process(target=flood, args=(port, until, q))
    m = mp.Process(target=measure, args=(port, key, start, until, q))
    f.start()
    m.start()
    lat, counts = None, {}
    for _ in range(CLIENTS + 1):
        got = q.get()
        if isinstance(got, list):
            lat = got
        else:
            for k, v in got.items():
                counts[k] = counts.get(k, 0) + v
    f.join()
    m.join()
    p50 = lat[len(lat) // 2] * 1000
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
    verdict = "ok" if p99 <= 50 else "OVER"
    print(f"signin flood ({CLIENTS} clients, {secs:g} s): another user's list p50 {p50:.1f} ms, "
          f"p99 {p99:.1f} ms (target <= 50: {verdict}); sign-ins 401 {counts.get(401, 0)}, "
          f"429 {counts.get(429, 0)}, other {sum(v for k, v in counts.items() if k not in (401, 429))}")


if __name__ == "__main__":
    main()
