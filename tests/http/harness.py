"""Black-box harness: starts the real inkwell binary on a free loopback port with
a temporary data directory (and, for the PostgreSQL run, a fresh database), and
speaks HTTP to it. Python standard library only."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
import uuid

BIN = os.environ.get("INKWELL_BIN", os.path.abspath("build/inkwell"))
BACKEND = os.environ.get("INKWELL_TEST_BACKEND", "sqlite")
PG_URL = os.environ.get("INKWELL_TEST_PG_URL")
LOGDIR = os.environ.get("INKWELL_TEST_LOGDIR", tempfile.gettempdir())
VALGRIND = os.environ.get("INKWELL_TEST_VALGRIND") == "1"
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
                   "WARNING: ThreadSanitizer")


def _sanitized(path):
    """"thread" when the binary was built with ThreadSanitizer, True with ASan or UBSan
    (make SANITIZE=...): their runtime's entry points are named in it, linked statically
    or not."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    if b"__tsan_init" in data:
        return "thread"
    return b"__asan_init" in data or b"__ubsan_handle" in data


SANITIZED = _sanitized(BIN)
# Tests and time (docs/testing.md): no verdict may depend on the machine's speed. SLOW is
# how much slower than a plain build on a quiet machine the server may run here: under
# valgrind (tens of times slower on CPU work such as pictures) or the sanitizers, on a
# busy 2-core CI machine. Bounds that only catch hangs, wait limits and leases that must
# outlast the server's own work are multiplied by it (slow()); a timing property of the
# product is tested with margins that hold whatever it is. INKWELL_TEST_SLOW overrides it.
SLOW = float(os.environ.get("INKWELL_TEST_SLOW") or
             (10 if VALGRIND else 5 if SANITIZED == "thread" else 3 if SANITIZED else 1))


