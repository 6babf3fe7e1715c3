/* rcache.c — see rcache.h. Each shard: a chained hash table of entries, and a doubly
 * linked list in use order (head = most recent) for eviction.
 *
 * What bounds it, in bytes: each entry is counted as its JSON plus ENTRY_OVERHEAD, and
 * ENTRY_OVERHEAD covers everything else the entry costs the heap — the entry header
 * (64 bytes on LP64), glibc's chunk header (8) and its rounding to 16 (at most 15),
 * and its share of the bucket table (the table doubles only when entries outnumber
 * buckets, so it holds at most 2 pointers, 16 bytes, per entry). So the cache's heap is
 * at most --record-cache-mb plus the first tables (16 × 1024 pointers, 128 KiB). */
#include "api/rcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 16
#define ENTRY_OVERHEAD 104 /* bytes counted per entry beyond its JSON: see above */
#define SHOW_OVERHEAD 32   /* a compressed show's block: its length, chunk header, rounding */
_Static_assert(sizeof(void *) != 8 || 64 + 8 + 15 + 16 <= ENTRY_OVERHEAD,
               "ENTRY_OVERHEAD must cover an entry's header, chunk and table share");

/* The whole show answer, compressed (§26): kept with the rendering it was made from. */
typedef struct {
    size_t len;
    char data[];
} shown_t;

typedef struct entry {
    struct entry *hnext;        /* hash chain */
    struct entry *prev, *next;  /* use order */
    int64_t id, updated_us;
    rec_kind_t kind;
    int shown_coding;           /* the coding of shown (0: none) */
    size_t len;
    shown_t *shown;             /* NULL, or the show answer compressed (rcache_put_show) */
    char json[];
} entry_t;
_Static_assert(sizeof(void *) != 8 || sizeof(entry_t) <= 64, "entry header grew: see ENTRY_OVERHEAD");

static size_t entry_bytes(const entry_t *e)
{
    return e->len + ENTRY_OVERHEAD + (e->shown ? e->shown->len + SHOW_OVERHEAD : 0);
}

typedef struct {
    pthread_mutex_t mu;
    entry_t **table;
    size_t nbuckets, count, bytes, budget;
    entry_t *head, *tail;
    uint64_t hits, misses;
} shard_t;

struct rcache {
    shard_t shards[SHARDS];
};

