/* sqlite.c — the SQLite backend of store.h (store_sqlite_ops).
 *
 * One connection per thread (store.c caches it). Each connection runs in WAL mode with
 * busy_timeout 5000 ms, synchronous=NORMAL and foreign_keys=ON; WAL checkpoints run in
 * a background thread of the store (sqlite_ckpt.c).
 *
 * Statements: the fixed ones (stmt_sql[]) are prepared on first use with
 * SQLITE_PREPARE_PERSISTENT and kept for the life of the connection; after each use
 * they are reset and their bindings cleared. List queries are assembled only from fixed
 * fragments picked by the query's enum/bool fields (store_list_key()), never from user text,
 * which is always bound; each of the few combinations is prepared once per connection
 * and cached in list[] under its bit key.
 *
 * Transactions: every write is an explicit BEGIN IMMEDIATE transaction, so a writer
 * takes the write lock up front (waiting up to busy_timeout) instead of failing later
 * to upgrade a stale read snapshot. SQLITE_BUSY/LOCKED after the wait → STORE_UNAVAILABLE.
 *
 * Schema: numbered migrations (migrations[]), each applied in its own BEGIN IMMEDIATE
 * transaction that first checks schema_migrations, so running migrate twice or from
 * several processes at once applies each exactly once. */
#include "store/sqlite_ckpt.h"
#include "store/store_int.h"

#include "core/log.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

/* ---- fixed statements -------------------------------------------------------------- */

#define BUMP(now) STORE_BUMP("max", now)

/* Pairs are laid out documents first, images second: ST_X_DOC + kind. */
enum {
    ST_BEGIN_WRITE,
    ST_BEGIN_READ,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_PING,
    ST_MIG_HAS,
    ST_MIG_ADD,
    ST_USER_FIND,
    ST_USER_INSERT,
    ST_KEY_INSERT,
    ST_KEY_AUTH,
    ST_KEY_LIST,
    ST_KEY_REVOKE,
    ST_INSERT_DOC,
    ST_INSERT_IMG,
    ST_INSERT_DOC_DONE,
    ST_FTS_INSERT_DOC,
    ST_FTS_INSERT_IMG,
    ST_FTS_COMMON_DOC,
    ST_FTS_COMMON_IMG,
    ST_JOB_INSERT,
    ST_GET_DOC,
    ST_GET_IMG,
    ST_UPDATE_DOC,
    ST_UPDATE_IMG,
    ST_DELETE_DOC,
    ST_DELETE_IMG,
    ST_JOB_DELETE_RECORD,
    ST_JOB_CLAIM,
    ST_JOB_DELETE,
    ST_START_DOC,
    ST_START_IMG,
    ST_JOB_RENEW,
    ST_JOB_FINISH,
    ST_COMPLETE_DOC,
    ST_COMPLETE_IMG,
    ST_FAIL_DOC,
    ST_FAIL_IMG,
    ST_JOB_COUNT,
    ST_USER_TOTAL,
    ST_RATE_HIT,
    ST_RATE_PRUNE,
    ST_IDEM_TAKE,
    ST_IDEM_GET,
    ST_IDEM_FINISH,
    ST_IDEM_ABORT,
    ST_IDEM_PRUNE,
    ST_MEDIA_KEYS,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
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
    [ST_FTS_INSERT_DOC] = "INSERT INTO documents_fts(rowid, sname, sresult) "
                          "VALUES (?1, lower(?2), lower(?3))",
    [ST_FTS_INSERT_IMG] = "INSERT INTO images_fts(rowid, sname) VALUES (?1, lower(?2))",
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
    [ST_JOB_RENEW] = "UPDATE jobs SET lease_until_us = ?3 WHERE id = ?1 AND token = ?2",
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
                     "OR (idempotency_keys.state = 0 AND idempotency_keys.lease_until_us < ?7) "
                     "RETURNING token",
    [ST_IDEM_GET] = "SELECT digest, state, status, location, body FROM idempotency_keys "
                    "WHERE user_id = ?1 AND idem_key = ?2",
    [ST_IDEM_FINISH] = "UPDATE idempotency_keys SET state = 1, status = ?4, location = ?5, "
                       "body = ?6, expires_us = ?7 "
                       "WHERE user_id = ?1 AND idem_key = ?2 AND token = ?3 AND state = 0",
    [ST_IDEM_ABORT] = "DELETE FROM idempotency_keys "
                      "WHERE user_id = ?1 AND idem_key = ?2 AND token = ?3 AND state = 0",
    [ST_IDEM_PRUNE] = "DELETE FROM idempotency_keys WHERE expires_us < ?1",
    [ST_MEDIA_KEYS] = "SELECT media_key FROM images WHERE media_key IS NOT NULL "
                      "ORDER BY media_key COLLATE BINARY",
};

/* ---- list statements (keys: store_int.h) ------------------------------------------- */

/* Parameter numbers used by every list statement. */
enum {
    LP_USER = 1, LP_PATTERN, LP_FILTER, LP_STYLE, LP_FAVORITE, LP_LIMIT, LP_OFFSET, LP_MATCH,
    LP_WINDOW
};

typedef struct {
    store_conn_t base;
    sqlite3 *db;
    sqlite3_stmt *stmt[ST_COUNT];
    sqlite3_stmt *list[LQ_SLOTS];
    bool session; /* a read session (read_begin) holds a read transaction open */
    bool nested;  /* a read transaction of an operation runs inside the session */
} sq_conn_t;

static sq_conn_t *sq(store_conn_t *c)
{
    return (sq_conn_t *)c;
}

/* ---- errors and statement helpers ------------------------------------------------------ */

/* Maps an SQLite result code to a store code, logging what is not the caller's fault.
 * Only the operation's name and SQLite's own message (never bound values) are logged. */
static int sq_error(sq_conn_t *c, int rc, const char *what)
{
    int primary = rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
        log_warn("sqlite: %s: %s", what, sqlite3_errstr(rc));
        return STORE_UNAVAILABLE;
    }
    if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
        return STORE_CONFLICT;
    if (primary == SQLITE_FULL || primary == SQLITE_IOERR) {
        /* a full disk (or a failing one): nothing was written (the transaction rolls
         * back), the client may retry once there is room */
        log_error("sqlite: %s: %s (code %d): storage unavailable", what, sqlite3_errstr(rc), rc);
        return STORE_UNAVAILABLE;
    }
    log_error("sqlite: %s: %s (code %d)", what, sqlite3_errmsg(c->db), rc);
    return STORE_ERROR;
}

