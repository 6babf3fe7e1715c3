/* sqlite_schema.c — the SQLite store's schema and fixed statements: the numbered
 * migrations (migrations[]) and sq_migrate, which applies each in its own BEGIN IMMEDIATE
 * transaction after checking schema_migrations (so exactly once, however many processes
 * migrate at once), and the SQL of the fixed statements (sq_stmt_sql[], ids in
 * sqlite_int.h). Part of the SQLite backend (sqlite.c); mostly data tables. */
#include "store/sqlite_int.h"

#include "core/log.h"

#include <string.h>

/* ---- schema ---------------------------------------------------------------------- */

/* Migration 24's outbox triggers (webhooks, API.md §22; store/store_webhooks.h): an
 * event and one delivery per enabled endpoint of the record's user subscribed to its
 * type (a bit of webhooks.events), in the transaction of the change. */
#define WH_SUBSCRIBED(uid, bit)                                                            \
    "EXISTS (SELECT 1 FROM webhooks w WHERE w.user_id = " uid " AND w.enabled = 1"          \
    " AND (w.events & (" bit ")) != 0)"
#define WH_EMIT(uid, type, bit, kind, rid, rev, at, cond)                                  \
    " INSERT INTO webhook_events(msg, user_id, type, kind, record_id, revision, created_us)"\
    " SELECT 'msg_' || lower(hex(randomblob(12))), " uid ", " type ", " kind ", " rid ", "   \
    rev ", " at " WHERE " cond ";"                                                          \
    " INSERT INTO webhook_deliveries(event_id, webhook_id, user_id, kind, record_id, state,"\
    " attempts, next_us, lease_us, created_us) SELECT (SELECT max(id) FROM webhook_events),"\
    " w.id, w.user_id, "\
    kind ", " rid ", 0, 0, " at ", 0, " at " FROM webhooks w WHERE w.user_id = " uid         \
    " AND w.enabled = 1 AND (w.events & (" bit ")) != 0 AND " cond ";"
#define WH_NOW "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"
/* A record that failed its first generation and is deleted before any attempt told of
 * the failure (the waited create that §5 leaves no record of): both events are dropped. */
#define WH_UNSEEN(k)                                                                       \
    "OLD.revision = 0 AND OLD.state = 'failed' AND NOT EXISTS (SELECT 1 FROM"               \
    " webhook_deliveries x WHERE x.kind = " k " AND x.record_id = OLD.id)"
#define WH_TRIGGERS(tbl, rtbl, rcol, k, noun, sh)                                         \
    "CREATE TRIGGER webhook_" tbl "_revision AFTER INSERT ON " rtbl " WHEN "                \
    WH_SUBSCRIBED("(SELECT user_id FROM " tbl " WHERE id = NEW." rcol ")",                  \
                  "CASE WHEN NEW.number = 1 THEN 1 ELSE 4 END << " sh) " BEGIN"             \
    WH_EMIT("(SELECT user_id FROM " tbl " WHERE id = NEW." rcol ")",                        \
            "CASE WHEN NEW.number = 1 THEN '" noun ".completed' ELSE '" noun ".revised' END",\
            "CASE WHEN NEW.number = 1 THEN 1 ELSE 4 END << " sh, k, "NEW." rcol,            \
            "NEW.number", "NEW.created_us", "1") " END;"                                   \
    "CREATE TRIGGER webhook_" tbl "_failed AFTER UPDATE OF error ON " tbl                   \
    " WHEN NEW.error IS NOT NULL AND "                                                      \
    WH_SUBSCRIBED("NEW.user_id", "CASE WHEN NEW.revision = 0 THEN 2 ELSE 4 END << " sh)     \
    " BEGIN"                                                                                \
    WH_EMIT("NEW.user_id",                                                                  \
            "CASE WHEN NEW.revision = 0 THEN '" noun ".failed' ELSE '" noun ".revised' END",\
            "CASE WHEN NEW.revision = 0 THEN 2 ELSE 4 END << " sh, k, "NEW.id",             \
            "NEW.revision", "NEW.updated_us", "1") " END;"                                 \
    "CREATE TRIGGER webhook_" tbl "_deleted AFTER DELETE ON " tbl " WHEN EXISTS (SELECT 1"  \
    " FROM webhooks w WHERE w.user_id = OLD.user_id) BEGIN"                                 \
    " DELETE FROM webhook_deliveries WHERE kind = " k " AND record_id = OLD.id"             \
    " AND state = 0 AND attempts = 0 AND OLD.revision = 0 AND OLD.state = 'failed';"        \
    WH_EMIT("OLD.user_id", "'" noun ".deleted'", "8 << " sh, k, "OLD.id", "OLD.revision",   \
            WH_NOW, WH_SUBSCRIBED("OLD.user_id", "8 << " sh) " AND NOT (" WH_UNSEEN(k) ")") \
    " END;"

/* The columns of a record's copy for its webhook event (migration 29): those DOC_COLS /
 * IMG_COLS read. */
#define WH_SNAP_DOC DOC_COLS
#define WH_SNAP_IMG                                                                        \
    "id, user_id, name, favorite, state, error, created_us, updated_us, description, "    \
    "resolution, style, media_key, revised_prompt, revision, event_seq, tags"

/* Migration 29's (and 31's) triggers: an event's copy of its record, taken at the
 * event's insert; it goes with its event. */
#define WH_SNAP_TRIGGERS                                                                   \
    "CREATE TRIGGER webhook_events_snap_doc AFTER INSERT ON webhook_events WHEN NEW.kind = 0"\
    "  AND NEW.type <> 'document.deleted' BEGIN INSERT INTO webhook_snap_docs SELECT NEW.id, "\
    WH_SNAP_DOC " FROM documents WHERE id = NEW.record_id; END;"                           \
    "CREATE TRIGGER webhook_events_snap_img AFTER INSERT ON webhook_events WHEN NEW.kind = 1"\
    "  AND NEW.type <> 'image.deleted' BEGIN INSERT INTO webhook_snap_imgs SELECT NEW.id, "\
    WH_SNAP_IMG " FROM images WHERE id = NEW.record_id; END;"                              \
    "CREATE TRIGGER webhook_events_snap_del AFTER DELETE ON webhook_events BEGIN"           \
    "  DELETE FROM webhook_snap_docs WHERE event_id = OLD.id;"                              \
    "  DELETE FROM webhook_snap_imgs WHERE event_id = OLD.id; END;"

