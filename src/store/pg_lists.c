/* pg_lists.c — the PostgreSQL store's record lists: the list SQL assembled from fixed
 * fragments by list key (store_int.h), prepared once per connection, deep pages by
 * keyset seeks past page boundaries (lists.c), and totals; and the folded columns that
 * searches read (API.md §15: name_fold, result_fold, written with the records, filled
 * for older records by migration PG_MIG_UNICODE). */
#include "store/pg_int.h"

#include "core/unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The name order of API.md §15: PostgreSQL's ICU root collation, which orders as
 * core/unicode.c's keys do (the same ICU; names it holds equal by their bytes). */
#define NAME_ORDER "name COLLATE \"und-x-icu\""

char *pg_fold(const char *s)
{
    return s ? uni_fold(s, strlen(s), NULL) : NULL;
}

/* ---- lists ----------------------------------------------------------------------- */

/* The WHERE clause of key k; parameters are numbered from $1 (user_id) in the order
 * list_run() fills them. Without search, the search's parameter keeps its number. */
/* Whether key k asks the trigram index for the rare pieces of its search ($3, $4;
 * pg_trgm.c): an indexed search but for the window's statement. */
static bool has_pieces(unsigned k)
{
    return (k & LQ_INDEXED) && !(k & LQ_WINDOW);
}

static void list_where(buf_t *b, unsigned k, bool search)
{
    int n = 1;
    const char *col = k & LQ_SEARCH_RESULT ? "result_fold" : "name_fold";
    buf_puts(b, " WHERE user_id = $1");
    if (k & LQ_SEARCH)
        ++n;
    if ((k & LQ_SEARCH) && search)
        /* the folded column holds the folded search (the pattern of the search folded
         * the same way). The index on the column (migration 9) gets the pieces, which
         * PostgreSQL re-checks for every candidate; the whole search is checked after
         * them in a spelling the index cannot serve (so that it does not read the
         * posting lists of the search's common trigrams), as is a short search (a GIN
         * scan of every entry). */
        buf_printf(b, " AND (%s || '') LIKE $2 ESCAPE '\\'", col);
    if (has_pieces(k)) {
        buf_printf(b, " AND %s LIKE $3 ESCAPE '\\' AND %s LIKE $4 ESCAPE '\\'", col, col);
        n += 2;
    }
    if (k & LQ_FILTER)
        buf_printf(b, k & LQ_IMG ? " AND resolution = $%d::text" : " AND template_id = $%d::int",
                   ++n);
    if (k & LQ_STYLE)
        buf_printf(b, " AND style = $%d::text", ++n);
    if (k & LQ_FAVORITE)
        buf_printf(b, " AND favorite = $%d::boolean", ++n);
    /* the tag's records of the kind, from record_tags' primary key (migration 17) */
    if (k & LQ_TAG)
        buf_printf(b, " AND id IN (SELECT record_id FROM record_tags WHERE tag_id ="
                      " (SELECT id FROM tags WHERE user_id = $1 AND fold = $%d::text)"
                      " AND kind = %d)", ++n, k & LQ_IMG ? 1 : 0);
    /* LQ_SEEK: after the boundary's key (its parameters follow limit and offset) */
    const char *op = k & LQ_ASC ? ">" : "<";
    if ((k & LQ_SEEK) && (k & LQ_BY_NAME))
        buf_printf(b, " AND (" NAME_ORDER ", id) %s ($%d::text COLLATE \"und-x-icu\", $%d::bigint)",
                   op, n + 3, n + 4);
    else if (k & LQ_SEEK)
        buf_printf(b, " AND id %s $%d::bigint", op, n + 3);
}

/* Number of parameters of the WHERE clause of key k. */
static int list_where_nparams(unsigned k)
{
    return 1 + !!(k & LQ_SEARCH) + 2 * has_pieces(k) + !!(k & LQ_FILTER) + !!(k & LQ_STYLE) +
           !!(k & LQ_FAVORITE) + !!(k & LQ_TAG);
}

/* How many rows of the order an indexed search looks through first (see
 * pg_record_list), for pages ending this early in the order. */
#define WINDOW_ROWS 1000
#define WINDOW_MAX_END 100

/* Builds the SQL of key k from fixed fragments only. Every statement also returns, as
 * its last two columns and from the same snapshot, the user's record count and
 * version; LQ_COUNT adds the count of the key's rows before them.
 *
 * An indexed search (LQ_INDEXED) gets its candidates from the trigram index in a
 * materialized CTE, so the planner cannot trade the index for a walk down the id or
 * name order that hopes to meet the page's rows early (with a LIMIT, a rare word would
 * walk every row). LQ_WINDOW is that hope made bounded: the page among the first
 * WINDOW_ROWS rows of the order only. */
