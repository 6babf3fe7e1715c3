/* sqlite.c — the SQLite backend of store.h (store_sqlite_ops): the ops table, errors,
 * statement helpers, transactions, the connection. The rest of the
 * backend: sqlite_schema.c (migrations, the fixed statements' SQL), sqlite_records.c,
 * sqlite_lists.c, sqlite_jobs.c, sqlite_limits.c (rate limits, idempotency keys),
 * sqlite_users.c (users, keys, usage);
 * what they share: sqlite_int.h.
 *
 * One connection per thread (store.c caches it). Each connection runs in WAL mode with
 * busy_timeout 5000 ms, synchronous=NORMAL and foreign_keys=ON; WAL checkpoints run in
 * a background thread of the store (sqlite_ckpt.c), and so does the indexing of new
 * records for search (sqlite_index.c); every commit's WAL hook tells both.
 *
 * Statements: the fixed ones (sq_stmt_sql[]) are prepared on first use with
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
 * Schema: numbered migrations (migrations[], sqlite_schema.c), each applied in its own
 * BEGIN IMMEDIATE transaction that first checks schema_migrations, so running migrate
 * twice or from several processes at once applies each exactly once. */
#include "store/sqlite_ckpt.h"
#include "store/sqlite_index.h"
#include "store/sqlite_int.h"

#include "core/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and statement helpers ------------------------------------------------------ */

/* Maps an SQLite result code to a store code, logging what is not the caller's fault.
 * Only the operation's name and SQLite's own message (never bound values) are logged. */
int sq_error(sq_conn_t *c, int rc, const char *what)
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

int sq_prepare(sq_conn_t *c, const char *sql, sqlite3_stmt **out, const char *what)
{
    int rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return sq_error(c, rc, what);
    }
    return STORE_OK;
}

/* The fixed statement id, prepared on first use. */
int sq_stmt(sq_conn_t *c, int id, sqlite3_stmt **out)
{
    if (!c->stmt[id]) {
        int rc = sq_prepare(c, sq_stmt_sql[id], &c->stmt[id], "sq_prepare");
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->stmt[id];
    return STORE_OK;
}

void sq_stmt_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Bound text lives in the caller's memory until sq_stmt_done: SQLITE_STATIC is safe. */
void sq_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

const char *sq_col_text(sqlite3_stmt *st, int i, arena_t *a)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (!t)
        return NULL;
    return arena_strndup(a, (const char *)t, (size_t)sqlite3_column_bytes(st, i));
}

/* Runs a statement that returns no rows (or whose rows are ignored). */
int sq_run(sq_conn_t *c, sqlite3_stmt *st, const char *what)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    int out = rc == SQLITE_DONE ? STORE_OK : sq_error(c, rc, what);
    sq_stmt_done(st);
    return out;
}

static int run_fixed(sq_conn_t *c, int id, const char *what)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, id, &st);
    return rc != STORE_OK ? rc : sq_run(c, st, what);
}

/* Steps a statement expected to give at most one row: STORE_OK with the row current
 * (the caller reads it, then calls sq_stmt_done), STORE_NOTFOUND (already reset) or an
 * error (already reset). */
int sq_step_row(sq_conn_t *c, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return STORE_OK;
    int out = rc == SQLITE_DONE ? STORE_NOTFOUND : sq_error(c, rc, what);
    sq_stmt_done(st);
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

static void note_write(store_t *s, bool begins);

int sq_tx_begin(sq_conn_t *c)
{
    session_close(c);
    note_write(c->base.store, true); /* it may wait for the lock */
    int rc = run_fixed(c, ST_BEGIN_WRITE, "begin");
    note_write(c->base.store, false);
    return rc;
}

/* Inside a read session, an operation's reads share the session's transaction. */
int sq_tx_begin_read(sq_conn_t *c)
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
int sq_tx_end(sq_conn_t *c, int rc)
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


int sq_exec_sql(sq_conn_t *c, const char *sql, const char *what)
{
    char *msg = NULL;
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return STORE_OK;
    int out = sq_error(c, rc, what);
    sqlite3_free(msg);
    return out;
}

/* ---- connection ------------------------------------------------------------------------ */

static void sq_disconnect(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(c->stmt[i]);
    for (int i = 0; i < LQ_SLOTS; i++)
        sqlite3_finalize(c->list[i]);
    for (int i = 0; i < SQ_USER_STMTS; i++)
        sqlite3_finalize(c->users[i]);
    for (int i = 0; i < SQ_TPL_STMTS; i++)
        sqlite3_finalize(c->tpl[i]);
    for (int i = 0; i < SQ_TAG_STMTS; i++)
        sqlite3_finalize(c->tags[i]);
    for (int i = 0; i < SQ_WH_STMTS; i++)
        sqlite3_finalize(c->wh[i]);
    sqlite3_finalize(c->upto);
    sqlite3_close(c->db);
    free(c);
}

/* Once per process, before SQLite initialises: no memory statistics (they take a
 * global mutex on every allocation, and every thread allocates). */
static void sq_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* The store's background threads (s->backend). */
typedef struct {
    sq_ckpt_t *ckpt;
    sq_index_t *index;
    tailnames_t *tail[2]; /* not a thread: the index of the tail's names (sqlite_tail.c) */
} sq_threads_t;

tailnames_t *sq_tail(store_t *s, rec_kind_t kind)
{
    return ((sq_threads_t *)s->backend)->tail[kind == KIND_IMG];
}

/* A connection of the store (not the index thread's) begins a write transaction and
 * may wait for the lock (begins), or has it: the index thread leaves the lock to such
 * writers (sqlite_index.c). */
static void note_write(store_t *s, bool begins)
{
    sq_index_waiter(((sq_threads_t *)s->backend)->index, begins ? 1 : -1);
}

/* sqlite3_wal_hook of the store's connections (not the index thread's): after each
 * commit that wrote something. */
static int sq_wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
    sq_threads_t *t = arg;
    sq_index_commit(t->index);
    return sq_ckpt_hook(t->ckpt, db, name, pages);
}