static const char *const migrations[] = {
    /* 1: the initial schema. Ids are AUTOINCREMENT: never reused after a delete. */
    "CREATE TABLE users ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  name TEXT NOT NULL UNIQUE,"
    "  created_us INTEGER NOT NULL"
    ") STRICT;"
    "CREATE TABLE api_keys ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  user_id INTEGER NOT NULL REFERENCES users(id),"
    "  hash TEXT NOT NULL UNIQUE,"
    "  prefix TEXT NOT NULL,"
    "  created_us INTEGER NOT NULL,"
    "  revoked_us INTEGER" /* NULL = active */
    ") STRICT;"
    "CREATE INDEX api_keys_user ON api_keys(user_id);"
    "CREATE TABLE documents ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  user_id INTEGER NOT NULL REFERENCES users(id),"
    "  name TEXT NOT NULL,"
    "  favorite INTEGER NOT NULL DEFAULT 0 CHECK (favorite IN (0, 1)),"
    "  state TEXT NOT NULL CHECK (state IN ('queued', 'generating', 'completed', 'failed')),"
    "  error TEXT,"
    "  created_us INTEGER NOT NULL,"
    "  updated_us INTEGER NOT NULL,"
    "  prompt TEXT NOT NULL,"
    "  creativity REAL NOT NULL,"
    "  template_id INTEGER NOT NULL,"
    "  result TEXT,"
    "  words INTEGER NOT NULL DEFAULT 0"
    ") STRICT;"
    "CREATE INDEX documents_user_id ON documents(user_id, id);"
    "CREATE INDEX documents_user_name ON documents(user_id, name COLLATE BINARY, id);"
    "CREATE INDEX documents_user_template ON documents(user_id, template_id, id);"
    "CREATE INDEX documents_user_favorite ON documents(user_id, favorite, id);"
    "CREATE TABLE images ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  user_id INTEGER NOT NULL REFERENCES users(id),"
    "  name TEXT NOT NULL,"
    "  favorite INTEGER NOT NULL DEFAULT 0 CHECK (favorite IN (0, 1)),"
    "  state TEXT NOT NULL CHECK (state IN ('queued', 'generating', 'completed', 'failed')),"
    "  error TEXT,"
    "  created_us INTEGER NOT NULL,"
    "  updated_us INTEGER NOT NULL,"
    "  description TEXT NOT NULL,"
    "  resolution TEXT NOT NULL,"
    "  style TEXT,"
    "  media_key TEXT,"
    "  revised_prompt TEXT"
    ") STRICT;"
    "CREATE INDEX images_user_id ON images(user_id, id);"
    "CREATE INDEX images_user_name ON images(user_id, name COLLATE BINARY, id);"
    "CREATE INDEX images_user_resolution ON images(user_id, resolution, id);"
    "CREATE INDEX images_user_favorite ON images(user_id, favorite, id);"
    /* A record has at most one job; kind 0 = documents, 1 = images. */
    "CREATE TABLE jobs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  kind INTEGER NOT NULL CHECK (kind IN (0, 1)),"
    "  record_id INTEGER NOT NULL,"
    "  token TEXT,"          /* NULL until claimed */
    "  lease_until_us INTEGER,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  created_us INTEGER NOT NULL,"
    "  UNIQUE (kind, record_id)"
    ") STRICT;"
    "CREATE TABLE rate_hits ("
    "  bucket TEXT NOT NULL,"
    "  \"window\" INTEGER NOT NULL,"
    "  count INTEGER NOT NULL,"
    "  PRIMARY KEY (bucket, \"window\")"
    ") WITHOUT ROWID, STRICT;",
    /* 2: each user's number of documents and images, kept by triggers, so that an
     * unfiltered list needs no COUNT(*) over all of the user's rows. */
    "CREATE TABLE record_counts ("
    "  user_id INTEGER NOT NULL,"
    "  kind INTEGER NOT NULL CHECK (kind IN (0, 1)),"
    "  n INTEGER NOT NULL,"
    "  PRIMARY KEY (user_id, kind)"
    ") WITHOUT ROWID, STRICT;"
    "INSERT INTO record_counts SELECT user_id, 0, COUNT(*) FROM documents GROUP BY user_id;"
    "INSERT INTO record_counts SELECT user_id, 1, COUNT(*) FROM images GROUP BY user_id;"
    "CREATE TRIGGER documents_count_ins AFTER INSERT ON documents BEGIN"
    "  INSERT INTO record_counts(user_id, kind, n) VALUES (NEW.user_id, 0, 1)"
    "  ON CONFLICT (user_id, kind) DO UPDATE SET n = n + 1; END;"
    "CREATE TRIGGER documents_count_del AFTER DELETE ON documents BEGIN"
    "  UPDATE record_counts SET n = n - 1 WHERE user_id = OLD.user_id AND kind = 0; END;"
    "CREATE TRIGGER images_count_ins AFTER INSERT ON images BEGIN"
    "  INSERT INTO record_counts(user_id, kind, n) VALUES (NEW.user_id, 1, 1)"
    "  ON CONFLICT (user_id, kind) DO UPDATE SET n = n + 1; END;"
    "CREATE TRIGGER images_count_del AFTER DELETE ON images BEGIN"
    "  UPDATE record_counts SET n = n - 1 WHERE user_id = OLD.user_id AND kind = 1; END;",
    /* 3: the search index. Contentless FTS5 tables with the trigram tokenizer hold the
     * searched columns folded by lower() (A-Z only without ICU, exactly the contract's
     * folding), case-sensitively, so a phrase of three or more characters finds exactly
     * the rows whose folded column contains it, in step with the records in the writing
     * transaction: a new record's row is inserted by the store's own statement
     * (insert_record; as a trigger, FTS5 flushed its pending terms to a new segment at
     * each row's statement savepoint: three to five times the cost), changes and
     * deletes by triggers (a contentless row is deleted with the values it was given). */
    "CREATE VIRTUAL TABLE documents_fts USING fts5(sname, sresult, content='', columnsize=0,"
    "  tokenize='trigram case_sensitive 1');"
    "INSERT INTO documents_fts(rowid, sname, sresult)"
    "  SELECT id, lower(name), lower(result) FROM documents;"
    "CREATE TRIGGER documents_fts_del AFTER DELETE ON documents BEGIN"
    "  INSERT INTO documents_fts(documents_fts, rowid, sname, sresult)"
    "  VALUES ('delete', OLD.id, lower(OLD.name), lower(OLD.result)); END;"
    "CREATE TRIGGER documents_fts_upd AFTER UPDATE OF name, result ON documents"
    "  WHEN OLD.name IS NOT NEW.name OR OLD.result IS NOT NEW.result BEGIN"
    "  INSERT INTO documents_fts(documents_fts, rowid, sname, sresult)"
    "  VALUES ('delete', OLD.id, lower(OLD.name), lower(OLD.result));"
    "  INSERT INTO documents_fts(rowid, sname, sresult)"
    "  VALUES (NEW.id, lower(NEW.name), lower(NEW.result)); END;"
    "CREATE VIRTUAL TABLE images_fts USING fts5(sname, content='', columnsize=0,"
    "  tokenize='trigram case_sensitive 1');"
    "INSERT INTO images_fts(rowid, sname) SELECT id, lower(name) FROM images;"
    "CREATE TRIGGER images_fts_del AFTER DELETE ON images BEGIN"
    "  INSERT INTO images_fts(images_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, lower(OLD.name)); END;"
    "CREATE TRIGGER images_fts_upd AFTER UPDATE OF name ON images"
    "  WHEN OLD.name IS NOT NEW.name BEGIN"
    "  INSERT INTO images_fts(images_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, lower(OLD.name));"
    "  INSERT INTO images_fts(rowid, sname) VALUES (NEW.id, lower(NEW.name)); END;"
    /* each user's version of its records, for the totals cache of store_int.h: every
     * insert, delete and change of a listed or searched column moves it forward */
    "ALTER TABLE record_counts ADD COLUMN version INTEGER NOT NULL DEFAULT 0;"
    "DROP TRIGGER documents_count_ins; DROP TRIGGER documents_count_del;"
    "DROP TRIGGER images_count_ins; DROP TRIGGER images_count_del;"
    "CREATE TRIGGER documents_count_ins AFTER INSERT ON documents BEGIN"
    "  INSERT INTO record_counts(user_id, kind, n, version) VALUES (NEW.user_id, 0, 1, 1)"
    "  ON CONFLICT (user_id, kind) DO UPDATE SET n = n + 1, version = version + 1; END;"
    "CREATE TRIGGER documents_count_del AFTER DELETE ON documents BEGIN"
    "  UPDATE record_counts SET n = n - 1, version = version + 1"
    "  WHERE user_id = OLD.user_id AND kind = 0; END;"
    "CREATE TRIGGER documents_count_upd AFTER UPDATE OF name, result, favorite, template_id"
    "  ON documents BEGIN UPDATE record_counts SET version = version + 1"
    "  WHERE user_id = NEW.user_id AND kind = 0; END;"
    "CREATE TRIGGER images_count_ins AFTER INSERT ON images BEGIN"
    "  INSERT INTO record_counts(user_id, kind, n, version) VALUES (NEW.user_id, 1, 1, 1)"
    "  ON CONFLICT (user_id, kind) DO UPDATE SET n = n + 1, version = version + 1; END;"
    "CREATE TRIGGER images_count_del AFTER DELETE ON images BEGIN"
    "  UPDATE record_counts SET n = n - 1, version = version + 1"
    "  WHERE user_id = OLD.user_id AND kind = 1; END;"
    "CREATE TRIGGER images_count_upd AFTER UPDATE OF name, favorite, resolution, style"
    "  ON images BEGIN UPDATE record_counts SET version = version + 1"
    "  WHERE user_id = NEW.user_id AND kind = 1; END;",
    /* 4 (safety): the rate limit's GCRA state, one theoretical arrival time per bucket,
     * instead of fixed-window counts. */
    "DROP TABLE rate_hits;"
    "CREATE TABLE rate_tat ("
    "  bucket TEXT PRIMARY KEY,"
    "  tat_us INTEGER NOT NULL,"
    "  allowed INTEGER NOT NULL"
    ") WITHOUT ROWID, STRICT;",
    /* 5 (safety): idempotency keys (API.md §11); state 0 in progress, 1 done */
    "CREATE TABLE idempotency_keys ("
    "  user_id INTEGER NOT NULL,"
    "  idem_key TEXT NOT NULL,"
    "  digest TEXT NOT NULL,"
    "  token TEXT NOT NULL,"
    "  state INTEGER NOT NULL,"
    "  status INTEGER,"
    "  location TEXT,"
    "  body TEXT,"
    "  lease_until_us INTEGER NOT NULL,"
    "  expires_us INTEGER NOT NULL,"
    "  PRIMARY KEY (user_id, idem_key)"
    ") WITHOUT ROWID, STRICT;"
    "CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_us);",
    /* 6: a document's token usage (NULL = not said) and truncation */
    "ALTER TABLE documents ADD COLUMN prompt_tokens INTEGER;"
    "ALTER TABLE documents ADD COLUMN completion_tokens INTEGER;"
    "ALTER TABLE documents ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;",
    /* 7: the search index of migration 3 without positions (detail=column): every
     * candidate is checked by LIKE, so the index only has to give a superset, and a
     * search is an AND of its trigrams (list_search) instead of a phrase. Positions
     * were most of the index's writes (each create's commit wrote ~14 KB of segments).
     * The triggers of migration 3 stay: they name the tables, not their options. */
    "DROP TABLE documents_fts;"
    "CREATE VIRTUAL TABLE documents_fts USING fts5(sname, sresult, content='', columnsize=0,"
    "  detail=column, tokenize='trigram case_sensitive 1');"
    "INSERT INTO documents_fts(rowid, sname, sresult)"
    "  SELECT id, lower(name), lower(result) FROM documents;"
    "DROP TABLE images_fts;"
    "CREATE VIRTUAL TABLE images_fts USING fts5(sname, content='', columnsize=0,"
    "  detail=column, tokenize='trigram case_sensitive 1');"
    "INSERT INTO images_fts(rowid, sname) SELECT id, lower(name) FROM images;"
    /* merges of 16 segments of a level instead of 4: each row's terms are rewritten
     * fewer times in the commits of later creates (crisismerge, 16, is unchanged) */
    "INSERT INTO documents_fts(documents_fts, rank) VALUES ('automerge', 16);"
    "INSERT INTO images_fts(images_fts, rank) VALUES ('automerge', 16);",
    /* 8: the search index follows the records instead of being written by their
     * transaction (sqlite_index.c): search_index holds each kind's watermark (every
     * record at or below it is indexed with what it has now, none above); changes and
     * deletes keep the index rows of records at or below it in step, in their own
     * transaction. Everything here was indexed by migrations 3 and 7. */
    "CREATE TABLE search_index (kind INTEGER PRIMARY KEY, upto INTEGER NOT NULL) STRICT;"
    "INSERT INTO search_index VALUES (0, (SELECT coalesce(max(id), 0) FROM documents)),"
    "  (1, (SELECT coalesce(max(id), 0) FROM images));"
    "DROP TRIGGER documents_fts_del; DROP TRIGGER documents_fts_upd;"
    "DROP TRIGGER images_fts_del; DROP TRIGGER images_fts_upd;"
    "CREATE TRIGGER documents_fts_del AFTER DELETE ON documents"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_fts(documents_fts, rowid, sname, sresult)"
    "  VALUES ('delete', OLD.id, lower(OLD.name), lower(OLD.result)); END;"
    "CREATE TRIGGER documents_fts_upd AFTER UPDATE OF name, result ON documents"
    "  WHEN (OLD.name IS NOT NEW.name OR OLD.result IS NOT NEW.result)"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_fts(documents_fts, rowid, sname, sresult)"
    "  VALUES ('delete', OLD.id, lower(OLD.name), lower(OLD.result));"
    "  INSERT INTO documents_fts(rowid, sname, sresult)"
    "  VALUES (NEW.id, lower(NEW.name), lower(NEW.result)); END;"
    "CREATE TRIGGER images_fts_del AFTER DELETE ON images"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 1) BEGIN"
    "  INSERT INTO images_fts(images_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, lower(OLD.name)); END;"
    "CREATE TRIGGER images_fts_upd AFTER UPDATE OF name ON images"
    "  WHEN OLD.name IS NOT NEW.name"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 1) BEGIN"
    "  INSERT INTO images_fts(images_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, lower(OLD.name));"
    "  INSERT INTO images_fts(rowid, sname) VALUES (NEW.id, lower(NEW.name)); END;",
    /* 9: the index thread's compaction merges any level of two segments or more
     * (sqlite_index.c): fewer segments for a search to look each trigram up in */
    "INSERT INTO documents_fts(documents_fts, rank) VALUES ('usermerge', 2);"
    "INSERT INTO images_fts(images_fts, rank) VALUES ('usermerge', 2);",
    /* 10 (revisions, API.md §16): each record's revisions, its latest number, the
     * writing options of §17 with their defaults, and a regeneration's inputs on its
     * job. A completed record becomes revision 1 of what it shows now. */
    "ALTER TABLE documents ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE documents ADD COLUMN tone TEXT NOT NULL DEFAULT 'neutral';"
    "ALTER TABLE documents ADD COLUMN language TEXT NOT NULL DEFAULT 'en';"
    "ALTER TABLE documents ADD COLUMN length TEXT NOT NULL DEFAULT 'medium';"
    "ALTER TABLE images ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN regen INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN prompt TEXT;"
    "ALTER TABLE jobs ADD COLUMN creativity REAL;"
    "ALTER TABLE jobs ADD COLUMN template_id INTEGER;"
    "ALTER TABLE jobs ADD COLUMN tone TEXT;"
    "ALTER TABLE jobs ADD COLUMN language TEXT;"
    "ALTER TABLE jobs ADD COLUMN length TEXT;"
    "ALTER TABLE jobs ADD COLUMN description TEXT;"
    "ALTER TABLE jobs ADD COLUMN resolution TEXT;"
    "ALTER TABLE jobs ADD COLUMN style TEXT;"
    "CREATE TABLE document_revisions ("
    "  document_id INTEGER NOT NULL,"
    "  number INTEGER NOT NULL,"
    "  source TEXT NOT NULL,"
    "  action TEXT,"
    "  created_us INTEGER NOT NULL,"
    "  prompt TEXT NOT NULL,"
    "  creativity REAL NOT NULL,"
    "  template_id INTEGER NOT NULL,"
    "  tone TEXT NOT NULL,"
    "  language TEXT NOT NULL,"
    "  length TEXT NOT NULL,"
    "  result TEXT,"
    "  words INTEGER NOT NULL,"
    "  prompt_tokens INTEGER,"
    "  completion_tokens INTEGER,"
    "  truncated INTEGER NOT NULL,"
    "  PRIMARY KEY (document_id, number)"
    ") WITHOUT ROWID, STRICT;"
    "CREATE TABLE image_revisions ("
    "  image_id INTEGER NOT NULL,"
    "  number INTEGER NOT NULL,"
    "  source TEXT NOT NULL,"
    "  action TEXT,"
    "  created_us INTEGER NOT NULL,"
    "  description TEXT NOT NULL,"
    "  resolution TEXT NOT NULL,"
    "  style TEXT,"
    "  media_key TEXT,"
    "  revised_prompt TEXT,"
    "  PRIMARY KEY (image_id, number)"
    ") WITHOUT ROWID, STRICT;"
    "UPDATE documents SET revision = 1 WHERE state = 'completed';"
    "UPDATE images SET revision = 1 WHERE state = 'completed';"
    "INSERT INTO document_revisions SELECT id, 1, 'generation', NULL, updated_us, prompt,"
    "  creativity, template_id, tone, language, length, result, words, prompt_tokens,"
    "  completion_tokens, truncated FROM documents WHERE revision = 1;"
    "INSERT INTO image_revisions SELECT id, 1, 'generation', NULL, updated_us, description,"
    "  resolution, style, media_key, revised_prompt FROM images WHERE revision = 1;",
    /* 11 (unicode, API.md §15): search and order for every language, through the SQL
     * functions ink_fold() and ink_key() (core/unicode.c, registered on every
     * connection by sqlite_lists.c). The name order's indexes become indexes on the
     * name's root-collation key, with the name (a name search or count walks the index
     * alone); the search index holds the default case folding of
     * name and result instead of lower(): both tables are emptied and the watermark
     * goes back to 0, so the index thread refills them after the start (searches scan
     * what it has not reached, exact meanwhile) instead of this migration taking
     * minutes at a million documents. */
    "DROP INDEX documents_user_name;"
    "ALTER TABLE documents ADD COLUMN name_key BLOB;"
    "UPDATE documents SET name_key = ink_key(name);"
    "CREATE INDEX documents_user_key ON documents(user_id, name_key, id, name);"
    "DROP INDEX images_user_name;"
    "ALTER TABLE images ADD COLUMN name_key BLOB;"
    "UPDATE images SET name_key = ink_key(name);"
    "CREATE INDEX images_user_key ON images(user_id, name_key, id, name);"
    /* the store's inserts give the key (sq_stmt_sql); any other write of a name gets
     * it here: an insert without one, a rename */
    "CREATE TRIGGER documents_key_ins AFTER INSERT ON documents WHEN NEW.name_key IS NULL"
    "  BEGIN UPDATE documents SET name_key = ink_key(NEW.name) WHERE id = NEW.id; END;"
    "CREATE TRIGGER documents_key_upd AFTER UPDATE OF name ON documents"
    "  WHEN OLD.name IS NOT NEW.name"
    "  BEGIN UPDATE documents SET name_key = ink_key(NEW.name) WHERE id = NEW.id; END;"
    "CREATE TRIGGER images_key_ins AFTER INSERT ON images WHEN NEW.name_key IS NULL"
    "  BEGIN UPDATE images SET name_key = ink_key(NEW.name) WHERE id = NEW.id; END;"
    "CREATE TRIGGER images_key_upd AFTER UPDATE OF name ON images WHEN OLD.name IS NOT NEW.name"
    "  BEGIN UPDATE images SET name_key = ink_key(NEW.name) WHERE id = NEW.id; END;"
    "DROP TRIGGER documents_fts_del; DROP TRIGGER documents_fts_upd;"
    "DROP TRIGGER images_fts_del; DROP TRIGGER images_fts_upd;"
    "DROP TABLE documents_fts; DROP TABLE images_fts;"
    /* one table per searched column, without column lists (detail=none): 272 bytes
     * a document at 100k against 773 for the two columns with detail=column
     * (docs/benchmarks.md); a column filter needs detail=column, a table of its own
     * does not */
    "CREATE VIRTUAL TABLE documents_name_fts USING fts5(sname, content='', columnsize=0,"
    "  detail=none, tokenize='trigram case_sensitive 1');"
    "CREATE VIRTUAL TABLE documents_result_fts USING fts5(sresult, content='', columnsize=0,"
    "  detail=none, tokenize='trigram case_sensitive 1');"
    "CREATE VIRTUAL TABLE images_fts USING fts5(sname, content='', columnsize=0,"
    "  detail=none, tokenize='trigram case_sensitive 1');"
    "INSERT INTO documents_name_fts(documents_name_fts, rank) VALUES ('automerge', 16);"
    "INSERT INTO documents_result_fts(documents_result_fts, rank) VALUES ('automerge', 16);"
    "INSERT INTO images_fts(images_fts, rank) VALUES ('automerge', 16);"
    "INSERT INTO documents_name_fts(documents_name_fts, rank) VALUES ('usermerge', 2);"
    "INSERT INTO documents_result_fts(documents_result_fts, rank) VALUES ('usermerge', 2);"
    "INSERT INTO images_fts(images_fts, rank) VALUES ('usermerge', 2);"
    "UPDATE search_index SET upto = 0;"
    "CREATE TRIGGER documents_fts_del AFTER DELETE ON documents"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_name_fts(documents_name_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.name));"
    "  INSERT INTO documents_result_fts(documents_result_fts, rowid, sresult)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.result)); END;"
    "CREATE TRIGGER documents_name_fts_upd AFTER UPDATE OF name ON documents"
    "  WHEN OLD.name IS NOT NEW.name"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_name_fts(documents_name_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.name));"
    "  INSERT INTO documents_name_fts(rowid, sname) VALUES (NEW.id, ink_fold(NEW.name)); END;"
    "CREATE TRIGGER documents_result_fts_upd AFTER UPDATE OF result ON documents"
    "  WHEN OLD.result IS NOT NEW.result"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_result_fts(documents_result_fts, rowid, sresult)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.result));"
    "  INSERT INTO documents_result_fts(rowid, sresult)"
    "  VALUES (NEW.id, ink_fold(NEW.result)); END;"
    "CREATE TRIGGER images_fts_del AFTER DELETE ON images"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 1) BEGIN"
    "  INSERT INTO images_fts(images_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.name)); END;"
    "CREATE TRIGGER images_fts_upd AFTER UPDATE OF name ON images"
    "  WHEN OLD.name IS NOT NEW.name"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 1) BEGIN"
    "  INSERT INTO images_fts(images_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.name));"
    "  INSERT INTO images_fts(rowid, sname) VALUES (NEW.id, ink_fold(NEW.name)); END;",
    /* 12 (admin): key scopes and expiry, users' monthly
     * quotas (NULL = none) and usage per user and calendar month (API.md §19).
     * Existing keys become write keys that never expire. */
    "ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'write'"
    "  CHECK (scope IN ('write', 'read', 'admin'));"
    "ALTER TABLE api_keys ADD COLUMN expires_us INTEGER;" /* NULL = never */
    "ALTER TABLE users ADD COLUMN quota_words INTEGER;"
    "ALTER TABLE users ADD COLUMN quota_images INTEGER;"
    "CREATE TABLE usage_months ("
    "  user_id INTEGER NOT NULL,"
    "  period TEXT NOT NULL," /* YYYY-MM, UTC */
    "  words INTEGER NOT NULL,"
    "  images INTEGER NOT NULL,"
    "  prompt_tokens INTEGER NOT NULL,"
    "  completion_tokens INTEGER NOT NULL,"
    "  PRIMARY KEY (user_id, period)"
    ") WITHOUT ROWID, STRICT;",
    /* 13 (templates): users' own templates (API.md §18). Ids from 1001, one sequence
     * for every user (AUTOINCREMENT starts after sqlite_sequence's value); a deleted
     * template keeps its row (deleted_us set) so its documents keep its name. */
    "CREATE TABLE templates ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  user_id INTEGER NOT NULL REFERENCES users(id),"
    "  name TEXT NOT NULL,"
    "  description TEXT NOT NULL,"
    "  instruction TEXT NOT NULL,"
    "  created_us INTEGER NOT NULL,"
    "  updated_us INTEGER NOT NULL,"
    "  deleted_us INTEGER" /* NULL = not deleted */
    ") STRICT;"
    "CREATE INDEX templates_user ON templates(user_id, id);"
    "INSERT INTO sqlite_sequence(name, seq) VALUES ('templates', 1000);",
    /* 14 (actions, API.md §17): an action's job carries its name and the selection, in code
     * points of the record's result (-1 and -1: the whole text). */
    "ALTER TABLE jobs ADD COLUMN action TEXT;"
    "ALTER TABLE jobs ADD COLUMN sel_start INTEGER;"
    "ALTER TABLE jobs ADD COLUMN sel_end INTEGER;",
    /* 15 (events, records.h): each record's event sequence, bumped with every change of
     * its life (queued 1, generating, text pieces, completed or failed, revision made).
     * Records stored before it start at 1. */
    "ALTER TABLE documents ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE images ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 1;",
    /* 16 (size, API.md §16): a document's latest revision does not keep a copy of the
     * text the document holds: its result is NULL, read as the document's
     * (REVDOC_COLS). Before the document's text changes, this trigger gives the text to
     * the revisions that were sharing it (number <= the old latest: never the revision
     * the change makes). It halved the database (docs/benchmarks.md). */
    "CREATE TRIGGER documents_revision_text AFTER UPDATE OF result ON documents"
    "  WHEN old.result IS NOT new.result BEGIN"
    "  UPDATE document_revisions SET result = old.result WHERE document_id = old.id"
    "    AND number <= old.revision AND result IS NULL;"
    "END;"
    "UPDATE document_revisions SET result = NULL WHERE result IS NOT NULL AND result ="
    "  (SELECT d.result FROM documents d WHERE d.id = document_id AND d.revision = number);",
    /* 17 (speed, API.md §16): a new text of an indexed document (a regeneration, an
     * action, an edit, a restore) is indexed by the index thread, not in its own
     * transaction (its trigrams out and in cost a regenerate 1.7 times a create): the
     * trigger notes the document with the text its index row holds (the first change
     * since the index had it), searches read those documents' rows as they read the
     * tail (sqlite_lists.c), and the thread takes the old trigrams out and the new ones
     * in (sqlite_index.c). A deleted document's index row goes with the text it holds. */
    "CREATE TABLE search_changed (id INTEGER PRIMARY KEY, old TEXT) STRICT;"
    "DROP TRIGGER documents_result_fts_upd;"
    "CREATE TRIGGER documents_result_fts_upd AFTER UPDATE OF result ON documents"
    "  WHEN OLD.result IS NOT NEW.result"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT OR IGNORE INTO search_changed(id, old) VALUES (OLD.id, OLD.result); END;"
    "DROP TRIGGER documents_fts_del;"
    "CREATE TRIGGER documents_fts_del AFTER DELETE ON documents"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_name_fts(documents_name_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.name));"
    "  INSERT INTO documents_result_fts(documents_result_fts, rowid, sresult)"
    "  VALUES ('delete', OLD.id, ink_fold(CASE WHEN EXISTS (SELECT 1 FROM search_changed"
    "    WHERE id = OLD.id) THEN (SELECT old FROM search_changed WHERE id = OLD.id)"
    "    ELSE OLD.result END));"
    "  DELETE FROM search_changed WHERE id = OLD.id; END;",
    /* 18 (speed, API.md §19): every request's key lookup answered by one index, without
     * the table row (scope and expiry made that row's read half the lookup; a create,
     * which changes the database, pays each page read again). sqlite_users.c names it
     * (INDEXED BY): the unique index on hash alone would be chosen otherwise. */
    "CREATE INDEX IF NOT EXISTS api_keys_auth"
    "  ON api_keys(hash, revoked_us, user_id, id, scope, expires_us);",
    /* 19 (size, API.md §15): the results' trigram index per block of 32 consecutive
     * document ids instead of per document (sqlite_int.h SQ_BLOCK_BITS): a document's
     * text has ~245 distinct trigrams, and each is a posting; a block's 32 texts share
     * theirs, so the index takes ~75 bytes a document instead of ~257 (docs/benchmarks.md
     * "Database size"). A
     * block's row only ever gains trigrams: FTS5 keeps, for a rowid inserted again, the
     * union of its rows (the newest segment's entry for a trigram both hold), so the
     * index thread adds a block's texts as they come and a changed text's trigrams
     * without taking any out (the text it had is no longer needed: search_changed.old
     * stays NULL), and a deleted document's stay in its block. Extra trigrams only make a
     * block a candidate, which the search's check of each row turns down. As in
     * migration 11 the tables are emptied and the watermark goes back to 0: the index
     * thread refills them after the start while searches scan, exact. The triggers are
     * replaced (IF EXISTS: a test makes the schema of before migration 11 and runs 11
     * and this one again). */
    "INSERT INTO documents_name_fts(documents_name_fts) VALUES ('delete-all');"
    "INSERT INTO documents_result_fts(documents_result_fts) VALUES ('delete-all');"
    "UPDATE search_index SET upto = 0 WHERE kind = 0;"
    "DELETE FROM search_changed;"
    "DROP TRIGGER IF EXISTS documents_fts_del;"
    "CREATE TRIGGER documents_fts_del AFTER DELETE ON documents"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_name_fts(documents_name_fts, rowid, sname)"
    "  VALUES ('delete', OLD.id, ink_fold(OLD.name));"
    "  DELETE FROM search_changed WHERE id = OLD.id; END;"
    "DROP TRIGGER IF EXISTS documents_result_fts_upd;"
    "CREATE TRIGGER documents_result_fts_upd AFTER UPDATE OF result ON documents"
    "  WHEN OLD.result IS NOT NEW.result"
    "  AND OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT OR IGNORE INTO search_changed(id) VALUES (OLD.id); END;",
    /* 20 (size): a document's text stored packed (zstd) when that is shorter
     * (sqlite_text.c): C code, migrate_text_any below. */
    NULL,
    /* 21 (sign-in, API.md §21): users' roles and password hashes (Argon2id, libsodium's
     * string form; NULL = none), the users holding an admin key made admins; sessions
     * (only their ids' SHA-256 kept; key_id: the key a session was made from) and failed
     * sign-ins per bucket (a SHA-256 of the name or the client's address) and minute. */
    "ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'member'"
    "  CHECK (role IN ('admin', 'member'));"
    "ALTER TABLE users ADD COLUMN password_hash TEXT;"
    "UPDATE users SET role = 'admin' WHERE id IN"
    "  (SELECT user_id FROM api_keys WHERE scope = 'admin');"
    "CREATE TABLE sessions ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  user_id INTEGER NOT NULL REFERENCES users(id),"
    "  key_id INTEGER REFERENCES api_keys(id),"
    "  hash TEXT NOT NULL UNIQUE,"
    "  csrf TEXT NOT NULL,"
    "  scope TEXT NOT NULL,"
    "  user_agent TEXT,"
    "  created_us INTEGER NOT NULL,"
    "  last_seen_us INTEGER NOT NULL,"
    "  expires_us INTEGER NOT NULL"
    ") STRICT;"
    "CREATE INDEX sessions_user ON sessions(user_id, id);"
    "CREATE INDEX sessions_expiry ON sessions(expires_us);"
    "CREATE TABLE signin_failures ("
    "  bucket TEXT NOT NULL,"
    "  minute INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  PRIMARY KEY (bucket, minute)"
    ") STRICT, WITHOUT ROWID;",
    /* 22 (races, API.md §24): an action's job keeps the revision it was asked on; its
     * outcome is stored only on that revision. */
    "ALTER TABLE jobs ADD COLUMN base_revision INTEGER;",
    /* 23 (API.md §23, §24): tags and drafts (sqlite_tags.c). A tag is one row per user
     * and folding (its spelling); record_tags links it to the records that carry it
     * (the primary key serves a list's tag filter: the tag's records of a kind); the
     * record's own `tags` column is the JSON array it shows. A tag no record carries
     * any more goes at once (trigger), so the next to store it gives its spelling. A
     * change of a record's tags moves its user's version (totals, page boundaries). */
    "ALTER TABLE documents ADD COLUMN tags TEXT;"
    "ALTER TABLE documents ADD COLUMN has_draft INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE images ADD COLUMN tags TEXT;"
    "CREATE TABLE tags (id INTEGER PRIMARY KEY,"
    "  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,"
    "  fold TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (user_id, fold));"
    "CREATE TABLE record_tags (tag_id INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,"
    "  kind INTEGER NOT NULL, record_id INTEGER NOT NULL, user_id INTEGER NOT NULL,"
    "  pos INTEGER NOT NULL, PRIMARY KEY (tag_id, kind, record_id)) WITHOUT ROWID;"
    "CREATE INDEX record_tags_record ON record_tags (kind, record_id, pos);"
    "CREATE TRIGGER record_tags_gone AFTER DELETE ON record_tags"
    "  WHEN NOT EXISTS (SELECT 1 FROM record_tags WHERE tag_id = OLD.tag_id) BEGIN"
    "  DELETE FROM tags WHERE id = OLD.tag_id; END;"
    "CREATE TRIGGER documents_tags_del AFTER DELETE ON documents WHEN OLD.tags IS NOT NULL"
    "  BEGIN DELETE FROM record_tags WHERE kind = 0 AND record_id = OLD.id; END;"
    "CREATE TRIGGER images_tags_del AFTER DELETE ON images WHEN OLD.tags IS NOT NULL"
    "  BEGIN DELETE FROM record_tags WHERE kind = 1 AND record_id = OLD.id; END;"
    "CREATE TRIGGER documents_count_tags AFTER UPDATE OF tags ON documents"
    "  WHEN OLD.tags IS NOT NEW.tags BEGIN UPDATE record_counts SET version = version + 1"
    "  WHERE user_id = NEW.user_id AND kind = 0; END;"
    "CREATE TRIGGER images_count_tags AFTER UPDATE OF tags ON images"
    "  WHEN OLD.tags IS NOT NEW.tags BEGIN UPDATE record_counts SET version = version + 1"
    "  WHERE user_id = NEW.user_id AND kind = 1; END;"
    /* a draft goes with its document by a trigger, not a foreign key (no table
     * references the documents' tables: migration 20 rebuilds them) */
    "CREATE TABLE drafts (document_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL,"
    "  result TEXT NOT NULL, base_revision INTEGER NOT NULL, updated_us INTEGER NOT NULL);"
    "CREATE TRIGGER documents_drafts_del AFTER DELETE ON documents WHEN OLD.has_draft"
    "  BEGIN DELETE FROM drafts WHERE document_id = OLD.id; END;",
    /* 24 (webhooks, API.md §22): users' endpoints, the outbox of events (one per change
     * reported, written by the triggers above in the change's transaction) and their
     * deliveries, one per endpoint (state 0 pending, 1 delivered, 2 failed). */
    "CREATE TABLE webhooks ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  user_id INTEGER NOT NULL REFERENCES users(id),"
    "  url TEXT NOT NULL,"
    "  description TEXT NOT NULL,"
    "  events INTEGER NOT NULL," /* bits of store_webhooks.h */
    "  enabled INTEGER NOT NULL,"
    "  secret TEXT NOT NULL,"
    "  prev_secret TEXT,"
    "  prev_until_us INTEGER NOT NULL,"
    "  created_us INTEGER NOT NULL,"
    "  updated_us INTEGER NOT NULL"
    ") STRICT;"
    "CREATE INDEX webhooks_user ON webhooks(user_id, id);"
    "CREATE TABLE webhook_events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  msg TEXT NOT NULL,"
    "  user_id INTEGER NOT NULL,"
    "  type TEXT NOT NULL,"
    "  kind INTEGER NOT NULL," /* 0 document, 1 image, -1 ping */
    "  record_id INTEGER NOT NULL,"
    "  revision INTEGER NOT NULL,"
    "  created_us INTEGER NOT NULL,"
    "  body TEXT" /* rendered by the first attempt (src/webhooks/) */
    ") STRICT;"
    "CREATE INDEX webhook_events_user ON webhook_events(user_id);"
    "CREATE TABLE webhook_deliveries ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  event_id INTEGER NOT NULL,"
    "  webhook_id INTEGER NOT NULL,"
    "  user_id INTEGER NOT NULL,"
    "  kind INTEGER NOT NULL,"
    "  record_id INTEGER NOT NULL,"
    "  state INTEGER NOT NULL,"
    "  attempts INTEGER NOT NULL,"
    "  last_status INTEGER,"
    "  last_error TEXT,"
    "  next_us INTEGER NOT NULL,"
    "  lease_us INTEGER NOT NULL,"
    "  created_us INTEGER NOT NULL"
    ") STRICT;"
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_us) WHERE state = 0;"
    "CREATE INDEX webhook_deliveries_order ON webhook_deliveries(webhook_id, kind, record_id, id)"
    "  WHERE state = 0;"
    "CREATE INDEX webhook_deliveries_log ON webhook_deliveries(webhook_id, id);"
    "CREATE INDEX webhook_deliveries_user ON webhook_deliveries(user_id);"
    "CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);"
    "CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_us);"
    WH_TRIGGERS("documents", "document_revisions", "document_id", "0", "document", "0")
    WH_TRIGGERS("images", "image_revisions", "image_id", "1", "image", "4"),
    /* 25 (webhooks, speed): an endpoint's deliveries claimed now, found by one index range
     * (the claim's bound of sends in flight per endpoint scanned every pending one). */
    "CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(webhook_id, lease_us)"
    "  WHERE state = 0;",
    /* 26 (sign-in, API.md §21): a key's name (POST /keys), NULL when none was given */
    "ALTER TABLE api_keys ADD COLUMN name TEXT;",
    /* 27 (webhooks, speed): a claim takes one endpoint's due deliveries in order by this
     * index (sqlite_webhooks.c), in place of one order over every endpoint's */
    "CREATE INDEX webhook_deliveries_next ON webhook_deliveries(webhook_id, next_us, id)"
    "  WHERE state = 0;"
    "DROP INDEX webhook_deliveries_due;",
    /* 28 (quotas, API.md §19): the generations in flight of users with a limit, seen by
     * every admission (sqlite_quota.c): a hold's units count until its record has no job
     * left (record_id set) or, unbound, until it expires. A user's data: user_delete. */
    "CREATE TABLE quota_holds ("
    "  id INTEGER PRIMARY KEY,"
    "  user_id INTEGER NOT NULL,"
    "  kind INTEGER NOT NULL CHECK (kind IN (0, 1)),"
    "  units INTEGER NOT NULL,"
    "  record_id INTEGER,"
    "  expires_us INTEGER NOT NULL"
    ") STRICT;"
    "CREATE INDEX quota_holds_user ON quota_holds(user_id, kind);",
    /* 29 (webhooks, API.md §22: "data" as GET showed it when the event happened): each
     * event of a record gets a copy of the record's row (the columns a GET reads), taken
     * by a trigger on the event's insert, in the change's transaction; the workers render
     * the body from it (sqlite_webhooks.c); it goes with its event. */
    "CREATE TABLE webhook_snap_docs AS SELECT 0 AS event_id, " WH_SNAP_DOC " FROM documents"
    "  WHERE 0;"
    "CREATE UNIQUE INDEX webhook_snap_docs_event ON webhook_snap_docs(event_id);"
    "CREATE TABLE webhook_snap_imgs AS SELECT 0 AS event_id, " WH_SNAP_IMG " FROM images"
    "  WHERE 0;"
    "CREATE UNIQUE INDEX webhook_snap_imgs_event ON webhook_snap_imgs(event_id);"
    WH_SNAP_TRIGGERS,
    /* 30 (single sign-on, API.md §21; sqlite_oidc.c): a user's link to an issuer's
     * subject (set by an admin or at an OIDC sign-in that creates the user; gone with
     * the user's row), and the sign-ins begun at the issuer (no user's data: state and
     * browser kept as SHA-256s, removed when taken or expired). */
    "ALTER TABLE users ADD COLUMN oidc_issuer TEXT;"
    "ALTER TABLE users ADD COLUMN oidc_subject TEXT;"
    "CREATE UNIQUE INDEX users_oidc ON users(oidc_issuer, oidc_subject);"
    "CREATE TABLE oidc_flows ("
    "  state_hash TEXT PRIMARY KEY,"
    "  browser_hash TEXT NOT NULL,"
    "  nonce TEXT NOT NULL,"
    "  verifier TEXT NOT NULL,"
    "  created_us INTEGER NOT NULL,"
    "  expires_us INTEGER NOT NULL"
    ") STRICT, WITHOUT ROWID;"
    "CREATE INDEX oidc_flows_expiry ON oidc_flows(expires_us);",
    /* 31 (streams, API.md §10 and §17): an action's revision keeps the part it rewrote,
     * in code points of its result ([part_start, part_end); NULL for every other
     * revision), so a stream of the action resumed after it completed gets the rest of
     * the part (api/stream.c) */
    "ALTER TABLE document_revisions ADD COLUMN part_start INTEGER;"
    "ALTER TABLE document_revisions ADD COLUMN part_end INTEGER;",
    /* 32 (webhooks, speed: issue 36, creates with an endpoint within 10 % of creates
     * without): fewer B-trees written per event. The deliveries' indexes by user, event
     * and time and the events' by user go (a user's deletion finds the deliveries by its
     * endpoints and scans the events; the sweeps go by id: sqlite_webhooks.c); a record's
     * copy is keyed by its event's id as the rowid (one B-tree, not two). */
    "DROP INDEX webhook_deliveries_user;"
    "DROP INDEX webhook_deliveries_event;"
    "DROP INDEX webhook_deliveries_created;"
    "DROP INDEX webhook_events_user;"
    "DROP TRIGGER webhook_events_snap_doc;"
    "DROP TRIGGER webhook_events_snap_img;"
    "DROP TRIGGER webhook_events_snap_del;"
    "CREATE TABLE webhook_snap_docs_new (event_id INTEGER PRIMARY KEY, " WH_SNAP_DOC ");"
    "INSERT INTO webhook_snap_docs_new SELECT event_id, " WH_SNAP_DOC " FROM webhook_snap_docs;"
    "DROP TABLE webhook_snap_docs;"
    "ALTER TABLE webhook_snap_docs_new RENAME TO webhook_snap_docs;"
    "CREATE TABLE webhook_snap_imgs_new (event_id INTEGER PRIMARY KEY, " WH_SNAP_IMG ");"
    "INSERT INTO webhook_snap_imgs_new SELECT event_id, " WH_SNAP_IMG " FROM webhook_snap_imgs;"
    "DROP TABLE webhook_snap_imgs;"
    "ALTER TABLE webhook_snap_imgs_new RENAME TO webhook_snap_imgs;"
    WH_SNAP_TRIGGERS,
    /* 33 (issue 38, sqlite_filter.c): the results' index's second level, a filter of
     * each document's pieces of four letters in a row per block, filled from every
     * document's text (the index thread keeps it from then on, with the trigram table) */
    "CREATE TABLE search_filters (block INTEGER PRIMARY KEY, bits BLOB NOT NULL) STRICT;"
    "INSERT INTO search_filters(block, bits) SELECT id >> " SQ_BLOCK_BITS_SQL ","
    "  ink_filter_row(id, result) FROM documents WHERE true"
    "  ON CONFLICT(block) DO UPDATE SET bits = ink_filter_or(bits, excluded.bits);",
};

