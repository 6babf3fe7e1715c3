/* test_rcache.c — the rendered-record cache (src/api/rcache.c): exact-version hits,
 * replacement and stale puts, drop, the byte budget and LRU eviction (checked through
 * behaviour only, since the shard function is private), stats, and many threads. */
#include "api/rcache.h"
#include "test.h"

#include <pthread.h>
#include <stdlib.h>

#define OVER 104 /* bytes counted per entry beyond its JSON (ENTRY_OVERHEAD) */

/* get into a fresh buffer: true when it hit with exactly want[0..n). */
static bool get_is(rcache_t *c, rec_kind_t k, int64_t id, int64_t v, const char *want, size_t n)
{
    buf_t b;
    buf_init(&b);
    bool hit = rcache_get(c, k, id, v, &b);
    bool ok = hit && b.len == n && (n == 0 || memcmp(b.data, want, n) == 0);
    buf_free(&b);
    return ok;
}

static bool hits(rcache_t *c, rec_kind_t k, int64_t id, int64_t v)
{
    buf_t b;
    buf_init(&b);
    bool hit = rcache_get(c, k, id, v, &b);
    buf_free(&b);
    return hit;
}

static void put_n(rcache_t *c, rec_kind_t k, int64_t id, int64_t v, size_t n)
{
    char *s = malloc(n ? n : 1);
    memset(s, 'a' + (int)(id % 26), n);
    rcache_put(c, k, id, v, s, n);
    free(s);
}

static rcache_stats_t stats(rcache_t *c)
{
    rcache_stats_t st;
    rcache_stats(c, &st);
    return st;
}

static void test_null(void)
{
    CHECK(rcache_new(0) == NULL);
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "pre");
    CHECK(!rcache_get(NULL, KIND_DOC, 1, 1, &b));
    CHECK_INT(b.len, 3);
    CHECK_STR(buf_cstr(&b), "pre");
    rcache_put(NULL, KIND_DOC, 1, 1, "x", 1);
    rcache_drop(NULL, KIND_DOC, 1);
    rcache_stats_t st;
    memset(&st, 0xab, sizeof(st));
    rcache_stats(NULL, &st);
    CHECK(st.hits == 0 && st.misses == 0 && st.entries == 0 && st.bytes == 0);
    rcache_free(NULL);
    buf_free(&b);
}

/* Round trips, table-driven: every key is put, then all read back (none disturbs another). */
static const struct {
    rec_kind_t kind;
    int64_t id, v;
    const char *json;
    size_t len;
} rt[] = {
    {KIND_DOC, 1, 100, "{\"id\":1}", 8},
    {KIND_IMG, 1, 100, "{\"id\":1,\"img\":true}", 19}, /* same id, other kind */
    {KIND_DOC, 0, 5, "{}", 2},
    {KIND_DOC, INT64_MIN, 7, "{\"min\":1}", 9}, /* id*2 wraps to the same mix as id 0 */
    {KIND_IMG, INT64_MAX, 8, "{\"max\":1}", 9},
    {KIND_DOC, -42, -3, "neg", 3},
    {KIND_IMG, 9, 1, "a\0b\0c", 5}, /* embedded NULs */
    {KIND_DOC, 10, 1, "", 0},       /* empty rendering still hits */
};

