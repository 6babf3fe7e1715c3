"""Users' own templates (API.md §18), black-box, on the backend under test (SQLite or
PostgreSQL): create, list, show, change and delete; ids from 1001; one user's templates
invisible to another (404 on the routes, 422 as a template_id); the 52 read-only (405);
field lengths in code points (multibyte characters) at the limit and one past it; a
custom template as template_id on store, regenerate and the list filter, with the
builtin generator (inline and as a job) and with the fake OpenAI server (its instruction
is the system message the model gets); a deleted template's documents keep its name,
and regenerating them without another template_id is a 422."""
import unittest

from harness import ServerTest, Server, poll_state, slow
from test_openai import Fake, SECRET
from test_stream import Stream

ASYNC = {"Prefer": "respond-async"}


def tpl_form(name="Haiku corner", description="Writes a haiku about the prompt.",
             instruction="You write haiku: three lines of five, seven and five syllables."):
    return {"name": name, "description": description, "instruction": instruction}


class TemplatesMixin:
    def make_tpl(self, key="alice", **fields):
        r = self.req("POST", "/api/v1/templates", key=key, form=tpl_form(**fields))
        self.assertEqual(r.status, 201, r)
        return r.json["data"]

    def regen(self, rid, form=None, key="alice", headers=None):
        return self.req("POST", f"/api/v1/documents/{rid}/regenerate", key=key, form=form,
                        headers=headers)

    def assert422(self, r, field):
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json["status"], 422)
        self.assertIn(field, r.json["message"], r)