/* ---- fixed statements -------------------------------------------------------------- */

#define BUMP(now) STORE_BUMP("max", now)
#define SEQ(n) STORE_SEQ(n)

/* A document's generation stored: ?1 id, ?2 now, ?3 text, ?4 words, ?5 ?6 tokens, ?7
 * truncated, ?8 a regeneration (its inputs ?9..?14 replace the record's), ?15 the text
 * pieces published */
#define COMPLETE_DOC_SET                                                                   \
    "state = 'completed', error = NULL, result = ?3, words = ?4, prompt_tokens = ?5, "     \
    "completion_tokens = ?6, truncated = ?7, revision = revision + 1, "                     \
    "prompt = CASE WHEN ?8 THEN ?9 ELSE prompt END, "                                       \
    "creativity = CASE WHEN ?8 THEN ?10 ELSE creativity END, "                              \
    "template_id = CASE WHEN ?8 THEN ?11 ELSE template_id END, "                            \
    "tone = CASE WHEN ?8 THEN ?12 ELSE tone END, "                                          \
    "language = CASE WHEN ?8 THEN ?13 ELSE language END, "                                  \
    "length = CASE WHEN ?8 THEN ?14 ELSE length END, " SEQ("1 + ?15") ", " BUMP("?2")

const char *const sq_stmt_sql[ST_COUNT] = {
    [ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [ST_BEGIN_READ] = "BEGIN",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_PING] = "SELECT 1",
    [ST_MIG_HAS] = "SELECT 1 FROM schema_migrations WHERE version = ?1",
    [ST_MIG_ADD] = "INSERT INTO schema_migrations(version, applied_us) VALUES (?1, ?2)",
    /* name_key: the name's order key (API.md §15, migration 11) */
    [ST_INSERT_DOC] = "INSERT INTO documents(user_id, name, favorite, state, created_us, "
                      "updated_us, prompt, creativity, template_id, words, tone, language, "
                      "length, name_key) VALUES (?1, ?2, ?3, 'queued', ?4, ?4, ?5, ?6, ?7, 0, "
                      "?13, ?14, ?15, ink_key(?2))",
    [ST_INSERT_IMG] = "INSERT INTO images(user_id, name, favorite, state, created_us, "
                      "updated_us, description, resolution, style, name_key) "
                      "VALUES (?1, ?2, ?3, 'queued', ?4, ?4, ?5, ?6, ?7, ink_key(?2))",
    [ST_INSERT_DOC_DONE] = "INSERT INTO documents(user_id, name, favorite, state, created_us, "
                           "updated_us, prompt, creativity, template_id, result, words, "
                           "prompt_tokens, completion_tokens, truncated, tone, language, "
                           "length, revision, name_key) "
                           "VALUES (?1, ?2, ?3, 'completed', ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                           "?11, ?12, ?13, ?14, ?15, 1, ink_key(?2))",
    [ST_FTS_COMMON_DOC] = "SELECT count(*) FROM (SELECT 1 FROM documents_name_fts "
                          "WHERE documents_name_fts MATCH ?1 LIMIT ?2)",
    [ST_FTS_COMMON_IMG] = "SELECT count(*) FROM (SELECT 1 FROM images_fts "
                          "WHERE images_fts MATCH ?1 LIMIT ?2)",
    [ST_JOB_INSERT] = "INSERT INTO jobs(kind, record_id, attempts, created_us) "
                      "VALUES (?1, ?2, 0, ?3)",
    [ST_GET_DOC] = "SELECT " DOC_COLS " FROM documents WHERE id = ?1 AND user_id = ?2",
    [ST_GET_IMG] = "SELECT " IMG_COLS " FROM images WHERE id = ?1 AND user_id = ?2",
    /* a probed get: the version alone first (a row of 21 columns costs twice as much) */
    [ST_STAMP_DOC] = "SELECT updated_us FROM documents WHERE id = ?1 AND user_id = ?2",
    [ST_STAMP_IMG] = "SELECT updated_us FROM images WHERE id = ?1 AND user_id = ?2",
    /* ?3 name or NULL, ?4 set result?, ?5 result, ?6 words, ?7 favorite or -1, ?8 now */
    [ST_UPDATE_DOC] = "UPDATE documents SET name = COALESCE(?3, name), "
                      "result = CASE WHEN ?4 THEN ?5 ELSE result END, "
                      "words = CASE WHEN ?4 THEN ?6 ELSE words END, "
                      "revision = revision + (?4 <> 0), " SEQ("(?4 <> 0)") ", "
                      "has_draft = CASE WHEN ?4 THEN 0 ELSE has_draft END, "
                      "prompt_tokens = CASE WHEN ?4 THEN NULL ELSE prompt_tokens END, "
                      "completion_tokens = CASE WHEN ?4 THEN NULL ELSE completion_tokens END, "
                      "truncated = CASE WHEN ?4 THEN 0 ELSE truncated END, "
                      "favorite = CASE WHEN ?7 >= 0 THEN ?7 ELSE favorite END, "
                      BUMP("?8") " WHERE id = ?1 AND user_id = ?2 RETURNING " DOC_COLS,
    [ST_UPDATE_IMG] = "UPDATE images SET name = COALESCE(?3, name), "
                      "favorite = CASE WHEN ?7 >= 0 THEN ?7 ELSE favorite END, "
                      BUMP("?8") " WHERE id = ?1 AND user_id = ?2 RETURNING " IMG_COLS,
    [ST_DELETE_DOC] = "DELETE FROM documents WHERE id = ?1 AND user_id = ?2 RETURNING NULL",
    [ST_DELETE_IMG] = "DELETE FROM images WHERE id = ?1 AND user_id = ?2 RETURNING media_key",
    [ST_JOB_DELETE_RECORD] = "DELETE FROM jobs WHERE kind = ?1 AND record_id = ?2",
    /* ?1 token, ?2 lease until, ?3 now */
    [ST_JOB_CLAIM] = "UPDATE jobs SET token = ?1, lease_until_us = ?2, attempts = attempts + 1 "
                     "WHERE id = (SELECT id FROM jobs WHERE (token IS NULL "
                     "OR lease_until_us < ?3) AND id NOT IN (SELECT value FROM json_each(?4)) "
                     "ORDER BY id LIMIT 1) "
                     "RETURNING id, kind, record_id, attempts, regen, prompt, creativity, "
                     "template_id, tone, language, length, description, resolution, style, "
                     "action, sel_start, sel_end, base_revision",
    [ST_JOB_DELETE] = "DELETE FROM jobs WHERE id = ?1",
    [ST_START_DOC] = "UPDATE documents SET state = 'generating', " SEQ("1") ", " BUMP("?2") " "
                     "WHERE id = ?1 RETURNING " DOC_COLS,
    [ST_START_IMG] = "UPDATE images SET state = 'generating', " SEQ("1") ", " BUMP("?2") " "
                     "WHERE id = ?1 RETURNING " IMG_COLS,
    /* ?4 1 for a release (the attempt is given back), else 0 */
    [ST_JOB_RENEW] = "UPDATE jobs SET lease_until_us = ?3, attempts = attempts - ?4 "
                     "WHERE id = ?1 AND token = ?2",
    [ST_JOB_FINISH] = "DELETE FROM jobs WHERE id = ?1 AND token = ?2 RETURNING kind, record_id",
    /* ?8 (a regeneration): its inputs ?9... become the record's */
    [ST_COMPLETE_DOC] = "UPDATE documents SET " COMPLETE_DOC_SET " WHERE id = ?1 RETURNING " DOC_COLS,
    /* an action's job (API.md §24): ?1 job, ?2 token; the record's revision is still the
     * one it was asked on, and its text is ?3 (the action changes nothing) */
    [ST_ACTION_CHECK] = "SELECT d.revision IS j.base_revision, d.result IS ?3 FROM jobs j "
                        "JOIN documents d ON d.id = j.record_id WHERE j.id = ?1 AND j.token = ?2 "
                        "AND j.kind = 0",
    /* an action that changed nothing (no revision; its usage counts) or that lost the
     * race (?3 the error): ?1 id, ?2 now, ?4 the text pieces published */
    [ST_ACTION_SAME] = "UPDATE documents SET state = 'completed', error = NULL, " SEQ("1 + ?4") ", "
                       BUMP("?2") " WHERE id = ?1 RETURNING " DOC_COLS,
    [ST_ACTION_CHANGED] = "UPDATE documents SET state = 'completed', error = ?3, " SEQ("1 + ?4") ", "
                          BUMP("?2") " WHERE id = ?1 RETURNING " DOC_COLS,
    /* a regeneration made in the request (sq_record_regenerated): queued and completed
     * in one statement (?15 1: the sequence moves on by both), ?16 the user */
    [ST_REGENERATED_DOC] = "UPDATE documents SET " COMPLETE_DOC_SET " WHERE id = ?1 AND "
                           "user_id = ?16 AND state IN ('completed', 'failed') RETURNING " DOC_COLS,
    [ST_COMPLETE_IMG] = "UPDATE images SET state = 'completed', error = NULL, media_key = ?3, "
                        "revised_prompt = ?4, revision = revision + 1, "
                        "description = CASE WHEN ?8 THEN ?9 ELSE description END, "
                        "resolution = CASE WHEN ?8 THEN ?10 ELSE resolution END, "
                        "style = CASE WHEN ?8 THEN ?11 ELSE style END, "
                        SEQ("1 + ?15") ", " BUMP("?2") " WHERE id = ?1 RETURNING " IMG_COLS,
    /* a record with a revision keeps showing it (a regeneration failed) */
    [ST_FAIL_DOC] = "UPDATE documents SET state = CASE WHEN revision > 0 THEN 'completed' "
                    "ELSE 'failed' END, error = ?3, " SEQ("1 + ?4") ", " BUMP("?2") " WHERE id = ?1",
    [ST_FAIL_IMG] = "UPDATE images SET state = CASE WHEN revision > 0 THEN 'completed' "
                    "ELSE 'failed' END, error = ?3, " SEQ("1 + ?4") ", " BUMP("?2") " WHERE id = ?1",
    [ST_JOB_COUNT] = "SELECT COUNT(*) FROM jobs",
    [ST_JOB_EXISTS] = "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?1)",
    /* ?1 now */
    [ST_JOB_COUNTS] = "SELECT COUNT(*) FILTER (WHERE token IS NULL OR lease_until_us < ?1), "
                      "COUNT(*) FILTER (WHERE token IS NOT NULL AND lease_until_us >= ?1) FROM jobs",
    [ST_USER_TOTAL] = "SELECT n, version FROM record_counts WHERE user_id = ?1 AND kind = ?2",
    /* ?1 bucket, ?2 now, ?3 interval, ?4 period; SET reads the row as it was */
    [ST_RATE_HIT] = "INSERT INTO rate_tat(bucket, tat_us, allowed) VALUES (?1, ?2 + ?3, ?3 <= ?4) "
                    "ON CONFLICT(bucket) DO UPDATE SET "
                    "allowed = max(tat_us, ?2) + ?3 - ?2 <= ?4, "
                    "tat_us = CASE WHEN max(tat_us, ?2) + ?3 - ?2 <= ?4 "
                    "THEN max(tat_us, ?2) + ?3 ELSE tat_us END "
                    "RETURNING tat_us, allowed",
    [ST_RATE_PRUNE] = "DELETE FROM rate_tat WHERE tat_us < ?1",
    /* ?1 user, ?2 key, ?3 digest, ?4 token, ?5 lease until, ?6 expires, ?7 now */
    [ST_IDEM_TAKE] = "INSERT INTO idempotency_keys(user_id, idem_key, digest, token, state, "
                     "lease_until_us, expires_us) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6) "
                     "ON CONFLICT(user_id, idem_key) DO UPDATE SET digest = excluded.digest, "
                     "token = excluded.token, state = 0, status = NULL, location = NULL, "
                     "body = NULL, lease_until_us = excluded.lease_until_us, "
                     "expires_us = excluded.expires_us "
                     "WHERE idempotency_keys.expires_us < ?7 "
                     "OR (idempotency_keys.state = 0 AND idempotency_keys.lease_until_us < ?7 "
                     "AND idempotency_keys.status IS NULL) "
                     "RETURNING token",
    [ST_IDEM_GET] = "SELECT digest, state, status, location, body, lease_until_us "
                    "FROM idempotency_keys "
                    "WHERE user_id = ?1 AND idem_key = ?2",
    /* ?8: 1 done, 0 in progress with the answer a retry gets if the request dies */
    [ST_IDEM_FINISH] = "UPDATE idempotency_keys SET state = ?8, status = ?4, location = ?5, "
                       "body = ?6, expires_us = ?7 "
                       "WHERE user_id = ?1 AND idem_key = ?2 AND token = ?3 AND state = 0",
    [ST_IDEM_ABORT] = "DELETE FROM idempotency_keys "
                      "WHERE user_id = ?1 AND idem_key = ?2 AND token = ?3 AND state = 0",
    [ST_IDEM_PRUNE] = "DELETE FROM idempotency_keys WHERE expires_us < ?1",
    [ST_MEDIA_KEYS] = "SELECT media_key FROM images WHERE media_key IS NOT NULL UNION "
                      "SELECT media_key FROM image_revisions WHERE media_key IS NOT NULL "
                      "ORDER BY 1 COLLATE BINARY",
    /* ---- revisions (sqlite_revisions.c) ---- */
    /* ?1 record, ?2 source, ?3 now, ?4 action, ?5 ?6 an action's part (NULL unbound):
     * the record's content as its revision `revision` */
    [ST_REV_SNAP_DOC] = "INSERT INTO document_revisions SELECT id, revision, ?2, ?4, ?3, prompt, "
                        "creativity, template_id, tone, language, length, NULL, words, "
                        "prompt_tokens, completion_tokens, truncated, ?5, ?6 FROM documents WHERE id = ?1",
    [ST_REV_SNAP_IMG] = "INSERT INTO image_revisions SELECT id, revision, ?2, ?4, ?3, "
                        "description, resolution, style, media_key, revised_prompt "
                        "FROM images WHERE id = ?1",
    [ST_REV_DELETE_DOC] = "DELETE FROM document_revisions WHERE document_id = ?1 RETURNING NULL",
    [ST_REV_DELETE_IMG] = "DELETE FROM image_revisions WHERE image_id = ?1 RETURNING media_key",
    /* ?1 record, ?2 how many to keep */
    [ST_REV_TRIM_DOC] = "DELETE FROM document_revisions WHERE document_id = ?1 AND number <= "
                        "(SELECT revision FROM documents WHERE id = ?1) - ?2 RETURNING NULL",
    [ST_REV_TRIM_IMG] = "DELETE FROM image_revisions WHERE image_id = ?1 AND number <= "
                        "(SELECT revision FROM images WHERE id = ?1) - ?2 RETURNING media_key",
    [ST_REV_LIST_DOC] = "SELECT " REVDOC_COLS " FROM document_revisions WHERE document_id = ?1 "
                        "ORDER BY number DESC LIMIT ?2 OFFSET ?3",
    [ST_REV_LIST_IMG] = "SELECT " REVIMG_COLS " FROM image_revisions WHERE image_id = ?1 "
                        "ORDER BY number DESC LIMIT ?2 OFFSET ?3",
    [ST_REV_COUNT_DOC] = "SELECT count(*) FROM document_revisions WHERE document_id = ?1",
    [ST_REV_COUNT_IMG] = "SELECT count(*) FROM image_revisions WHERE image_id = ?1",
    [ST_REV_GET_DOC] = "SELECT " REVDOC_COLS ", part_start, part_end FROM document_revisions "
                       "WHERE document_id = ?1 AND number = ?2",
    [ST_REV_GET_IMG] = "SELECT " REVIMG_COLS " FROM image_revisions "
                       "WHERE image_id = ?1 AND number = ?2",
    /* ?1 id, ?2 user, ?3 now */
    [ST_REGEN_DOC] = "UPDATE documents SET state = 'queued', " SEQ("1") ", " BUMP("?3") " WHERE id = ?1 "
                     "AND user_id = ?2 AND state IN ('completed', 'failed') RETURNING " DOC_COLS,
    [ST_REGEN_IMG] = "UPDATE images SET state = 'queued', " SEQ("1") ", " BUMP("?3") " WHERE id = ?1 "
                     "AND user_id = ?2 AND state IN ('completed', 'failed') RETURNING " IMG_COLS,
    /* ?1 kind, ?2 record, ?3 now, then the inputs */
    [ST_JOB_INSERT_REGEN] = "INSERT INTO jobs(kind, record_id, attempts, created_us, regen, prompt, "
                            "creativity, template_id, tone, language, length, description, "
                            "resolution, style, action, sel_start, sel_end, base_revision) VALUES "
                            "(?1, ?2, 0, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                            "?16)",
    /* ?1 id, ?2 user, ?3 number, ?4 now (, ?5 media key) */
    [ST_RESTORE_DOC] = "UPDATE documents SET (prompt, creativity, template_id, tone, language, "
                       "length, result, words, prompt_tokens, completion_tokens, truncated) = "
                       "(SELECT prompt, creativity, template_id, tone, language, length, "
                       "COALESCE(r.result, documents.result), words, prompt_tokens, "
                       "completion_tokens, truncated FROM document_revisions r "
                       "WHERE document_id = ?1 AND number = ?3), revision = revision + 1, "
                       "error = NULL, state = CASE WHEN state IN ('queued', 'generating') THEN "
                       "state ELSE 'completed' END, " SEQ("1") ", " BUMP("?4") " WHERE id = ?1 AND user_id = ?2 "
                       "AND EXISTS (SELECT 1 FROM document_revisions WHERE document_id = ?1 "
                       "AND number = ?3) RETURNING " DOC_COLS,
    [ST_RESTORE_IMG] = "UPDATE images SET (description, resolution, style, revised_prompt) = "
                       "(SELECT description, resolution, style, revised_prompt FROM image_revisions "
                       "WHERE image_id = ?1 AND number = ?3), media_key = ?5, "
                       "revision = revision + 1, error = NULL, state = CASE WHEN state IN "
                       "('queued', 'generating') THEN state ELSE 'completed' END, " SEQ("1") ", " BUMP("?4")
                       " WHERE id = ?1 AND user_id = ?2 AND EXISTS (SELECT 1 FROM image_revisions "
                       "WHERE image_id = ?1 AND number = ?3) RETURNING " IMG_COLS,
};