static void test_roundtrip(void)
{
    rcache_t *c = rcache_new(1 << 20);
    size_t total = 0;
    for (size_t i = 0; i < ARRAY_LEN(rt); i++) {
        rcache_put(c, rt[i].kind, rt[i].id, rt[i].v, rt[i].json, rt[i].len);
        total += rt[i].len + OVER;
    }
    for (size_t i = 0; i < ARRAY_LEN(rt); i++) {
        CHECK_MSG(get_is(c, rt[i].kind, rt[i].id, rt[i].v, rt[i].json, rt[i].len), "case %zu", i);
        CHECK_MSG(!hits(c, rt[i].kind, rt[i].id, rt[i].v - 1), "case %zu older", i);
        CHECK_MSG(!hits(c, rt[i].kind, rt[i].id, rt[i].v + 1), "case %zu newer", i);
    }
    CHECK(!hits(c, KIND_IMG, 0, 5));
    CHECK(!hits(c, KIND_DOC, 2, 100));
    rcache_stats_t st = stats(c);
    CHECK_INT(st.entries, ARRAY_LEN(rt));
    CHECK_INT(st.bytes, total);
    /* get appends after what is there */
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "head:");
    CHECK(rcache_get(c, KIND_DOC, 1, 100, &b));
    CHECK_INT(b.len, 13);
    CHECK_STR(buf_cstr(&b), "head:{\"id\":1}");
    CHECK(!rcache_get(c, KIND_DOC, 1, 99, &b)); /* a miss leaves it untouched */
    CHECK_INT(b.len, 13);
    buf_free(&b);
    rcache_free(c);
}

/* A copy of rcache.c's private mix(), used only to pick an id whose two kinds share a
 * shard and a hash chain, so that the kind comparison in the chain walk is exercised.
 * Should mix() change, the check stays valid (just weaker). */
