"""A COMMIT whose outcome the connection did not tell (issue 25 item 3, API.md §5/§6):
the answer must be true. inkwell talks to PostgreSQL through a TCP proxy of this test
that cuts the connection of the request that creates a record at its COMMIT: either
after passing the COMMIT on (the database applies it: the answer must be the 201 of a
stored record) or instead of passing it on (the database rolls back: the answer must
be a 503 and no record may exist). Every answer is checked against the database."""
import socket
import struct
import subprocess
import threading
import unittest
import urllib.parse

from harness import PG_URL, Server, pg_database


class CommitCutter:
    """A PostgreSQL wire-protocol proxy on 127.0.0.1. When armed, the first connection
    that binds the named create statement (ink_img_insert / ink_doc_insert...) has its
    next COMMIT cut: mode "after" forwards it and then closes both sides, "before" closes
    both sides without forwarding it."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.lock = threading.Lock()
        self.mode = None       # "after" | "before" | None
        self.statement = None  # the create statement's name, as bytes
        self.cuts = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def arm(self, mode, statement):
        with self.lock:
            self.mode, self.statement = mode, statement.encode()

    def accept(self):
        while True:
            try:
                client, _ = self.lsock.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            threading.Thread(target=self.pipe_client, args=(client, server), daemon=True).start()
            threading.Thread(target=self.pipe_server, args=(server, client), daemon=True).start()

    @staticmethod
    def close(*socks):
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def pipe_server(self, server, client):
        try:
            while True:
                data = server.recv(65536)
                if not data:
                    break
                client.sendall(data)
        except OSError:
            pass
        self.close(server, client)

    def pipe_client(self, client, server):
        buf = b""
        started = False
        marked = False  # this connection bound the create statement in its transaction
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                buf += data
                while True:
                    if not started:  # the startup packet (and an SSL request) has no type byte
                        if len(buf) < 4:
                            break
                        n = struct.unpack("!I", buf[:4])[0]
                        if len(buf) < n:
                            break
                        msg, buf = buf[:n], buf[n:]
                        if n == 8 and msg[4:] == struct.pack("!I", 80877103):
                            server.sendall(msg)
                            continue
                        started = True
                        server.sendall(msg)
                        continue
                    if len(buf) < 5:
                        break
                    n = struct.unpack("!I", buf[1:5])[0]
                    if len(buf) < 1 + n:
                        break
                    msg, buf = buf[:1 + n], buf[1 + n:]
                    kind = msg[:1]
                    with self.lock:
                        if kind == b"B" and self.mode and self.statement and self.statement in msg:
                            marked = True
                        if marked and kind == b"Q" and msg[5:].startswith(b"COMMIT"):
                            mode, self.mode = self.mode, None
                            self.cuts += 1
                            if mode == "after":
                                server.sendall(msg)
                            self.close(client, server)
                            return
                    server.sendall(msg)
        except OSError:
            pass
        self.close(client, server)

    def stop(self):
        self.lsock.close()


def count(db, table, name):
    out = subprocess.run(["psql", db, "-qAtc", f"SELECT count(*) FROM {table} WHERE name = '{name}'"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


@unittest.skipUnless(PG_URL, "needs PostgreSQL")
class CutAtCommit(unittest.TestCase):
    def setUp(self):
        self.db = pg_database()
        u = urllib.parse.urlsplit(self.db)
        self.proxy = CommitCutter(u.port)
        via = self.db.replace(f":{u.port}/", f":{self.proxy.port}/")
        self.srv = Server("--workers", "2", database=via).start()
        self.key = self.srv.key("cut")

    def tearDown(self):
        self.srv.stop()
        self.proxy.stop()

    def create(self, path, form, statement, mode):
        self.proxy.arm(mode, statement)
        r = self.srv.request("POST", path, key=self.key, form=form)
        self.assertEqual(self.proxy.cuts, 1, "the proxy did not cut the create's COMMIT")
        return r

    def test_commit_applied_answers_the_stored_record(self):
        for path, table, stmt, form in (
                ("/api/v1/images", "images", "ink_img_insert",
                 {"name": "cut-after", "description": "sea", "resolution": "1024x1024"}),
                ("/api/v1/documents", "documents", "ink_doc_insert",
                 {"name": "cut-after", "prompt": "tea"})):
            with self.subTest(path=path):
                self.proxy.cuts = 0
                r = self.create(path, form, stmt, "after")
                stored = count(self.db, table, "cut-after")
                self.assertEqual(stored, 1)
                self.assertEqual(r.status, 201, r)  # true: it was stored (and generated)
                self.assertEqual(r.json["data"]["state"], "completed", r)
                self.assertIn("was applied", self.srv.read_log())

    def test_commit_not_applied_answers_503_and_stores_nothing(self):
        for path, table, stmt, form in (
                ("/api/v1/images", "images", "ink_img_insert",
                 {"name": "cut-before", "description": "sea", "resolution": "1024x1024"}),
                ("/api/v1/documents", "documents", "ink_doc_insert",
                 {"name": "cut-before", "prompt": "tea"})):
            with self.subTest(path=path):
                self.proxy.cuts = 0
                r = self.create(path, form, stmt, "before")
                self.assertEqual(r.status, 503, r)
                self.assertEqual(count(self.db, table, "cut-before"), 0)
                self.assertIn("was not applied", self.srv.read_log())
