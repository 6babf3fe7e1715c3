"""Actions (API.md §17, POST /documents/{id}/actions), black-box, on the backend under
test (SQLite or PostgreSQL): each action on the whole text and on a selection, the
selection's edges (empty, whole, multibyte characters at both ends, out of range,
reversed, one offset alone), the validation 422s, answered like a regenerate (wait 200,
async 202, stream 200 with the part's deltas, Idempotency-Key), the 409s of §16 and §12,
404 of another user's document, a failed action keeping the text, revisions of source
`action`, the quota (403) and usage; with the fake OpenAI server, translate and
change_tone setting language and tone and the exact messages sent."""
import json
import unittest

from harness import words_of, Server, ServerTest, poll_state, slow
from test_openai import Fake, SECRET
from test_stream import Stream, check_deltas

BUSY = "The record is being generated."
NO_RESULT = "The document has no result yet."
API = "/api/v1"

TEXT = ("tea is is good .it helps  focus. We utilize numerous methods to facilitate "
        "learning, and we demonstrate how individuals obtain sufficient assistance in "
        "approximately a week. We do not know. It is fine.")
UNI = "Ωmega café 🙂 tea is is good 🙂 end"  # code points: Ω at 0, 🙂 at 11 and 26


def cp(s):
    return len(s)  # Python counts code points


