"""Black-box tests of API.md §15, search and order for every language: search folds
case in every script (Unicode default case folding; accents significant; % and _
literal), name order is the CLDR root collation with ties by id, for documents and
images, searched by name and by result, with the record cache on and off; and the
same data gives the same answers on SQLite and PostgreSQL."""
import random
import unittest
import urllib.parse
import uuid

from harness import PG_URL, Server, ServerTest, pg_database

# API.md §15's own example, in the order it gives
ROOT_ORDER = ["apple pie", "Ärger", "Banana", "éclair", "zebra", "Zürich", "Ωmega", "Кот"]

SEARCH_NAMES = ["Мой Кот", "КОТ и пёс", "кот", "Ωmega", "ωmega plan", "Éclair", "éclair",
                "Straße", "STRASSE", "café", "cafe", "東京タワー", "100% _x_", "plain"]

# search -> the names it finds (as a set: the order is tested apart)
SEARCHES = {
    "кот": {"Мой Кот", "КОТ и пёс", "кот"},
    "КОТ": {"Мой Кот", "КОТ и пёс", "кот"},
    "Кот": {"Мой Кот", "КОТ и пёс", "кот"},
    "кОт И": {"КОТ и пёс"},
    "ПЁС": {"КОТ и пёс"},
    "ω": {"Ωmega", "ωmega plan"},
    "ΩMEGA": {"Ωmega", "ωmega plan"},
    "é": {"Éclair", "éclair", "café"},
    "ÉCLAIR": {"Éclair", "éclair"},
    "eclair": set(),
    "ss": {"Straße", "STRASSE"},
    "ß": {"Straße", "STRASSE"},
    "straße": {"Straße", "STRASSE"},
    "STRASSE": {"Straße", "STRASSE"},
    "cafe": {"cafe"},
    "café": {"café"},
    "CAFÉ": {"café"},
    "東京": {"東京タワー"},
    "タワー": {"東京タワー"},
    "京タ": {"東京タワー"},
    "%": {"100% _x_"},
    "_": {"100% _x_"},
    "0% _X": {"100% _x_"},
    "%_": set(),
    "a_n": set(),
}


def q(params):
    return "?" + urllib.parse.urlencode(params)


