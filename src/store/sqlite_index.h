/* sqlite_index.h — the SQLite store's search-index follower: a background thread of the
 * store that adds new records to the FTS5 trigram tables after their commit (how and
 * why: sqlite_index.c). For sqlite.c only. */
#ifndef INK_SQLITE_INDEX_H
#define INK_SQLITE_INDEX_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct sq_index sq_index_t;

/* The follower of the database file at path; its thread starts at the first poke and
 * gives its own connection the WAL hook hook(hook_arg) (the checkpoints'). free stops
 * and joins it. */
sq_index_t *sq_index_new(const char *path, int (*hook)(void *, sqlite3 *, const char *, int),
                         void *hook_arg);
void sq_index_free(sq_index_t *x);
/* After the migrations: from now on pokes start and wake the thread. */
void sq_index_enable(sq_index_t *x);
/* Another connection of the store waits for the write lock (+1) or has it (-1). */
void sq_index_waiter(sq_index_t *x, int delta);
/* After a commit of another connection: there may be new records to index, and the
 * store is busy. */
void sq_index_commit(sq_index_t *x);
/* There may be new records to index. */
void sq_index_poke(sq_index_t *x);
/* store_sqlite_index_hold (store.h): while held the thread indexes nothing. */
void sq_index_hold(sq_index_t *x, bool hold);

/* Indexes up to max records of each kind past the watermark on db, in one write
 * transaction per kind; *indexed counts them. An SQLite result code. */
int sq_index_batch(sqlite3 *db, int max, int *indexed);
/* One compaction step of both FTS tables (sqlite_index.c); *worked: whether there
 * was anything to merge. */
int sq_index_merge(sqlite3 *db, int pages, bool *worked);
/* *n = how many records of both kinds are above their watermark. */
int sq_index_pending(sqlite3 *db, int64_t *n);

#endif