/* ---- migration 20: the stored text's columns become ANY ------------------------------- */

/* The tables of a document's text and their text column, rebuilt with that column of
 * type ANY (a STRICT table's TEXT column refuses a BLOB; a column's type cannot be
 * altered). */
static const struct {
    const char *name, *column;
} text_tables[] = {
    {"documents", "result"},
    {"document_revisions", "result"}, /* NULL: the document's (migration 17) */
    {"search_changed", "old"},
};

/* Table ?1's columns as pragma table_info gives them (name, type, not null, default,
 * key), column ?2's type TEXT read as ANY: the rebuilt table's must be the old one's. */
#define COLUMNS_SQL                                                                        \
    "SELECT group_concat(name || ' ' || CASE WHEN name = ?2 AND type = 'TEXT' THEN 'ANY'"  \
    " ELSE type END || ' ' || \"notnull\" || ' ' || coalesce(dflt_value, '-') || ' ' ||"   \
    " pk, char(10)) FROM (SELECT * FROM pragma_table_info(?1) ORDER BY cid)"

/* The first column of sql's first row (?1, ?2 bound to arg, arg2 when given) into the
 * arena (NULL when NULL); *i64 (if given) gets it as an integer. NOTFOUND without a
 * row. */
static int query_one(sq_conn_t *c, const char *sql, const char *arg, const char *arg2,
                     arena_t *a, const char **text, int64_t *i64)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sq_error(c, rc, "migrate 20");
    if (arg)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (arg2)
        sqlite3_bind_text(st, 2, arg2, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    int out = STORE_OK;
    if (rc == SQLITE_ROW) {
        if (text)
            *text = sq_col_text(st, 0, a);
        if (i64)
            *i64 = sqlite3_column_int64(st, 0);
    } else {
        out = rc == SQLITE_DONE ? STORE_NOTFOUND : sq_error(c, rc, "migrate 20");
    }
    sqlite3_finalize(st);
    return out;
}

