"""Revisions and regeneration (API.md §16), black-box: every line of the section on the
backend under test (SQLite or PostgreSQL). Regenerate answered like a create (wait 200,
async 202, wait limit 202, stream 200, Idempotency-Key with the route in its
fingerprint), a failed regeneration that keeps the previous text and picture (the
builtin generator's test failure pattern, and the fake OpenAI server), restore, the
revision cap removing old picture files, delete leaving no file, 409 while generating,
404/405/422/415, lists and search seeing only the latest revision, and an existing
SQLite database converted in place (migration 10)."""
import hashlib
import os
import sqlite3
import subprocess
import unittest
from urllib.parse import quote

from harness import BACKEND, BIN, Server, ServerTest, poll_state, stored_text, wait_for
from test_images import fetch
from test_ops import parse_metrics, value
from test_openai import Fake, SECRET
from test_stream import Stream, check_deltas

BUSY = "The record is being generated."


def media_files(srv):
    d = os.path.join(srv.data_dir, "media")
    return set(f for f in os.listdir(d) if f.endswith(".png")) if os.path.isdir(d) else set()


def url_file(url):
    return url.rsplit("/", 1)[1]


class Revisions(ServerTest):
    server_args = ["--builtin-fail-pattern", "FAILME", "--max-revisions", "3"]

    def regen(self, kind, rid, form=None, key="alice", headers=None, **kw):
        return self.req("POST", f"/api/v1/{kind}/{rid}/regenerate", key=key, form=form,
                        headers=headers, **kw)

    def revisions(self, kind, rid, query="", key="alice"):
        r = self.req("GET", f"/api/v1/{kind}/{rid}/revisions{query}", key=key)
        self.assertEqual(r.status, 200, r)
        return r.json

    # ---- documents ----

    def test_document_revisions_from_generation_and_regenerations(self):
        d = self.make_doc(prompt="zebrafish care")
        self.assertEqual(d["revision"], 1)
        self.assertEqual((d["tone"], d["language"], d["length"]), ("neutral", "en", "medium"))
        page = self.revisions("documents", d["id"])
        self.assertEqual(page["meta"]["total"], 1)
        (r1,) = page["data"]
        self.assertEqual(r1["number"], 1)
        self.assertEqual(r1["source"], "generation")
        self.assertIsNone(r1["action"])
        for f in ("prompt", "creativity", "template_id", "tone", "language", "length",
                  "result", "words", "usage", "truncated"):
            self.assertEqual(r1[f], d[f], f)
        # an empty POST needs no Content-Type: the record's own inputs again
        r = self.regen("documents", d["id"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["status"], 200)
        self.assertTrue(r.header("Location").endswith(f"/api/v1/documents/{d['id']}"))
        d2 = r.json["data"]
        self.assertEqual((d2["revision"], d2["state"], d2["prompt"]), (2, "completed", "zebrafish care"))
        self.assertIsNone(d2["error"])
        # the body's fields replace the record's (the store's rules)
        r = self.regen("documents", d["id"], form={"prompt": "quokka habits", "creativity": "1",
                                                   "template_id": "3"})
        self.assertEqual(r.status, 200, r)
        d3 = r.json["data"]
        self.assertEqual((d3["revision"], d3["prompt"], d3["creativity"], d3["template_id"]),
                         (3, "quokka habits", 1, 3))
        self.assertIn("quokka", d3["result"].lower())
        page = self.revisions("documents", d["id"])
        self.assertEqual([x["number"] for x in page["data"]], [3, 2, 1])
        self.assertEqual([x["source"] for x in page["data"]],
                         ["regeneration", "regeneration", "generation"])
        self.assertEqual(page["data"][0]["result"], d3["result"])
        self.assertEqual(page["data"][2]["result"], d["result"])
        one = self.req("GET", f"/api/v1/documents/{d['id']}/revisions/2")
        self.assertEqual(one.status, 200)
        self.assertEqual(one.json["status"], 200)
        self.assertEqual(one.json["data"], page["data"][1])
        # the record shows the latest; lists and search see only it
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"], d3)
        found = self.req("GET", "/api/v1/documents?search_by=result&search=quokka").json
        self.assertIn(d["id"], [x["id"] for x in found["data"]])
        gone = self.req("GET", "/api/v1/documents?search_by=result&search=zebrafish").json
        self.assertNotIn(d["id"], [x["id"] for x in gone["data"]])

    def test_edit_makes_a_revision_name_and_favorite_do_not(self):
        d = self.make_doc()
        r = self.req("PATCH", f"/api/v1/documents/{d['id']}", form={"name": "Renamed", "favorite": "1"})
        self.assertEqual(r.json["data"]["revision"], 1)
        r = self.req("PUT", f"/api/v1/documents/{d['id']}", form={"result": "My own words here."})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["revision"], r.json["data"]["words"]), (2, 4))
        self.assertIsNone(r.json["data"]["usage"])
        top = self.revisions("documents", d["id"])["data"][0]
        self.assertEqual((top["number"], top["source"], top["result"]), (2, "edit", "My own words here."))
        self.assertEqual(self.revisions("documents", d["id"])["meta"]["total"], 2)

    def test_restore_makes_a_new_revision_with_the_old_content(self):
        d = self.make_doc(prompt="first idea")
        d2 = self.regen("documents", d["id"], form={"prompt": "second idea"}).json["data"]
        self.assertNotEqual(d2["result"], d["result"])
        r = self.req("POST", f"/api/v1/documents/{d['id']}/revisions/1/restore")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["status"], 200)
        d3 = r.json["data"]
        self.assertEqual((d3["revision"], d3["result"], d3["prompt"], d3["state"]),
                         (3, d["result"], "first idea", "completed"))
        top = self.revisions("documents", d["id"])["data"][0]
        self.assertEqual((top["number"], top["source"], top["result"]), (3, "restore", d["result"]))
        # the export gives the latest revision
        e = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=txt")
        self.assertEqual(e.body.decode(), d["result"])

    def test_search_follows_edit_regenerate_and_restore(self):
        """Every way a text changes keeps search exact (§15 folding, §16 revisions):
        on PostgreSQL each writer also writes the folded column."""
        d = self.make_doc(prompt="lighthouse keepers")

        def found(word):
            r = self.req("GET", f"/api/v1/documents?search_by=result&search={quote(word)}")
            self.assertEqual(r.status, 200, r)
            return d["id"] in [x["id"] for x in r.json["data"]]

        self.req("PUT", f"/api/v1/documents/{d['id']}", form={"result": "Учёный КОТ и ΩMEGA"})
        self.assertTrue(found("учёный кот"))
        self.assertTrue(found("ωmega"))
        self.regen("documents", d["id"], form={"prompt": "zanzibar spices"})
        self.assertFalse(found("учёный кот"))
        self.assertTrue(found("zanzibar"))
        r = self.req("POST", f"/api/v1/documents/{d['id']}/revisions/2/restore")
        self.assertEqual(r.status, 200, r)
        self.assertTrue(found("учёный кот"))
        self.assertFalse(found("zanzibar"))

    def test_failed_regeneration_keeps_the_previous_text(self):
        d = self.make_doc(prompt="good prompt")
        r = self.regen("documents", d["id"], form={"prompt": "FAILME please"})
        self.assertError(r, 502)
        now = self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]
        self.assertEqual((now["state"], now["revision"], now["result"], now["prompt"]),
                         ("completed", 1, d["result"], "good prompt"))
        self.assertEqual(now["error"], r.json["message"])
        self.assertEqual(self.revisions("documents", d["id"])["meta"]["total"], 1)
        e = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=txt")
        self.assertEqual((e.status, e.body.decode()), (200, d["result"]))
        # the next success clears error
        ok = self.regen("documents", d["id"]).json["data"]
        self.assertEqual((ok["revision"], ok["error"], ok["state"]), (2, None, "completed"))

    def test_a_failed_record_is_retried_by_regenerate(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "f", "prompt": "FAILME now"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        rid = r.json["data"]["id"]
        failed = poll_state(self.srv, self.alice, f"/api/v1/documents/{rid}")
        self.assertEqual((failed["state"], failed["revision"]), ("failed", 0))
        self.assertEqual(self.revisions("documents", rid)["data"], [])
        again = self.regen("documents", rid, form={"prompt": "FAILME still"})
        self.assertError(again, 502)
        still = self.req("GET", f"/api/v1/documents/{rid}").json["data"]
        self.assertEqual((still["state"], still["revision"]), ("failed", 0))
        ok = self.regen("documents", rid, form={"prompt": "a fine prompt"})
        self.assertEqual(ok.status, 200, ok)
        self.assertEqual((ok.json["data"]["state"], ok.json["data"]["revision"]), ("completed", 1))
        self.assertIsNone(ok.json["data"]["error"])
        self.assertEqual(self.revisions("documents", rid)["data"][0]["source"], "regeneration")

    def test_async_regenerate_answers_202_and_polls_to_the_next_revision(self):
        d = self.make_doc()
        r = self.regen("documents", d["id"], headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        self.assertTrue(r.header("Location").endswith(f"/api/v1/documents/{d['id']}"))
        self.assertIn(r.json["data"]["state"], ("queued", "generating", "completed"))
        self.assertEqual(r.json["data"]["result"], d["result"])  # the latest finished revision
        # the record is queued or generating until its new revision is complete
        done = poll_state(self.srv, self.alice, f"/api/v1/documents/{d['id']}", until=("completed",))
        self.assertEqual(done["revision"], 2)

    def test_streamed_regenerate(self):
        d = self.make_doc()
        s = Stream(self.srv.port, "POST", f"/api/v1/documents/{d['id']}/regenerate", self.alice)
        self.assertEqual(s.status, 200)
        self.assertEqual(s.header("Content-Type"), "text/event-stream")
        evs = s.events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[0][2]["id"], d["id"])
        self.assertEqual(evs[-1][0], "done")
        self.assertEqual(evs[-1][2]["revision"], 2)
        self.assertEqual(check_deltas(self, evs), evs[-1][2]["result"])

    def test_streamed_regenerate_that_fails_keeps_the_record(self):
        d = self.make_doc()
        s = Stream(self.srv.port, "POST", f"/api/v1/documents/{d['id']}/regenerate", self.alice,
                   form={"prompt": "FAILME streamed"})
        self.assertEqual(s.status, 200)
        evs = s.events()
        self.assertEqual([e[0] for e in evs if e[0] != "delta"], ["record", "error"])
        self.assertEqual(evs[-1][2]["status"], 502)
        now = self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]
        self.assertEqual((now["state"], now["result"], now["revision"]), ("completed", d["result"], 1))

    def test_idempotent_regenerate(self):
        d = self.make_doc()
        other = self.make_doc()
        h = {"Idempotency-Key": "regen-1"}
        r1 = self.regen("documents", d["id"], headers=h)
        self.assertEqual(r1.status, 200, r1)
        r2 = self.regen("documents", d["id"], headers=h)
        self.assertEqual(r2.status, 200, r2)
        self.assertEqual(r2.header("Idempotent-Replayed"), "true")
        self.assertEqual(r2.json, r1.json)
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]["revision"], 2)
        # the route is part of the fingerprint: the same (empty) body elsewhere is another request
        self.assertError(self.regen("documents", other["id"], headers=h), 422)
        self.assertError(self.req("POST", "/api/v1/documents", headers=h), 422)
        # an async regenerate keeps its 202
        h2 = {"Idempotency-Key": "regen-2", "Prefer": "respond-async"}
        a1 = self.regen("documents", other["id"], headers=h2)
        self.assertEqual(a1.status, 202, a1)
        a2 = self.regen("documents", other["id"], headers=h2)
        self.assertEqual((a2.status, a2.header("Idempotent-Replayed")), (202, "true"))
        self.assertError(self.regen("documents", d["id"], headers={"Idempotency-Key": ""}), 422)

    def test_errors_of_the_new_routes(self):
        d = self.make_doc()
        rid = d["id"]
        nf = "Resource not found."
        for path in (f"/api/v1/documents/{rid}/revisions/2", f"/api/v1/documents/{rid}/revisions/0",
                     f"/api/v1/documents/{rid}/revisions/x", f"/api/v1/documents/{rid}/revisions/1/x",
                     "/api/v1/documents/999999/revisions", "/api/v1/documents/abc/revisions",
                     f"/api/v1/images/{rid}/revisions/1"):
            self.assertError(self.req("GET", path), 404, nf)
        # another user's record is a missing one
        self.assertError(self.req("GET", f"/api/v1/documents/{rid}/revisions", key="bob"), 404, nf)
        self.assertError(self.regen("documents", rid, key="bob"), 404, nf)
        self.assertError(self.req("POST", f"/api/v1/documents/{rid}/revisions/1/restore", key="bob"), 404, nf)
        self.assertError(self.req("POST", f"/api/v1/documents/{rid}/revisions/7/restore"), 404, nf)
        self.assertError(self.regen("documents", 999999), 404, nf)
        for method, path, allow in (("GET", f"/api/v1/documents/{rid}/regenerate", "POST"),
                                    ("POST", f"/api/v1/documents/{rid}/revisions", "GET, HEAD"),
                                    ("DELETE", f"/api/v1/documents/{rid}/revisions/1", "GET, HEAD"),
                                    ("GET", f"/api/v1/documents/{rid}/revisions/1/restore", "POST")):
            r = self.req(method, path)
            self.assertError(r, 405, "Method not allowed.")
            self.assertEqual(r.header("Allow"), allow)
        # the store's rules
        for form, field in (({"creativity": "0.3"}, "creativity"), ({"template_id": "53"}, "template_id")):
            r = self.regen("documents", rid, form=form)
            self.assertError(r, 422)
            self.assertIn(field, r.json["message"])
        img = self.make_image()
        r = self.regen("images", img["id"], form={"resolution": "800x600"})
        self.assertError(r, 422)
        self.assertIn("resolution", r.json["message"])
        self.assertError(self.regen("images", img["id"], form={"style": "loud"}), 422)
        r = self.req("POST", f"/api/v1/documents/{rid}/regenerate", body="x=1",
                     headers={"Content-Type": "text/plain"})
        self.assertError(r, 415)
        # nothing of that made a revision
        self.assertEqual(self.revisions("documents", rid)["meta"]["total"], 1)
        # a JSON body works too
        r = self.req("POST", f"/api/v1/documents/{rid}/regenerate", json_body={"prompt": "json prompt"})
        self.assertEqual((r.status, r.json["data"]["prompt"]), (200, "json prompt"))

    def test_revision_pages(self):
        d = self.make_doc(prompt="pages")
        for i in range(4):  # 5 revisions, the cap (3) keeps the newest three
            self.assertEqual(self.regen("documents", d["id"]).status, 200)
        page = self.revisions("documents", d["id"])
        self.assertEqual([x["number"] for x in page["data"]], [5, 4, 3])
        self.assertEqual(page["meta"]["total"], 3)
        self.assertError(self.req("GET", f"/api/v1/documents/{d['id']}/revisions/2"), 404)
        # per_page and page only (10, 25, 50, 100; a value outside falls back)
        p2 = self.revisions("documents", d["id"], "?per_page=10&page=2")
        self.assertEqual(p2["data"], [])
        self.assertEqual((p2["meta"]["current_page"], p2["meta"]["from"], p2["meta"]["last_page"]),
                         (2, None, 1))
        self.assertTrue(p2["links"]["prev"].endswith(f"/api/v1/documents/{d['id']}/revisions?per_page=10&page=1"))
        odd = self.revisions("documents", d["id"], "?per_page=7")
        self.assertEqual(odd["meta"]["per_page"], 10)

    def test_writing_options_on_store_and_regenerate(self):
        d = self.make_doc(tone="witty", length="short", language="en-GB")
        self.assertEqual((d["tone"], d["language"], d["length"]), ("witty", "en-GB", "short"))
        d2 = self.make_doc(tone="", length="", language="")  # empty: not sent
        self.assertEqual((d2["tone"], d2["language"], d2["length"]), ("neutral", "en", "medium"))
        for form, field in (({"tone": "angry"}, "tone"), ({"length": "huge"}, "length"),
                            ({"language": "x"}, "language"), ({"language": "en_US"}, "language"),
                            ({"language": "de"}, "language")):
            r = self.req("POST", "/api/v1/documents", form=dict({"name": "n", "prompt": "p"}, **form))
            self.assertError(r, 422)
            self.assertIn(field, r.json["message"])
        r = self.req("POST", "/api/v1/documents", form={"name": "n", "prompt": "p", "language": "pt-BR"})
        self.assertEqual(r.json["message"]["language"], ["The builtin generator writes English only."])
        r = self.regen("documents", d["id"], form={"tone": "formal", "length": "long"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["tone"], r.json["data"]["length"], r.json["data"]["language"]),
                         ("formal", "long", "en-GB"))
        revs = self.revisions("documents", d["id"])["data"]
        self.assertEqual([(x["tone"], x["length"]) for x in revs], [("formal", "long"), ("witty", "short")])
        self.assertError(self.regen("documents", d["id"], form={"tone": "grumpy"}), 422)

    # ---- images ----

    def test_image_revisions_keep_their_own_pictures(self):
        img = self.make_image(description="a blue lake")
        self.assertEqual(img["revision"], 1)
        r = self.regen("images", img["id"], form={"style": "vivid", "resolution": "1792x1024"})
        self.assertEqual(r.status, 200, r)
        i2 = r.json["data"]
        self.assertEqual((i2["revision"], i2["style"], i2["resolution"]), (2, "vivid", "1792x1024"))
        self.assertNotEqual(i2["url"], img["url"])
        revs = self.revisions("images", img["id"])["data"]
        self.assertEqual([(x["number"], x["url"]) for x in revs], [(2, i2["url"]), (1, img["url"])])
        self.assertEqual(revs[1]["resolution"], "1024x1024")
        # the older picture stays reachable at its own URL
        for url in (img["url"], i2["url"]):
            resp, body = fetch(url)
            self.assertEqual(resp.status, 200)
            self.assertTrue(body.startswith(b"\x89PNG"))
        # restore: a new revision with its own copy of the picture
        r = self.req("POST", f"/api/v1/images/{img['id']}/revisions/1/restore")
        self.assertEqual(r.status, 200, r)
        i3 = r.json["data"]
        self.assertEqual((i3["revision"], i3["resolution"], i3["style"]), (3, "1024x1024", None))
        self.assertNotIn(i3["url"], (img["url"], i2["url"]))
        self.assertEqual(fetch(i3["url"])[1], fetch(img["url"])[1])

    def test_failed_image_regeneration_keeps_the_picture(self):
        img = self.make_image(description="calm sea")
        r = self.regen("images", img["id"], form={"description": "FAILME storm"})
        self.assertError(r, 502)
        now = self.req("GET", f"/api/v1/images/{img['id']}").json["data"]
        self.assertEqual((now["state"], now["url"], now["description"], now["revision"]),
                         ("completed", img["url"], "calm sea", 1))
        self.assertEqual(now["error"], r.json["message"])
        self.assertEqual(fetch(img["url"])[0].status, 200)

    def test_the_cap_removes_old_pictures(self):
        img = self.make_image()
        urls = [img["url"]]
        for _ in range(4):
            urls.append(self.regen("images", img["id"]).json["data"]["url"])
        revs = self.revisions("images", img["id"])["data"]
        self.assertEqual([x["number"] for x in revs], [5, 4, 3])
        self.assertEqual([x["url"] for x in revs], urls[:1:-1])
        files = media_files(self.srv)
        for url in urls[:2]:  # revisions 1 and 2 are gone with their files
            self.assertNotIn(url_file(url), files)
            self.assertEqual(fetch(url)[0].status, 404)
        for url in urls[2:]:
            self.assertIn(url_file(url), files)
            self.assertEqual(fetch(url)[0].status, 200)

    def test_delete_leaves_no_picture_behind(self):
        img = self.make_image()
        urls = [img["url"]]
        urls.append(self.regen("images", img["id"]).json["data"]["url"])
        urls.append(self.req("POST", f"/api/v1/images/{img['id']}/revisions/1/restore").json["data"]["url"])
        self.assertEqual(len(set(urls)), 3)
        self.assertTrue(set(map(url_file, urls)) <= media_files(self.srv))
        r = self.req("DELETE", f"/api/v1/images/{img['id']}")
        self.assertEqual(r.status, 200)
        self.assertFalse(set(map(url_file, urls)) & media_files(self.srv))
        for url in urls:
            self.assertEqual(fetch(url)[0].status, 404)
        self.assertError(self.req("GET", f"/api/v1/images/{img['id']}/revisions"), 404)