def stored_text(v):
    """A document's text as the SQLite store keeps it (src/store/sqlite_text.c): a TEXT
    (or NULL) as it is, a BLOB [2][the text's length, LEB128][a zstd frame] unpacked by
    the zstd program (Python has no zstd module; scripts/deps.sh installs it)."""
    if not isinstance(v, bytes):
        return v
    assert v[0] == 2, v[:8]
    n, shift, i = 0, 0, 1
    while True:
        n |= (v[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not v[i - 1] & 0x80:
            break
    out = subprocess.run(["zstd", "-d", "-q", "-c"], input=v[i:], capture_output=True,
                         check=True).stdout
    assert len(out) == n, (len(out), n)
    return out.decode()


def words_of(text):
    """`words` as inkwell counts them (issue 38: ICU's word boundaries, the segments that
    are words): Intl.Segmenter's count (granularity "word", isWordLike; another ICU) when
    Node is installed, else UAX #29's rules for letters and digits joined by ' . : (and
    , ; between digits), which is what the builtin generator's English needs."""
    import re
    import shutil
    node = shutil.which("node")
    if node:
        js = ("const t=require('fs').readFileSync(0,'utf8');let n=0;for(const g of new Intl."
              "Segmenter(undefined,{granularity:'word'}).segment(t))if(g.isWordLike)n++;"
              "console.log(n)")
        out = subprocess.run([node, "-e", js], input=text.encode(), capture_output=True, timeout=60)
        if out.returncode == 0:
            return int(out.stdout)
    return len(re.findall(r"\w+(?:(?:[.'\u2019:\u00b7](?=[^\W\d_])|[.,;'\u2019](?=\d))\w+)*", text))


def slow(seconds):
    """seconds on a quiet machine, scaled for this run (SLOW)."""
    return seconds * SLOW


def wait_for(cond, what, timeout=10, interval=0.05):
    """Calls cond until it answers something true and returns that; fails the test naming
    what after slow(timeout) seconds (a bound that only catches a hang)."""
    deadline = time.monotonic() + slow(timeout)
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in {slow(timeout):g} s")
        time.sleep(interval)


def metric(srv, name):
    """The value of an unlabelled metric on GET /metrics (the sum over its labels)."""
    total = 0.0
    for line in srv.request("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def wait_for_log(srv, text, timeout=10):
    """Waits until the server's log contains text (an event the server reports)."""
    return wait_for(lambda: text in srv.read_log(), f"log line {text!r} in {srv.log_path}", timeout)
# Every exchange is appended to this file (one JSON object a line) for
# tests/openapi/check.mjs, which checks each answer against the OpenAPI document.
# (a backend's suite split between two workers, tests/run.sh: one file each, by SHARD)
_SHARD = os.environ.get("INKWELL_TEST_SHARD", "")
EXCHANGES = os.path.join(LOGDIR, f"exchanges-{BACKEND}{'-' + _SHARD if _SHARD else ''}.jsonl")
_exchanges_lock = threading.Lock()
TEXT_TYPES = ("application/json", "text/")


def record_exchange(method, path, status, headers, body):
    """Keeps one answer for the OpenAPI conformance check. Tests that speak HTTP
    without Server.request (streams, raw sockets) call this with what they read."""
    ctype = next((v for k, v in headers if k.lower() == "content-type"), "") or ""
    x = {"method": method, "path": path, "status": status,
         "headers": [[k, v] for k, v in headers], "body_len": len(body or b"")}
    if ctype.startswith(TEXT_TYPES):
        x["body"] = (body or b"").decode("utf-8", "replace")
    with _exchanges_lock, open(EXCHANGES, "a") as f:
        f.write(json.dumps(x) + "\n")
# Every secret a test used or received (keys, passwords, session ids, webhook and client
# secrets) is appended to this file; tests/secrets_check.py greps every server log of the
# run for each when the suites have ended (none may be found: API.md, docs/testing.md).
SECRETS = os.path.join(LOGDIR, f"secrets-{BACKEND}-{os.getpid()}.txt")
_secrets_seen = set()
SECRET_FIELDS = {"key", "password", "new_password", "current_password", "old_password",
                 "secret", "client_secret", "token", "session"}
SESSION_COOKIES = ("inkwell_session", "__Host-inkwell_session")


def record_secret(value):
    """Keeps a secret for the end-of-run grep of the logs. Short values (a wrong "x", a
    key's shown prefix) are left out: they could match a log's ordinary words."""
    if not isinstance(value, str) or len(value) < 12 or "\n" in value or value in _secrets_seen:
        return
    _secrets_seen.add(value)
    with _exchanges_lock, open(SECRETS, "a") as f:
        f.write(value + "\n")


def _secrets_of(v):
    """The values of secret-named fields anywhere in a JSON value or form."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k in SECRET_FIELDS and isinstance(x, str):
                yield x
            else:
                yield from _secrets_of(x)
    elif isinstance(v, list):
        for x in v:
            yield from _secrets_of(x)


def record_secrets(headers, form=None, json_value=None, answer=None):
    """The secrets of one exchange: the bearer token and session cookie sent, the secret
    fields of the form or JSON sent, those of the answer and the session cookie it set."""
    for k, v in (headers.items() if isinstance(headers, dict) else headers):
        lk = k.lower()
        if lk == "authorization" and v.startswith("Bearer "):
            record_secret(v[7:])
        elif lk in ("cookie", "set-cookie"):
            for part in v.split(";"):
                name, _, val = part.strip().partition("=")
                if name in SESSION_COOKIES:
                    record_secret(val)
    if isinstance(form, dict):
        for x in _secrets_of(form):
            record_secret(x)
    for x in _secrets_of(json_value):
        record_secret(x)
    for x in _secrets_of(answer):
        record_secret(x)


# valgrind.supp and lsan.supp: leaks inside third-party libraries that we cannot free
SUPPRESSIONS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening_port(pid):
    """The port process pid listens on (TCP, IPv4 or IPv6), or None while it listens on
    none: its sockets' inodes (/proc/PID/fd) found in LISTEN state (0A) in its network
    namespace's tables. Whatever the server's --log-level (a server under valgrind is
    the same process)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        for table in ("tcp", "tcp6"):
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    col = line.split()
                    if col[3] == "0A" and col[9] in inodes:
                        return int(col[1].rsplit(":", 1)[1], 16)
    except OSError:  # the process is gone: its exit is seen by the caller
        return None
    return None


def pg_database():
    """Creates a fresh PostgreSQL database and returns its URL."""
    name = "t_" + uuid.uuid4().hex[:12]
    subprocess.run(["psql", PG_URL, "-qAtc", f"CREATE DATABASE {name}"], check=True,
                   capture_output=True)
    return PG_URL.rsplit("/", 1)[0] + "/" + name


class Resp:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return f"<Resp {self.status} {self.body[:300]!r}>"


class Server:
    def __init__(self, *args, data_dir=None, database=None, env=None):
        # a high limit by default (headers present, nothing refused); rate tests set their own
        self.args = (["--rate-limit", "1000000"] if "--rate-limit" not in args else []) + list(args)
        if SLOW > 1 and "--wait-limit" not in args:
            # the default wait (60 s) scaled: a waiting create answers 201 however slow the run
            self.args += ["--wait-limit", str(int(slow(60)))]
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="inkwell-test-")
        if database is None and BACKEND == "postgres":
            database = pg_database()
        self.database = database
        self.env = dict(os.environ, **(env or {}))
        lsan = self.env.get("LSAN_OPTIONS", "")
        if "suppressions=" not in lsan:
            self.env["LSAN_OPTIONS"] = (lsan + ":" if lsan else "") + \
                f"suppressions={SUPPRESSIONS}/lsan.supp"
        self.proc = None
        self.port = None
        self.host = "127.0.0.1"  # where it listens and is spoken to ("::1": IPv6)
        self.log_path = None
        self.keys = []  # every key made through this server: none may appear in its log

    def storage_args(self):
        a = ["--data-dir", self.data_dir]
        if self.database:
            a += ["--database", self.database]
        return a

    def start(self, port=None):
        # without a port of the test's choosing the server binds port 0 and the port the
        # kernel gave it is found in /proc (listening_port): a port picked here, closed and bound later
        # could be taken in between by another suite's process (CI runs valgrind's suite
        # beside the cluster test, whose S3 proxy once answered this /healthz poll)
        self.port = port
        self.log_path = os.path.join(LOGDIR, f"server-{uuid.uuid4().hex[:8]}.log")
        self.log = open(self.log_path, "wb")
        listen = f"[{self.host}]" if ":" in self.host else self.host
        cmd = [BIN, "serve", "--listen", f"{listen}:{self.port or 0}"] + self.storage_args() + self.args
        if VALGRIND:
            # any memory error or definite leak makes the server exit 99 at its stop;
            # --fair-sched: valgrind runs one thread at a time, and without a fair lock a
            # thread spinning on CPU work (a picture) starves the lease renewer
            cmd = ["valgrind", "--quiet", "--fair-sched=yes", "--error-exitcode=99", "--leak-check=full",
                   "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
                   "--num-callers=24", f"--suppressions={SUPPRESSIONS}/valgrind.supp"] + cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.time() + max(90 if VALGRIND else 15, slow(15))
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.read_log()[-2000:]}")
            if not self.port:
                self.port = listening_port(self.proc.pid)
                if not self.port:
                    time.sleep(0.05)
                    continue
            try:
                if self.request("GET", "/healthz").status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("server did not start")

    def read_log(self):
        with open(self.log_path, "r", errors="replace") as f:
            return f.read()

    def check_sanitizers(self):
        log = self.read_log()
        for mark in SANITIZER_MARKS:
            if mark in log:
                raise AssertionError(f"sanitizer report in {self.log_path}:\n{log[-4000:]}")
        for key in self.keys:
            if key in log or key[4:24] in log:
                raise AssertionError(f"an API key appears in the server log {self.log_path}")

    def stop(self, sig=signal.SIGTERM, timeout=90 if VALGRIND else 20):
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(max(timeout, slow(20)))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        self.check_sanitizers()
        return rc

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        self.check_sanitizers()

    def cli(self, *args, check=True):
        p = subprocess.run([BIN] + list(args) + self.storage_args(), capture_output=True,
                           text=True, env=self.env)
        if check and p.returncode != 0:
            raise RuntimeError(f"cli {args} failed: {p.stderr}")
        return p

    def key(self, user):
        k = self.cli("key", "create", "--user", user).stdout.strip()
        self.keys.append(k)
        record_secret(k)
        return k

    def request(self, method, path, key=None, form=None, json_body=None, body=None,
                headers=None, timeout=30):
        h = dict(headers or {})
        if key:
            h["Authorization"] = f"Bearer {key}"
        if form is not None:
            body = form if isinstance(form, (str, bytes)) else urllib.parse.urlencode(form)
            h.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif json_body is not None:
            body = json.dumps(json_body)
            h.setdefault("Content-Type", "application/json")
        if isinstance(body, str):
            body = body.encode()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=slow(timeout))
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            resp = Resp(r.status, r.getheaders(), r.read())
            record_exchange(method, path, resp.status, resp.headers, resp.body)
            record_secrets(h, form=form, json_value=json_body, answer=resp.json)
            record_secrets(resp.headers)
            return resp
        finally:
            conn.close()

    def url(self, path):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"


