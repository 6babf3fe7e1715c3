/* sqlite_index.c — the SQLite store's search-index follower (sqlite_index.h).
 *
 * The FTS5 trigram tables (documents_name_fts, documents_result_fts, images_fts;
 * sqlite_schema.c, migrations 3, 7, 8 and 11) cost about 100 µs of CPU per document to fill (every trigram of a ~1.5 KB text
 * goes through FTS5's tokenizer and hash), more than twice what the whole create costs
 * without them; inside the creating transaction they cut the builtin create throughput
 * from ~21k to ~3.8k req/s on one core. So a new record's index row is written here,
 * after its commit, by a thread of the store on its own connection:
 *
 * - search_index(kind, upto) is the watermark: every record of the kind with id <= upto
 *   is in its FTS table, with the values it has now; none above it is. Ids only grow
 *   (AUTOINCREMENT), so a new record always lands above the watermark.
 * - A batch, in one write transaction, indexes the next records above the watermark in
 *   id order (at most BATCH_ROWS) and moves the watermark past them.
 * - Changes and deletes of a record at or below the watermark update its index row in
 *   their own transaction (the triggers of migrations 8 and 11), but for a document's
 *   new text: the trigger of migration 17 notes the document in search_changed,
 *   searches read those documents' rows as they read the tail, and a batch here adds
 *   the new trigrams to the document's block (batch_changed; the results' index has a
 *   row per block of documents that only gains trigrams, migration 19), so a
 *   regeneration costs no more than a create. Above the
 *   watermark changes touch nothing, as the batch that reaches the record will read
 *   what it has then.
 * - A search reads the index for the records at or below the watermark and scans the
 *   records above it (the "tail", the UNION ALL of sqlite_lists.c's list_sql), in the
 *   same read transaction: its results are exactly those of a scan at every moment,
 *   whatever the index has caught up with.
 *
 * Compaction: FTS5 writes each batch as a new segment and merges a level once it holds
 * 16 segments (automerge, migration 7); a search looks each trigram up in every
 * segment, so at 1M documents 29 segments made a phrase search 3x slower than 15, and
 * 14x slower than one. When the tail is indexed and nothing else writes, the thread
 * merges any level of two segments or more (usermerge 2, migration 9) in steps of
 * MERGE_PAGES, each its own transaction, until FTS5 has nothing left to merge; a write
 * of another connection stops it until the store is quiet again. Each document is so
 * rewritten about log2(archive / batch) times over its life, in idle time.
 *
 * Any commit of the store pokes the thread; it indexes until the tail is empty and
 * waits again. While the store's other connections write (a burst of creates: one of
 * them committed within QUIET_US), it keeps to a small share of the time (DUTY_PCT:
 * after a batch of t ms it waits t * (100 / DUTY_PCT - 1) ms), so the burst runs
 * nearly as fast as without the index (docs/benchmarks.md); once they stop it indexes
 * at full speed. A writer that waits for the lock (each write transaction counts
 * itself while it does) makes the next batch a small one, and the thread keeps off
 * until that writer has the lock.
 * Under a write rate the index cannot follow at that share, the tail grows and
 * searches scan more (exact, but slower) until the rate drops. It runs at the normal
 * priority: a batch holds the write lock (BATCH_ROWS documents, a few ms;
 * QUIET_BATCH_ROWS when nothing else writes) and must not be starved by other work
 * while it does. Errors (a full disk, a busy lock) leave the tail as it is, searches
 * stay exact, and the thread tries again RETRY_MS later. */
#include "store/sqlite_index.h"
#include "store/sqlite_int.h"

#include "core/log.h"
#include "core/thread.h"
#include "core/util.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_ROWS 32        /* while others write: the write lock for ~3 ms */
#define QUIET_BATCH_ROWS 512 /* otherwise (larger batches index several times faster) */
#define RETRY_MS 1000
#define MERGE_PAGES 128 /* a compaction step: ~0.5 MB written, a few ms of the lock */
#define MERGE_LATER_MS 100 /* busy: look again this much later */
#define DUTY_PCT 5
#define WAITER_MAX_MS 200
#define QUIET_US 20000 /* no other commit for this long, no writer waiting: not busy */