static char *list_sql(unsigned k)
{
    const char *table = k & LQ_IMG ? "images" : "documents";
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    buf_t where, b;
    buf_init(&where);
    buf_init(&b);
    list_where(&where, k, !(k & LQ_WINDOW));
    char counts[160], order[96];
    snprintf(counts, sizeof(counts),
             "(SELECT n FROM record_counts WHERE user_id = $1 AND kind = %d), "
             "(SELECT version FROM record_counts WHERE user_id = $1 AND kind = %d)",
             k & LQ_IMG ? 1 : 0, k & LQ_IMG ? 1 : 0);
    if (k & LQ_BY_NAME)
        snprintf(order, sizeof(order), NAME_ORDER " %s, id %s", dir, dir);
    else
        snprintf(order, sizeof(order), "id %s", dir);
    int n = list_where_nparams(k);
    const char *cols = k & LQ_IMG ? IMG_COLS : DOC_COLS;
    if (k & LQ_COUNT)
        buf_printf(&b, "SELECT (SELECT count(*) FROM %s%s), %s", table, buf_cstr(&where), counts);
    else if (k & LQ_WINDOW)
        buf_printf(&b, "SELECT %s, %s FROM (SELECT * FROM %s%s ORDER BY %s LIMIT %d) w"
                       " WHERE %s LIKE $2 ESCAPE '\\'"
                       " ORDER BY %s LIMIT $%d OFFSET $%d",
                   cols, counts, table, buf_cstr(&where), order, WINDOW_ROWS,
                   k & LQ_SEARCH_RESULT ? "result_fold" : "name_fold", order, n + 1, n + 2);
    else if (k & LQ_INDEXED)
        buf_printf(&b, "WITH m AS MATERIALIZED (SELECT id FROM %s%s)"
                       " SELECT %s, %s FROM m JOIN %s USING (id) ORDER BY %s"
                       " LIMIT $%d OFFSET $%d",
                   table, buf_cstr(&where), cols, counts, table, order, n + 1, n + 2);
    else if (k & LQ_BOUNDS)
        /* every STORE_PAGE_EVERY-th key of the order, counted by the server */
        buf_printf(&b, "SELECT id, %s, %s FROM (SELECT id%s, row_number() OVER (ORDER BY %s)"
                       " AS rn FROM %s%s ORDER BY %s LIMIT $%d OFFSET $%d) s"
                       " WHERE rn %% %d = 0 ORDER BY rn",
                   k & LQ_BY_NAME ? "name" : "NULL", counts, k & LQ_BY_NAME ? ", name" : "",
                   order, table, buf_cstr(&where), order, n + 1, n + 2, STORE_PAGE_EVERY);
    else
        /* the rows skipped by the offset come from the order's index alone (an
         * index-only scan once vacuumed): only the page's rows are read whole */
        buf_printf(&b, "SELECT %s, %s FROM %s WHERE id IN (SELECT id FROM %s%s ORDER BY %s"
                       " LIMIT $%d OFFSET $%d) ORDER BY %s",
                   cols, counts, table, table, buf_cstr(&where), order, n + 1, n + 2, order);
    buf_free(&where);
    return buf_steal(&b);
}

/* Runs list statement k with the parameters of q (+ limit/offset for pages). */
static int list_run(pg_conn_t *c, unsigned k, const list_query_t *q, const char *limit,
                    const char *offset, const store_page_key_t *seek, arena_t *a,
                    PGresult **out)
{
    const char *p[16];
    pg_num_t sid = pg_num_i64(seek ? seek->id : 0);
    int n = 0;
    pg_num_t uid = pg_num_i64(q->user_id), tpl = pg_num_i64(q->template_id);
    p[n++] = uid.s;
    const char *fold = NULL;
    if (k & LQ_SEARCH) {
        char *f = pg_fold(q->search);
        fold = f ? arena_strdup(a, f) : q->search;
        free(f);
        p[n++] = store_like_pattern(fold, false, a);
    }
    if (has_pieces(k)) {
        int col = k & LQ_IMG ? PG_TRGM_IMG_NAME
                  : k & LQ_SEARCH_RESULT ? PG_TRGM_DOC_RESULT : PG_TRGM_DOC_NAME;
        pg_trgm_pieces(c, col, fold, p[n - 1], a, &p[n]);
        n += 2;
    }
    if (k & LQ_FILTER)
        p[n++] = k & LQ_IMG ? q->resolution : tpl.s;
    if (k & LQ_STYLE)
        p[n++] = q->style;
    if (k & LQ_FAVORITE)
        p[n++] = q->favorite ? "t" : "f";
    if (k & LQ_TAG)
        p[n++] = q->tag;
    if (!(k & LQ_COUNT)) {
        p[n++] = limit;
        p[n++] = offset;
    }
    if ((k & LQ_SEEK) && (k & LQ_BY_NAME))
        p[n++] = seek->name;
    if (k & LQ_SEEK)
        p[n++] = sid.s;
    char name[32];
    snprintf(name, sizeof(name), "ink_list_%04x", k);
    char *sql = c->list_prepared[k] ? NULL : list_sql(k);
    int rc = pg_run_named(c, name, sql, n, &c->list_prepared[k], p, out);
    free(sql);
    return rc;
}