static int prepare(sq_conn_t *c, const char *sql, sqlite3_stmt **out, const char *what)
{
    int rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return sq_error(c, rc, what);
    }
    return STORE_OK;
}

/* The fixed statement id, prepared on first use. */
static int stmt(sq_conn_t *c, int id, sqlite3_stmt **out)
{
    if (!c->stmt[id]) {
        int rc = prepare(c, stmt_sql[id], &c->stmt[id], "prepare");
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->stmt[id];
    return STORE_OK;
}

static void stmt_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Bound text lives in the caller's memory until stmt_done: SQLITE_STATIC is safe. */
static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i, arena_t *a)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (!t)
        return NULL;
    return arena_strndup(a, (const char *)t, (size_t)sqlite3_column_bytes(st, i));
}

/* Runs a statement that returns no rows (or whose rows are ignored). */
static int run(sq_conn_t *c, sqlite3_stmt *st, const char *what)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    int out = rc == SQLITE_DONE ? STORE_OK : sq_error(c, rc, what);
    stmt_done(st);
    return out;
}

static int run_fixed(sq_conn_t *c, int id, const char *what)
{
    sqlite3_stmt *st;
    int rc = stmt(c, id, &st);
    return rc != STORE_OK ? rc : run(c, st, what);
}

/* Steps a statement expected to give at most one row: STORE_OK with the row current
 * (the caller reads it, then calls stmt_done), STORE_NOTFOUND (already reset) or an
 * error (already reset). */
static int step_row(sq_conn_t *c, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return STORE_OK;
    int out = rc == SQLITE_DONE ? STORE_NOTFOUND : sq_error(c, rc, what);
    stmt_done(st);
    return out;
}

/* ---- transactions ---------------------------------------------------------------------- */

/* Ends a read session's transaction (a write must not run inside it). */
static void session_close(sq_conn_t *c)
{
    if (!c->session)
        return;
    c->session = c->nested = false;
    if (!sqlite3_get_autocommit(c->db))
        run_fixed(c, ST_COMMIT, "commit");
}

static int tx_begin(sq_conn_t *c)
{
    session_close(c);
    return run_fixed(c, ST_BEGIN_WRITE, "begin");
}

/* Inside a read session, an operation's reads share the session's transaction. */
static int tx_begin_read(sq_conn_t *c)
{
    if (c->session) {
        c->nested = true;
        return STORE_OK;
    }
    return run_fixed(c, ST_BEGIN_READ, "begin");
}

static void tx_rollback(sq_conn_t *c)
{
    if (!sqlite3_get_autocommit(c->db))
        run_fixed(c, ST_ROLLBACK, "rollback");
}

/* Commits when rc is STORE_OK, else rolls back; returns the final code. */
static int tx_end(sq_conn_t *c, int rc)
{
    if (c->nested) {
        c->nested = false;
        return rc; /* the session's transaction goes on */
    }
    if (rc == STORE_OK) {
        rc = run_fixed(c, ST_COMMIT, "commit");
        if (rc == STORE_OK)
            return rc;
    }
    tx_rollback(c);
    return rc;
}

/* ---- connection ------------------------------------------------------------------------ */

static void sq_disconnect(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(c->stmt[i]);
    for (int i = 0; i < LQ_SLOTS; i++)
        sqlite3_finalize(c->list[i]);
    sqlite3_close(c->db);
    free(c);
}

/* Once per process, before SQLite initialises: no memory statistics (they take a
 * global mutex on every allocation, and every thread allocates). */
static void sq_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static void sq_open(store_t *s)
{
    s->backend = sq_ckpt_new(s->url);
}

static void sq_close(store_t *s)
{
    sq_ckpt_free(s->backend);
    s->backend = NULL;
}

void store_sqlite_checkpoint_pages(store_t *s, int pages)
{
    if (s->ops == &store_sqlite_ops)
        sq_ckpt_set_pages(s->backend, pages);
}

bool store_sqlite_checkpoint_stats(store_t *s, store_checkpoint_stats_t *out)
{
    return s->ops == &store_sqlite_ops && sq_ckpt_stats(s->backend, out);
}

static store_conn_t *sq_connect(store_t *s, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sq_global_init);
    sq_conn_t *c = xcalloc(1, sizeof(*c));
    c->base.ops = &store_sqlite_ops;
    c->base.store = s;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(s->url, &c->db, flags, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "sqlite: cannot open %s: %s", s->url,
                 c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
        goto fail;
    }
    sqlite3_extended_result_codes(c->db, 1);
    sqlite3_busy_timeout(c->db, 5000);
    if (!sq_set_wal(c->db)) {
        snprintf(err, errlen, "sqlite: cannot switch %s to WAL mode: %s", s->url,
                 sqlite3_errmsg(c->db));
        goto fail;
    }
    /* synchronous=NORMAL in WAL mode: a commit is in the WAL file (the OS's page cache)
     * before COMMIT returns, so killing the process loses nothing; only an OS crash or
     * power cut may roll back the last commits, never corrupt the database. */
    char *msg = NULL;
    rc = sqlite3_exec(c->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL, NULL,
                      &msg);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "sqlite: cannot configure %s: %s", s->url,
                 msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        goto fail;
    }
    /* replaces SQLite's automatic checkpoint (sqlite_ckpt.h) */
    sqlite3_wal_hook(c->db, sq_ckpt_hook, s->backend);
    return &c->base;
fail:
    sqlite3_close(c->db);
    free(c);
    return NULL;
}

static int sq_ping(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, ST_PING, &st);
    if (rc != STORE_OK)
        return rc;
    rc = step_row(c, st, "ping");
    if (rc == STORE_OK)
        stmt_done(st);
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* ---- migrations ------------------------------------------------------------------------ */

static int exec_sql(sq_conn_t *c, const char *sql, const char *what)
{
    char *msg = NULL;
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return STORE_OK;
    int out = sq_error(c, rc, what);
    sqlite3_free(msg);
    return out;
}

