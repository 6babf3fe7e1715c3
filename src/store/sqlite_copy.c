/* sqlite_copy.c — the SQLite store's part of `inkwell migrate` (store_copy_int.h):
 * tables and columns from the schema's pragmas, rows read with one prepared SELECT and
 * written with one prepared INSERT per table, all in one BEGIN IMMEDIATE transaction.
 * Writing, every trigger is dropped first (the rows come with what the triggers made:
 * counts, webhook events, tag links) and made again with its own SQL before the commit;
 * the name order key (name_key) is made by the INSERT (ink_key); the search index is
 * left empty at watermark 0, which the index thread refills after the start. */
#include "store/sqlite_int.h"
#include "store/store_copy_int.h"

#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The writer's state (one migration per thread). */
typedef struct {
    arena_t a;
    const char **trig_sql; /* the triggers dropped by write_begin, to make again */
    size_t ntrig;
    sqlite3_stmt *ins;      /* the current table's INSERT */
    copy_type_t *types;     /* its parameters' types (the target's) */
    copy_type_t *src_types; /* the source's, for a column of no type */
    size_t n;
    const char *table;
} sq_writer_t;

static _Thread_local sq_writer_t W;

static copy_type_t col_type(const char *decl)
{
    if (!decl || !*decl)
        return COPY_UNTYPED;
    if (!strcasecmp(decl, "INTEGER") || !strcasecmp(decl, "INT"))
        return COPY_INT;
    if (!strcasecmp(decl, "REAL"))
        return COPY_REAL;
    if (!strcasecmp(decl, "ANY"))
        return COPY_PACKED; /* the texts stored packed (migration 20) */
    if (!strcasecmp(decl, "BLOB"))
        return COPY_BLOB;
    return COPY_TEXT;
}

static int cp_tables(store_conn_t *conn, arena_t *a, const char ***names, size_t *n)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = sq_prepare(c,
                        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND"
                        " type IN ('table', 'virtual') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                        " ORDER BY name",
                        &st, "migrate tables");
    if (rc != STORE_OK)
        return rc;
    size_t cap = 64;
    *names = arena_take(a, cap * sizeof(**names));
    *n = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && *n < cap)
        (*names)[(*n)++] = sq_col_text(st, 0, a);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "migrate tables");
}

static int cp_columns(store_conn_t *conn, const char *table, arena_t *a, copy_col_t **cols,
                      size_t *n)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = sq_prepare(c, "SELECT name, type FROM pragma_table_info(?1) ORDER BY cid", &st,
                        "migrate columns");
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    size_t cap = 64;
    *cols = arena_take(a, cap * sizeof(**cols));
    *n = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && *n < cap) {
        (*cols)[*n].name = sq_col_text(st, 0, a);
        (*cols)[*n].type = col_type((const char *)sqlite3_column_text(st, 1));
        (*n)++;
    }
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "migrate columns");
}

/* The first column of sql's only row as an integer (0 without a row). */
static int one_i64(sq_conn_t *c, const char *sql, const char *arg, int64_t *v)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(c, sql, &st, "migrate");
    if (rc != STORE_OK)
        return rc;
    if (arg)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    *v = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return src == SQLITE_ROW || src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "migrate");
}

static int cp_count(store_conn_t *conn, const char *table, int64_t *n)
{
    char *sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", table);
    int rc = one_i64(sq(conn), sql, NULL, n);
    sqlite3_free(sql);
    return rc;
}

