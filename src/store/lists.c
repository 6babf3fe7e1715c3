/* lists.c — the list helpers both stores share (store_int.h): statement keys, the
 * LIKE pattern of a search, the cache of filtered lists' totals and the cache of
 * unsearched lists' page boundaries (deep pages by keyset seeks). */
#include "store/store_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

unsigned store_list_key(rec_kind_t kind, const list_query_t *q)
{
    unsigned k = kind == KIND_IMG ? LQ_IMG : 0;
    if (q->search && q->search[0]) {
        k |= kind == KIND_DOC && q->search_result ? LQ_SEARCH_RESULT : LQ_SEARCH_NAME;
        /* trigrams need three characters (not bytes) */
        size_t chars = 0;
        for (const char *s = q->search; *s && chars < 3; s++)
            chars += ((unsigned char)*s & 0xC0) != 0x80;
        if (chars >= 3)
            k |= LQ_INDEXED;
    }
    if (kind == KIND_DOC ? q->template_id > 0 : q->resolution != NULL)
        k |= LQ_FILTER;
    if (kind == KIND_IMG && q->style)
        k |= LQ_STYLE;
    if (q->favorite >= 0)
        k |= LQ_FAVORITE;
    if (q->tag)
        k |= LQ_TAG;
    if (q->sort_by_name)
        k |= LQ_BY_NAME;
    if (q->asc)
        k |= LQ_ASC;
    return k;
}

char *store_like_pattern(const char *s, bool fold_ascii, arena_t *a)
{
    size_t n = strlen(s);
    char *p = arena_alloc(a, 2 * n + 3), *o = p;
    *o++ = '%';
    for (; *s; s++) {
        char ch = *s;
        if (ch == '%' || ch == '_' || ch == '\\')
            *o++ = '\\';
        *o++ = fold_ascii && ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
    }
    *o++ = '%';
    *o = '\0';
    return p;
}

/* ---- totals cache ------------------------------------------------------------------------ */

#define COUNT_SLOTS 4096

typedef struct {
    char *key; /* NULL: empty */
    int64_t version, total;
} count_slot_t;

struct store_counts {
    pthread_mutex_t mu;
    count_slot_t slot[COUNT_SLOTS];
};

store_counts_t *store_counts_new(void)
{
    store_counts_t *cc = xcalloc(1, sizeof(*cc));
    pthread_mutex_init(&cc->mu, NULL);
    return cc;
}

void store_counts_free(store_counts_t *cc)
{
    if (!cc)
        return;
    for (size_t i = 0; i < COUNT_SLOTS; i++)
        free(cc->slot[i].key);
    pthread_mutex_destroy(&cc->mu);
    free(cc);
}

/* Everything that decides which rows key k of q counts (and, with order, in which
 * order), as one string: user, key, then the values of the key's filters. */
static void count_key(buf_t *b, unsigned k, const list_query_t *q, bool order)
{
    k &= ~(unsigned)(LQ_COUNT | LQ_KEYS | LQ_WINDOW | LQ_SEEK | LQ_BOUNDS);
    if (!order)
        k &= ~(unsigned)(LQ_BY_NAME | LQ_ASC);
    buf_printf(b, "%lld/%x", (long long)q->user_id, k);
    if (k & LQ_FILTER)
        buf_printf(b, "/%d/%s", q->template_id, q->resolution ? q->resolution : "");
    if (k & LQ_STYLE)
        buf_printf(b, "/%s", q->style);
    if (k & LQ_FAVORITE)
        buf_printf(b, "/%d", q->favorite != 0);
    if (k & LQ_TAG) /* a tag has no comma (API.md §23) */
        buf_printf(b, "/%zu,%s", strlen(q->tag), q->tag);
    if (k & LQ_SEARCH) {
        buf_puts(b, "/");
        buf_puts(b, q->search); /* last: it may hold '/' */
    }
}

/* The slot of key among n (FNV-1a). */
static size_t key_slot(const char *key, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = key; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h % n;
}

static count_slot_t *count_slot(store_counts_t *cc, const char *key)
{
    return &cc->slot[key_slot(key, COUNT_SLOTS)];
}

bool store_counts_get(store_counts_t *cc, unsigned k, const list_query_t *q, int64_t version,
                      int64_t *total)
{
    buf_t key;
    buf_init(&key);
    count_key(&key, k, q, false);
    const char *ks = buf_cstr(&key);
    bool hit = false;
    pthread_mutex_lock(&cc->mu);
    count_slot_t *sl = count_slot(cc, ks);
    if (sl->key && sl->version == version && strcmp(sl->key, ks) == 0) {
        *total = sl->total;
        hit = true;
    }
    pthread_mutex_unlock(&cc->mu);
    buf_free(&key);
    return hit;
}