/* Applies migration version (1-based) unless schema_migrations already has it. */
static int migrate_one(sq_conn_t *c, int version)
{
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_MIG_HAS, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int(st, 1, version);
    rc = step_row(c, st, "migrate");
    if (rc == STORE_OK) { /* already applied */
        stmt_done(st);
        goto out;
    }
    if (rc != STORE_NOTFOUND)
        goto out;
    if ((rc = exec_sql(c, migrations[version - 1], "migrate")) != STORE_OK)
        goto out;
    if ((rc = stmt(c, ST_MIG_ADD, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int(st, 1, version);
    sqlite3_bind_int64(st, 2, now_us());
    rc = run(c, st, "migrate");
    if (rc == STORE_OK)
        log_info("sqlite: schema migration %d applied", version);
out:
    return tx_end(c, rc);
}

static int sq_migrate(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = exec_sql(c,
                  "CREATE TABLE IF NOT EXISTS schema_migrations ("
                  " version INTEGER PRIMARY KEY, applied_us INTEGER NOT NULL) STRICT",
                  "migrate");
    if ((rc = tx_end(c, rc)) != STORE_OK)
        return rc;
    for (int v = 1; v <= (int)ARRAY_LEN(migrations); v++)
        if ((rc = migrate_one(c, v)) != STORE_OK)
            return rc;
    return STORE_OK;
}

/* ---- users and keys -------------------------------------------------------------------- */

static int user_find(sq_conn_t *c, const char *name, int64_t *user_id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_USER_FIND, &st);
    if (rc != STORE_OK)
        return rc;
    bind_text(st, 1, name);
    rc = step_row(c, st, "user_find");
    if (rc == STORE_OK) {
        *user_id = sqlite3_column_int64(st, 0);
        stmt_done(st);
    }
    return rc;
}

static int sq_user_ensure(store_conn_t *conn, const char *name, int64_t *user_id)
{
    sq_conn_t *c = sq(conn);
    int rc = user_find(c, name, user_id);
    if (rc != STORE_NOTFOUND)
        return rc;
    if ((rc = tx_begin(c)) != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_USER_INSERT, &st)) == STORE_OK) {
        bind_text(st, 1, name);
        sqlite3_bind_int64(st, 2, now_us());
        rc = run(c, st, "user_ensure");
    }
    if (rc == STORE_OK)
        rc = user_find(c, name, user_id);
    if (rc == STORE_NOTFOUND)
        rc = STORE_ERROR;
    return tx_end(c, rc);
}

static int sq_key_insert(store_conn_t *conn, int64_t user_id, const char *hash_hex,
                         const char *prefix, int64_t *key_id)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_KEY_INSERT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        bind_text(st, 2, hash_hex);
        bind_text(st, 3, prefix);
        sqlite3_bind_int64(st, 4, now_us());
        rc = run(c, st, "key_insert");
    }
    int64_t id = sqlite3_last_insert_rowid(c->db);
    rc = tx_end(c, rc);
    if (rc == STORE_OK)
        *key_id = id;
    return rc;
}

/* A read session: BEGIN now, so the reads of one request (its key, then its
 * records) share one read transaction — one snapshot, one lock. */
static void sq_read_begin(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    if (!c->session && sqlite3_get_autocommit(c->db) &&
        run_fixed(c, ST_BEGIN_READ, "begin") == STORE_OK)
        c->session = true;
}

static void sq_read_end(store_conn_t *conn)
{
    session_close(sq(conn));
}

static int sq_key_auth(store_conn_t *conn, const char *hash_hex, int64_t *user_id,
                       int64_t *key_id)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, ST_KEY_AUTH, &st);
    if (rc != STORE_OK)
        return rc;
    bind_text(st, 1, hash_hex);
    rc = step_row(c, st, "key_auth");
    if (rc == STORE_OK) {
        /* the index found it; the digest is confirmed in constant time all the same */
        const unsigned char *stored = sqlite3_column_text(st, 2);
        if (!stored || strlen((const char *)stored) != 64 || !ct_equal(stored, hash_hex, 64))
            rc = STORE_NOTFOUND;
        *user_id = sqlite3_column_int64(st, 0);
        *key_id = sqlite3_column_int64(st, 1);
        stmt_done(st);
    }
    return rc;
}

static int sq_key_list(store_conn_t *conn, arena_t *a, key_info_t **out, size_t *n)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, ST_KEY_LIST, &st);
    if (rc != STORE_OK)
        return rc;
    key_info_t *v = NULL;
    size_t len = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            cap = cap ? 2 * cap : 16;
            v = xrealloc(v, cap * sizeof(*v));
        }
        key_info_t *k = &v[len++];
        k->id = sqlite3_column_int64(st, 0);
        k->user_id = sqlite3_column_int64(st, 1);
        k->user_name = col_text(st, 2, a);
        k->prefix = col_text(st, 3, a);
        k->created_us = sqlite3_column_int64(st, 4);
        k->revoked_us = sqlite3_column_int64(st, 5); /* NULL reads as 0 = active */
    }
    rc = src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "key_list");
    stmt_done(st);
    if (rc == STORE_OK) {
        *out = arena_alloc(a, (len ? len : 1) * sizeof(**out));
        if (len)
            memcpy(*out, v, len * sizeof(*v));
        *n = len;
    }
    free(v);
    return rc;
}

static int sq_key_revoke(store_conn_t *conn, int64_t key_id)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_KEY_REVOKE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, key_id);
        sqlite3_bind_int64(st, 2, now_us());
        rc = run(c, st, "key_revoke");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    return tx_end(c, rc);
}

/* ---- records --------------------------------------------------------------------------- */

/* A token count: -1 when NULL (not said). */
static int64_t col_tokens(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static void bind_tokens(sqlite3_stmt *st, int i, int64_t n)
{
    if (n < 0)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, n);
}

/* Reads a row of DOC_COLS / IMG_COLS. */
static void read_record(sqlite3_stmt *st, rec_kind_t kind, arena_t *a, record_t *r)
{
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->id = sqlite3_column_int64(st, 0);
    r->user_id = sqlite3_column_int64(st, 1);
    r->name = col_text(st, 2, a);
    r->favorite = sqlite3_column_int(st, 3) != 0;
    r->state = rec_state_parse((const char *)sqlite3_column_text(st, 4));
    r->error = col_text(st, 5, a);
    r->created_us = sqlite3_column_int64(st, 6);
    r->updated_us = sqlite3_column_int64(st, 7);
    if (kind == KIND_DOC) {
        r->prompt = col_text(st, 8, a);
        r->creativity = sqlite3_column_double(st, 9);
        r->template_id = sqlite3_column_int(st, 10);
        r->result = col_text(st, 11, a);
        r->words = sqlite3_column_int64(st, 12);
        r->prompt_tokens = col_tokens(st, 13);
        r->completion_tokens = col_tokens(st, 14);
        r->truncated = sqlite3_column_int(st, 15) != 0;
    } else {
        r->description = col_text(st, 8, a);
        r->resolution = col_text(st, 9, a);
        r->style = col_text(st, 10, a);
        r->media_key = col_text(st, 11, a);
        r->revised_prompt = col_text(st, 12, a);
    }
}

