/* copy.c — `inkwell migrate` (store_copy.h): the one list of tables, and the copy of
 * each through the backends' copy ops (store_copy_int.h), counted and checksummed on
 * both sides.
 *
 * A table of either schema is in copy_tables (copied, in this order: a table comes
 * after the tables it refers to) or in skip_tables (with the reason); a column that
 * only one backend has is in one_sided (the backend that has it fills it). Anything
 * else stops the copy before it starts, and store_copy_check fails the tests: a table
 * added later cannot be forgotten. The columns copied are those both schemas have.
 *
 * Checksum: each row's values (a NULL marked apart from an empty text) hashed with
 * BLAKE2b, the per-row digests added up as two 64-bit lanes: independent of the order
 * the rows come in (each backend reads in its own order, and text keys sort
 * differently), with the count beside it. */
#include "store/store_copy.h"

#include "core/util.h"
#include "store/store_copy_int.h"
#include "store/store_int.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The copied tables. idcol: the column a sequence hands out (NULL when none). */
static const struct {
    const char *name, *idcol;
} copy_tables[] = {
    {"users", "id"},
    {"api_keys", "id"},
    {"sessions", "id"},
    {"templates", "id"},
    {"documents", "id"},
    {"images", "id"},
    {"document_revisions", NULL},
    {"image_revisions", NULL},
    {"drafts", NULL},
    {"tags", "id"},
    {"record_tags", NULL},
    {"record_counts", NULL},
    {"jobs", "id"},
    {"usage_months", NULL},
    {"idempotency_keys", NULL},
    {"webhooks", "id"},
    {"webhook_events", "id"},
    {"webhook_snap_docs", NULL}, /* an event's copy of its record, rendered at delivery */
    {"webhook_snap_imgs", NULL},
    {"webhook_deliveries", "id"},
    /* generations in flight: a hold bound to a queued record counts until its job is
     * done, and the queued jobs are copied (the unbound ones expire) */
    {"quota_holds", "id"},
};

/* The tables not copied, and why. */
static const struct {
    const char *name, *why;
} skip_tables[] = {
    {"schema_migrations", "the target's own: its schema is made by its migrations"},
    {"rate_tat", "rate-limit state, seconds long"},
    {"signin_failures", "failed sign-ins per minute, minutes long"},
    {"oidc_flows", "single sign-ons in flight, minutes long"},
    /* SQLite's search index: refilled by the index thread after the start (the
     * watermark of an empty database is 0; searches are exact meanwhile) */
    {"search_index", "SQLite search index watermark: rebuilt"},
    {"search_changed", "SQLite search index changes: rebuilt"},
    {"documents_name_fts", "SQLite search index: rebuilt"},
    {"documents_result_fts", "SQLite search index: rebuilt"},
    {"search_filters", "SQLite search index: rebuilt"},
    {"images_fts", "SQLite search index: rebuilt"},
};

/* Columns of one backend only, filled by that backend's writer. */
static const struct {
    const char *table, *column, *why;
} one_sided[] = {
    {"documents", "name_key", "SQLite name order key (ink_key)"},
    {"images", "name_key", "SQLite name order key (ink_key)"},
    {"documents", "name_fold", "PostgreSQL search folding"},
    {"documents", "result_fold", "PostgreSQL search folding"},
    {"images", "name_fold", "PostgreSQL search folding"},
    {"jobs", "partial", "PostgreSQL: a running job's text so far (none when stopped)"},
    {"jobs", "partial_seq", "PostgreSQL: a running job's text so far (none when stopped)"},
};

static const store_copy_ops_t *cops(store_conn_t *c)
{
    return c->ops->copy;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static bool is_copied(const char *t)
{
    for (size_t i = 0; i < ARRAY_LEN(copy_tables); i++)
        if (strcmp(copy_tables[i].name, t) == 0)
            return true;
    return false;
}

static bool is_skipped(const char *t)
{
    for (size_t i = 0; i < ARRAY_LEN(skip_tables); i++)
        if (strcmp(skip_tables[i].name, t) == 0)
            return true;
    return false;
}

static bool is_one_sided(const char *t, const char *col)
{
    for (size_t i = 0; i < ARRAY_LEN(one_sided); i++)
        if (strcmp(one_sided[i].table, t) == 0 && strcmp(one_sided[i].column, col) == 0)
            return true;
    return false;
}

static const copy_col_t *find_col(const copy_col_t *cols, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i].name, name) == 0)
            return &cols[i];
    return NULL;
}

