/* tailnames.c — the in-memory trigram index of the tail's names (tailnames.h).
 *
 * Why: the SQLite store writes a record's row of the FTS5 trigram index after the
 * creating commit, at a small share of the time while creates come in
 * (sqlite_index.c); a search reads the index for the records at or below its watermark
 * and scans those above it. After a burst of creates that tail is 100k-150k rows and a
 * rare name search read all of them (~0.2 us a row: 20-30 ms). This index of the
 * tail's names, written inside each inserting transaction (a fold and ~20 trigrams: a
 * microsecond), gives the few tail ids that may match; the search then reads those rows
 * by id and checks them as before (sqlite_lists.c), so its results do not change.
 *
 * Layout: ids are cut into chunks of CHUNK_IDS consecutive ids (absolute: chunk a holds
 * ids a * CHUNK_IDS + 1 ..). A chunk keeps, per id, the user and the folded name (an
 * offset into its own buffer of names), and an open-addressing table from a trigram's
 * 32-bit hash (FNV-1a of its UTF-8 bytes: three characters) to the ascending list of
 * slots whose name holds it. A search takes, in each chunk, the shortest list of its
 * trigrams and checks each slot's user and name (strstr of the folded needle in the
 * folded name: ink_has()'s match): a hash collision only adds candidates. A chunk is
 * freed whole once the search index's watermark has passed its last id (seen by a
 * search), or when the tail outgrows MAX_CHUNKS (then the oldest part is scanned).
 *
 * Exactness: a record is added inside its inserting transaction, before the commit, so
 * any read transaction that can see it finds it here if it asks after its own first read.
 * A rename marks the record "changed" in its transaction: a changed record is a
 * candidate of every search (its name here may be old). A delete needs nothing (the
 * candidate is not found). An id reused after a rolled-back insert is marked changed. A
 * gap (ids inserted by a writer that did not add them) restarts the coverage above it.
 *
 * Memory: per id of a chunk 12 bytes (user, name offset), per record its folded name and
 * two bytes per distinct trigram, per distinct trigram of a chunk 16 bytes of table
 * (at most half full) and its list's allocation; names of more than NAME_TRIGRAMS_MAX
 * characters are not indexed (they are candidates of every search, as a changed one). */
#include "store/tailnames.h"

#include "core/unicode.h"
#include "core/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_IDS 16384
#define MAX_CHUNKS 16 /* 262,144 ids: a longer tail's oldest part is scanned */
#define NAME_TRIGRAMS_MAX 64
#define NEEDLE_TRIGRAMS 32
#define NO_NAME UINT32_MAX

typedef struct {
    uint32_t key; /* 0: empty */
    uint16_t n, cap;
    uint16_t *slots; /* ascending */
} post_t;

typedef struct {
    int64_t user[CHUNK_IDS];
    uint32_t name_off[CHUNK_IDS]; /* NO_NAME: no record */
    uint64_t changed[CHUNK_IDS / 64];
    char *names;
    size_t names_len, names_cap;
    post_t *tab;
    uint32_t tab_cap, tab_n;
    size_t records, bytes;
} chunk_t;

struct tailnames {
    pthread_mutex_t mu;
    bool on;
    int64_t lo, hi;
    int64_t first; /* the absolute number of ch[0] */
    chunk_t *ch[MAX_CHUNKS];
};

/* ---- trigrams ------------------------------------------------------------------------ */

static const char *char_after(const char *s)
{
    if (!*s)
        return s;
    s++;
    while ((*s & 0xC0) == 0x80)
        s++;
    return s;
}

/* The hashes of the trigrams of s (at most max; 0 never: an empty slot); how many, or
 * max + 1 when s has more. */
static size_t trigrams(const char *s, uint32_t *out, size_t max)
{
    size_t n = 0;
    for (const char *p = s; *p; p = char_after(p)) {
        const char *end = char_after(char_after(char_after(p)));
        if (end == char_after(char_after(p)))
            break; /* under three characters left */
        if (n == max)
            return max + 1;
        uint32_t h = 2166136261u;
        for (const char *c = p; c < end; c++)
            h = (h ^ (unsigned char)*c) * 16777619u;
        out[n++] = h ? h : 1;
    }
    return n;
}

/* ---- chunks -------------------------------------------------------------------------- */

static chunk_t *chunk_new(void)
{
    chunk_t *c = xcalloc(1, sizeof(*c));
    for (size_t i = 0; i < CHUNK_IDS; i++)
        c->name_off[i] = NO_NAME;
    c->tab_cap = 1024;
    c->tab = xcalloc(c->tab_cap, sizeof(post_t));
    c->bytes = sizeof(*c) + c->tab_cap * sizeof(post_t);
    return c;
}

static void chunk_free(chunk_t *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->tab_cap; i++)
        free(c->tab[i].slots);
    free(c->tab);
    free(c->names);
    free(c);
}

