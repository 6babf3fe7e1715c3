"""Tags (API.md §23), black-box, on the backend under test: the `tags` field on store and
update (comma-separated or a JSON array; trimmed of Unicode white space, NFC, 1 to 50
code points, no commas, at most 20, one tag per §15 folding with the user's one
spelling), records showing them in the order given (create, show, list, update), no
revision for a tag change, GET /tags (counts, §15 order, only tags in use, per user), and
the `tag` filter: folded, a value that cannot be a tag matches nothing, and — a model
test — every list with a tag is exactly the same list without it restricted to the
records that carry the tag (search by name and result, template and favorite filters,
resolution and style, both orders both ways, every page, totals), before and after
tags, names and favorites change and records are deleted; with the record cache on and
off (two classes), and each change seen by the very next show and list."""
import json
import random
import unittest
import urllib.parse
import uuid

from harness import ServerTest

API = "/api/v1"
ROOT_ORDER = ["apple pie", "Ärger", "Banana", "éclair", "zebra", "Zürich", "Ωmega", "Кот"]


def q(params):
    return "?" + urllib.parse.urlencode(params)


class TagsMixin:
    def fresh(self):
        return self.srv.key("t-" + uuid.uuid4().hex[:8])

    def doc(self, key, **fields):
        body = {"name": "Doc", "prompt": "a post about tea"}
        body.update(fields)
        if isinstance(body.get("tags"), list):
            r = self.req("POST", API + "/documents", key=key, json_body=body)
        else:
            r = self.req("POST", API + "/documents", key=key, form=body)
        self.assertEqual(r.status, 201, r)
        return r.json["data"]

    def patch(self, key, path, **fields):
        if isinstance(fields.get("tags"), list):
            return self.req("PATCH", API + path, key=key, json_body=fields)
        return self.req("PATCH", API + path, key=key, form=fields)

    def tags_of(self, key):
        r = self.req("GET", API + "/tags", key=key)
        self.assertEqual((r.status, r.json["status"]), (200, 200), r)
        return r.json["data"]

    def assert422(self, r, field):
        self.assertEqual(r.status, 422, r)
        self.assertEqual(r.json["status"], 422)
        self.assertIn(field, r.json["message"], r)

    def all_ids(self, key, kind, params):
        """Every id of a list, through its pages of 100, and its total."""
        ids, page, total = [], 1, None
        while True:
            r = self.req("GET", f"{API}/{kind}" + q(dict(params, per_page=100, page=page)),
                         key=key)
            self.assertEqual(r.status, 200, r)
            total = r.json["meta"]["total"]
            ids += [x["id"] for x in r.json["data"]]
            if page >= r.json["meta"]["last_page"]:
                return ids, total
            page += 1


