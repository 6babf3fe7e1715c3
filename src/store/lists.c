/* lists.c — the list helpers both stores share (store_int.h): statement keys, the
 * LIKE pattern of a search, and the cache of filtered lists' totals. */
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

/* Everything that decides which rows key k of q counts, as one string: user, key
 * (without order), then the values of the key's filters. */
static void count_key(buf_t *b, unsigned k, const list_query_t *q)
{
    k &= ~(unsigned)(LQ_BY_NAME | LQ_ASC | LQ_COUNT | LQ_KEYS | LQ_WINDOW);
    buf_printf(b, "%lld/%x", (long long)q->user_id, k);
    if (k & LQ_FILTER)
        buf_printf(b, "/%d/%s", q->template_id, q->resolution ? q->resolution : "");
    if (k & LQ_STYLE)
        buf_printf(b, "/%s", q->style);
    if (k & LQ_FAVORITE)
        buf_printf(b, "/%d", q->favorite != 0);
    if (k & LQ_SEARCH) {
        buf_puts(b, "/");
        buf_puts(b, q->search); /* last: it may hold '/' */
    }
}

static count_slot_t *count_slot(store_counts_t *cc, const char *key)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *s = key; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return &cc->slot[h % COUNT_SLOTS];
}

bool store_counts_get(store_counts_t *cc, unsigned k, const list_query_t *q, int64_t version,
                      int64_t *total)
{
    buf_t key;
    buf_init(&key);
    count_key(&key, k, q);
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
    count_key(&key, k, q);
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