class CustomTemplates(TemplatesMixin, ServerTest):
    def test_crud(self):
        t = self.make_tpl()
        self.assertGreaterEqual(t["id"], 1001)
        self.assertEqual((t["name"], t["description"], t["custom"]),
                         ("Haiku corner", "Writes a haiku about the prompt.", True))
        self.assertIn("five, seven and five", t["instruction"])
        self.assertRegex(t["created_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        r = self.req("POST", "/api/v1/templates", form=tpl_form(name="Second"))
        self.assertEqual((r.status, r.json["status"]), (201, 201))
        t2 = r.json["data"]
        self.assertTrue(r.header("Location").endswith(f"/api/v1/templates/{t2['id']}"))
        self.assertGreater(t2["id"], t["id"])
        # the list: the 52 (no instruction) then the user's own, in id order
        r = self.req("GET", "/api/v1/templates")
        self.assertEqual(r.status, 200, r)
        data = r.json["data"]
        self.assertEqual([x["id"] for x in data[:52]], list(range(1, 53)))
        for x in data[:52]:
            self.assertEqual(set(x), {"id", "name", "description", "custom"})
            self.assertIs(x["custom"], False)
        own = [x for x in data[52:]]
        self.assertEqual([x["id"] for x in own][-2:], [t["id"], t2["id"]])
        # the user's own are listed without their instruction too (API.md §24)
        self.assertEqual(own[-2], {k: v for k, v in t.items() if k != "instruction"})
        for x in own:
            self.assertNotIn("instruction", x)
        # one: a builtin without instruction, or the user's own
        r = self.req("GET", "/api/v1/templates/6")
        self.assertEqual((r.status, r.json["status"]), (200, 200))
        self.assertEqual(r.json["data"]["name"], "Blog outline")
        self.assertNotIn("instruction", r.json["data"])
        r = self.req("GET", f"/api/v1/templates/{t['id']}")
        self.assertEqual((r.status, r.json["data"]), (200, t))
        # change: only the fields sent
        r = self.req("PATCH", f"/api/v1/templates/{t['id']}", form={"name": "Haiku nook"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["status"], 200)
        u = r.json["data"]
        self.assertEqual((u["name"], u["description"], u["instruction"]),
                         ("Haiku nook", t["description"], t["instruction"]))
        r = self.req("PATCH", f"/api/v1/templates/{t['id']}",
                     json_body={"instruction": "Only limericks."})
        self.assertEqual((r.status, r.json["data"]["instruction"], r.json["data"]["name"]),
                         (200, "Only limericks.", "Haiku nook"))
        r = self.req("PATCH", f"/api/v1/templates/{t['id']}", form={})
        self.assertEqual((r.status, r.json["data"]["instruction"]), (200, "Only limericks."))
        # delete: gone for every route
        r = self.req("DELETE", f"/api/v1/templates/{t2['id']}")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json, {"id": t2["id"], "object": "template", "deleted": True,
                                  "status": 200})
        for method in ("GET", "PATCH", "DELETE"):
            r = self.req(method, f"/api/v1/templates/{t2['id']}",
                         form={"name": "x"} if method == "PATCH" else None)
            self.assertError(r, 404, "Resource not found.")
        ids = [x["id"] for x in self.req("GET", "/api/v1/templates").json["data"]]
        self.assertNotIn(t2["id"], ids)
        self.assertIn(t["id"], ids)

    def test_other_users_templates(self):
        t = self.make_tpl(name="Alice only")
        for method in ("GET", "PATCH", "DELETE"):
            r = self.req(method, f"/api/v1/templates/{t['id']}", key="bob",
                         form={"name": ""} if method == "PATCH" else None)
            self.assertError(r, 404, "Resource not found.")
        self.assertNotIn(t["id"], [x["id"] for x in self.req("GET", "/api/v1/templates",
                                                             key="bob").json["data"]])
        # as a template_id: 422, on store and on regenerate
        r = self.req("POST", "/api/v1/documents", key="bob",
                     form={"name": "n", "prompt": "p", "template_id": str(t["id"])})
        self.assert422(r, "template_id")
        d = self.make_doc(key="bob")
        self.assert422(self.regen(d["id"], {"template_id": str(t["id"])}, key="bob"), "template_id")
        # as a list filter it is outside bob's set: the default (every template)
        r = self.req("GET", f"/api/v1/documents?template_id={t['id']}", key="bob")
        self.assertEqual(r.status, 200)
        self.assertIn(d["id"], [x["id"] for x in r.json["data"]])
        # alice's template is untouched
        r = self.req("GET", f"/api/v1/templates/{t['id']}")
        self.assertEqual((r.status, r.json["data"]["name"]), (200, "Alice only"))

    def test_streams_idempotency_jobs_and_revisions(self):
        t = self.make_tpl(name="Tea notes")
        tid = str(t["id"])
        # a streamed create: the record and done events name the template
        s = Stream(self.srv.port, "POST", "/api/v1/documents", self.alice,
                   form={"name": "s", "prompt": "green tea", "template_id": tid})
        self.assertEqual(s.status, 201)
        evs = s.events()
        self.assertEqual((evs[0][0], evs[-1][0]), ("record", "done"))
        self.assertEqual(evs[0][2]["template"], "Tea notes")
        done = evs[-1][2]
        self.assertEqual((done["template_id"], done["template"]), (t["id"], "Tea notes"))
        self.assertEqual("".join(e[2]["text"] for e in evs if e[0] == "delta"), done["result"])
        self.assertTrue(done["result"].startswith("## Tea notes\n\n"))
        # a streamed show of it
        s = Stream(self.srv.port, "GET", f"/api/v1/documents/{done['id']}", self.alice)
        evs = s.events()
        self.assertEqual(evs[0][2]["template"], "Tea notes")
        # a regenerate with an Idempotency-Key (its answer is kept in the store's
        # transaction) into the custom template, replayed as it was
        d = self.make_doc(prompt="oolong")
        h = {"Idempotency-Key": f"tpl-regen-{d['id']}"}
        r1 = self.regen(d["id"], {"template_id": tid}, headers=h)
        self.assertEqual(r1.status, 200, r1)
        self.assertEqual(r1.json["data"]["template"], "Tea notes")
        r2 = self.regen(d["id"], {"template_id": tid}, headers=h)
        self.assertEqual((r2.status, r2.body), (200, r1.body))
        self.assertEqual(r2.header("Idempotent-Replayed"), "true")
        # an async regenerate (a job) and the revisions it leaves; its kept answer is
        # rendered inside the store's transaction, where the record (still showing its
        # custom template) needs its name looked up without ending that transaction
        r = self.regen(d["id"], {"prompt": "sencha"}, headers={**ASYNC, "Idempotency-Key": "tpl-a"})
        self.assertEqual(r.status, 202, r)
        self.assertEqual((r.json["data"]["template"], r.json["data"]["state"]), ("Tea notes", "queued"))
        d2 = poll_state(self.srv, self.alice, f"/api/v1/documents/{d['id']}")
        self.assertEqual((d2["revision"], d2["template_id"], d2["error"]), (3, t["id"], None))
        self.assertTrue(d2["result"].startswith("## Tea notes\n\n"), d2["result"])
        self.assertIn("sencha", d2["result"].lower())
        revs = self.req("GET", f"/api/v1/documents/{d['id']}/revisions").json["data"]
        self.assertEqual([x["template_id"] for x in revs], [t["id"], t["id"], 1])
        # restoring revision 1 brings back its builtin template
        r = self.req("POST", f"/api/v1/documents/{d['id']}/revisions/1/restore")
        self.assertEqual((r.status, r.json["data"]["template"]), (200, "Freestyle"))

    def test_builtin_templates_are_read_only(self):
        for tid in (1, 17, 52):
            for method in ("PATCH", "DELETE", "PUT", "POST"):
                r = self.req(method, f"/api/v1/templates/{tid}", form={"name": "x"})
                self.assertError(r, 405, "Method not allowed.")
                self.assertEqual(r.header("Allow"), "GET, HEAD")
        r = self.req("POST", "/api/v1/templates/1001", form={"name": "x"})
        self.assertError(r, 405)
        self.assertEqual(r.header("Allow"), "GET, HEAD, PATCH, DELETE")
        r = self.req("DELETE", "/api/v1/templates")
        self.assertError(r, 405)
        self.assertEqual(r.header("Allow"), "GET, HEAD, POST")
        for bad in ("0", "53", "1000", "abc", "01", "99999999999999999999"):
            r = self.req("GET", f"/api/v1/templates/{bad}")
            self.assertError(r, 404, "Resource not found.")
        # ids between the 52 and 1001 are nobody's: 422 as a template_id
        for bad in ("53", "1000", "0", "x"):
            r = self.req("POST", "/api/v1/documents",
                         form={"name": "n", "prompt": "p", "template_id": bad})
            self.assert422(r, "template_id")

    def test_validation(self):
        r = self.req("POST", "/api/v1/templates", form={})
        self.assertEqual(r.status, 422, r)
        self.assertEqual(set(r.json["message"]), {"name", "description", "instruction"})
        self.assertEqual(r.json["message"]["name"], ["The name field is required."])
        r = self.req("POST", "/api/v1/templates", form=tpl_form(name="   "))
        self.assert422(r, "name")
        # lengths count code points: multibyte characters at the limit pass, one more fails
        for field, limit in (("name", 100), ("description", 255), ("instruction", 8000)):
            for ch in ("é", "😀", "a"):
                r = self.req("POST", "/api/v1/templates", form=tpl_form(**{field: ch * limit}))
                self.assertEqual(r.status, 201, (field, ch, r))
                self.assertEqual(r.json["data"][field], ch * limit)
                r = self.req("POST", "/api/v1/templates", form=tpl_form(**{field: ch * (limit + 1)}))
                self.assert422(r, field)
                self.assertEqual(set(r.json["message"]), {field})
        r = self.req("POST", "/api/v1/templates", form="name=%G1&description=d&instruction=i")
        self.assert422(r, "name")
        r = self.req("POST", "/api/v1/templates", form="name=a%00b&description=d&instruction=i")
        self.assert422(r, "name")
        r = self.req("POST", "/api/v1/templates", body="name=x",
                     headers={"Content-Type": "text/plain"})
        self.assertError(r, 415, "Unsupported media type.")
        r = self.req("POST", "/api/v1/templates", json_body=tpl_form(name="From JSON"))
        self.assertEqual((r.status, r.json["data"]["name"]), (201, "From JSON"))
        t = r.json["data"]
        # a change: empty or too long → 422, and nothing changed
        for field, limit in (("name", 100), ("description", 255), ("instruction", 8000)):
            r = self.req("PATCH", f"/api/v1/templates/{t['id']}", form={field: ""})
            self.assert422(r, field)
            r = self.req("PATCH", f"/api/v1/templates/{t['id']}", form={field: "ж" * (limit + 1)})
            self.assert422(r, field)
            r = self.req("PATCH", f"/api/v1/templates/{t['id']}", form={field: "ж" * limit})
            self.assertEqual((r.status, r.json["data"][field]), (200, "ж" * limit))
        # unauthenticated
        r = self.req("POST", "/api/v1/templates", key=None, form=tpl_form())
        self.assertError(r, 401, "Unauthenticated.")

    def test_read_keys_only_read(self):
        t = self.make_tpl(name="Readable")
        reader = self.srv.cli("key", "create", "--user", "alice", "--scope", "read").stdout.strip()
        self.assertEqual(self.req("GET", "/api/v1/templates", key=reader).status, 200)
        r = self.req("GET", f"/api/v1/templates/{t['id']}", key=reader)
        self.assertEqual((r.status, r.json["data"]["name"]), (200, "Readable"))
        for method, path in (("POST", "/api/v1/templates"),
                             ("PATCH", f"/api/v1/templates/{t['id']}"),
                             ("DELETE", f"/api/v1/templates/{t['id']}")):
            r = self.req(method, path, key=reader, form=tpl_form())
            self.assertError(r, 403, "This key may only read.")
        self.assertEqual(self.req("GET", f"/api/v1/templates/{t['id']}").status, 200)

    def test_used_everywhere_with_the_builtin_generator(self):
        t = self.make_tpl(name="Garden\nnotes")
        tid = str(t["id"])
        # store, waiting (generated inline) and async (a job): freestyle text under its name.
        # creativity 0: the builtin text then depends on the prompt alone (with the default
        # 0.5 one text in ~30 is about the balcony without a word on the tomatoes)
        d = self.make_doc(name="Inline", prompt="tomatoes on a balcony", template_id=tid,
                          creativity="0")
        self.assertEqual((d["template_id"], d["template"], d["state"]),
                         (t["id"], "Garden\nnotes", "completed"))
        self.assertTrue(d["result"].startswith("## Garden notes\n\n"), d["result"])
        self.assertIn("tomato", d["result"].lower())
        r = self.req("POST", "/api/v1/documents", headers=ASYNC,
                     form={"name": "Job", "prompt": "basil in pots", "template_id": tid})
        self.assertEqual(r.status, 202, r)
        self.assertEqual(r.json["data"]["template"], "Garden\nnotes")
        j = poll_state(self.srv, self.alice, f"/api/v1/documents/{r.json['data']['id']}")
        self.assertEqual(j["state"], "completed", j)
        self.assertTrue(j["result"].startswith("## Garden notes\n\n"), j["result"])
        other = self.make_doc(name="Plain", prompt="tea")
        # the list filter
        r = self.req("GET", f"/api/v1/documents?template_id={tid}")
        self.assertEqual(sorted(x["id"] for x in r.json["data"]), sorted([d["id"], j["id"]]))
        self.assertEqual(r.json["meta"]["total"], 2)
        for x in r.json["data"]:
            self.assertEqual(x["template"], "Garden\nnotes")
        # regenerate: into the custom template, and out of it
        r = self.regen(other["id"], {"template_id": tid})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["template_id"], r.json["data"]["template"]),
                         (t["id"], "Garden\nnotes"))
        self.assertTrue(r.json["data"]["result"].startswith("## Garden notes"))
        r = self.regen(j["id"], {"template_id": "6"})
        self.assertEqual((r.status, r.json["data"]["template"]), (200, "Blog outline"))
        # a rename shows on its documents (show and list, past any kept rendering)
        r = self.req("PATCH", f"/api/v1/templates/{tid}", form={"name": "Balcony garden"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]["template"],
                         "Balcony garden")
        r = self.req("GET", f"/api/v1/documents?template_id={tid}")
        self.assertEqual({x["template"] for x in r.json["data"]}, {"Balcony garden"})
        # delete: the documents stay as they are, named; the filter still finds them
        r = self.req("DELETE", f"/api/v1/templates/{tid}")
        self.assertEqual(r.status, 200, r)
        kept = self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]
        self.assertEqual((kept["template_id"], kept["template"], kept["result"]),
                         (t["id"], "Balcony garden", d["result"]))
        r = self.req("GET", f"/api/v1/documents?template_id={tid}")
        self.assertEqual(sorted(x["id"] for x in r.json["data"]), sorted([d["id"], other["id"]]))
        # regenerating without another template_id → 422; with one it works
        r = self.regen(d["id"])
        self.assert422(r, "template_id")
        r = self.regen(d["id"], {"prompt": "other words"})
        self.assert422(r, "template_id")
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]["revision"],
                         kept["revision"])
        r = self.regen(d["id"], {"template_id": "1"})
        self.assertEqual((r.status, r.json["data"]["template"]), (200, "Freestyle"))
        # a deleted template is no template_id for a new document either
        r = self.req("POST", "/api/v1/documents", form={"name": "n", "prompt": "p", "template_id": tid})
        self.assert422(r, "template_id")