static void sq_open(store_t *s)
{
    sq_threads_t *t = xcalloc(1, sizeof(*t));
    t->ckpt = sq_ckpt_new(s->url);
    t->index = sq_index_new(s->url, sq_ckpt_hook, t->ckpt);
    t->tail[0] = tailnames_new();
    t->tail[1] = tailnames_new();
    s->backend = t;
}

static void sq_close(store_t *s)
{
    sq_threads_t *t = s->backend;
    if (t) {
        sq_index_free(t->index); /* first: its connection's commits call the checkpointer */
        sq_ckpt_free(t->ckpt);
        tailnames_free(t->tail[0]);
        tailnames_free(t->tail[1]);
        free(t);
    }
    s->backend = NULL;
}

void store_sqlite_checkpoint_pages(store_t *s, int pages)
{
    if (s->ops == &store_sqlite_ops)
        sq_ckpt_set_pages(((sq_threads_t *)s->backend)->ckpt, pages);
}

bool store_sqlite_checkpoint_stats(store_t *s, store_checkpoint_stats_t *out)
{
    return s->ops == &store_sqlite_ops &&
           sq_ckpt_stats(((sq_threads_t *)s->backend)->ckpt, out);
}

void sq_index_start(store_t *s)
{
    /* the tail's names first (on the migrating thread's connection): a search of a
     * tail it does not cover scans it, exact but slower */
    char err[256];
    store_conn_t *c = store_conn(s, err, sizeof(err));
    if (!c || sq_tail_rebuild(sq(c)) != STORE_OK)
        log_warn("sqlite: the index of the unindexed records' names could not be built;"
                 " searches scan those records");
    sq_index_enable(((sq_threads_t *)s->backend)->index);
}

void store_sqlite_index_hold(store_t *s, bool hold)
{
    if (s->ops == &store_sqlite_ops)
        sq_index_hold(((sq_threads_t *)s->backend)->index, hold);
}

int64_t store_sqlite_index_pending(store_conn_t *conn)
{
    if (conn->ops != &store_sqlite_ops)
        return 0;
    sq_conn_t *c = sq(conn);
    int64_t n = 0;
    int rc = sq_index_pending(c->db, &n);
    return rc == SQLITE_OK ? n : sq_error(c, rc, "search index");
}

int store_sqlite_index_merge(store_conn_t *conn)
{
    if (conn->ops != &store_sqlite_ops)
        return 0;
    sq_conn_t *c = sq(conn);
    bool worked = false;
    int rc = sq_index_merge(c->db, 1000, &worked);
    return rc == SQLITE_OK ? worked : sq_error(c, rc, "search index");
}

int store_sqlite_index_now(store_conn_t *conn, int max)
{
    if (conn->ops != &store_sqlite_ops)
        return 0;
    sq_conn_t *c = sq(conn);
    int n = 0, rc = sq_index_batch(c->db, max, &n);
    return rc == SQLITE_OK ? n : sq_error(c, rc, "search index");
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
    /* a new database gives back the pages it frees when asked (the index thread does
     * after compaction, sqlite_index.c): FTS5's merges free as many pages as they write.
     * It takes effect only before the first table; an older database keeps its mode. */
    sqlite3_exec(c->db, "PRAGMA auto_vacuum=INCREMENTAL", NULL, NULL, NULL);
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
    /* replaces SQLite's automatic checkpoint (sqlite_ckpt.h); tells the search index
     * thread there may be new records (sqlite_index.h) */
    sqlite3_wal_hook(c->db, sq_wal_hook, s->backend);
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
    int rc = sq_stmt(c, ST_PING, &st);
    if (rc != STORE_OK)
        return rc;
    rc = sq_step_row(c, st, "ping");
    if (rc == STORE_OK)
        sq_stmt_done(st);
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
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

/* ---- the ops table --------------------------------------------------------------------- */

const store_ops_t store_sqlite_ops = {
    .name = "sqlite",
    .caps = STORE_CAP_OWN_LEASES | STORE_CAP_LAGGING_INDEX,
    .list_probes = true,
    .open = sq_open,
    .close = sq_close,
    .read_begin = sq_read_begin,
    .read_end = sq_read_end,
    .record_get_probed = sq_record_get_probed,
    STORE_OPS_COMMON(sq),
    .job_release_all = sq_job_release_all,
};
