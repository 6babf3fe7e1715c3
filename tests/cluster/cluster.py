"""make cluster-test: a real deployment on 127.0.0.1 under a steady mixed load, with
faults, and the figures of each.

    nginx (least_conn, SSE unbuffered; the config of docs/deployment.md)
      -> three `inkwell serve` (--trusted-proxies 127.0.0.1, --drain-delay 1)
           --database-pooled -> PgBouncer (transaction pooling) -> the primary
           --database (direct: LISTEN, owner lock) -> "host=primary,standby
                                                       target_session_attrs=read-write"
    PostgreSQL primary -> streaming standby (synchronous replication)
    pictures in S3 (API.md §25: s3rver behind the SigV4-checking proxy of tests/s3/):
      each process has its own --data-dir, none is shared

Phases, in order (each with the load running): baseline; a rolling restart of the
three processes one by one (SIGTERM drain, start again): no failed request, every
stream complete; kill -9 of one process: its jobs finish on another within 5 s;
the primary stopped and the standby promoted (PgBouncer re-pointed and reloaded, as
a failover manager does): only 503s with Retry-After in the gap, none after;
PgBouncer restarted: the same. Then every acknowledged write is checked (present,
with its last acknowledged name; deleted ones gone; a create retried with its
Idempotency-Key made one record; every completed image's picture is in the bucket
and served through nginx by any process; every request to S3 was well signed). Prints requests, errors by status, p50/p99 and the
time to recover for each phase. Exit status 0 when every check held.

Environment: INKWELL_BIN (default build/inkwell), CLUSTER_KEEP=1 keeps the directory."""
import calendar
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "http"))
sys.path.insert(0, os.path.join(HERE, "..", "s3"))
from bouncer import Bouncer  # noqa: E402
import s3env  # noqa: E402

BIN = os.environ.get("INKWELL_BIN", os.path.abspath("build/inkwell"))
PGBIN = sorted(d for d in (f"/usr/lib/postgresql/{v}/bin" for v in os.listdir("/usr/lib/postgresql"))
               if os.path.exists(f"{d}/initdb"))[-1]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
LOAD_THREADS = 6
STREAM_THREADS = 2
MAX_RUN_S = 540  # the whole test stops itself before 10 minutes

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"  CHECK FAILED: {what}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def as_postgres(cmd, **kw):
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


# ---- PostgreSQL: a primary and a synchronous streaming standby -------------------------

class Postgres:
    def __init__(self, root):
        self.root = root
        self.p1, self.p2 = free_port(), free_port()
        self.d1, self.d2 = f"{root}/primary", f"{root}/standby"

    def conf(self, d, port, extra=""):
        with open(f"{d}/postgresql.auto.conf", "a") as f:
            f.write(f"port = {port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{self.root}/sock'\n{extra}")

    def start(self):
        os.makedirs(f"{self.root}/sock", exist_ok=True)
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", self.root], check=True)
        as_postgres([f"{PGBIN}/initdb", "-D", self.d1, "-U", "inkwell", "--auth=trust", "-E", "UTF8",
                     "--no-sync"])
        with open(f"{self.d1}/pg_hba.conf", "w") as f:
            f.write("local all all trust\nhost all all 127.0.0.1/32 trust\n"
                    "host replication all 127.0.0.1/32 trust\n")
        self.conf(self.d1, self.p1, "wal_level = replica\nmax_wal_senders = 5\n"
                  "synchronous_standby_names = 'standby1'\nsynchronous_commit = on\n"
                  "max_connections = 300\nfsync = off\n")
        self.pg_ctl(self.d1, "start")
        as_postgres([f"{PGBIN}/pg_basebackup", "-h", "127.0.0.1", "-p", str(self.p1), "-U", "inkwell",
                     "-D", self.d2, "-R", "-X", "stream"])
        # the standby: its own port, its name for synchronous replication, and no
        # synchronous standby of its own once promoted (it would wait for ever)
        self.conf(self.d2, self.p2,
                  f"primary_conninfo = 'host=127.0.0.1 port={self.p1} user=inkwell "
                  "application_name=standby1'\nsynchronous_standby_names = ''\n")
        self.pg_ctl(self.d2, "start")
        deadline = time.time() + 30
        while time.time() < deadline:
            r = self.psql(self.p1, "SELECT sync_state FROM pg_stat_replication")
            if r.strip() == "sync":
                return
            time.sleep(0.2)
        raise RuntimeError("the standby did not become synchronous")

    def pg_ctl(self, d, *args):
        as_postgres([f"{PGBIN}/pg_ctl", "-D", d, "-l", f"{d}.log", "-w", "-t", "60"] + list(args))

    def psql(self, port, sql, db="postgres"):
        return subprocess.run(["psql", f"postgres://inkwell@127.0.0.1:{port}/{db}", "-qAtc", sql],
                              capture_output=True, text=True).stdout

    def direct_url(self, db):
        return (f"postgres://inkwell@127.0.0.1:{self.p1},127.0.0.1:{self.p2}/{db}"
                "?target_session_attrs=read-write")

    def stop(self):
        for d in (self.d1, self.d2):
            try:
                self.pg_ctl(d, "stop", "-m", "immediate")
            except subprocess.CalledProcessError:
                pass


