"""Crash-consistency soak (issue 14): `make soak`, not part of make check.

Cycles of load — clients creating documents and images (waiting, Prefer:
respond-async and streamed over SSE), updating and deleting them — ended by kill -9
of the server at a random moment, then a restart and a check of everything that was
acknowledged:
  - every acknowledged create is there exactly once (each create has a unique prompt
    or description, never updated), an unacknowledged one at most once;
  - every acknowledged update is in effect, every acknowledged delete too;
  - every job finishes (no record left queued or generating), with the default lease;
  - no picture without a record, no record pointing at a missing picture;
  - SQLite: PRAGMA integrity_check is ok;
  - webhooks (API.md §22, issue 36): an endpoint subscribed to every event, on a receiver
    on 127.0.0.1 that verifies each delivery with the npm standardwebhooks package
    (tests/webhooks/receiver.js): every acknowledged change's event arrives at least
    once, signed — the completed event of each create whose record is not deleted, a
    revised event for each acknowledged regeneration (the load regenerates too), the
    deleted event of each acknowledged delete. A cycle's changes are checked at the next
    cycle's check (a delivery in flight at the kill waits for its lease, 20 s) and all at
    the end; the same delivered twice is counted, not a loss.
On PostgreSQL the same, plus cycles that kill the database server itself mid-load
(pg_ctl stop -m immediate, then start). Then a full-disk phase: the data directory on
a small tmpfs filled to the last byte: creates answer 503 (never 500), nothing is
half-written, and the server recovers once space returns.

  SOAK_CYCLES=100 (SQLite cycles)  SOAK_PG_CYCLES=20 (PostgreSQL cycles)
  SOAK_BACKENDS=sqlite,postgres    SOAK_FULL_DISK=1
  INKWELL_BIN=build/inkwell python3 tests/soak/soak.py

Ends with a summary (cycles, acknowledged writes, losses) and exits 1 on any loss.
"""
import glob
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "http"))
import harness  # noqa: E402
from test_diskfull import fill  # noqa: E402
from test_webhooks import Receiver  # noqa: E402

CLIENTS = 4
ACTIVE_STATES = ("queued", "generating")


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


class Rec:
    """What a client knows of one record it created."""

    def __init__(self, kind, token, rid, name):
        self.kind, self.token, self.id = kind, token, rid
        self.name = name            # the last acknowledged name
        self.maybe_names = set()    # names of updates sent but not acknowledged
        self.deleted = False        # an acknowledged delete
        self.regens = 0             # acknowledged regenerations (each: a revised event)
        self.maybe_deleted = False  # a delete sent but not acknowledged


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = {k: 0 for k in ("cycles", "acked_creates", "acked_updates", "acked_deletes",
                                 "unacked", "lost_creates", "duplicates", "lost_updates",
                                 "lost_deletes", "unfinished_jobs", "orphan_files",
                                 "missing_files", "integrity_failures", "db_kills",
                                 "server_errors_500", "full_disk_503", "full_disk_500",
                                 "acked_regens", "webhook_events_expected", "webhook_missing",
                                 "webhook_unverified", "webhook_repeats")}
        self.problems = []

    def add(self, k, n=1):
        with self.lock:
            self.c[k] += n

    def problem(self, what):
        with self.lock:
            self.problems.append(what)
        log("PROBLEM:", what)


