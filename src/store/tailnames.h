/* tailnames.h — an in-memory trigram index of the names of the records the SQLite
 * store's search index has not reached yet (the "tail" above its watermark,
 * sqlite_index.c), so that a name search after a burst of creates asks it for the few
 * tail records that may match instead of reading every tail row (how and why:
 * tailnames.c). One per record kind, kept by the SQLite backend (sqlite.c); thread-safe.
 *
 * It covers the ids (lo, hi]: every record with an id in that range that a read
 * transaction may see is in it (added inside its inserting transaction), under the name
 * it was inserted with or marked changed. Searches scan the tail outside (lo, hi] as
 * before. */
#ifndef INK_TAILNAMES_H
#define INK_TAILNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tailnames tailnames_t;

tailnames_t *tailnames_new(void);
void tailnames_free(tailnames_t *t);
/* Drops everything and covers (lo, lo]: nothing yet. Until the first reset it covers
 * nothing and adds are ignored. */
void tailnames_reset(tailnames_t *t, int64_t lo);
/* Drops everything and covers nothing (as before the first reset): searches scan. */
void tailnames_off(tailnames_t *t);
/* A record inserted (inside its transaction, which holds the write lock). An id above
 * hi + 1 means records in between were inserted by someone else: the coverage restarts
 * at id - 1 (unless gaps_known: a rebuild reading every row). An id at or below hi (an
 * id reused after a rolled-back insert) is marked changed. */
void tailnames_add(tailnames_t *t, int64_t id, int64_t user_id, const char *name,
                   bool gaps_known);
/* After a rebuild: the ids up to hi are known (none above the rows read exists). */
void tailnames_cover(tailnames_t *t, int64_t hi);
/* The record's name changed (inside the changing transaction): it is a candidate of
 * every search from now on. */
void tailnames_changed(tailnames_t *t, int64_t id);

/* The ids above upto in (lo, hi] whose name may hold needle_fold (a folded search of
 * three characters or more) for user_id — a superset of those that do, in any read
 * transaction that began before this call and read upto. Chunks at or below upto are
 * dropped first (the index holds them). false (nothing covered or used) when there are
 * more than max of them, the needle has no trigram or nothing is covered; else ids[0..*n)
 * and the coverage *lo, *hi. */
bool tailnames_find(tailnames_t *t, int64_t upto, int64_t user_id, const char *needle_fold,
                    size_t max, int64_t *ids, size_t *n, int64_t *lo, int64_t *hi);

typedef struct {
    int64_t lo, hi;
    size_t records, bytes; /* records held; bytes allocated for them */
} tailnames_stats_t;
tailnames_stats_t tailnames_stats(tailnames_t *t);

#endif
