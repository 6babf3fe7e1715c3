"""Webhooks (API.md §22), black-box, on the backend under test (SQLite or PostgreSQL).
Every delivery goes to a receiver on 127.0.0.1 (tests/webhooks/receiver.js) that verifies
it with the standardwebhooks package from the npm registry — an outside verifier of the
signatures, not inkwell's code — against each secret the test gives it.

Endpoints: create (secret once, no-store), list, show, change, delete, another user's
404, at most 20, the url (scheme, user-info, a host that does not resolve, every
non-public range refused without --webhook-allow-private, also through a name and
IPv4-mapped IPv6 and numeric forms), events (comma list, JSON array, *, unknown), the
description's length. Events: completed and failed first generations, revisions (edit,
regeneration, a failed regeneration, restore), deletions, images; name and favorite
changes send nothing; filters; a disabled endpoint gets nothing. Deliveries: the
Standard Webhooks headers and body, one webhook-id per event on every endpoint and
attempt, ping, rotation (both signatures), the retry schedule (scaled down with
--webhook-retry-scale), Retry-After, 410 (failed, endpoint disabled, the rest waits
until it is enabled), no redirect followed, the log and its retry (202, 409), one record's
deliveries in order, secrets never in the log, a user's deletion, and at least once through
kill -9 (a restart sends what was stored, the attempts in flight after their lease)."""
import json
import os
import subprocess
import threading
import time
import unittest
import urllib.request

from harness import BACKEND, Server, ServerTest, poll_state, slow, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
RECEIVER_DIR = os.path.join(HERE, "..", "webhooks")
ASYNC = {"Prefer": "respond-async"}
TYPES = ["document.completed", "document.failed", "document.revised", "document.deleted",
         "image.completed", "image.failed", "image.revised", "image.deleted"]

_npm_lock = threading.Lock()


class Receiver:
    """The node receiver: configure a path (its secrets, what it answers), read what it
    got and verified."""

    def __init__(self):
        with _npm_lock:
            if not os.path.isdir(os.path.join(RECEIVER_DIR, "node_modules", "standardwebhooks")):
                subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=RECEIVER_DIR,
                               check=True, capture_output=True)
        self.proc = subprocess.Popen(["node", "receiver.js", "0"], cwd=RECEIVER_DIR,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.port = int(self.proc.stdout.readline().strip())
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()

    def config(self, path, secrets=(), status=200, retry_after=None, delay_ms=0, location=None):
        body = json.dumps({"path": path, "secrets": list(secrets), "status": status,
                           "retry_after": retry_after, "delay_ms": delay_ms,
                           "location": location}).encode()
        urllib.request.urlopen(urllib.request.Request(self.base + "/_config", data=body,
                                                      method="POST"), timeout=10).read()

    def log(self, path=None):
        got = json.loads(urllib.request.urlopen(self.base + "/_log", timeout=10).read())
        return [e for e in got if path is None or e["path"] == path]

    def events(self, path):
        """(type, body, entry) of every delivery to path, each checked verified."""
        out = []
        for e in self.log(path):
            out.append((json.loads(e["body"])["type"], json.loads(e["body"]), e))
        return out

    def wait(self, path, cond, what, timeout=20):
        got = []

        def check():
            got[:] = self.events(path)
            return cond(got)
        wait_for(check, what, timeout=timeout)
        return got


class WebhookBase(ServerTest):
    # the switch given alone (API.md §21: a flag that is on or off is on when given)
    server_args = ["--webhook-allow-private", "--webhook-retry-scale", "0.001",
                   "--builtin-fail-pattern", "FAILME"]
    n = 0

    @classmethod
    def setUpClass(cls):
        cls.rx = Receiver()
        try:
            super().setUpClass()
        except Exception:
            cls.rx.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
            # no secret ever reaches the log
            log = cls.srv.read_log()
            for s in getattr(cls, "secrets", []):
                assert s not in log and s[6:] not in log, "a webhook secret is in the log"
        finally:
            cls.rx.stop()

    def path(self):
        WebhookBase.n += 1
        return f"/hook{WebhookBase.n}"

    def hook(self, events="*", key="alice", status=200, path=None, **fields):
        path = path or self.path()
        form = {"url": self.rx.base + path, "events": events}
        form.update(fields)
        r = self.req("POST", "/api/v1/webhooks", key=key, form=form)
        self.assertEqual(r.status, 201, r)
        h = r.json["data"]
        type(self).secrets = getattr(type(self), "secrets", []) + [h["secret"]]
        self.rx.config(path, [h["secret"]], status=status)
        return h, path

    def assertVerified(self, entries):
        for e in entries:
            self.assertEqual(e["verified"], [True] * len(e["verified"]), e)
            self.assertTrue(e["verified"], e)

    def deliveries(self, hid, key="alice"):
        r = self.req("GET", f"/api/v1/webhooks/{hid}/deliveries?per_page=100", key=key)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]


