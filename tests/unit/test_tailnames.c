/* test_tailnames.c — the index of the unindexed tail's names (store/tailnames.c) alone:
 * candidates are a superset of the matches (folding, users, renames, reused ids), the
 * coverage (gaps, chunks dropped behind the watermark, the bound), threads; and in the
 * SQLite store: a search over a tail rebuilt at the start, with renames and deletes,
 * equals a plain scan. */
#include "core/log.h"
#include "core/unicode.h"
#include "store/store.h"
#include "store/tailnames.h"
#include "test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX 4096

static int64_t ids[MAX];

/* The candidates of needle (folded here) above upto for user; -1 when not usable. */
static long find(tailnames_t *t, int64_t upto, int64_t user, const char *needle)
{
    char *f = uni_fold(needle, strlen(needle), NULL);
    size_t n = 0;
    int64_t lo, hi;
    bool ok = tailnames_find(t, upto, user, f, MAX, ids, &n, &lo, &hi);
    free(f);
    return ok ? (long)n : -1;
}

static bool has(long n, int64_t id)
{
    for (long i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

static void test_basic(void)
{
    tailnames_t *t = tailnames_new();
    tailnames_add(t, 1, 1, "ignored: not covered yet", false);
    CHECK_INT(find(t, 0, 1, "ignored"), -1);
    tailnames_reset(t, 0);
    tailnames_add(t, 1, 1, "Garden Note", false);
    tailnames_add(t, 2, 1, "zebra crossing", false);
    tailnames_add(t, 3, 2, "zebra of user 2", false);
    tailnames_add(t, 4, 1, "STRASSE", false);
    tailnames_add(t, 5, 1, "Ärger im Büro", false);
    long n = find(t, 0, 1, "ZEBRA");
    CHECK(n == 1 && ids[0] == 2);
    n = find(t, 0, 2, "zebra");
    CHECK(n == 1 && ids[0] == 3);
    CHECK_INT(find(t, 0, 1, "straße"), 1); /* ß folds to ss */
    CHECK_INT(find(t, 0, 1, "äRG"), 1);
    CHECK_INT(find(t, 0, 1, "note"), 1);
    CHECK_INT(find(t, 0, 1, "nothing"), 0);
    CHECK_INT(find(t, 0, 1, "ze"), -1); /* no trigram: the caller scans */
    CHECK_INT(find(t, 2, 1, "zebra"), 0); /* at or below the watermark: the index's */
    /* a rename: a candidate of every search from then on */
    tailnames_changed(t, 1);
    n = find(t, 0, 1, "zebra");
    CHECK(n == 2 && has(n, 1) && has(n, 2));
    /* an id reused after a rolled-back insert: both names may be seen */
    tailnames_add(t, 6, 1, "rolled back", false);
    tailnames_add(t, 6, 1, "kept", false);
    CHECK(has(find(t, 0, 1, "kept"), 6));
    CHECK(has(find(t, 0, 1, "rolled"), 6));
    tailnames_stats_t s = tailnames_stats(t);
    CHECK(s.lo == 0 && s.hi == 6 && s.records == 6 && s.bytes > 0);
    /* a gap: ids 7..9 inserted by someone else; coverage restarts above them */
    tailnames_add(t, 10, 1, "zebra ten", false);
    s = tailnames_stats(t);
    CHECK(s.lo == 9 && s.hi == 10 && s.records == 1);
    n = find(t, 0, 1, "zebra");
    CHECK(n == 1 && ids[0] == 10);
    /* a rebuild reads every row: gaps are deleted records */
    tailnames_reset(t, 100);
    tailnames_add(t, 105, 1, "zebra", true);
    tailnames_add(t, 109, 1, "zebra", true);
    tailnames_cover(t, 120);
    s = tailnames_stats(t);
    CHECK(s.lo == 100 && s.hi == 120 && s.records == 2);
    tailnames_add(t, 121, 1, "zebra", false); /* the next id: no gap */
    CHECK_INT(find(t, 100, 1, "zebra"), 3);
    tailnames_off(t); /* a rebuild that failed: nothing covered, adds ignored */
    tailnames_add(t, 122, 1, "zebra", false);
    CHECK_INT(find(t, 100, 1, "zebra"), -1);
    CHECK_INT((long)tailnames_stats(t).records, 0);
    tailnames_free(t);
}

static void test_coverage(void)
{
    tailnames_t *t = tailnames_new();
    tailnames_reset(t, 0);
    char name[64];
    int64_t last = 300000; /* more than the bound: the oldest part is left to the scan */
    for (int64_t id = 1; id <= last; id++) {
        snprintf(name, sizeof(name), "%s note %lld", id % 99991 == 7 ? "zebra" : "garden",
                 (long long)id);
        tailnames_add(t, id, 1, name, false);
    }
    tailnames_stats_t s = tailnames_stats(t);
    CHECK(s.hi == last && s.lo > 0 && s.lo < last - 200000);
    printf("tailnames: %zu records, %zu bytes (%.0f a record)\n", s.records, s.bytes,
           (double)s.bytes / (double)s.records);
    long n = find(t, s.lo, 1, "ZEBRA");
    CHECK(n == 3 && has(n, 99998) && has(n, 199989) && has(n, 299980));
    CHECK_INT(find(t, s.lo, 1, "note 29999"), 10); /* 299990 .. 299999 */
    CHECK_INT(find(t, s.lo, 1, "note"), -1); /* too many: the caller scans */
    /* the watermark passes chunks: they are dropped */
    n = find(t, 250000, 1, "zebra");
    CHECK(n == 1 && ids[0] == 299980);
    tailnames_stats_t after = tailnames_stats(t);
    CHECK(after.lo > s.lo && after.lo <= 250000 && after.records < s.records);
    tailnames_free(t);
}

/* Long names are candidates of every search (not indexed); invalid needles. */
static void test_long(void)
{
    tailnames_t *t = tailnames_new();
    tailnames_reset(t, 0);
    char name[300];
    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    tailnames_add(t, 1, 1, name, false);
    tailnames_add(t, 2, 1, "", false);
    tailnames_add(t, 3, 1, NULL, false);
    CHECK(has(find(t, 0, 1, "abc"), 1));
    CHECK_INT(find(t, 0, 1, "abc"), 1);
    tailnames_free(t);
}

typedef struct {
    tailnames_t *t;
    int from, to;
} adder_t;

static void *adder(void *p)
{
    adder_t *a = p;
    for (int id = a->from; id <= a->to; id++)
        tailnames_add(a->t, id, 1, id % 1000 == 0 ? "zebra" : "garden note", false);
    return NULL;
}

/* A writer adds while searches run (and drop chunks behind a moving watermark): every
 * zebra added before a search began is found (ids only grow). */
static void test_threads(void)
{
    tailnames_t *t = tailnames_new();
    tailnames_reset(t, 0);
    adder_t a = {t, 1, 200000};
    pthread_t th;
    pthread_create(&th, NULL, adder, &a);
    bool ok = true;
    for (int i = 0; i < 2000 && ok; i++) {
        tailnames_stats_t s = tailnames_stats(t);
        int64_t upto = s.hi / 2;
        long n = find(t, upto, 1, "zebra");
        if (n < 0)
            continue;
        for (int64_t z = (upto / 1000 + 1) * 1000; z <= s.hi; z += 1000)
            ok &= has(n, z);
    }
    pthread_join(th, NULL);
    CHECK_MSG(ok, "a search missed a record added before it began");
    tailnames_free(t);
}

/* ---- in the store ---------------------------------------------------------------------- */

static const char *const names[] = {"Zebra one", "zèbre", "garden", "ZEBRA crossing",
                                    "Straße", "zebra three", "tiger"};

/* Ids of the user's documents whose name holds needle, newest first, as a scan. */
static int expect(const char **cur, const int64_t *doc_ids, int n, const char *needle,
                  int64_t *out)
{
    char *f = uni_fold(needle, strlen(needle), NULL);
    int m = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (!cur[i])
            continue;
        char *h = uni_fold(cur[i], strlen(cur[i]), NULL);
        if (strstr(h, f))
            out[m++] = doc_ids[i];
        free(h);
    }
    free(f);
    return m;
}

static void check_search(store_conn_t *c, int64_t uid, const char **cur, const int64_t *doc_ids,
                         int n, const char *needle)
{
    int64_t want[64];
    int m = expect(cur, doc_ids, n, needle, want);
    list_query_t q = {.user_id = uid, .search = needle, .favorite = -1, .per_page = 100,
                      .page = 1};
    arena_t a;
    arena_init(&a);
    record_list_t l = {0};
    CHECK_INT(store_record_list(c, KIND_DOC, &q, &a, &l), STORE_OK);
    bool same = l.n == (size_t)m && l.total == m;
    for (size_t i = 0; same && i < l.n; i++)
        same = l.items[i].id == want[i];
    CHECK_MSG(same, "search \"%s\": %zu rows (total %lld), a scan finds %d", needle, l.n,
              (long long)l.total, m);
    arena_free(&a);
}

static void search_all(store_conn_t *c, int64_t uid, const char **cur, const int64_t *doc_ids,
                       int n)
{
    static const char *const needles[] = {"zebra", "ZÈBRE", "strasse", "den", "one",
                                          "renamed", "tig"};
    for (size_t i = 0; i < ARRAY_LEN(needles); i++)
        check_search(c, uid, cur, doc_ids, n, needles[i]);
}

static store_conn_t *open_held(const char *path, store_t **s)
{
    char err[256];
    *s = store_open(path, err, sizeof(err));
    CHECK_MSG(*s != NULL, "store_open: %s", err);
    store_sqlite_index_hold(*s, true); /* the tail stays a tail */
    store_conn_t *c = *s ? store_conn(*s, err, sizeof(err)) : NULL;
    CHECK(c && store_migrate(c) == STORE_OK);
    return c;
}

static void test_store(void)
{
    char dir[] = "/tmp/inkwell-tailnames-XXXXXX", path[300];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof(path), "%s/inkwell.db", dir);
    store_t *s;
    store_conn_t *c = open_held(path, &s);
    enum { N = ARRAY_LEN(names) * 3 };
    const char *cur[N];
    int64_t doc_ids[N], uid = 0, other = 0;
    CHECK_INT(store_user_ensure(c, "tail", &uid), STORE_OK);
    CHECK_INT(store_user_ensure(c, "other", &other), STORE_OK);
    for (int i = 0; i < N; i++) {
        cur[i] = names[i % ARRAY_LEN(names)];
        record_t r = {.kind = KIND_DOC, .user_id = uid, .name = cur[i], .prompt = "p",
                      .creativity = 0.5, .template_id = 1, .result = "text", .words = 1};
        record_t o = r;
        o.user_id = other;
        record_t *rs[] = {&r, &o};
        CHECK_INT(store_docs_create_completed(c, rs, NULL, 2), STORE_OK);
        doc_ids[i] = r.id;
        if (i == N / 3) /* the older part indexed, the rest a tail */
            while (store_sqlite_index_now(c, 1000) > 0)
                ;
    }
    search_all(c, uid, cur, doc_ids, N);
    /* renames and deletes in the tail (and one below the watermark) */
    arena_t a;
    arena_init(&a);
    for (int i = 1; i < N; i += 4) {
        record_patch_t p = {.name = "renamed zebra", .words = -1, .favorite = -1};
        record_t out;
        CHECK_INT(store_record_update(c, KIND_DOC, uid, doc_ids[i], &p, &a, &out), STORE_OK);
        cur[i] = "renamed zebra";
    }
    for (int i = 2; i < N; i += 5) {
        const char **keys = NULL;
        size_t nk = 0;
        CHECK_INT(store_record_delete(c, KIND_DOC, uid, doc_ids[i], &a, &keys, &nk), STORE_OK);
        cur[i] = NULL;
    }
    arena_free(&a);
    search_all(c, uid, cur, doc_ids, N);
    store_close(s);
    /* a restart: the tail's names are read again from the records above the watermark */
    c = open_held(path, &s);
    search_all(c, uid, cur, doc_ids, N);
    while (store_sqlite_index_now(c, 3) > 0) /* the watermark passes them, a few at a time */
        search_all(c, uid, cur, doc_ids, N);
    store_close(s);
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
        char f[320];
        snprintf(f, sizeof(f), "%s%s", path, suffixes[i]);
        unlink(f);
    }
    rmdir(dir);
}

int main(void)
{
    log_level = LOG_WARN;
    test_basic();
    test_coverage();
    test_long();
    test_threads();
    test_store();
    TEST_DONE();
}