class TagFields(TagsMixin, ServerTest):
    def test_store_update_show(self):
        k = self.fresh()
        d = self.doc(k, tags=" Travel ,\u3000notes\u00a0, travel,caf\u0065\u0301")
        self.assertEqual(d["tags"], ["Travel", "notes", "café"])
        self.assertEqual(d["revision"], 1)
        r = self.req("GET", f"{API}/documents/{d['id']}", key=k)
        self.assertEqual(r.json["data"]["tags"], ["Travel", "notes", "café"])
        self.assertEqual(r.json["data"], d)
        # a JSON array, in the order given
        d2 = self.doc(k, tags=["zeta", "Alpha", "TRAVEL"])
        self.assertEqual(d2["tags"], ["zeta", "Alpha", "Travel"])  # the user's spelling
        # update: replaced, cleared; no revision; the list shows it at once
        r = self.patch(k, f"/documents/{d['id']}", tags="b,a")
        self.assertEqual((r.status, r.json["data"]["tags"], r.json["data"]["revision"]),
                         (200, ["b", "a"], 1))
        r = self.req("GET", f"{API}/documents" + q({"per_page": 100}), key=k)
        self.assertEqual({x["id"]: x["tags"] for x in r.json["data"]},
                         {d["id"]: ["b", "a"], d2["id"]: ["zeta", "Alpha", "Travel"]})
        r = self.patch(k, f"/documents/{d['id']}", tags="")
        self.assertEqual((r.status, r.json["data"]["tags"]), (200, []))
        r = self.patch(k, f"/documents/{d['id']}", tags=[])
        self.assertEqual((r.status, r.json["data"]["tags"]), (200, []))
        # name, favorite and tag changes make no revision; the fields not sent stay
        r = self.patch(k, f"/documents/{d2['id']}", name="Renamed", favorite="1")
        self.assertEqual((r.json["data"]["tags"], r.json["data"]["revision"]),
                         (["zeta", "Alpha", "Travel"], 1))
        # images too
        r = self.req("POST", API + "/images", key=k,
                     form={"name": "P", "description": "a red sunset", "resolution": "1024x1024",
                           "tags": "Sky,alpha"})
        self.assertEqual(r.status, 201, r)
        img = r.json["data"]
        self.assertEqual(img["tags"], ["Sky", "Alpha"])
        self.assertNotIn("has_draft", img)
        r = self.patch(k, f"/images/{img['id']}", tags=["sea"])
        self.assertEqual((r.status, r.json["data"]["tags"]), (200, ["sea"]))
        # not another user's
        self.assertEqual(self.patch(self.bob, f"/images/{img['id']}", tags="x").status, 404)

    def test_limits(self):
        k = self.fresh()
        d = self.doc(k)
        self.assertEqual(d["tags"], [])
        twenty = [f"t{i}" for i in range(20)]
        r = self.patch(k, f"/documents/{d['id']}", tags=",".join(twenty))
        self.assertEqual((r.status, r.json["data"]["tags"]), (200, twenty))
        self.assert422(self.patch(k, f"/documents/{d['id']}", tags=twenty + ["t20"]), "tags")
        # equal under the folding: one tag, so 21 spellings of 20 tags are fine
        r = self.patch(k, f"/documents/{d['id']}", tags=twenty + ["T0"])
        self.assertEqual((r.status, len(r.json["data"]["tags"])), (200, 20))
        fifty = "ж" * 50
        r = self.patch(k, f"/documents/{d['id']}", tags=[fifty, " " + "é" * 50 + " "])
        self.assertEqual((r.status, r.json["data"]["tags"]), (200, [fifty, "é" * 50]))
        for bad in (["x" * 51], ["a,b"], [""], ["  "], [1], [["x"]], ["a\u0000b"]):
            self.assert422(self.patch(k, f"/documents/{d['id']}", tags=bad), "tags")
        self.assert422(self.patch(k, f"/documents/{d['id']}", tags="x" * 51), "tags")
        self.assert422(self.req("PATCH", f"{API}/documents/{d['id']}", key=k,
                                body="tags=%G1", headers={"Content-Type":
                                "application/x-www-form-urlencoded"}), "tags")
        r = self.req("POST", API + "/documents", key=k,
                     form={"name": "n", "prompt": "p", "tags": ",".join(twenty + ["z"])})
        self.assert422(r, "tags")
        # nothing changed by the refused ones
        r = self.req("GET", f"{API}/documents/{d['id']}", key=k)
        self.assertEqual(r.json["data"]["tags"], [fifty, "é" * 50])
        # a trailing comma and blank pieces of a comma list are passed over
        r = self.patch(k, f"/documents/{d['id']}", tags="a, ,b,")
        self.assertEqual((r.status, r.json["data"]["tags"]), (200, ["a", "b"]))

    def test_spelling(self):
        k = self.fresh()
        a = self.doc(k, tags="Garden")
        b = self.doc(k, tags="GARDEN,x")
        self.assertEqual(b["tags"], ["Garden", "x"])
        # while another record carries it, the first spelling stays
        r = self.patch(k, f"/documents/{a['id']}", tags="garden")
        self.assertEqual(r.json["data"]["tags"], ["Garden"])
        # the only one carrying it gives it a new spelling (renaming by editing)
        self.patch(k, f"/documents/{b['id']}", tags="x")
        r = self.patch(k, f"/documents/{a['id']}", tags="gARDEN")
        self.assertEqual(r.json["data"]["tags"], ["gARDEN"])
        # no record carries it: the next to store it spells it
        self.patch(k, f"/documents/{a['id']}", tags="")
        c = self.doc(k, tags=["garden"])
        self.assertEqual(c["tags"], ["garden"])
        # a deleted record's tags go with it
        self.assertEqual(self.req("DELETE", f"{API}/documents/{c['id']}", key=k).status, 200)
        self.assertEqual(self.tags_of(k), [{"name": "x", "documents": 1, "images": 0}])
        d = self.doc(k, tags="GARDEN")
        self.assertEqual(d["tags"], ["GARDEN"])
        # every user has their own
        e = self.doc(self.bob, tags="garden")
        self.assertEqual(e["tags"], ["garden"])

    def test_tags_index(self):
        k = self.fresh()
        self.assertEqual(self.tags_of(k), [])
        names = list(ROOT_ORDER)
        random.Random(5).shuffle(names)
        for i, n in enumerate(names):
            self.doc(k, tags=[n] + (["Banana"] if i % 2 else []))
        r = self.req("POST", API + "/images", key=k,
                     form={"name": "P", "description": "d", "resolution": "1024x1024",
                           "tags": "banana,NEW"})
        self.assertEqual(r.status, 201, r)
        got = self.tags_of(k)
        self.assertEqual([t["name"] for t in got], ROOT_ORDER[:4] + ["NEW"] + ROOT_ORDER[4:])
        counts = {t["name"]: (t["documents"], t["images"]) for t in got}
        banana = sum(1 for i, n in enumerate(names) if i % 2 or n == "Banana")
        self.assertEqual(counts["Banana"], (banana, 1))
        self.assertEqual(counts["NEW"], (0, 1))
        self.assertEqual(counts["Кот"], (1, 0))
        self.assertEqual([t for t in self.tags_of(self.fresh())], [])

    def test_idempotent_create(self):
        """A kept answer (§11) shows the tags with the user's spellings, as the first did."""
        k = self.fresh()
        self.doc(k, tags="Kept")
        h = {"Idempotency-Key": uuid.uuid4().hex}
        form = {"name": "I", "prompt": "tea", "tags": "KEPT,new"}
        a = self.req("POST", API + "/documents", key=k, form=form, headers=h)
        b = self.req("POST", API + "/documents", key=k, form=form, headers=h)
        self.assertEqual((a.status, b.status), (201, 201), (a, b))
        self.assertEqual(a.json["data"]["tags"], ["Kept", "new"])
        self.assertEqual(b.json, a.json)
        self.assertEqual(self.req("GET", f"{API}/documents/{a.json['data']['id']}",
                                  key=k).json["data"]["tags"], ["Kept", "new"])

    def test_filter(self):
        k = self.fresh()
        a = self.doc(k, tags="Straße,cat")
        b = self.doc(k, tags="STRASSE")  # the same tag under the folding
        self.assertEqual(b["tags"], ["Straße"])
        self.doc(k, tags="dog")
        self.doc(self.bob, tags="straße")
        for tag in ("straße", "STRASSE", "strasse", " Straße\u2003"):
            ids, total = self.all_ids(k, "documents", {"tag": tag})
            self.assertEqual((ids, total), ([b["id"], a["id"]], 2), tag)
        for tag in ("", "a,b", "x" * 51, "nope", "Strasse2"):
            ids, total = self.all_ids(k, "documents", {"tag": tag})
            self.assertEqual((ids, total), ([], 0), tag)
        self.assertEqual(self.all_ids(k, "images", {"tag": "cat"}), ([], 0))
        r = self.req("GET", f"{API}/documents?tag=%G1", key=k)
        self.assert422(r, "tag")