/* A new record, "queued"; done: a document already "completed" with its result. */
static int insert_record(sq_conn_t *c, const record_t *rec, int64_t now, bool done, int64_t *id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, done ? ST_INSERT_DOC_DONE : ST_INSERT_DOC + (rec->kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, rec->user_id);
    bind_text(st, 2, rec->name);
    sqlite3_bind_int(st, 3, rec->favorite ? 1 : 0);
    sqlite3_bind_int64(st, 4, now);
    if (rec->kind == KIND_DOC) {
        bind_text(st, 5, rec->prompt);
        sqlite3_bind_double(st, 6, rec->creativity);
        sqlite3_bind_int(st, 7, rec->template_id);
        if (done) {
            bind_text(st, 8, rec->result);
            sqlite3_bind_int64(st, 9, rec->words);
            bind_tokens(st, 10, rec->prompt_tokens);
            bind_tokens(st, 11, rec->completion_tokens);
            sqlite3_bind_int(st, 12, rec->truncated ? 1 : 0);
        }
    } else {
        bind_text(st, 5, rec->description);
        bind_text(st, 6, rec->resolution);
        bind_text(st, 7, rec->style);
    }
    rc = run(c, st, "record_create");
    if (rc != STORE_OK)
        return rc;
    *id = sqlite3_last_insert_rowid(c->db);
    /* its row of the search index (migration 3), in the same transaction */
    if ((rc = stmt(c, ST_FTS_INSERT_DOC + (rec->kind == KIND_IMG), &st)) != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, *id);
    bind_text(st, 2, rec->name);
    if (rec->kind == KIND_DOC && done)
        bind_text(st, 3, rec->result);
    return run(c, st, "record_create");
}

static int insert_job(sq_conn_t *c, rec_kind_t kind, int64_t record_id, int64_t now,
                      int64_t *job_id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_JOB_INSERT, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    sqlite3_bind_int64(st, 2, record_id);
    sqlite3_bind_int64(st, 3, now);
    rc = run(c, st, "record_create");
    if (rc == STORE_OK)
        *job_id = sqlite3_last_insert_rowid(c->db);
    return rc;
}

static int sq_record_create(store_conn_t *conn, record_t *rec, int64_t *job_id)
{
    sq_conn_t *c = sq(conn);
    int64_t now = now_us(), id = 0, jid = 0;
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = insert_record(c, rec, now, false, &id);
    if (rc == STORE_OK)
        rc = insert_job(c, rec->kind, id, now, &jid);
    if ((rc = tx_end(c, rc)) != STORE_OK)
        return rc;
    rec->id = id;
    store_record_inserted(rec, REC_QUEUED, now);
    *job_id = jid;
    return STORE_OK;
}

