"""A real S3 server for the tests (tests/http/test_s3.py): s3rver from the npm registry
(pinned in package.json / package-lock.json beside this file, installed with `npm ci`
when node_modules is missing) on 127.0.0.1, with one bucket, behind a proxy that checks
every request's AWS Signature Version 4.

Why the proxy: s3rver 3.7.1 parses SigV4 but does not check it (its
lib/middleware/authentication.js: "Signature version 4 calculation is unimplemented";
it checks V2 only). The proxy is an independent SigV4 implementation (Python's hmac
and hashlib): header-signed requests (what libcurl's CURLOPT_AWS_SIGV4 sends) and
presigned URLs (what --media-redirect hands out) are verified with the known secret,
the payload hash against the body, the date against the clock, a presigned URL's
lifetime against now; a bad one is answered 403 SignatureDoesNotMatch as S3 would, and
counted in `rejected`. The tests' own bucket reads and writes are signed here too."""
import datetime
import hashlib
import hmac
import http.client
import http.server
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ACCESS = "S3RVER"   # s3rver's built-in account (it checks that the key id exists)
# The secret the proxy checks signatures with: s3rver's own ("S3RVER") is never used,
# so a secret that leaked into a log is not mistaken for the key id.
SECRET = "inkwell-s3-test-secret-7f3a"
REGION = "us-east-1"
EMPTY = hashlib.sha256(b"").hexdigest()


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _q(s):
    return urllib.parse.quote(s, safe="-_.~")


def _key(secret, date8, region, service="s3"):
    k = hmac.new(("AWS4" + secret).encode(), date8.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return k


def _signature(secret, amz_date, scope, canonical):
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canonical.encode()).hexdigest()])
    date8, region, service = scope.split("/")[:3]
    return hmac.new(_key(secret, date8, region, service), sts.encode(), hashlib.sha256).hexdigest()


def _canonical_query(pairs):
    enc = sorted((_q(k), _q(v)) for k, v in pairs)
    return "&".join(f"{k}={v}" for k, v in enc)


def _amz_time(s):
    return datetime.datetime.strptime(s, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)


