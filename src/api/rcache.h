/* rcache.h — rendered records: the JSON object of a document or an image, kept by
 * (kind, id) together with the updated_us it was rendered from.
 *
 * The database stays the one source of truth: a list still reads every row's id and
 * updated_us in its own transaction, and only a row whose updated_us equals the kept
 * one is answered from here. Every change to a record moves its updated_us strictly
 * forward (the stores write max(now, updated_us + 1)), so a kept rendering can never
 * be answered for a record that changed since. Ids are never reused.
 *
 * Bounded: least recently used renderings go first once the budget is spent. Safe
 * from any thread (16 shards, one mutex each). */
#ifndef INK_API_RCACHE_H
#define INK_API_RCACHE_H

#include "core/util.h"
#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rcache rcache_t;

/* max_bytes 0: no cache (rcache_new returns NULL; every call takes NULL). */
rcache_t *rcache_new(size_t max_bytes);
void rcache_free(rcache_t *c);
/* Appends the rendering of (kind, id) at updated_us to out; false (out untouched)
 * when there is none for that exact version. */
bool rcache_get(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, buf_t *out);
/* Keeps a rendering (replacing an older one of the same record). */
void rcache_put(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, const char *json,
                size_t len);
/* A record's whole show answer ({"data":…,"status":200}) compressed with coding (an
 * http_coding_t other than identity: http/compress.h), kept with the rendering of the
 * same version (one coding at a time per record, the last asked; counted in the
 * budget; dropped with the rendering): a show of a record the cache holds is compressed
 * once, not per request (§26). get appends it to out; false when it is not kept. */
bool rcache_get_show(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, int coding,
                     buf_t *out);
void rcache_put_show(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, int coding,
                     const void *data, size_t len);
/* Forgets a record (deleted). */
void rcache_drop(rcache_t *c, rec_kind_t kind, int64_t id);
/* rcache_drop in the shape of the records service's change hook
 * (records_deps_t.changed; main.c connects them). */
void rcache_changed(void *rc, rec_kind_t kind, int64_t id);

typedef struct {
    uint64_t hits, misses, entries, bytes;
} rcache_stats_t;
void rcache_stats(rcache_t *c, rcache_stats_t *out);

#endif