struct sq_index {
    char *path;
    int (*hook)(void *, sqlite3 *, const char *, int); /* the thread's connection's WAL hook */
    void *hook_arg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool enabled, started, pending, held, stopping;
    bool merge_due; /* records were indexed since the last compaction finished */
    atomic_bool poked;             /* a poke since the thread last looked: saves the mutex */
    _Atomic int64_t last_write_us; /* another connection's last commit that wrote */
    atomic_int waiters;             /* other connections waiting for the write lock */
    pthread_t thread;
};

/* ---- one batch ------------------------------------------------------------------------- */

/* A document's filter ORed into its block's row of search_filters (sqlite_filter.c,
 * migration 33), for the documents ?1 < id <= ?2 (a batch) or those of search_changed
 * up to ?1 (their new texts), in the transaction that adds their trigrams to the
 * block's row of the trigram table. */
#define FILTER_UPSERT                                                                      \
    " ON CONFLICT(block) DO UPDATE SET bits = ink_filter_or(bits, excluded.bits)"
static const char filter_batch_sql[] =
    "INSERT INTO search_filters(block, bits) SELECT id >> " SQ_BLOCK_BITS_SQL ","
    " ink_filter_row(id, result) FROM documents WHERE id > ?1 AND id <= ?2" FILTER_UPSERT;
static const char filter_changed_sql[] =
    "INSERT INTO search_filters(block, bits) SELECT d.id >> " SQ_BLOCK_BITS_SQL ","
    " ink_filter_row(d.id, d.result) FROM search_changed q JOIN documents d ON d.id = q.id"
    " WHERE q.id <= ?1" FILTER_UPSERT;

static const char *const kind_sql[2][5] = {
    {
        "SELECT upto FROM search_index WHERE kind = 0 AND EXISTS (SELECT 1 FROM documents"
        " WHERE id > upto)",
        "SELECT max(id) FROM (SELECT id FROM documents WHERE id > ?1 ORDER BY id LIMIT ?2)",
        "INSERT INTO documents_name_fts(rowid, sname) SELECT id, ink_fold(name)"
        " FROM documents WHERE id > ?1 AND id <= ?2",
        "UPDATE search_index SET upto = ?1 WHERE kind = 0",
        /* one row per block (SQ_BLOCK_BITS): a block the watermark cuts gets the rest
         * of its texts from the next batch, the same rowid again (migration 19) */
        "INSERT INTO documents_result_fts(rowid, sresult) SELECT id >> " SQ_BLOCK_BITS_SQL ","
        " group_concat(ink_fold(result), char(10)) FROM documents WHERE id > ?1 AND id <= ?2"
        " GROUP BY id >> " SQ_BLOCK_BITS_SQL,
    },
    {
        "SELECT upto FROM search_index WHERE kind = 1 AND EXISTS (SELECT 1 FROM images"
        " WHERE id > upto)",
        "SELECT max(id) FROM (SELECT id FROM images WHERE id > ?1 ORDER BY id LIMIT ?2)",
        "INSERT INTO images_fts(rowid, sname) SELECT id, ink_fold(name) FROM images"
        " WHERE id > ?1 AND id <= ?2",
        "UPDATE search_index SET upto = ?1 WHERE kind = 1",
        NULL,
    },
};

/* Runs sql with up to two integer parameters; *out (if given) gets the first column
 * of the first row, or -1 when there is no row or it is NULL. */
