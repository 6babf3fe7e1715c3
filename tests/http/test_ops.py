"""Operations: GET /metrics (Prometheus text, checked by promtool; counters move),
--metrics off, the /readyz provider and job-queue fields, and the man page against
`inkwell serve --help`."""
import os
import re
import shutil
import subprocess
import time
import unittest

from harness import BIN, SLOW, Server, ServerTest, slow, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def parse_metrics(text):
    """{(name, frozenset(labels)): value} from the exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        assert m, f"bad exposition line: {line!r}"
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(metrics, name, **labels):
    return metrics.get((name, frozenset(labels.items())), 0.0)


def settled(scrape, name, want, **labels):
    """Scrapes until the counter reaches want: an answer can reach the client a moment
    before it is counted (a request when the server frees it, after the answer is sent;
    a generation by an observer just after its waiters are woken)."""
    deadline = time.time() + slow(10)  # only catches a counter that never moves
    while True:
        m = scrape()
        if value(m, name, **labels) >= want or time.time() > deadline:
            return m
        time.sleep(0.02)


class Metrics(ServerTest):
    server_args = ["--rate-limit", "1000000"]

    def scrape(self):
        r = self.srv.request("GET", "/metrics")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        return r.body.decode(), parse_metrics(r.body.decode())

    def test_promtool_accepts_the_exposition(self):
        self.make_doc()
        self.req("GET", "/api/v1/documents/999999")
        text, _ = self.scrape()
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip() + p.stderr.strip(), "", "promtool lint findings")
        for name in ("inkwell_build_info", "inkwell_http_requests_total",
                     "inkwell_http_request_duration_seconds_bucket", "inkwell_http_requests_in_flight",
                     "inkwell_sse_streams_open", "inkwell_generations_total",
                     "inkwell_generation_duration_seconds_count", "inkwell_provider_attempts_total",
                     "inkwell_provider_retries_total", "inkwell_tokens_total", "inkwell_jobs_queued",
                     "inkwell_jobs_running", "inkwell_store_errors_total",
                     "inkwell_rate_limit_refusals_total"):
            self.assertRegex(text, rf"(?m)^{name}[{{ ]", name)
        # the rendered-record cache (both backends since issue 12) exports its counters
        self.assertRegex(text, r"(?m)^inkwell_record_cache_hits_total \d+$")
        self.assertRegex(text, r"(?m)^inkwell_record_cache_misses_total \d+$")

    def test_record_cache_counters_move(self):
        self.make_doc()
        _, before = self.scrape()
        self.req("GET", "/api/v1/documents")
        self.req("GET", "/api/v1/documents")
        _, after = self.scrape()
        looked = sum(value(after, f"inkwell_record_cache_{k}_total") -
                     value(before, f"inkwell_record_cache_{k}_total") for k in ("hits", "misses"))
        self.assertGreaterEqual(looked, 2)
        self.assertGreaterEqual(value(after, "inkwell_record_cache_hits_total") -
                                value(before, "inkwell_record_cache_hits_total"), 1)

    def test_counters_move_by_route_template_and_status_class(self):
        _, before = self.scrape()
        doc = self.make_doc()
        self.req("GET", f"/api/v1/documents/{doc['id']}")
        self.req("GET", "/api/v1/documents/123456789")
        self.req("GET", "/api/v1/documents", key=None)
        self.req("DELETE", "/api/v1/templates")
        self.srv.request("GET", "/no/such/path")
        # a request is counted when the server frees it, just after the client has read
        # its answer: scrape until the last one is in
        want = value(before, "inkwell_http_requests_total", route="other", method="GET",
                     status="4xx") + 1
        settled(lambda: self.scrape()[1], "inkwell_http_requests_total", want, route="other",
                method="GET", status="4xx")
        text, after = self.scrape()
        D = "inkwell_http_requests_total"
        for route, method, status, n in [("/api/v1/documents", "POST", "2xx", 1),
                                         ("/api/v1/documents/{id}", "GET", "2xx", 1),
                                         ("/api/v1/documents/{id}", "GET", "4xx", 1),
                                         ("/api/v1/documents", "GET", "4xx", 1),
                                         ("/api/v1/templates", "DELETE", "4xx", 1),
                                         ("other", "GET", "4xx", 1)]:
            lab = dict(route=route, method=method, status=status)
            self.assertEqual(value(after, D, **lab) - value(before, D, **lab), n, lab)
        # the histogram counts the same requests
        H = "inkwell_http_request_duration_seconds_count"
        self.assertGreaterEqual(value(after, H, route="/api/v1/documents/{id}") -
                                value(before, H, route="/api/v1/documents/{id}"), 2)
        inf = value(after, "inkwell_http_request_duration_seconds_bucket",
                    route="/api/v1/documents/{id}", le="+Inf")
        self.assertEqual(inf, value(after, H, route="/api/v1/documents/{id}"))
        # no raw path, record id, user or key is ever a label
        self.assertNotIn("123456789", text)
        self.assertNotIn("/no/such/path", text)
        self.assertNotIn("alice", text)
        self.assertNotIn(self.alice[4:20], text)
        self.assertNotIn(f'/api/v1/documents/{doc["id"]}"', text)

    def test_a_refused_method_keeps_its_paths_template(self):
        # the route table's row labels the 405 as it labels the methods the path takes
        doc = self.make_doc()
        _, before = self.scrape()
        D = "inkwell_http_requests_total"
        asked = [("POST", f"/api/v1/documents/{doc['id']}/revisions", "/api/v1/documents/{id}"),
                 ("GET", f"/api/v1/images/{doc['id']}/regenerate", "/api/v1/images/{id}"),
                 ("PUT", "/api/v1/templates/", "/api/v1/templates"),
                 ("POST", f"/api/v1/documents/{doc['id']}/export/", "/api/v1/documents/{id}/export")]
        for method, path, _ in asked:
            r = self.req(method, path)
            self.assertEqual(r.status, 405, (method, path))
        want = value(before, D, route=asked[-1][2], method="POST", status="4xx") + 1
        settled(lambda: self.scrape()[1], D, want, route=asked[-1][2], method="POST",
                status="4xx")
        _, after = self.scrape()
        for method, _, route in asked:
            lab = dict(route=route, method=method, status="4xx")
            self.assertEqual(value(after, D, **lab) - value(before, D, **lab), 1, lab)

    def test_in_flight_and_build_info(self):
        _, m = self.scrape()
        self.assertGreaterEqual(value(m, "inkwell_http_requests_in_flight"), 1)  # the scrape itself
        info = [k for k in m if k[0] == "inkwell_build_info"]
        self.assertEqual(len(info), 1)
        labels = dict(info[0][1])
        self.assertEqual(labels["provider"], "builtin")
        self.assertIn(labels["storage"], ("sqlite", "postgres"))
        self.assertRegex(labels["version"], r"^\d+\.\d+\.\d+$")

    def test_metrics_needs_no_key_and_takes_only_get(self):
        self.assertEqual(self.srv.request("GET", "/metrics").status, 200)
        self.assertEqual(self.srv.request("HEAD", "/metrics").status, 200)
        r = self.srv.request("POST", "/metrics", form={"a": "1"})
        self.assertError(r, 405, "Method not allowed.")
        self.assertEqual(r.header("Allow"), "GET, HEAD")


class RateLimitRefusals(unittest.TestCase):
    def test_refusals_are_counted(self):
        srv = Server("--rate-limit", "2").start()
        try:
            key = srv.key("carol")
            statuses = [srv.request("GET", "/api/v1/templates", key=key).status for _ in range(4)]
            self.assertIn(429, statuses)
            scrape = lambda: parse_metrics(srv.request("GET", "/metrics").body.decode())
            m = settled(scrape, "inkwell_http_requests_total", statuses.count(429),
                        route="/api/v1/templates", method="GET", status="4xx")
            self.assertEqual(value(m, "inkwell_rate_limit_refusals_total"), statuses.count(429))
            self.assertEqual(value(m, "inkwell_http_requests_total", route="/api/v1/templates",
                                   method="GET", status="4xx"), statuses.count(429))
        finally:
            srv.stop()


class MetricsOff(ServerTest):
    server_args = ["--metrics", "off"]

    def test_metrics_off_is_a_404(self):
        r = self.srv.request("GET", "/metrics")
        self.assertError(r, 404, "Resource not found.")

    def test_bad_metrics_value_is_refused(self):
        p = subprocess.run([BIN, "serve", "--metrics", "maybe"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("metrics must be on or off", p.stderr)


class Readyz(ServerTest):
    server_args = ["--workers", "1", "--builtin-delay-ms", "600"]

    def test_provider_and_queue_fields(self):
        r = self.srv.request("GET", "/readyz")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["provider"], {"name": "builtin", "configured": True})
        self.assertEqual(r.json["jobs"], {"queued": 0, "running": 0, "workers": 1})

    def test_search_index_pending_reaches_zero(self):
        # SQLite indexes new records after their commit (store/sqlite_index.c): the gauge
        # counts those it has not reached; they are found by search meanwhile, and the
        # thread reaches them all. PostgreSQL indexes in the commit: no gauge.
        from harness import BACKEND
        tag = "pend%d" % int(time.time() * 1000)
        for i in range(40):
            r = self.req("POST", "/api/v1/documents",
                         form={"name": f"{tag} {i}", "prompt": "a note on tea", "template_id": "1"})
            self.assertEqual(r.status, 201, r)
        r = self.req("GET", f"/api/v1/documents?search={tag}&per_page=100")
        self.assertEqual(r.json["meta"]["total"], 40, r)
        def scrape():
            r = self.srv.request("GET", "/metrics")
            self.assertEqual(r.status, 200, r)
            return r.body.decode(), parse_metrics(r.body.decode())
        text, m = scrape()
        if BACKEND != "sqlite":
            self.assertNotIn("inkwell_search_index_pending", text)
            return
        self.assertRegex(text, r"(?m)^inkwell_search_index_pending \d+$")
        deadline = time.time() + slow(20)
        while value(m, "inkwell_search_index_pending") > 0 and time.time() < deadline:
            time.sleep(0.05)
            m = scrape()[1]
        self.assertEqual(value(m, "inkwell_search_index_pending"), 0)
        r = self.req("GET", f"/api/v1/documents?search={tag}&per_page=100")
        self.assertEqual(r.json["meta"]["total"], 40, r)



class ReadyzQueue(ServerTest):
    # each generation sleeps 600 ms (scaled): the three jobs below are all still counted
    # when /readyz answers, however slow the run
    server_args = ["--workers", "1", "--builtin-delay-ms", str(int(600 * SLOW))]

    def test_queue_counts_jobs_waiting_and_running(self):
        ids = []
        for i in range(3):
            r = self.req("POST", "/api/v1/images", headers={"Prefer": "respond-async"},
                         form={"name": f"P{i}", "description": "a red sunset", "resolution": "1024x1024"})
            self.assertEqual(r.status, 202, r)
            ids.append(r.json["data"]["id"])
        jobs = self.srv.request("GET", "/readyz").json["jobs"]
        self.assertEqual(jobs["queued"] + jobs["running"], 3, jobs)
        self.assertLessEqual(jobs["running"], 1, jobs)  # one worker
        m = parse_metrics(self.srv.request("GET", "/metrics").body.decode())
        self.assertLessEqual(value(m, "inkwell_jobs_queued") + value(m, "inkwell_jobs_running"), 3)
        wait_for(lambda: self.srv.request("GET", "/readyz").json["jobs"] == {"queued": 0, "running": 0, "workers": 1},
                 "every job done", timeout=30)


class ReadyzOpenAI(unittest.TestCase):
    def readyz(self, *args, env=None):
        srv = Server("--provider", "openai", *args, env=env).start()
        try:
            return srv.request("GET", "/readyz").json
        finally:
            srv.stop()

    def test_openai_without_key_on_openai_is_not_configured(self):
        env = {"OPENAI_API_KEY": "", "INKWELL_OPENAI_API_KEY": ""}
        j = self.readyz("--openai-base-url", "https://api.openai.com/v1", env=env)
        self.assertEqual(j["status"], 200)  # the provider never takes a node out of rotation
        self.assertEqual(j["provider"], {"name": "openai", "configured": False,
                                         "last_call": "none", "last_call_at": None})

    def test_openai_compatible_local_server_is_configured(self):
        j = self.readyz("--openai-base-url", "http://127.0.0.1:9/v1")
        self.assertTrue(j["provider"]["configured"])
        self.assertEqual(j["provider"]["last_call"], "none")


class ManPage(unittest.TestCase):
    def test_every_flag_of_help_is_in_the_man_page(self):
        help_text = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True).stdout
        flags = re.findall(r"^  --([a-z0-9-]+)", help_text, re.M)
        self.assertGreater(len(flags), 20)
        with open(os.path.join(ROOT, "man", "inkwell.1")) as f:
            man = f.read()
        documented = set(re.findall(r"^\.It Fl \\?-?([a-z0-9-]+)", man, re.M))
        self.assertEqual(sorted(set(flags) - documented), [], "flags missing from inkwell.1")
        self.assertEqual(sorted(documented - set(flags)), [], "inkwell.1 lists flags --help does not")
        if shutil.which("man"):
            p = subprocess.run(["man", "--warnings", "-l", "-Tutf8", os.path.join(ROOT, "man", "inkwell.1")],
                               capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr.strip(), "", "man page warnings")


class Generations(ServerTest):
    server_args = ["--builtin-fail-pattern", "FAILME", "--builtin-delay-ms", "300"]

    def metrics(self):
        return parse_metrics(self.srv.request("GET", "/metrics").body.decode())

    def test_generations_by_kind_provider_outcome_with_durations(self):
        before = self.metrics()
        self.make_doc()
        self.make_image()
        r = self.req("POST", "/api/v1/documents", form={"name": "x", "prompt": "FAILME please"})
        self.assertEqual(r.status, 502, r)
        G = "inkwell_generations_total"
        after = settled(self.metrics, G, value(before, G, kind="image", provider="builtin",
                                               outcome="completed") + 1,
                        kind="image", provider="builtin", outcome="completed")
        G, H = "inkwell_generations_total", "inkwell_generation_duration_seconds_count"
        for kind, outcome, n in [("document", "completed", 1), ("image", "completed", 1),
                                 ("document", "failed", 1), ("image", "failed", 0)]:
            lab = dict(kind=kind, provider="builtin", outcome=outcome)
            self.assertEqual(value(after, G, **lab) - value(before, G, **lab), n, lab)
        self.assertEqual(value(after, H, kind="document", provider="builtin") -
                         value(before, H, kind="document", provider="builtin"), 2)
        # each took the builtin delay (300 ms): none is in the buckets below 0.25 s
        le = value(after, "inkwell_generation_duration_seconds_bucket", kind="image",
                   provider="builtin", le="0.25")
        self.assertEqual(le, value(before, "inkwell_generation_duration_seconds_bucket",
                                   kind="image", provider="builtin", le="0.25"))

    def test_open_streams_gauge(self):
        from test_stream import Stream
        s = Stream(self.srv.port, "POST", "/api/v1/documents", self.alice,
                   form={"name": "S", "prompt": "a long post about tea"})
        self.assertEqual(s.status, 201)
        self.assertEqual(s.next_event()[0], "record")
        self.assertGreaterEqual(value(self.metrics(), "inkwell_sse_streams_open"), 1)
        s.events()
        s.close()
        wait_for(lambda: value(self.metrics(), "inkwell_sse_streams_open") == 0, "no stream open")


class OpenAIMetrics(unittest.TestCase):
    """Provider attempts, retries by reason, tokens and the last outcome in /readyz,
    against the fake OpenAI-compatible server."""

    @classmethod
    def setUpClass(cls):
        from test_openai import Fake
        cls.fake = Fake()
        cls.srv = Server("--provider", "openai", "--openai-base-url", cls.fake.base + "/v1",
                         # no attempt may time out here (timeout retries: 0), however slow the run
                         "--provider-timeout", str(slow(5)), env={"OPENAI_API_KEY": "sk-ops-test"}).start()
        cls.key = cls.srv.key("ops")

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        cls.fake.stop()

    def metrics(self):
        return parse_metrics(self.srv.request("GET", "/metrics").body.decode())

    def create(self):
        return self.srv.request("POST", "/api/v1/documents", key=self.key,
                                form={"name": "AI", "prompt": "a post about tea"})

    def test_attempts_retries_tokens_and_last_outcome(self):
        self.assertEqual(self.srv.request("GET", "/readyz").json["provider"]["last_call"], "none")
        self.fake.script(chat=[{"status": 429, "retry_after": "0"},
                               {"status": 503, "retry_after": "0"}, "ok"])
        before = self.metrics()
        r = self.create()
        self.assertEqual(r.status, 201, r)
        G, lab = "inkwell_generations_total", dict(kind="document", provider="openai", outcome="completed")
        after = settled(self.metrics, G, value(before, G, **lab) + 1, **lab)
        d = lambda name, **l: value(after, name, **l) - value(before, name, **l)
        self.assertEqual(d("inkwell_provider_attempts_total", kind="document"), 3)
        self.assertEqual(d("inkwell_provider_retries_total", reason="rate_limit"), 1)
        self.assertEqual(d("inkwell_provider_retries_total", reason="server_error"), 1)
        self.assertEqual(d("inkwell_provider_retries_total", reason="timeout"), 0)
        self.assertEqual(d("inkwell_generations_total", kind="document", provider="openai",
                           outcome="completed"), 1)
        self.assertGreater(d("inkwell_tokens_total", type="completion"), 0)
        p = self.srv.request("GET", "/readyz").json["provider"]  # set before the count
        self.assertEqual((p["name"], p["configured"], p["last_call"]), ("openai", True, "succeeded"))
        self.assertRegex(p["last_call_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

        self.fake.script(chat=[{"status": 401}])
        before = self.metrics()
        self.assertEqual(self.create().status, 502)
        lab = dict(kind="document", provider="openai", outcome="failed")
        after = settled(self.metrics, G, value(before, G, **lab) + 1, **lab)
        self.assertEqual(value(after, "inkwell_generations_total", kind="document", provider="openai",
                               outcome="failed") -
                         value(before, "inkwell_generations_total", kind="document", provider="openai",
                               outcome="failed"), 1)
        self.assertEqual(value(after, "inkwell_provider_attempts_total", kind="document") -
                         value(before, "inkwell_provider_attempts_total", kind="document"), 1)
        self.assertEqual(self.srv.request("GET", "/readyz").json["provider"]["last_call"], "failed")


class WebAppAnswers(ServerTest):
    """The web app's files, through the harness (so the OpenAPI check sees them too),
    counted under the route template "/"."""

    def test_app_files_304_and_404(self):
        r = self.srv.request("GET", "/")
        self.assertEqual(r.status, 200)
        self.assertIn("frame-ancestors 'none'", r.header("Content-Security-Policy"))
        again = self.srv.request("GET", "/", headers={"If-None-Match": r.header("ETag")})
        self.assertEqual(again.status, 304)
        self.assertEqual(self.srv.request("GET", "/app.js").status, 200)
        self.assertError(self.srv.request("GET", "/no-such-file.js"), 404, "Resource not found.")
        m = settled(lambda: parse_metrics(self.srv.request("GET", "/metrics").body.decode()),
                    "inkwell_http_requests_total", 1, route="/", method="GET", status="3xx")
        self.assertGreaterEqual(value(m, "inkwell_http_requests_total", route="/", method="GET",
                                      status="2xx"), 2)
        self.assertEqual(value(m, "inkwell_http_requests_total", route="/", method="GET",
                               status="3xx"), 1)
