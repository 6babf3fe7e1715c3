/* pg_copy.c — the PostgreSQL store's part of `inkwell migrate` (store_copy_int.h):
 * tables and columns from the catalog, rows read in single-row mode, written with COPY
 * FROM STDIN (PQputCopyData, text format) in one transaction. Writing, each table's
 * user triggers are off while its rows come (they come with what the triggers made:
 * counts, webhook events, tag links) and on again before the commit; the trigram (GIN)
 * indexes of the search are dropped first and built again after the rows (a build is
 * far faster than a million inserts into them); the search foldings (name_fold,
 * result_fold) are made here from the texts (pg_fold), as the store's writes make
 * them. Errors are logged by their primary message only: a detail may quote a row,
 * and rows hold key and password hashes. */
#include "store/pg_int.h"
#include "store/store_copy_int.h"

#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    arena_t a;
    const char **tables; /* whose triggers are off */
    size_t ntables, cap;
    const char **index_sql; /* the GIN indexes dropped, to build again */
    size_t nindex;
    copy_type_t *types;
    size_t n;
    int fold_from[4]; /* per *_fold column appended: the index of its column */
    int nfold;
    buf_t out; /* COPY data not yet sent */
    const char *table;
    bool copying;
} pg_writer_t;

static _Thread_local pg_writer_t W;

static int fail(pg_conn_t *c, PGresult *r, const char *what)
{
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    log_error("postgres: migrate: %s: %s (%s)", what,
              msg ? msg : PQerrorMessage(c->pg), state ? state : "-");
    PQclear(r);
    return STORE_ERROR;
}

/* sql with params run; *out the result (tuples) or NULL on failure. */
static int query(pg_conn_t *c, const char *sql, int n, const char *const *params,
                 PGresult **out, const char *what)
{
    PGresult *r = PQexecParams(c->pg, sql, n, NULL, params, NULL, NULL, 0);
    if (!r || (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK))
        return fail(c, r, what);
    if (out)
        *out = r;
    else
        PQclear(r);
    return STORE_OK;
}

static char *ident(pg_conn_t *c, const char *name, arena_t *a)
{
    char *q = PQescapeIdentifier(c->pg, name, strlen(name));
    char *s = arena_strdup(a, q ? q : "\"?\"");
    PQfreemem(q);
    return s;
}

static int cp_tables(store_conn_t *conn, arena_t *a, const char ***names, size_t *n)
{
    pg_conn_t *c = pg_cast(conn);
    PGresult *r;
    int rc = pg_ready(c);
    if (rc == STORE_OK)
        rc = query(c, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                   " ORDER BY 1", 0, NULL, &r, "tables");
    if (rc != STORE_OK)
        return rc;
    *n = (size_t)PQntuples(r);
    *names = arena_take(a, (*n ? *n : 1) * sizeof(**names));
    for (size_t i = 0; i < *n; i++)
        (*names)[i] = arena_strdup(a, PQgetvalue(r, (int)i, 0));
    PQclear(r);
    return STORE_OK;
}

static copy_type_t col_type(const char *t)
{
    if (!strcmp(t, "bigint") || !strcmp(t, "integer") || !strcmp(t, "smallint"))
        return COPY_INT;
    if (!strcmp(t, "double precision") || !strcmp(t, "real"))
        return COPY_REAL;
    if (!strcmp(t, "boolean"))
        return COPY_BOOL;
    if (!strcmp(t, "bytea"))
        return COPY_BLOB;
    return COPY_TEXT;
}