class CustomTemplatesOpenAI(TemplatesMixin, unittest.TestCase):
    """With a real model's API (the fake): the template's instruction is what it is told."""

    @classmethod
    def setUpClass(cls):
        cls.fake = Fake()
        cls.srv = Server("--provider", "openai", "--openai-base-url", cls.fake.base + "/v1",
                         "--text-model", "test-model-1", "--wait-limit", str(slow(60)),
                         env={"OPENAI_API_KEY": SECRET}).start()
        cls.alice = cls.srv.key("alice")
        cls.bob = cls.srv.key("bob")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.fake.stop()
        assert rc == 0

    def req(self, method, path, key="alice", **kw):
        k = {"alice": self.alice, "bob": self.bob, None: None}.get(key, key)
        return self.srv.request(method, path, key=k, **kw)

    def system_messages(self):
        out = []
        for q in self.fake.requests():
            if q["path"] == "/v1/chat/completions":
                msgs = q["json"]["messages"]
                self.assertEqual(msgs[0]["role"], "system")
                # the instruction leads the system message; gen/prompt.c adds the
                # writing options and the Markdown request after a blank line
                instr, _, rest = msgs[0]["content"].partition("\n\n")
                self.assertIn("Markdown", rest)
                out.append((instr, msgs[-1]["content"]))
        return out

    def test_instruction_reaches_the_model(self):
        instr = "INSTR-7Q: answer only in limericks about ✓ and ünïcode."
        t = self.make_tpl(name="Limerick", instruction=instr)
        self.fake.script()
        r = self.req("POST", "/api/v1/documents",
                     form={"name": "n", "prompt": "cats", "template_id": str(t["id"])})
        self.assertEqual(r.status, 201, r)
        d = r.json["data"]
        self.assertEqual((d["template"], d["result"]), ("Limerick", "Echo: cats"))
        self.assertEqual(self.system_messages(), [(instr, "cats")])
        # as a job (async), and a regenerate
        self.fake.script()
        r = self.req("POST", "/api/v1/documents", headers=ASYNC,
                     form={"name": "n", "prompt": "dogs", "template_id": str(t["id"])})
        self.assertEqual(r.status, 202, r)
        poll_state(self.srv, self.alice, f"/api/v1/documents/{r.json['data']['id']}")
        self.assertEqual(self.system_messages(), [(instr, "dogs")])
        # a changed instruction is what the next generation gets
        instr2 = "INSTR-8R: write a sonnet."
        r = self.req("PATCH", f"/api/v1/templates/{t['id']}", form={"instruction": instr2})
        self.assertEqual(r.status, 200, r)
        self.fake.script()
        r = self.regen(d["id"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.system_messages(), [(instr2, "cats")])
        # a builtin template's own instruction is unchanged
        self.fake.script()
        r = self.req("POST", "/api/v1/documents", form={"name": "n", "prompt": "x", "template_id": "6"})
        self.assertEqual(r.status, 201, r)
        [(system, _)] = self.system_messages()
        self.assertIn("outline", system.lower())
        # another user's template: 422, and the model is never asked
        self.fake.script()
        r = self.req("POST", "/api/v1/documents", key="bob",
                     form={"name": "n", "prompt": "x", "template_id": str(t["id"])})
        self.assert422(r, "template_id")
        self.assertEqual(self.system_messages(), [])


if __name__ == "__main__":
    unittest.main()