class Endpoints(WebhookBase):
    def test_create_show_list_change_delete(self):
        r = self.req("POST", "/api/v1/webhooks",
                     form={"url": self.rx.base + "/x", "events": "document.completed, image.failed",
                           "description": "my integration"},
                     headers={"Accept-Encoding": "gzip, br, zstd"})
        self.assertEqual((r.status, r.json["status"]), (201, 201), r)
        self.assertEqual(r.header("Cache-Control"), "no-store")
        self.assertIsNone(r.header("Content-Encoding"))
        h = r.json["data"]
        type(self).secrets = getattr(type(self), "secrets", []) + [h["secret"]]
        self.assertEqual(set(h), {"id", "url", "events", "description", "enabled", "created_at",
                                  "secret"})
        self.assertRegex(h["secret"], r"^whsec_[A-Za-z0-9+/]{32}$")
        self.assertEqual(h["events"], ["document.completed", "image.failed"])
        self.assertEqual((h["description"], h["enabled"]), ("my integration", True))
        self.assertTrue(r.header("Location").endswith(f"/api/v1/webhooks/{h['id']}"))
        # the secret only in that answer
        r = self.req("GET", f"/api/v1/webhooks/{h['id']}")
        self.assertEqual(r.status, 200, r)
        shown = dict(h)
        del shown["secret"]
        self.assertEqual(r.json["data"], shown)
        r = self.req("GET", "/api/v1/webhooks")
        self.assertEqual(r.status, 200, r)
        self.assertIn(shown, r.json["data"])
        self.assertTrue(all("secret" not in x for x in r.json["data"]))
        self.assertEqual(r.json["meta"]["per_page"], 10)
        # another user sees nothing of it
        for method, path in [("GET", ""), ("PATCH", ""), ("DELETE", ""), ("POST", "/rotate"),
                             ("POST", "/ping"), ("GET", "/deliveries"),
                             ("POST", "/deliveries/1/retry")]:
            r = self.req(method, f"/api/v1/webhooks/{h['id']}{path}", key="bob",
                         form={"enabled": "false"} if method == "PATCH" else None)
            self.assertError(r, 404, "Resource not found.")
        self.assertNotIn(h["id"], [x["id"] for x in self.req("GET", "/api/v1/webhooks",
                                                               key="bob").json["data"]])
        # change: only what is sent
        r = self.req("PATCH", f"/api/v1/webhooks/{h['id']}",
                     json_body={"events": ["*"], "enabled": False})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["events"], r.json["data"]["enabled"],
                          r.json["data"]["description"]), (["*"], False, "my integration"))
        r = self.req("PATCH", f"/api/v1/webhooks/{h['id']}", form={"events": "bogus.type"})
        self.assertError(r, 422)
        self.assertIn("events", r.json["message"])
        r = self.req("DELETE", f"/api/v1/webhooks/{h['id']}")
        self.assertEqual((r.status, r.json), (200, {"id": h["id"], "object": "webhook",
                                                    "deleted": True, "status": 200}))
        self.assertError(self.req("GET", f"/api/v1/webhooks/{h['id']}"), 404)
        self.assertError(self.req("DELETE", f"/api/v1/webhooks/{h['id']}"), 404)
        self.assertError(self.req("GET", "/api/v1/webhooks/0"), 404)
        self.assertEqual(self.req("PUT", "/api/v1/webhooks/1").status, 405)

    def test_events_forms(self):
        good = [("*", ["*"]), ("document.deleted", ["document.deleted"]),
                (",".join(TYPES), TYPES), (" image.revised , document.failed ",
                                           ["document.failed", "image.revised"])]
        for events, want in good:
            with self.subTest(events=events):
                r = self.req("POST", "/api/v1/webhooks", form={"url": self.rx.base + "/e",
                                                               "events": events})
                self.assertEqual(r.status, 201, r)
                self.assertEqual(r.json["data"]["events"], want)
                self.req("DELETE", f"/api/v1/webhooks/{r.json['data']['id']}")
        r = self.req("POST", "/api/v1/webhooks", json_body={"url": self.rx.base + "/e",
                                                            "events": ["image.deleted", "*"]})
        self.assertEqual((r.status, r.json["data"]["events"]), (201, ["*"]), r)
        self.req("DELETE", f"/api/v1/webhooks/{r.json['data']['id']}")
        for body in [{"url": self.rx.base + "/e"}, {"url": self.rx.base + "/e", "events": ""},
                     {"url": self.rx.base + "/e", "events": "document.created"},
                     {"url": self.rx.base + "/e", "events": "document.completed,"},
                     {"url": self.rx.base + "/e", "events": ["document.completed", 3]},
                     {"url": self.rx.base + "/e", "events": []},
                     {"url": self.rx.base + "/e", "events": {"a": 1}}]:
            with self.subTest(body=body):
                r = self.req("POST", "/api/v1/webhooks", json_body=body)
                self.assertError(r, 422)
                self.assertEqual(list(r.json["message"]), ["events"], r)

    def test_url_and_description(self):
        bad = ["", "ftp://127.0.0.1/x", "127.0.0.1/x", "http://user:pw@127.0.0.1/x",
               "http://user@127.0.0.1/x", "http:///x", "javascript:alert(1)",
               "http://127.0.0.1:99999/x", "http://exa mple.com/", "http://[fe80::1%25eth0]/"]
        for url in bad:
            with self.subTest(url=url):
                r = self.req("POST", "/api/v1/webhooks", form={"url": url, "events": "*"})
                self.assertError(r, 422)
                self.assertIn("url", r.json["message"], r)
        r = self.req("POST", "/api/v1/webhooks",
                     form={"url": "http://no-such-host.invalid/hook", "events": "*"})
        self.assertError(r, 422)
        self.assertEqual(r.json["message"]["url"], ["The url's host does not resolve."])
        r = self.req("POST", "/api/v1/webhooks", form={"events": "*"})
        self.assertEqual(r.json["message"]["url"], ["The url field is required."])
        # description: 255 code points (multibyte) pass, 256 do not
        r = self.req("POST", "/api/v1/webhooks", form={"url": self.rx.base + "/d", "events": "*",
                                                       "description": "é" * 255})
        self.assertEqual(r.status, 201, r)
        self.req("DELETE", f"/api/v1/webhooks/{r.json['data']['id']}")
        r = self.req("POST", "/api/v1/webhooks", form={"url": self.rx.base + "/d", "events": "*",
                                                       "description": "é" * 256})
        self.assertError(r, 422)
        self.assertIn("description", r.json["message"])

    def test_at_most_20_per_user(self):
        made = []
        for i in range(20):
            r = self.req("POST", "/api/v1/webhooks", key="bob",
                         form={"url": self.rx.base + f"/many{i}", "events": "*"})
            self.assertEqual(r.status, 201, r)
            made.append(r.json["data"]["id"])
        r = self.req("POST", "/api/v1/webhooks", key="bob",
                     form={"url": self.rx.base + "/many20", "events": "*"})
        self.assertError(r, 422)
        self.assertIn("url", r.json["message"])
        r = self.req("GET", "/api/v1/webhooks?per_page=10&page=2", key="bob")
        self.assertEqual((r.json["meta"]["total"], len(r.json["data"])), (20, 10))
        for i in made:
            self.assertEqual(self.req("DELETE", f"/api/v1/webhooks/{i}", key="bob").status, 200)