# ---- nginx ------------------------------------------------------------------------------

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log {root}/nginx-error.log warn;
pid {root}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {root}/nginx-body;
    proxy_temp_path {root}/nginx-proxy;
    upstream inkwell {{
        least_conn;
{servers}
        keepalive 32;
        keepalive_timeout 20s;              # below inkwell's --connection-timeout (30)
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 1m;
        location / {{
            proxy_pass http://inkwell;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffering off;                # SSE: every event at once
            proxy_read_timeout 130s;
            proxy_next_upstream error timeout;  # a refused connection tries the next
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, root, ports):
        self.root, self.port = root, free_port()
        servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for p in ports)
        with open(f"{root}/nginx.conf", "w") as f:
            f.write(NGINX_CONF.format(root=root, port=self.port, servers=servers))

    def start(self):
        self.proc = subprocess.Popen([NGINX, "-p", self.root, "-c", f"{self.root}/nginx.conf"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_port(self.port)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def wait_port(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


# ---- inkwell processes --------------------------------------------------------------

class Inkwell:
    def __init__(self, root, n, args, env=None):
        self.root, self.n, self.args = root, n, args
        self.port = free_port()
        self.proc = None
        self.env = dict(os.environ, **(env or {}))
        self.data = f"{root}/data-{n}"  # its own: nothing on disk is shared
        os.makedirs(self.data, exist_ok=True)

    def start(self):
        log = open(f"{self.root}/inkwell-{self.n}.log", "ab")
        self.proc = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{self.port}",
                                      "--data-dir", self.data] + self.args,
                                     stdout=log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"inkwell {self.n} did not become ready")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)

    def kill(self):
        self.proc.kill()
        self.proc.wait()


# ---- the load -------------------------------------------------------------------------

class Load:
    def __init__(self, port, key):
        self.port, self.key = port, key
        self.phase = "setup"
        self.stop = threading.Event()
        self.mu = threading.Lock()
        self.results = []       # (phase, t_start, seconds, status, retry_after)
        self.records = {}       # id -> {"name", "deleted", "uncertain"}
        self.idem = {}          # Idempotency-Key -> name (acknowledged)
        self.streams = {"complete": 0, "incomplete": [], "resumed": 0, "errors": [],
                        "taken_over": []}
        self.kills = []  # when a process was killed (kill -9)

    def request(self, method, path, form=None, headers=None, timeout=60, note=""):
        h = {"Authorization": f"Bearer {self.key}"}
        h.update(headers or {})
        body = None
        if form is not None:
            import urllib.parse
            body = urllib.parse.urlencode(form)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        t0 = time.time()
        status, data, ra, why = 0, None, None, ""
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            status, ra = r.status, r.getheader("Retry-After")
            raw = r.read()
            c.close()
            data = json.loads(raw) if raw and r.getheader("Content-Type", "").startswith(
                "application/json") else None
        except (OSError, http.client.HTTPException, ValueError) as e:
            status, why = 0, repr(e)[:80]
        phase = self.phase  # a request counts in the phase where it ended
        with self.mu:
            self.results.append((phase, t0, time.time() - t0, status, ra, f"{method} {path} {note} {why}"))
        return status, data

    def worker(self, wid):
        rnd = random.Random(wid)
        mine = []
        n = 0
        while not self.stop.is_set():
            n += 1
            op = rnd.random()
            if op < 0.30 or not mine:
                name = f"w{wid}-{n}-{uuid.uuid4().hex[:6]}"
                kind = "images" if rnd.random() < 0.1 else "documents"
                form = {"name": name, "prompt": "a note on tea", "description": "a red sky",
                        "resolution": "1024x1024"}
                headers = {}
                if rnd.random() < 0.5:
                    headers["Prefer"] = "respond-async"
                if rnd.random() < 0.5:  # with a key: retried until acknowledged
                    ikey = uuid.uuid4().hex
                    headers["Idempotency-Key"] = ikey
                    for _ in range(40):
                        st, data = self.request("POST", f"/api/v1/{kind}", form=form, headers=headers,
                                                note="KEYED")
                        if st in (201, 202):
                            break
                        time.sleep(0.25)
                    if st in (201, 202):
                        with self.mu:
                            self.idem[ikey] = (kind, name, data["data"]["id"])
                else:
                    st, data = self.request("POST", f"/api/v1/{kind}", form=form, headers=headers)
                if st in (201, 202):
                    rid = data["data"]["id"]
                    with self.mu:
                        self.records[(kind, rid)] = {"name": name, "deleted": False, "uncertain": False}
                    mine.append((kind, rid))
            elif op < 0.55:
                kind, rid = rnd.choice(mine)
                self.request("GET", f"/api/v1/{kind}/{rid}")
            elif op < 0.75:
                self.request("GET", f"/api/v1/documents?per_page=25&page={rnd.randint(1, 3)}")
            elif op < 0.90:
                kind, rid = rnd.choice(mine)
                name = f"u{wid}-{n}"
                st, _ = self.request("PATCH", f"/api/v1/{kind}/{rid}", form={"name": name})
                with self.mu:
                    if st == 200:
                        self.records[(kind, rid)]["name"] = name
                    elif st in (0, 502, 504):  # may or may not have been applied
                        self.records[(kind, rid)]["uncertain"] = True
            else:
                kind, rid = mine.pop(rnd.randrange(len(mine)))
                st, _ = self.request("DELETE", f"/api/v1/{kind}/{rid}")
                with self.mu:
                    if st == 200:
                        self.records[(kind, rid)]["deleted"] = True
                    elif st in (0, 502, 504):
                        self.records[(kind, rid)]["uncertain"] = True
            time.sleep(0.02)

    def sse(self, method, path, form=None, last_id=None):
        """Reads one SSE response: (status, events, ended_with_retry)."""
        h = {"Authorization": f"Bearer {self.key}", "Accept": "text/event-stream"}
        body = None
        if form:
            import urllib.parse
            body = urllib.parse.urlencode(form)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        if last_id is not None:
            h["Last-Event-ID"] = str(last_id)
        t0 = time.time()
        evs, retry, status, why, ra = [], False, 0, "", None
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            status, ra = r.status, r.getheader("Retry-After")
            if status in (200, 201):
                ev, eid, data = None, None, []
                for line in r:
                    line = line.decode("utf-8").rstrip("\n")
                    if line.startswith("retry:"):
                        retry = True
                    elif line.startswith("event: "):
                        ev = line[7:]
                    elif line.startswith("id: "):
                        eid = int(line[4:])
                    elif line.startswith("data: "):
                        data.append(line[6:])
                    elif line == "" and ev:
                        evs.append((ev, eid, json.loads("\n".join(data))))
                        ev, eid, data = None, None, []
            else:
                r.read()
            c.close()
        except (OSError, http.client.HTTPException, ValueError) as e:
            # a stream cut short: what was read stands, the client resumes
            why = f"stream cut after {len(evs)} events: {repr(e)[:60]}"
            self.streams["cut"] = self.streams.get("cut", 0) + 1
        phase = self.phase
        with self.mu:
            # a stream is counted as its answer (status); a cut one is followed by a resume
            self.results.append((phase, t0, time.time() - t0, status, ra,
                                 f"{method} {path} SSE retry={retry} {why}"))
        return status, evs, retry

    def streamer(self, wid):
        n = 0
        while not self.stop.is_set():
            n += 1
            name = f"s{wid}-{n}-{uuid.uuid4().hex[:6]}"
            t_stream, started_in = time.time(), self.phase
            st, evs, _ = self.sse("POST", "/api/v1/documents", form={"name": name, "prompt": "tea " * 30})
            if st != 201 or not evs:
                time.sleep(0.1)
                continue
            rid = evs[0][2]["id"]
            text = b""
            resumed_at = []
            for attempt in range(20):
                for ev, eid, data in evs:
                    if ev == "delta":
                        piece = data["text"].encode()
                        if eid != len(text) + len(piece):
                            self.streams["errors"].append(f"{rid}: delta id {eid} after {len(text)} bytes")
                        text += piece
                last = evs[-1][0] if evs else None
                if last in ("done", "error"):
                    break
                # ended without done: resume elsewhere, as EventSource would
                time.sleep(0.5)
                self.streams["resumed"] += 1
                resumed_at.append(len(text))
                st, evs, _ = self.sse("GET", f"/api/v1/documents/{rid}", last_id=len(text))
                if st != 200:
                    evs = []
            if evs and evs[-1][0] == "done":
                if evs[-1][2]["result"].encode() == text:
                    self.streams["complete"] += 1
                    with self.mu:
                        self.records[("documents", rid)] = {"name": name, "deleted": False,
                                                            "uncertain": False}
                else:
                    res = evs[-1][2]["result"].encode()
                    if any(t_stream <= k <= time.time() for k in self.kills):
                        # the process running its generation was killed: another one ran it
                        # again from the start, and a generation is not repeatable
                        self.streams["taken_over"].append(rid)
                        continue
                    k = next((i for i in range(min(len(res), len(text))) if res[i] != text[i]),
                             min(len(res), len(text)))
                    self.streams["errors"].append(
                        f"{rid} (from {started_in}): joined deltas differ from the result at byte {k} "
                        f"(got {len(text)} bytes, result {len(res)}; resumed at {resumed_at})")
            elif evs and evs[-1][0] == "error":
                self.streams["incomplete"].append((self.phase, rid, evs[-1][2].get("status")))
            else:
                self.streams["incomplete"].append((self.phase, rid, "no end"))

    def start(self):
        self.threads = [threading.Thread(target=self.worker, args=(i,), daemon=True)
                        for i in range(LOAD_THREADS)]
        self.threads += [threading.Thread(target=self.streamer, args=(i,), daemon=True)
                         for i in range(STREAM_THREADS)]
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(150)


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def expected_409(r):
    """A retry with an Idempotency-Key whose first try is still held (its process was
    killed or stopped mid-request): 409, retry later — API.md §11."""
    return r[3] == 409 and "KEYED" in r[5]


def report(load, phases):
    print("\nphase               requests  errors (by status)                   p50 ms   p99 ms  recover s")
    out = {}
    for name, t0 in phases:
        rs = [r for r in load.results if r[0] == name]
        lat = [r[2] * 1000 for r in rs if 200 <= r[3] < 300]
        errs = {}
        last_err = None
        for r in rs:
            if not (200 <= r[3] < 300) and not expected_409(r):
                errs[r[3]] = errs.get(r[3], 0) + 1
                last_err = max(last_err or 0, r[1] + r[2])
        recover = (last_err - t0) if last_err else 0.0
        es = ", ".join(f"{k}: {v}" for k, v in sorted(errs.items())) or "none"
        print(f"{name:<20}{len(rs):>8}  {es:<36} {pct(lat, .5):>7.1f} {pct(lat, .99):>8.1f} {recover:>9.1f}")
        out[name] = (rs, errs)
        held = sum(1 for r in rs if expected_409(r))
        if held:
            print(f"    (and {held} 409s: a keyed retry while the key of a try cut short is held, §11)")
        for r in [r for r in rs if not (200 <= r[3] < 300) and not expected_409(r)][:4]:
            print(f"    {r[3]} at +{r[1] - t0:.1f}s: {r[5]}")
    return out


def main():
    t_start = time.time()
    root = tempfile.mkdtemp(prefix="inkwell-cluster-")
    os.chmod(root, 0o755)
    print(f"cluster test in {root}", flush=True)
    pg = Postgres(root)
    bouncer = nginx = s3 = None
    servers = []
    try:
        s3 = s3env.S3().start()
        pg.start()
        pg.psql(pg.p1, "CREATE DATABASE inkwell")
        direct = pg.direct_url("inkwell")
        bouncer = Bouncer(f"postgres://inkwell@127.0.0.1:{pg.p1}/postgres", "transaction", pool_size=30)
        bouncer.start()
        pooled = bouncer.url("postgres://inkwell@127.0.0.1/inkwell")
        args = ["--media-store", f"s3://{s3.bucket}/cluster", "--s3-endpoint", s3.url,
                "--s3-path-style", "--database", direct, "--database-pooled", pooled,
                "--trusted-proxies", "127.0.0.1", "--drain-delay", "1", "--shutdown-grace", "30",
                "--builtin-delay-ms", "1500", "--workers", "4", "--threads", "4",
                "--rate-limit", "1000000", "--log-level", "info"]
        creds = {"AWS_ACCESS_KEY_ID": s3env.ACCESS, "AWS_SECRET_ACCESS_KEY": s3env.SECRET}
        servers = [Inkwell(root, i, args, env=creds) for i in range(3)]
        for s in servers:
            s.start()
        key = subprocess.run([BIN, "key", "create", "--user", "load", "--database", direct],
                             check=True, capture_output=True, text=True).stdout.strip()
        nginx = Nginx(root, [s.port for s in servers])
        nginx.start()
        load = Load(nginx.port, key)
        phases = []

        def phase(name):
            load.phase = name
            phases.append((name, time.time()))
            print(f"[{time.time() - t_start:6.1f}s] {name}", flush=True)

        load.start()
        phase("baseline")
        time.sleep(6)

        phase("rolling-restart")
        for s in servers:
            rc = s.stop()
            check(rc == 0, f"inkwell {s.n} stopped with {rc}")
            s.start()
            time.sleep(1)
        time.sleep(3)

        phase("kill-9")
        victim = servers[1]
        # the jobs held now (the victim's among them): each must be finished (its row
        # gone) by another process within 5 s of the kill — the owner lock, not the lease
        held = pg.psql(pg.p1, "SELECT id FROM jobs WHERE token IS NOT NULL", db="inkwell").split()
        victim.kill()
        t_kill = time.time()
        load.kills.append(t_kill)
        left = held
        while left and time.time() - t_kill < 30:
            ids = ",".join(left)
            left = pg.psql(pg.p1, f"SELECT id FROM jobs WHERE id IN ({ids})", db="inkwell").split()
            time.sleep(0.05)
        jobs_done_s = time.time() - t_kill
        print(f"  {len(held)} running job(s) at the kill, all finished within {jobs_done_s:.1f} s", flush=True)
        check(not left and jobs_done_s < 5, f"jobs running at the kill took {jobs_done_s:.1f} s ({left} left)")
        victim.start()
        time.sleep(3)

        phase("failover")
        t_failover = time.time()
        pg.pg_ctl(pg.d1, "stop", "-m", "fast")
        pg.pg_ctl(pg.d2, "promote")
        # PgBouncer is re-pointed at the new primary and reloaded (a failover manager's step)
        bouncer.write_config(servers=("127.0.0.1", pg.p2))
        os.kill(bouncer.proc.pid if os.geteuid() != 0 else int(open(f"{bouncer.dir}/pgbouncer.pid").read()),
                signal.SIGHUP)
        t_fail = time.time()
        wait_ready(servers, t_fail)
        time.sleep(1)  # a connection whose reconnect failed tries again after 0.5 s
        phase("after-failover")
        time.sleep(5)

        phase("bouncer-restart")
        bouncer.stop()
        time.sleep(1)
        bouncer.start(port=bouncer.port, servers=("127.0.0.1", pg.p2))
        wait_ready(servers, time.time())
        time.sleep(1)
        phase("after-bouncer")
        time.sleep(5)
        phase("drain-load")
        load.finish()

        res = report(load, phases)
        # ---- checks
        for name in ("baseline", "rolling-restart", "after-failover", "after-bouncer"):
            errs = res[name][1]
            check(not errs, f"{name}: failed requests {errs}")
        for name in ("failover", "bouncer-restart"):
            for r in res[name][0]:
                if not (200 <= r[3] < 300) and not expected_409(r):
                    check(r[3] == 503 and r[4], f"{name}: a {r[3]} (Retry-After {r[4]}) in the gap")
        inc = [x for x in load.streams["incomplete"]
               if x[0] in ("baseline", "rolling-restart", "after-failover", "after-bouncer")]
        check(not inc, f"streams not complete: {inc[:5]}")
        check(not load.streams["errors"], f"stream errors: {load.streams['errors'][:5]}")
        if load.streams["taken_over"]:
            print(f"streams whose generation was killed with its process and run again elsewhere "
                  f"(new text after the deltas sent; status.md): {load.streams['taken_over']}")
        print(f"streams: {load.streams['complete']} complete, {load.streams.get('cut', 0)} cut short, "
              f"{load.streams['resumed']} resumed "
              f"with Last-Event-ID, {len(load.streams['incomplete'])} ended by an error "
              f"({[x for x in load.streams['incomplete']][:4]})")
        verify(load)
        verify_pictures(load, s3, len(load.kills))
        # a failover takes every owner lock away at once: no process may take a live
        # one's jobs for a dead one's (pg_owner.c's settle), only kill -9 releases leases
        released = []
        for s in servers:
            with open(f"{root}/inkwell-{s.n}.log", errors="replace") as f:
                for line in f:
                    if "job lease" in line and "released" in line:
                        ts = calendar.timegm(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S"))
                        if ts >= t_failover - 1:
                            released.append(line.strip())
        check(not released, f"leases released after the failover: {released[:3]}")
    finally:
        if nginx:
            nginx.stop()
        for s in servers:
            if s.proc and s.proc.poll() is None:
                s.kill()
        if bouncer:
            bouncer.stop()
        pg.stop()
        if s3:
            s3.stop()
        if os.environ.get("CLUSTER_KEEP") != "1" and not failures:
            shutil.rmtree(root, ignore_errors=True)
    took = time.time() - t_start
    print(f"cluster test: {len(failures)} failed check(s) in {took:.0f} s")
    for f in failures:
        print(f"  - {f}")
    check(took < MAX_RUN_S + 60, "took too long")
    return 1 if failures else 0


def wait_ready(servers, t0, limit=60):
    for s in servers:
        while time.time() - t0 < limit:
            try:
                c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
    print(f"  every process ready again after {time.time() - t0:.1f} s", flush=True)


def verify(load):
    """Every acknowledged write is there, once."""
    missing, wrong, present_deleted = [], [], []
    for (kind, rid), v in load.records.items():
        if v["uncertain"]:
            continue
        st, d = load.request("GET", f"/api/v1/{kind}/{rid}")
        if v["deleted"]:
            if st != 404:
                present_deleted.append(rid)
        elif st != 200:
            missing.append((kind, rid, st))
        elif d["data"]["name"] != v["name"]:
            wrong.append((kind, rid))
    check(not missing, f"acknowledged records missing: {missing[:5]}")
    check(not wrong, f"acknowledged updates lost: {wrong[:5]}")
    check(not present_deleted, f"acknowledged deletes undone: {present_deleted[:5]}")
    # every Idempotency-Key create made exactly one record
    names = {}
    for kind in ("documents", "images"):
        page = 1
        while True:
            st, d = load.request("GET", f"/api/v1/{kind}?per_page=100&page={page}")
            if st != 200 or not d["data"]:
                break
            for rec in d["data"]:
                names.setdefault((kind, rec["name"]), []).append(rec["id"])
            page += 1
    # a second record would keep the create's name (nobody knows its id to rename it)
    doubled = [(k, n) for k, n, rid in load.idem.values() if set(names.get((k, n), [])) - {rid}]
    check(not doubled, f"Idempotency-Key creates doubled: {doubled[:5]}")
    print(f"verified: {len(load.records)} acknowledged records, {len(load.idem)} keyed creates, "
          f"{sum(1 for v in load.records.values() if v['uncertain'])} left uncertain by a failed request")


def verify_pictures(load, s3, kills):
    """No record says it has a picture the bucket lacks; every picture is served through
    nginx (whichever process answers); pictures no record names can only be a killed
    process's upload whose record never committed (the sweeper's, after an hour)."""
    named, lacking, unserved = set(), [], []
    page = 1
    while True:
        st, d = load.request("GET", f"/api/v1/images?per_page=100&page={page}")
        if st != 200 or not d["data"]:
            break
        for rec in d["data"]:
            if rec["state"] == "completed" and rec["url"]:
                named.add(rec["url"].rsplit("/", 1)[1])
        page += 1
    objects = {k.rsplit("/", 1)[1] for k in s3.keys("cluster/")}
    lacking = sorted(named - objects)
    for name in sorted(named)[:30]:
        c = http.client.HTTPConnection("127.0.0.1", load.port, timeout=30)
        c.request("GET", f"/media/{name}")
        r = c.getresponse()
        body = r.read()
        c.close()
        if r.status != 200 or not body.startswith(b"\x89PNG"):
            unserved.append((name, r.status))
    orphans = objects - named
    check(not lacking, f"records whose picture is not in the bucket: {lacking[:5]}")
    check(not unserved, f"pictures not served: {unserved[:5]}")
    check(len(orphans) <= 4 * kills, f"{len(orphans)} objects no record names")
    check(not s3.rejected, f"S3 requests refused as badly signed: {s3.rejected[:3]}")
    print(f"pictures: {len(named)} images with their object in the bucket, "
          f"{min(len(named), 30)} served through nginx, {len(orphans)} object(s) of a killed "
          f"process's unfinished create, {s3.requests} S3 requests all well signed", flush=True)


if __name__ == "__main__":
    sys.exit(main())