static int sq_docs_create_completed(store_conn_t *conn, record_t *const *recs, size_t n)
{
    sq_conn_t *c = sq(conn);
    if (!store_docs_finished(recs, n))
        return STORE_ERROR;
    int64_t now = now_us();
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    for (size_t i = 0; i < n && rc == STORE_OK; i++)
        rc = insert_record(c, recs[i], now, true, &recs[i]->id);
    if ((rc = tx_end(c, rc)) != STORE_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        store_record_inserted(recs[i], REC_COMPLETED, now);
    return STORE_OK;
}

/* With a probe that answers true, only kind, id, updated_us and probed are set. */
static int sq_record_get_probed(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                                record_probe_fn probe, void *probe_arg, arena_t *a,
                                record_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, ST_GET_DOC + (kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    if ((rc = step_row(c, st, "record_get")) != STORE_OK)
        return rc;
    int64_t updated = sqlite3_column_int64(st, 7); /* DOC_COLS, IMG_COLS: column 7 */
    if (probe && probe(probe_arg, kind, id, updated)) {
        memset(out, 0, sizeof(*out));
        out->kind = kind;
        out->id = id;
        out->updated_us = updated;
        out->probed = true;
    } else {
        read_record(st, kind, a, out);
    }
    stmt_done(st);
    return STORE_OK;
}

static int sq_record_get(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                         arena_t *a, record_t *out)
{
    return sq_record_get_probed(conn, kind, user_id, id, NULL, NULL, a, out);
}

static int sq_record_update(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                            const record_patch_t *p, arena_t *a, record_t *out)
{
    sq_conn_t *c = sq(conn);
    record_t r = {0};
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_UPDATE_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    bind_text(st, 3, p->name);
    if (kind == KIND_DOC) {
        sqlite3_bind_int(st, 4, p->result != NULL);
        bind_text(st, 5, p->result);
        sqlite3_bind_int64(st, 6, p->words);
    }
    sqlite3_bind_int(st, 7, p->favorite < 0 ? -1 : p->favorite != 0);
    sqlite3_bind_int64(st, 8, now_us());
    rc = step_row(c, st, "record_update");
    if (rc == STORE_OK) {
        read_record(st, kind, a, &r);
        stmt_done(st);
    }
out:
    rc = tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

static int delete_jobs_of(sq_conn_t *c, rec_kind_t kind, int64_t record_id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_JOB_DELETE_RECORD, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    sqlite3_bind_int64(st, 2, record_id);
    return run(c, st, "record_delete");
}

static int sq_record_delete(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                            arena_t *a, const char **media_key)
{
    sq_conn_t *c = sq(conn);
    const char *key = NULL;
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_DELETE_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    rc = step_row(c, st, "record_delete");
    if (rc != STORE_OK)
        goto out;
    key = col_text(st, 0, a);
    stmt_done(st);
    rc = delete_jobs_of(c, kind, id);
out:
    rc = tx_end(c, rc);
    if (rc == STORE_OK)
        *media_key = key;
    return rc;
}

/* ---- lists ----------------------------------------------------------------------------- */

/* How many rows of the order a name-ordered search looks through before it asks the
 * index (see list_page). */
#define WINDOW_ROWS 1000
#define WINDOW_MAX_END 100 /* only for pages ending this early in the order */

/* The filters of key k other than user and search. */
static void list_filters(int k, buf_t *b)
{
    if (k & LQ_FILTER)
        buf_puts(b, k & LQ_IMG ? " AND resolution = ?3" : " AND template_id = ?3");
    if (k & LQ_STYLE)
        buf_puts(b, " AND style = ?4");
    if (k & LQ_FAVORITE)
        buf_puts(b, " AND favorite = ?5");
}

/* LQ_WINDOW: the page among the first WINDOW_ROWS rows of the name order (with the
 * filters) only. The window's ids and names come from the name index; the page is
 * picked from them (a name search checks the name there, a result search reads each
 * row's result), and only the page's rows are read whole. */
static void list_window_sql(int k, const char *table, buf_t *b)
{
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    buf_printf(b, " FROM (SELECT wid FROM (SELECT id AS wid, name AS wname FROM %s"
                  " WHERE user_id = ?1", table);
    list_filters(k, b);
    buf_printf(b, " ORDER BY name COLLATE BINARY %s, id %s LIMIT ?9)", dir, dir);
    if (k & LQ_SEARCH_RESULT)
        buf_printf(b, " CROSS JOIN %s ON %s.id = wid WHERE result LIKE ?2 ESCAPE '\\'", table,
                   table);
    else
        buf_puts(b, " WHERE wname LIKE ?2 ESCAPE '\\'");
    buf_printf(b, " ORDER BY wname COLLATE BINARY %s, wid %s LIMIT ?6 OFFSET ?7)"
                  " CROSS JOIN %s ON %s.id = wid ORDER BY name COLLATE BINARY %s, id %s",
               dir, dir, table, table, dir, dir);
}

/* The SQL of a list key, from fixed fragments only.
 *
 * A search of three characters or more (LQ_INDEXED) reads the trigram table first and
 * each candidate's row by its id (CROSS JOIN keeps that order: the full-text table
 * gives its rowids in id order, so an id-ordered page stops after its rows). LIKE then
 * checks each candidate with the contract's semantics: the index gives a superset
 * (the rows holding every trigram, migration 7), the check keeps results exactly those
 * of a scan. */
static void list_sql(int k, buf_t *b)
{
    bool img = k & LQ_IMG;
    const char *table = img ? "images" : "documents";
    if (k & LQ_COUNT)
        buf_puts(b, "SELECT COUNT(*)");
    else if (k & LQ_KEYS)
        buf_puts(b, "SELECT id, updated_us");
    else
        buf_puts(b, img ? "SELECT " IMG_COLS : "SELECT " DOC_COLS);
    if (k & LQ_WINDOW) {
        list_window_sql(k, table, b);
        return;
    }
    if (k & LQ_INDEXED)
        buf_printf(b, " FROM %s_fts CROSS JOIN %s ON %s.id = %s_fts.rowid"
                      " WHERE %s_fts MATCH ?8 AND user_id = ?1",
                   table, table, table, table, table);
    else
        buf_printf(b, " FROM %s WHERE user_id = ?1", table);
    if (k & LQ_SEARCH_NAME)
        buf_puts(b, " AND name LIKE ?2 ESCAPE '\\'");
    if (k & LQ_SEARCH_RESULT)
        buf_puts(b, " AND result LIKE ?2 ESCAPE '\\'");
    list_filters(k, b);
    if (k & LQ_COUNT)
        return;
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    if (k & LQ_BY_NAME)
        buf_printf(b, " ORDER BY name COLLATE BINARY %s, id %s", dir, dir);
    else if (k & LQ_INDEXED)
        buf_printf(b, " ORDER BY %s_fts.rowid %s", table, dir);
    else
        buf_printf(b, " ORDER BY id %s", dir);
    buf_puts(b, " LIMIT ?6 OFFSET ?7");
}

static int list_stmt(sq_conn_t *c, int k, sqlite3_stmt **out)
{
    if (!c->list[k]) {
        buf_t sql;
        buf_init(&sql);
        list_sql(k, &sql);
        int rc = prepare(c, sql.data, &c->list[k], "record_list prepare");
        buf_free(&sql);
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->list[k];
    return STORE_OK;
}

/* The search as bound to a list statement: the LIKE pattern, and the full-text query
 * on the key's column: its trigrams, folded like the index, '"' doubled. */
typedef struct {
    const char *like, *match;
} list_search_t;

#define MATCH_TRIGRAMS 32

/* The character after the one at s (UTF-8; s itself at the end of the string). */
static const char *char_after(const char *s)
{
    if (!*s)
        return s;
    s++;
    while ((*s & 0xC0) == 0x80)
        s++;
    return s;
}

static list_search_t list_search(int k, const list_query_t *q, arena_t *a)
{
    list_search_t ls = {0};
    if (!(k & LQ_SEARCH))
        return ls;
    ls.like = store_like_pattern(q->search, false, a);
    if (!(k & LQ_INDEXED))
        return ls;
    /* an AND of the search's trigrams, one phrase each (the index has no positions,
     * migration 7): each character starts one while three remain, at most
     * MATCH_TRIGRAMS of them (any subset still gives a superset) */
    const char *s = q->search;
    size_t len = strlen(s);
    char *m = arena_alloc(a, 6 * len + 16 + 8 * MATCH_TRIGRAMS), *o = m;
    o += sprintf(o, "%s : (", k & LQ_SEARCH_RESULT ? "sresult" : "sname");
    int n = 0;
    for (const char *t = s; *t && n < MATCH_TRIGRAMS; t = char_after(t)) {
        const char *end = char_after(char_after(char_after(t)));
        if (end == char_after(char_after(t)))
            break; /* under three characters left */
        o += sprintf(o, "%s\"", n++ ? " AND " : "");
        for (const char *c = t; c < end; c++) {
            if (*c == '"')
                *o++ = '"';
            *o++ = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
        }
        *o++ = '"';
    }
    *o++ = ')';
    *o = '\0';
    ls.match = m;
    return ls;
}

static void list_bind(sqlite3_stmt *st, int k, const list_query_t *q, const list_search_t *ls)
{
    sqlite3_bind_int64(st, LP_USER, q->user_id);
    if (k & LQ_SEARCH)
        bind_text(st, LP_PATTERN, ls->like);
    if ((k & LQ_INDEXED) && !(k & LQ_WINDOW))
        bind_text(st, LP_MATCH, ls->match);
    if (k & LQ_WINDOW)
        sqlite3_bind_int(st, LP_WINDOW, WINDOW_ROWS);
    if (k & LQ_FILTER) {
        if (k & LQ_IMG)
            bind_text(st, LP_FILTER, q->resolution);
        else
            sqlite3_bind_int(st, LP_FILTER, q->template_id);
    }
    if (k & LQ_STYLE)
        bind_text(st, LP_STYLE, q->style);
    if (k & LQ_FAVORITE)
        sqlite3_bind_int(st, LP_FAVORITE, q->favorite != 0);
}

/* Whether the name search of count key k has more than COMMON_ROWS candidates in the
 * index: then a scan of the name index (names only, no row read) counts its rows
 * faster than reading every candidate's row by id. */
#define COMMON_ROWS 5000

static int name_is_common(sq_conn_t *c, int k, const list_search_t *ls, bool *common)
{
    *common = false;
    if (!(k & LQ_INDEXED) || !(k & LQ_SEARCH_NAME))
        return STORE_OK;
    sqlite3_stmt *st;
    int rc = stmt(c, ST_FTS_COMMON_DOC + ((k & LQ_IMG) != 0), &st);
    if (rc != STORE_OK)
        return rc;
    bind_text(st, 1, ls->match);
    sqlite3_bind_int(st, 2, COMMON_ROWS);
    rc = step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        *common = sqlite3_column_int64(st, 0) >= COMMON_ROWS;
        stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* The total of key k: the user's record count for an unfiltered list; otherwise the
 * cached total of this version of the user's records (store_int.h), or a count. */
static int list_total(sq_conn_t *c, int k, const list_query_t *q, const list_search_t *ls,
                      int64_t *total)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = stmt(c, ST_USER_TOTAL, &st)) != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, q->user_id);
    sqlite3_bind_int(st, 2, (k & LQ_IMG) ? 1 : 0);
    int64_t n = 0, version = 0;
    rc = step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        n = sqlite3_column_int64(st, 0);
        version = sqlite3_column_int64(st, 1);
        stmt_done(st);
    } else if (rc != STORE_NOTFOUND) {
        return rc;
    }
    store_counts_t *cc = store_counts(c->base.store);
    if (!(k & LQ_FILTERED) || n == 0) {
        *total = n;
        return STORE_OK;
    }
    if (store_counts_get(cc, (unsigned)k, q, version, total))
        return STORE_OK;
    int ck = (k & ~(LQ_BY_NAME | LQ_ASC | LQ_KEYS | LQ_WINDOW)) | LQ_COUNT;
    bool common = false;
    if ((rc = name_is_common(c, ck, ls, &common)) != STORE_OK)
        return rc;
    if ((rc = list_stmt(c, common ? ck & ~LQ_INDEXED : ck, &st)) != STORE_OK)
        return rc;
    list_bind(st, common ? ck & ~LQ_INDEXED : ck, q, ls);
    rc = step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        *total = sqlite3_column_int64(st, 0);
        stmt_done(st);
        store_counts_put(cc, (unsigned)ck, q, version, *total);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* Runs page statement k: up to per_page rows from offset. */
static int list_rows(sq_conn_t *c, rec_kind_t kind, int k, const list_query_t *q,
                     const list_search_t *ls, int per_page, int64_t offset, arena_t *a,
                     record_list_t *out)
{
    sqlite3_stmt *st;
    int rc = list_stmt(c, k, &st);
    if (rc != STORE_OK)
        return rc;
    list_bind(st, k, q, ls);
    sqlite3_bind_int(st, LP_LIMIT, per_page);
    sqlite3_bind_int64(st, LP_OFFSET, offset);
    int src = SQLITE_DONE;
    bool keys = k & LQ_KEYS;
    out->n = 0;
    while (out->n < (size_t)per_page && (src = sqlite3_step(st)) == SQLITE_ROW) {
        record_t *it = &out->items[out->n++];
        if (!keys) {
            read_record(st, kind, a, it);
            continue;
        }
        memset(it, 0, sizeof(*it));
        it->kind = kind;
        it->id = sqlite3_column_int64(st, 0);
        it->updated_us = sqlite3_column_int64(st, 1);
    }
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "record_list");
    stmt_done(st);
    return rc;
}

/* Reads one page. A page that is neither full nor empty is the last one, which tells
 * the total without counting: *total_known is then set.
 *
 * A name-ordered indexed search early in the order first looks for its page among the
 * first WINDOW_ROWS rows of the order: a common word fills it there without sorting
 * every candidate; a rarer one does not, and the index serves it. */
static int list_page(sq_conn_t *c, rec_kind_t kind, int k, const list_query_t *q,
                     const list_search_t *ls, arena_t *a, record_list_t *out, bool *total_known)
{
    int per_page = q->per_page > 0 ? q->per_page : 10;
    int64_t page = q->page > 0 ? q->page : 1;
    out->items = arena_alloc(a, (size_t)per_page * sizeof(record_t));
    out->n = 0;
    if (page - 1 > (INT64_MAX - per_page) / per_page)
        return STORE_OK; /* so far past the end that the offset would overflow */
    int64_t offset = (page - 1) * per_page;
    int rc = STORE_OK;
    bool done = false;
    if ((k & LQ_INDEXED) && (k & LQ_BY_NAME) && offset + per_page <= WINDOW_MAX_END) {
        rc = list_rows(c, kind, k | LQ_WINDOW, q, ls, per_page, offset, a, out);
        done = rc != STORE_OK || out->n == (size_t)per_page;
    }
    if (!done)
        rc = list_rows(c, kind, k, q, ls, per_page, offset, a, out);
    /* the rows the caller does not hold, whole, in the same read transaction */
    for (size_t i = 0; (k & LQ_KEYS) && rc == STORE_OK && i < out->n; i++) {
        record_t *it = &out->items[i];
        it->probed = q->probe(q->probe_arg, kind, it->id, it->updated_us);
        if (!it->probed)
            rc = sq_record_get(&c->base, kind, q->user_id, it->id, a, it);
        if (rc == STORE_NOTFOUND)
            rc = STORE_ERROR; /* cannot happen: the same snapshot listed it */
    }
    if (rc == STORE_OK && out->n > 0 && out->n < (size_t)per_page) {
        out->total = offset + (int64_t)out->n;
        *total_known = true;
    }
    return rc;
}

/* Page and total are read in one read transaction: they agree with each other. */
static int sq_record_list(store_conn_t *conn, rec_kind_t kind, const list_query_t *q,
                          arena_t *a, record_list_t *out)
{
    sq_conn_t *c = sq(conn);
    int k = (int)store_list_key(kind, q) | (q->probe ? LQ_KEYS : 0);
    list_search_t ls = list_search(k, q, a);
    record_list_t r = {0};
    bool total_known = false;
    int rc = tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    rc = list_page(c, kind, k, q, &ls, a, &r, &total_known);
    if (rc == STORE_OK && !total_known)
        rc = list_total(c, k, q, &ls, &r.total);
    rc = tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

/* ---- jobs ------------------------------------------------------------------------------ */

static int64_t lease_end(double lease_s)
{
    return now_us() + (int64_t)(lease_s * 1e6);
}

/* Takes the oldest claimable job: STORE_OK with *kind and *record_id set. */
static int claim_next(sq_conn_t *c, double lease_s, job_t *job, rec_kind_t *kind,
                      int64_t *record_id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_JOB_CLAIM, &st);
    if (rc != STORE_OK)
        return rc;
    random_hex(job->token, 16);
    bind_text(st, 1, job->token);
    sqlite3_bind_int64(st, 2, lease_end(lease_s));
    sqlite3_bind_int64(st, 3, now_us());
    rc = step_row(c, st, "job_claim");
    if (rc == STORE_OK) {
        job->id = sqlite3_column_int64(st, 0);
        *kind = sqlite3_column_int(st, 1) == KIND_IMG ? KIND_IMG : KIND_DOC;
        *record_id = sqlite3_column_int64(st, 2);
        job->attempts = sqlite3_column_int(st, 3);
        stmt_done(st);
    }
    return rc;
}

/* Moves the claimed record to "generating" and reads its inputs; NOTFOUND if the record
 * is gone (the job is then dropped). */
static int start_record(sq_conn_t *c, rec_kind_t kind, int64_t record_id, job_t *job,
                        arena_t *a)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_START_DOC + (kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    sqlite3_bind_int64(st, 2, now_us());
    rc = step_row(c, st, "job_claim");
    if (rc == STORE_OK) {
        read_record(st, kind, a, &job->rec);
        stmt_done(st);
        return STORE_OK;
    }
    if (rc != STORE_NOTFOUND)
        return rc;
    if ((rc = stmt(c, ST_JOB_DELETE, &st)) != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, job->id);
    rc = run(c, st, "job_claim");
    return rc == STORE_OK ? STORE_NOTFOUND : rc;
}

static int sq_job_claim(store_conn_t *conn, double lease_s, arena_t *a, job_t *out)
{
    sq_conn_t *c = sq(conn);
    for (;;) {
        job_t job;
        memset(&job, 0, sizeof(job));
        rec_kind_t kind = KIND_DOC;
        int64_t record_id = 0;
        int rc = tx_begin(c);
        if (rc != STORE_OK)
            return rc;
        rc = claim_next(c, lease_s, &job, &kind, &record_id);
        bool orphan = false;
        if (rc == STORE_OK) {
            rc = start_record(c, kind, record_id, &job, a);
            orphan = rc == STORE_NOTFOUND;
        }
        /* An orphan job was deleted: commit that and look again. */
        rc = tx_end(c, orphan ? STORE_OK : rc);
        if (rc != STORE_OK)
            return rc;
        if (orphan)
            continue;
        *out = job;
        return STORE_OK;
    }
}

static int sq_job_renew(store_conn_t *conn, int64_t job_id, const char *token, double lease_s)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_JOB_RENEW, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, job_id);
        bind_text(st, 2, token);
        sqlite3_bind_int64(st, 3, lease_end(lease_s));
        rc = run(c, st, "job_renew");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_STALE;
    }
    return tx_end(c, rc);
}

