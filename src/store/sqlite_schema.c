/* sqlite_schema.c — the SQLite store's schema and fixed statements: the numbered
 * migrations (migrations[]) and sq_migrate, which applies each in its own BEGIN IMMEDIATE
 * transaction after checking schema_migrations (so exactly once, however many processes
 * migrate at once), and the SQL of the fixed statements (sq_stmt_sql[], ids in
 * sqlite_int.h). Part of the SQLite backend (sqlite.c); mostly data tables. */
#include "store/sqlite_int.h"

#include "core/log.h"

/* ---- schema ---------------------------------------------------------------------- */

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
};

/* ---- fixed statements -------------------------------------------------------------- */

#define BUMP(now) STORE_BUMP("max", now)

const char *const sq_stmt_sql[ST_COUNT] = {
    [ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [ST_BEGIN_READ] = "BEGIN",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_PING] = "SELECT 1",
    [ST_MIG_HAS] = "SELECT 1 FROM schema_migrations WHERE version = ?1",
    [ST_MIG_ADD] = "INSERT INTO schema_migrations(version, applied_us) VALUES (?1, ?2)",
    [ST_USER_FIND] = "SELECT id FROM users WHERE name = ?1",
    [ST_USER_INSERT] = "INSERT INTO users(name, created_us) VALUES (?1, ?2) "
                       "ON CONFLICT(name) DO NOTHING",
    [ST_KEY_INSERT] = "INSERT INTO api_keys(user_id, hash, prefix, created_us) "
                      "VALUES (?1, ?2, ?3, ?4)",
    [ST_KEY_AUTH] = "SELECT user_id, id, hash FROM api_keys WHERE hash = ?1 AND revoked_us IS NULL",
    [ST_KEY_LIST] = "SELECT k.id, k.user_id, u.name, k.prefix, k.created_us, k.revoked_us "
                    "FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.id",
    [ST_KEY_REVOKE] = "UPDATE api_keys SET revoked_us = COALESCE(revoked_us, ?2) WHERE id = ?1",
    [ST_INSERT_DOC] = "INSERT INTO documents(user_id, name, favorite, state, created_us, "
                      "updated_us, prompt, creativity, template_id, words) "
                      "VALUES (?1, ?2, ?3, 'queued', ?4, ?4, ?5, ?6, ?7, 0)",
    [ST_INSERT_IMG] = "INSERT INTO images(user_id, name, favorite, state, created_us, "
                      "updated_us, description, resolution, style) "
                      "VALUES (?1, ?2, ?3, 'queued', ?4, ?4, ?5, ?6, ?7)",
    [ST_INSERT_DOC_DONE] = "INSERT INTO documents(user_id, name, favorite, state, created_us, "
                           "updated_us, prompt, creativity, template_id, result, words, "
                           "prompt_tokens, completion_tokens, truncated) "
                           "VALUES (?1, ?2, ?3, 'completed', ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                           "?11, ?12)",
    [ST_FTS_COMMON_DOC] = "SELECT count(*) FROM (SELECT 1 FROM documents_fts "
                          "WHERE documents_fts MATCH ?1 LIMIT ?2)",
    [ST_FTS_COMMON_IMG] = "SELECT count(*) FROM (SELECT 1 FROM images_fts "
                          "WHERE images_fts MATCH ?1 LIMIT ?2)",
    [ST_JOB_INSERT] = "INSERT INTO jobs(kind, record_id, attempts, created_us) "
                      "VALUES (?1, ?2, 0, ?3)",
    [ST_GET_DOC] = "SELECT " DOC_COLS " FROM documents WHERE id = ?1 AND user_id = ?2",
    [ST_GET_IMG] = "SELECT " IMG_COLS " FROM images WHERE id = ?1 AND user_id = ?2",
    /* ?3 name or NULL, ?4 set result?, ?5 result, ?6 words, ?7 favorite or -1, ?8 now */
    [ST_UPDATE_DOC] = "UPDATE documents SET name = COALESCE(?3, name), "
                      "result = CASE WHEN ?4 THEN ?5 ELSE result END, "
                      "words = CASE WHEN ?4 THEN ?6 ELSE words END, "
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
                     "WHERE id = (SELECT id FROM jobs WHERE token IS NULL "
                     "OR lease_until_us < ?3 ORDER BY id LIMIT 1) "
                     "RETURNING id, kind, record_id, attempts",
    [ST_JOB_DELETE] = "DELETE FROM jobs WHERE id = ?1",
    [ST_START_DOC] = "UPDATE documents SET state = 'generating', " BUMP("?2") " "
                     "WHERE id = ?1 RETURNING " DOC_COLS,
    [ST_START_IMG] = "UPDATE images SET state = 'generating', " BUMP("?2") " "
                     "WHERE id = ?1 RETURNING " IMG_COLS,
    /* ?4 1 for a release (the attempt is given back), else 0 */
    [ST_JOB_RENEW] = "UPDATE jobs SET lease_until_us = ?3, attempts = attempts - ?4 "
                     "WHERE id = ?1 AND token = ?2",
    [ST_JOB_FINISH] = "DELETE FROM jobs WHERE id = ?1 AND token = ?2 RETURNING kind, record_id",
    [ST_COMPLETE_DOC] = "UPDATE documents SET state = 'completed', error = NULL, result = ?3, "
                        "words = ?4, prompt_tokens = ?5, completion_tokens = ?6, "
                        "truncated = ?7, " BUMP("?2") " WHERE id = ?1",
    [ST_COMPLETE_IMG] = "UPDATE images SET state = 'completed', error = NULL, media_key = ?3, "
                        "revised_prompt = ?4, " BUMP("?2") " WHERE id = ?1",
    [ST_FAIL_DOC] = "UPDATE documents SET state = 'failed', error = ?3, " BUMP("?2") " "
                    "WHERE id = ?1",
    [ST_FAIL_IMG] = "UPDATE images SET state = 'failed', error = ?3, " BUMP("?2") " "
                    "WHERE id = ?1",
    [ST_JOB_COUNT] = "SELECT COUNT(*) FROM jobs",
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
    [ST_MEDIA_KEYS] = "SELECT media_key FROM images WHERE media_key IS NOT NULL "
                      "ORDER BY media_key COLLATE BINARY",
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
    if ((rc = sq_exec_sql(c, migrations[version - 1], "migrate")) != STORE_OK)
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