/* The total of key k when the page does not tell it: the user's record count for an
 * unfiltered list; else the totals cache at the version read with the page, or a
 * count (which reads its own version in its own snapshot). */
static int list_total(pg_conn_t *c, unsigned k, const list_query_t *q, int64_t n,
                      int64_t version, arena_t *a, int64_t *total)
{
    store_counts_t *cc = store_counts(c->base.store);
    if (!(k & LQ_FILTERED) || n == 0) {
        *total = n;
        return STORE_OK;
    }
    if (store_counts_get(cc, k, q, version, total))
        return STORE_OK;
    PGresult *r;
    k = (k & ~(unsigned)(LQ_BY_NAME | LQ_ASC)) | LQ_COUNT;
    int rc = list_run(c, k, q, NULL, NULL, NULL, a, &r);
    if (rc != STORE_OK)
        return rc;
    *total = pg_col_i64(r, 0, 0);
    store_counts_put(cc, k, q, pg_col_i64(r, 0, 2), *total);
    PQclear(r);
    return STORE_OK;
}

/* Walks the order from boundary block m (0: its start; key) for the boundaries up to
 * block j (lists.c), counted by the server from the order's index. Sets *version to
 * that of the walk's snapshot and returns the deepest block reached (m when none). */
static int list_walk(pg_conn_t *c, unsigned k, const list_query_t *q, int64_t m, int64_t j,
                     arena_t *a, store_page_key_t *key, int64_t *version, int64_t *reached)
{
    pg_num_t lim = pg_num_i64((j - m) * STORE_PAGE_EVERY);
    unsigned bk = k | LQ_BOUNDS | (m > 0 ? LQ_SEEK : 0);
    PGresult *r;
    int rc = list_run(c, bk, q, lim.s, "0", m > 0 ? key : NULL, a, &r);
    if (rc != STORE_OK)
        return rc;
    int nk = PQntuples(r);
    *reached = m;
    if (nk > 0) {
        store_page_key_t *keys = arena_alloc(a, (size_t)nk * sizeof(*keys));
        for (int i = 0; i < nk; i++)
            keys[i] = (store_page_key_t){.id = pg_col_i64(r, i, 0),
                                         .name = k & LQ_BY_NAME ? pg_col_str(r, i, 1, a) : NULL};
        *version = pg_col_i64(r, 0, 3);
        store_pages_put(store_pages(c->base.store), k, q, *version, m, keys, (size_t)nk);
        *reached = m + nk;
        *key = keys[nk - 1];
    }
    PQclear(r);
    return STORE_OK;
}

/* The page at offset of an unsearched list by a keyset seek past the nearest page
 * boundary (lists.c) and an OFFSET under STORE_PAGE_EVERY. Each statement is its own
 * snapshot, so the page's rows must carry the version the boundary was found at
 * (else the boundaries are walked again, a few times at most). *out stays NULL when
 * the seek cannot tell (a page past the end, or the user's records keep changing):
 * the caller then reads the page by OFFSET. */
