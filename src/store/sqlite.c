/* sqlite.c — the SQLite backend of store.h (store_sqlite_ops).
 *
 * One connection per thread (store.c caches it). Each connection runs in WAL mode with
 * busy_timeout 5000 ms, synchronous=NORMAL and foreign_keys=ON; WAL checkpoints run in
 * a background thread of the store (see "background checkpoints").
 *
 * Statements: the fixed ones (stmt_sql[]) are prepared on first use with
 * SQLITE_PREPARE_PERSISTENT and kept for the life of the connection; after each use
 * they are reset and their bindings cleared. List queries are assembled only from fixed
 * fragments picked by the query's enum/bool fields (list_key()), never from user text,
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
#include "store/store.h"

#include "core/log.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
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
};

/* ---- fixed statements -------------------------------------------------------------- */

#define DOC_COLS                                                                           \
    "id, user_id, name, favorite, state, error, created_us, updated_us, prompt, "         \
    "creativity, template_id, result, words"
#define IMG_COLS                                                                           \
    "id, user_id, name, favorite, state, error, created_us, updated_us, description, "    \
    "resolution, style, media_key, revised_prompt"

/* Every change to a record moves updated_us strictly forward, so (id, updated_us) names
 * one version of it (api/rcache.h relies on this). */
#define BUMP(now) "updated_us = max(" now ", updated_us + 1)"

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
    ST_JOB_COUNTS,
    ST_USER_TOTAL,
    ST_RATE_HIT,
    ST_RATE_PRUNE,
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
                           "updated_us, prompt, creativity, template_id, result, words) "
                           "VALUES (?1, ?2, ?3, 'completed', ?4, ?4, ?5, ?6, ?7, ?8, ?9)",
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
                        "words = ?4, " BUMP("?2") " WHERE id = ?1",
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
    [ST_USER_TOTAL] = "SELECT n FROM record_counts WHERE user_id = ?1 AND kind = ?2",
    [ST_RATE_HIT] = "INSERT INTO rate_hits(bucket, \"window\", count) VALUES (?1, ?2, 1) "
                    "ON CONFLICT(bucket, \"window\") DO UPDATE SET count = count + 1 "
                    "RETURNING count",
    [ST_RATE_PRUNE] = "DELETE FROM rate_hits WHERE bucket = ?1 AND \"window\" < ?2 - 1",
};

/* ---- list statements: bit keys over fixed fragments ---------------------------------- */

enum {
    LQ_IMG = 1,
    LQ_SEARCH_NAME = 2,
    LQ_SEARCH_RESULT = 4,
    LQ_FILTER = 8, /* template_id (documents) or resolution (images) */
    LQ_STYLE = 16,
    LQ_FAVORITE = 32,
    LQ_BY_NAME = 64,
    LQ_ASC = 128,
    LQ_COUNT = 256, /* the COUNT(*) twin: no order, no limit */
    LQ_KEYS = 512,  /* only id and updated_us (a list with a probe) */
    LQ_SLOTS = 1024
};

/* Parameter numbers used by every list statement. */
enum { LP_USER = 1, LP_PATTERN, LP_FILTER, LP_STYLE, LP_FAVORITE, LP_LIMIT, LP_OFFSET };

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

/* PRAGMA journal_mode answers with the mode now in force. */
static bool set_wal(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    bool ok = false;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        ok = mode && strcmp(mode, "wal") == 0;
    }
    sqlite3_finalize(st);
    return ok;
}

/* ---- background checkpoints --------------------------------------------------------------
 *
 * SQLite's own automatic checkpoint runs inside the COMMIT that crosses its threshold:
 * that commit copies the whole WAL into the database file and syncs it (about 30 ms
 * for 32 MiB here), and every request waiting on it waits too; with the group commit
 * that is a whole batch of creates (their p99 was 40 ms, 7 ms without checkpoints).
 *
 * Instead, a commit that leaves the WAL at the threshold wakes one thread of the store,
 * which runs PASSIVE checkpoints on its own connection: they take no lock a writer or
 * reader needs, so commits go on meanwhile, and each run copies what was committed
 * during the one before, until little is left (CKPT_FINISH frames). The WAL file can
 * only start over once every frame is copied, and the next commit would append more,
 * so that last little part is copied by the next committing thread right after its
 * commit (as SQLite's automatic checkpoint would, but small); its next transaction
 * then starts the WAL over. When a commit finds the WAL at four times the threshold
 * (the thread cannot keep up, or could not start), it checkpoints itself, as SQLite
 * would; while a run of the thread holds the checkpoint lock that attempt answers
 * SQLITE_BUSY at once and the next commit tries again, so the WAL grows by what is
 * committed during one run, never without bound. */

