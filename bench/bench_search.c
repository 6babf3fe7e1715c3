/* bench_search.c — one search timed at the store, with the SQLite search index held
 * where it is (so a tail of records not yet indexed stays a tail: see bench_seed.c's
 * BENCH_SEED_NO_INDEX): what a page of `?search=WORD` costs the store, without HTTP.
 *
 * Usage: bench-search DATABASE_URL USER WORD [N]
 * Prints the records not yet indexed, then the median and p90 in microseconds of
 *   uncached: the first request of each ASCII case variant of WORD (up to 32; each is its
 *             own key of the totals cache, so its total is counted, as after a change)
 *   cached:   N requests of WORD (its total from the totals cache)
 * with the page's rows and total. Run it with the server stopped (SQLite).
 * BENCH_SEARCH_RESULT=1 searches the documents' texts (search_by=result), and
 * BENCH_SEARCH_PAGE=N asks for page N; BENCH_SEARCH_VARIANTS=N makes only the first N
 * case variants (at least 1); BENCH_SEARCH_CPU=1 times the thread's CPU instead of the
 * clock (steadier on a loaded machine). */
#include "store/store.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool use_cpu;

/* The clock, or the thread's CPU time with BENCH_SEARCH_CPU. */
static double now_s(void)
{
    if (!use_cpu)
        return mono_s();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *us, int n, const record_list_t *l)
{
    qsort(us, (size_t)n, sizeof(*us), cmp_double);
    printf("%s: median %.1f us, p90 %.1f us (%d requests; %zu rows, total %lld)\n", what,
           us[n / 2], us[n * 9 / 10], n, l->n, (long long)l->total);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DATABASE_URL USER WORD [N]\n", argv[0]);
        return 2;
    }
    /* the server's malloc settings (main.c): no heap trimmed after each request */
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
    int n = argc > 4 ? atoi(argv[4]) : 200;
    if (n < 1)
        n = 1;
    char err[256];
    store_t *s = store_open(argv[1], err, sizeof(err));
    if (s)
        store_sqlite_index_hold(s, true); /* before the index thread starts */
    store_conn_t *c = s ? store_conn(s, err, sizeof(err)) : NULL;
    int64_t uid = 0;
    double t0 = mono_s();
    if (!c || store_migrate(c) != STORE_OK || store_user_ensure(c, argv[2], &uid) != STORE_OK) {
        fprintf(stderr, "bench-search: cannot open %s: %s\n", argv[1], err);
        return 1;
    }
    printf("open and migrate: %.1f ms; not yet indexed: %lld\n", (mono_s() - t0) * 1000,
           (long long)store_sqlite_index_pending(c));
    const char *word = argv[3];
    size_t len = strlen(word), letters = 0;
    for (size_t i = 0; i < len; i++)
        letters += (word[i] >= 'a' && word[i] <= 'z') || (word[i] >= 'A' && word[i] <= 'Z');
    int variants = letters >= 5 ? 32 : 1 << letters;
    if (getenv("BENCH_SEARCH_VARIANTS") && atoi(getenv("BENCH_SEARCH_VARIANTS")) > 0 &&
        atoi(getenv("BENCH_SEARCH_VARIANTS")) < variants)
        variants = atoi(getenv("BENCH_SEARCH_VARIANTS"));
    use_cpu = getenv("BENCH_SEARCH_CPU") && atoi(getenv("BENCH_SEARCH_CPU"));
    bool by_result = getenv("BENCH_SEARCH_RESULT") && atoi(getenv("BENCH_SEARCH_RESULT"));
    int64_t pageno = getenv("BENCH_SEARCH_PAGE") ? atoll(getenv("BENCH_SEARCH_PAGE")) : 1;
    double *us = xmalloc((size_t)(n > variants ? n : variants) * sizeof(*us));
    char *v = xstrdup(word);
    record_list_t l = {0};
    arena_t a;
    arena_init(&a);
    for (int i = 0; i < variants; i++) {
        /* the i-th case variant: bit j flips the j-th letter */
        int bit = 0;
        for (size_t j = 0; j < len; j++) {
            bool letter = (word[j] >= 'a' && word[j] <= 'z') || (word[j] >= 'A' && word[j] <= 'Z');
            v[j] = letter && bit < 5 && (i >> bit++ & 1) ? (char)(word[j] ^ 0x20) : word[j];
        }
        list_query_t q = {.user_id = uid, .search = v, .search_result = by_result,
                          .favorite = -1, .per_page = 10, .page = pageno};
        double t = now_s();
        if (store_record_list(c, KIND_DOC, &q, &a, &l) != STORE_OK) {
            fprintf(stderr, "bench-search: the search failed\n");
            return 1;
        }
        us[i] = (now_s() - t) * 1e6;
        arena_free(&a);
    }
    report("uncached", us, variants, &l);
    for (int i = 0; i < n; i++) {
        list_query_t q = {.user_id = uid, .search = word, .search_result = by_result,
                          .favorite = -1, .per_page = 10, .page = pageno};
        double t = now_s();
        if (store_record_list(c, KIND_DOC, &q, &a, &l) != STORE_OK) {
            fprintf(stderr, "bench-search: the search failed\n");
            return 1;
        }
        us[i] = (now_s() - t) * 1e6;
        arena_free(&a);
    }
    report("cached", us, n, &l);
    arena_free(&a);
    free(v);
    free(us);
    store_close(s);
    return 0;
}