static int list_seek(pg_conn_t *c, unsigned k, const list_query_t *q, const char *lim,
                     int64_t offset, arena_t *a, PGresult **out)
{
    int64_t j = offset / STORE_PAGE_EVERY;
    *out = NULL;
    for (int attempt = 0; attempt < 3; attempt++) {
        store_page_key_t key = {0};
        int64_t version = -1, m = 0, reached;
        if (attempt == 0)
            m = store_pages_get(store_pages(c->base.store), k, q, j, a, &key, &version);
        int64_t known = version;
        int rc;
        if (m < j && (rc = list_walk(c, k, q, m, j, a, &key, &version, &reached)) != STORE_OK)
            return rc;
        if (m > 0 && version != known)
            continue; /* walked from a boundary of another version: again from the start */
        if (m < j)
            m = reached;
        if (m == 0)
            return STORE_OK;
        pg_num_t off = pg_num_i64(offset - m * STORE_PAGE_EVERY);
        PGresult *r;
        if ((rc = list_run(c, k | LQ_SEEK, q, lim, off.s, &key, a, &r)) != STORE_OK)
            return rc;
        if (PQntuples(r) > 0 && pg_col_i64(r, 0, REC_NCOLS + 1) == version) {
            *out = r;
            return STORE_OK;
        }
        bool empty = PQntuples(r) == 0;
        PQclear(r);
        if (empty)
            return STORE_OK;
    }
    return STORE_OK;
}

int pg_record_list(store_conn_t *sc, rec_kind_t kind, const list_query_t *q, arena_t *a,
                   record_list_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t per_page = q->per_page > 0 ? q->per_page : 10;
    int64_t page = q->page > 0 ? q->page : 1;
    int64_t offset = page - 1 > INT64_MAX / per_page ? INT64_MAX : (page - 1) * per_page;
    pg_num_t lim = pg_num_i64(per_page), off = pg_num_i64(offset);
    unsigned k = store_list_key(kind, q);
    PGresult *r = NULL;
    size_t rows = 0;
    if ((k & LQ_INDEXED) && offset + per_page <= WINDOW_MAX_END) {
        /* a common word fills its page among the first rows of the order */
        if ((rc = list_run(c, k | LQ_WINDOW, q, lim.s, off.s, NULL, a, &r)) != STORE_OK)
            return rc;
        rows = (size_t)PQntuples(r);
        if (rows < (size_t)per_page) {
            PQclear(r);
            r = NULL;
        }
    }
    if (!r && !(k & LQ_SEARCH) && offset >= STORE_PAGE_EVERY) {
        if ((rc = list_seek(c, k, q, lim.s, offset, a, &r)) != STORE_OK)
            return rc;
        rows = r ? (size_t)PQntuples(r) : 0;
    }
    if (!r) {
        if ((rc = list_run(c, k, q, lim.s, off.s, NULL, a, &r)) != STORE_OK)
            return rc;
        rows = (size_t)PQntuples(r);
    }
    record_t *items = arena_alloc(a, (rows ? rows : 1) * sizeof(*items));
    for (size_t i = 0; i < rows; i++) {
        if (q->probe) {
            /* id and updated_us first: a held version needs nothing else */
            items[i] = (record_t){.kind = kind, .id = pg_col_i64(r, (int)i, 0),
                                  .updated_us = pg_col_i64(r, (int)i, 7)};
            if (q->probe(q->probe_arg, kind, items[i].id, items[i].updated_us)) {
                items[i].probed = true;
                continue;
            }
        }
        pg_row_record(r, (int)i, kind, a, &items[i]);
    }
    int64_t total = 0;
    if (rows > 0 && rows < (size_t)per_page) {
        total = offset + (int64_t)rows; /* the last page tells the total */
    } else if (rows > 0) {
        rc = list_total(c, k, q, pg_col_i64(r, 0, REC_NCOLS), pg_col_i64(r, 0, REC_NCOLS + 1), a,
                        &total);
    } else if (offset > 0) {
        /* a page past the end: the total still counts */
        PQclear(r);
        r = NULL;
        unsigned ck = (k & ~(unsigned)(LQ_BY_NAME | LQ_ASC)) | LQ_COUNT;
        if ((rc = list_run(c, ck, q, NULL, NULL, NULL, a, &r)) == STORE_OK)
            total = pg_col_i64(r, 0, 0);
    }
    PQclear(r);
    if (rc != STORE_OK)
        return rc;
    out->items = items;
    out->n = rows;
    out->total = total;
    return STORE_OK;
}

/* ---- migration PG_MIG_UNICODE: the folded columns of older records ----------------- */

#define FOLD_BATCH 500

/* s as an element of a PostgreSQL array literal ("..." with \ and " escaped), or NULL. */
static void array_elem(buf_t *b, const char *s)
{
    if (!s) {
        buf_puts(b, "NULL");
        return;
    }
    buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            buf_puts(b, "\\");
        buf_printf(b, "%c", *s);
    }
    buf_puts(b, "\"");
}