static int run(sqlite3 *db, const char *sql, int64_t a, int64_t b, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    int n = sqlite3_bind_parameter_count(st);
    if (n >= 1)
        sqlite3_bind_int64(st, 1, a);
    if (n >= 2)
        sqlite3_bind_int64(st, 2, b);
    if (out)
        *out = -1;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (out && sqlite3_column_type(st, 0) != SQLITE_NULL)
            *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

static int batch_kind(sqlite3 *db, int kind, int max, int *indexed)
{
    const char *const *sql = kind_sql[kind];
    int64_t upto, hi;
    /* a read outside any write lock first: most pokes find nothing to do */
    int rc = run(db, sql[0], 0, 0, &upto);
    if (rc != SQLITE_OK || upto < 0)
        return rc;
    if ((rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) != SQLITE_OK)
        return rc;
    /* again under the lock: another process may have moved it */
    if ((rc = run(db, sql[0], 0, 0, &upto)) == SQLITE_OK && upto >= 0 &&
        (rc = run(db, sql[1], upto, max, &hi)) == SQLITE_OK && hi > upto &&
        (rc = run(db, sql[2], upto, hi, NULL)) == SQLITE_OK) {
        int n = sqlite3_changes(db);
        if ((!sql[4] || ((rc = run(db, sql[4], upto, hi, NULL)) == SQLITE_OK &&
                         (rc = run(db, filter_batch_sql, upto, hi, NULL)) == SQLITE_OK)) &&
            (rc = run(db, sql[3], hi, 0, NULL)) == SQLITE_OK &&
            (rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) == SQLITE_OK) {
            *indexed += n;
            return SQLITE_OK;
        }
    }
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* One step of compaction of the three tables: FTS5's 'merge' writes up to `pages` pages of
 * merged segments, merging any level of two segments or more (usermerge 2, migration
 * 9). *worked: whether either table had anything to merge (FTS5 says so only through
 * the change count: under two changes, no work was done). */
int sq_index_merge(sqlite3 *db, int pages, bool *worked)
{
    static const char *const sql[3] = {
        "INSERT INTO documents_name_fts(documents_name_fts, rank) VALUES('merge', ?1)",
        "INSERT INTO documents_result_fts(documents_result_fts, rank) VALUES('merge', ?1)",
        "INSERT INTO images_fts(images_fts, rank) VALUES('merge', ?1)",
    };
    *worked = false;
    for (int kind = 0; kind < 3; kind++) {
        int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return rc;
        sqlite3_int64 before = sqlite3_total_changes64(db);
        if ((rc = run(db, sql[kind], pages, 0, NULL)) == SQLITE_OK &&
            (rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) == SQLITE_OK) {
            *worked |= sqlite3_total_changes64(db) - before >= 2;
            continue;
        }
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if (*worked)
        return SQLITE_OK;
    /* nothing left to merge: the pages the merges freed go back to the file system, at
     * most `pages` a step (a database made with auto_vacuum=INCREMENTAL, sqlite.c; in any
     * other the pragma frees nothing, the freelist stays, and this says no work) */
    int64_t before = 0, after = 0;
    int rc = run(db, "PRAGMA freelist_count", 0, 0, &before);
    if (rc != SQLITE_OK || before <= 0)
        return rc;
    char vacuum[64];
    snprintf(vacuum, sizeof(vacuum), "PRAGMA incremental_vacuum(%d)", pages);
    if ((rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) != SQLITE_OK)
        return rc;
    if ((rc = sqlite3_exec(db, vacuum, NULL, NULL, NULL)) != SQLITE_OK ||
        (rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if ((rc = run(db, "PRAGMA freelist_count", 0, 0, &after)) == SQLITE_OK)
        *worked = after < before;
    return rc;
}

/* The documents whose text changed since the index had it (search_changed, migration
 * 17), up to max of them: the text they have now added to their blocks' rows (the
 * trigrams of the old one stay: migration 19). */
static int batch_changed(sqlite3 *db, int max, int *indexed)
{
    static const char *const sql[3] = {
        "SELECT max(id) FROM (SELECT id FROM search_changed ORDER BY id LIMIT ?1)",
        "INSERT INTO documents_result_fts(rowid, sresult) SELECT d.id >> " SQ_BLOCK_BITS_SQL
        ", group_concat(ink_fold(d.result), char(10)) FROM search_changed q"
        " JOIN documents d ON d.id = q.id WHERE q.id <= ?1 GROUP BY d.id >> " SQ_BLOCK_BITS_SQL,
        "DELETE FROM search_changed WHERE id <= ?1",
    };
    int64_t hi;
    int rc = run(db, sql[0], max, 0, &hi); /* outside the lock: mostly there are none */
    if (rc != SQLITE_OK || hi < 0)
        return rc;
    if ((rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) != SQLITE_OK)
        return rc;
    if ((rc = run(db, sql[0], max, 0, &hi)) == SQLITE_OK && hi >= 0 &&
        (rc = run(db, sql[1], hi, 0, NULL)) == SQLITE_OK &&
        (rc = run(db, filter_changed_sql, hi, 0, NULL)) == SQLITE_OK &&
        (rc = run(db, sql[2], hi, 0, NULL)) == SQLITE_OK) {
        int n = sqlite3_changes(db); /* the documents */
        if ((rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) == SQLITE_OK) {
            *indexed += n;
            return SQLITE_OK;
        }
    }
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int sq_index_batch(sqlite3 *db, int max, int *indexed)
{
    int rc = batch_kind(db, 0, max, indexed);
    if (rc == SQLITE_OK)
        rc = batch_kind(db, 1, max, indexed);
    if (rc == SQLITE_OK)
        rc = batch_changed(db, max, indexed);
    return rc;
}

int sq_index_pending(sqlite3 *db, int64_t *n)
{
    /* counted on the primary keys from the watermark on: as cheap as the tail is short */
    return run(db,
               "SELECT (SELECT count(*) FROM documents WHERE id > (SELECT upto FROM"
               " search_index WHERE kind = 0)) + (SELECT count(*) FROM images WHERE id >"
               " (SELECT upto FROM search_index WHERE kind = 1)) + (SELECT count(*) FROM"
               " search_changed)",
               0, 0, n);
}

/* ---- the thread ------------------------------------------------------------------------ */

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Waits (x->mu held) until the monotonic time `until` or stopping; pokes meanwhile
 * only set pending. */
static void wait_until(sq_index_t *x, int64_t until)
{
    while (!x->stopping) {
        int64_t now = mono_us();
        if (now >= until)
            return;
        struct timespec ts = {.tv_sec = until / 1000000, .tv_nsec = (until % 1000000) * 1000};
        pthread_cond_timedwait(&x->cv, &x->mu, &ts);
    }
}

/* Whether another connection committed something since `since` - QUIET_US. */
static bool committed_since(sq_index_t *x, int64_t since)
{
    return atomic_load_explicit(&x->last_write_us, memory_order_relaxed) > since - QUIET_US;
}

/* That, or another connection waits for the write lock now. */
static bool is_busy(sq_index_t *x, int64_t since)
{
    return atomic_load_explicit(&x->waiters, memory_order_relaxed) > 0 ||
           committed_since(x, since);
}

static void *index_main(void *arg)
{
    sq_index_t *x = arg;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(x->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        log_warn("sqlite: search index thread cannot open the database: %s",
                 db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        db = NULL; /* searches scan what is not indexed: slower, still exact */
    } else {
        sqlite3_busy_timeout(db, 5000);
        sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
        sqlite3_wal_hook(db, x->hook, x->hook_arg);
    }
    bool warned = false;
    pthread_mutex_lock(&x->mu);
    x->merge_due = true; /* what an earlier process left */
    while (db) {
        while ((!x->pending || x->held) && !x->stopping)
            pthread_cond_wait(&x->cv, &x->mu);
        if (x->stopping)
            break;
        x->pending = false;
        atomic_store(&x->poked, false);
        int rc = SQLITE_OK, n;
        do {
            pthread_mutex_unlock(&x->mu);
            n = 0;
            int64_t t0 = mono_us();
            rc = sq_index_batch(db, is_busy(x, t0) ? BATCH_ROWS : QUIET_BATCH_ROWS, &n);
            int64_t t1 = mono_us();
            pthread_mutex_lock(&x->mu);
            if (n > 0)
                x->merge_due = true;
            if (n > 0 && committed_since(x, t0))
                wait_until(x, t1 + (t1 - t0) * (100 / DUTY_PCT - 1));
            /* a writer kept waiting by the batch (a job's poll, the first create of a
             * burst) sleeps in SQLite's busy handler: keep off until it has the lock */
            for (int ms = 0; ms < WAITER_MAX_MS && !x->stopping &&
                             atomic_load_explicit(&x->waiters, memory_order_relaxed) > 0;
                 ms++)
                wait_until(x, mono_us() + 1000);
        } while (rc == SQLITE_OK && n > 0 && !x->stopping && !x->held);
        /* then, while nothing else writes, compaction (see the top of the file) */
        while (rc == SQLITE_OK && x->merge_due && !x->pending && !x->held && !x->stopping) {
            if (is_busy(x, mono_us())) {
                x->pending = true;
                wait_until(x, mono_us() + MERGE_LATER_MS * 1000);
                break;
            }
            bool worked = false;
            pthread_mutex_unlock(&x->mu);
            rc = sq_index_merge(db, MERGE_PAGES, &worked);
            pthread_mutex_lock(&x->mu);
            if (rc == SQLITE_OK && !worked)
                x->merge_due = false;
        }
        if (rc == SQLITE_OK) {
            warned = false;
            continue;
        }
        if (!warned) /* once per run of failures: a full disk would repeat it each second */
            log_warn("sqlite: search index: %s; searches scan the records not yet indexed",
                     sqlite3_errstr(rc)); /* not errmsg: the ROLLBACK after a failed
                                           * COMMIT replaced it ("no transaction") */
        warned = true;
        x->pending = true;
        wait_until(x, mono_us() + RETRY_MS * 1000);
    }
    pthread_mutex_unlock(&x->mu);
    sqlite3_close(db);
    return NULL;
}

void sq_index_waiter(sq_index_t *x, int delta)
{
    if (x)
        atomic_fetch_add_explicit(&x->waiters, delta, memory_order_relaxed);
}

void sq_index_commit(sq_index_t *x)
{
    if (!x)
        return;
    atomic_store_explicit(&x->last_write_us, mono_us(), memory_order_relaxed);
    sq_index_poke(x);
}

void sq_index_poke(sq_index_t *x)
{
    if (!x || atomic_load_explicit(&x->poked, memory_order_relaxed))
        return;
    pthread_mutex_lock(&x->mu);
    if (!x->enabled) {
        pthread_mutex_unlock(&x->mu);
        return;
    }
    atomic_store(&x->poked, true);
    if (!x->started && !x->stopping) {
        if (thread_start(&x->thread, "ink-index", index_main, x))
            x->started = true;
        else
            atomic_store(&x->poked, false); /* (logged) the next write tries again */
    }
    x->pending = true;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

void sq_index_enable(sq_index_t *x)
{
    pthread_mutex_lock(&x->mu);
    x->enabled = true;
    pthread_mutex_unlock(&x->mu);
    sq_index_poke(x);
}

void sq_index_hold(sq_index_t *x, bool hold)
{
    if (!x)
        return;
    pthread_mutex_lock(&x->mu);
    x->held = hold;
    x->pending = true;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

sq_index_t *sq_index_new(const char *path, int (*hook)(void *, sqlite3 *, const char *, int),
                         void *hook_arg)
{
    sq_index_t *x = xcalloc(1, sizeof(*x));
    x->path = xstrdup(path);
    x->hook = hook;
    x->hook_arg = hook_arg;
    pthread_mutex_init(&x->mu, NULL);
    thread_cond_init(&x->cv);
    return x;
}

void sq_index_free(sq_index_t *x)
{
    if (!x)
        return;
    pthread_mutex_lock(&x->mu);
    x->stopping = true;
    bool started = x->started;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
    if (started)
        pthread_join(x->thread, NULL);
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
    free(x->path);
    free(x);
}