copy_type_t *store_copy_types(store_conn_t *c, const char *table, const copy_col_t *cols,
                              size_t n, arena_t *a)
{
    copy_col_t *own;
    size_t nown;
    if (cops(c)->columns(c, table, a, &own, &nown) != STORE_OK)
        return NULL;
    copy_type_t *t = arena_take(a, (n ? n : 1) * sizeof(*t));
    for (size_t i = 0; i < n; i++) {
        const copy_col_t *o = find_col(own, nown, cols[i].name);
        t[i] = o ? o->type : COPY_TEXT;
    }
    return t;
}

int store_copy_check(store_conn_t *c, char *err, size_t errlen)
{
    if (!cops(c)) {
        fail(err, errlen, "the %s store cannot be migrated", c->ops->name);
        return -1;
    }
    arena_t a;
    arena_init(&a);
    const char **names;
    size_t n;
    int rc = -1;
    if (cops(c)->tables(c, &a, &names, &n) != STORE_OK) {
        fail(err, errlen, "cannot list the tables of the %s database", c->ops->name);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (is_copied(names[i]) && is_skipped(names[i])) {
            fail(err, errlen, "table %s is both copied and skipped by inkwell migrate "
                 "(src/store/copy.c)", names[i]);
            goto out;
        } else if (!is_copied(names[i]) && !is_skipped(names[i])) {
            fail(err, errlen,
                 "table %s of the %s schema is neither copied nor skipped by inkwell migrate "
                 "(src/store/copy.c)",
                 names[i], c->ops->name);
            goto out;
        }
    for (size_t t = 0; t < ARRAY_LEN(copy_tables); t++) {
        copy_col_t *cols;
        size_t nc;
        if (cops(c)->columns(c, copy_tables[t].name, &a, &cols, &nc) != STORE_OK || !nc) {
            fail(err, errlen, "table %s is missing from the %s database", copy_tables[t].name,
                 c->ops->name);
            goto out;
        }
    }
    rc = 0;
out:
    arena_free(&a);
    return rc;
}

/* ---- checksums ------------------------------------------------------------------------- */

typedef struct {
    int64_t rows;
    uint64_t sum[2];
} digest_t;

static void digest_row(digest_t *d, const char *const *vals, const size_t *lens, size_t n)
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    for (size_t i = 0; i < n; i++) {
        unsigned char head[9];
        uint64_t l = vals[i] ? (uint64_t)lens[i] : 0;
        head[0] = vals[i] ? 1 : 0;
        memcpy(head + 1, &l, 8);
        crypto_generichash_update(&st, head, sizeof(head));
        if (vals[i] && lens[i])
            crypto_generichash_update(&st, (const unsigned char *)vals[i], lens[i]);
    }
    unsigned char out[16];
    crypto_generichash_final(&st, out, sizeof(out));
    uint64_t x[2];
    memcpy(x, out, sizeof(x));
    d->sum[0] += x[0];
    d->sum[1] += x[1];
    d->rows++;
}

/* ---- the copy of one table ---------------------------------------------------------------- */

typedef struct {
    store_conn_t *to;
    size_t n;
    int idx;          /* the id column's index, or -1 */
    int64_t max_id;
    digest_t d;
    const char *table;
    int64_t total;
    FILE *progress;
    bool tty;
    double last;
    int64_t done_before, all; /* rows of the tables before, of every table */
    double started;
} pass_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show(pass_t *p, bool final)
{
    if (!p->progress)
        return;
    double t = now_s();
    if (!final && t - p->last < (p->tty ? 0.25 : 5.0))
        return;
    p->last = t;
    int64_t done = p->done_before + p->d.rows;
    double el = t - p->started;
    fprintf(p->progress, "%sinkwell: migrate: %s %" PRId64 "/%" PRId64 ", all %" PRId64 "/%" PRId64
            " rows (%d%%), %.0f rows/s%s",
            p->tty ? "\r\033[K" : "", p->table, p->d.rows, p->total, done, p->all,
            p->all ? (int)(100 * done / p->all) : 100, el > 0 ? (double)done / el : 0.0,
            p->tty && !final ? "" : "\n");
    fflush(p->progress);
}