static int cp_columns(store_conn_t *conn, const char *table, arena_t *a, copy_col_t **cols,
                      size_t *n)
{
    pg_conn_t *c = pg_cast(conn);
    PGresult *r;
    const char *p[] = {table};
    int rc = query(c,
                   "SELECT column_name, data_type FROM information_schema.columns WHERE"
                   " table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                   1, p, &r, "columns");
    if (rc != STORE_OK)
        return rc;
    *n = (size_t)PQntuples(r);
    *cols = arena_take(a, (*n ? *n : 1) * sizeof(**cols));
    for (size_t i = 0; i < *n; i++) {
        (*cols)[i].name = arena_strdup(a, PQgetvalue(r, (int)i, 0));
        (*cols)[i].type = col_type(PQgetvalue(r, (int)i, 1));
    }
    PQclear(r);
    return STORE_OK;
}

static int one_i64(pg_conn_t *c, const char *sql, int n, const char *const *p, int64_t *v,
                   const char *what)
{
    PGresult *r;
    int rc = query(c, sql, n, p, &r, what);
    if (rc != STORE_OK)
        return rc;
    *v = PQntuples(r) && !PQgetisnull(r, 0, 0) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    PQclear(r);
    return STORE_OK;
}

static int cp_count(store_conn_t *conn, const char *table, int64_t *n)
{
    pg_conn_t *c = pg_cast(conn);
    arena_t a;
    arena_init(&a);
    char *sql = arena_printf(&a, "SELECT count(*) FROM %s", ident(c, table, &a));
    int rc = one_i64(c, sql, 0, NULL, n, "count");
    arena_free(&a);
    return rc;
}

static int cp_read(store_conn_t *conn, const char *table, const copy_col_t *cols, size_t n,
                   copy_row_fn fn, void *arg)
{
    pg_conn_t *c = pg_cast(conn);
    arena_t a;
    arena_init(&a);
    copy_type_t *types = store_copy_types(conn, table, cols, n, &a);
    if (!types) {
        arena_free(&a);
        return STORE_ERROR;
    }
    int rc = STORE_OK;
    buf_t q;
    buf_init(&q);
    buf_puts(&q, "SELECT ");
    for (size_t i = 0; i < n; i++)
        buf_printf(&q, "%s%s%s", i ? ", " : "", ident(c, cols[i].name, &a),
                   types[i] == COPY_BOOL ? "::int" : "");
    buf_printf(&q, " FROM %s", ident(c, table, &a));
    if (!PQsendQuery(c->pg, buf_cstr(&q)) || !PQsetSingleRowMode(c->pg)) {
        buf_free(&q);
        arena_free(&a);
        return fail(c, NULL, "read");
    }
    buf_free(&q);
    const char **vals = arena_take(&a, (n ? n : 1) * sizeof(*vals));
    size_t *lens = arena_take(&a, (n ? n : 1) * sizeof(*lens));
    char (*num)[32] = arena_take(&a, (n ? n : 1) * sizeof(*num));
    PGresult *r;
    bool stop = false;
    while ((r = PQgetResult(c->pg))) {
        ExecStatusType s = PQresultStatus(r);
        if (s == PGRES_SINGLE_TUPLE && !stop) {
            for (size_t i = 0; i < n; i++) {
                if (PQgetisnull(r, 0, (int)i)) {
                    vals[i] = NULL;
                    lens[i] = 0;
                    continue;
                }
                vals[i] = PQgetvalue(r, 0, (int)i);
                lens[i] = (size_t)PQgetlength(r, 0, (int)i);
                if (types[i] == COPY_REAL) {
                    lens[i] = (size_t)snprintf(num[i], sizeof(num[i]), COPY_REAL_FMT,
                                               strtod(vals[i], NULL));
                    vals[i] = num[i];
                }
            }
            if (fn(arg, vals, lens) != 0) {
                stop = true; /* the rest is read and dropped: the connection stays usable */
                rc = STORE_ERROR;
            }
        } else if (s != PGRES_SINGLE_TUPLE && s != PGRES_TUPLES_OK) {
            rc = fail(c, r, "read");
            r = NULL;
        }
        PQclear(r);
    }
    arena_free(&a);
    return rc;
}

static int cp_seq_get(store_conn_t *conn, const char *table, const char *idcol, int64_t *v)
{
    pg_conn_t *c = pg_cast(conn);
    PGresult *r;
    const char *p[] = {table, idcol};
    int rc = query(c, "SELECT pg_get_serial_sequence($1, $2)", 2, p, &r, "sequence");
    if (rc != STORE_OK)
        return rc;
    *v = 0;
    if (PQntuples(r) && !PQgetisnull(r, 0, 0)) {
        arena_t a;
        arena_init(&a);
        /* the sequence's name as pg_get_serial_sequence quotes it */
        char *sql = arena_printf(&a, "SELECT CASE WHEN is_called THEN last_value ELSE"
                                 " last_value - 1 END FROM %s", PQgetvalue(r, 0, 0));
        rc = one_i64(c, sql, 0, NULL, v, "sequence");
        arena_free(&a);
    }
    PQclear(r);
    return rc;
}

static int cp_seq_set(store_conn_t *conn, const char *table, const char *idcol, int64_t v)
{
    pg_conn_t *c = pg_cast(conn);
    char num[32];
    snprintf(num, sizeof(num), "%lld", (long long)v);
    const char *p[] = {table, idcol, num};
    return query(c, "SELECT setval(pg_get_serial_sequence($1, $2), $3::bigint)",
                 3, p, NULL, "set sequence");
}

static int cp_write_begin(store_conn_t *conn)
{
    pg_conn_t *c = pg_cast(conn);
    memset(&W, 0, sizeof(W));
    arena_init(&W.a);
    buf_init(&W.out);
    int rc = pg_ready(c);
    if (rc == STORE_OK)
        rc = query(c, "BEGIN", 0, NULL, NULL, "begin");
    if (rc == STORE_OK)
        rc = query(c, "SET LOCAL maintenance_work_mem = '256MB'", 0, NULL, NULL, "settings");
    /* the trigram indexes, built again after the rows */
    PGresult *r = NULL;
    if (rc == STORE_OK)
        rc = query(c,
                   "SELECT quote_ident(indexname), indexdef FROM pg_indexes WHERE schemaname ="
                   " current_schema() AND indexdef LIKE '% USING gin %'",
                   0, NULL, &r, "indexes");
    if (rc == STORE_OK) {
        W.nindex = (size_t)PQntuples(r);
        W.index_sql = arena_take(&W.a, (W.nindex ? W.nindex : 1) * sizeof(*W.index_sql));
        for (size_t i = 0; i < W.nindex && rc == STORE_OK; i++) {
            W.index_sql[i] = arena_strdup(&W.a, PQgetvalue(r, (int)i, 1));
            char *drop = arena_printf(&W.a, "DROP INDEX %s", PQgetvalue(r, (int)i, 0));
            rc = query(c, drop, 0, NULL, NULL, "drop index");
        }
        PQclear(r);
    }
    if (rc != STORE_OK) {
        pg_rollback(c);
        buf_free(&W.out);
        arena_free(&W.a);
    }
    return rc;
}

static int cp_table_begin(store_conn_t *conn, const char *table, const copy_col_t *cols,
                          size_t n)
{
    pg_conn_t *c = pg_cast(conn);
    copy_col_t *own;
    size_t nown;
    int rc = cp_columns(conn, table, &W.a, &own, &nown);
    if (rc != STORE_OK)
        return rc;
    W.table = arena_strdup(&W.a, table);
    W.n = n;
    W.types = store_copy_types(conn, table, cols, n, &W.a);
    if (!W.types)
        return STORE_ERROR;
    W.nfold = 0;
    const char *tid = ident(c, table, &W.a);
    buf_t q;
    buf_init(&q);
    buf_printf(&q, "COPY %s (", tid);
    for (size_t i = 0; i < n; i++)
        buf_printf(&q, "%s%s", i ? ", " : "", ident(c, cols[i].name, &W.a));
    /* the search foldings (API.md §15) of the texts they fold: <col>_fold */
    for (size_t j = 0; j < nown && W.nfold < (int)ARRAY_LEN(W.fold_from); j++) {
        size_t l = strlen(own[j].name);
        if (l <= 5 || strcmp(own[j].name + l - 5, "_fold"))
            continue;
        bool given = false;
        int from = -1;
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(cols[i].name, own[j].name))
                given = true;
            if (strlen(cols[i].name) == l - 5 && !strncmp(cols[i].name, own[j].name, l - 5))
                from = (int)i;
        }
        if (given || from < 0)
            continue;
        W.fold_from[W.nfold++] = from;
        buf_printf(&q, ", %s", ident(c, own[j].name, &W.a));
    }
    buf_puts(&q, ") FROM STDIN");
    if (W.ntables == W.cap) {
        W.cap = W.cap ? 2 * W.cap : 32;
        const char **t = arena_take(&W.a, W.cap * sizeof(*t));
        if (W.ntables)
            memcpy(t, W.tables, W.ntables * sizeof(*t));
        W.tables = t;
    }
    W.tables[W.ntables++] = tid;
    char *off = arena_printf(&W.a, "ALTER TABLE %s DISABLE TRIGGER USER", tid);
    rc = query(c, off, 0, NULL, NULL, "triggers off");
    if (rc == STORE_OK) {
        PGresult *r = PQexec(c->pg, buf_cstr(&q));
        if (!r || PQresultStatus(r) != PGRES_COPY_IN)
            rc = fail(c, r, "copy");
        else
            PQclear(r);
    }
    buf_free(&q);
    W.copying = rc == STORE_OK;
    buf_reset(&W.out);
    return rc;
}

