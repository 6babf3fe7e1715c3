/* store_copy.h — `inkwell migrate` (API.md §25): a whole deployment copied from one
 * store into another, empty one (SQLite to PostgreSQL and back), through the store
 * layer. store/copy.c owns the one list of tables (copied, or skipped and why); each
 * backend reads and writes rows (sqlite_copy.c, pg_copy.c), nothing else. */
#ifndef INK_STORE_COPY_H
#define INK_STORE_COPY_H

#include "store/store.h"

#include <stdio.h>

/* Copies every table of the copy list from `from` into `to` (both with their schema up
 * to date), in one transaction of the target: ids and timestamps as they are, sequences
 * past the highest id (or the source's sequence when higher), then each table's count
 * and checksum read back from the target and compared before the commit. A target
 * holding any row of a copied table is refused. progress (or NULL) gets a progress line
 * (rewritten in place when it is a terminal) and a line per table. 0, or -1 with err
 * set (nothing written to the target then). */
int store_copy(store_conn_t *from, store_conn_t *to, FILE *progress, char *err, size_t errlen);

/* 0 when every table and column of c's schema is named by the copy list (copied, or
 * skipped with a reason; a column only one backend has, listed as such), else -1 with
 * err naming the first one that is not: a table added later must be added to the list
 * (tests call this on both backends). */
int store_copy_check(store_conn_t *c, char *err, size_t errlen);

#endif