#define CKPT_PAGES_DEFAULT 8192
#define CKPT_FINISH 256

typedef struct {
    store_t *store;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pages;                     /* wake the thread at this many WAL pages */
    bool started, failed, pending, stopping;
    atomic_bool finish;            /* the next commit copies the little that is left */
    pthread_t thread;
    store_checkpoint_stats_t stats;
} sq_ckpt_t;

static void *ckpt_main(void *arg)
{
    sq_ckpt_t *k = arg;
    sqlite3 *db = NULL;
    /* set_wal also makes the connection read the database, so it knows its WAL */
    if (sqlite3_open_v2(k->store->url, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        !set_wal(db)) {
        log_warn("sqlite: checkpoint thread cannot open the database: %s",
                 db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        db = NULL;
    }
    int before = 0; /* WAL frames copied so far, as the last run said */
    pthread_mutex_lock(&k->mu);
    if (!db)
        k->failed = true; /* commits checkpoint themselves from now on */
    while (db) {
        while (!k->pending && !k->stopping)
            pthread_cond_wait(&k->cv, &k->mu);
        if (k->stopping)
            break;
        k->pending = false;
        pthread_mutex_unlock(&k->mu);
        int frames = 0, copied = 0;
        int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied);
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            log_warn("sqlite: background checkpoint failed: %s", sqlite3_errstr(rc));
        pthread_mutex_lock(&k->mu);
        k->stats.background++;
        int fresh = copied >= before ? copied - before : copied; /* less: it started over */
        if (rc == SQLITE_OK && frames >= 0 && fresh <= CKPT_FINISH) {
            /* this run found little to copy, so little was committed during the one
             * before: the rest is the next commit's; a run now would get in its way */
            atomic_store(&k->finish, true);
            k->pending = false;
            before = 0; /* the next wake-up most likely finds a WAL that started over */
        } else {
            if (rc == SQLITE_OK && frames >= 0)
                k->pending = true; /* copy what was committed during this run */
            before = copied;
        }
    }
    pthread_mutex_unlock(&k->mu);
    sqlite3_close(db);
    return NULL;
}

/* sqlite3_wal_hook: runs after each commit, outside its write lock; pages is the
 * length of the WAL, which only goes down when the WAL starts over. */
static int ckpt_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
    sq_ckpt_t *k = arg;
    if (pages < k->pages) {
        /* the WAL started over (finish is only set above the threshold), by this
         * commit or another process: nothing is left to finish */
        if (atomic_load_explicit(&k->finish, memory_order_relaxed)) {
            pthread_mutex_lock(&k->mu);
            atomic_store(&k->finish, false);
            pthread_mutex_unlock(&k->mu);
        }
        return SQLITE_OK;
    }
    unsigned long *count = NULL; /* the checkpoint this commit runs itself, if any */
    pthread_mutex_lock(&k->mu);
    if (!k->started && !k->failed && !k->stopping) {
        if (pthread_create(&k->thread, NULL, ckpt_main, k) == 0)
            k->started = true;
        else
            k->failed = true;
    }
    if (atomic_load(&k->finish)) {
        atomic_store(&k->finish, false);
        count = &k->stats.finish;
    } else if (pages >= 4 * k->pages || k->failed || k->stopping) {
        count = &k->stats.self;
    } else {
        k->pending = true;
        pthread_cond_signal(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    /* counted when it ran: while a run of the thread holds the checkpoint lock it
     * answers SQLITE_BUSY at once */
    if (count && sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) ==
                     SQLITE_OK) {
        pthread_mutex_lock(&k->mu);
        (*count)++;
        pthread_mutex_unlock(&k->mu);
    }
    return SQLITE_OK;
}

static void sq_open(store_t *s)
{
    sq_ckpt_t *k = xcalloc(1, sizeof(*k));
    k->store = s;
    k->pages = CKPT_PAGES_DEFAULT;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    s->backend = k;
}

static void sq_close(store_t *s)
{
    sq_ckpt_t *k = s->backend;
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stopping = true;
    bool started = k->started;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    if (started)
        pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
    s->backend = NULL;
}

void store_sqlite_checkpoint_pages(store_t *s, int pages)
{
    sq_ckpt_t *k = s->ops == &store_sqlite_ops ? s->backend : NULL;
    if (k && pages > 0)
        k->pages = pages; /* before any connection commits */
}

bool store_sqlite_checkpoint_stats(store_t *s, store_checkpoint_stats_t *out)
{
    sq_ckpt_t *k = s->ops == &store_sqlite_ops ? s->backend : NULL;
    if (!k)
        return false;
    pthread_mutex_lock(&k->mu);
    *out = k->stats;
    pthread_mutex_unlock(&k->mu);
    return true;
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
    if (!set_wal(c->db)) {
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
    /* replaces SQLite's automatic checkpoint (see "background checkpoints") */
    sqlite3_wal_hook(c->db, ckpt_hook, s->backend);
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

/* Reads a row of DOC_COLS / IMG_COLS. */
static void read_record(sqlite3_stmt *st, rec_kind_t kind, arena_t *a, record_t *r)
{
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->id = sqlite3_column_int64(st, 0);
    r->user_id = sqlite3_column_int64(st, 1);
    r->name = col_text(st, 2, a);
    r->favorite = sqlite3_column_int(st, 3) != 0;
    r->state = col_text(st, 4, a);
    r->error = col_text(st, 5, a);
    r->created_us = sqlite3_column_int64(st, 6);
    r->updated_us = sqlite3_column_int64(st, 7);
    if (kind == KIND_DOC) {
        r->prompt = col_text(st, 8, a);
        r->creativity = sqlite3_column_double(st, 9);
        r->template_id = sqlite3_column_int(st, 10);
        r->result = col_text(st, 11, a);
        r->words = sqlite3_column_int64(st, 12);
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
        }
    } else {
        bind_text(st, 5, rec->description);
        bind_text(st, 6, rec->resolution);
        bind_text(st, 7, rec->style);
    }
    rc = run(c, st, "record_create");
    if (rc == STORE_OK)
        *id = sqlite3_last_insert_rowid(c->db);
    return rc;
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
    store_record_inserted(rec, "queued", now);
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
        store_record_inserted(recs[i], "completed", now);
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

static bool has_search(const list_query_t *q)
{
    return q->search && q->search[0];
}

static int list_key(rec_kind_t kind, const list_query_t *q)
{
    int k = kind == KIND_IMG ? LQ_IMG : 0;
    if (has_search(q))
        k |= kind == KIND_DOC && q->search_result ? LQ_SEARCH_RESULT : LQ_SEARCH_NAME;
    if (kind == KIND_DOC ? q->template_id > 0 : q->resolution != NULL)
        k |= LQ_FILTER;
    if (kind == KIND_IMG && q->style)
        k |= LQ_STYLE;
    if (q->favorite >= 0)
        k |= LQ_FAVORITE;
    if (q->sort_by_name)
        k |= LQ_BY_NAME;
    if (q->asc)
        k |= LQ_ASC;
    return k;
}

/* The SQL of a list key, from fixed fragments only. */
static void list_sql(int k, buf_t *b)
{
    bool img = k & LQ_IMG;
    if (k & LQ_COUNT)
        buf_puts(b, "SELECT COUNT(*) FROM ");
    else if (k & LQ_KEYS)
        buf_puts(b, "SELECT id, updated_us FROM ");
    else
        buf_puts(b, img ? "SELECT " IMG_COLS " FROM " : "SELECT " DOC_COLS " FROM ");
    buf_puts(b, img ? "images WHERE user_id = ?1" : "documents WHERE user_id = ?1");
    if (k & LQ_SEARCH_NAME)
        buf_puts(b, " AND name LIKE ?2 ESCAPE '\\'");
    if (k & LQ_SEARCH_RESULT)
        buf_puts(b, " AND result LIKE ?2 ESCAPE '\\'");
    if (k & LQ_FILTER)
        buf_puts(b, img ? " AND resolution = ?3" : " AND template_id = ?3");
    if (k & LQ_STYLE)
        buf_puts(b, " AND style = ?4");
    if (k & LQ_FAVORITE)
        buf_puts(b, " AND favorite = ?5");
    if (k & LQ_COUNT)
        return;
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    if (k & LQ_BY_NAME)
        buf_printf(b, " ORDER BY name COLLATE BINARY %s, id %s", dir, dir);
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

/* '%' + search with '%', '_' and '\' escaped by '\' + '%'. */
static char *like_pattern(const char *s, arena_t *a)
{
    size_t n = strlen(s);
    char *p = arena_alloc(a, 2 * n + 3), *o = p;
    *o++ = '%';
    for (; *s; s++) {
        if (*s == '%' || *s == '_' || *s == '\\')
            *o++ = '\\';
        *o++ = *s;
    }
    *o++ = '%';
    *o = '\0';
    return p;
}

static void list_bind(sqlite3_stmt *st, int k, const list_query_t *q, const char *pattern)
{
    sqlite3_bind_int64(st, LP_USER, q->user_id);
    if (k & (LQ_SEARCH_NAME | LQ_SEARCH_RESULT))
        bind_text(st, LP_PATTERN, pattern);
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

static int list_total(sq_conn_t *c, int k, const list_query_t *q, const char *pattern,
                      int64_t *total)
{
    sqlite3_stmt *st;
    int rc;
    if (!(k & (LQ_SEARCH_NAME | LQ_SEARCH_RESULT | LQ_FILTER | LQ_STYLE | LQ_FAVORITE))) {
        /* unfiltered: the count kept by the triggers of migration 2 */
        if ((rc = stmt(c, ST_USER_TOTAL, &st)) != STORE_OK)
            return rc;
        sqlite3_bind_int64(st, 1, q->user_id);
        sqlite3_bind_int(st, 2, (k & LQ_IMG) ? 1 : 0);
        rc = step_row(c, st, "record_list");
        if (rc == STORE_OK) {
            *total = sqlite3_column_int64(st, 0);
            stmt_done(st);
        } else if (rc == STORE_NOTFOUND) {
            *total = 0;
            rc = STORE_OK;
        }
        return rc;
    }
    rc = list_stmt(c, (k & ~(LQ_BY_NAME | LQ_ASC | LQ_KEYS)) | LQ_COUNT, &st);
    if (rc != STORE_OK)
        return rc;
    list_bind(st, k, q, pattern);
    rc = step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        *total = sqlite3_column_int64(st, 0);
        stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* Reads one page. A page that is neither full nor empty is the last one, which tells
 * the total without counting: *total_known is then set. */
static int list_page(sq_conn_t *c, rec_kind_t kind, int k, const list_query_t *q,
                     const char *pattern, arena_t *a, record_list_t *out, bool *total_known)
{
    int per_page = q->per_page > 0 ? q->per_page : 10;
    int64_t page = q->page > 0 ? q->page : 1;
    out->items = arena_alloc(a, (size_t)per_page * sizeof(record_t));
    out->n = 0;
    if (page - 1 > (INT64_MAX - per_page) / per_page)
        return STORE_OK; /* so far past the end that the offset would overflow */
    sqlite3_stmt *st;
    int rc = list_stmt(c, k, &st);
    if (rc != STORE_OK)
        return rc;
    list_bind(st, k, q, pattern);
    sqlite3_bind_int(st, LP_LIMIT, per_page);
    sqlite3_bind_int64(st, LP_OFFSET, (page - 1) * per_page);
    int src = SQLITE_DONE;
    bool keys = k & LQ_KEYS;
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
        it->probed = q->probe(q->probe_arg, kind, it->id, it->updated_us);
    }
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "record_list");
    stmt_done(st);
    /* the rows the caller does not hold, whole, in the same read transaction */
    for (size_t i = 0; keys && rc == STORE_OK && i < out->n; i++) {
        record_t *it = &out->items[i];
        if (!it->probed)
            rc = sq_record_get(&c->base, kind, q->user_id, it->id, a, it);
        if (rc == STORE_NOTFOUND)
            rc = STORE_ERROR; /* cannot happen: the same snapshot listed it */
    }
    if (rc == STORE_OK && out->n > 0 && out->n < (size_t)per_page) {
        out->total = (page - 1) * per_page + (int64_t)out->n;
        *total_known = true;
    }
    return rc;
}

/* Page and total are read in one read transaction: they agree with each other. */
static int sq_record_list(store_conn_t *conn, rec_kind_t kind, const list_query_t *q,
                          arena_t *a, record_list_t *out)
{
    sq_conn_t *c = sq(conn);
    int k = list_key(kind, q) | (q->probe ? LQ_KEYS : 0);
    const char *pattern = has_search(q) ? like_pattern(q->search, a) : NULL;
    record_list_t r = {0};
    bool total_known = false;
    int rc = tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    rc = list_page(c, kind, k, q, pattern, a, &r, &total_known);
    if (rc == STORE_OK && !total_known)
        rc = list_total(c, k, q, pattern, &r.total);
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

static int sq_job_counts(store_conn_t *conn, int64_t *queued, int64_t *running)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, ST_JOB_COUNTS, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, now_us());
    rc = step_row(c, st, "job_counts");
    if (rc == STORE_OK) {
        *queued = sqlite3_column_int64(st, 0);
        *running = sqlite3_column_int64(st, 1);
        stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* ---- rate limiting --------------------------------------------------------------------- */

static int sq_rate_hit(store_conn_t *conn, const char *bucket, int64_t window, int64_t *count)
{
    sq_conn_t *c = sq(conn);
    int64_t n = 0;
    int rc = tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, ST_RATE_HIT, &st)) != STORE_OK)
        goto out;
    bind_text(st, 1, bucket);
    sqlite3_bind_int64(st, 2, window);
    rc = step_row(c, st, "rate_hit");
    if (rc != STORE_OK) {
        rc = rc == STORE_NOTFOUND ? STORE_ERROR : rc;
        goto out;
    }
    n = sqlite3_column_int64(st, 0);
    stmt_done(st);
    if ((rc = stmt(c, ST_RATE_PRUNE, &st)) != STORE_OK)
        goto out;
    bind_text(st, 1, bucket);
    sqlite3_bind_int64(st, 2, window);
    rc = run(c, st, "rate_hit");
out:
    rc = tx_end(c, rc);
    if (rc == STORE_OK)
        *count = n;
    return rc;
}

const store_ops_t store_sqlite_ops = {
    .name = "sqlite",
    .list_probes = true,
    .open = sq_open,
    .close = sq_close,
    .connect = sq_connect,
    .disconnect = sq_disconnect,
    .migrate = sq_migrate,
    .ping = sq_ping,
    .user_ensure = sq_user_ensure,
    .key_insert = sq_key_insert,
    .read_begin = sq_read_begin,
    .read_end = sq_read_end,
    .key_auth = sq_key_auth,
    .key_list = sq_key_list,
    .key_revoke = sq_key_revoke,
    .record_create = sq_record_create,
    .docs_create_completed = sq_docs_create_completed,
    .record_get = sq_record_get,
    .record_get_probed = sq_record_get_probed,
    .record_update = sq_record_update,
    .record_delete = sq_record_delete,
    .record_list = sq_record_list,
    .job_claim = sq_job_claim,
    .job_renew = sq_job_renew,
    .job_complete = sq_job_complete,
    .job_fail = sq_job_fail,
    .job_count = sq_job_count,
    .job_counts = sq_job_counts,
    .rate_hit = sq_rate_hit,
};
