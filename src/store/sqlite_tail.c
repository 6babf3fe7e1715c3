/* sqlite_tail.c — the SQLite store's index of the tail's names (tailnames.h): kept up to
 * date by the record inserts and renames (inside their transactions), rebuilt from the
 * records above the search index's watermark when the store starts, and asked by a name
 * search for the tail records that may match (sqlite_lists.c). Part of the SQLite
 * backend (sqlite.c). */
#include "store/sqlite_int.h"

#include <stdio.h>

/* A rebuild reads at most this many ids below the newest (the structure's own bound). */
#define REBUILD_MAX_IDS 262144
/* A search over the tail asks for at most this many candidates; more, and it scans. */
#define FIND_MAX 1024

static const char *const kind_table[2] = {"documents", "images"};

void sq_tail_added(sq_conn_t *c, const record_t *rec, int64_t id)
{
    tailnames_add(sq_tail(c->base.store, rec->kind), id, rec->user_id, rec->name, false);
}

void sq_tail_renamed(sq_conn_t *c, rec_kind_t kind, int64_t id)
{
    tailnames_changed(sq_tail(c->base.store, kind), id);
}

/* One kind, inside the caller's write transaction (no insert can run meanwhile). */
static int rebuild_kind(sq_conn_t *c, int kind)
{
    tailnames_t *t = sq_tail(c->base.store, kind == 1 ? KIND_IMG : KIND_DOC);
    char sql[200];
    snprintf(sql, sizeof(sql),
             "SELECT (SELECT upto FROM search_index WHERE kind = %d),"
             " coalesce((SELECT seq FROM sqlite_sequence WHERE name = '%s'), 0)",
             kind, kind_table[kind]);
    sqlite3_stmt *st = NULL;
    int rc = sq_prepare(c, sql, &st, "search tail");
    if (rc != STORE_OK)
        return rc;
    int src = sqlite3_step(st);
    int64_t upto = sqlite3_column_int64(st, 0), seq = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    if (src != SQLITE_ROW)
        return sq_error(c, src, "search tail");
    int64_t lo = seq - upto > REBUILD_MAX_IDS ? seq - REBUILD_MAX_IDS : upto;
    snprintf(sql, sizeof(sql), "SELECT id, user_id, name FROM %s WHERE id > ?1 ORDER BY id",
             kind_table[kind]);
    if ((rc = sq_prepare(c, sql, &st, "search tail")) != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, lo);
    tailnames_reset(t, lo);
    while ((src = sqlite3_step(st)) == SQLITE_ROW)
        tailnames_add(t, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                      (const char *)sqlite3_column_text(st, 2), true);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) {
        tailnames_off(t); /* covers nothing: searches scan */
        return sq_error(c, src, "search tail");
    }
    tailnames_cover(t, seq);
    return STORE_OK;
}

int sq_tail_rebuild(sq_conn_t *c)
{
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = rebuild_kind(c, 0);
    if (rc == STORE_OK)
        rc = rebuild_kind(c, 1);
    return sq_tx_end(c, rc);
}

/* The watermark of kind (in the caller's read transaction: its first read starts the
 * snapshot the tail's structure is then asked about). */
static int read_upto(sq_conn_t *c, int kind, int64_t *upto)
{
    if (!c->upto &&
        sq_prepare(c, "SELECT upto FROM search_index WHERE kind = ?1", &c->upto,
                   "record_list") != STORE_OK)
        return STORE_ERROR;
    sqlite3_bind_int(c->upto, 1, kind);
    int rc = sq_step_row(c, c->upto, "record_list");
    if (rc == STORE_OK) {
        *upto = sqlite3_column_int64(c->upto, 0);
        sq_stmt_done(c->upto);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

int sq_tail_query(sq_conn_t *c, int k, const list_query_t *q, const char *fold, arena_t *a,
                  sq_tail_query_t *out)
{
    int kind = (k & LQ_IMG) != 0;
    int rc = read_upto(c, kind, &out->upto);
    if (rc != STORE_OK)
        return rc;
    out->hi = out->upto; /* nothing from the structure: the whole tail scanned */
    out->cands = "[]";
    if (!(k & LQ_SEARCH_NAME))
        return STORE_OK; /* results are not in it */
    int64_t *ids = arena_alloc(a, FIND_MAX * sizeof(*ids)), lo, hi;
    size_t n = 0;
    if (!tailnames_find(sq_tail(c->base.store, kind ? KIND_IMG : KIND_DOC), out->upto,
                        q->user_id, fold, FIND_MAX, ids, &n, &lo, &hi) ||
        lo > out->upto || hi <= out->upto)
        return STORE_OK; /* it does not cover the tail from the watermark on: scanned */
    buf_t b;
    buf_init(&b);
    buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++)
        buf_printf(&b, "%s%lld", i ? "," : "", (long long)ids[i]);
    buf_putc(&b, ']');
    out->cands = arena_strdup(a, buf_cstr(&b));
    buf_free(&b);
    out->hi = hi;
    return STORE_OK;
}