def verify(method, raw_path, headers, body, now=None):
    """None when the request carries a good SigV4 signature, else why not.
    headers: a mapping with lower-case names."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    path, _, query = raw_path.partition("?")
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    params = dict(pairs)
    auth = headers.get("authorization")
    if auth:
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return "not SigV4"
        fields = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        cred = fields["Credential"]
        signed = fields["SignedHeaders"]
        given = fields["Signature"]
        amz_date = headers.get("x-amz-date", "")
        payload = headers.get("x-amz-content-sha256")
        if payload is None:
            return "no x-amz-content-sha256"
        if payload != "UNSIGNED-PAYLOAD" and payload != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 is not the body's"
        cq = _canonical_query(pairs)
        if abs((now - _amz_time(amz_date)).total_seconds()) > 900:
            return "request time too skewed"
    elif "X-Amz-Signature" in params:
        cred = params["X-Amz-Credential"]
        signed = params["X-Amz-SignedHeaders"]
        given = params["X-Amz-Signature"]
        amz_date = params["X-Amz-Date"]
        expires = int(params["X-Amz-Expires"])
        if expires > 900:
            return f"a presigned URL valid for {expires} s (more than 15 minutes)"
        t = _amz_time(amz_date)
        if now > t + datetime.timedelta(seconds=expires) or now < t - datetime.timedelta(seconds=900):
            return "presigned URL expired"
        payload = "UNSIGNED-PAYLOAD"
        cq = _canonical_query([(k, v) for k, v in pairs if k != "X-Amz-Signature"])
    else:
        return "unsigned request"
    access, date8, region, service, term = cred.split("/")
    if access != ACCESS or region != REGION or service != "s3" or term != "aws4_request" \
            or not amz_date.startswith(date8):
        return f"bad credential scope {cred}"
    names = signed.split(";")
    if "host" not in names:
        return "host not signed"
    ch = "".join(f"{n}:{' '.join(headers.get(n, '').split())}\n" for n in names)
    canonical = "\n".join([method, path, cq, ch, signed, payload])
    want = _signature(SECRET, amz_date, f"{date8}/{region}/s3/aws4_request", canonical)
    if not hmac.compare_digest(want, given):
        return "SignatureDoesNotMatch"
    return None


class S3:
    """s3rver + the checking proxy. url: the endpoint to give inkwell
    (http://127.0.0.1:PORT, path style); vhost_url: http://s3.localhost:PORT (virtual-host
    addressing: BUCKET.s3.localhost, which libcurl resolves to the loopback)."""

    def __init__(self, bucket="inkwell-test"):
        self.bucket = bucket
        self.dir = tempfile.mkdtemp(prefix="inkwell-s3-")
        self.backend_port = _free_port()
        self.proc = None
        self.rejected = []   # (method, path, why) of every request the proxy refused
        self.requests = 0
        self.presigned_seen = 0
        self._proxy = None
        self.port = None

    # ---- s3rver ----
    def _ensure_npm(self):
        # tests/run.sh installs it before its workers start; run alone, a test does it,
        # under a lock (two test processes at once in one node_modules would race)
        import fcntl
        with open(os.path.join(tempfile.gettempdir(), "inkwell-s3-npm.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.isfile(os.path.join(HERE, "node_modules", "s3rver", "package.json")):
                subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                               cwd=HERE, check=True, capture_output=True)

    def start_backend(self):
        self._ensure_npm()
        self.log = open(os.path.join(self.dir, "s3rver.log"), "ab")
        self.proc = subprocess.Popen(
            ["node", os.path.join(HERE, "node_modules", "s3rver", "bin", "s3rver.js"),
             "-d", os.path.join(self.dir, "data"), "-a", "127.0.0.1", "-p",
             str(self.backend_port), "--service-endpoint", "localhost",
             "--configure-bucket", self.bucket],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("s3rver exited; see " + self.log.name)
            try:
                socket.create_connection(("127.0.0.1", self.backend_port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("s3rver did not start")

    def stop_backend(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    # ---- the proxy ----
    def start(self):
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        self.start_backend()
        env = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                hdrs = {k.lower(): v for k, v in self.headers.items()}
                env.requests += 1
                if "X-Amz-Signature=" in self.path:
                    env.presigned_seen += 1
                why = verify(self.command, self.path, hdrs, body)
                if why:
                    env.rejected.append((self.command, self.path.split("?")[0], why))
                    msg = (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                           f"SignatureDoesNotMatch</Code><Message>{why}</Message></Error>").encode()
                    self.send_response(403)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                    return
                try:
                    c = http.client.HTTPConnection("127.0.0.1", env.backend_port, timeout=30)
                    fwd = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("connection", "keep-alive")}
                    c.request(self.command, self.path, body=body if n else None, headers=fwd)
                    r = c.getresponse()
                    data = r.read()
                    status, rh = r.status, r.getheaders()
                    c.close()
                except OSError:
                    # the S3 server is down: what a load balancer in front of S3 answers
                    status, rh, data = 503, [("Content-Type", "application/xml")], \
                        b"<Error><Code>ServiceUnavailable</Code></Error>"
                self.send_response(status)
                for k, v in rh:
                    if k.lower() not in ("content-length", "connection", "transfer-encoding",
                                         "keep-alive"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(0 if self.command == "HEAD" else len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = _any

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

        self._proxy = Server(("127.0.0.1", 0), Handler)
        self.port = self._proxy.server_address[1]
        threading.Thread(target=self._proxy.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self._proxy:
            self._proxy.shutdown()
            self._proxy.server_close()
            self._proxy = None
        self.stop_backend()
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def vhost_url(self):
        return f"http://s3.localhost:{self.port}"

    # ---- the tests' own signed requests (path style) ----
    def request(self, method, path, query=None, body=b""):
        """path: the object's key (no leading slash) or "" for the bucket."""
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        raw = "/" + self.bucket + ("/" + urllib.parse.quote(path, safe="/-_.~") if path else "")
        pairs = list((query or {}).items())
        qs = _canonical_query(pairs)
        host = f"127.0.0.1:{self.port}"
        payload = hashlib.sha256(body).hexdigest()
        h = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
        names = sorted(h)
        ch = "".join(f"{n}:{h[n]}\n" for n in names)
        signed = ";".join(names)
        scope = f"{amz_date[:8]}/{REGION}/s3/aws4_request"
        canonical = "\n".join([method, raw, qs, ch, signed, payload])
        sig = _signature(SECRET, amz_date, scope, canonical)
        h["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={ACCESS}/{scope}, "
                              f"SignedHeaders={signed}, Signature={sig}")
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            c.request(method, raw + ("?" + qs if qs else ""), body=body or None, headers=h)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def keys(self, prefix=""):
        """Every object key under prefix (ListObjectsV2, all pages)."""
        import re
        out, token = [], None
        while True:
            q = {"list-type": "2", "prefix": prefix}
            if token:
                q["continuation-token"] = token
            status, body = self.request("GET", "", q)
            assert status == 200, (status, body)
            text = body.decode()
            out += [urllib.parse.unquote(k) for k in re.findall(r"<Key>([^<]*)</Key>", text)]
            m = re.search(r"<NextContinuationToken>([^<]*)</NextContinuationToken>", text)
            if "<IsTruncated>true</IsTruncated>" in text and m:
                token = m.group(1)
            else:
                return out

    def get(self, key):
        return self.request("GET", key)

    def put(self, key, data):
        status, body = self.request("PUT", key, body=data)
        assert status == 200, (status, body)
