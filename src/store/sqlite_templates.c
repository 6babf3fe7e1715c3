/* sqlite_templates.c — the SQLite store's users' own templates (store.h, API.md §18).
 * Its statements are its own (sq_conn_t.tpl[], prepared on first use and kept for the
 * connection's life). A rename moves the updated_us of the user's documents with the
 * template forward in the same transaction, so no rendering of them outlives it.
 * Part of the SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

#include <string.h>

enum { T_INSERT, T_GET, T_LIST, T_UPDATE, T_TOUCH_DOCS, T_DELETE, T_COUNT };
_Static_assert(T_COUNT <= SQ_TPL_STMTS, "sq_conn_t.tpl has a slot per statement");

#define TPL_COLS "id, user_id, name, description, instruction, created_us, updated_us, deleted_us"

static const char *const sql[T_COUNT] = {
    /* ?1 user, ?5 the most a user keeps: no row when that many exist already */
    [T_INSERT] = "INSERT INTO templates(user_id, name, description, instruction, created_us, "
                 "updated_us) SELECT ?1, ?2, ?3, ?4, ?6, ?6 WHERE (SELECT count(*) FROM "
                 "templates WHERE user_id = ?1 AND deleted_us IS NULL) < ?5 RETURNING " TPL_COLS,
    [T_GET] = "SELECT " TPL_COLS " FROM templates WHERE id = ?1 AND user_id = ?2 "
              "AND (?3 OR deleted_us IS NULL)",
    /* no instruction (NULL): the list does not show it (API.md §24) */
    [T_LIST] = "SELECT id, user_id, name, description, NULL, created_us, updated_us, deleted_us "
               "FROM templates WHERE user_id = ?1 AND deleted_us IS NULL ORDER BY id",
    [T_UPDATE] = "UPDATE templates SET name = coalesce(?3, name), "
                 "description = coalesce(?4, description), "
                 "instruction = coalesce(?5, instruction), updated_us = max(?6, updated_us + 1) "
                 "WHERE id = ?1 AND user_id = ?2 AND deleted_us IS NULL RETURNING " TPL_COLS,
    [T_TOUCH_DOCS] = "UPDATE documents SET " STORE_BUMP("max", "?3")
                     " WHERE user_id = ?2 AND template_id = ?1",
    [T_DELETE] = "UPDATE templates SET deleted_us = ?3 WHERE id = ?1 AND user_id = ?2 "
                 "AND deleted_us IS NULL",
};

static int stmt(sq_conn_t *c, int id, sqlite3_stmt **out)
{
    if (!c->tpl[id]) {
        int rc = sq_prepare(c, sql[id], &c->tpl[id], "templates prepare");
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->tpl[id];
    return STORE_OK;
}

static void read_template(sqlite3_stmt *st, arena_t *a, custom_template_t *t)
{
    t->id = sqlite3_column_int64(st, 0);
    t->user_id = sqlite3_column_int64(st, 1);
    t->name = sq_col_text(st, 2, a);
    t->description = sq_col_text(st, 3, a);
    t->instruction = sq_col_text(st, 4, a);
    t->created_us = sqlite3_column_int64(st, 5);
    t->updated_us = sqlite3_column_int64(st, 6);
    t->deleted = sqlite3_column_type(st, 7) != SQLITE_NULL;
}

/* Steps a bound statement for one template row; NOTFOUND when none. */
static int one_template(sq_conn_t *c, sqlite3_stmt *st, const char *what, arena_t *a,
                        custom_template_t *out)
{
    int rc = sq_step_row(c, st, what);
    if (rc == STORE_OK) {
        read_template(st, a, out);
        sq_stmt_done(st);
    }
    return rc;
}

int sq_template_create(store_conn_t *conn, int64_t user_id, const char *name,
                       const char *description, const char *instruction, int max, arena_t *a,
                       custom_template_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, T_INSERT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        sq_bind_text(st, 2, name);
        sq_bind_text(st, 3, description);
        sq_bind_text(st, 4, instruction);
        sqlite3_bind_int(st, 5, max);
        sqlite3_bind_int64(st, 6, now_us());
        rc = one_template(c, st, "template_create", a, out);
        if (rc == STORE_NOTFOUND)
            rc = STORE_CONFLICT; /* the user has `max` already */
    }
    return sq_tx_end(c, rc);
}

int sq_template_get(store_conn_t *conn, int64_t user_id, int64_t id, bool with_deleted,
                    arena_t *a, custom_template_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, T_GET, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    sqlite3_bind_int(st, 3, with_deleted);
    return one_template(c, st, "template_get", a, out);
}

int sq_template_list(store_conn_t *conn, int64_t user_id, arena_t *a, custom_template_t **out,
                     size_t *n)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, T_LIST, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, user_id);
    custom_template_t *v = NULL;
    size_t len = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            cap = cap ? cap * 2 : 16;
            custom_template_t *nv = arena_alloc(a, cap * sizeof(*nv));
            if (len)
                memcpy(nv, v, len * sizeof(*nv));
            v = nv;
        }
        read_template(st, a, &v[len++]);
    }
    rc = src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "template_list");
    sq_stmt_done(st);
    if (rc == STORE_OK) {
        *out = v;
        *n = len;
    }
    return rc;
}

int sq_template_update(store_conn_t *conn, int64_t user_id, int64_t id,
                       const template_patch_t *p, arena_t *a, custom_template_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    int64_t now = now_us();
    sqlite3_stmt *st;
    if ((rc = stmt(c, T_UPDATE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sq_bind_text(st, 3, p->name);
        sq_bind_text(st, 4, p->description);
        sq_bind_text(st, 5, p->instruction);
        sqlite3_bind_int64(st, 6, now);
        rc = one_template(c, st, "template_update", a, out);
    }
    if (rc == STORE_OK && p->name && (rc = stmt(c, T_TOUCH_DOCS, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, now);
        rc = sq_run(c, st, "template_update docs");
    }
    return sq_tx_end(c, rc);
}

int sq_template_delete(store_conn_t *conn, int64_t user_id, int64_t id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, T_DELETE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, now_us());
        rc = sq_run(c, st, "template_delete");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    return sq_tx_end(c, rc);
}
