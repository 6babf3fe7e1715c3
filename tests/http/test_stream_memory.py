"""Memory of streamed shows (API.md §10; issue 25 item 6): a stream makes its events a
window at a time as its client reads them, and a finished text is held once for all
the streams showing it, so many slow readers of a long document cost the server little
memory, and that memory goes back to the system once they close. The same for other
large answers (LargeAnswers): a list page of long documents and an export are sent from
a file (http.h spill_dir), without the records they were made from.

The RSS figures are the server's VmRSS (/proc/PID/status); they are skipped under
valgrind and the sanitizers (whose allocators are not the server's), where the streams
are still read and checked whole."""
import http.client
import json
import socket
import time

from harness import SANITIZED, VALGRIND, ServerTest, metric, slow, wait_for

MEASURE = not VALGRIND and not SANITIZED


def small_window(port):
    """A connection whose receive buffer is 16 KB from the start: a slow reader with no
    read-ahead. Set before connect, so the window it advertises never shrinks; shrinking
    it afterwards (below what was advertised, and below loopback's 32 KB segments) leaves
    the sender to the persist timer, whose probes back off to minutes."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.settimeout(slow(60))
    s.connect(("127.0.0.1", port))
    return s


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def long_text(size):
    """size bytes or a little less of text with every kind of byte a delta or the JSON
    escaping must get right: 2-, 3- and 4-byte characters, quotes, backslashes, controls."""
    unit = "Garden soil, été; 記事 \"quoted\" back\\slash\ttab 🌱 line\n"
    n = len(unit.encode())
    return unit * (size // n)


def dechunk(body, whole=False):
    """The data of a chunked body (or of as much of it as was read)."""
    out, p = bytearray(), 0
    while True:
        e = body.find(b"\r\n", p)
        if e < 0:
            break
        n = int(body[p:e], 16)
        if n == 0:
            return bytes(out)
        out += body[e + 2:e + 2 + n]
        p = e + 2 + n + 2
        if p > len(body):
            break
    assert not whole, "the chunked body did not end"
    return bytes(out)


def parse_events(body):
    evs = []
    for block in body.split("\n\n"):
        kind, eid, data = None, None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("id: "):
                eid = int(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if kind:
            evs.append((kind, eid, data))
    return evs


class StreamMemory(ServerTest):
    server_args = ["--max-body", str(4 << 20), "--max-connections", "400"]
    SIZE = 1 << 20

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.text = long_text(cls.SIZE)
        r = cls.srv.request("POST", "/api/v1/documents", key=cls.alice,
                            form={"name": "long", "prompt": "soil"})
        assert r.status == 201, r
        cls.rid = r.json["data"]["id"]
        r = cls.srv.request("PUT", f"/api/v1/documents/{cls.rid}", key=cls.alice,
                            form={"result": cls.text})
        assert r.status == 200, r
        assert r.json["data"]["result"] == cls.text

    def raw_request(self, extra=""):
        return (f"GET /api/v1/documents/{self.rid} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {self.alice}\r\nAccept: text/event-stream\r\n{extra}\r\n").encode()

    def read_whole(self, headers=None):
        h = {"Accept": "text/event-stream", "Authorization": f"Bearer {self.alice}"}
        h.update(headers or {})
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=slow(60))
        c.request("GET", f"/api/v1/documents/{self.rid}", headers=h)
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        body = r.read().decode()
        c.close()
        return parse_events(body)

    def check_whole(self, evs, start=0):
        """record (with the text), the deltas from byte start, done (with the text)."""
        data = self.text.encode()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[0][2]["result"], self.text)
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual(evs[-1][2]["result"], self.text)
        self.assertEqual(evs[-1][2]["state"], "completed")
        joined = b""
        for kind, eid, d in evs[1:-1]:
            self.assertEqual(kind, "delta")
            piece = d["text"].encode()
            self.assertTrue(piece)
            joined += piece
            self.assertEqual(eid, start + len(joined))
        self.assertEqual(joined, data[start:])

    def test_a_long_text_streams_whole(self):
        self.check_whole(self.read_whole())

    def test_resume_inside_a_long_text(self):
        data = self.text.encode()
        n = 600001
        while (data[n] & 0xC0) == 0x80:  # the show starts at the character's first byte
            n -= 1
        self.check_whole(self.read_whole({"Last-Event-ID": "600001"}), start=n)

    def read_round_robin(self, socks, until):
        """Reads 4 KB from each socket in turn until until(counts) or all have ended;
        returns what each read."""
        got = [bytearray() for _ in socks]
        live = set(range(len(socks)))
        while live and not until([len(g) for g in got]):
            for i in list(live):
                b = socks[i].recv(4096)
                if not b:
                    live.discard(i)
                got[i] += b
        return got

    def test_interleaved_readers_each_get_the_whole_text(self):
        # several streams of one text read a piece at a time in turn: each is whole
        socks = [small_window(self.srv.port) for _ in range(5)]
        for s in socks:
            s.sendall(self.raw_request("Connection: close\r\n"))
        got = self.read_round_robin(socks, lambda counts: False)
        for s in socks:
            s.close()
        for raw in got:
            head, body = bytes(raw).split(b"\r\n\r\n", 1)
            self.assertIn(b"200", head.split(b"\r\n")[0])
            self.check_whole(parse_events(dechunk(body, whole=True).decode()))

    def test_slow_readers_hold_a_window_and_give_it_back(self):
        """(Under valgrind or a sanitizer: 20 slow readers, and no RSS figures.)"""
        pid = self.srv.proc.pid
        self.check_whole(self.read_whole())  # warm: the server has streamed this text once
        before = rss_mb(pid)
        n = 100 if MEASURE else 20
        socks = []
        try:
            for _ in range(n):
                s = small_window(self.srv.port)
                s.sendall(self.raw_request())
                socks.append(s)
            peak = before
            # a slow read: 4 KB from each in turn, with a pause, until each has read 128 KB
            # (the record event's text: every stream is well into its answer)
            got = [bytearray() for _ in socks]
            while min(len(g) for g in got) < 128 * 1024:
                for i, s in enumerate(socks):
                    b = s.recv(4096)
                    self.assertTrue(b, "a stream ended early")
                    got[i] += b
                peak = max(peak, rss_mb(pid))
                time.sleep(0.02)
            peak = max(peak, rss_mb(pid))
        finally:
            for s in socks:
                s.close()
        # what each read is the record event with the text's beginning
        head = json.dumps(self.text[:2000], ensure_ascii=False)[:-1].encode()
        for g in got:
            self.assertTrue(g.startswith(b"HTTP/1.1 200"), bytes(g[:100]))
            body = dechunk(bytes(g).split(b"\r\n\r\n", 1)[1])
            self.assertTrue(body.startswith(b"event: record\ndata: {"), body[:100])
            self.assertIn(b'"result":' + head, body)
        if not MEASURE:
            return  # RSS is not the server's own under valgrind or a sanitizer
        # ~5 MB a stream before (the whole answer made at once): 100 would add ~500 MB
        self.assertLess(peak - before, 100, f"RSS {before:.0f} MB -> {peak:.0f} MB with {n} slow streams")
        wait_for(lambda: metric(self.srv, "inkwell_sse_streams_open") == 0, "the streams to close", timeout=30)
        last = [0]

        def returned():
            last[0] = rss_mb(pid)
            return last[0] - before < 20

        try:
            wait_for(returned, "RSS to return", timeout=30, interval=0.2)
        except AssertionError:
            self.fail(f"RSS {before:.0f} MB before, {peak:.0f} MB at the peak, {last[0]:.0f} MB after the close")


class LargeAnswers(ServerTest):
    """Slow readers of a 5 MB list page and of a 1 MB document's HTML export: each holds
    little of the server's memory (before: the whole answer and the records it was made
    from, ~10 MB a reader of the page), and every answer read whole is the right one."""
    server_args = ["--max-body", str(4 << 20), "--max-connections", "400"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        text = long_text(100 * 1024)
        for i in range(50):
            r = cls.srv.request("POST", "/api/v1/documents", key=cls.alice, form={"name": f"long {i}", "prompt": "soil"})
            assert r.status == 201, r
            r = cls.srv.request("PUT", f"/api/v1/documents/{r.json['data']['id']}", key=cls.alice, form={"result": text})
            assert r.status == 200, r
        cls.rid = r.json["data"]["id"]
        r = cls.srv.request("PUT", f"/api/v1/documents/{cls.rid}", key=cls.alice, form={"result": long_text(1 << 20)})
        assert r.status == 200, r

    def slow_readers(self, path, n, until):
        """n clients ask for path and read 4 KB each in turn until each has `until` bytes;
        returns (RSS before, RSS at the peak) in MB."""
        pid = self.srv.proc.pid
        before = rss_mb(pid)
        req = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {self.alice}\r\n\r\n").encode()
        socks = []
        try:
            for _ in range(n):
                s = small_window(self.srv.port)
                s.sendall(req)
                socks.append(s)
            got, peak = [0] * n, before
            while min(got) < until:
                for i, s in enumerate(socks):
                    b = s.recv(4096)
                    self.assertTrue(b, "an answer ended early")
                    got[i] += len(b)
                peak = max(peak, rss_mb(pid))
                time.sleep(0.01)
        finally:
            for s in socks:
                s.close()
        return before, peak

    def whole(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=slow(60))
        c.request("GET", path, headers={"Authorization": f"Bearer {self.alice}"})
        r = c.getresponse()
        body = r.read()
        c.close()
        self.assertEqual(r.status, 200)
        self.assertEqual(int(r.getheader("Content-Length")), len(body))
        return body

    def test_a_list_page_of_long_documents(self):
        path = "/api/v1/documents?per_page=50"
        page = json.loads(self.whole(path))
        self.assertEqual(len(page["data"]), 50)
        self.assertEqual(page["meta"]["total"], 50)
        self.assertGreater(sum(len(d["result"]) for d in page["data"]), 5_000_000)
        # the same page again (held renderings this time) is the same bytes
        self.assertEqual(json.loads(self.whole(path)), page)
        n = 40 if MEASURE else 8
        before, peak = self.slow_readers(path, n, 256 * 1024)
        if MEASURE:  # ~10 MB a reader before: 40 would add ~400 MB
            self.assertLess(peak - before, 60, f"RSS {before:.0f} -> {peak:.0f} MB with {n} slow readers of a 5 MB page")

    def test_an_export_of_a_long_document(self):
        path = f"/api/v1/documents/{self.rid}/export?format=html"
        body = self.whole(path)
        self.assertIn(b"<html", body[:200].lower())
        self.assertEqual(self.whole(path), body)  # from the export cache: the same file
        n = 40 if MEASURE else 8
        before, peak = self.slow_readers(path, n, 128 * 1024)
        if MEASURE:  # a copy of the document and of its export a reader before
            self.assertLess(peak - before, 30, f"RSS {before:.0f} -> {peak:.0f} MB with {n} slow readers of a 1 MB export")


if __name__ == "__main__":
    unittest.main()