class UnicodeLists(ServerTest):
    def fresh_user(self):
        return self.srv.key("u-" + uuid.uuid4().hex[:8])

    def listing(self, key, kind, params):
        r = self.req("GET", f"/api/v1/{kind}" + q(params), key=key)
        self.assertEqual(r.status, 200, r)
        return r.json

    def all_pages(self, key, kind, params, per_page=10):
        """Every page of a list of per_page joined, with the total each page gave."""
        out, page = [], 1
        while True:
            j = self.listing(key, kind, dict(params, per_page=per_page, page=page))
            out += j["data"]
            if len(j["data"]) < per_page:
                return out, j["meta"]["total"]
            page += 1

    def test_search_folds_case_in_every_script(self):
        k = self.fresh_user()
        for n in SEARCH_NAMES:
            self.make_doc(key=k, name=n)
            self.make_image(key=k, name=n)
        for kind in ("documents", "images"):
            for search, want in SEARCHES.items():
                for sort_by in ("id", "name"):
                    rows, total = self.all_pages(k, kind, {"search": search, "sort_by": sort_by})
                    got = [d["name"] for d in rows]
                    self.assertEqual(sorted(got), sorted(want), (kind, search, sort_by))
                    self.assertEqual(total, len(want), (kind, search))

    def test_search_by_result(self):
        k = self.fresh_user()
        texts = {"a": "Жил-был КОТ", "b": "ΣΊΣΥΦΟΣ rolls", "c": "Crème brûlée", "d": "STRASSE",
                 "e": "大きな猫", "f": "creme brulee"}
        for name, text in texts.items():
            d = self.make_doc(key=k, name=name)
            r = self.req("PATCH", f"/api/v1/documents/{d['id']}", key=k, form={"result": text})
            self.assertEqual(r.status, 200, r)
        cases = {"кот": ["a"], "жил-БЫЛ": ["a"], "σίσυφοσ": ["b"], "ΣΊΣ": ["b"],
                 "CRÈME": ["c"], "crème BRÛLÉE": ["c"], "creme": ["f"], "straße": ["d"],
                 "ß": ["d"], "猫": ["e"], "きな猫": ["e"], "brul": ["f"]}
        for search, want in cases.items():
            j = self.listing(k, "documents", {"search": search, "search_by": "result",
                                              "sort_by": "name", "sort": "asc"})
            self.assertEqual([d["name"] for d in j["data"]], want, search)
            self.assertEqual(j["meta"]["total"], len(want), search)
            # by name, the same search finds none of them (the names are a..f)
            j = self.listing(k, "documents", {"search": search})
            self.assertEqual(j["data"], [], search)

    def test_search_by_result_every_page(self):
        """Result searches over pages that span many blocks of SQLite's results' index
        (32 documents a row, migration 19), another user's documents between ours: every
        page joined is the whole answer in id and in name order, both ways, with the
        total; also after some texts change (searched by the new text only)."""
        k, other = self.fresh_user(), self.fresh_user()
        mine = []  # (id, name, text) in creation order
        for i in range(90):
            text = f"note {i} on a {'Кот' if i % 3 == 0 else 'heron'}"
            d = self.make_doc(key=k, name=f"n{i:02d}")
            r = self.req("PATCH", f"/api/v1/documents/{d['id']}", key=k, form={"result": text})
            self.assertEqual(r.status, 200, r)
            mine.append((d["id"], d["name"], text))
            if i % 2 == 0:
                self.make_doc(key=other, name=f"n{i:02d}")

        def check(search):
            want = [m for m in mine if search.casefold() in m[2].casefold()]
            for sort_by in ("id", "name"):
                for sort in ("asc", "desc"):
                    order = sorted(want, key=lambda m: m[0] if sort_by == "id" else (m[1], m[0]),
                                   reverse=sort == "desc")
                    rows, total = self.all_pages(k, "documents", {
                        "search": search, "search_by": "result", "sort_by": sort_by,
                        "sort": sort})
                    self.assertEqual([d["id"] for d in rows], [m[0] for m in order],
                                     (search, sort_by, sort))
                    self.assertEqual(total, len(want), (search, sort_by, sort))

        for search in ("кот", "HERON", "note", "note 4", "zebra"):
            check(search)
        for i in range(0, 90, 7):  # new texts: the old words no longer find them
            doc_id, name, _ = mine[i]
            text = f"note {i} now about a falcon"
            r = self.req("PATCH", f"/api/v1/documents/{doc_id}", key=k, form={"result": text})
            self.assertEqual(r.status, 200, r)
            mine[i] = (doc_id, name, text)
        for search in ("кот", "falcon", "note"):
            check(search)

    def test_name_order_across_scripts_with_ties(self):
        k = self.fresh_user()
        names = ROOT_ORDER + ["zebra", "Кот", "apple pie"]
        random.Random(7).shuffle(names)
        ids = {}
        for kind, make in (("documents", self.make_doc), ("images", self.make_image)):
            for n in names:
                ids.setdefault((kind, n), []).append(make(key=k, name=n)["id"])
            want = [(n, i) for n in ROOT_ORDER for i in sorted(ids[(kind, n)])]
            j = self.listing(k, kind, {"sort_by": "name", "sort": "asc", "per_page": 25})
            self.assertEqual([(d["name"], d["id"]) for d in j["data"]], want, kind)
            j = self.listing(k, kind, {"sort_by": "name", "sort": "desc", "per_page": 25})
            self.assertEqual([(d["name"], d["id"]) for d in j["data"]], want[::-1], kind)

    def ordered_names(self, n, seed):
        """n names whose root order is known: a base of ROOT_ORDER (the bases differ at
        their first letters), a number, sometimes the same name twice (a tie)."""
        rnd = random.Random(seed)
        out = []
        while len(out) < n:
            b = rnd.randrange(len(ROOT_ORDER))
            name = f"{ROOT_ORDER[b]} {rnd.randrange(100):02d}"
            out.append(((b, name[-2:]), name))
            if rnd.random() < 0.2:
                out.append(((b, name[-2:]), name))
        return out[:n]

    def test_pages_of_ten_join_to_the_whole_order(self):
        k = self.fresh_user()
        made = []
        for rank, name in self.ordered_names(57, 11):
            d = self.make_doc(key=k, name=name)
            made.append((rank, d["id"], name))
        asc = [(name, i) for rank, i, name in sorted(made)]
        for sort, want in (("asc", asc), ("desc", asc[::-1])):
            rows, total = self.all_pages(k, "documents", {"sort_by": "name", "sort": sort})
            self.assertEqual([(d["name"], d["id"]) for d in rows], want, sort)
            self.assertEqual(total, len(want))
            whole = self.listing(k, "documents", {"sort_by": "name", "sort": sort, "per_page": 100})
            self.assertEqual([(d["name"], d["id"]) for d in whole["data"]], want, sort)
        # search with the name order: a script's names, case-insensitively
        for search, base in (("КОТ", "Кот"), ("ω", "Ωmega"), ("zü", "Zürich"), ("ärg", "Ärger")):
            for sort, order in (("asc", asc), ("desc", asc[::-1])):
                want = [x for x in order if x[0].startswith(base)]
                rows, total = self.all_pages(k, "documents",
                                             {"search": search, "sort_by": "name", "sort": sort})
                self.assertEqual([(d["name"], d["id"]) for d in rows], want, (search, sort))
                self.assertEqual(total, len(want))