class TagModel(TagsMixin, ServerTest):
    """Every list with a tag is the list without it restricted to the tag's carriers."""
    server_args = []
    POOL = ["red", "Blue", "grün", "Ωmega", "кот", "common"]
    SPELL = {"red": ["RED", "Red"], "Blue": ["blue", "BLUE"], "grün": ["GRÜN", "Grün"],
             "Ωmega": ["ωmega", "ΩMEGA"], "кот": ["КОТ", "Кот"], "common": ["COMMON"]}
    NAMES = ["garden tea", "Garden Tea", "Ärger", "apple pie", "zebra", "Кот", "éclair",
             "tea garden", "Tea", "Zürich"]

    def pick_tags(self, rnd):
        tags = [t for t in self.POOL[:-1] if rnd.random() < 0.3]
        if rnd.random() < 0.9:
            tags.append("common")
        rnd.shuffle(tags)
        return [rnd.choice([t] + self.SPELL[t]) for t in tags]

    def fold(self, t):
        return t.casefold()

    def check(self, key, kind, model, rnd, rounds):
        filters = {"documents": [{}, {"favorite": "1"}, {"favorite": "0"}, {"template_id": "2"},
                                 {"search": "garden"}, {"search": "tea", "search_by": "result"},
                                 {"search": "GA"}, {"search": "the", "search_by": "result"},
                                 {"search": "garden", "favorite": "1", "template_id": "1"}],
                   "images": [{}, {"resolution": "1792x1024"}, {"style": "vivid"},
                              {"search": "garden"}, {"favorite": "1", "style": "natural"}]}
        for n in range(rounds):
            base = dict(rnd.choice(filters[kind]) if n > 1 else {})
            base["sort_by"] = rnd.choice(["id", "name"]) if n > 1 else ["id", "name"][n]
            base["sort"] = rnd.choice(["asc", "desc"])
            tag = rnd.choice(self.POOL + ["none"]) if n > 1 else "common"
            spelled = rnd.choice([tag] + self.SPELL.get(tag, []))
            full, _ = self.all_ids(key, kind, base)
            want = [i for i in full if self.fold(tag) in model[i]]
            per_page = rnd.choice([10, 25])
            params = dict(base, tag=spelled, per_page=per_page)
            last = max(1, -(-len(want) // per_page))
            pages = sorted({1, last, last + 1, rnd.randint(1, last)})
            if len(want) > 256:
                pages.append(27)  # past a page boundary (deep pages seek)
            for page in pages:
                r = self.req("GET", f"{API}/{kind}" + q(dict(params, page=page)), key=key)
                self.assertEqual(r.status, 200, r)
                got = [x["id"] for x in r.json["data"]]
                exp = want[(page - 1) * per_page:page * per_page]
                self.assertEqual(got, exp, (params, page))
                self.assertEqual(r.json["meta"]["total"], len(want), params)
                for x in r.json["data"]:  # what each shows agrees with the model
                    self.assertEqual({self.fold(t) for t in x["tags"]}, model[x["id"]])

    def test_model_documents(self):
        rnd = random.Random(23)
        k = self.fresh()
        model = {}
        for i in range(290):
            tags = self.pick_tags(rnd)
            d = self.doc(k, name=rnd.choice(self.NAMES) + ("" if i % 3 else f" {i}"),
                         prompt=rnd.choice(["garden tea", "the sea", "tea"]),
                         template_id=rnd.choice([1, 2]), favorite=rnd.choice(["0", "1"]),
                         tags=tags)
            model[d["id"]] = {self.fold(t) for t in tags}
        self.doc(self.bob, tags="common,red")  # another user's are never seen
        self.check(k, "documents", model, rnd, 14)
        # changes: tags, names, favorites, deletes; then again
        ids = sorted(model)
        for i in rnd.sample(ids, 40):
            tags = self.pick_tags(rnd)
            r = self.patch(k, f"/documents/{i}", tags=tags)
            self.assertEqual(r.status, 200, r)
            model[i] = {self.fold(t) for t in tags}
            shown = self.req("GET", f"{API}/documents/{i}", key=k).json["data"]["tags"]
            self.assertEqual({self.fold(t) for t in shown}, model[i])
        for i in rnd.sample(ids, 10):
            self.patch(k, f"/documents/{i}", name=rnd.choice(self.NAMES), favorite="1")
        for i in rnd.sample(ids, 15):
            if i in model:
                self.assertEqual(self.req("DELETE", f"{API}/documents/{i}", key=k).status, 200)
                del model[i]
        r = self.req("POST", f"{API}/documents/bulk", key=k,
                     form={"ids": ",".join(map(str, sorted(model)[:30])), "action": "untag",
                           "tags": "COMMON"})
        self.assertEqual(r.status, 200, r)
        for i in sorted(model)[:30]:
            model[i].discard("common")
        self.check(k, "documents", model, rnd, 14)
        # GET /tags agrees with the model
        counts = {}
        for tags in model.values():
            for t in tags:
                counts[t] = counts.get(t, 0) + 1
        got = {self.fold(t["name"]): t["documents"] for t in self.tags_of(k)}
        self.assertEqual(got, counts)

    def test_model_images(self):
        rnd = random.Random(7)
        k = self.fresh()
        model = {}
        for i in range(40):
            tags = self.pick_tags(rnd)
            r = self.req("POST", API + "/images", key=k, json_body={
                "name": rnd.choice(self.NAMES), "description": "a garden",
                "resolution": rnd.choice(["1024x1024", "1792x1024"]),
                "style": rnd.choice(["vivid", "natural"]), "favorite": rnd.choice([True, False]),
                "tags": tags})
            self.assertEqual(r.status, 201, r)
            model[r.json["data"]["id"]] = {self.fold(t) for t in tags}
        self.check(k, "images", model, rnd, 10)


class TagModelNoCache(TagModel):
    server_args = ["--record-cache-mb", "0"]


if __name__ == "__main__":
    unittest.main()