class PrivateAddresses(ServerTest):
    """Without --webhook-allow-private: every non-public address is refused, by number,
    by a name resolving to it, in its numeric forms and as IPv4-mapped IPv6."""

    def test_non_public_refused(self):
        hosts = ["127.0.0.1", "localhost", "2130706433", "0x7f.1", "0177.0.0.1", "127.1",
                 "0.0.0.0", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1",
                 "169.254.169.254", "192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1",
                 "224.0.0.1", "255.255.255.255", "240.0.0.1", "[::1]", "[::]",
                 "[::ffff:127.0.0.1]", "[::ffff:8.8.8.8]", "[fc00::1]", "[fd00:ec2::254]",
                 "[fe80::1]", "[ff02::1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]",
                 "[2001:db8::1]", "[2001::1]", "[100::1]"]
        for host in hosts:
            with self.subTest(host=host):
                r = self.req("POST", "/api/v1/webhooks",
                             form={"url": f"http://{host}:8080/hook", "events": "*"})
                self.assertError(r, 422)
                self.assertEqual(r.json["message"]["url"],
                                 ["The url's host is not a public address."], r)

    def test_the_switch_by_its_variable(self):
        # API.md §21: on when its variable is 1 or true; "0" keeps it off
        for value, want in (("true", 201), ("1", 201), ("0", 422)):
            with self.subTest(value=value):
                srv = Server(env={"INKWELL_WEBHOOK_ALLOW_PRIVATE": value}).start()
                try:
                    r = srv.request("POST", "/api/v1/webhooks", key=srv.key("sw"),
                                    form={"url": "http://127.0.0.1:9/hook", "events": "*"})
                    self.assertEqual(r.status, want, r)
                finally:
                    self.assertEqual(srv.stop(), 0)

    def test_public_taken(self):
        for host in ["8.8.8.8", "[2606:4700:4700::1111]", "134744072"]:  # 134744072 = 8.8.8.8
            with self.subTest(host=host):
                r = self.req("POST", "/api/v1/webhooks",
                             form={"url": f"https://{host}/hook", "events": "*"})
                self.assertEqual(r.status, 201, r)
                self.req("DELETE", f"/api/v1/webhooks/{r.json['data']['id']}")