/* One value in COPY's text format. */
static void put_text(buf_t *b, const char *s, size_t n)
{
    buf_reserve(b, n + 16);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        char e = 0;
        switch (s[i]) {
        case '\\': e = '\\'; break;
        case '\n': e = 'n'; break;
        case '\r': e = 'r'; break;
        case '\t': e = 't'; break;
        default: continue;
        }
        buf_append(b, s + from, i - from);
        buf_putc(b, '\\');
        buf_putc(b, e);
        from = i + 1;
    }
    buf_append(b, s + from, n - from);
}

static int flush(pg_conn_t *c)
{
    if (!W.out.len)
        return STORE_OK;
    if (PQputCopyData(c->pg, W.out.data, (int)W.out.len) != 1)
        return fail(c, NULL, "copy data");
    buf_reset(&W.out);
    return STORE_OK;
}

static int cp_row(store_conn_t *conn, const char *const *vals, const size_t *lens)
{
    buf_t *b = &W.out;
    for (size_t i = 0; i < W.n; i++) {
        if (i)
            buf_putc(b, '\t');
        if (!vals[i])
            buf_puts(b, "\\N");
        else if (W.types[i] == COPY_BLOB) {
            buf_puts(b, "\\\\x");
            for (size_t k = 0; k < lens[i]; k++)
                buf_printf(b, "%02x", (unsigned char)vals[i][k]);
        } else
            put_text(b, vals[i], lens[i]);
    }
    for (int f = 0; f < W.nfold; f++) {
        const char *v = vals[W.fold_from[f]];
        buf_putc(b, '\t');
        char *folded = v ? pg_fold(v) : NULL;
        if (folded)
            put_text(b, folded, strlen(folded));
        else
            buf_puts(b, "\\N");
        free(folded);
    }
    buf_putc(b, '\n');
    return b->len >= (1u << 20) ? flush(pg_cast(conn)) : STORE_OK;
}