class UnicodeListsNoRecordCache(UnicodeLists):
    """The same with the record cache off (its lists read whole rows, not keys)."""
    server_args = ["--record-cache-mb", "0"]


class SameOnBothBackends(unittest.TestCase):
    """The same records on a SQLite and a PostgreSQL server: every list answers alike.
    (Only where a PostgreSQL server is given: the test runs wherever the suite does.)"""

    def test_same_answers(self):
        servers = [Server(database="").start(), Server(database=pg_database()).start()]
        try:
            rnd = random.Random(5)
            pool = ROOT_ORDER + SEARCH_NAMES + ["a", "A", "b", "ǅemal", "ﬁsh", "Ǆ", "ß", "ss",
                                                "e\u0301clair", "İstanbul", "ıstanbul", "日本",
                                                "\u00a0x", "x y", "x-y", "x_y", "X Y", ""]
            names = [rnd.choice(pool) + rnd.choice(["", " ", "1", " Ω", "é"]) for _ in range(80)]
            names = [n if n.strip() else "blank" for n in names]
            keys = []
            for srv in servers:
                key = srv.key("same")
                keys.append(key)
                for n in names:
                    r = srv.request("POST", "/api/v1/documents", key=key,
                                    form={"name": n, "prompt": "p"})
                    self.assertEqual(r.status, 201, r)
                    r = srv.request("POST", "/api/v1/images", key=key,
                                    form={"name": n, "description": "d", "resolution": "1024x1024"})
                    self.assertEqual(r.status, 201, r)
            queries = []
            for kind in ("documents", "images"):
                for search in [None, "é", "Ω", "кот", "SS", "ß", "x", "x y", "İ", "i", "ǆ", "fi"]:
                    for sort_by in ("name", "id"):
                        for sort in ("asc", "desc"):
                            for page in (1, 2, 3):
                                p = {"sort_by": sort_by, "sort": sort, "page": page,
                                     "per_page": 25}
                                if search:
                                    p["search"] = search
                                queries.append((kind, p))
            for kind, p in queries:
                got = []
                for srv, key in zip(servers, keys):
                    r = srv.request("GET", f"/api/v1/{kind}" + q(p), key=key)
                    self.assertEqual(r.status, 200, r)
                    # ids differ between the servers (other users' records): names and totals
                    got.append(([d["name"] for d in r.json["data"]], r.json["meta"]["total"]))
                self.assertEqual(got[0], got[1], (kind, p))
        finally:
            for srv in servers:
                srv.stop()


if not PG_URL:
    del SameOnBothBackends


if __name__ == "__main__":
    unittest.main()