class Deliveries(WebhookBase):
    def test_document_life(self):
        h, p = self.hook()
        d = self.make_doc(name="Life")
        got = self.rx.wait(p, lambda g: len(g) >= 1, "the completed event")
        t, body, e = got[0]
        self.assertEqual(t, "document.completed")
        self.assertEqual(set(body), {"type", "timestamp", "data"})
        self.assertEqual(body["data"], d)
        self.assertRegex(body["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        hd = e["headers"]
        self.assertEqual(hd["content-type"], "application/json")
        self.assertRegex(hd["user-agent"], r"^inkwell/\d+\.\d+\.\d+$")
        self.assertRegex(hd["webhook-id"], r"^msg_[0-9a-f]+$")
        self.assertLess(abs(int(hd["webhook-timestamp"]) - time.time()), slow(60))
        self.assertRegex(hd["webhook-signature"], r"^v1,[A-Za-z0-9+/]+=*$")
        # name and favorite send nothing; an edit of the result is a revision
        self.assertEqual(self.req("PATCH", f"/api/v1/documents/{d['id']}",
                                  form={"name": "Renamed", "favorite": "true"}).status, 200)
        r = self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"result": "My own words."})
        self.assertEqual(r.status, 200, r)
        got = self.rx.wait(p, lambda g: len(g) >= 2, "the revised event (edit)")
        self.assertEqual(got[1][0], "document.revised")
        self.assertEqual(got[1][1]["data"]["result"], "My own words.")
        self.assertEqual(got[1][1]["data"]["revision"], 2)
        # regeneration (waited), a failed regeneration, a restore
        r = self.req("POST", f"/api/v1/documents/{d['id']}/regenerate")
        self.assertEqual(r.status, 200, r)
        got = self.rx.wait(p, lambda g: len(g) >= 3, "the revised event (regeneration)")
        self.assertEqual((got[2][0], got[2][1]["data"]["revision"]), ("document.revised", 3))
        r = self.req("POST", f"/api/v1/documents/{d['id']}/regenerate",
                     form={"prompt": "FAILME please"}, headers=ASYNC)
        self.assertEqual(r.status, 202, r)
        got = self.rx.wait(p, lambda g: len(g) >= 4, "the revised event (failed regeneration)")
        self.assertEqual(got[3][0], "document.revised")
        self.assertIsNotNone(got[3][1]["data"]["error"])
        self.assertEqual(got[3][1]["data"]["revision"], 3)
        r = self.req("POST", f"/api/v1/documents/{d['id']}/revisions/1/restore")
        self.assertEqual(r.status, 200, r)
        got = self.rx.wait(p, lambda g: len(g) >= 5, "the revised event (restore)")
        self.assertEqual((got[4][0], got[4][1]["data"]["revision"]), ("document.revised", 4))
        self.assertEqual(self.req("DELETE", f"/api/v1/documents/{d['id']}").status, 200)
        got = self.rx.wait(p, lambda g: len(g) >= 6, "the deleted event")
        self.assertEqual(got[5][0], "document.deleted")
        self.assertEqual(got[5][1]["data"], {"id": d["id"], "object": "document", "deleted": True})
        self.assertVerified([g[2] for g in got])
        self.assertEqual(len({g[2]["headers"]["webhook-id"] for g in got}), 6)
        self.assertEqual(len(got), 6)
        # the log: newest first, all delivered (an outcome is stored after its answer came)
        log = wait_for(lambda: (lambda v: v if all(x["state"] == "delivered" for x in v)
                                else None)(self.deliveries(h["id"])), "the outcomes stored")
        self.assertEqual([x["type"] for x in log], [g[0] for g in reversed(got)])
        for x in log:
            self.assertEqual(set(x), {"id", "event", "type", "record_id", "state", "attempts",
                                      "last_status", "last_error", "next_attempt_at",
                                      "created_at"})
            self.assertEqual((x["state"], x["attempts"], x["last_status"], x["last_error"],
                              x["next_attempt_at"], x["record_id"]),
                             ("delivered", 1, 200, None, None, d["id"]))
        self.assertEqual([x["event"] for x in log],
                         [g[2]["headers"]["webhook-id"] for g in reversed(got)])

    def test_failed_first_generation_and_images(self):
        h, p = self.hook()
        r = self.req("POST", "/api/v1/documents", form={"name": "F", "prompt": "FAILME now"},
                     headers=ASYNC)
        self.assertEqual(r.status, 202, r)
        fid = r.json["data"]["id"]
        got = self.rx.wait(p, lambda g: len(g) >= 1, "the failed event")
        self.assertEqual(got[0][0], "document.failed")
        self.assertEqual((got[0][1]["data"]["id"], got[0][1]["data"]["state"]), (fid, "failed"))
        img = self.make_image()
        got = self.rx.wait(p, lambda g: len(g) >= 2, "the image's completed event")
        self.assertEqual(got[1][0], "image.completed")
        self.assertEqual(got[1][1]["data"]["id"], img["id"])
        self.assertEqual(self.req("DELETE", f"/api/v1/images/{img['id']}").status, 200)
        got = self.rx.wait(p, lambda g: len(g) >= 3, "the image's deleted event")
        self.assertEqual(got[2][1]["data"], {"id": img["id"], "object": "image", "deleted": True})
        self.assertVerified([g[2] for g in got])

    def test_filters_disabled_and_other_users(self):
        h1, p1 = self.hook(events="document.deleted")
        h2, p2 = self.hook(events="image.completed")
        h3, p3 = self.hook()
        self.assertEqual(self.req("PATCH", f"/api/v1/webhooks/{h3['id']}",
                                  form={"enabled": "false"}).status, 200)
        hb, pb = self.hook(key="bob")
        d = self.make_doc()
        self.req("DELETE", f"/api/v1/documents/{d['id']}")
        got = self.rx.wait(p1, lambda g: len(g) >= 1, "the deleted event")
        self.assertEqual([g[0] for g in got], ["document.deleted"])
        # a ping after: everything due before it went out already or is in the log
        for hid, path in [(h2["id"], p2), (hb["id"], pb)]:
            key = "bob" if path == pb else "alice"
            self.assertEqual(self.req("POST", f"/api/v1/webhooks/{hid}/ping", key=key).status, 202)
            got = self.rx.wait(path, lambda g: len(g) >= 1, "the ping")
            self.assertEqual([g[0] for g in got], ["ping"])
        self.assertEqual(self.deliveries(h3["id"]), [])
        self.assertEqual(self.rx.log(p3), [])
        self.assertEqual([x["type"] for x in self.deliveries(h2["id"])], ["ping"])

    def test_ping_and_rotation(self):
        h, p = self.hook()
        r = self.req("POST", f"/api/v1/webhooks/{h['id']}/ping")
        self.assertEqual((r.status, r.json["status"]), (202, 202), r)
        got = self.rx.wait(p, lambda g: len(g) >= 1, "the ping")
        self.assertEqual(got[0][1]["data"], {"webhook_id": h["id"]})
        self.assertEqual(got[0][1]["type"], "ping")
        r = self.req("POST", f"/api/v1/webhooks/{h['id']}/rotate")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Cache-Control"), "no-store")
        new = r.json["data"]["secret"]
        type(self).secrets = getattr(type(self), "secrets", []) + [new]
        self.assertNotEqual(new, h["secret"])
        self.rx.config(p, [h["secret"], new])
        self.req("POST", f"/api/v1/webhooks/{h['id']}/ping")
        got = self.rx.wait(p, lambda g: len(g) >= 2, "the ping after the rotation")
        self.assertEqual(got[1][2]["verified"], [True, True])  # signed with both
        self.assertEqual(len(got[1][2]["headers"]["webhook-signature"].split(" ")), 2)
        self.assertNotIn("secret", self.req("GET", f"/api/v1/webhooks/{h['id']}").json["data"])

    def test_retries_then_failed_then_retry(self):
        h, p = self.hook(status=500)
        self.req("POST", f"/api/v1/webhooks/{h['id']}/ping")
        # 1 + 8 retries, the schedule scaled down 1000 times (5 ms ... 43 s)
        got = self.rx.wait(p, lambda g: len(g) >= 9, "nine attempts", timeout=120)
        self.assertEqual(len({g[2]["headers"]["webhook-id"] for g in got}), 1)
        self.assertVerified([g[2] for g in got])
        log = wait_for(lambda: (lambda x: x if x[0]["state"] == "failed" else None)(
            self.deliveries(h["id"])), "the delivery failed")
        x = log[0]
        self.assertEqual((x["state"], x["attempts"], x["last_status"], x["next_attempt_at"]),
                         ("failed", 9, 500, None))
        self.assertEqual(x["last_error"], "HTTP 500")
        # the gaps grow with the schedule (lower bounds only: 12 h * 0.001 = 43 s last)
        at = [g[2]["at"] for g in got]
        self.assertGreaterEqual(at[8] - at[7], 0.8 * 43200 * 0.001 * 1000 - 50)
        self.assertEqual(len(self.rx.log(p)), 9)  # nothing more
        # retry: a failed one goes again (202), one that is not failed is a 409
        self.rx.config(p, [h["secret"]], status=204)
        r = self.req("POST", f"/api/v1/webhooks/{h['id']}/deliveries/{x['id']}/retry")
        self.assertEqual((r.status, r.json["status"]), (202, 202), r)
        got = self.rx.wait(p, lambda g: len(g) >= 10, "the retried delivery")
        self.assertEqual(got[9][2]["headers"]["webhook-id"], x["event"])
        wait_for(lambda: self.deliveries(h["id"])[0]["state"] == "delivered", "delivered")
        r = self.req("POST", f"/api/v1/webhooks/{h['id']}/deliveries/{x['id']}/retry")
        self.assertError(r, 409)
        self.assertError(self.req("POST", f"/api/v1/webhooks/{h['id']}/deliveries/999999/retry"),
                         404)

    def test_retry_after_is_honoured(self):
        h, p = self.hook()
        self.rx.config(p, [h["secret"]], status=503, retry_after=2)
        self.req("POST", f"/api/v1/webhooks/{h['id']}/ping")
        got = self.rx.wait(p, lambda g: len(g) >= 1, "the first attempt")
        self.rx.config(p, [h["secret"]], status=200)
        got = self.rx.wait(p, lambda g: len(g) >= 2, "the second attempt")
        self.assertGreaterEqual(got[1][2]["at"] - got[0][2]["at"], 1900)

    def test_gone_disables_and_the_rest_waits(self):
        h, p = self.hook(status=410)
        d = self.make_doc()
        got = self.rx.wait(p, lambda g: len(g) >= 1, "the first event")
        wait_for(lambda: not self.req("GET", f"/api/v1/webhooks/{h['id']}").json["data"]["enabled"],
                 "the endpoint disabled")
        x = self.deliveries(h["id"])[0]
        self.assertEqual((x["state"], x["attempts"], x["last_status"]), ("failed", 1, 410))
        # a delivery made before the endpoint was disabled waits: make one while enabled
        # is not possible now, so enable, hold it with a slow answer...
        self.rx.config(p, [h["secret"]], status=200)
        self.assertEqual(self.req("PATCH", f"/api/v1/webhooks/{h['id']}",
                                  form={"enabled": "true"}).status, 200)
        self.req("DELETE", f"/api/v1/documents/{d['id']}")
        got = self.rx.wait(p, lambda g: len(g) >= 2, "the deleted event once enabled")
        self.assertEqual(got[1][0], "document.deleted")

    def test_no_redirect_followed(self):
        h, p = self.hook()
        target = self.path()
        self.rx.config(p, [h["secret"]], status=302, location=self.rx.base + target)
        self.req("POST", f"/api/v1/webhooks/{h['id']}/ping")
        self.rx.wait(p, lambda g: len(g) >= 1, "the attempt")
        x = wait_for(lambda: (lambda v: v[0] if v[0]["attempts"] >= 1 else None)(
            self.deliveries(h["id"])), "the attempt stored")
        self.assertEqual((x["state"], x["last_status"]), ("pending", 302))
        self.assertEqual(self.rx.log(target), [])
        # metrics: a pending delivery and its age, the attempts by outcome
        text = self.srv.request("GET", "/metrics").body.decode()
        self.assertRegex(text, r"(?m)^inkwell_webhook_deliveries_pending [1-9]\d*$")
        self.assertRegex(text, r"(?m)^inkwell_webhook_oldest_pending_seconds \d+\.\d+$")
        self.assertRegex(text, r'(?m)^inkwell_webhook_attempts_total\{outcome="retrying"\} [1-9]')
        self.assertRegex(text, r'(?m)^inkwell_webhook_attempts_total\{outcome="delivered"\} \d+$')
        # with a pending delivery in it, the exposition is one promtool accepts, unlinted
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
        self.assertEqual((p.returncode, p.stdout.strip() + p.stderr.strip()), (0, ""))
        self.req("DELETE", f"/api/v1/webhooks/{h['id']}")

    def test_data_as_it_was_when_the_event_happened(self):
        # the first delivery held by a slow receiver; behind it (one record, one endpoint)
        # the later events wait while the record changes on: each still shows the record
        # as GET showed it at its event (a copy taken in the change's transaction), the
        # revision before a rename its old name, the one before the delete no deletion
        h, p = self.hook()
        self.rx.config(p, [h["secret"]], delay_ms=int(slow(1500)))
        d = self.make_doc()
        self.rx.wait(p, lambda g: True, "nothing yet")  # (the receiver answers)
        self.assertEqual(self.req("PATCH", f"/api/v1/documents/{d['id']}",
                                  form={"result": "second text"}).status, 200)
        seen = self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]
        self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"name": "Renamed"})
        self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"result": "third text"})
        self.req("DELETE", f"/api/v1/documents/{d['id']}")
        self.rx.config(p, [h["secret"]])
        got = self.rx.wait(p, lambda g: len(g) >= 4, "the four events", timeout=60)
        self.assertEqual([g[0] for g in got], ["document.completed", "document.revised",
                                               "document.revised", "document.deleted"])
        self.assertVerified([g[2] for g in got])
        self.assertEqual(got[0][1]["data"]["result"], d["result"])
        self.assertEqual(got[1][1]["data"], seen)
        self.assertEqual((got[2][1]["data"]["result"], got[2][1]["data"]["name"]),
                         ("third text", "Renamed"))
        self.assertTrue(got[3][1]["data"]["deleted"])

    def test_one_record_in_order_and_one_id_per_event(self):
        h1, p1 = self.hook()
        h2, p2 = self.hook()
        d = self.make_doc()
        for i in range(5):
            self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"result": f"text {i}"})
        self.req("DELETE", f"/api/v1/documents/{d['id']}")
        for p in (p1, p2):
            got = self.rx.wait(p, lambda g: len(g) >= 7, "seven events")
            self.assertEqual([g[0] for g in got], ["document.completed"] + ["document.revised"] * 5
                             + ["document.deleted"])
            # (the body is rendered at the event's first attempt: a record deleted by
            # then reads as deleted — docs/design.md "Webhooks", a known limit)
        ids1 = [e["headers"]["webhook-id"] for e in self.rx.log(p1)]
        ids2 = [e["headers"]["webhook-id"] for e in self.rx.log(p2)]
        self.assertEqual(ids1, ids2)  # one id per event, the same on every endpoint

    def test_slow_receiver_delays_only_its_endpoint(self):
        hs, ps = self.hook()
        self.rx.config(ps, [hs["secret"]], delay_ms=int(slow(3) * 1000))
        hf, pf = self.hook()
        for _ in range(3):
            self.req("POST", f"/api/v1/webhooks/{hs['id']}/ping")
        self.req("POST", f"/api/v1/webhooks/{hf['id']}/ping")
        self.rx.wait(pf, lambda g: len(g) >= 1, "the fast endpoint's ping")
        self.rx.wait(ps, lambda g: len(g) >= 3, "the slow endpoint's pings", timeout=60)


