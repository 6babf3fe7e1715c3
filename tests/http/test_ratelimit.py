"""The rate limit is GCRA (api/ratelimit.c): a burst of the limit, then one request per
60 s / limit — never a second burst when a clock minute turns over (fixed windows let a
client make twice the limit across a boundary). Retry-After is the exact wait, rounded
up; X-RateLimit-Remaining is what may be sent now. Both backends (PostgreSQL keeps the
state in the database)."""
import time

from harness import ServerTest


class Gcra(ServerTest):
    server_args = ["--rate-limit", "60"]  # one request a second after the burst

    def hit(self, key):
        return self.req("GET", "/api/v1/templates", key=key)

    def test_burst_then_paced_and_precise_retry_after(self):
        k = self.srv.key("gcra-a")
        t0 = time.time()
        rem = [int(self.hit(k).header("X-RateLimit-Remaining")) for _ in range(60)]
        burst_s = time.time() - t0
        # each answer counts itself; time passing during the burst may give back a few
        self.assertEqual(rem[0], 59)
        self.assertTrue(all(a >= b - 1 for a, b in zip(rem, rem[1:])), rem)
        refused = [r for r in (self.hit(k) for _ in range(3 + int(burst_s))) if r.status == 429]
        self.assertTrue(refused, "no refusal after a burst of the whole limit")
        r = refused[-1]
        self.assertEqual(r.json, {"message": "Too Many Attempts.", "status": 429})
        self.assertEqual(r.header("Retry-After"), "1")  # at most one interval away
        self.assertEqual(r.header("X-RateLimit-Remaining"), "0")
        time.sleep(1.05)
        self.assertEqual(self.hit(k).status, 200)  # Retry-After was enough
        # other keys are apart
        self.assertEqual(self.hit(self.srv.key("gcra-b")).status, 200)

    def test_no_second_burst(self):
        k = self.srv.key("gcra-c")
        t_first = time.monotonic()
        for _ in range(60):
            self.hit(k)
        # for the next 3 s, hammer: whatever the clock minute does, at most one request a
        # second since the burst began (plus one for the edges) gets through — counted
        # from the first request, so a slow burst (which earns its time back) is allowed for
        ok, hits = 0, 0
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3.0 or hits < 10:
            ok += self.hit(k).status == 200
            hits += 1
            time.sleep(0.02)
        self.assertLessEqual(ok, int(time.monotonic() - t_first) + 1)
        self.assertGreaterEqual(ok, 2)