/* Deletes the job while its token matches: STORE_STALE when it no longer does. */
static int finish_job(sq_conn_t *c, const job_t *job, rec_kind_t *kind, int64_t *record_id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_JOB_FINISH, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, job->id);
    bind_text(st, 2, job->token);
    rc = step_row(c, st, "job_finish");
    if (rc == STORE_OK) {
        *kind = sqlite3_column_int(st, 0) == KIND_IMG ? KIND_IMG : KIND_DOC;
        *record_id = sqlite3_column_int64(st, 1);
        stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_STALE : rc;
}

static int sq_job_complete(store_conn_t *conn, const job_t *job, const char *result,
                           int64_t words, const char *media_key, const char *revised_prompt)
{
    sq_conn_t *c = sq(conn);
    rec_kind_t kind;
    int64_t record_id;
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = finish_job(c, job, &kind, &record_id)) != STORE_OK)
        goto out;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_COMPLETE_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, record_id);
    sqlite3_bind_int64(st, 2, now_us());
    if (kind == KIND_DOC) {
        bind_text(st, 3, result);
        sqlite3_bind_int64(st, 4, words);
        bind_tokens(st, 5, job->rec.prompt_tokens);
        bind_tokens(st, 6, job->rec.completion_tokens);
        sqlite3_bind_int(st, 7, job->rec.truncated ? 1 : 0);
    } else {
        bind_text(st, 3, media_key);
        bind_text(st, 4, revised_prompt);
    }
    rc = run(c, st, "job_complete");
