/* sqlite_ckpt.h — the SQLite store's WAL checkpoints, run by a background thread of
 * the store instead of inside a commit (how and why: sqlite_ckpt.c). For sqlite.c only. */
#ifndef INK_SQLITE_CKPT_H
#define INK_SQLITE_CKPT_H

#include "store/store.h"

#include <sqlite3.h>
#include <stdbool.h>

typedef struct sq_ckpt sq_ckpt_t;

/* The checkpointer of the database file at path; its thread starts at the first
 * commit that reaches the threshold. free stops and joins it. */
sq_ckpt_t *sq_ckpt_new(const char *path);
void sq_ckpt_free(sq_ckpt_t *k);
/* The sqlite3_wal_hook of every connection of the store (arg: the sq_ckpt_t). */
int sq_ckpt_hook(void *arg, sqlite3 *db, const char *name, int pages);
/* store_sqlite_checkpoint_pages / _stats (store.h). */
void sq_ckpt_set_pages(sq_ckpt_t *k, int pages);
bool sq_ckpt_stats(sq_ckpt_t *k, store_checkpoint_stats_t *out);

/* Switches a connection to WAL mode; false when the mode in force is another. */
bool sq_set_wal(sqlite3 *db);

#endif