void store_counts_put(store_counts_t *cc, unsigned k, const list_query_t *q, int64_t version,
                      int64_t total)
{
    buf_t key;
    buf_init(&key);
    count_key(&key, k, q, false);
    char *ks = buf_steal(&key);
    pthread_mutex_lock(&cc->mu);
    count_slot_t *sl = count_slot(cc, ks);
    char *old = sl->key;
    sl->key = ks;
    sl->version = version;
    sl->total = total;
    pthread_mutex_unlock(&cc->mu);
    free(old);
    buf_free(&key);
}

/* ---- page boundaries --------------------------------------------------------------------- */

#define PAGE_SLOTS 32
#define PAGE_ENTRY_BYTES (512 * 1024) /* keys of one entry, names included */

typedef struct {
    char *key; /* NULL: empty */
    int64_t version;
    store_page_key_t *b; /* b[i]: block i + 1; names owned */
    size_t n, cap, bytes;
} page_slot_t;

struct store_pages {
    pthread_mutex_t mu;
    page_slot_t slot[PAGE_SLOTS];
};

store_pages_t *store_pages_new(void)
{
    store_pages_t *pc = xcalloc(1, sizeof(*pc));
    pthread_mutex_init(&pc->mu, NULL);
    return pc;
}

static void page_slot_clear(page_slot_t *sl)
{
    for (size_t i = 0; i < sl->n; i++)
        free((char *)sl->b[i].name);
    free(sl->b);
    free(sl->key);
    memset(sl, 0, sizeof(*sl));
}

void store_pages_free(store_pages_t *pc)
{
    if (!pc)
        return;
    for (size_t i = 0; i < PAGE_SLOTS; i++)
        page_slot_clear(&pc->slot[i]);
    pthread_mutex_destroy(&pc->mu);
    free(pc);
}

static page_slot_t *page_slot(store_pages_t *pc, const char *key)
{
    return &pc->slot[key_slot(key, PAGE_SLOTS)];
}

int64_t store_pages_get(store_pages_t *pc, unsigned k, const list_query_t *q, int64_t j,
                        arena_t *a, store_page_key_t *key, int64_t *version)
{
    buf_t kb;
    buf_init(&kb);
    count_key(&kb, k, q, true);
    int64_t m = 0;
    *key = (store_page_key_t){0};
    pthread_mutex_lock(&pc->mu);
    page_slot_t *sl = page_slot(pc, buf_cstr(&kb));
    if (sl->key && strcmp(sl->key, buf_cstr(&kb)) == 0 && sl->n > 0 && j > 0) {
        m = j < (int64_t)sl->n ? j : (int64_t)sl->n;
        const store_page_key_t *b = &sl->b[m - 1];
        key->id = b->id;
        key->name = b->name ? arena_strdup(a, b->name) : NULL;
        *version = sl->version;
    }
    pthread_mutex_unlock(&pc->mu);
    buf_free(&kb);
    return m;
}

void store_pages_put(store_pages_t *pc, unsigned k, const list_query_t *q, int64_t version,
                     int64_t from, const store_page_key_t *keys, size_t n)
{
    buf_t kb;
    buf_init(&kb);
    count_key(&kb, k, q, true);
    pthread_mutex_lock(&pc->mu);
    page_slot_t *sl = page_slot(pc, buf_cstr(&kb));
    if (!sl->key || sl->version != version || strcmp(sl->key, buf_cstr(&kb)) != 0) {
        if (from != 0)
            goto out; /* extends an entry this slot does not hold */
        page_slot_clear(sl);
        sl->key = buf_steal(&kb);
        sl->version = version;
    }
    if (from > (int64_t)sl->n)
        goto out;
    for (size_t i = (size_t)((int64_t)sl->n - from); i < n; i++) {
        size_t len = keys[i].name ? strlen(keys[i].name) + 1 : 0;
        if (sl->bytes + sizeof(store_page_key_t) + len > PAGE_ENTRY_BYTES)
            break; /* deeper pages seek from the last boundary kept */
        if (sl->n == sl->cap) {
            sl->cap = sl->cap ? 2 * sl->cap : 64;
            sl->b = xrealloc(sl->b, sl->cap * sizeof(*sl->b));
        }
        sl->b[sl->n].id = keys[i].id;
        sl->b[sl->n].name = keys[i].name ? xstrdup(keys[i].name) : NULL;
        sl->n++;
        sl->bytes += sizeof(store_page_key_t) + len;
    }
out:
    pthread_mutex_unlock(&pc->mu);
    buf_free(&kb);
}
