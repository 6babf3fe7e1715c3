"""A document's text comes back exactly however the store keeps it. On SQLite it is
stored packed (zstd) when that is shorter (src/store/sqlite_text.c, migration 20): the
file is read with python's sqlite3 to see that, and a database of the previous form
(plain TEXT columns, schema_migrations without 20) is converted in place."""
import os
import sqlite3
import unittest
from urllib.parse import quote

from harness import BACKEND, Server, ServerTest, stored_text

LONG = " ".join(f"Paragraph {i}: green tea, black tea and white tea are all made from the "
                f"leaves of Camellia sinensis." for i in range(60))
CYRILLIC = ("Зелёный чай — чай, который не прошёл ферментацию. Учёный кот пьёт зелёный чай "
            "каждое утро, а ΩMEGA пьёт чёрный. Зелёный чай пьют в Китае и в Японии.")
SHORT = "ok"  # not shorter packed: kept as TEXT

SCHEMA_SQL = ("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND "
              "(tbl_name IN ('documents', 'document_revisions', 'search_changed') AND type IN "
              "('index', 'trigger') OR type = 'trigger' AND (sql LIKE '%documents%' OR "
              "sql LIKE '%document_revisions%' OR sql LIKE '%search_changed%')) ORDER BY rowid")


def stored(srv, sql):
    db = sqlite3.connect(os.path.join(srv.data_dir, "inkwell.db"))
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


class StoredText(ServerTest):
    def edit(self, doc_id, text):
        r = self.req("PUT", f"/api/v1/documents/{doc_id}", form={"result": text})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["result"], text)
        return r.json["data"]

    def search(self, word):
        r = self.req("GET", f"/api/v1/documents?search_by=result&search={quote(word)}&per_page=100")
        self.assertEqual(r.status, 200, r)
        return {d["id"]: d["result"] for d in r.json["data"]}

    def test_every_read_gives_the_exact_text(self):
        d = self.make_doc(prompt="a post about green tea")
        generated = d["result"]
        self.edit(d["id"], LONG)
        self.edit(d["id"], CYRILLIC)
        if BACKEND == "sqlite":
            ((kind, size, value),) = stored(
                self.srv, f"SELECT typeof(result), length(result), result FROM documents WHERE id = {d['id']}")
            self.assertEqual(kind, "blob")
            self.assertLess(size, len(CYRILLIC.encode()))
            self.assertEqual(stored_text(value), CYRILLIC)
            revs = stored(self.srv, "SELECT number, typeof(result), result FROM document_revisions "
                                    f"WHERE document_id = {d['id']} ORDER BY number")
            # the latest keeps no copy (migration 16); the older ones their own text
            self.assertEqual([(n, k) for n, k, _ in revs], [(1, "blob"), (2, "blob"), (3, "null")])
            self.assertEqual([stored_text(v) for _, _, v in revs[:2]], [generated, LONG])
        # show, list, search (ASCII and Cyrillic), revisions, export
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]["result"], CYRILLIC)
        listed = self.req("GET", "/api/v1/documents?per_page=100").json["data"]
        self.assertEqual([x["result"] for x in listed if x["id"] == d["id"]], [CYRILLIC])
        self.assertEqual(self.search("учёный КОТ").get(d["id"]), CYRILLIC)
        self.assertEqual(self.search("ωmega").get(d["id"]), CYRILLIC)
        self.assertNotIn(d["id"], self.search("camellia sinensis"))
        revs = self.req("GET", f"/api/v1/documents/{d['id']}/revisions").json["data"]
        self.assertEqual([(x["number"], x["result"]) for x in revs],
                         [(3, CYRILLIC), (2, LONG), (1, generated)])
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}/revisions/2").json["data"]["result"],
                         LONG)
        e = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=txt")
        self.assertEqual((e.status, e.body.decode()), (200, CYRILLIC))
        # a restore copies the stored text as it is
        r = self.req("POST", f"/api/v1/documents/{d['id']}/revisions/2/restore")
        self.assertEqual((r.status, r.json["data"]["result"]), (200, LONG), r)
        self.assertEqual(self.search("camellia sinensis").get(d["id"]), LONG)
        self.assertNotIn(d["id"], self.search("учёный кот"))
        e = self.req("GET", f"/api/v1/documents/{d['id']}/export?format=txt")
        self.assertEqual(e.body.decode(), LONG)
        revs = self.req("GET", f"/api/v1/documents/{d['id']}/revisions").json["data"]
        self.assertEqual([(x["number"], x["result"]) for x in revs],
                         [(4, LONG), (3, CYRILLIC), (2, LONG), (1, generated)])

    def test_a_short_text_stays_plain(self):
        d = self.make_doc()
        self.edit(d["id"], SHORT)
        if BACKEND == "sqlite":
            self.assertEqual(stored(self.srv, f"SELECT typeof(result), result FROM documents WHERE id = {d['id']}"),
                             [("text", SHORT)])
        self.assertEqual(self.req("GET", f"/api/v1/documents/{d['id']}").json["data"]["result"], SHORT)


