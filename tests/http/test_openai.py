"""The openai provider end to end (API.md §5): inkwell against the fake
OpenAI-compatible server in tests/fake_openai.py. Each case asserts what inkwell
sent and what its client got; no provider body, key or URL reaches a response or
the log."""
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.request

from harness import Server, poll_state, slow
from pngcheck import check_png
from test_images import fetch
from test_stream import Stream, check_deltas

HERE = os.path.dirname(os.path.abspath(__file__))
SECRET = "sk-test-SECRET-4242"


class Fake:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "fake_openai.py")],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.base = f"http://127.0.0.1:{self.port}"

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def script(self, chat=None, images=None):
        self.call("POST", "/_control/reset", {})
        self.call("POST", "/_control/script", {"chat": chat or [], "images": images or []})

    def requests(self):
        return self.call("GET", "/_control/requests")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class OpenAIProvider(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = Fake()
        cls.srv = Server("--provider", "openai", "--openai-base-url", cls.fake.base + "/v1",
                         "--text-model", "test-model-1", "--image-model", "img-model-2",
                         # one attempt's limit: short for the hang case, longer on a slow run
                         # (kept under the fake's 30 s hang, so a hang still ends as a timeout)
                         "--provider-timeout", str(min(slow(1.5), 6)), "--max-output-tokens", "321",
                         "--wait-limit", str(slow(60)),
                         env={"OPENAI_API_KEY": SECRET}).start()
        cls.key = cls.srv.key("ai")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.fake.stop()
        log = cls.srv.read_log()
        assert SECRET not in log and "FAKEBODY" not in log, "secret or provider body in the log"
        assert rc == 0

    def post(self, path, form, headers=None):
        return self.srv.request("POST", path, key=self.key, form=form, headers=headers)

    def assertClean(self, r):
        text = r.body.decode()
        for bad in (SECRET, "FAKEBODY", "127.0.0.1:%d" % self.fake.port, "/v1/"):
            self.assertNotIn(bad, text)

    def doc_count(self):
        return self.srv.request("GET", "/api/v1/documents", key=self.key).json["meta"]["total"]

    def test_text_success_and_what_was_sent(self):
        self.fake.script()
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "tea and focus", "creativity": "0.75",
                                            "template_id": "6"})
        self.assertEqual(r.status, 201, r)
        d = r.json["data"]
        self.assertEqual(d["result"], "Echo: tea and focus")
        self.assertEqual(d["words"], 4)
        [req] = self.fake.requests()
        self.assertEqual(req["path"], "/v1/chat/completions")
        self.assertEqual(req["headers"]["authorization"], f"Bearer {SECRET}")
        body = req["json"]
        self.assertEqual((body["model"], body["temperature"], body["max_tokens"]), ("test-model-1", 0.75, 321))
        self.assertIs(body["stream"], True)
        self.assertEqual(body["stream_options"], {"include_usage": True})
        self.assertEqual(body["messages"][0]["role"], "system")
        self.assertIn("outline", body["messages"][0]["content"].lower())
        self.assertEqual(body["messages"][1], {"role": "user", "content": "tea and focus"})

    def test_reasoning_never_in_the_result(self):
        cases = [
            ({"pieces": ["<thi", "nk>SECRETPLAN step one", " and two</thi", "nk>\n\n", "Clean", " text"]},
             "Clean text"),
            ({"reasoning": ["SECRETPLAN", " more"], "pieces": ["Clean", " text"]}, "Clean text"),
            ({"reasoning": ["SECRETPLAN"], "reasoning_field": "reasoning", "pieces": ["Clean"]}, "Clean"),
            ({"plain": True, "reasoning": ["SECRETPLAN"], "pieces": ["<think>SECRETPLAN</think>Plain"]}, "Plain"),
        ]
        for spec, want in cases:
            self.fake.script(chat=[spec])
            r = self.post("/api/v1/documents", {"name": "n", "prompt": "think first"})
            self.assertEqual(r.status, 201, (spec, r))
            self.assertEqual(r.json["data"]["result"], want, spec)
            self.assertNotIn("SECRETPLAN", r.body.decode())
            got = self.srv.request("GET", f"/api/v1/documents/{r.json['data']['id']}", key=self.key)
            self.assertEqual(got.json["data"]["result"], want)

    def stream_create(self, form):
        s = Stream(self.srv.port, "POST", "/api/v1/documents", self.key, form=form)
        evs = s.events() if s.status == 201 else None
        s.close()
        return s, evs

    def test_streamed_create_deltas_join_to_the_result_without_reasoning(self):
        self.fake.script(chat=[{"pieces": ["<thi", "nk>SECRETPLAN", "</think>\n\n", "Grüße", " aus", " 日本", " 🎉", "!"],
                                "reasoning": ["SECRETPLAN too"], "delay": 0.05}])
        s, evs = self.stream_create({"name": "n", "prompt": "stream it"})
        self.assertEqual(s.status, 201)
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[-1][0], "done")
        done = evs[-1][2]
        self.assertEqual(done["result"], "Grüße aus 日本 🎉!")
        self.assertEqual(check_deltas(self, evs), done["result"])
        self.assertGreaterEqual(sum(1 for e in evs if e[0] == "delta"), 3)  # pieces as they came
        self.assertFalse(any("SECRETPLAN" in json.dumps(e[2]) for e in evs))
        [req] = self.fake.requests()
        self.assertIs(req["json"]["stream"], True)

    def test_streamed_create_failure_after_text_not_retried_no_record(self):
        before = self.doc_count()
        self.fake.script(chat=[{"error_after": 2}, "ok"])
        s, evs = self.stream_create({"name": "n", "prompt": "midway fails"})
        self.assertEqual(s.status, 201)
        kinds = [e[0] for e in evs]
        self.assertEqual(kinds[0], "record")
        self.assertEqual(kinds[-1], "error")
        self.assertEqual(evs[-1][2]["status"], 502)
        self.assertIn("error while writing", evs[-1][2]["message"])
        self.assertNotIn("FAKEBODY", json.dumps(evs))
        self.assertEqual(len(self.fake.requests()), 1)  # text was out: no retry
        self.assertEqual(self.doc_count(), before)

    def test_streamed_create_drop_before_text_is_retried(self):
        self.fake.script(chat=[{"drop_after": 0}, {"pieces": ["Second", " try"]}])
        s, evs = self.stream_create({"name": "n", "prompt": "retry me"})
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual(check_deltas(self, evs), "Second try")
        self.assertEqual(evs[-1][2]["result"], "Second try")
        self.assertEqual(len(self.fake.requests()), 2)

    def test_usage_and_truncated_on_the_record(self):
        usage = {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}
        self.fake.script(chat=[{"pieces": ["Cut", " short"], "finish": "length", "usage": usage}])
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "long one"})
        self.assertEqual(r.status, 201, r)
        d = r.json["data"]
        self.assertEqual(d["result"], "Cut short")
        self.assertIs(d["truncated"], True)
        self.assertEqual(d["usage"], {"prompt_tokens": 12, "completion_tokens": 34})
        shown = self.srv.request("GET", f"/api/v1/documents/{d['id']}", key=self.key).json["data"]
        self.assertEqual((shown["usage"], shown["truncated"]), (d["usage"], True))
        # a plain JSON answer's usage; a stream without usage: null, and not truncated
        self.fake.script(chat=[{"plain": True, "pieces": ["Plain"], "usage": {"prompt_tokens": 1, "completion_tokens": 2}},
                               {"pieces": ["No", " usage"], "usage": False}])
        d = self.post("/api/v1/documents", {"name": "n", "prompt": "plain"}).json["data"]
        self.assertEqual((d["usage"], d["truncated"]), ({"prompt_tokens": 1, "completion_tokens": 2}, False))
        d = self.post("/api/v1/documents", {"name": "n", "prompt": "none"}).json["data"]
        self.assertEqual((d["result"], d["usage"], d["truncated"]), ("No usage", None, False))
        # streamed: the done event carries them
        self.fake.script(chat=[{"pieces": ["Stream", "ed"], "finish": "length", "usage": usage}])
        s, evs = self.stream_create({"name": "n", "prompt": "streamed"})
        done = evs[-1][2]
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual((done["result"], done["truncated"]), ("Streamed", True))
        self.assertEqual(done["usage"], {"prompt_tokens": 12, "completion_tokens": 34})
        self.assertEqual(check_deltas(self, evs), "Streamed")

    def test_stream_error_before_any_text_is_retried(self):
        # (after text has been passed on, a failure is final: tests/unit/test_openai.c)
        self.fake.script(chat=[{"error_after": 0}, {"drop_after": 0}, "ok"])
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "early"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json["data"]["result"], "Echo: early")
        self.assertEqual(len(self.fake.requests()), 3)

    def test_server_refusing_stream_options(self):
        # its own server: what it learns (leave stream_options out) lasts for the process
        srv = Server("--provider", "openai", "--openai-base-url", self.fake.base + "/v1",
                     "--text-model", "m", env={"OPENAI_API_KEY": SECRET}).start()
        try:
            key = srv.key("refuse")
            self.fake.call("POST", "/_control/reset", {})
            self.fake.call("POST", "/_control/script", {"reject_stream_options": True})
            for prompt, want_requests in (("old server", 2), ("again", 3)):
                r = srv.request("POST", "/api/v1/documents", key=key, form={"name": "n", "prompt": prompt})
                self.assertEqual(r.status, 201, r)
                self.assertEqual(r.json["data"]["result"], f"Echo: {prompt}")
                self.assertClean(r)
                self.assertEqual(len(self.fake.requests()), want_requests)
            reqs = self.fake.requests()
            self.assertIn("stream_options", reqs[0]["json"])
            self.assertNotIn("stream_options", reqs[1]["json"])
            self.assertNotIn("stream_options", reqs[2]["json"])
            self.assertNotIn("max_tokens", reqs[2]["json"])  # --max-output-tokens 0 by default
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_image_success_png_stored_and_revised_prompt(self):
        self.fake.script()
        r = self.post("/api/v1/images", {"name": "i", "description": "a lighthouse", "resolution": "1792x1024",
                                         "style": "natural"})
        self.assertEqual(r.status, 201, r)
        img = r.json["data"]
        self.assertEqual(img["revised_prompt"], "Revised: a lighthouse")
        resp, png = fetch(img["url"])
        self.assertEqual(check_png(png), (1792, 1024))
        [req] = self.fake.requests()
        self.assertEqual(req["json"], {"model": "img-model-2", "prompt": "a lighthouse", "n": 1, "size": "1792x1024",
                                       "response_format": "b64_json", "style": "natural"})
        self.fake.script()
        self.post("/api/v1/images", {"name": "i", "description": "plain", "resolution": "1024x1024"})
        self.assertNotIn("style", self.fake.requests()[0]["json"])

    def test_429_retry_after_then_success(self):
        self.fake.script(chat=[{"status": 429, "retry_after": "1"}])
        t = time.time()
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "retry me"})
        self.assertEqual(r.status, 201, r)
        self.assertGreaterEqual(time.time() - t, 0.9)
        self.assertEqual(len(self.fake.requests()), 2)

    def test_insufficient_quota_not_retried_502_no_record(self):
        before = self.doc_count()
        self.fake.script(chat=["insufficient_quota"])
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "quota"})
        self.assertEqual(r.status, 502, r)
        self.assertIn("quota", r.json["message"].lower())
        self.assertClean(r)
        self.assertEqual(len(self.fake.requests()), 1)
        self.assertEqual(self.doc_count(), before)

    def test_persistent_500_five_attempts(self):
        self.fake.script(chat=[{"status": 500}] * 6)
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "down"})
        self.assertEqual(r.status, 502, r)
        self.assertClean(r)
        self.assertEqual(len(self.fake.requests()), 5)

    def test_hang_times_out(self):
        # each attempt hangs 30 s, then the fake drops it: "did not answer in time" shows
        # the provider timeout ended every attempt first (a drop is another message)
        self.fake.script(chat=["hang"] * 5)
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "slow"})
        self.assertEqual(r.status, 502, r)
        self.assertIn("time", r.json["message"].lower())
        self.assertClean(r)

    def test_malformed_oversized_redirect_fail_cleanly(self):
        for b in ["malformed", "oversized", "redirect", "missing_field"]:
            self.fake.script(chat=[b])
            r = self.post("/api/v1/documents", {"name": "n", "prompt": b})
            self.assertEqual(r.status, 502, (b, r))
            self.assertClean(r)
            self.assertEqual(len(self.fake.requests()), 1, b)

    def test_wrong_size_png_fails(self):
        count = lambda: self.srv.request("GET", "/api/v1/images", key=self.key).json["meta"]["total"]
        before = count()
        for b in ["wrong_size_png", "bad_png", "url_only"]:
            self.fake.script(images=[b])
            r = self.post("/api/v1/images", {"name": "i", "description": "x", "resolution": "1024x1024"})
            self.assertEqual(r.status, 502, (b, r))
            self.assertClean(r)
        self.assertEqual(count(), before)  # no record left behind

    def test_async_failure_stays_failed_with_clean_error(self):
        self.fake.script(chat=[{"status": 400}])
        r = self.post("/api/v1/documents", {"name": "n", "prompt": "bad"}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        path = f"/api/v1/documents/{r.json['data']['id']}"
        d = poll_state(self.srv, self.key, path)
        self.assertEqual(d["state"], "failed")
        self.assertTrue(d["error"])
        self.assertNotIn("FAKEBODY", d["error"])


class BadSettings(unittest.TestCase):
    def test_refuses_to_start_with_unusable_base_url(self):
        srv = Server("--provider", "openai", "--openai-base-url", "ftp://x", env={"OPENAI_API_KEY": SECRET})
        with self.assertRaises(RuntimeError) as e:
            srv.start()
        self.assertNotIn(SECRET, str(e.exception))
        self.assertNotIn(SECRET, srv.read_log())