static int copy_row(void *arg, const char *const *vals, const size_t *lens)
{
    pass_t *p = arg;
    digest_row(&p->d, vals, lens, p->n);
    if (p->idx >= 0 && vals[p->idx]) {
        int64_t id = strtoll(vals[p->idx], NULL, 10);
        if (id > p->max_id)
            p->max_id = id;
    }
    if (p->to && cops(p->to)->row(p->to, vals, lens) != STORE_OK)
        return STORE_ERROR;
    if ((p->d.rows & 1023) == 0)
        show(p, false);
    return 0;
}

static int sum_row(void *arg, const char *const *vals, const size_t *lens)
{
    pass_t *p = arg;
    digest_row(&p->d, vals, lens, p->n);
    return 0;
}

/* The columns both have, in the source's order; a column of one side only must be in
 * one_sided. */
static int common_cols(store_conn_t *from, store_conn_t *to, const char *table, arena_t *a,
                       copy_col_t **out, size_t *n, char *err, size_t errlen)
{
    copy_col_t *fc, *tc;
    size_t nf, nt;
    if (cops(from)->columns(from, table, a, &fc, &nf) != STORE_OK || !nf ||
        cops(to)->columns(to, table, a, &tc, &nt) != STORE_OK || !nt) {
        fail(err, errlen, "cannot read the columns of table %s", table);
        return -1;
    }
    *out = arena_take(a, nf * sizeof(**out));
    *n = 0;
    for (size_t i = 0; i < nf; i++) {
        const copy_col_t *t = find_col(tc, nt, fc[i].name);
        if (t) {
            (*out)[(*n)++] = fc[i];
        } else if (!is_one_sided(table, fc[i].name)) {
            fail(err, errlen, "column %s.%s of the %s database has no place in the %s one "
                 "(src/store/copy.c)", table, fc[i].name, from->ops->name, to->ops->name);
            return -1;
        }
    }
    for (size_t i = 0; i < nt; i++)
        if (!find_col(fc, nf, tc[i].name) && !is_one_sided(table, tc[i].name)) {
            fail(err, errlen, "column %s.%s of the %s database has no value in the %s one "
                 "(src/store/copy.c)", table, tc[i].name, to->ops->name, from->ops->name);
            return -1;
        }
    return 0;
}