def poll_state(srv, key, path, until=("completed", "failed"), timeout=30):
    """GETs a record until its state is one of until; returns the record. timeout only
    catches a hang: it is scaled by SLOW."""
    deadline = time.time() + slow(timeout)
    while time.time() < deadline:
        r = srv.request("GET", path, key=key)
        if r.status == 200 and r.json["data"]["state"] in until:
            return r.json["data"]
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {until} in {slow(timeout):g} s")


class ServerTest(unittest.TestCase):
    """One server for the whole class, with users alice and bob."""
    server_args = []

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(*cls.server_args).start()
        cls.alice = cls.srv.key("alice")
        cls.bob = cls.srv.key("bob")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}: {cls.srv.read_log()[-2000:]}")

    def req(self, method, path, key="alice", **kw):
        k = {"alice": self.alice, "bob": self.bob, None: None}.get(key, key)
        return self.srv.request(method, path, key=k, **kw)

    def make_doc(self, key="alice", **fields):
        form = {"name": "Doc", "prompt": "a post about tea"}
        form.update(fields)
        r = self.req("POST", "/api/v1/documents", key=key, form=form)
        self.assertEqual(r.status, 201, r)
        return r.json["data"]

    def make_image(self, key="alice", **fields):
        form = {"name": "Pic", "description": "a red sunset", "resolution": "1024x1024"}
        form.update(fields)
        r = self.req("POST", "/api/v1/images", key=key, form=form)
        self.assertEqual(r.status, 201, r)
        return r.json["data"]

    def assertError(self, r, status, message=None):
        self.assertEqual(r.status, status, r)
        self.assertIsNotNone(r.json, r)
        self.assertEqual(r.json.get("status"), status, r)
        if message is not None:
            self.assertEqual(r.json.get("message"), message, r)
