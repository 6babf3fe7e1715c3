"""Generation pipeline (API.md §5): async requests, wait limit, failures with and
without a waiter, durability across kill -9, shutdown, and waiting clients that
must not pin server threads."""
import signal
import threading
import time

from harness import words_of, SLOW, Server, ServerTest, metric, poll_state, slow, wait_for


def poll(test, key, path, until=("completed", "failed"), timeout=30):
    return poll_state(test.srv, key, path, until, timeout)


class Async(ServerTest):
    # the default wait limit (60 s, scaled by the harness for slow runs): a waiting create
    # answers when its 400 ms generation ends, never at the limit on a busy machine
    server_args = ["--builtin-delay-ms", "400", "--builtin-fail-pattern", "FAILME"]

    def test_respond_async_then_poll(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "a", "prompt": "async tea"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        d = r.json["data"]
        self.assertEqual((r.json["status"], d["state"], d["result"]), (202, "queued", None))
        self.assertEqual(r.header("Location"), self.srv.url(f"/api/v1/documents/{d['id']}"))
        done = poll(self, self.alice, f"/api/v1/documents/{d['id']}")
        self.assertEqual(done["state"], "completed")
        self.assertTrue(done["result"])
        # images too
        r = self.req("POST", "/api/v1/images", form={"name": "i", "description": "sea", "resolution": "1024x1024"},
                     headers={"Prefer": "wait=5, respond-async"})
        self.assertEqual((r.status, r.json["data"]["state"], r.json["data"]["url"]), (202, "queued", None))
        done = poll(self, self.alice, f"/api/v1/images/{r.json['data']['id']}")
        self.assertTrue(done["url"])

    def test_wait_under_limit_gives_201(self):
        t = time.time()
        r = self.req("POST", "/api/v1/documents", form={"name": "w", "prompt": "wait for me"})
        self.assertEqual((r.status, r.json["data"]["state"]), (201, "completed"), r)
        self.assertGreaterEqual(time.time() - t, 0.35)  # a lower bound: the delay is a sleep

    def test_failure_with_waiter_is_502_and_no_record(self):
        before = self.req("GET", "/api/v1/documents?per_page=100").json["meta"]["total"]
        r = self.req("POST", "/api/v1/documents", form={"name": "f", "prompt": "please FAILME now"})
        self.assertEqual(r.status, 502, r)
        self.assertEqual(set(r.json), {"message", "status"})
        self.assertEqual(r.json["status"], 502)
        self.assertTrue(r.json["message"])
        after = self.req("GET", "/api/v1/documents?per_page=100").json["meta"]["total"]
        self.assertEqual(before, after)
        r = self.req("POST", "/api/v1/images", form={"name": "f", "description": "FAILME", "resolution": "1024x1024"})
        self.assertEqual(r.status, 502, r)
        self.assertEqual(self.req("GET", "/api/v1/images?search=f").json["meta"]["total"], 0)

    def test_failure_without_waiter_stays_failed(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "nf", "prompt": "FAILME quietly"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        d = poll(self, self.alice, f"/api/v1/documents/{r.json['data']['id']}")
        self.assertEqual(d["state"], "failed")
        self.assertTrue(d["error"])
        self.assertIsNone(d["result"])


class ListStates(ServerTest):
    # the generation sleeps 1 s (scaled by SLOW): every list below takes a small part of
    # that however slow the run, so the polling loop sees the job running
    server_args = ["--builtin-delay-ms", str(int(1000 * SLOW))]

    def test_list_shows_each_state_of_a_job(self):
        # lists keep rendered records (api/rcache.h): a queued rendering must not outlive the state
        r = self.req("POST", "/api/v1/documents", form={"name": "states", "prompt": "watch me"},
                     headers={"Prefer": "respond-async"})
        doc_id = r.json["data"]["id"]

        def listed():
            return [d for d in self.req("GET", "/api/v1/documents?per_page=100").json["data"] if d["id"] == doc_id][0]
        early = listed()
        self.assertIn(early["state"], ("queued", "generating"))
        # the list follows the job through its states, in order, never back: the
        # generation takes 1 s (times SLOW), so polling every 20 ms sees it running
        order = ["queued", "generating", "completed"]
        seen = [early["state"]]
        deadline = time.time() + slow(30)
        while seen[-1] != "completed" and time.time() < deadline:
            state = listed()["state"]
            self.assertIn(state, order)
            if state != seen[-1]:
                seen.append(state)
            time.sleep(0.02)
        self.assertEqual(seen, sorted(seen, key=order.index), seen)
        self.assertEqual(seen[-1], "completed", seen)
        self.assertIn("generating", seen)
        done = poll(self, self.alice, f"/api/v1/documents/{doc_id}")
        self.assertEqual(done["state"], "completed")
        self.assertEqual(listed(), done)
        self.assertTrue(listed()["result"])


class WaitLimit(ServerTest):
    # the generation sleeps 3 s, the wait is 0.3 s: a 202 whose record is still queued or
    # generating can only come from the wait limit (without it the create would wait for
    # the generation and answer 201), however slow the machine — no clock is read here
    server_args = ["--builtin-delay-ms", "3000", "--wait-limit", "0.3"]

    def test_wait_limit_answers_202_and_generation_goes_on(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "slow", "prompt": "slow one"})
        self.assertEqual(r.status, 202, r)
        self.assertIn(r.json["data"]["state"], ("queued", "generating"))
        self.assertTrue(r.header("Location"))
        d = poll(self, self.alice, f"/api/v1/documents/{r.json['data']['id']}")
        self.assertEqual(d["state"], "completed")


class WaitersDoNotPinThreads(ServerTest):
    # no create can answer before its wait limit (6 s, times SLOW; the generation sleeps
    # longer): GETs answered while creates wait show that waiting pins no thread (the
    # limit leaves the GETs room on a machine loaded by other suites: 3 s was too little
    # at a load average of 28)
    server_args = ["--builtin-delay-ms", str(int(8000 * SLOW)), "--wait-limit", str(6 * SLOW),
                   "--threads", "2", "--workers", "2"]

    def test_500_waiting_clients_and_fast_gets(self):
        results = []
        lock = threading.Lock()
        first_answer = {}

        def create(i):
            try:
                r = self.srv.request("POST", "/api/v1/documents", key=self.bob,
                                     form={"name": f"n{i}", "prompt": "slow"}, timeout=30)
                if first_answer.get("t") is None:
                    first_answer["t"] = time.monotonic()
                status = r.status
            except OSError as e:
                status = repr(e)
            with lock:
                results.append(status)

        threads = [threading.Thread(target=create, args=(i,)) for i in range(500)]
        for t in threads:
            t.start()
        # many creates are waiting now (more than the 2 HTTP threads): the server says so
        wait_for(lambda: metric(self.srv, "inkwell_http_requests_in_flight") >= 50, "50 waiting creates")
        for _ in range(20):
            r = self.req("GET", "/api/v1/templates")
            self.assertEqual(r.status, 200)
        gets_done = time.monotonic()
        for t in threads:
            t.join()
        # a pinned pool would answer no GET before the first create's answer (at its wait limit)
        self.assertLess(gets_done, first_answer["t"], "a GET waited for a create to answer")
        self.assertEqual(len(results), 500)
        self.assertTrue(all(s in (201, 202) for s in results), set(map(str, results)))


class Durability(ServerTest):
    server_args = []

    def test_kill_9_then_restart_completes_everything(self):
        srv = Server("--builtin-delay-ms", "300", "--workers", "1", "--job-lease", "1")
        srv.start()
        key = srv.key("dur")
        ids = []
        for i in range(8):
            r = srv.request("POST", "/api/v1/documents", key=key, form={"name": f"d{i}", "prompt": "x"},
                            headers={"Prefer": "respond-async"})
            self.assertEqual(r.status, 202)
            ids.append(r.json["data"]["id"])
        r = srv.request("POST", "/api/v1/images", key=key,
                        form={"name": "img", "description": "forest", "resolution": "1024x1024"},
                        headers={"Prefer": "respond-async"})
        img_id = r.json["data"]["id"]
        wait_for(lambda: metric(srv, "inkwell_jobs_running") >= 1, "a running job")  # the rest queued
        srv.kill()
        srv2 = Server(data_dir=srv.data_dir, database=srv.database)
        srv2.start()
        try:
            for i in ids:
                r = srv2.request("GET", f"/api/v1/documents/{i}", key=key)
                self.assertEqual(r.status, 200)
            self.srv, saved = srv2, self.srv
            try:
                for i in ids:
                    d = poll(self, key, f"/api/v1/documents/{i}", until=("completed",), timeout=30)
                    self.assertTrue(d["result"])
                img = poll(self, key, f"/api/v1/images/{img_id}", until=("completed",), timeout=30)
                self.assertTrue(img["url"])
            finally:
                self.srv = saved
            self.assertEqual(srv2.request("GET", "/api/v1/documents", key=key).json["meta"]["total"], 8)
        finally:
            self.assertEqual(srv2.stop(), 0)

    def test_sigterm_exits_0_quickly_and_jobs_resume(self):
        # each generation would sleep slow(20) s and the lease is slow(30) s: a stop within
        # slow(10) s shows the running jobs gave up, whatever the machine's speed (no
        # --shutdown-grace for them to finish in: test_pg_drain.py tests that one)
        srv = Server("--builtin-delay-ms", str(int(slow(20) * 1000)), "--workers", "2",
                     "--job-lease", str(slow(30)), "--shutdown-grace", "0")
        srv.start()
        key = srv.key("term")
        ids = []
        for i in range(3):
            r = srv.request("POST", "/api/v1/documents", key=key, form={"name": f"t{i}", "prompt": "x"},
                            headers={"Prefer": "respond-async"})
            ids.append(r.json["data"]["id"])
        waiter = {}

        def wait_create():
            waiter["r"] = srv.request("POST", "/api/v1/documents", key=key, form={"name": "w", "prompt": "x"})
        th = threading.Thread(target=wait_create)
        th.start()
        # the waiting create's job is in (with the 3 others): the create is waiting
        wait_for(lambda: metric(srv, "inkwell_jobs_queued") + metric(srv, "inkwell_jobs_running") >= 4,
                 "4 jobs")
        t = time.time()
        rc = srv.stop(signal.SIGTERM)
        th.join()
        self.assertEqual(rc, 0)
        self.assertLess(time.time() - t, slow(10))
        self.assertEqual(waiter["r"].status, 202)  # the waiting client got its record, not an error
        srv2 = Server("--workers", "2", data_dir=srv.data_dir, database=srv.database).start()
        try:
            self.srv, saved = srv2, self.srv
            try:
                for i in ids + [waiter["r"].json["data"]["id"]]:
                    poll(self, key, f"/api/v1/documents/{i}", until=("completed",), timeout=20)
            finally:
                self.srv = saved
        finally:
            self.assertEqual(srv2.stop(), 0)


class InlineGeneration(ServerTest):
    """The builtin generator without a test delay runs inside the creating request and
    its documents are stored by the group commit (store/writer.h): no job at all."""
    server_args = ["--builtin-fail-pattern", "FAILME"]

    def test_failure_is_502_and_leaves_nothing(self):
        before = self.req("GET", "/api/v1/documents?per_page=100").json["meta"]["total"]
        r = self.req("POST", "/api/v1/documents", form={"name": "f", "prompt": "inline FAILME"})
        self.assertEqual(r.status, 502, r)
        self.assertEqual(set(r.json), {"message", "status"})
        self.assertTrue(r.json["message"])
        self.assertEqual(self.req("GET", "/api/v1/documents?per_page=100").json["meta"]["total"], before)
        # async creates still go through a job, and fail there
        r = self.req("POST", "/api/v1/documents", form={"name": "nf", "prompt": "FAILME later"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual((r.status, r.json["data"]["state"]), (202, "queued"))
        d = poll(self, self.alice, f"/api/v1/documents/{r.json['data']['id']}")
        self.assertEqual(d["state"], "failed")

    def test_concurrent_creates_each_stored_once(self):
        before = self.req("GET", "/api/v1/documents", key="bob").json["meta"]["total"]
        n = 48
        results = [None] * n

        def create(i):
            try:
                results[i] = self.srv.request("POST", "/api/v1/documents", key=self.bob,
                                              form={"name": f"gc{i}", "prompt": f"group commit {i}",
                                                    "template_id": str(i % 52 + 1), "creativity": "0"},
                                              timeout=30)
            except OSError as e:
                results[i] = e
        threads = [threading.Thread(target=create, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ids = set()
        for i, r in enumerate(results):
            self.assertNotIsInstance(r, Exception, r)
            self.assertEqual(r.status, 201, r)
            d = r.json["data"]
            self.assertEqual((d["state"], d["name"], d["template_id"]), ("completed", f"gc{i}", i % 52 + 1))
            self.assertTrue(d["result"])
            self.assertEqual(d["words"], words_of(d["result"]))
            self.assertEqual(r.header("Location"), self.srv.url(f"/api/v1/documents/{d['id']}"))
            ids.add(d["id"])
            got = self.req("GET", f"/api/v1/documents/{d['id']}", key="bob")
            self.assertEqual(got.json["data"], d)  # what was answered is what was stored
            self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").status, 404)  # not alice's
        self.assertEqual(len(ids), n)
        self.assertEqual(self.req("GET", "/api/v1/documents", key="bob").json["meta"]["total"], before + n)
        # creativity 0 is repeatable through this path too
        a = self.make_doc(key="bob", name="same", prompt="group commit 7", template_id="8", creativity="0")
        self.assertEqual(a["result"], results[7].json["data"]["result"])

    def test_sigterm_with_creates_in_flight(self):
        self.creates_then_stop(lambda srv: self.assertEqual(srv.stop(signal.SIGTERM), 0), all_201=True)

    def test_kill_9_loses_nothing_acknowledged(self):
        self.creates_then_stop(lambda srv: srv.kill(), all_201=False)

    def creates_then_stop(self, stop_server, all_201):
        srv = Server()
        srv.start()
        key = srv.key("inflight")
        statuses = []
        lock = threading.Lock()
        stop = threading.Event()

        def create_loop(i):
            while not stop.is_set():
                try:
                    r = srv.request("POST", "/api/v1/documents", key=key,
                                    form={"name": f"s{i}", "prompt": "x"}, timeout=10)
                    with lock:
                        statuses.append((r.status, r.json["data"]["id"] if r.status == 201 else None))
                except Exception:  # refused, reset, or cut mid-answer by the kill
                    return
        threads = [threading.Thread(target=create_loop, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        wait_for(lambda: len(statuses) >= 16, "16 creates answered")  # the stop meets creates in flight
        stop_server(srv)
        stop.set()
        for t in threads:
            t.join()
        created = [i for s, i in statuses if s == 201]
        self.assertTrue(created)
        if all_201:  # a graceful stop answers every request it took
            self.assertTrue(all(s == 201 for s, _ in statuses), set(s for s, _ in statuses))
        srv2 = Server(data_dir=srv.data_dir, database=srv.database).start()
        try:
            for i in created:  # every acknowledged document is there
                self.assertEqual(srv2.request("GET", f"/api/v1/documents/{i}", key=key).status, 200)
            total = srv2.request("GET", "/api/v1/documents", key=key).json["meta"]["total"]
            if all_201:
                self.assertEqual(total, len(created))
            else:  # plus at most the 8 stored whose answers the kill cut off
                self.assertTrue(len(created) <= total <= len(created) + 8, (total, len(created)))
        finally:
            self.assertEqual(srv2.stop(), 0)