class Crash(unittest.TestCase):
    """At least once through kill -9: deliveries stored with their changes go out after a
    restart (those in flight when it died once their lease runs out)."""

    def test_kill_9_mid_delivery(self):
        rx = Receiver()
        srv = Server("--webhook-allow-private", "1", "--webhook-retry-scale", "0.001").start()
        try:
            key = srv.key("crash")
            r = srv.request("POST", "/api/v1/webhooks", key=key,
                            form={"url": rx.base + "/c", "events": "*"})
            self.assertEqual(r.status, 201, r)
            secret = r.json["data"]["secret"]
            rx.config("/c", [secret], delay_ms=1500)
            made = []
            for i in range(5):
                r = srv.request("POST", "/api/v1/documents", key=key,
                                form={"name": f"c{i}", "prompt": "tea"})
                self.assertEqual(r.status, 201, r)
                made.append(r.json["data"]["id"])
            wait_for(lambda: rx.log("/c"), "a first delivery")
            srv.kill()
            rx.config("/c", [secret])
            srv.start()
            got = wait_for(lambda: (lambda g: g if {json.loads(e["body"])["data"]["id"]
                                                    for e in g} >= set(made) else None)(
                rx.log("/c")), "every event at least once after the restart", timeout=90)
            self.assertTrue(all(e["verified"] == [True] for e in got))
        finally:
            srv.stop()
            rx.stop()