static uint64_t mix(rec_kind_t kind, int64_t id)
{
    uint64_t x = (uint64_t)id * 2 + (uint64_t)kind;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

rcache_t *rcache_new(size_t max_bytes)
{
    if (max_bytes == 0)
        return NULL;
    rcache_t *c = xcalloc(1, sizeof(*c));
    for (int i = 0; i < SHARDS; i++) {
        shard_t *s = &c->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->nbuckets = 1024;
        s->table = xcalloc(s->nbuckets, sizeof(*s->table));
        s->budget = max_bytes / SHARDS;
    }
    return c;
}

void rcache_free(rcache_t *c)
{
    if (!c)
        return;
    for (int i = 0; i < SHARDS; i++) {
        shard_t *s = &c->shards[i];
        for (entry_t *e = s->head, *next; e; e = next) {
            next = e->next;
            free(e->shown);
            free(e);
        }
        free(s->table);
        pthread_mutex_destroy(&s->mu);
    }
    free(c);
}

static shard_t *shard_of(rcache_t *c, uint64_t h)
{
    return &c->shards[h % SHARDS];
}

static entry_t **slot(shard_t *s, uint64_t h, rec_kind_t kind, int64_t id)
{
    entry_t **p = &s->table[(h / SHARDS) & (s->nbuckets - 1)];
    while (*p && !((*p)->id == id && (*p)->kind == kind))
        p = &(*p)->hnext;
    return p;
}

static void unlink_use(shard_t *s, entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        s->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        s->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(shard_t *s, entry_t *e)
{
    e->prev = NULL;
    e->next = s->head;
    if (s->head)
        s->head->prev = e;
    s->head = e;
    if (!s->tail)
        s->tail = e;
}

/* Unlinks the entry at *p from both lists and frees it. */
static void remove_at(shard_t *s, entry_t **p)
{
    entry_t *e = *p;
    *p = e->hnext;
    unlink_use(s, e);
    s->count--;
    s->bytes -= entry_bytes(e);
    free(e->shown);
    free(e);
}

static void grow(shard_t *s)
{
    size_t n = s->nbuckets * 2;
    entry_t **t = xcalloc(n, sizeof(*t));
    for (size_t i = 0; i < s->nbuckets; i++)
        for (entry_t *e = s->table[i], *next; e; e = next) {
            next = e->hnext;
            entry_t **b = &t[(mix(e->kind, e->id) / SHARDS) & (n - 1)];
            e->hnext = *b;
            *b = e;
        }
    free(s->table);
    s->table = t;
    s->nbuckets = n;
}

bool rcache_get(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, buf_t *out)
{
    if (!c)
        return false;
    uint64_t h = mix(kind, id);
    shard_t *s = shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    entry_t *e = *slot(s, h, kind, id);
    bool hit = e && e->updated_us == updated_us;
    if (hit) {
        buf_append(out, e->json, e->len);
        if (s->head != e) {
            unlink_use(s, e);
            push_front(s, e);
        }
        s->hits++;
    } else {
        s->misses++;
    }
    pthread_mutex_unlock(&s->mu);
    return hit;
}

void rcache_put(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, const char *json,
                size_t len)
{
    if (!c)
        return;
    uint64_t h = mix(kind, id);
    shard_t *s = shard_of(c, h);
    if (s->budget < ENTRY_OVERHEAD || len > s->budget - ENTRY_OVERHEAD) {
        rcache_drop(c, kind, id); /* too big to keep: no older rendering stays behind */
        return;
    }
    entry_t *e = xmalloc(sizeof(*e) + len);
    e->id = id;
    e->kind = kind;
    e->updated_us = updated_us;
    e->len = len;
    e->shown = NULL;
    e->shown_coding = 0;
    memcpy(e->json, json, len);
    pthread_mutex_lock(&s->mu);
    entry_t **p = slot(s, h, kind, id);
    if (*p && (*p)->updated_us > updated_us) {
        /* a newer rendering is already kept (another thread read a later version) */
        pthread_mutex_unlock(&s->mu);
        free(e);
        return;
    }
    if (*p)
        remove_at(s, p);
    while (s->bytes + len + ENTRY_OVERHEAD > s->budget && s->tail)
        remove_at(s, slot(s, mix(s->tail->kind, s->tail->id), s->tail->kind, s->tail->id));
    p = slot(s, h, kind, id);
    e->hnext = *p;
    *p = e;
    push_front(s, e);
    s->count++;
    s->bytes += len + ENTRY_OVERHEAD;
    if (s->count > s->nbuckets)
        grow(s);
    pthread_mutex_unlock(&s->mu);
}

bool rcache_get_show(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, int coding,
                     buf_t *out)
{
    if (!c || coding == 0)
        return false;
    uint64_t h = mix(kind, id);
    shard_t *s = shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    entry_t *e = *slot(s, h, kind, id);
    bool hit = e && e->updated_us == updated_us && e->shown && e->shown_coding == coding;
    if (hit) {
        buf_append(out, e->shown->data, e->shown->len);
        if (s->head != e) {
            unlink_use(s, e);
            push_front(s, e);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return hit;
}

void rcache_put_show(rcache_t *c, rec_kind_t kind, int64_t id, int64_t updated_us, int coding,
                     const void *data, size_t len)
{
    if (!c || coding == 0)
        return;
    uint64_t h = mix(kind, id);
    shard_t *s = shard_of(c, h);
    shown_t *sh = xmalloc(sizeof(*sh) + len);
    sh->len = len;
    memcpy(sh->data, data, len);
    pthread_mutex_lock(&s->mu);
    entry_t *e = *slot(s, h, kind, id);
    if (!e || e->updated_us != updated_us) { /* kept only beside its own rendering */
        pthread_mutex_unlock(&s->mu);
        free(sh);
        return;
    }
    s->bytes -= entry_bytes(e);
    free(e->shown);
    e->shown = NULL;
    if (s->bytes + e->len + ENTRY_OVERHEAD + len + SHOW_OVERHEAD <= s->budget) {
        e->shown = sh;
        e->shown_coding = coding;
        sh = NULL;
    }
    s->bytes += entry_bytes(e);
    pthread_mutex_unlock(&s->mu);
    free(sh); /* no room: the rendering stays, the compressed copy does not */
}

void rcache_drop(rcache_t *c, rec_kind_t kind, int64_t id)
{
    if (!c)
        return;
    uint64_t h = mix(kind, id);
    shard_t *s = shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    entry_t **p = slot(s, h, kind, id);
    if (*p)
        remove_at(s, p);
    pthread_mutex_unlock(&s->mu);
}

void rcache_stats(rcache_t *c, rcache_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!c)
        return;
    for (int i = 0; i < SHARDS; i++) {
        shard_t *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        out->hits += s->hits;
        out->misses += s->misses;
        out->entries += s->count;
        out->bytes += s->bytes;
        pthread_mutex_unlock(&s->mu);
    }
}

void rcache_changed(void *rc, rec_kind_t kind, int64_t id)
{
    rcache_drop(rc, kind, id);
}
