"""Exports beside everyone else (issue 17 item 2): 8 clients export a 1 MB document as
PDF over and over (each its own user and document, the export cache off so that each
export is made again), while another user's list and /healthz are measured, each on
its own keep-alive connection in its own process.
usage: export_load.py PORT SECONDS KEY_LIST KEY_EXPORT1 ... KEY_EXPORT8
Prints one line: p50 and p99 of the list and of /healthz, exports made, refusals."""
import http.client
import multiprocessing as mp
import sys
import threading
import time
import urllib.parse

EXPORTERS = 8


def conn(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def request(c, method, path, key=None, body=None):
    h = {"Authorization": f"Bearer {key}"} if key else {}
    if body is not None:
        h["Content-Type"] = "application/x-www-form-urlencoded"
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    return r.status, data


def make_big_doc(port, key):
    """A completed document whose result is 1 MB of paragraphs."""
    c = conn(port)
    st, data = request(c, "POST", "/api/v1/documents", key,
                       urllib.parse.urlencode({"name": "Big", "prompt": "a long report"}))
    assert st == 201, (st, data[:200])
    import json
    doc = json.loads(data)["data"]["id"]
    words = "the quick brown fox jumps over the lazy dog and keeps on running far away".split()
    paras, size = [], 0
    while size < 1_000_000:
        p = " ".join(words[(len(paras) + i) % len(words)] for i in range(120))
        paras.append(p)
        size += len(p) + 2
    st, data = request(c, "PUT", f"/api/v1/documents/{doc}", key,
                       urllib.parse.urlencode({"result": "\n\n".join(paras)}))
    assert st == 200, (st, data[:200])
    return doc


def exporter(port, key, doc, until, out):
    c = conn(port)
    made = refused = 0
    while time.time() < until:
        st, _ = request(c, "GET", f"/api/v1/documents/{doc}/export?format=pdf", key)
        if st == 200:
            made += 1
        else:
            refused += 1
            time.sleep(0.2)
    out.put((made, refused))


def measure(name, port, path, key, start, until, out):
    c = conn(port)
    lat = []
    while time.time() < start:
        time.sleep(0.01)
    while time.time() < until:
        t = time.perf_counter()
        st, _ = request(c, "GET", path, key)
        lat.append(time.perf_counter() - t)
        assert st == 200, st
        time.sleep(0.01)
    out.put((name, sorted(lat)))


def exporters(port, keys, docs, until, out):
    threads = [threading.Thread(target=exporter, args=(port, k, d, until, out)) for k, d in zip(keys, docs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def pct(lat, q):
    return lat[min(len(lat) - 1, int(q * len(lat)))] * 1000


def main():
    port, secs, key_list = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    keys = sys.argv[4:4 + EXPORTERS]
    docs = [make_big_doc(port, k) for k in keys]
    q, eq = mp.Queue(), mp.Queue()
    start = time.time() + 1.0  # the exports are under way before the measuring starts
    until = start + secs
    procs = [mp.Process(target=measure, args=("list", port, "/api/v1/documents", key_list, start, until, q)),
             mp.Process(target=measure, args=("healthz", port, "/healthz", None, start, until, q)),
             mp.Process(target=exporters, args=(port, keys, docs, until, eq))]
    for p in procs:
        p.start()
    res = dict(q.get() for _ in range(2))
    made = refused = 0
    for _ in keys:
        m, r = eq.get()
        made, refused = made + m, refused + r
    for p in procs:
        p.join()
    figs = " ".join(f"{n} p50 {pct(res[n], 0.5):.1f} ms p99 {pct(res[n], 0.99):.1f} ms ({len(res[n])} req);"
                    for n in ("list", "healthz"))
    print(f"export-load (8 PDF exports of 1 MB at once for {secs:.0f} s, another user measured): {figs} "
          f"exports made {made}, refused {refused}; target p99 < 50 ms")


if __name__ == "__main__":
    main()