out:
    return tx_end(c, rc);
}

static int sq_job_fail(store_conn_t *conn, const job_t *job, const char *error)
{
    sq_conn_t *c = sq(conn);
    rec_kind_t kind;
    int64_t record_id;
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = finish_job(c, job, &kind, &record_id)) != STORE_OK)
        goto out;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_FAIL_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, record_id);
    sqlite3_bind_int64(st, 2, now_us());
    bind_text(st, 3, error);
    rc = run(c, st, "job_fail");
out:
    return tx_end(c, rc);
}

static int sq_job_count(store_conn_t *conn, int64_t *n)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, ST_JOB_COUNT, &st);
    if (rc != STORE_OK)
        return rc;
    rc = step_row(c, st, "job_count");
    if (rc == STORE_OK) {
        *n = sqlite3_column_int64(st, 0);
        stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* Every lease held is dropped (one statement, autocommit). */
static int sq_job_release_all(store_conn_t *conn, int64_t *n)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = exec_sql(c, "UPDATE jobs SET token = NULL, lease_until_us = NULL WHERE token IS NOT NULL",
                  "job_release_all");
    *n = rc == STORE_OK ? sqlite3_changes(c->db) : 0;
    /* requests in progress died with the previous process: their keys are free again */
    if (rc == STORE_OK)
        rc = exec_sql(c, "DELETE FROM idempotency_keys WHERE state = 0", "job_release_all");
    return tx_end(c, rc);
}