static int cp_table_end(store_conn_t *conn)
{
    pg_conn_t *c = pg_cast(conn);
    if (!W.copying)
        return STORE_ERROR;
    W.copying = false;
    int rc = flush(c);
    if (PQputCopyEnd(c->pg, rc == STORE_OK ? NULL : "migrate failed") != 1)
        rc = fail(c, NULL, "copy end");
    PGresult *r;
    while ((r = PQgetResult(c->pg))) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            if (rc == STORE_OK)
                rc = fail(c, r, W.table);
            else
                PQclear(r);
        } else {
            PQclear(r);
        }
    }
    return rc;
}

static int cp_write_end(store_conn_t *conn, bool commit)
{
    pg_conn_t *c = pg_cast(conn);
    int rc = commit ? STORE_OK : STORE_ERROR;
    if (W.copying) {
        PQputCopyEnd(c->pg, "migrate failed");
        PGresult *r;
        while ((r = PQgetResult(c->pg)))
            PQclear(r);
        W.copying = false;
    }
    for (size_t i = 0; rc == STORE_OK && i < W.nindex; i++)
        rc = query(c, W.index_sql[i], 0, NULL, NULL, "build index");
    for (size_t i = 0; rc == STORE_OK && i < W.ntables; i++) {
        char *on = arena_printf(&W.a, "ALTER TABLE %s ENABLE TRIGGER USER", W.tables[i]);
        rc = query(c, on, 0, NULL, NULL, "triggers on");
    }
    if (rc == STORE_OK)
        rc = query(c, "COMMIT", 0, NULL, NULL, "commit");
    if (rc != STORE_OK)
        pg_rollback(c);
    /* statistics for the planner, of the tables as they now are */
    for (size_t i = 0; rc == STORE_OK && i < W.ntables; i++) {
        char *an = arena_printf(&W.a, "ANALYZE %s", W.tables[i]);
        query(c, an, 0, NULL, NULL, "analyze");
    }
    buf_free(&W.out);
    arena_free(&W.a);
    memset(&W, 0, sizeof(W));
    return commit ? rc : STORE_OK;
}

const store_copy_ops_t pg_copy_ops = STORE_COPY_OPS(cp);