def downgrade(path):
    """The database as the previous schema had it: the three tables rebuilt with their
    text column TEXT and plain texts, migration 20 not applied."""
    db = sqlite3.connect(path)
    db.create_function("plain", 1, stored_text)
    saved = db.execute(SCHEMA_SQL).fetchall()
    seq = dict(db.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
    script = "BEGIN;" + "".join(f'DROP {t} "{n}";' for t, n, _ in saved)
    for table, col in (("documents", "result"), ("document_revisions", "result"), ("search_changed", "old")):
        (create,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()
        assert f"{col} ANY" in create, create
        create = create.replace(f"{col} ANY", f"{col} TEXT", 1).replace(f'"{table}"', f"{table}_old", 1)
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        sel = ", ".join(f"plain({c})" if c == col else c for c in cols)
        script += (f"{create}; INSERT INTO {table}_old SELECT {sel} FROM {table}; DROP TABLE {table};"
                   f"ALTER TABLE {table}_old RENAME TO {table};")
    script += "".join(f"{sql};" for _, _, sql in saved)
    script += (f"UPDATE sqlite_sequence SET seq = {seq['documents']} WHERE name = 'documents';"
               "DELETE FROM schema_migrations WHERE version = 20; COMMIT;")
    db.executescript(script)
    assert db.execute("SELECT count(*) FROM documents WHERE typeof(result) = 'blob'").fetchone() == (0,)
    db.close()


class Conversion(unittest.TestCase):
    def test_a_database_of_plain_texts_is_converted(self):
        if BACKEND != "sqlite":  # SQLite's migration 20 (run.py counts a skip as a failure)
            return
        srv = Server().start()
        key = srv.key("old")
        try:
            docs = [srv.request("POST", "/api/v1/documents", key=key,
                                form={"name": f"d{i}", "prompt": f"tea number {i}"}).json["data"] for i in range(4)]
            for text, d in ((LONG, docs[0]), (CYRILLIC, docs[1]), (SHORT, docs[2])):
                r = srv.request("PUT", f"/api/v1/documents/{d['id']}", key=key, form={"result": text})
                self.assertEqual(r.status, 200, r)
            last = docs[3]["id"]  # deleted: its id is never given again
            self.assertEqual(srv.request("DELETE", f"/api/v1/documents/{last}", key=key).status, 200)
        finally:
            self.assertEqual(srv.stop(), 0)
        path = os.path.join(srv.data_dir, "inkwell.db")
        schema = stored(srv, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name")
        latest = stored(srv, "SELECT max(version) FROM schema_migrations")  # later migrations come after 20
        downgrade(path)
        self.assertEqual(stored(srv, "SELECT count(*) FROM document_revisions WHERE typeof(result) = 'blob'"),
                         [(0,)])
        srv.start()
        try:
            self.assertEqual(stored(srv, "SELECT count(*) FROM schema_migrations WHERE version = 20"), [(1,)])
            self.assertEqual(stored(srv, "SELECT max(version) FROM schema_migrations"), latest)
            # the same schema as a new database's, every index and trigger back
            self.assertEqual(stored(srv, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name"),
                             schema)
            self.assertEqual(stored(srv, "PRAGMA integrity_check"), [("ok",)])
            kinds = dict(stored(srv, "SELECT id, typeof(result) FROM documents"))
            self.assertEqual((kinds[docs[0]["id"]], kinds[docs[1]["id"]], kinds[docs[2]["id"]]),
                             ("blob", "blob", "text"))
            want = {docs[0]["id"]: LONG, docs[1]["id"]: CYRILLIC, docs[2]["id"]: SHORT}
            for i, text in want.items():
                got = srv.request("GET", f"/api/v1/documents/{i}", key=key).json["data"]
                self.assertEqual(got["result"], text)
                revs = srv.request("GET", f"/api/v1/documents/{i}/revisions", key=key).json["data"]
                self.assertEqual([x["result"] for x in revs][0], text)
                self.assertEqual(revs[1]["result"], [d for d in docs if d["id"] == i][0]["result"])
            r = srv.request("GET", f"/api/v1/documents?search_by=result&search={quote('учёный кот')}", key=key)
            self.assertEqual([x["id"] for x in r.json["data"]], [docs[1]["id"]])
            new = srv.request("POST", "/api/v1/documents", key=key, form={"name": "n", "prompt": "new tea"})
            self.assertEqual(new.status, 201, new)
            self.assertGreater(new.json["data"]["id"], last)
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