/* The CREATE TABLE of table `name` as sqlite_schema has it, made the one of
 * "<name>_new" with column col's type ANY (sqlite3_malloc'd), or NULL when the SQL is
 * not as expected (the column "<col> TEXT", or already "<col> ANY", once, between '('
 * or ',' and ',' or ')'). */
static char *new_table_sql(const char *sql, const char *name, const char *col)
{
    const char *open = sql ? strchr(sql, '(') : NULL;
    if (!open || strncmp(sql, "CREATE TABLE ", 13))
        return NULL;
    size_t cl = strlen(col);
    const char *at = NULL;
    size_t tl = 0; /* the length of " TEXT" or " ANY" */
    for (const char *p = open; (p = strstr(p, col)); p += cl) {
        const char *q = p; /* the column's name starts a definition */
        while (q > open && (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\t'))
            q--;
        if (q[-1] != '(' && q[-1] != ',')
            continue;
        size_t l = !strncmp(p + cl, " TEXT", 5) ? 5 : !strncmp(p + cl, " ANY", 4) ? 4 : 0;
        if (!l || !strchr(",) \n", p[cl + l]))
            continue;
        if (at)
            return NULL; /* twice */
        at = p;
        tl = l;
    }
    if (!at)
        return NULL;
    return sqlite3_mprintf("CREATE TABLE \"%w_new\" %.*s%s ANY%s", name, (int)(at - open), open,
                           col, at + cl + tl);
}

/* The procedure of https://www.sqlite.org/lang_altertable.html ("Making Other Kinds Of
 * Table Schema Changes"), in the migration's transaction, for each table: its CREATE
 * TABLE read from sqlite_schema, the text's column made ANY; the rows copied with the
 * texts packed (ink_pack, sqlite_text.c); the old table dropped, the new one renamed;
 * its AUTOINCREMENT sequence kept (ids are never reused). Every index and trigger of
 * the three tables, and every other trigger that names them, is read from
 * sqlite_schema first, dropped, and made again with its own SQL once the tables are
 * rebuilt (a trigger naming a table dropped meanwhile would fail the renames). Foreign
 * keys stay on (they cannot be turned off inside a transaction): no table references
 * these three (checked first), so dropping them deletes nothing, and the documents'
 * own references to users are checked at the end. */
static int migrate_text_any(sq_conn_t *c)
{
    arena_t a;
    arena_init(&a);
    int rc = sq_text_register(c->db);
    rc = rc == SQLITE_OK ? STORE_OK : sq_error(c, rc, "migrate 20: ink_pack");
    int64_t refs = 0;
    if (rc == STORE_OK)
        rc = query_one(c,
                       "SELECT count(*) FROM sqlite_schema s, pragma_foreign_key_list(s.name) f"
                       " WHERE s.type = 'table' AND f.\"table\" IN ('documents',"
                       " 'document_revisions', 'search_changed')",
                       NULL, NULL, &a, NULL, &refs);
    if (rc == STORE_OK && refs) {
        log_error("sqlite: migration 20: a table references the documents' tables");
        rc = STORE_ERROR;
    }
    /* the indexes and triggers to make again, in the order they were made */
    sqlite3_stmt *st = NULL;
    const char **names = NULL, **types = NULL, **sqls = NULL;
    size_t n = 0, cap = 0;
    if (rc == STORE_OK) {
        int src = sqlite3_prepare_v2(
            c->db,
            "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND"
            " (tbl_name IN ('documents', 'document_revisions', 'search_changed')"
            " AND type IN ('index', 'trigger') OR type = 'trigger' AND"
            " (sql LIKE '%documents%' OR sql LIKE '%document_revisions%'"
            " OR sql LIKE '%search_changed%')) ORDER BY rowid",
            -1, &st, NULL);
        while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
            if (n == cap) {
                cap = cap ? 2 * cap : 32;
                const char **nn = arena_take(&a, cap * sizeof(*nn));
                const char **nt = arena_take(&a, cap * sizeof(*nt));
                const char **ns = arena_take(&a, cap * sizeof(*ns));
                if (n) {
                    memcpy(nn, names, n * sizeof(*nn));
                    memcpy(nt, types, n * sizeof(*nt));
                    memcpy(ns, sqls, n * sizeof(*ns));
                }
                names = nn, types = nt, sqls = ns;
            }
            types[n] = sq_col_text(st, 0, &a);
            names[n] = sq_col_text(st, 1, &a);
            sqls[n++] = sq_col_text(st, 2, &a);
            src = SQLITE_OK;
        }
        sqlite3_finalize(st);
        rc = src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "migrate 20: schema");
    }
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        char *sql = sqlite3_mprintf("DROP %s \"%w\"", types[i], names[i]);
        rc = sql ? sq_exec_sql(c, sql, "migrate 20: drop") : STORE_ERROR;
        sqlite3_free(sql);
    }
    for (size_t t = 0; rc == STORE_OK && t < ARRAY_LEN(text_tables); t++) {
        const char *name = text_tables[t].name, *col = text_tables[t].column;
        const char *before = NULL, *after = NULL, *create = NULL, *cols = NULL;
        int64_t seq = -1;
        if ((rc = query_one(c, COLUMNS_SQL, name, col, &a, &before, NULL)) != STORE_OK ||
            (rc = query_one(c, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                            name, NULL, &a, &create, NULL)) != STORE_OK)
            break;
        /* the columns to copy, in their order, the text packed */
        rc = query_one(c,
                       "SELECT group_concat(CASE WHEN name = ?2 THEN format('ink_pack(\"%w\")',"
                       " name) ELSE format('\"%w\"', name) END, ', ') FROM (SELECT name"
                       " FROM pragma_table_info(?1) ORDER BY cid)",
                       name, col, &a, &cols, NULL);
        if (rc == STORE_OK)
            rc = query_one(c, "SELECT seq FROM sqlite_sequence WHERE name = ?1", name, NULL,
                           &a, NULL, &seq);
        if (rc == STORE_NOTFOUND)
            rc = STORE_OK;
        char *made = rc == STORE_OK ? new_table_sql(create, name, col) : NULL;
        if (rc == STORE_OK && (!made || !cols)) {
            log_error("sqlite: migration 20: %s is not as expected", name);
            rc = STORE_ERROR;
        }
        if (rc == STORE_OK)
            rc = sq_exec_sql(c, made, "migrate 20: create");
        sqlite3_free(made);
        char *sql = NULL;
        if (rc == STORE_OK) {
            sql = sqlite3_mprintf("INSERT INTO \"%w_new\" SELECT %s FROM \"%w\";"
                                  "DROP TABLE \"%w\"; ALTER TABLE \"%w_new\" RENAME TO \"%w\"",
                                  name, cols, name, name, name, name);
            rc = sql ? sq_exec_sql(c, sql, "migrate 20: copy") : STORE_ERROR;
            sqlite3_free(sql);
        }
        if (rc == STORE_OK && seq >= 0) {
            sql = sqlite3_mprintf("UPDATE sqlite_sequence SET seq = max(seq, %lld) WHERE name = %Q;"
                                  "INSERT INTO sqlite_sequence(name, seq) SELECT %Q, %lld"
                                  " WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = %Q)",
                                  (long long)seq, name, name, (long long)seq, name);
            rc = sql ? sq_exec_sql(c, sql, "migrate 20: sequence") : STORE_ERROR;
            sqlite3_free(sql);
        }
        if (rc == STORE_OK)
            rc = query_one(c, COLUMNS_SQL, name, col, &a, &after, NULL);
        if (rc == STORE_OK && (!before || !after || strcmp(before, after))) {
            log_error("sqlite: migration 20: %s's columns are not as expected", name);
            rc = STORE_ERROR;
        }
    }
    for (size_t i = 0; rc == STORE_OK && i < n; i++)
        rc = sq_exec_sql(c, sqls[i], "migrate 20: recreate");
    if (rc == STORE_OK) {
        int64_t bad = 0;
        rc = query_one(c, "SELECT count(*) FROM pragma_foreign_key_check('documents')", NULL,
                       NULL, &a, NULL, &bad);
        if (rc == STORE_OK && bad) {
            log_error("sqlite: migration 20: %lld documents without their user", (long long)bad);
            rc = STORE_ERROR;
        }
    }
    arena_free(&a);
    return rc;
}

