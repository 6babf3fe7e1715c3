/* pg_templates.c — the PostgreSQL store's users' own templates (store.h, API.md §18).
 * Its statements are its own (stmts[], prepared on first use, one bit each in
 * pg_conn_t.tpl_prepared). A rename moves the updated_us of the user's documents with
 * the template forward in the same statement, so no rendering of them outlives it. */
#include "store/pg_int.h"

#include <string.h>

enum { T_INSERT, T_GET, T_LIST, T_UPDATE, T_DELETE, T_COUNT };
_Static_assert(T_COUNT <= 64, "pg_conn_t.tpl_prepared has one bit per statement");

#define TPL_COLS                                                                           \
    "id, user_id, name, description, instruction, created_us, updated_us,"                 \
    " deleted_us IS NOT NULL"

static const pg_stmt_t stmts[T_COUNT] = {
    /* $1 user, $5 the most a user keeps: no row when that many exist already */
    [T_INSERT] = {"ink_t_insert", 6,
                  "INSERT INTO templates (user_id, name, description, instruction, created_us,"
                  " updated_us) SELECT $1::bigint, $2::text, $3::text, $4::text, $6::bigint,"
                  " $6::bigint WHERE (SELECT count(*) FROM templates WHERE user_id = $1::bigint"
                  " AND deleted_us IS NULL) < $5::bigint RETURNING " TPL_COLS},
    [T_GET] = {"ink_t_get", 3,
               "SELECT " TPL_COLS " FROM templates WHERE id = $1::bigint AND user_id = $2::bigint"
               " AND ($3::boolean OR deleted_us IS NULL)"},
    /* no instruction (NULL): the list does not show it (API.md §24) */
    [T_LIST] = {"ink_t_list", 1,
                "SELECT id, user_id, name, description, NULL::text, created_us, updated_us,"
                " deleted_us IS NOT NULL FROM templates WHERE user_id = $1::bigint"
                " AND deleted_us IS NULL ORDER BY id"},
    /* $3..$5 NULL = keep; a new name bumps the user's documents with the template */
    [T_UPDATE] = {"ink_t_update", 6,
                  "WITH t AS (UPDATE templates SET name = COALESCE($3::text, name),"
                  " description = COALESCE($4::text, description),"
                  " instruction = COALESCE($5::text, instruction),"
                  " updated_us = greatest($6::bigint, updated_us + 1)"
                  " WHERE id = $1::bigint AND user_id = $2::bigint AND deleted_us IS NULL"
                  " RETURNING " TPL_COLS "),"
                  " d AS (UPDATE documents SET " STORE_BUMP("greatest", "$6::bigint")
                  " WHERE $3::text IS NOT NULL AND user_id = $2::bigint"
                  " AND template_id = $1::bigint AND EXISTS (SELECT 1 FROM t))"
                  " SELECT * FROM t"},
    [T_DELETE] = {"ink_t_delete", 3,
                  "UPDATE templates SET deleted_us = $3::bigint WHERE id = $1::bigint"
                  " AND user_id = $2::bigint AND deleted_us IS NULL"},
};

static int run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->tpl_prepared >> id) & 1;
    int rc = pg_run_named(c, stmts[id].name, stmts[id].sql, stmts[id].nparams, &prepared,
                          params, out);
    if (prepared)
        c->tpl_prepared |= (uint64_t)1 << id;
    return rc;
}

static void read_template(const PGresult *r, int row, arena_t *a, custom_template_t *t)
{
    t->id = pg_col_i64(r, row, 0);
    t->user_id = pg_col_i64(r, row, 1);
    t->name = pg_col_str(r, row, 2, a);
    t->description = pg_col_str(r, row, 3, a);
    t->instruction = pg_col_str(r, row, 4, a);
    t->created_us = pg_col_i64(r, row, 5);
    t->updated_us = pg_col_i64(r, row, 6);
    t->deleted = PQgetvalue(r, row, 7)[0] == 't';
}

/* Runs a statement giving at most one template row; NOTFOUND when none. */
static int one_template(pg_conn_t *c, int id, const char *const *p, arena_t *a,
                        custom_template_t *out)
{
    PGresult *r;
    int rc = run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        read_template(r, 0, a, out);
    PQclear(r);
    return rc;
}

int pg_template_create(store_conn_t *sc, int64_t user_id, const char *name,
                       const char *description, const char *instruction, int max, arena_t *a,
                       custom_template_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), m = pg_num_i64(max), now = pg_num_i64(now_us());
    const char *p[] = {uid.s, name, description, instruction, m.s, now.s};
    rc = one_template(c, T_INSERT, p, a, out);
    return rc == STORE_NOTFOUND ? STORE_CONFLICT : rc; /* the user has `max` already */
}

int pg_template_get(store_conn_t *sc, int64_t user_id, int64_t id, bool with_deleted,
                    arena_t *a, custom_template_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    /* inside the caller's open transaction (a kept answer rendered by a create or a
     * regenerate, store.h): pg_ready would roll it back */
    if (PQtransactionStatus(c->pg) != PQTRANS_INTRANS) {
        int rc = pg_ready(c);
        if (rc != STORE_OK)
            return rc;
    }
    pg_num_t tid = pg_num_i64(id), uid = pg_num_i64(user_id);
    const char *p[] = {tid.s, uid.s, with_deleted ? "t" : "f"};
    return one_template(c, T_GET, p, a, out);
}

int pg_template_list(store_conn_t *sc, int64_t user_id, arena_t *a, custom_template_t **out,
                     size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id);
    const char *p[] = {uid.s};
    PGresult *r;
    if ((rc = run(c, T_LIST, p, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    custom_template_t *v = arena_alloc(a, (rows ? rows : 1) * sizeof(*v));
    for (size_t i = 0; i < rows; i++)
        read_template(r, (int)i, a, &v[i]);
    PQclear(r);
    *out = v;
    *n = rows;
    return STORE_OK;
}

int pg_template_update(store_conn_t *sc, int64_t user_id, int64_t id,
                       const template_patch_t *pt, arena_t *a, custom_template_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t tid = pg_num_i64(id), uid = pg_num_i64(user_id), now = pg_num_i64(now_us());
    const char *p[] = {tid.s, uid.s, pt->name, pt->description, pt->instruction, now.s};
    return one_template(c, T_UPDATE, p, a, out);
}

int pg_template_delete(store_conn_t *sc, int64_t user_id, int64_t id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t tid = pg_num_i64(id), uid = pg_num_i64(user_id), now = pg_num_i64(now_us());
    const char *p[] = {tid.s, uid.s, now.s};
    PGresult *r;
    if ((rc = run(c, T_DELETE, p, &r)) != STORE_OK)
        return rc;
    if (pg_affected(r) == 0)
        rc = STORE_NOTFOUND;
    PQclear(r);
    return rc;
}