static post_t *chunk_post(chunk_t *c, uint32_t key, bool create)
{
    if (create && 2 * (c->tab_n + 1) > c->tab_cap) {
        uint32_t cap = 2 * c->tab_cap;
        post_t *tab = xcalloc(cap, sizeof(post_t));
        for (uint32_t i = 0; i < c->tab_cap; i++) {
            if (!c->tab[i].key)
                continue;
            uint32_t j = c->tab[i].key & (cap - 1);
            while (tab[j].key)
                j = (j + 1) & (cap - 1);
            tab[j] = c->tab[i];
        }
        free(c->tab);
        c->bytes += (cap - c->tab_cap) * sizeof(post_t);
        c->tab = tab;
        c->tab_cap = cap;
    }
    uint32_t j = key & (c->tab_cap - 1);
    while (c->tab[j].key && c->tab[j].key != key)
        j = (j + 1) & (c->tab_cap - 1);
    if (c->tab[j].key)
        return &c->tab[j];
    if (!create)
        return NULL;
    c->tab[j].key = key;
    c->tab_n++;
    return &c->tab[j];
}

static void post_append(chunk_t *c, post_t *p, uint16_t slot)
{
    if (p->n && p->slots[p->n - 1] == slot)
        return; /* the same trigram twice in one name */
    if (p->n == p->cap) {
        uint16_t cap = p->cap ? (uint16_t)(2 * p->cap) : 2;
        p->slots = xrealloc(p->slots, cap * sizeof(uint16_t));
        c->bytes += (size_t)(cap - p->cap) * sizeof(uint16_t);
        p->cap = cap;
    }
    p->slots[p->n++] = slot;
}

static void chunk_put(chunk_t *c, uint16_t slot, int64_t user, const char *name)
{
    size_t len = strlen(name), flen = len;
    bool same = uni_fold_is_same(name, len);
    char *fold = same ? NULL : uni_fold(name, len, &flen);
    const char *f = fold ? fold : name;
    uint32_t h[NAME_TRIGRAMS_MAX];
    size_t n = trigrams(f, h, NAME_TRIGRAMS_MAX);
    c->user[slot] = user;
    c->records++;
    if ((!same && !fold) || n > NAME_TRIGRAMS_MAX) {
        c->changed[slot / 64] |= 1ULL << (slot % 64); /* not indexed: always a candidate */
        free(fold);
        return;
    }
    if (c->names_len + flen + 1 > c->names_cap) {
        size_t cap = c->names_cap ? 2 * c->names_cap : 64 * 1024;
        while (cap < c->names_len + flen + 1)
            cap *= 2;
        c->names = xrealloc(c->names, cap);
        c->bytes += cap - c->names_cap;
        c->names_cap = cap;
    }
    memcpy(c->names + c->names_len, f, flen + 1);
    c->name_off[slot] = (uint32_t)c->names_len;
    c->names_len += flen + 1;
    free(fold);
    for (size_t i = 0; i < n; i++)
        post_append(c, chunk_post(c, h[i], true), slot);
}

/* ---- coverage ------------------------------------------------------------------------ */

static int64_t abs_chunk(int64_t id)
{
    return (id - 1) / CHUNK_IDS;
}

static void drop_front(tailnames_t *t)
{
    chunk_free(t->ch[0]);
    memmove(t->ch, t->ch + 1, (MAX_CHUNKS - 1) * sizeof(t->ch[0]));
    t->ch[MAX_CHUNKS - 1] = NULL;
    t->first++;
    if (t->lo < t->first * CHUNK_IDS)
        t->lo = t->first * CHUNK_IDS;
    if (t->hi < t->lo)
        t->hi = t->lo;
}

static void reset_locked(tailnames_t *t, int64_t lo)
{
    for (int i = 0; i < MAX_CHUNKS; i++) {
        chunk_free(t->ch[i]);
        t->ch[i] = NULL;
    }
    t->on = true;
    t->lo = t->hi = lo;
    t->first = abs_chunk(lo + 1);
}

/* The chunk of id (lo < id), made (and the oldest dropped to make room) with create. */
static chunk_t *chunk_of(tailnames_t *t, int64_t id, bool create)
{
    int64_t a = abs_chunk(id);
    if (a < t->first)
        return NULL;
    if (a - t->first >= MAX_CHUNKS) {
        if (!create)
            return NULL;
        while (a - t->first >= MAX_CHUNKS)
            drop_front(t);
    }
    chunk_t **c = &t->ch[a - t->first];
    if (!*c && create)
        *c = chunk_new();
    return *c;
}

static void mark_changed(tailnames_t *t, int64_t id)
{
    if (id <= t->lo || id > t->hi)
        return; /* not covered: scanned */
    chunk_t *c = chunk_of(t, id, true);
    uint16_t slot = (uint16_t)((id - 1) % CHUNK_IDS);
    c->changed[slot / 64] |= 1ULL << (slot % 64);
}