/* Migrations that run C code instead of (or after) their SQL, by number - 1. */
static int (*const migration_code[ARRAY_LEN(migrations)])(sq_conn_t *c) = {
    [20 - 1] = migrate_text_any,
};

/* ---- migrations ------------------------------------------------------------------------ */

/* Applies migration version (1-based) unless schema_migrations already has it. */
static int migrate_one(sq_conn_t *c, int version)
{
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_MIG_HAS, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int(st, 1, version);
    rc = sq_step_row(c, st, "migrate");
    if (rc == STORE_OK) { /* already applied */
        sq_stmt_done(st);
        goto out;
    }
    if (rc != STORE_NOTFOUND)
        goto out;
    if (migrations[version - 1] &&
        (rc = sq_exec_sql(c, migrations[version - 1], "migrate")) != STORE_OK)
        goto out;
    if (migration_code[version - 1] && (rc = migration_code[version - 1](c)) != STORE_OK)
        goto out;
    if ((rc = sq_stmt(c, ST_MIG_ADD, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int(st, 1, version);
    sqlite3_bind_int64(st, 2, now_us());
    rc = sq_run(c, st, "migrate");
    if (rc == STORE_OK)
        log_info("sqlite: schema migration %d applied", version);
out:
    return sq_tx_end(c, rc);
}

int sq_migrate(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = sq_exec_sql(c,
                     "CREATE TABLE IF NOT EXISTS schema_migrations ("
                     " version INTEGER PRIMARY KEY, applied_us INTEGER NOT NULL) STRICT",
                     "migrate");
    if ((rc = sq_tx_end(c, rc)) != STORE_OK)
        return rc;
    for (int v = 1; v <= (int)ARRAY_LEN(migrations); v++)
        if ((rc = migrate_one(c, v)) != STORE_OK)
            return rc;
    sq_index_start(conn->store);
    return STORE_OK;
}