class Actions(ServerTest):
    server_args = ["--builtin-fail-pattern", "FAILME"]

    def act(self, rid, form=None, key="alice", headers=None, **kw):
        return self.req("POST", f"{API}/documents/{rid}/actions", key=key, form=form,
                        headers=headers, **kw)

    def doc_with(self, text, key="alice", **fields):
        d = self.make_doc(key=key, prompt="tea ceremonies", **fields)
        r = self.req("PATCH", f"{API}/documents/{d['id']}", key=key, form={"result": text})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def ok(self, rid, form, key="alice"):
        r = self.act(rid, form, key=key)
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["state"], d["error"]), ("completed", None))
        return d

    def latest_revision(self, rid):
        r = self.req("GET", f"{API}/documents/{rid}/revisions?per_page=10")
        self.assertEqual(r.status, 200, r)
        return r.json["data"][0]

    # ---- each action ----

    def test_each_action_on_the_whole_text(self):
        expect = {
            "shorten": lambda t: t == "tea is is good .it helps  focus. We utilize numerous "
                                      "methods to facilitate learning, and we demonstrate how "
                                      "individuals obtain sufficient assistance in approximately "
                                      "a week.",
            "fix_grammar": lambda t: t.startswith("Tea is good. It helps focus. We utilize"),
            "simplify": lambda t: "We use many methods to help learning. We show how people "
                                  "get enough help in about a week." in t,
            "expand": lambda t: t.startswith(TEXT + " ") and "tea ceremonies" in t,
            "continue": lambda t: t.startswith(TEXT + "\n\n") and "tea ceremonies" in t[len(TEXT):],
            "improve": lambda t: t.startswith("Tea is ") and ". It " in t[:30] and t != TEXT,
            "rephrase": lambda t: t != TEXT and "helps focus" not in t,
        }
        for action, check in expect.items():
            with self.subTest(action=action):
                d = self.doc_with(TEXT)
                out = self.ok(d["id"], {"action": action})
                self.assertTrue(check(out["result"]), out["result"])
                self.assertEqual(out["revision"], 3)  # generation, edit, action
                self.assertEqual(out["words"], words_of(out["result"]))
                rev = self.latest_revision(d["id"])
                self.assertEqual((rev["number"], rev["source"], rev["action"]), (3, "action", action))
                self.assertEqual(rev["result"], out["result"])
                # the same text, the same rewrite (the builtin generator is deterministic)
                again = self.doc_with(TEXT)
                self.assertEqual(self.ok(again["id"], {"action": action})["result"], out["result"])

    def test_change_tone_sets_the_tone(self):
        d = self.doc_with("We do not know. It is fine.")
        out = self.ok(d["id"], {"action": "change_tone", "tone": "casual"})
        self.assertEqual(out["result"], "So, here's the deal. We don't know. It's fine.")
        self.assertEqual(out["tone"], "casual")
        rev = self.latest_revision(d["id"])
        self.assertEqual((rev["source"], rev["action"], rev["tone"]), ("action", "change_tone", "casual"))
        # another action keeps the tone, and ignores a tone it does not need
        out = self.ok(d["id"], {"action": "shorten", "tone": "formal"})
        self.assertEqual(out["tone"], "casual")

    # ---- selections ----

    def test_selection_rewrites_that_part_only(self):
        d = self.doc_with(UNI)
        s = UNI.index("tea")
        e = UNI.index(" 🙂 end")
        out = self.ok(d["id"], {"action": "fix_grammar", "selection_start": s, "selection_end": e})
        self.assertEqual(out["result"], "Ωmega café 🙂 Tea is good. 🙂 end")
        # multibyte characters at both ends of the selection
        out = self.ok(d["id"], {"action": "change_tone", "tone": "formal",
                                "selection_start": 0, "selection_end": 1})
        self.assertEqual(out["result"], "The matter is set out below. Ω" + "mega café 🙂 Tea is good. 🙂 end")
        t = out["result"]
        last = cp(t) - 1
        self.assertEqual(t[last], "d")
        out = self.ok(d["id"], {"action": "change_tone", "tone": "casual",
                                "selection_start": t.index("🙂 end"), "selection_end": cp(t)})
        self.assertEqual(out["result"], t[:t.index("🙂 end")] + "So, here's the deal. 🙂 end")

    def test_whole_text_selection_equals_no_selection(self):
        a = self.doc_with(TEXT)
        b = self.doc_with(TEXT)
        whole = self.ok(a["id"], {"action": "shorten", "selection_start": 0, "selection_end": cp(TEXT)})
        plain = self.ok(b["id"], {"action": "shorten"})
        self.assertEqual(whole["result"], plain["result"])

    def test_empty_selection_rewrites_nothing_but_continue_writes_there(self):
        d = self.doc_with(UNI)
        out = self.ok(d["id"], {"action": "improve", "selection_start": 5, "selection_end": 5})
        self.assertEqual(out["result"], UNI)
        # the same text: no revision (API.md §24), the record as it was
        self.assertEqual(out["revision"], 2)
        self.assertEqual(self.latest_revision(d["id"])["source"], "edit")
        # continue writes after selection_end, in a paragraph of its own
        text = "First paragraph.\n\nSecond paragraph."
        d = self.doc_with(text)
        out = self.ok(d["id"], {"action": "continue", "selection_start": 0, "selection_end": 16})
        r = out["result"]
        self.assertTrue(r.startswith("First paragraph.\n\n"), r)
        self.assertTrue(r.endswith("\n\nSecond paragraph."), r)
        self.assertGreater(len(r), len(text) + 40)

    def test_selection_errors(self):
        d = self.doc_with(UNI)
        n = cp(UNI)
        cases = [
            ({"selection_start": n + 1, "selection_end": n + 1}, "selection_start"),
            ({"selection_start": 0, "selection_end": n + 1}, "selection_end"),
            ({"selection_start": 5, "selection_end": 4}, "selection_end"),
            ({"selection_start": 3}, "selection_end"),
            ({"selection_end": 3}, "selection_start"),
            ({"selection_start": -1, "selection_end": 3}, "selection_start"),
            ({"selection_start": "x", "selection_end": 3}, "selection_start"),
            ({"selection_start": 0, "selection_end": "1.5"}, "selection_end"),
        ]
        for extra, field in cases:
            with self.subTest(extra=extra):
                r = self.act(d["id"], dict({"action": "shorten"}, **extra))
                self.assertError(r, 422)
                self.assertEqual(list(r.json["message"]), [field], r)
        # the length in code points: the last character, however many bytes it has, is in range
        self.ok(d["id"], {"action": "shorten", "selection_start": n, "selection_end": n})
        # (an empty selection changes nothing: no revision, API.md §24)
        self.assertEqual(self.req("GET", f"{API}/documents/{d['id']}").json["data"]["revision"], 2)

    # ---- validation, 404, 405, 409 ----

    def test_validation_errors(self):
        d = self.doc_with(TEXT)
        cases = [
            ({}, "action", "The action field is required."),
            ({"action": "summarise"}, "action", "The selected action is invalid."),
            ({"action": "change_tone"}, "tone", None),
            ({"action": "change_tone", "tone": "angry"}, "tone", "The selected tone is invalid."),
            # the builtin generator does not translate, whatever the language
            ({"action": "translate"}, "action", None),
            ({"action": "translate", "language": "x"}, "action", None),
            ({"action": "translate", "language": "de"}, "action",
             "The builtin generator cannot translate: it writes English only."),
        ]
        for form, field, msg in cases:
            with self.subTest(form=form):
                r = self.act(d["id"], form)
                self.assertError(r, 422)
                self.assertEqual(list(r.json["message"]), [field], r)
                if msg:
                    self.assertEqual(r.json["message"][field], [msg])
        # JSON bodies work too
        r = self.act(d["id"], json_body={"action": "fix_grammar", "selection_start": 0, "selection_end": 9})
        self.assertEqual(r.status, 200, r)
        self.assertNotEqual(r.json["data"]["result"], TEXT)
        # nothing was made by the refusals
        self.assertEqual(self.req("GET", f"{API}/documents/{d['id']}").json["data"]["revision"], 3)

    def test_not_found_and_not_allowed(self):
        d = self.doc_with(TEXT)
        self.assertError(self.act(d["id"], {"action": "shorten"}, key="bob"), 404, "Resource not found.")
        self.assertError(self.act(999999, {"action": "shorten"}), 404, "Resource not found.")
        img = self.make_image()
        self.assertError(self.req("POST", f"{API}/images/{img['id']}/actions", form={"action": "shorten"}), 404)
        for m in ("GET", "PUT", "DELETE"):
            r = self.req(m, f"{API}/documents/{d['id']}/actions")
            self.assertError(r, 405, "Method not allowed.")
            self.assertEqual(r.header("Allow"), "POST")
        self.assertError(self.act(d["id"], {"action": "shorten"}, key=None), 401)
        r = self.req("POST", f"{API}/documents/{d['id']}/actions", body=b"action=shorten",
                     headers={"Content-Type": "text/plain"})
        self.assertError(r, 415)

    def test_failed_document_without_result_is_409(self):
        r = self.req("POST", f"{API}/documents", form={"name": "f", "prompt": "FAILME please"},
                     headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        d = poll_state(self.srv, self.alice, f"{API}/documents/{rid}")
        self.assertEqual((d["state"], d["result"]), ("failed", None))
        self.assertError(self.act(rid, {"action": "shorten"}), 409, NO_RESULT)

    def test_failed_action_keeps_the_text(self):
        d = self.doc_with("FAILME text to keep.")
        r = self.act(d["id"], {"action": "improve"})
        self.assertError(r, 502)
        now = self.req("GET", f"{API}/documents/{d['id']}").json["data"]
        self.assertEqual((now["state"], now["result"], now["revision"]), ("completed", "FAILME text to keep.", 2))
        self.assertIsNotNone(now["error"])

    # ---- answered like a regenerate ----

    def test_async_action(self):
        d = self.doc_with(TEXT)
        r = self.act(d["id"], {"action": "shorten"}, headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        self.assertTrue(r.header("Location").endswith(f"/api/v1/documents/{d['id']}"))
        self.assertEqual(r.json["data"]["result"], TEXT)  # the latest finished revision meanwhile
        done = poll_state(self.srv, self.alice, f"{API}/documents/{d['id']}", until=("completed",))
        self.assertEqual(done["revision"], 3)
        self.assertLess(len(done["result"]), len(TEXT))

    def test_streamed_action_deltas_carry_the_part(self):
        d = self.doc_with(UNI)
        s0, s1 = UNI.index("tea"), UNI.index(" 🙂 end")
        st = Stream(self.srv.port, "POST", f"{API}/documents/{d['id']}/actions", self.alice,
                    form={"action": "fix_grammar", "selection_start": s0, "selection_end": s1})
        self.assertEqual(st.status, 200)
        self.assertEqual(st.header("Content-Type"), "text/event-stream")
        evs = st.events()
        self.assertEqual(evs[0][0], "record")
        self.assertEqual(evs[-1][0], "done")
        final = evs[-1][2]
        self.assertEqual(final["result"], "Ωmega café 🙂 Tea is good. 🙂 end")
        self.assertEqual(final["revision"], 3)
        # the deltas are the new part, their ids byte offsets within it
        self.assertEqual(check_deltas(self, evs), "Tea is good.")
        # a continuation's deltas start with its separator
        st = Stream(self.srv.port, "POST", f"{API}/documents/{d['id']}/actions", self.alice,
                    form={"action": "continue"})
        evs = st.events()
        part = check_deltas(self, evs)
        self.assertTrue(part.startswith("\n\n"), part)
        self.assertEqual(evs[-1][2]["result"], final["result"] + part)

    def resumed(self, rid, last_id, key=None):
        return Stream(self.srv.port, "GET", f"{API}/documents/{rid}", key or self.alice,
                      headers={"Last-Event-ID": str(last_id)}).events()

    def test_streamed_action_resumed_after_it_completed(self):
        """The action's stream (ids within the part, §17) resumed with Last-Event-ID once
        the action has completed: the rest of the part, nothing repeated or missing, then
        `done` with the whole text (docs/design.md "Streams"); a reconnect after `done`
        gets no delta; an id beyond the part is one within the whole text (§10)."""
        d = self.doc_with(UNI)
        s0, s1 = UNI.index("tea"), UNI.index(" 🙂 end")
        evs = Stream(self.srv.port, "POST", f"{API}/documents/{d['id']}/actions", self.alice,
                     form={"action": "fix_grammar", "selection_start": s0,
                           "selection_end": s1}).events()
        final = evs[-1][2]["result"]
        part = check_deltas(self, evs).encode()
        self.assertEqual(part, b"Tea is good.")
        for cut in (1, 5, len(part) - 1, len(part)):
            with self.subTest(cut=cut):
                got = self.resumed(d["id"], cut)
                self.assertEqual([e[0] for e in (got[0], got[-1])], ["record", "done"])
                rest = check_deltas(self, got, start=cut).encode()
                self.assertEqual(part[:cut] + rest, part)
                self.assertEqual(got[-1][2]["result"], final)
                self.assertEqual(got[-1][2]["revision"], 3)
        # beyond the part: the whole text's offset
        n = len(final.encode()) - 3  # (in " end")
        self.assertGreater(n, len(part))
        got = self.resumed(d["id"], n)
        self.assertEqual(check_deltas(self, got, start=n).encode(), final.encode()[n:])
        # a show without Last-Event-ID: the whole text (§10)
        got = Stream(self.srv.port, "GET", f"{API}/documents/{d['id']}", self.alice).events()
        self.assertEqual(check_deltas(self, got), final)
        # another revision since (an edit): no part any more, ids within the whole text
        r = self.req("PATCH", f"{API}/documents/{d['id']}", form={"result": final + " More."})
        self.assertEqual(r.status, 200, r)
        got = self.resumed(d["id"], 5)
        self.assertEqual(check_deltas(self, got, start=5).encode(), (final + " More.").encode()[5:])

    def test_idempotent_action(self):
        d = self.doc_with(TEXT)
        h = {"Idempotency-Key": "act-1"}
        r1 = self.act(d["id"], {"action": "shorten"}, headers=h)
        self.assertEqual(r1.status, 200, r1)
        r2 = self.act(d["id"], {"action": "shorten"}, headers=h)
        self.assertEqual((r2.status, r2.header("Idempotent-Replayed")), (200, "true"))
        self.assertEqual(r2.json, r1.json)
        self.assertEqual(self.req("GET", f"{API}/documents/{d['id']}").json["data"]["revision"], 3)
        # another body, or the same body on another route, is another request
        self.assertError(self.act(d["id"], {"action": "expand"}, headers=h), 422)
        self.assertError(self.req("POST", f"{API}/documents/{d['id']}/regenerate",
                                  form={"action": "shorten"}, headers=h), 422)
        h2 = {"Idempotency-Key": "act-2", "Prefer": "respond-async"}
        a1 = self.act(d["id"], {"action": "expand"}, headers=h2)
        self.assertEqual(a1.status, 202, a1)
        a2 = self.act(d["id"], {"action": "expand"}, headers=h2)
        self.assertEqual((a2.status, a2.header("Idempotent-Replayed")), (202, "true"), a2)


class WhileGenerating(ServerTest):
    """A slow generator: an action while a generation runs, and a show streamed during an
    action."""
    server_args = ["--builtin-delay-ms", "1500"]

    def test_action_while_generating_is_409(self):
        r = self.req("POST", f"{API}/documents", form={"name": "s", "prompt": "slow tea"},
                     headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        self.assertError(self.req("POST", f"{API}/documents/{rid}/actions", form={"action": "shorten"}),
                         409, BUSY)
        # a selection cannot be checked yet: still the 409
        self.assertError(self.req("POST", f"{API}/documents/{rid}/actions",
                                  form={"action": "shorten", "selection_start": 0, "selection_end": 99}),
                         409, BUSY)
        poll_state(self.srv, self.alice, f"{API}/documents/{rid}")
        r = self.req("POST", f"{API}/documents/{rid}/actions", form={"action": "expand"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202, r)
        self.assertError(self.req("POST", f"{API}/documents/{rid}/actions", form={"action": "shorten"}),
                         409, BUSY)
        self.assertError(self.req("POST", f"{API}/documents/{rid}/regenerate"), 409, BUSY)
        done = poll_state(self.srv, self.alice, f"{API}/documents/{rid}", until=("completed",))
        self.assertEqual(done["revision"], 2)

    def test_show_stream_during_an_action_gets_the_part(self):
        r = self.req("POST", f"{API}/documents", form={"name": "s", "prompt": "streamed tea"},
                     headers={"Prefer": "respond-async"})
        rid = r.json["data"]["id"]
        first = poll_state(self.srv, self.alice, f"{API}/documents/{rid}")
        r = self.req("POST", f"{API}/documents/{rid}/actions", form={"action": "continue"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual(r.status, 202)
        s = Stream(self.srv.port, "GET", f"{API}/documents/{rid}", self.alice)
        evs = s.events()
        self.assertEqual(evs[-1][0], "done")
        final = evs[-1][2]
        part = check_deltas(self, evs)
        # the builtin text ends with a line break: one more makes the paragraph's own
        sep = "\n" if first["result"].endswith("\n") else "\n\n"
        self.assertTrue(part.startswith(sep) and len(part) > 40, part)
        self.assertEqual(final["result"], first["result"] + part)


class ResumedAfterRestart(unittest.TestCase):
    """A streamed action resumed with Last-Event-ID on a restarted server (no event of the
    action held in memory): the part comes from its revision (SQLite migration 31,
    PostgreSQL 24), the rest of it exactly."""

    def test_resume_from_the_stored_part(self):
        srv = Server().start()
        try:
            key = srv.key("resume")
            r = srv.request("POST", f"{API}/documents", key=key,
                            form={"name": "d", "prompt": "tea ceremonies"})
            self.assertEqual(r.status, 201, r)
            rid = r.json["data"]["id"]
            r = srv.request("PATCH", f"{API}/documents/{rid}", key=key, form={"result": UNI})
            self.assertEqual(r.status, 200, r)
            s0, s1 = UNI.index("café"), UNI.index(" end")
            evs = Stream(srv.port, "POST", f"{API}/documents/{rid}/actions", key,
                         form={"action": "fix_grammar", "selection_start": s0,
                               "selection_end": s1}).events()
            self.assertEqual(evs[-1][0], "done")
            final = evs[-1][2]["result"]
            part = check_deltas(self, evs).encode()
            self.assertGreater(len(part), 4)
            self.assertEqual(srv.stop(), 0)
            srv.start()
            # cut inside a character (🙂 is 4 bytes): it is sent whole, from its start
            cuts = [1, len(part) // 2, len(part)]
            if "🙂".encode() in part:
                cuts.append(part.index("🙂".encode()) + 2)
            for cut in cuts:
                with self.subTest(cut=cut):
                    got = Stream(srv.port, "GET", f"{API}/documents/{rid}", key,
                                 headers={"Last-Event-ID": str(cut)}).events()
                    self.assertEqual([got[0][0], got[-1][0]], ["record", "done"])
                    at = cut
                    while at < len(part) and (part[at] & 0xC0) == 0x80:
                        at -= 1
                    rest = check_deltas(self, got, start=at).encode()
                    self.assertEqual(part[:at] + rest, part)
                    self.assertEqual(got[-1][2]["result"], final)
        finally:
            srv.stop()


class Quota(unittest.TestCase):
    """§19: an action's words count, and a used-up quota refuses an action (403)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        cls.admin = cls.srv.cli("key", "create", "--user", "root", "--scope", "admin").stdout.strip()
        cls.srv.keys.append(cls.admin)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}")

    def test_usage_counted_and_quota_refuses(self):
        a = lambda m, p, **kw: self.srv.request(m, API + p, key=self.admin, **kw)
        u = a("POST", "/admin/users", form={"name": "quinn"}).json["data"]
        key = a("POST", f"/admin/users/{u['id']}/keys", form={}).json["data"]["key"]
        self.srv.keys.append(key)
        used = lambda: self.srv.request("GET", API + "/usage", key=key).json["data"]["words"]["used"]
        d = self.srv.request("POST", API + "/documents", key=key,
                             form={"name": "q", "prompt": "tea"}).json["data"]
        self.assertEqual(used(), d["words"])
        r = self.srv.request("POST", f"{API}/documents/{d['id']}/actions", key=key,
                             form={"action": "expand"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(used(), d["words"] + r.json["data"]["words"])
        a("PATCH", f"/admin/users/{u['id']}", form={"quota_words": str(used())})
        r = self.srv.request("POST", f"{API}/documents/{d['id']}/actions", key=key,
                             form={"action": "shorten"})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json, {"message": "Your monthly word quota is used up.", "status": 403})
        now = self.srv.request("GET", f"{API}/documents/{d['id']}", key=key).json["data"]
        self.assertEqual(now["revision"], 2)


class WithAModel(unittest.TestCase):
    """The fake OpenAI server: translate and change_tone set language and tone, the part
    comes back spliced, and the messages sent are prompt.c's."""

    @classmethod
    def setUpClass(cls):
        cls.fake = Fake()
        cls.srv = Server("--provider", "openai", "--openai-base-url", cls.fake.base + "/v1",
                         "--provider-timeout", str(min(slow(2), 6)),
                         env={"OPENAI_API_KEY": SECRET}).start()
        cls.key = cls.srv.key("ai")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.fake.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc}")

    def post(self, path, form=None, headers=None):
        return self.srv.request("POST", API + path, key=self.key, form=form, headers=headers)

    def doc(self, text):
        self.fake.script()
        d = self.post("/documents", {"name": "m", "prompt": "a note", "template_id": 1}).json["data"]
        r = self.srv.request("PATCH", f"{API}/documents/{d['id']}", key=self.key, form={"result": text})
        return r.json["data"]

    def chat_bodies(self):
        return [q["json"] for q in self.fake.requests() if q["path"].endswith("/chat/completions")]

    def test_translate_a_selection_sets_the_language(self):
        text = "Hello world. Keep this."
        d = self.doc(text)
        self.fake.script(chat=[{"pieces": ["Hallo ", "Welt."]}])
        r = self.post(f"/documents/{d['id']}/actions",
                      {"action": "translate", "language": "de", "selection_start": 0, "selection_end": 12})
        self.assertEqual(r.status, 200, r)
        out = r.json["data"]
        self.assertEqual(out["result"], "Hallo Welt. Keep this.")
        self.assertEqual((out["language"], out["revision"]), ("de", 3))
        rev = self.srv.request("GET", f"{API}/documents/{d['id']}/revisions/3", key=self.key).json["data"]
        self.assertEqual((rev["source"], rev["action"], rev["language"]), ("action", "translate", "de"))
        (body,) = self.chat_bodies()
        sys_, user = body["messages"]
        self.assertEqual(user, {"role": "user", "content":
                                "<document>\n<selection>Hello world.</selection> Keep this.\n</document>"})
        self.assertEqual(sys_["role"], "system")
        self.assertTrue(sys_["content"].startswith(
            "You are an editor working on a document written in Markdown (CommonMark).\n"
            "Translate the selected part into German (de). Keep its meaning, tone and Markdown "
            "formatting.\nThe rest of the document is there for context: leave it out of your answer.\n"
            "The document was written to these instructions: You are a versatile writer."), sys_)

    def test_change_tone_of_the_whole_text_sets_the_tone(self):
        d = self.doc("We do not know.")
        self.fake.script(chat=[{"pieces": ["We don't ", "know, lol."]}])
        s = Stream(self.srv.port, "POST", f"{API}/documents/{d['id']}/actions", self.key,
                   form={"action": "change_tone", "tone": "witty"})
        evs = s.events()
        self.assertEqual(check_deltas(self, evs), "We don't know, lol.")
        final = evs[-1][2]
        self.assertEqual((final["result"], final["tone"], final["revision"]),
                         ("We don't know, lol.", "witty", 3))
        (body,) = self.chat_bodies()
        self.assertEqual(body["messages"][1]["content"], "We do not know.")
        self.assertIn("Rewrite the text the user sends in a witty tone: clever and lightly humorous.",
                      body["messages"][0]["content"])
        self.assertIsNotNone(final["usage"])

    def test_generation_messages_carry_the_writing_options(self):
        self.fake.script()
        r = self.post("/documents", {"name": "o", "prompt": "tea", "tone": "formal",
                                     "language": "fr", "length": "long"})
        self.assertEqual(r.status, 201, r)
        (body,) = self.chat_bodies()
        sys_ = body["messages"][0]["content"]
        self.assertIn("\n\nWrite in French (fr).\nUse a formal tone: formal and precise, without "
                      "contractions or slang.\nMake it long and detailed:", sys_)
        self.assertEqual(body["messages"][1]["content"], "tea")
        # a regenerate too
        self.fake.script()
        r = self.post(f"/documents/{r.json['data']['id']}/regenerate", {"tone": "casual"})
        self.assertEqual(r.status, 200, r)
        (body,) = self.chat_bodies()
        self.assertIn("Write in French (fr).\nUse a casual tone: relaxed and conversational.",
                      body["messages"][0]["content"])

    def test_a_failed_model_keeps_the_text(self):
        d = self.doc("Stay as you are.")
        self.fake.script(chat=[{"status": 400}])
        r = self.post(f"/documents/{d['id']}/actions", {"action": "expand"})
        self.assertEqual(r.status, 502, r)
        self.assertNotIn("FAKEBODY", json.dumps(r.json))
        now = self.srv.request("GET", f"{API}/documents/{d['id']}", key=self.key).json["data"]
        self.assertEqual((now["result"], now["revision"], now["state"]), ("Stay as you are.", 2, "completed"))


if __name__ == "__main__":
    unittest.main()