static int cp_read(store_conn_t *conn, const char *table, const copy_col_t *cols, size_t n,
                   copy_row_fn fn, void *arg)
{
    sq_conn_t *c = sq(conn);
    buf_t q;
    buf_init(&q);
    buf_puts(&q, "SELECT ");
    for (size_t i = 0; i < n; i++) {
        char *col = sqlite3_mprintf("%s\"%w\"", i ? ", " : "", cols[i].name);
        buf_puts(&q, col);
        sqlite3_free(col);
    }
    char *from = sqlite3_mprintf(" FROM \"%w\"", table);
    buf_puts(&q, from);
    sqlite3_free(from);
    sqlite3_stmt *st;
    int rc = sq_prepare(c, buf_cstr(&q), &st, "migrate read");
    buf_free(&q);
    if (rc != STORE_OK)
        return rc;
    /* this table's own types: a packed text is unpacked wherever it is */
    arena_t a;
    arena_init(&a);
    copy_type_t *types = store_copy_types(conn, table, cols, n, &a);
    if (!types)
        rc = STORE_ERROR;
    const char **vals = xcalloc(n ? n : 1, sizeof(*vals));
    size_t *lens = xcalloc(n ? n : 1, sizeof(*lens));
    char (*num)[32] = xcalloc(n ? n : 1, sizeof(*num));
    arena_t row;
    arena_init(&row);
    int src = SQLITE_DONE;
    while (rc == STORE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        for (size_t i = 0; rc == STORE_OK && i < n; i++) {
            int ct = sqlite3_column_type(st, (int)i);
            vals[i] = NULL;
            lens[i] = 0;
            if (ct == SQLITE_NULL)
                continue;
            copy_type_t ty = types[i];
            if (ty == COPY_UNTYPED)
                ty = ct == SQLITE_INTEGER ? COPY_INT : ct == SQLITE_FLOAT ? COPY_REAL : COPY_TEXT;
            switch (ty) {
            case COPY_UNTYPED:
            case COPY_INT:
            case COPY_BOOL:
                lens[i] = (size_t)snprintf(num[i], sizeof(num[i]), "%lld",
                                           (long long)sqlite3_column_int64(st, (int)i));
                vals[i] = num[i];
                break;
            case COPY_REAL:
                lens[i] = (size_t)snprintf(num[i], sizeof(num[i]), COPY_REAL_FMT,
                                           sqlite3_column_double(st, (int)i));
                vals[i] = num[i];
                break;
            case COPY_PACKED:
            packed:
                rc = sq_col_result(st, (int)i, &row, &vals[i]);
                lens[i] = vals[i] ? strlen(vals[i]) : 0;
                break;
            case COPY_BLOB:
                vals[i] = sqlite3_column_blob(st, (int)i);
                lens[i] = (size_t)sqlite3_column_bytes(st, (int)i);
                if (!vals[i])
                    vals[i] = "";
                break;
            case COPY_TEXT:
                if (ct == SQLITE_BLOB) /* a packed text in a column of no type (a copy) */
                    goto packed;
                vals[i] = (const char *)sqlite3_column_text(st, (int)i);
                lens[i] = (size_t)sqlite3_column_bytes(st, (int)i);
                break;
            }
        }
        if (rc == STORE_OK && fn(arg, vals, lens) != 0)
            rc = STORE_ERROR;
        arena_free(&row);
    }
    if (rc == STORE_OK && src != SQLITE_DONE)
        rc = sq_error(c, src, "migrate read");
    sqlite3_finalize(st);
    arena_free(&row);
    arena_free(&a);
    free(vals);
    free(lens);
    free(num);
    return rc;
}

static int cp_seq_get(store_conn_t *conn, const char *table, const char *idcol, int64_t *v)
{
    (void)idcol;
    return one_i64(sq(conn), "SELECT seq FROM sqlite_sequence WHERE name = ?1", table, v);
}

static int cp_seq_set(store_conn_t *conn, const char *table, const char *idcol, int64_t v)
{
    (void)idcol;
    sq_conn_t *c = sq(conn);
    int64_t autoinc = 0;
    int rc = one_i64(c,
                     "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1"
                     " AND sql LIKE '%AUTOINCREMENT%'",
                     table, &autoinc);
    if (rc != STORE_OK || !autoinc)
        return rc; /* ids are max(rowid) + 1: the rows say it */
    char *sql = sqlite3_mprintf("UPDATE sqlite_sequence SET seq = max(seq, %lld) WHERE name = %Q;"
                                "INSERT INTO sqlite_sequence(name, seq) SELECT %Q, %lld WHERE NOT"
                                " EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = %Q)",
                                (long long)v, table, table, (long long)v, table);
    rc = sql ? sq_exec_sql(c, sql, "migrate sequence") : STORE_ERROR;
    sqlite3_free(sql);
    return rc;
}

static int cp_write_begin(store_conn_t *conn)
{
    sq_conn_t *c = sq(conn);
    memset(&W, 0, sizeof(W));
    arena_init(&W.a);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    rc = sq_prepare(c, "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY rowid",
                    &st, "migrate triggers");
    size_t cap = 0;
    const char **names = NULL;
    int src = SQLITE_DONE;
    while (rc == STORE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        if (W.ntrig == cap) {
            cap = cap ? 2 * cap : 64;
            const char **ns = arena_take(&W.a, cap * sizeof(*ns));
            const char **ss = arena_take(&W.a, cap * sizeof(*ss));
            if (W.ntrig) {
                memcpy(ns, names, W.ntrig * sizeof(*ns));
                memcpy(ss, W.trig_sql, W.ntrig * sizeof(*ss));
            }
            names = ns;
            W.trig_sql = ss;
        }
        names[W.ntrig] = sq_col_text(st, 0, &W.a);
        W.trig_sql[W.ntrig++] = sq_col_text(st, 1, &W.a);
    }
    if (rc == STORE_OK) {
        sqlite3_finalize(st);
        if (src != SQLITE_DONE)
            rc = sq_error(c, src, "migrate triggers");
    }
    for (size_t i = 0; rc == STORE_OK && i < W.ntrig; i++) {
        char *sql = sqlite3_mprintf("DROP TRIGGER \"%w\"", names[i]);
        rc = sql ? sq_exec_sql(c, sql, "migrate drop trigger") : STORE_ERROR;
        sqlite3_free(sql);
    }
    if (rc != STORE_OK) {
        sq_tx_end(c, rc);
        arena_free(&W.a);
    }
    return rc;
}