/* ---- rate limiting --------------------------------------------------------------------- */

static int sq_rate_gcra(store_conn_t *conn, const char *bucket, int64_t now, int64_t interval,
                        int64_t period, bool prune, int64_t *tat_us, bool *allowed)
{
    sq_conn_t *c = sq(conn);
    int64_t tat = 0;
    bool ok = false;
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if (prune) {
        if ((rc = stmt(c, ST_RATE_PRUNE, &st)) != STORE_OK)
            goto out;
        sqlite3_bind_int64(st, 1, now);
        if ((rc = run(c, st, "rate_gcra")) != STORE_OK)
            goto out;
    }
    if ((rc = stmt(c, ST_RATE_HIT, &st)) != STORE_OK)
        goto out;
    bind_text(st, 1, bucket);
    sqlite3_bind_int64(st, 2, now);
    sqlite3_bind_int64(st, 3, interval);
    sqlite3_bind_int64(st, 4, period);
    rc = step_row(c, st, "rate_gcra");
    if (rc != STORE_OK) {
        rc = rc == STORE_NOTFOUND ? STORE_ERROR : rc;
        goto out;
    }
    tat = sqlite3_column_int64(st, 0);
    ok = sqlite3_column_int(st, 1) != 0;
    stmt_done(st);
out:
    rc = tx_end(c, rc);
    if (rc == STORE_OK) {
        *tat_us = tat;
        *allowed = ok;
    }
    return rc;
}

/* ---- idempotency keys ------------------------------------------------------------------ */

static int idem_take(sq_conn_t *c, int64_t user_id, const char *key, const char *digest,
                     int64_t now, int64_t lease_us, int64_t ttl_us, idem_t *out)
{
    sqlite3_stmt *st;
    int rc = stmt(c, ST_IDEM_TAKE, &st);
    if (rc != STORE_OK)
        return rc;
    random_hex(out->token, 16);
    sqlite3_bind_int64(st, 1, user_id);
    bind_text(st, 2, key);
    bind_text(st, 3, digest);
    bind_text(st, 4, out->token);
    sqlite3_bind_int64(st, 5, now + lease_us);
    sqlite3_bind_int64(st, 6, now + ttl_us);
    sqlite3_bind_int64(st, 7, now);
    rc = step_row(c, st, "idem_begin");
    if (rc == STORE_OK)
        stmt_done(st);
    return rc; /* NOTFOUND: the key is held */
}

static int sq_idem_begin(store_conn_t *conn, int64_t user_id, const char *key,
                         const char *digest, int64_t now, int64_t lease_us, int64_t ttl_us,
                         bool prune, arena_t *a, idem_t *out)
{
    sq_conn_t *c = sq(conn);
    memset(out, 0, sizeof(*out));
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if (prune) {
        if ((rc = stmt(c, ST_IDEM_PRUNE, &st)) != STORE_OK)
            goto out;
        sqlite3_bind_int64(st, 1, now);
        if ((rc = run(c, st, "idem_begin")) != STORE_OK)
            goto out;
    }
    rc = idem_take(c, user_id, key, digest, now, lease_us, ttl_us, out);
    if (rc == STORE_OK) {
        out->state = IDEM_NEW;
        goto out;
    }
    if (rc != STORE_NOTFOUND || (rc = stmt(c, ST_IDEM_GET, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, user_id);
    bind_text(st, 2, key);
    if ((rc = step_row(c, st, "idem_begin")) != STORE_OK) {
        rc = rc == STORE_NOTFOUND ? STORE_ERROR : rc; /* held, so there (one transaction) */
        goto out;
    }
    const char *d = (const char *)sqlite3_column_text(st, 0);
    if (!d || strcmp(d, digest) != 0) {
        out->state = IDEM_MISMATCH;
    } else if (sqlite3_column_int(st, 1) == 0) {
        out->state = IDEM_BUSY;
    } else {
        out->state = IDEM_REPLAY;
        out->status = sqlite3_column_int(st, 2);
        out->location = col_text(st, 3, a);
        out->body = col_text(st, 4, a);
        if (!out->body)
            out->body = "";
    }
    stmt_done(st);
out:
    return tx_end(c, rc);
}

static int sq_idem_finish(store_conn_t *conn, int64_t user_id, const char *key,
                          const char *token, int status, const char *location, const char *body,
                          int64_t expires_us)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_IDEM_FINISH, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        bind_text(st, 2, key);
        bind_text(st, 3, token);
        sqlite3_bind_int(st, 4, status);
        bind_text(st, 5, location);
        bind_text(st, 6, body);
        sqlite3_bind_int64(st, 7, expires_us);
        rc = run(c, st, "idem_finish");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_STALE;
    }
    return tx_end(c, rc);
}

static int sq_idem_abort(store_conn_t *conn, int64_t user_id, const char *key, const char *token)
{
    sq_conn_t *c = sq(conn);
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_IDEM_ABORT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        bind_text(st, 2, key);
        bind_text(st, 3, token);
        rc = run(c, st, "idem_abort");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_STALE;
    }
    return tx_end(c, rc);
}

/* ---- media keys ---------------------------------------------------------------------- */

static int sq_media_keys(store_conn_t *conn, arena_t *a, const char ***keys, size_t *n)
{
    sq_conn_t *c = sq(conn);
    *keys = NULL;
    *n = 0;
    int rc = tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_MEDIA_KEYS, &st)) != STORE_OK)
        return tx_end(c, rc);
    size_t cap = 0;
    const char **v = NULL;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            const char **grown = arena_alloc(a, cap * sizeof(*grown));
            if (*n)
                memcpy(grown, v, *n * sizeof(*grown));
            v = grown;
        }
        v[(*n)++] = col_text(st, 0, a);
    }
    rc = step == SQLITE_DONE ? STORE_OK : sq_error(c, step, "media_keys");
    stmt_done(st);
    *keys = v;
    return tx_end(c, rc);
}

const store_ops_t store_sqlite_ops = {
    .name = "sqlite",
    .list_probes = true,
    .open = sq_open,
    .close = sq_close,
    .read_begin = sq_read_begin,
    .read_end = sq_read_end,
    .record_get_probed = sq_record_get_probed,
    STORE_OPS_COMMON(sq),
    .job_release_all = sq_job_release_all,
};