class UserDeletion(ServerTest):
    """A user's deletion removes its endpoints and deliveries with it (and so sends
    nothing: docs/design.md "Webhooks")."""
    server_args = ["--webhook-allow-private", "1"]

    def test_deleted_with_the_user(self):
        admin = self.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        self.srv.keys.append(admin)
        r = self.srv.request("POST", "/api/v1/admin/users", key=admin, form={"name": "carol"})
        self.assertEqual(r.status, 201, r)
        uid = r.json["data"]["id"]
        r = self.srv.request("POST", f"/api/v1/admin/users/{uid}/keys", key=admin, form={})
        ck = r.json["data"]["key"]
        self.srv.keys.append(ck)
        r = self.srv.request("POST", "/api/v1/webhooks", key=ck,
                             form={"url": "http://127.0.0.1:9/x", "events": "*"})
        self.assertEqual(r.status, 201, r)
        hid = r.json["data"]["id"]
        self.srv.request("POST", "/api/v1/documents", key=ck, form={"name": "a", "prompt": "b"})
        self.assertEqual(self.srv.request("DELETE", f"/api/v1/admin/users/{uid}", key=admin).status,
                         200)
        r = self.srv.request("GET", f"/api/v1/webhooks/{hid}", key=self.alice)
        self.assertEqual(r.status, 404)


if __name__ == "__main__":
    unittest.main()
