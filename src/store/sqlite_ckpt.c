/* sqlite_ckpt.c — the SQLite store's background WAL checkpoints (sqlite_ckpt.h).
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

#include "store/sqlite_ckpt.h"

#include "core/log.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* PRAGMA journal_mode answers with the mode now in force. */
bool sq_set_wal(sqlite3 *db)
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

#define CKPT_PAGES_DEFAULT 8192
#define CKPT_FINISH 256

struct sq_ckpt {
    char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pages;                     /* wake the thread at this many WAL pages */
    bool started, failed, pending, stopping;
    atomic_bool finish;            /* the next commit copies the little that is left */
    pthread_t thread;
    store_checkpoint_stats_t stats;
};

static void *ckpt_main(void *arg)
{
    sq_ckpt_t *k = arg;
    sqlite3 *db = NULL;
    /* set_wal also makes the connection read the database, so it knows its WAL */
    if (sqlite3_open_v2(k->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        !sq_set_wal(db)) {
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
int sq_ckpt_hook(void *arg, sqlite3 *db, const char *name, int pages)
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
        if (thread_start(&k->thread, "ink-checkpoint", ckpt_main, k))
            k->started = true;
        else
            k->failed = true; /* (logged) each commit checkpoints itself */
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

sq_ckpt_t *sq_ckpt_new(const char *path)
{
    sq_ckpt_t *k = xcalloc(1, sizeof(*k));
    k->path = xstrdup(path);
    k->pages = CKPT_PAGES_DEFAULT;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    return k;
}

void sq_ckpt_free(sq_ckpt_t *k)
{
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
    free(k->path);
    free(k);
}

void sq_ckpt_set_pages(sq_ckpt_t *k, int pages)
{
    if (k && pages > 0)
        k->pages = pages; /* before any connection commits */
}

bool sq_ckpt_stats(sq_ckpt_t *k, store_checkpoint_stats_t *out)
{
    if (!k)
        return false;
    pthread_mutex_lock(&k->mu);
    *out = k->stats;
    pthread_mutex_unlock(&k->mu);
    return true;
}