static uint64_t mirror_mix(int kind, int64_t id)
{
    uint64_t x = (uint64_t)id * 2 + (uint64_t)kind;
    x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static void test_kind_same_chain(void)
{
    int64_t id = 1;
    for (; id < 10000000; id++) {
        uint64_t d = mirror_mix(KIND_DOC, id), i = mirror_mix(KIND_IMG, id);
        if (d % 16 == i % 16 && (d / 16) % 1024 == (i / 16) % 1024)
            break;
    }
    for (int order = 0; order < 2; order++) {
        rcache_t *c = rcache_new(1 << 20);
        rcache_put(c, order ? KIND_IMG : KIND_DOC, id, 1, order ? "img" : "doc", 3);
        rcache_put(c, order ? KIND_DOC : KIND_IMG, id, 2, order ? "doc" : "img", 3);
        CHECK_MSG(get_is(c, KIND_DOC, id, order ? 2 : 1, "doc", 3), "id %lld", (long long)id);
        CHECK_MSG(get_is(c, KIND_IMG, id, order ? 1 : 2, "img", 3), "id %lld", (long long)id);
        rcache_drop(c, KIND_IMG, id);
        CHECK(hits(c, KIND_DOC, id, order ? 2 : 1));
        CHECK_INT(stats(c).entries, 1);
        rcache_free(c);
    }
}

static void test_versions_and_drop(void)
{
    rcache_t *c = rcache_new(1 << 20);
    rcache_put(c, KIND_DOC, 5, 10, "old", 3);
    rcache_put(c, KIND_DOC, 5, 20, "newer", 5);
    CHECK(!hits(c, KIND_DOC, 5, 10));
    CHECK(get_is(c, KIND_DOC, 5, 20, "newer", 5));
    rcache_put(c, KIND_DOC, 5, 15, "stale", 5); /* older than the kept one: ignored */
    CHECK(get_is(c, KIND_DOC, 5, 20, "newer", 5));
    CHECK(!hits(c, KIND_DOC, 5, 15));
    rcache_put(c, KIND_DOC, 5, 20, "again!", 6); /* same version: one entry, counted once */
    CHECK(get_is(c, KIND_DOC, 5, 20, "again!", 6));
    rcache_stats_t st = stats(c);
    CHECK_INT(st.entries, 1);
    CHECK_INT(st.bytes, 6 + OVER);
    rcache_put(c, KIND_IMG, 5, 1, "img", 3);
    rcache_drop(c, KIND_DOC, 5);
    CHECK(!hits(c, KIND_DOC, 5, 20));
    CHECK(get_is(c, KIND_IMG, 5, 1, "img", 3)); /* the other kind survives */
    rcache_drop(c, KIND_DOC, 5);                /* missing: harmless */
    rcache_drop(c, KIND_DOC, 12345);
    st = stats(c);
    CHECK_INT(st.entries, 1);
    CHECK_INT(st.bytes, 3 + OVER);
    rcache_put(c, KIND_DOC, 5, 1, "back", 4); /* after a drop any version may come back */
    CHECK(get_is(c, KIND_DOC, 5, 1, "back", 4));
    rcache_free(c);
}

static void test_stats(void)
{
    rcache_t *c = rcache_new(1 << 20);
    rcache_put(c, KIND_DOC, 1, 1, "abc", 3);
    rcache_put(c, KIND_IMG, 2, 2, "defgh", 5);
    CHECK(hits(c, KIND_DOC, 1, 1));
    CHECK(hits(c, KIND_IMG, 2, 2));
    CHECK(hits(c, KIND_IMG, 2, 2));
    CHECK(!hits(c, KIND_DOC, 1, 2)); /* wrong version */
    CHECK(!hits(c, KIND_DOC, 2, 2)); /* wrong kind */
    CHECK(!hits(c, KIND_DOC, 3, 1)); /* unknown */
    rcache_stats_t st = stats(c);
    CHECK_INT(st.hits, 3);
    CHECK_INT(st.misses, 3);
    CHECK_INT(st.entries, 2);
    CHECK_INT(st.bytes, 3 + 5 + 2 * OVER);
    rcache_drop(c, KIND_DOC, 1);
    st = stats(c);
    CHECK_INT(st.entries, 1);
    CHECK_INT(st.bytes, 5 + OVER);
    CHECK_INT(st.hits + st.misses, 6); /* drop and stats count nothing */
    rcache_free(c);
}

static void test_budget(void)
{
    const size_t budget = 16 * 4096, shard = 4096;
    rcache_t *c = rcache_new(budget);
    bool within = true;
    for (int64_t id = 1; id <= 5000; id++) {
        put_n(c, KIND_DOC, id, 1, 100);
        within = within && stats(c).bytes <= budget;
    }
    CHECK(within);
    rcache_stats_t st = stats(c);
    CHECK_MSG(st.entries <= budget / (100 + OVER), "entries %llu", (unsigned long long)st.entries);
    CHECK_INT(st.bytes, st.entries * (100 + OVER));
    int recent = 0, early = 0;
    for (int64_t id = 5000; id > 4980; id--) /* the last 20 put fit in any shard (24 each) */
        recent += hits(c, KIND_DOC, id, 1);
    for (int64_t id = 1; id <= 100; id++)
        early += hits(c, KIND_DOC, id, 1);
    CHECK_INT(recent, 20);
    CHECK_INT(early, 0);
    /* larger than a shard: not kept, evicts nothing; exactly a shard: kept */
    st = stats(c);
    put_n(c, KIND_IMG, 7, 1, shard - OVER + 1);
    CHECK(!hits(c, KIND_IMG, 7, 1));
    rcache_stats_t st2 = stats(c);
    CHECK_INT(st2.entries, st.entries);
    CHECK_INT(st2.bytes, st.bytes);
    for (int64_t id = 5000; id > 4980; id--)
        recent += hits(c, KIND_DOC, id, 1);
    CHECK_INT(recent, 40);
    put_n(c, KIND_IMG, 7, 2, shard - OVER);
    CHECK(hits(c, KIND_IMG, 7, 2));
    CHECK(stats(c).bytes <= budget);
    rcache_free(c);
    rcache_t *tiny = rcache_new(8); /* under one byte per shard: nothing fits */
    CHECK(tiny != NULL);
    rcache_put(tiny, KIND_DOC, 1, 1, "", 0);
    CHECK(!hits(tiny, KIND_DOC, 1, 1));
    CHECK_INT(stats(tiny).entries, 0);
    rcache_free(tiny);
}

static void test_lru(void)
{
    /* Exact: find B, C in A's shard with a one-entry-per-shard cache (a put there evicts A). */
    const int64_t A = 1;
    int64_t same[2];
    int found = 0;
    rcache_t *one = rcache_new(16 * (100 + OVER));
    for (int64_t k = 2; k < 100000 && found < 2; k++) {
        put_n(one, KIND_DOC, A, 1, 100);
        put_n(one, KIND_DOC, k, 1, 100);
        if (!hits(one, KIND_DOC, A, 1))
            same[found++] = k;
    }
    rcache_free(one);
    CHECK_INT(found, 2);
    if (found == 2) {
        rcache_t *two = rcache_new(16 * 2 * (100 + OVER));
        put_n(two, KIND_DOC, A, 1, 100);
        put_n(two, KIND_DOC, same[0], 1, 100);
        CHECK(hits(two, KIND_DOC, A, 1)); /* refresh A: B is now least recent */
        put_n(two, KIND_DOC, same[1], 1, 100);
        CHECK(hits(two, KIND_DOC, A, 1));
        CHECK(!hits(two, KIND_DOC, same[0], 1));
        CHECK(hits(two, KIND_DOC, same[1], 1));
        put_n(two, KIND_DOC, same[0], 1, 100); /* C was read last, so A goes now */
        CHECK(!hits(two, KIND_DOC, A, 1));
        CHECK(hits(two, KIND_DOC, same[1], 1));
        CHECK(hits(two, KIND_DOC, same[0], 1));
        rcache_free(two);
    }
    /* Statistical: 3 entries per shard; an entry read after every put is never evicted. */
    rcache_t *c = rcache_new(16 * 3 * (100 + OVER));
    for (int64_t id = 1; id <= 1000; id++)
        put_n(c, KIND_DOC, id, 1, 100);
    put_n(c, KIND_DOC, 500, 2, 100); /* a newer version of an id long evicted */
    int survived = 0;
    for (int64_t i = 0; i < 10000; i++) {
        survived += hits(c, KIND_DOC, 500, 2);
        put_n(c, KIND_DOC, 2000 + i, 1, 100);
    }
    CHECK_INT(survived, 10000);
    int others = 0;
    for (int64_t id = 1; id <= 1000; id++)
        others += hits(c, KIND_DOC, id, 1);
    CHECK_INT(others, 0);
    rcache_free(c);
}

/* ---- threads ------------------------------------------------------------------------ */

#define NTHREADS 8
#define NOPS 20000
#define NIDS 300
static rcache_t *shared;

static size_t render(char *out, int kind, int64_t id, int64_t v)
{
    int n = snprintf(out, 64, "k=%d id=%lld v=%lld ", kind, (long long)id, (long long)v);
    size_t len = (size_t)n + (size_t)((id * 31 + v * 7) % 150);
    memset(out + n, '.', len - (size_t)n);
    return len;
}

typedef struct {
    uint64_t seed, gets, hit, bad;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    uint64_t x = w->seed;
    char want[256];
    buf_t b;
    buf_init(&b);
    for (int i = 0; i < NOPS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rec_kind_t k = (rec_kind_t)(x >> 60 & 1);
        int64_t id = (int64_t)((x >> 8) % NIDS), v = (int64_t)(x >> 40) % 20 + 1;
        size_t len = render(want, (int)k, id, v);
        unsigned op = (unsigned)(x >> 32) % 10;
        if (op < 4) {
            rcache_put(shared, k, id, v, want, len);
        } else if (op < 9) {
            buf_reset(&b);
            w->gets++;
            if (rcache_get(shared, k, id, v, &b)) {
                w->hit++;
                if (b.len != len || memcmp(b.data, want, len) != 0)
                    w->bad++;
            } else if (b.len != 0) {
                w->bad++;
            }
        } else {
            rcache_drop(shared, k, id);
        }
    }
    buf_free(&b);
    return NULL;
}

static void test_threads(void)
{
    const size_t budget = 16 * 4096;
    shared = rcache_new(budget);
    pthread_t th[NTHREADS];
    worker_t w[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker_t){.seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1)};
        CHECK_INT(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    uint64_t gets = 0, hit = 0, bad = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        gets += w[i].gets, hit += w[i].hit, bad += w[i].bad;
    }
    CHECK_INT(bad, 0);
    CHECK_MSG(hit > 0 && hit < gets, "hit %llu of %llu", (unsigned long long)hit,
              (unsigned long long)gets);
    rcache_stats_t st = stats(shared);
    CHECK_INT(st.hits, hit);
    CHECK_INT(st.hits + st.misses, gets);
    CHECK(st.bytes <= budget);
    CHECK(st.entries <= 2 * NIDS);
    CHECK(st.bytes >= st.entries * (OVER + 13));
    rcache_free(shared);
}