tailnames_t *tailnames_new(void)
{
    tailnames_t *t = xcalloc(1, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void tailnames_free(tailnames_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < MAX_CHUNKS; i++)
        chunk_free(t->ch[i]);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

void tailnames_reset(tailnames_t *t, int64_t lo)
{
    pthread_mutex_lock(&t->mu);
    reset_locked(t, lo);
    pthread_mutex_unlock(&t->mu);
}

void tailnames_off(tailnames_t *t)
{
    pthread_mutex_lock(&t->mu);
    reset_locked(t, 0);
    t->on = false;
    pthread_mutex_unlock(&t->mu);
}

void tailnames_add(tailnames_t *t, int64_t id, int64_t user_id, const char *name,
                   bool gaps_known)
{
    pthread_mutex_lock(&t->mu);
    if (!t->on || id <= t->lo) {
        pthread_mutex_unlock(&t->mu);
        return;
    }
    if (id <= t->hi) {
        mark_changed(t, id);
        pthread_mutex_unlock(&t->mu);
        return;
    }
    if (id > t->hi + 1 && !gaps_known)
        reset_locked(t, id - 1);
    chunk_t *c = chunk_of(t, id, true);
    t->hi = id;
    uint16_t slot = (uint16_t)((id - 1) % CHUNK_IDS);
    chunk_put(c, slot, user_id, name ? name : "");
    pthread_mutex_unlock(&t->mu);
}

void tailnames_cover(tailnames_t *t, int64_t hi)
{
    pthread_mutex_lock(&t->mu);
    if (t->on && hi > t->hi)
        t->hi = hi;
    pthread_mutex_unlock(&t->mu);
}

void tailnames_changed(tailnames_t *t, int64_t id)
{
    pthread_mutex_lock(&t->mu);
    if (t->on)
        mark_changed(t, id);
    pthread_mutex_unlock(&t->mu);
}

/* ---- search -------------------------------------------------------------------------- */

/* Appends the candidates of chunk c (absolute number a) above upto; false past max. */
static bool chunk_find(const chunk_t *c, int64_t a, int64_t upto, int64_t user_id,
                       const char *needle, const uint32_t *h, size_t nh, size_t max,
                       int64_t *ids, size_t *n)
{
    int64_t base = a * CHUNK_IDS + 1; /* the id of slot 0 */
    for (size_t w = 0; w < CHUNK_IDS / 64; w++)
        for (uint64_t bits = c->changed[w]; bits; bits &= bits - 1) {
            int64_t id = base + (int64_t)(w * 64) + __builtin_ctzll(bits);
            if (id <= upto)
                continue;
            if (*n == max)
                return false;
            ids[(*n)++] = id;
        }
    const post_t *best = NULL;
    for (size_t i = 0; i < nh; i++) {
        const post_t *p = chunk_post((chunk_t *)c, h[i], false);
        if (!p)
            return true; /* a trigram no name of the chunk has */
        if (!best || p->n < best->n)
            best = p;
    }
    for (uint16_t i = 0; i < best->n; i++) {
        uint16_t slot = best->slots[i];
        int64_t id = base + slot;
        if (id <= upto || c->user[slot] != user_id || c->name_off[slot] == NO_NAME ||
            (c->changed[slot / 64] >> (slot % 64) & 1) ||
            !strstr(c->names + c->name_off[slot], needle))
            continue;
        if (*n == max)
            return false;
        ids[(*n)++] = id;
    }
    return true;
}

bool tailnames_find(tailnames_t *t, int64_t upto, int64_t user_id, const char *needle_fold,
                    size_t max, int64_t *ids, size_t *n, int64_t *lo, int64_t *hi)
{
    uint32_t h[NEEDLE_TRIGRAMS];
    size_t nh = trigrams(needle_fold, h, NEEDLE_TRIGRAMS);
    if (nh > NEEDLE_TRIGRAMS)
        nh = NEEDLE_TRIGRAMS; /* any of them: still a superset */
    *n = 0;
    if (nh == 0)
        return false;
    pthread_mutex_lock(&t->mu);
    bool ok = t->on;
    /* the chunks the index holds whole: no search needs them any more */
    while (ok && (t->first + 1) * CHUNK_IDS <= upto && t->first * CHUNK_IDS < t->hi)
        drop_front(t);
    for (int i = 0; ok && i < MAX_CHUNKS; i++)
        if (t->ch[i])
            ok = chunk_find(t->ch[i], t->first + i, upto, user_id, needle_fold, h, nh, max,
                            ids, n);
    *lo = t->lo;
    *hi = t->hi;
    pthread_mutex_unlock(&t->mu);
    if (!ok)
        *n = 0;
    return ok;
}

tailnames_stats_t tailnames_stats(tailnames_t *t)
{
    tailnames_stats_t s = {0};
    pthread_mutex_lock(&t->mu);
    s.lo = t->lo;
    s.hi = t->hi;
    for (int i = 0; i < MAX_CHUNKS; i++)
        if (t->ch[i]) {
            s.records += t->ch[i]->records;
            s.bytes += t->ch[i]->bytes;
        }
    pthread_mutex_unlock(&t->mu);
    return s;
}