class Soak:
    def __init__(self, backend, stats, pg=None):
        self.backend, self.stats, self.pg = backend, stats, pg
        harness.BACKEND = backend
        self.rx = Receiver()
        self.srv = harness.Server("--rate-limit", "0", "--builtin-delay-ms", "100",
                                  "--log-level", "warn", "--webhook-allow-private",
                                  "--webhook-retry-scale", "0.01",
                                  database=pg.new_db() if pg else None)
        self.srv.start()
        self.key = self.srv.key("soak")
        self.recs = []  # every acknowledged create
        self.unacked_tokens = set()
        self.lock = threading.Lock()
        self.expected = {}  # (type, record id) -> events due (checked at the next verify)
        status, body = self.call("POST", "/api/v1/webhooks",
                                 form={"url": self.rx.base + "/soak", "events": "*"})
        if status != 201:
            raise RuntimeError(f"webhook endpoint: {status} {body}")
        self.rx.config("/soak", [body["data"]["secret"]])

    # ---- HTTP ----
    def conn(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=timeout)

    def call(self, method, path, form=None, headers=None, timeout=30):
        h = {"Authorization": f"Bearer {self.key}"}
        h.update(headers or {})
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        c = self.conn(timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            return r.status, (json.loads(data) if data and r.getheader("Content-Type", "").startswith("application/json") else None)
        finally:
            c.close()

    def stream_create(self, path, form):
        """A streamed create: acknowledged once the `record` event names the id."""
        c = self.conn(60)
        try:
            c.request("POST", path, body=urllib.parse.urlencode(form),
                      headers={"Authorization": f"Bearer {self.key}", "Accept": "text/event-stream",
                               "Content-Type": "application/x-www-form-urlencoded"})
            r = c.getresponse()
            if r.status != 201:
                r.read()
                return r.status, None
            rid, event = None, None
            while True:
                line = r.fp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "record" and rid is None:
                    rid = json.loads(line[6:])["id"]
                elif line.startswith("data: ") and event in ("done", "error"):
                    break
            return 201, rid
        finally:
            c.close()

    # ---- load ----
    def client(self, stop, mine, seed):
        rnd = random.Random(seed)
        while not stop.is_set():
            x = rnd.random()
            try:
                if x < 0.55 or len(mine) < 3:
                    self.create(rnd, mine)
                elif x < 0.75:
                    self.update(rnd.choice(mine))
                elif x < 0.85:
                    docs = [r for r in mine if r.kind == "documents"]
                    if docs:
                        self.regenerate(rnd.choice(docs))
                else:
                    rec = rnd.choice(mine)
                    mine.remove(rec)
                    self.delete(rec)
            except (OSError, http.client.HTTPException, ValueError):
                self.stats.add("unacked")

    def create(self, rnd, mine):
        kind = "documents" if rnd.random() < 0.7 else "images"
        token = uuid.uuid4().hex
        name = "n-" + token[:8]
        form = ({"name": name, "prompt": f"soak {token}"} if kind == "documents" else
                {"name": name, "description": f"soak {token}", "resolution": "1024x1024"})
        how = rnd.choice(["wait", "async", "stream"])
        with self.lock:
            self.unacked_tokens.add(token)
        if how == "stream":
            status, rid = self.stream_create(f"/api/v1/{kind}", form)
        else:
            status, body = self.call("POST", f"/api/v1/{kind}", form=form,
                                     headers={"Prefer": "respond-async"} if how == "async" else None)
            rid = body["data"]["id"] if body and status in (201, 202) else None
        if status >= 500 and status != 503 and status != 502:
            self.stats.add("server_errors_500")
            self.stats.problem(f"create answered {status}")
        if rid is None:
            self.stats.add("unacked")
            return
        rec = Rec(kind, token, rid, name)
        with self.lock:
            self.unacked_tokens.discard(token)
            self.recs.append(rec)
        mine.append(rec)
        self.stats.add("acked_creates")

    def update(self, rec):
        new = "u-" + uuid.uuid4().hex[:10]
        rec.maybe_names.add(new)
        status, body = self.call("PATCH", f"/api/v1/{rec.kind}/{rec.id}", form={"name": new})
        if status == 200:
            rec.name, rec.maybe_names = new, set()
            self.stats.add("acked_updates")
        else:
            if status >= 500 and status != 503:
                self.stats.add("server_errors_500")
            self.stats.add("unacked")

    def regenerate(self, rec):
        status, _ = self.call("POST", f"/api/v1/documents/{rec.id}/regenerate", form={})
        if status == 200:
            rec.regens += 1
            self.stats.add("acked_regens")
        else:
            if status >= 500 and status != 503:
                self.stats.add("server_errors_500")
            self.stats.add("unacked")

    def delete(self, rec):
        rec.maybe_deleted = True
        status, _ = self.call("DELETE", f"/api/v1/{rec.kind}/{rec.id}")
        if status == 200:
            rec.deleted = True
            self.stats.add("acked_deletes")
        else:
            if status >= 500 and status != 503:
                self.stats.add("server_errors_500")
            self.stats.add("unacked")

    def load(self, seconds, during=None):
        stop = threading.Event()
        with self.lock:
            live = [r for r in self.recs if not r.deleted and not r.maybe_deleted]
        shares = [live[i::CLIENTS] for i in range(CLIENTS)]
        threads = [threading.Thread(target=self.client, args=(stop, shares[i], random.random()))
                   for i in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(seconds)
        if during:
            during()
        stop.set()
        return threads

    # ---- cycles ----
    def kill_cycle(self):
        threads = self.load(random.uniform(0.3, 2.5))
        self.srv.proc.send_signal(signal.SIGKILL)  # a random moment of the load
        self.srv.proc.wait()
        self.srv.log.close()
        for t in threads:
            t.join()
        self.srv.start(port=self.srv.port)
        self.verify()

    def db_kill_cycle(self):
        def kill_db():
            self.pg.crash_and_restart(random.uniform(0.5, 2.0))
            self.stats.add("db_kills")
        threads = self.load(random.uniform(0.5, 1.5), during=kill_db)
        for t in threads:
            t.join()
        self.verify()

    # ---- checks ----
    def list_all(self, kind):
        out, page = [], 1
        while True:
            for attempt in range(40):
                status, body = self.call("GET", f"/api/v1/{kind}?per_page=100&page={page}")
                if status == 200:
                    break
                time.sleep(0.5)
            else:
                raise RuntimeError(f"list {kind} answered {status}")
            out += body["data"]
            if page >= body["meta"]["last_page"]:
                return out
            page += 1

    def verify(self):
        self.stats.add("cycles")
        # every job finishes: interrupted ones after the restart (SQLite releases the
        # dead server's leases at once; PostgreSQL frees a dead owner's within about a
        # second). The bound only catches jobs that stop moving: it starts again whenever
        # fewer records are active, so a slow machine with a long queue is not a failure.
        patience = harness.slow(20 if self.backend == "sqlite" else 50)
        deadline, fewest = time.time() + patience, None
        while True:
            docs, imgs = self.list_all("documents"), self.list_all("images")
            active = [r for r in docs + imgs if r["state"] in ACTIVE_STATES]
            if fewest is None or len(active) < fewest:
                fewest, deadline = len(active), time.time() + patience
            if not active or time.time() > deadline:
                break
            time.sleep(0.5)
        if active:
            self.stats.add("unfinished_jobs", len(active))
            self.stats.problem(f"{len(active)} records still {sorted({r['state'] for r in active})}")
        by_token = {}
        for r in docs:
            by_token.setdefault(("documents", r["prompt"].split(" ", 1)[1]), []).append(r)
        for r in imgs:
            by_token.setdefault(("images", r["description"].split(" ", 1)[1]), []).append(r)
        with self.lock:
            recs = list(self.recs)
            unacked = set(self.unacked_tokens)
        for rec in recs:
            found = by_token.get((rec.kind, rec.token), [])
            if len(found) > 1:
                self.stats.add("duplicates")
                self.stats.problem(f"{rec.kind} {rec.token} stored {len(found)} times")
            if rec.deleted:
                if found:
                    self.stats.add("lost_deletes")
                    self.stats.problem(f"{rec.kind}/{rec.id} deleted (acknowledged) but there")
                continue
            if not found:
                if rec.maybe_deleted:
                    rec.deleted = True  # the unacknowledged delete took effect
                    continue
                self.stats.add("lost_creates")
                self.stats.problem(f"{rec.kind}/{rec.id} acknowledged but missing")
                continue
            got = found[0]
            if got["id"] != rec.id:
                self.stats.problem(f"{rec.kind} {rec.token}: id {got['id']} != {rec.id}")
            if got["name"] != rec.name and got["name"] not in rec.maybe_names:
                self.stats.add("lost_updates")
                self.stats.problem(f"{rec.kind}/{rec.id}: name {got['name']!r}, acknowledged {rec.name!r}")
            rec.name, rec.maybe_names = got["name"], set()
            rec.maybe_deleted = False
        for key in list(by_token):
            if len(by_token[key]) > 1 and key[1] in unacked:
                self.stats.add("duplicates")
                self.stats.problem(f"unacknowledged create {key} stored {len(by_token[key])} times")
        # pictures: exactly the completed images' files
        keys = {r["url"].rsplit("/", 1)[1][:-4] for r in imgs if r.get("url")}
        files = {os.path.basename(p)[:-4] for p in glob.glob(os.path.join(self.srv.data_dir, "media", "*.png"))}
        missing, orphans = keys - files, files - keys
        if missing:
            self.stats.add("missing_files", len(missing))
            self.stats.problem(f"{len(missing)} records point at a missing picture")
        if orphans:
            # PostgreSQL: a starting server removes only pictures older than an hour
            # (another process may be about to commit its record); they are counted
            self.stats.add("orphan_files", len(orphans))
            if self.backend == "sqlite":
                self.stats.problem(f"{len(orphans)} pictures without a record")
        temps = glob.glob(os.path.join(self.srv.data_dir, "media", ".*.tmp-*"))
        if temps and self.backend == "sqlite":
            self.stats.problem(f"{len(temps)} temporary media files after a restart")
        if self.backend == "sqlite":
            db = sqlite3.connect(os.path.join(self.srv.data_dir, "inkwell.db"), timeout=30)
            ok = db.execute("PRAGMA integrity_check").fetchone()[0]
            db.close()
            if ok != "ok":
                self.stats.add("integrity_failures")
                self.stats.problem(f"integrity_check: {ok}")
        self.check_webhooks(recs)
        # forget what is settled
        with self.lock:
            self.recs = [r for r in self.recs if not r.deleted]
            self.unacked_tokens = set()

    def webhook_events(self):
        """(type, record id) -> the distinct webhook-ids delivered, every delivery so far
        checked signed (each once)."""
        got = {}
        entries = self.rx.log("/soak")
        for e in entries[getattr(self, "rx_checked", 0):]:
            if e["verified"] != [True]:
                self.stats.add("webhook_unverified")
                self.stats.problem(f"a delivery not verified by standardwebhooks: {e['headers'].get('webhook-id')}")
        self.rx_checked = len(entries)
        for e in entries:
            b = json.loads(e["body"])
            got.setdefault((b["type"], b["data"].get("id")), []).append(e["headers"]["webhook-id"])
        return got

    @staticmethod
    def arrived(got, k):
        """The distinct events of key k delivered; a first generation's is completed or,
        when a job gave up after too many crashes, failed."""
        ids = set(got.get(k, []))
        if k[0].endswith(".completed"):
            ids |= set(got.get((k[0].replace(".completed", ".failed"), k[1]), []))
        return ids

    def check_webhooks(self, recs, final=False):
        """The events due since the last check (or all, at the end) have arrived; this
        cycle's acknowledged changes are due at the next check."""
        if not hasattr(self, "rx"):
            return  # the full-disk phase: no endpoint
        due = dict(self.expected) if not final else self.expected
        missing = due
        deadline = time.time() + harness.slow(60)
        while True:
            got = self.webhook_events()
            missing = {k: n for k, n in due.items() if len(self.arrived(got, k)) < n}
            if not missing or time.time() > deadline:
                break
            time.sleep(0.5)
        for k, n in missing.items():
            self.stats.add("webhook_missing")
            self.stats.problem(f"webhook {k[0]} of record {k[1]}: {len(self.arrived(got, k))} of {n} arrived")
        self.stats.add("webhook_repeats", sum(len(v) - len(set(v)) for v in got.values()) -
                       getattr(self, "repeats_counted", 0))
        self.repeats_counted = sum(len(v) - len(set(v)) for v in got.values())
        if final:
            return
        self.expected = {}
        for rec in recs:
            noun = "document" if rec.kind == "documents" else "image"
            if rec.deleted:
                self.expected[(f"{noun}.deleted", rec.id)] = 1
            elif not rec.maybe_deleted:
                self.expected[(f"{noun}.completed", rec.id)] = 1
                if rec.regens:
                    self.expected[(f"{noun}.revised", rec.id)] = rec.regens
        self.stats.add("webhook_events_expected", sum(self.expected.values()))

    def close(self):
        self.check_webhooks([], final=True)
        self.srv.stop()
        self.rx.stop()


class Pg:
    """A throwaway cluster of scripts/pg-test.sh, and its crash."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="inkwell-soak-pg-")
        os.rmdir(self.dir)
        p = subprocess.run([os.path.join(ROOT, "scripts", "pg-test.sh"), "start", self.dir],
                           capture_output=True, text=True, check=True)
        self.url = p.stdout.strip().splitlines()[-1]
        harness.PG_URL = self.url
        # The test cluster trades durability for speed (synchronous_commit off: a commit
        # is acknowledged before its WAL is written). Killing the server would then lose
        # acknowledged commits by PostgreSQL's own design, not inkwell's: turn it on.
        # (fsync stays off: the machine itself does not crash here.)
        subprocess.run(["psql", self.url, "-qAtc", "ALTER SYSTEM SET synchronous_commit = on"],
                       check=True, capture_output=True)
        subprocess.run(["psql", self.url, "-qAtc", "SELECT pg_reload_conf()"], check=True,
                       capture_output=True)
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        self.pg_ctl = bins[-1]

    def new_db(self):
        return harness.pg_database()

    def as_owner(self, *cmd):
        pre = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        subprocess.run(pre + list(cmd), cwd=self.dir, check=True, capture_output=True)

    def crash_and_restart(self, down_s):
        # immediate: no shutdown checkpoint, every backend killed (crash recovery at start)
        self.as_owner(self.pg_ctl, "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")
        time.sleep(down_s)
        self.as_owner(self.pg_ctl, "-D", f"{self.dir}/data", "-l", f"{self.dir}/postgres.log",
                      "-w", "-t", "60", "start")

    def stop(self):
        subprocess.run([os.path.join(ROOT, "scripts", "pg-test.sh"), "stop", self.dir],
                       capture_output=True)


def full_disk_phase(stats):
    # 512 MiB: the second of load before the disk is filled on purpose must not fill it
    # itself (pictures are megabytes each; with 48 MiB it sometimes did, and streamed
    # creates whose job could not store its outcome waited for room that never came)
    mnt = tempfile.mkdtemp(prefix="inkwell-soak-full-")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", mnt], capture_output=True, text=True)
    if p.returncode != 0:
        stats.problem(f"full-disk phase: cannot mount a tmpfs (root needed): {p.stderr.strip()}")
        return
    try:
        harness.BACKEND = "sqlite"
        data = os.path.join(mnt, "data")
        os.mkdir(data)
        s = Soak.__new__(Soak)
        s.backend, s.stats, s.pg = "sqlite", stats, None
        s.srv = harness.Server("--rate-limit", "0", "--min-free-mb", "0", "--log-level", "warn",
                               data_dir=data).start()
        s.key = s.srv.key("full")
        s.recs, s.unacked_tokens, s.lock = [], set(), threading.Lock()
        for t in s.load(1.0):
            t.join()
        filler = fill(mnt)
        before = stats.c["server_errors_500"]
        statuses = {}
        for i in range(60):
            kind = "documents" if i % 2 else "images"
            form = ({"name": "f", "prompt": "p" * 4000} if kind == "documents" else
                    {"name": "f", "description": "full", "resolution": "1792x1024"})
            try:
                status, _ = s.call("POST", f"/api/v1/{kind}", form=form)
            except OSError:
                status = -1
            statuses[status] = statuses.get(status, 0) + 1
        stats.add("full_disk_503", statuses.get(503, 0))
        stats.add("full_disk_500", statuses.get(500, 0))
        log("full disk: statuses", statuses)
        if statuses.get(500) or statuses.get(-1) or not statuses.get(503):
            stats.problem(f"full disk answered {statuses}")
        if stats.c["server_errors_500"] != before:
            stats.problem("5xx other than 503 while the disk was full")
        temps = glob.glob(os.path.join(data, "media", ".*.tmp-*"))
        if temps:
            stats.problem(f"{len(temps)} temporary files left by full-disk writes")
        os.unlink(filler)
        status, _ = s.call("POST", "/api/v1/images", form={"name": "after", "description": "room again",
                                                           "resolution": "1024x1024"})
        if status != 201:
            stats.problem(f"no recovery once space returned: {status}")
        s.verify()  # every invariant, after a full disk
        s.srv.stop()
    finally:
        subprocess.run(["umount", "-l", mnt], check=False)
        shutil.rmtree(mnt, ignore_errors=True)


def main():
    cycles = int(os.environ.get("SOAK_CYCLES", "100"))
    pg_cycles = int(os.environ.get("SOAK_PG_CYCLES", "20"))
    backends = os.environ.get("SOAK_BACKENDS", "sqlite,postgres").split(",")
    stats = Stats()
    per = {}
    t0 = time.time()
    if "sqlite" in backends and cycles > 0:
        s = Soak("sqlite", stats)
        for i in range(cycles):
            s.kill_cycle()
            if (i + 1) % 10 == 0 or i + 1 == cycles:
                log(f"sqlite cycle {i + 1}/{cycles}:", json.dumps(stats.c))
        s.close()
        per["sqlite"] = dict(stats.c)
    if "postgres" in backends and pg_cycles > 0:
        pg = Pg()
        try:
            s = Soak("postgres", stats, pg)
            for i in range(pg_cycles):
                if i % 4 == 3:
                    s.db_kill_cycle()
                else:
                    s.kill_cycle()
                log(f"postgres cycle {i + 1}/{pg_cycles}:", json.dumps(stats.c))
            s.close()
        finally:
            pg.stop()
    if os.environ.get("SOAK_FULL_DISK", "1") == "1":
        full_disk_phase(stats)
    c = stats.c
    losses = (c["lost_creates"] + c["duplicates"] + c["lost_updates"] + c["lost_deletes"] +
              c["unfinished_jobs"] + c["missing_files"] + c["integrity_failures"] + c["full_disk_500"] +
              c["webhook_missing"] + c["webhook_unverified"])
    print(json.dumps({"summary": c, "seconds": round(time.time() - t0), "losses": losses,
                      "problems": stats.problems[:50]}, indent=1))
    print(f"soak: {c['cycles']} cycles, {c['acked_creates']} acknowledged creates, "
          f"{c['acked_updates']} updates, {c['acked_regens']} regenerations, {c['acked_deletes']} "
          f"deletes, {c['webhook_events_expected']} webhook events due (all arrived, signed, "
          f"unless counted missing: {c['webhook_missing']}); losses {losses}; "
          f"problems {len(stats.problems)}")
    sys.exit(1 if stats.problems else 0)


if __name__ == "__main__":
    main()