/* Runs sql (unnamed, prepared each time) with params; *out as pg_run_named's. */
static int run_unnamed(pg_conn_t *c, const char *sql, int n, const char *const *p,
                       PGresult **out)
{
    bool prepared = false;
    return pg_run_named(c, "", sql, n, &prepared, p, out);
}

/* Folds the name (and result) of every record of table, FOLD_BATCH rows at a time in
 * id order: one SELECT and one UPDATE (from arrays) per batch. */
static int fold_table(pg_conn_t *c, const char *table, bool result)
{
    char sel[160], upd[320];
    snprintf(sel, sizeof(sel), "SELECT id, name, %s FROM %s WHERE id > $1 ORDER BY id LIMIT %d",
             result ? "result" : "NULL::text", table, FOLD_BATCH);
    snprintf(upd, sizeof(upd),
             "UPDATE %s t SET name_fold = u.nf, result_fold = u.rf FROM unnest($1::bigint[],"
             " $2::text[], $3::text[]) AS u(id, nf, rf) WHERE t.id = u.id",
             table);
    if (!result) /* images have no result */
        snprintf(upd, sizeof(upd),
                 "UPDATE %s t SET name_fold = u.nf FROM unnest($1::bigint[], $2::text[],"
                 " $3::text[]) AS u(id, nf, rf) WHERE t.id = u.id",
                 table);
    int64_t last = 0;
    for (;;) {
        pg_num_t from = pg_num_i64(last);
        const char *p[3] = {from.s};
        PGresult *r;
        int rc = run_unnamed(c, sel, 1, p, &r);
        if (rc != STORE_OK)
            return rc;
        int rows = PQntuples(r);
        if (rows == 0) {
            PQclear(r);
            return STORE_OK;
        }
        buf_t ids, nf, rf;
        buf_init(&ids);
        buf_init(&nf);
        buf_init(&rf);
        for (int i = 0; i < rows; i++) {
            const char *sep = i ? "," : "{";
            buf_printf(&ids, "%s%s", sep, PQgetvalue(r, i, 0));
            char *fn = pg_fold(PQgetvalue(r, i, 1));
            char *fr = PQgetisnull(r, i, 2) ? NULL : pg_fold(PQgetvalue(r, i, 2));
            buf_puts(&nf, sep);
            array_elem(&nf, fn);
            buf_puts(&rf, sep);
            array_elem(&rf, fr);
            free(fn);
            free(fr);
        }
        last = pg_col_i64(r, rows - 1, 0);
        PQclear(r);
        buf_puts(&ids, "}");
        buf_puts(&nf, "}");
        buf_puts(&rf, "}");
        const char *up[3] = {buf_cstr(&ids), buf_cstr(&nf), buf_cstr(&rf)};
        rc = run_unnamed(c, upd, 3, up, &r);
        if (rc == STORE_OK)
            PQclear(r);
        buf_free(&ids);
        buf_free(&nf);
        buf_free(&rf);
        if (rc != STORE_OK)
            return rc;
    }
}

int pg_unicode_migrate(pg_conn_t *c)
{
    int rc = fold_table(c, "documents", true);
    if (rc == STORE_OK)
        rc = fold_table(c, "images", false);
    if (rc != STORE_OK)
        return rc;
    /* the indexes after the fill: built once instead of updated row by row */
    return pg_command(
        c,
        "CREATE INDEX documents_user_name ON documents (user_id, name COLLATE \"und-x-icu\", id);"
        "CREATE INDEX images_user_name ON images (user_id, name COLLATE \"und-x-icu\", id);"
        "CREATE INDEX documents_name_trgm ON documents USING gin (name_fold gin_trgm_ops);"
        "CREATE INDEX documents_result_trgm ON documents USING gin (result_fold gin_trgm_ops);"
        "CREATE INDEX images_name_trgm ON images USING gin (name_fold gin_trgm_ops);"
        "DO $$ BEGIN IF current_setting('server_version_num')::int >= 140000 THEN"
        "  EXECUTE 'CREATE STATISTICS documents_name_trgm_freq"
        "    ON (show_trgm(name_fold)) FROM documents';"
        "  EXECUTE 'CREATE STATISTICS documents_result_trgm_freq"
        "    ON (show_trgm(result_fold)) FROM documents';"
        "  EXECUTE 'CREATE STATISTICS images_name_trgm_freq"
        "    ON (show_trgm(name_fold)) FROM images';"
        "END IF; END $$;"
        "ANALYZE documents; ANALYZE images;",
        "migration 9 indexes");
}