static int cp_table_begin(store_conn_t *conn, const char *table, const copy_col_t *cols,
                          size_t n)
{
    sq_conn_t *c = sq(conn);
    arena_t a;
    arena_init(&a);
    copy_col_t *own = NULL;
    size_t nown = 0;
    int rc = cp_columns(conn, table, &a, &own, &nown);
    W.types = store_copy_types(conn, table, cols, n, &W.a);
    W.src_types = arena_take(&W.a, (n ? n : 1) * sizeof(*W.src_types));
    for (size_t i = 0; i < n; i++)
        W.src_types[i] = cols[i].type;
    W.n = n;
    W.table = table;
    bool has_key = false;
    int name_at = -1;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cols[i].name, "name"))
            name_at = (int)i;
    for (size_t j = 0; j < nown; j++)
        if (!strcmp(own[j].name, "name_key"))
            has_key = true;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cols[i].name, "name_key"))
            has_key = false; /* given */
    buf_t q, v;
    buf_init(&q);
    buf_init(&v);
    char *head = sqlite3_mprintf("INSERT INTO \"%w\" (", table);
    buf_puts(&q, head);
    sqlite3_free(head);
    for (size_t i = 0; i < n; i++) {
        char *col = sqlite3_mprintf("%s\"%w\"", i ? ", " : "", cols[i].name);
        buf_puts(&q, col);
        sqlite3_free(col);
        buf_printf(&v, "%s?%zu", i ? ", " : "", i + 1);
    }
    /* the name order key (migration 11), which the store's inserts give */
    if (has_key && name_at >= 0) {
        buf_puts(&q, ", name_key");
        buf_printf(&v, ", ink_key(?%d)", name_at + 1);
    }
    buf_printf(&q, ") VALUES (%s)", buf_cstr(&v));
    if (rc == STORE_OK && !W.types)
        rc = STORE_ERROR;
    if (rc == STORE_OK)
        rc = sq_prepare(c, buf_cstr(&q), &W.ins, "migrate insert");
    buf_free(&q);
    buf_free(&v);
    arena_free(&a);
    return rc;
}

static int cp_row(store_conn_t *conn, const char *const *vals, const size_t *lens)
{
    sqlite3_stmt *st = W.ins;
    for (size_t i = 0; i < W.n; i++) {
        int p = (int)i + 1;
        if (!vals[i]) {
            sqlite3_bind_null(st, p);
            continue;
        }
        copy_type_t ty = W.types[i];
        if (ty == COPY_UNTYPED)
            ty = W.src_types[i] == COPY_PACKED ? COPY_TEXT : W.src_types[i];
        switch (ty) {
        case COPY_UNTYPED:
        case COPY_INT:
        case COPY_BOOL:
            sqlite3_bind_int64(st, p, strtoll(vals[i], NULL, 10));
            break;
        case COPY_REAL:
            sqlite3_bind_double(st, p, strtod(vals[i], NULL));
            break;
        case COPY_PACKED:
            sq_bind_result(st, p, vals[i]);
            break;
        case COPY_BLOB:
            sqlite3_bind_blob64(st, p, vals[i], lens[i], SQLITE_STATIC);
            break;
        case COPY_TEXT:
            sqlite3_bind_text64(st, p, vals[i], lens[i], SQLITE_STATIC, SQLITE_UTF8);
            break;
        }
    }
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) {
        log_error("sqlite: migrate: inserting into %s: %s", W.table,
                  sqlite3_errmsg(sq(conn)->db));
        return STORE_ERROR;
    }
    return STORE_OK;
}

static int cp_table_end(store_conn_t *conn)
{
    (void)conn;
    sqlite3_finalize(W.ins);
    W.ins = NULL;
    return STORE_OK;
}

static int cp_write_end(store_conn_t *conn, bool commit)
{
    sq_conn_t *c = sq(conn);
    if (W.ins)
        cp_table_end(conn);
    int rc = commit ? STORE_OK : STORE_ERROR;
    /* the triggers made again (a rollback brings them back by itself) */
    for (size_t i = 0; rc == STORE_OK && i < W.ntrig; i++)
        rc = sq_exec_sql(c, W.trig_sql[i], "migrate trigger");
    rc = sq_tx_end(c, rc);
    arena_free(&W.a);
    memset(&W, 0, sizeof(W));
    return commit ? rc : STORE_OK;
}

const store_copy_ops_t sq_copy_ops = STORE_COPY_OPS(cp);