class WhileGenerating(ServerTest):
    """A slow generator: regenerate while a generation runs, the record during a
    regeneration, and the wait limit."""
    server_args = ["--builtin-delay-ms", "1500", "--wait-limit", "0.3"]

    def test_regenerate_while_generating_is_409(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "s", "prompt": "slow"},
                     headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        for kind_rid in ((f"documents", rid),):
            r = self.req("POST", f"/api/v1/{kind_rid[0]}/{kind_rid[1]}/regenerate")
            self.assertError(r, 409, BUSY)
        img = self.req("POST", "/api/v1/images", form={"name": "i", "description": "d",
                                                     "resolution": "1024x1024"},
                       headers={"Prefer": "respond-async"}).json["data"]
        self.assertError(self.req("POST", f"/api/v1/images/{img['id']}/regenerate"), 409, BUSY)
        poll_state(self.srv, self.alice, f"/api/v1/images/{img['id']}")
        d = poll_state(self.srv, self.alice, f"/api/v1/documents/{rid}")
        # at the wait limit a regenerate answers 202; meanwhile the record shows its latest
        # revision, a second regenerate is a 409, and the export gives that revision
        r = self.req("POST", f"/api/v1/documents/{rid}/regenerate", form={"prompt": "other"})
        self.assertEqual(r.status, 202, r)
        during = r.json["data"]
        self.assertIn(during["state"], ("queued", "generating"))
        self.assertEqual((during["result"], during["prompt"], during["revision"]),
                         (d["result"], "slow", 1))
        self.assertError(self.req("POST", f"/api/v1/documents/{rid}/regenerate"), 409, BUSY)
        e = self.req("GET", f"/api/v1/documents/{rid}/export?format=txt")
        self.assertEqual((e.status, e.body.decode()), (200, d["result"]))
        listed = self.req("GET", "/api/v1/documents").json["data"]
        self.assertEqual([x["result"] for x in listed if x["id"] == rid], [d["result"]])
        done = poll_state(self.srv, self.alice, f"/api/v1/documents/{rid}", until=("completed",))
        self.assertEqual((done["revision"], done["prompt"]), (2, "other"))

    def test_show_stream_during_a_regeneration_gets_the_new_text(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "s", "prompt": "streamed"},
                     headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        first = poll_state(self.srv, self.alice, f"/api/v1/documents/{rid}")
        r = self.req("POST", f"/api/v1/documents/{rid}/regenerate", form={"prompt": "new words"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        s = Stream(self.srv.port, "GET", f"/api/v1/documents/{rid}", self.alice)
        evs = s.events()
        self.assertEqual(evs[-1][0], "done")
        final = evs[-1][2]
        self.assertEqual(final["revision"], 2)
        self.assertNotEqual(final["result"], first["result"])
        self.assertEqual(check_deltas(self, evs), final["result"])


class FailingProvider(unittest.TestCase):
    """A provider that fails (the fake OpenAI server): a regeneration keeps the previous
    text and picture."""

    @classmethod
    def setUpClass(cls):
        cls.fake = Fake()
        cls.srv = Server("--provider", "openai", "--openai-base-url", cls.fake.base + "/v1",
                         "--provider-timeout", "2", env={"OPENAI_API_KEY": SECRET}).start()
        cls.key = cls.srv.key("ai")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.fake.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}")

    def post(self, path, form=None):
        return self.srv.request("POST", path, key=self.key, form=form)

    def test_failed_text_and_picture_regenerations_lose_nothing(self):
        self.fake.script()
        d = self.post("/api/v1/documents", {"name": "d", "prompt": "hello there"})
        self.assertEqual(d.status, 201, d)
        d = d.json["data"]
        img = self.post("/api/v1/images", {"name": "i", "description": "hills", "resolution": "1024x1024"})
        self.assertEqual(img.status, 201, img)
        img = img.json["data"]
        self.fake.script(chat=[{"status": 400}], images=[{"status": 400}])
        r = self.post(f"/api/v1/documents/{d['id']}/regenerate", {"prompt": "something else"})
        self.assertEqual(r.status, 502, r)
        self.assertNotIn("FAKEBODY", r.body.decode())
        now = self.srv.request("GET", f"/api/v1/documents/{d['id']}", key=self.key).json["data"]
        self.assertEqual((now["state"], now["result"], now["prompt"], now["revision"]),
                         ("completed", d["result"], "hello there", 1))
        self.assertIsNotNone(now["error"])
        r = self.post(f"/api/v1/images/{img['id']}/regenerate")
        self.assertEqual(r.status, 502, r)
        now = self.srv.request("GET", f"/api/v1/images/{img['id']}", key=self.key).json["data"]
        self.assertEqual((now["state"], now["url"], now["revision"]), ("completed", img["url"], 1))
        self.assertEqual(fetch(img["url"])[0].status, 200)
        # the provider answers again: the next regeneration is revision 2, error cleared
        self.fake.script()
        ok = self.post(f"/api/v1/documents/{d['id']}/regenerate").json["data"]
        self.assertEqual((ok["revision"], ok["error"], ok["result"]), (2, None, "Echo: hello there"))


def stored_revision_texts(srv, doc_id):
    """The result column of a document's revision rows as stored, oldest first: None or
    the text's MD5 (md5_of)."""
    sql = f"SELECT md5(result) FROM document_revisions WHERE document_id = {int(doc_id)} ORDER BY number"
    if BACKEND == "sqlite":
        db = sqlite3.connect(os.path.join(srv.data_dir, "inkwell.db"))
        try:
            return [r[0] and md5_of(stored_text(r[0]))
                    for r in db.execute(sql.replace("md5(result)", "result"))]
        finally:
            db.close()
    out = subprocess.run(["psql", srv.database, "-qAtX", "-c",
                          sql.replace("md5(result)", "COALESCE(md5(result), 'NULL')")],
                         check=True, capture_output=True, text=True).stdout
    return [None if line == "NULL" else line for line in out.splitlines()]


def md5_of(text):
    return hashlib.md5(text.encode()).hexdigest()


class NewTextSearch(ServerTest):
    """Search by result sees a document's latest text only, at once after an edit, a
    regenerate or a restore, and after SQLite's index thread took the new text in
    (migration 17: the index still holds the old text meanwhile)."""

    def index_caught_up(self):
        if BACKEND != "sqlite":
            return
        def pending():
            text = self.srv.request("GET", "/metrics").body.decode()
            return value(parse_metrics(text), "inkwell_search_index_pending") == 0
        wait_for(pending, "the search index to catch up")

    def found(self, word):
        r = self.req("GET", f"/api/v1/documents?search_by=result&search={word}&per_page=100")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["meta"]["total"], len(r.json["data"]), r)
        return sorted(d["id"] for d in r.json["data"])

    def test_search_by_result_sees_the_latest_text(self):
        a = self.make_doc(name="a")
        b = self.make_doc(name="b")
        for d, text in ((a, "quokka alpha"), (b, "quokka beta")):
            r = self.req("PUT", f"/api/v1/documents/{d['id']}", form={"result": text})
            self.assertEqual(r.status, 200, r)
        self.index_caught_up()  # both texts in the index now
        self.assertEqual(self.found("quokka"), sorted([a["id"], b["id"]]))
        for _ in range(2):
            # a new text, then another: each time only the latest is found
            r = self.req("PUT", f"/api/v1/documents/{a['id']}", form={"result": "narwhal gamma"})
            self.assertEqual(r.status, 200, r)
            self.assertEqual(self.found("alpha"), [])
            self.assertEqual(self.found("narwhal"), [a["id"]])
            self.assertEqual(self.found("quokka"), [b["id"]])
            r = self.req("POST", f"/api/v1/documents/{b['id']}/regenerate",
                         form={"prompt": "walruses", "creativity": "0"})  # (its text: fixed)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(self.found("quokka"), [])
            self.assertEqual(self.found("beta"), [])
            walrus = self.found("walrus")
            self.assertIn(b["id"], walrus)
            self.index_caught_up()
            self.assertEqual(self.found("quokka"), [])
            self.assertEqual(self.found("narwhal"), [a["id"]])
            self.assertEqual(self.found("walrus"), walrus)
            # back to the quokka texts (revision 2): a restore is a new text too
            for d in (a, b):
                r = self.req("POST", f"/api/v1/documents/{d['id']}/revisions/2/restore")
                self.assertEqual(r.status, 200, r)
            self.assertEqual(self.found("narwhal"), [])
            self.assertEqual(self.found("quokka"), sorted([a["id"], b["id"]]))
            self.index_caught_up()
            self.assertEqual(self.found("quokka"), sorted([a["id"], b["id"]]))
        # deleted while its new text waits for the index
        r = self.req("PUT", f"/api/v1/documents/{a['id']}", form={"result": "okapi delta"})
        self.assertEqual(self.req("DELETE", f"/api/v1/documents/{a['id']}").status, 200)
        self.assertEqual(self.found("okapi"), [])
        self.assertEqual(self.found("quokka"), [b["id"]])
        self.index_caught_up()
        self.assertEqual(self.found("okapi"), [])
        self.assertEqual(self.found("quokka"), [b["id"]])


