/* bench_seed.c — the scale benchmark's bulk path: adds documents of one user straight
 * through the store layer, as the API's waiting create with the builtin generator
 * stores them (store.docs_create_completed with builtin_text's text at creativity 0
 * and uni_count_words), in transactions of BATCH. The rows are those the API stores for
 * these inputs: name "<word> note <i>" ("<word> zebra note <i>" when i % 99991 == 7:
 * the rare word, in 1, 2 and 11 names at 10k, 100k and 1M), prompt "a short note on
 * <word> <i>", template i % 52 + 1, creativity 0 (the text then depends only on
 * template and prompt).
 *
 * Usage: bench-seed DATABASE_URL USER FROM TO [BATCH]
 *   adds documents i = FROM .. TO-1 (so a 10k database grows to 100k by 10000 100000);
 *   DATABASE_URL is a SQLite file or postgres://... as for `inkwell serve --database`.
 * Run it with the servers stopped (SQLite) or beside them (PostgreSQL). On SQLite it
 * ends by indexing what it added for search, as a server's index thread would
 * (unless BENCH_SEED_NO_INDEX is set: to measure searches over an unindexed tail). */
#include "gen/builtin.h"
#include "core/unicode.h"
#include "gen/templates.h"
#include "store/store.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static const char *const words[] = {"tea",  "coffee", "garden", "ocean", "city",
                                    "bike", "travel", "recipe", "music", "code"};

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s DATABASE_URL USER FROM TO [BATCH]\n", argv[0]);
        return 2;
    }
    long from = atol(argv[3]), to = atol(argv[4]), batch = argc > 5 ? atol(argv[5]) : 1000;
    if (from < 0 || to < from || batch < 1)
        return 2;
    char err[256];
    store_t *s = store_open(argv[1], err, sizeof(err));
    if (s && getenv("BENCH_SEED_NO_INDEX"))
        store_sqlite_index_hold(s, true); /* the whole tail left to the server */
    store_conn_t *c = s ? store_conn(s, err, sizeof(err)) : NULL;
    int64_t uid = 0;
    if (!c || store_migrate(c) != STORE_OK || store_user_ensure(c, argv[2], &uid) != STORE_OK) {
        fprintf(stderr, "bench-seed: cannot open %s: %s\n", argv[1], err);
        return 1;
    }
    record_t *recs = xmalloc((size_t)batch * sizeof(*recs));
    record_t **ptrs = xmalloc((size_t)batch * sizeof(*ptrs));
    char(*names)[64] = xmalloc((size_t)batch * sizeof(*names));
    char(*prompts)[96] = xmalloc((size_t)batch * sizeof(*prompts));
    buf_t *texts = xmalloc((size_t)batch * sizeof(*texts));
    for (long j = 0; j < batch; j++)
        buf_init(&texts[j]);
    double t0 = mono_s();
    for (long i = from; i < to;) {
        long n = 0;
        for (; n < batch && i < to; n++, i++) {
            const char *w = words[i % 10];
            snprintf(names[n], sizeof(names[n]), "%s%s note %ld", w,
                     i % 99991 == 7 ? " zebra" : "", i);
            snprintf(prompts[n], sizeof(prompts[n]), "a short note on %s %ld", w, i);
            int tpl = (int)(i % TEMPLATE_COUNT) + 1;
            buf_reset(&texts[n]);
            builtin_text(tpl, prompts[n], 0, 0, &texts[n]);
            recs[n] = (record_t){.kind = KIND_DOC, .user_id = uid, .name = names[n],
                                 .prompt = prompts[n], .creativity = 0, .template_id = tpl,
                                 .result = buf_cstr(&texts[n])};
            recs[n].words = uni_count_words(recs[n].result, strlen(recs[n].result));
            ptrs[n] = &recs[n];
        }
        int rc = store_docs_create_completed(c, ptrs, NULL, (size_t)n);
        if (rc != STORE_OK) {
            fprintf(stderr, "bench-seed: store failed at %ld: %s\n", i, store_rc_name(rc));
            return 1;
        }
    }
    fprintf(stderr, "bench-seed: %ld documents in %.1f s\n", to - from, mono_s() - t0);
    /* SQLite indexes new records for search after their commit (sqlite_index.c): the
     * bench measures an index that has caught up, as a server's is once it is idle */
    double t1 = mono_s();
    long indexed = 0;
    int n = 0;
    store_sqlite_index_hold(s, true);
    while (!getenv("BENCH_SEED_NO_INDEX") && (n = store_sqlite_index_now(c, 2000)) > 0)
        indexed += n;
    if (n < 0) {
        fprintf(stderr, "bench-seed: search index: %s\n", store_rc_name(n));
        return 1;
    }
    /* and compacted, as the thread does when the server is idle */
    while (!getenv("BENCH_SEED_NO_INDEX") && (n = store_sqlite_index_merge(c)) > 0)
        ;
    if (n < 0) {
        fprintf(stderr, "bench-seed: search index: %s\n", store_rc_name(n));
        return 1;
    }
    if (indexed)
        fprintf(stderr, "bench-seed: %ld indexed for search and compacted in %.1f s\n",
                indexed, mono_s() - t1);
    for (long j = 0; j < batch; j++)
        buf_free(&texts[j]);
    free(texts);
    free(prompts);
    free(names);
    free(ptrs);
    free(recs);
    store_close(s);
    return 0;
}