/* §26: a compressed show kept beside its rendering: only for the same version, one
 * coding at a time, gone with the rendering (a change, a drop), counted in the budget. */
static void test_show(void)
{
    rcache_t *c = rcache_new(16 * 4096);
    buf_t b;
    buf_init(&b);
    rcache_put_show(c, KIND_DOC, 7, 100, 1, "zz", 2); /* no rendering: not kept */
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 100, 1, &b));
    rcache_put(c, KIND_DOC, 7, 100, "{\"id\":7}", 8);
    rcache_put_show(c, KIND_DOC, 7, 99, 1, "old", 3); /* another version: not kept */
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 100, 1, &b));
    rcache_put_show(c, KIND_DOC, 7, 100, 1, "gz", 2);
    CHECK(rcache_get_show(c, KIND_DOC, 7, 100, 1, &b));
    CHECK_INT(b.len, 2);
    CHECK(memcmp(b.data, "gz", 2) == 0);
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 100, 3, &b)); /* another coding */
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 101, 1, &b)); /* another version */
    CHECK(!rcache_get_show(c, KIND_IMG, 7, 100, 1, &b));
    rcache_stats_t st;
    rcache_stats(c, &st);
    CHECK_INT(st.bytes, 8 + OVER + 2 + 32);
    rcache_put_show(c, KIND_DOC, 7, 100, 3, "zstd", 4); /* the last coding asked replaces */
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 100, 1, &b));
    buf_reset(&b);
    CHECK(rcache_get_show(c, KIND_DOC, 7, 100, 3, &b));
    rcache_stats(c, &st);
    CHECK_INT(st.bytes, 8 + OVER + 4 + 32);
    rcache_put(c, KIND_DOC, 7, 101, "{\"id\":7,\"x\":1}", 14); /* a new version */
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 101, 3, &b));
    rcache_put_show(c, KIND_DOC, 7, 101, 2, "br", 2);
    rcache_drop(c, KIND_DOC, 7);
    CHECK(!rcache_get_show(c, KIND_DOC, 7, 101, 2, &b));
    rcache_stats(c, &st);
    CHECK_INT(st.bytes, 0);
    /* a copy that does not fit the shard's budget is not kept; the rendering stays */
    rcache_put(c, KIND_DOC, 8, 1, "{}", 2);
    char big[5000];
    memset(big, 'x', sizeof(big));
    rcache_put_show(c, KIND_DOC, 8, 1, 1, big, sizeof(big));
    CHECK(!rcache_get_show(c, KIND_DOC, 8, 1, 1, &b));
    buf_reset(&b);
    CHECK(rcache_get(c, KIND_DOC, 8, 1, &b));
    CHECK(!rcache_get_show(NULL, KIND_DOC, 8, 1, 1, &b));
    rcache_put_show(NULL, KIND_DOC, 8, 1, 1, "x", 1);
    buf_free(&b);
    rcache_free(c);
}

int main(void)
{
    test_null();
    test_roundtrip();
    test_kind_same_chain();
    test_versions_and_drop();
    test_stats();
    test_budget();
    test_lru();
    test_threads();
    test_show();
    TEST_DONE();
}