class NewTextSearchNoRecordCache(NewTextSearch):
    """The same with the rendered-record cache off (every row read whole)."""
    server_args = ["--record-cache-mb", "0"]


class Conversion(unittest.TestCase):
    """An existing database is converted in place (SQLite migration 10, PostgreSQL 8; the
    revisions' tables made again, their later columns come back too: SQLite 31, PostgreSQL
    24)."""

    def downgrade(self, srv):
        jobs = ("regen", "prompt", "creativity", "template_id", "tone", "language", "length",
                "description", "resolution", "style")
        if BACKEND == "sqlite":
            db = sqlite3.connect(os.path.join(srv.data_dir, "inkwell.db"))
            # texts as they were stored then (plain TEXT): migrations 10, 16 and 20 (the
            # stored form, src/store/sqlite_text.c) come back
            db.create_function("plain", 1, stored_text)
            # triggers of later migrations (webhooks' outbox, tags) name these columns, and
            # SQLite refuses to drop a column a trigger names: they step aside meanwhile
            # (those on the revisions' tables, dropped here, do not come back: this test
            # asks nothing of them)
            later = db.execute("SELECT name, sql, tbl_name FROM sqlite_schema WHERE type = 'trigger'"
                               " AND name != 'documents_revision_text'").fetchall()
            for name, _, _ in later:
                db.execute(f'DROP TRIGGER "{name}"')
            db.executescript(
                "DROP TRIGGER documents_revision_text;"  # migration 16, which comes back too
                "DROP TABLE document_revisions; DROP TABLE image_revisions;"
                "ALTER TABLE documents DROP COLUMN revision; ALTER TABLE documents DROP COLUMN tone;"
                "ALTER TABLE documents DROP COLUMN language; ALTER TABLE documents DROP COLUMN length;"
                "ALTER TABLE images DROP COLUMN revision;"
                + "".join(f"ALTER TABLE jobs DROP COLUMN {c};" for c in jobs)
                + "UPDATE documents SET result = plain(result) WHERE typeof(result) = 'blob';"
                "UPDATE search_changed SET old = plain(old) WHERE typeof(old) = 'blob';"
                "DELETE FROM schema_migrations WHERE version IN (10, 16, 20, 31);")
            for _, sql, table in later:
                if table not in ("document_revisions", "image_revisions"):
                    db.execute(sql)
            db.commit()
            db.close()
            return
        subprocess.run(["psql", srv.database, "-qAtc",
                        "DROP TRIGGER documents_revision_text ON documents;"  # 14, back too
                        "DROP FUNCTION documents_revision_text();"
                        "DROP TABLE document_revisions; DROP TABLE image_revisions;"
                        "ALTER TABLE documents DROP COLUMN revision, DROP COLUMN tone,"
                        " DROP COLUMN language, DROP COLUMN length;"
                        "ALTER TABLE images DROP COLUMN revision;"
                        "ALTER TABLE jobs " + ", ".join(f"DROP COLUMN {c}" for c in jobs) + ";"
                        "DELETE FROM schema_migrations WHERE version IN (8, 14, 24);"],
                       check=True, capture_output=True)

    def test_backup_copies_every_revisions_picture(self):
        srv = Server().start()
        try:
            key = srv.key("bk")
            i = srv.request("POST", "/api/v1/images", key=key,
                            form={"name": "b", "description": "dunes", "resolution": "1024x1024"}).json["data"]
            i2 = srv.request("POST", f"/api/v1/images/{i['id']}/regenerate", key=key).json["data"]
            dest = os.path.join(srv.data_dir, "..", os.path.basename(srv.data_dir) + "-backup.db")
            p = subprocess.run([BIN, "backup", "--to", dest] + srv.storage_args(), capture_output=True,
                               text=True)
            if BACKEND == "postgres":  # pg_dump and a copy of the media directory (deployment.md)
                self.assertEqual(p.returncode, 2)
                self.assertIn("pg_dump", p.stderr)
                return
            self.assertEqual(p.returncode, 0, p.stderr)
            copied = set(os.listdir(dest + ".media"))
            self.assertIn(url_file(i["url"]), copied)  # revision 1's picture
            self.assertIn(url_file(i2["url"]), copied)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_existing_records_become_revision_1(self):
        srv = Server().start()
        key = srv.key("old")
        d = srv.request("POST", "/api/v1/documents", key=key, form={"name": "o", "prompt": "old"}).json["data"]
        i = srv.request("POST", "/api/v1/images", key=key,
                        form={"name": "o", "description": "old", "resolution": "1024x1024"}).json["data"]
        self.assertEqual(srv.stop(), 0)
        self.downgrade(srv)
        srv.start()
        try:
            now = srv.request("GET", f"/api/v1/documents/{d['id']}", key=key).json["data"]
            self.assertEqual((now["revision"], now["result"], now["tone"]), (1, d["result"], "neutral"))
            revs = srv.request("GET", f"/api/v1/documents/{d['id']}/revisions", key=key).json
            self.assertEqual([(x["number"], x["source"], x["result"]) for x in revs["data"]],
                             [(1, "generation", d["result"])])
            # the latest revision keeps no copy of the document's text (migration 16 / 14)
            self.assertEqual(stored_revision_texts(srv, d["id"]), [None])
            r = srv.request("PUT", f"/api/v1/documents/{d['id']}", key=key,
                            form={"name": "o", "result": "edited"})
            self.assertEqual(r.status, 200, r)
            revs = srv.request("GET", f"/api/v1/documents/{d['id']}/revisions", key=key).json
            self.assertEqual([(x["number"], x["source"], x["result"]) for x in revs["data"]],
                             [(2, "edit", "edited"), (1, "generation", d["result"])])
            self.assertEqual(stored_revision_texts(srv, d["id"]), [md5_of(d["result"]), None])
            revs = srv.request("GET", f"/api/v1/images/{i['id']}/revisions", key=key).json
            self.assertEqual([(x["number"], url_file(x["url"])) for x in revs["data"]],
                             [(1, url_file(i["url"]))])
            r = srv.request("POST", f"/api/v1/images/{i['id']}/regenerate", key=key)
            self.assertEqual(r.json["data"]["revision"], 2)
            self.assertEqual(fetch(srv.url("/media/" + url_file(i["url"])))[0].status, 200)
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