int store_copy(store_conn_t *from, store_conn_t *to, FILE *progress, char *err, size_t errlen)
{
    if (store_copy_check(from, err, errlen) != 0 || store_copy_check(to, err, errlen) != 0)
        return -1;
    if (sodium_init() < 0) {
        fail(err, errlen, "libsodium cannot start");
        return -1;
    }
    enum { NT = ARRAY_LEN(copy_tables) };
    int64_t counts[NT];
    int64_t all = 0;
    for (size_t t = 0; t < NT; t++) {
        int64_t have = 0;
        if (cops(to)->count(to, copy_tables[t].name, &have) != STORE_OK) {
            fail(err, errlen, "cannot count the rows of %s in the target", copy_tables[t].name);
            return -1;
        }
        if (have) {
            fail(err, errlen, "the target database is not empty (%s has %" PRId64 " rows): "
                 "inkwell migrate copies into an empty database only", copy_tables[t].name, have);
            return -1;
        }
        if (cops(from)->count(from, copy_tables[t].name, &counts[t]) != STORE_OK) {
            fail(err, errlen, "cannot count the rows of %s in the source", copy_tables[t].name);
            return -1;
        }
        all += counts[t];
    }
    arena_t a;
    arena_init(&a);
    copy_col_t *cols[NT];
    size_t ncols[NT];
    for (size_t t = 0; t < NT; t++)
        if (common_cols(from, to, copy_tables[t].name, &a, &cols[t], &ncols[t], err, errlen)) {
            arena_free(&a);
            return -1;
        }
    digest_t src[NT];
    int64_t max_id[NT];
    int rc = -1;
    if (cops(to)->write_begin(to) != STORE_OK) {
        fail(err, errlen, "cannot begin writing the target database");
        arena_free(&a);
        return -1;
    }
    pass_t p = {.progress = progress, .tty = progress && isatty(fileno(progress)),
                .all = all, .started = now_s()};
    for (size_t t = 0; t < NT; t++) {
        const char *name = copy_tables[t].name;
        p.to = to;
        p.n = ncols[t];
        p.idx = -1;
        p.max_id = 0;
        p.d = (digest_t){0};
        p.table = name;
        p.total = counts[t];
        for (size_t i = 0; copy_tables[t].idcol && i < ncols[t]; i++)
            if (strcmp(cols[t][i].name, copy_tables[t].idcol) == 0)
                p.idx = (int)i;
        if (cops(to)->table_begin(to, name, cols[t], ncols[t]) != STORE_OK ||
            cops(from)->read(from, name, cols[t], ncols[t], copy_row, &p) != STORE_OK ||
            cops(to)->table_end(to) != STORE_OK) {
            fail(err, errlen, "copying table %s failed (see the log above)", name);
            goto out;
        }
        show(&p, true);
        src[t] = p.d;
        max_id[t] = p.max_id;
        p.done_before += p.d.rows;
    }
    /* sequences: past the highest id copied, or where the source's was */
    for (size_t t = 0; t < NT; t++) {
        const char *idcol = copy_tables[t].idcol;
        if (!idcol)
            continue;
        int64_t seq = 0;
        if (cops(from)->seq_get(from, copy_tables[t].name, idcol, &seq) != STORE_OK) {
            fail(err, errlen, "cannot read the id sequence of %s", copy_tables[t].name);
            goto out;
        }
        if (max_id[t] > seq)
            seq = max_id[t];
        if (seq > 0 && cops(to)->seq_set(to, copy_tables[t].name, idcol, seq) != STORE_OK) {
            fail(err, errlen, "cannot set the id sequence of %s", copy_tables[t].name);
            goto out;
        }
    }
    double copied = now_s();
    if (progress)
        fprintf(progress, "inkwell: migrate: copied in %.1f s; reading every table back\n",
                copied - p.started);
    /* verification: the target's rows read back, in the transaction, before the commit */
    for (size_t t = 0; t < NT; t++) {
        pass_t v = {.n = ncols[t]};
        if (cops(to)->read(to, copy_tables[t].name, cols[t], ncols[t], sum_row, &v) !=
            STORE_OK) {
            fail(err, errlen, "cannot read table %s back from the target", copy_tables[t].name);
            goto out;
        }
        if (v.d.rows != src[t].rows || v.d.rows != counts[t] ||
            v.d.sum[0] != src[t].sum[0] || v.d.sum[1] != src[t].sum[1]) {
            fail(err, errlen, "table %s differs after the copy (%" PRId64 " rows read, %"
                 PRId64 " written, %" PRId64 " counted): nothing was kept",
                 copy_tables[t].name, src[t].rows, v.d.rows, counts[t]);
            goto out;
        }
        if (progress)
            fprintf(progress, "inkwell: migrate: %-20s %10" PRId64 " rows, checksum %016" PRIx64
                    "%016" PRIx64 " verified\n", copy_tables[t].name, v.d.rows, v.d.sum[0],
                    v.d.sum[1]);
    }
    rc = 0;
    if (progress)
        fprintf(progress, "inkwell: migrate: verified in %.1f s; committing (indexes built)\n",
                now_s() - copied);
out:
    if (cops(to)->write_end(to, rc == 0) != STORE_OK && rc == 0) {
        fail(err, errlen, "cannot commit the target database");
        rc = -1;
    }
    if (rc == 0 && progress)
        fprintf(progress, "inkwell: migrate: done, %" PRId64 " rows in %.1f s\n", all,
                now_s() - p.started);
    arena_free(&a);
    return rc;
}
