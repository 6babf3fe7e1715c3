/* pg_users.c — the PostgreSQL store's users, API keys and monthly usage (store.h,
 * API.md §19). Its statements are its own (stmts[], prepared on first use, one bit each
 * in pg_conn_t.users_prepared). Usage is counted by one atomic upsert (INSERT … ON
 * CONFLICT DO UPDATE SET words = words + …), so processes counting at once all count. */
#include "store/pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    U_USER_FIND,
    U_USER_ENSURE,
    U_USER_INSERT,
    U_USER_GET_ID,
    U_USER_GET_NAME,
    U_USER_LIST,
    U_USER_UPDATE,
    U_USER_DELETE,
    U_KEY_INSERT,
    U_KEY_AUTH,
    U_KEY_AUTH_ONLY,
    U_KEY_LIST,
    U_KEY_GET,
    U_KEY_REVOKE,
    U_USAGE_ADD,
    U_USAGE_LIST,
    U_IDEM_HELD,
    U_USER_SECRET,
    U_USER_PASSWORD,
    U_SESSION_INSERT,
    U_SESSION_AUTH,
    U_SESSION_AUTH_ONLY,
    U_SESSION_TOUCH,
    U_SESSION_END_ONE,
    U_SESSION_END_ALL,
    U_SESSION_LIST,
    U_FAIL_ADD,
    U_FAIL_GET,
    U_COUNT
};
_Static_assert(U_COUNT <= 64, "pg_conn_t.users_prepared has one bit per statement");

#define USER_COLS "id, name, quota_words, quota_images, created_us, role"
#define KEY_COLS                                                                           \
    "k.id, k.user_id, u.name, k.prefix, k.created_us, COALESCE(k.revoked_us, 0), k.scope," \
    " COALESCE(k.expires_us, 0), k.name"

static const pg_stmt_t stmts[U_COUNT] = {
    [U_USER_FIND] = {"ink_u_user_find", 1, "SELECT id FROM users WHERE name = $1"},
    [U_USER_ENSURE] = {"ink_u_user_ensure", 2,
                       "INSERT INTO users (name, created_us) VALUES ($1, $2)"
                       " ON CONFLICT (name) DO NOTHING RETURNING id"},
    [U_USER_INSERT] = {"ink_u_user_insert", 4,
                       "INSERT INTO users (name, created_us, quota_words, quota_images)"
                       " VALUES ($1, $2, $3, $4) RETURNING " USER_COLS},
    [U_USER_GET_ID] = {"ink_u_user_get_id", 1, "SELECT " USER_COLS " FROM users WHERE id = $1"},
    [U_USER_GET_NAME] = {"ink_u_user_get_name", 1,
                         "SELECT " USER_COLS " FROM users WHERE name = $1"},
    /* the total with every row: one round trip */
    [U_USER_LIST] = {"ink_u_user_list", 2,
                     "SELECT " USER_COLS ", count(*) OVER () FROM users ORDER BY id"
                     " LIMIT $1 OFFSET $2"},
    [U_USER_UPDATE] = {"ink_u_user_update", 7,
                       "UPDATE users SET name = COALESCE($2::text, name),"
                       " role = COALESCE($7::text, role),"
                       " quota_words = CASE WHEN $3::boolean THEN $4::bigint ELSE quota_words END,"
                       " quota_images = CASE WHEN $5::boolean THEN $6::bigint ELSE quota_images END"
                       " WHERE id = $1 RETURNING " USER_COLS},
    /* THE ONE PLACE A USER'S ROWS GO (API.md §19, issue 33; sqlite_users.c has the
     * same list): one statement, so every row of the user goes or none (foreign keys
     * are checked at its end). Every table that holds anything of a user — a row keyed
     * by the user or by one of the user's records — has its DELETE here; a table added
     * later adds its line (tests/http/test_pg_erasure.py and test_erasure.py dump every
     * table after a user's deletion and fail on one missed). It answers the records
     * removed ('d', 'i'), every picture of the images and their revisions, each once
     * ('k'), and the user ('u': none when there is no such user). */
    [U_USER_DELETE] = {"ink_u_user_delete", 1,
                       "WITH wd AS (DELETE FROM webhook_deliveries WHERE webhook_id IN"
                       "  (SELECT id FROM webhooks WHERE user_id = $1)),"
                       " we AS (DELETE FROM webhook_events WHERE user_id = $1),"
                       " w AS (DELETE FROM webhooks WHERE user_id = $1),"
                       " d AS (DELETE FROM documents WHERE user_id = $1 RETURNING id),"
                       " i AS (DELETE FROM images WHERE user_id = $1 RETURNING id, media_key),"
                       " j AS (DELETE FROM jobs WHERE (kind = 0 AND record_id IN (SELECT id FROM d))"
                       "  OR (kind = 1 AND record_id IN (SELECT id FROM i))),"
                       " dr AS (DELETE FROM document_revisions"
                       "  WHERE document_id IN (SELECT id FROM d)),"
                       " ir AS (DELETE FROM image_revisions WHERE image_id IN (SELECT id FROM i)"
                       "  RETURNING media_key),"
                       " x AS (DELETE FROM idempotency_keys WHERE user_id = $1),"
                       " g AS (DELETE FROM usage_months WHERE user_id = $1),"
                       " c AS (DELETE FROM record_counts WHERE user_id = $1),"
                       " t AS (DELETE FROM templates WHERE user_id = $1),"
                       " s AS (DELETE FROM sessions WHERE user_id = $1),"
                       " k AS (DELETE FROM api_keys WHERE user_id = $1),"
                       " qh AS (DELETE FROM quota_holds WHERE user_id = $1),"
                       /* (later tables of a user's data: here) */
                       " u AS (DELETE FROM users WHERE id = $1 RETURNING id)"
                       " SELECT 'd', id, NULL FROM d UNION ALL SELECT 'i', id, NULL FROM i"
                       " UNION ALL SELECT 'u', id, NULL FROM u UNION ALL SELECT 'k', 0, m.key"
                       "  FROM (SELECT media_key FROM i UNION SELECT media_key FROM ir) m (key)"
                       "  WHERE m.key IS NOT NULL"},
    [U_KEY_INSERT] = {"ink_u_key_insert", 7,
                      "INSERT INTO api_keys (user_id, hash, prefix, created_us, scope, expires_us,"
                      " name) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id"},
    /* $1 hash, $2 period: the key, its user's quotas and usage in one lookup */
    [U_KEY_AUTH] = {"ink_u_key_auth", 2,
                    "SELECT k.user_id, k.id, k.hash, k.scope, COALESCE(k.expires_us, 0),"
                    " u.quota_words, u.quota_images, COALESCE(g.words, 0), COALESCE(g.images, 0)"
                    " FROM api_keys k JOIN users u ON u.id = k.user_id"
                    " LEFT JOIN usage_months g ON g.user_id = k.user_id AND g.period = $2"
                    " WHERE k.hash = $1 AND k.revoked_us IS NULL"},
    /* the same columns without a period: the key alone (no quota, nothing used) */
    [U_KEY_AUTH_ONLY] = {"ink_u_key_auth_only", 1,
                         "SELECT user_id, id, hash, scope, COALESCE(expires_us, 0), NULL::bigint,"
                         " NULL::bigint, 0, 0 FROM api_keys WHERE hash = $1 AND revoked_us IS NULL"},
    [U_KEY_LIST] = {"ink_u_key_list", 3,
                    "SELECT " KEY_COLS ", count(*) OVER () FROM api_keys k"
                    " JOIN users u ON u.id = k.user_id"
                    " WHERE $1::bigint = 0 OR k.user_id = $1 ORDER BY k.id LIMIT $2 OFFSET $3"},
    [U_KEY_GET] = {"ink_u_key_get", 1,
                   "SELECT " KEY_COLS " FROM api_keys k JOIN users u ON u.id = k.user_id"
                   " WHERE k.id = $1"},
    [U_KEY_REVOKE] = {"ink_u_key_revoke", 2,
                      "UPDATE api_keys SET revoked_us = COALESCE(revoked_us, $2) WHERE id = $1"},
    [U_USAGE_ADD] = {"ink_u_usage_add", 6,
                     "INSERT INTO usage_months AS g (user_id, period, words, images, prompt_tokens,"
                     " completion_tokens) VALUES ($1, $2, $3, $4, $5, $6)"
                     " ON CONFLICT (user_id, period) DO UPDATE SET words = g.words + excluded.words,"
                     " images = g.images + excluded.images,"
                     " prompt_tokens = g.prompt_tokens + excluded.prompt_tokens,"
                     " completion_tokens = g.completion_tokens + excluded.completion_tokens"},
    [U_USAGE_LIST] = {"ink_u_usage_list", 4,
                      "SELECT u.id, u.name, u.quota_words, u.quota_images, u.created_us, u.role,"
                      " COALESCE(g.words, 0), COALESCE(g.images, 0), COALESCE(g.prompt_tokens, 0),"
                      " COALESCE(g.completion_tokens, 0), count(*) OVER () FROM users u"
                      " LEFT JOIN usage_months g ON g.user_id = u.id AND g.period = $1"
                      " WHERE $2::bigint = 0 OR u.id = $2 ORDER BY u.id LIMIT $3 OFFSET $4"},
    [U_IDEM_HELD] = {"ink_u_idem_held", 3,
                     "SELECT 1 FROM idempotency_keys WHERE user_id = $1 AND idem_key = $2"
                     " AND expires_us >= $3 AND (state = 1 OR status IS NOT NULL"
                     " OR lease_until_us >= $3)"},
    /* ---- sign-in (API.md §21) ---- */
    [U_USER_SECRET] = {"ink_u_user_secret", 1,
                       "SELECT id, password_hash FROM users WHERE name = $1"},
    /* the hash set and every session but $3 ended, in one statement */
    [U_USER_PASSWORD] = {"ink_u_user_password", 3,
                         "WITH s AS (DELETE FROM sessions WHERE user_id = $1 AND id != $3"
                         " RETURNING 1)"
                         " UPDATE users SET password_hash = $2 WHERE id = $1"
                         " RETURNING (SELECT count(*) FROM s)"},
    /* expired and idle sessions removed on the way ($7 now, $9 idle before) */
    [U_SESSION_INSERT] = {"ink_u_session_insert", 9,
                          "WITH p AS (DELETE FROM sessions WHERE expires_us <= $7"
                          " OR last_seen_us < $9)"
                          " INSERT INTO sessions (user_id, key_id, hash, csrf, scope, user_agent,"
                          " created_us, last_seen_us, expires_us)"
                          " VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id"},
    [U_SESSION_AUTH] = {"ink_u_session_auth", 2,
                        "SELECT s.user_id, COALESCE(s.key_id, 0), s.hash, s.scope,"
                        " COALESCE(k.expires_us, 0), u.quota_words, u.quota_images,"
                        " COALESCE(g.words, 0), COALESCE(g.images, 0), s.id, s.created_us,"
                        " s.last_seen_us, s.expires_us, s.csrf, u.role"
                        " FROM sessions s JOIN users u ON u.id = s.user_id"
                        " LEFT JOIN api_keys k ON k.id = s.key_id"
                        " LEFT JOIN usage_months g ON g.user_id = s.user_id AND g.period = $2"
                        " WHERE s.hash = $1 AND (s.key_id IS NULL OR k.revoked_us IS NULL)"},
    [U_SESSION_AUTH_ONLY] = {"ink_u_session_auth_only", 1,
                             "SELECT s.user_id, COALESCE(s.key_id, 0), s.hash, s.scope,"
                             " COALESCE(k.expires_us, 0), NULL::bigint, NULL::bigint, 0, 0,"
                             " s.id, s.created_us, s.last_seen_us, s.expires_us, s.csrf, u.role"
                             " FROM sessions s JOIN users u ON u.id = s.user_id"
                             " LEFT JOIN api_keys k ON k.id = s.key_id"
                             " WHERE s.hash = $1 AND (s.key_id IS NULL OR k.revoked_us IS NULL)"},
    [U_SESSION_TOUCH] = {"ink_u_session_touch", 2,
                         "UPDATE sessions SET last_seen_us = GREATEST(last_seen_us, $2)"
                         " WHERE id = $1"},
    [U_SESSION_END_ONE] = {"ink_u_session_end_one", 2,
                           "DELETE FROM sessions WHERE id = $1"
                           " AND ($2::bigint = 0 OR user_id = $2)"},
    [U_SESSION_END_ALL] = {"ink_u_session_end_all", 2,
                           "DELETE FROM sessions WHERE user_id = $1 AND id != $2"},
    [U_SESSION_LIST] = {"ink_u_session_list", 3,
                        "SELECT id, created_us, last_seen_us, user_agent, count(*) OVER ()"
                        " FROM sessions WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3"},
    /* one more failure, the minutes before this one removed on the way */
    [U_FAIL_ADD] = {"ink_u_fail_add", 2,
                    "WITH p AS (DELETE FROM signin_failures WHERE minute < $2)"
                    " INSERT INTO signin_failures AS f (bucket, minute, n) VALUES ($1, $2, 1)"
                    " ON CONFLICT (bucket, minute) DO UPDATE SET n = f.n + 1 RETURNING n"},
    [U_FAIL_GET] = {"ink_u_fail_get", 2,
                    "SELECT n FROM signin_failures WHERE bucket = $1 AND minute = $2"},
};

static int run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->users_prepared >> id) & 1;
    int rc = pg_run_named(c, stmts[id].name, stmts[id].sql, stmts[id].nparams, &prepared,
                          params, out);
    if (prepared)
        c->users_prepared |= (uint64_t)1 << id;
    return rc;
}

static int64_t col_opt(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? -1 : pg_col_i64(r, row, col);
}

/* A number parameter, or NULL (SQL NULL) when v < 0. */
static const char *opt_param(pg_num_t *n, int64_t v)
{
    *n = pg_num_i64(v);
    return v < 0 ? NULL : n->s;
}

static void read_user(const PGresult *r, int row, arena_t *a, user_info_t *u)
{
    u->id = pg_col_i64(r, row, 0);
    u->name = pg_col_str(r, row, 1, a);
    u->quota_words = col_opt(r, row, 2);
    u->quota_images = col_opt(r, row, 3);
    u->created_us = pg_col_i64(r, row, 4);
    u->admin = strcmp(PQgetvalue(r, row, 5), "admin") == 0;
}

static void read_key(const PGresult *r, int row, arena_t *a, key_info_t *k)
{
    k->id = pg_col_i64(r, row, 0);
    k->user_id = pg_col_i64(r, row, 1);
    k->user_name = pg_col_str(r, row, 2, a);
    k->prefix = pg_col_str(r, row, 3, a);
    k->created_us = pg_col_i64(r, row, 4);
    k->revoked_us = pg_col_i64(r, row, 5);
    if (!key_scope_parse(PQgetvalue(r, row, 6), &k->scope))
        k->scope = SCOPE_WRITE;
    k->expires_us = pg_col_i64(r, row, 7);
    k->name = PQgetisnull(r, row, 8) ? NULL : pg_col_str(r, row, 8, a);
}

/* Runs a statement whose first column is an id; NOTFOUND when it gives no row. */
static int find_id(pg_conn_t *c, int id, const char *const *p, int64_t *out)
{
    PGresult *r;
    int rc = run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        *out = pg_col_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

/* Runs a statement giving at most one user row. */
static int one_user(pg_conn_t *c, int id, const char *const *p, arena_t *a, user_info_t *out)
{
    PGresult *r;
    int rc = run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        read_user(r, 0, a, out);
    PQclear(r);
    return rc;
}

/* limit < 0 = all (LIMIT NULL). */
static const char *limit_param(pg_num_t *n, int64_t limit)
{
    return opt_param(n, limit);
}

/* ---- users ---- */

int pg_user_ensure(store_conn_t *sc, const char *name, int64_t *user_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *find[] = {name};
    rc = find_id(c, U_USER_FIND, find, user_id);
    if (rc != STORE_NOTFOUND)
        return rc;
    pg_num_t now = pg_num_i64(now_us());
    const char *ins[] = {name, now.s};
    rc = find_id(c, U_USER_ENSURE, ins, user_id);
    if (rc != STORE_NOTFOUND)
        return rc;
    /* another process inserted the same name in between */
    rc = find_id(c, U_USER_FIND, find, user_id);
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

int pg_user_create(store_conn_t *sc, const char *name, int64_t quota_words,
                   int64_t quota_images, arena_t *a, user_info_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t now = pg_num_i64(now_us()), qw, qi;
    const char *p[] = {name, now.s, opt_param(&qw, quota_words), opt_param(&qi, quota_images)};
    rc = one_user(c, U_USER_INSERT, p, a, out);
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

int pg_user_get(store_conn_t *sc, int64_t id, const char *name, arena_t *a, user_info_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(id);
    const char *p[] = {name ? name : uid.s};
    return one_user(c, name ? U_USER_GET_NAME : U_USER_GET_ID, p, a, out);
}

/* The total of a page: count(*) OVER () of its rows; a page past the end has no row,
 * so the total is counted then. */
static int page_total(pg_conn_t *c, PGresult *r, int col, const char *count_sql,
                      const char *arg, int64_t *total)
{
    if (PQntuples(r) > 0) {
        *total = pg_col_i64(r, 0, col);
        return STORE_OK;
    }
    PGresult *cr = PQexecParams(c->pg, count_sql, arg ? 1 : 0, NULL, arg ? &arg : NULL, NULL,
                                NULL, 0);
    int rc = STORE_OK;
    if (!cr || PQresultStatus(cr) != PGRES_TUPLES_OK)
        rc = PQstatus(c->pg) == CONNECTION_OK ? STORE_ERROR : STORE_UNAVAILABLE;
    else
        *total = pg_col_i64(cr, 0, 0);
    PQclear(cr);
    return rc;
}

int pg_user_list(store_conn_t *sc, int64_t limit, int64_t offset, arena_t *a,
                 user_info_t **out, size_t *n, int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t l, o = pg_num_i64(offset);
    const char *p[] = {limit_param(&l, limit), o.s};
    PGresult *r;
    if ((rc = run(c, U_USER_LIST, p, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    user_info_t *v = arena_alloc(a, (rows ? rows : 1) * sizeof(*v));
    for (size_t i = 0; i < rows; i++)
        read_user(r, (int)i, a, &v[i]);
    rc = page_total(c, r, 6, "SELECT count(*) FROM users", NULL, total);
    PQclear(r);
    *out = v;
    *n = rows;
    return rc;
}

int pg_user_update(store_conn_t *sc, int64_t id, const user_patch_t *pt, arena_t *a,
                   user_info_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(id), qw, qi;
    const char *p[] = {uid.s, pt->name, pt->set_words ? "t" : "f",
                       opt_param(&qw, pt->quota_words), pt->set_images ? "t" : "f",
                       opt_param(&qi, pt->quota_images), pt->role};
    return one_user(c, U_USER_UPDATE, p, a, out);
}

int pg_user_delete(store_conn_t *sc, int64_t id, arena_t *a, user_removed_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(id);
    const char *p[] = {uid.s};
    PGresult *r = NULL;
    if ((rc = run(c, U_USER_DELETE, p, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    out->records = arena_alloc(a, (rows ? rows : 1) * sizeof(*out->records));
    out->media_keys = arena_alloc(a, (rows ? rows : 1) * sizeof(*out->media_keys));
    bool user = false;
    for (size_t i = 0; i < rows; i++) {
        char type = *PQgetvalue(r, (int)i, 0);
        if (type == 'u') {
            user = true;
        } else if (type == 'd' || type == 'i') {
            out->records[out->n_records].kind = type == 'i' ? KIND_IMG : KIND_DOC;
            out->records[out->n_records++].id = pg_col_i64(r, (int)i, 1);
        } else if (type == 'k') {
            out->media_keys[out->n_keys++] = pg_col_str(r, (int)i, 2, a);
        }
    }
    PQclear(r);
    if (!user) { /* (nothing else can have gone: every row hangs on the user's) */
        memset(out, 0, sizeof(*out));
        return STORE_NOTFOUND;
    }
    return STORE_OK;
}

/* ---- keys ---- */

int pg_key_insert(store_conn_t *sc, int64_t user_id, const char *hash_hex, const char *prefix,
                  key_scope_t scope, int64_t expires_us, const char *name, int64_t *key_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), now = pg_num_i64(now_us()), exp;
    const char *p[] = {uid.s, hash_hex, prefix, now.s, key_scope_name(scope),
                       opt_param(&exp, expires_us > 0 ? expires_us : -1),
                       name && *name ? name : NULL};
    return find_id(c, U_KEY_INSERT, p, key_id);
}

int pg_key_auth(store_conn_t *sc, const char *hash_hex, const char *period, key_auth_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *p[] = {hash_hex, period};
    PGresult *r;
    if ((rc = run(c, period ? U_KEY_AUTH : U_KEY_AUTH_ONLY, p, &r)) != STORE_OK)
        return rc;
    /* the index found it; the digest is confirmed in constant time all the same */
    if (PQntuples(r) == 0 || PQgetlength(r, 0, 2) != 64 ||
        !ct_equal(PQgetvalue(r, 0, 2), hash_hex, 64)) {
        rc = STORE_NOTFOUND;
    } else {
        memset(out, 0, sizeof(*out));
        out->user_id = pg_col_i64(r, 0, 0);
        out->key_id = pg_col_i64(r, 0, 1);
        if (!key_scope_parse(PQgetvalue(r, 0, 3), &out->scope))
            out->scope = SCOPE_READ;
        out->expires_us = pg_col_i64(r, 0, 4);
        out->quota_words = col_opt(r, 0, 5);
        out->quota_images = col_opt(r, 0, 6);
        out->used.words = pg_col_i64(r, 0, 7);
        out->used.images = pg_col_i64(r, 0, 8);
    }
    PQclear(r);
    return rc;
}

int pg_key_list(store_conn_t *sc, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                key_info_t **out, size_t *n, int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), l, o = pg_num_i64(offset);
    const char *p[] = {uid.s, limit_param(&l, limit), o.s};
    PGresult *r;
    if ((rc = run(c, U_KEY_LIST, p, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    key_info_t *v = arena_alloc(a, (rows ? rows : 1) * sizeof(*v));
    for (size_t i = 0; i < rows; i++)
        read_key(r, (int)i, a, &v[i]);
    rc = page_total(c, r, 9, /* after KEY_COLS */
                    "SELECT count(*) FROM api_keys WHERE $1::bigint = 0 OR user_id = $1::bigint",
                    uid.s, total);
    PQclear(r);
    *out = v;
    *n = rows;
    return rc;
}

int pg_key_get(store_conn_t *sc, int64_t key_id, arena_t *a, key_info_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(key_id);
    const char *p[] = {id.s};
    PGresult *r;
    if ((rc = run(c, U_KEY_GET, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        read_key(r, 0, a, out);
    PQclear(r);
    return rc;
}

int pg_key_revoke(store_conn_t *sc, int64_t key_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(key_id), now = pg_num_i64(now_us());
    const char *p[] = {id.s, now.s};
    PGresult *r;
    if ((rc = run(c, U_KEY_REVOKE, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

/* ---- usage ---- */

/* In the caller's transaction when one is open (docs_create_completed); else alone. */
int pg_usage_add(store_conn_t *sc, int64_t user_id, const char *period,
                 const usage_counts_t *add)
{
    pg_conn_t *c = pg_cast(sc);
    if (PQtransactionStatus(c->pg) != PQTRANS_INTRANS) {
        int rc = pg_ready(c);
        if (rc != STORE_OK)
            return rc;
    }
    pg_num_t uid = pg_num_i64(user_id), w = pg_num_i64(add->words), i = pg_num_i64(add->images),
             pt = pg_num_i64(add->prompt_tokens), ct = pg_num_i64(add->completion_tokens);
    const char *p[] = {uid.s, period, w.s, i.s, pt.s, ct.s};
    PGresult *r;
    int rc = run(c, U_USAGE_ADD, p, &r);
    if (rc == STORE_OK)
        PQclear(r);
    return rc;
}

int pg_usage_list(store_conn_t *sc, const char *period, int64_t user_id, int64_t limit,
                  int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), l, o = pg_num_i64(offset);
    const char *p[] = {period, uid.s, limit_param(&l, limit), o.s};
    PGresult *r;
    if ((rc = run(c, U_USAGE_LIST, p, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    usage_row_t *v = arena_alloc(a, (rows ? rows : 1) * sizeof(*v));
    for (size_t i = 0; i < rows; i++) {
        int row = (int)i;
        read_user(r, row, a, &v[i].user);
        v[i].used.words = pg_col_i64(r, row, 6);
        v[i].used.images = pg_col_i64(r, row, 7);
        v[i].used.prompt_tokens = pg_col_i64(r, row, 8);
        v[i].used.completion_tokens = pg_col_i64(r, row, 9);
    }
    rc = user_id ? STORE_OK
                 : page_total(c, r, 10, "SELECT count(*) FROM users", NULL, total);
    if (user_id)
        *total = (int64_t)rows;
    PQclear(r);
    *out = v;
    *n = rows;
    return rc;
}

int pg_idem_held(store_conn_t *sc, int64_t user_id, const char *key, int64_t now_us,
                 bool *held)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), now = pg_num_i64(now_us);
    const char *p[] = {uid.s, key, now.s};
    PGresult *r;
    if ((rc = run(c, U_IDEM_HELD, p, &r)) != STORE_OK)
        return rc;
    *held = PQntuples(r) > 0;
    PQclear(r);
    return STORE_OK;
}

/* ---- sign-in (API.md §21) ---- */

int pg_user_secret(store_conn_t *sc, const char *name, arena_t *a, int64_t *user_id,
                   const char **hash)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *p[] = {name};
    PGresult *r;
    if ((rc = run(c, U_USER_SECRET, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = STORE_NOTFOUND;
    } else {
        *user_id = pg_col_i64(r, 0, 0);
        *hash = PQgetisnull(r, 0, 1) ? NULL : pg_col_str(r, 0, 1, a);
    }
    PQclear(r);
    return rc;
}

int pg_user_password(store_conn_t *sc, int64_t user_id, const char *hash, int64_t keep,
                     int64_t *ended)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), k = pg_num_i64(keep);
    const char *p[] = {uid.s, hash, k.s};
    int64_t n = 0;
    rc = find_id(c, U_USER_PASSWORD, p, &n);
    if (rc == STORE_OK && ended)
        *ended = n;
    return rc;
}

int pg_session_insert(store_conn_t *sc, const session_new_t *s, int64_t *id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(s->user_id), kid, now = pg_num_i64(s->now_us),
             exp = pg_num_i64(s->expires_us), idle = pg_num_i64(s->idle_before_us);
    const char *p[] = {uid.s, opt_param(&kid, s->key_id > 0 ? s->key_id : -1), s->hash_hex,
                       s->csrf, key_scope_name(s->scope), s->user_agent, now.s, exp.s, idle.s};
    rc = find_id(c, U_SESSION_INSERT, p, id);
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

int pg_session_auth(store_conn_t *sc, const char *hash_hex, const char *period,
                    session_auth_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *p[] = {hash_hex, period};
    PGresult *r;
    if ((rc = run(c, period ? U_SESSION_AUTH : U_SESSION_AUTH_ONLY, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0 || PQgetlength(r, 0, 2) != 64 ||
        !ct_equal(PQgetvalue(r, 0, 2), hash_hex, 64)) {
        rc = STORE_NOTFOUND;
    } else {
        memset(out, 0, sizeof(*out));
        key_auth_t *k = &out->k;
        k->user_id = pg_col_i64(r, 0, 0);
        k->key_id = pg_col_i64(r, 0, 1);
        if (!key_scope_parse(PQgetvalue(r, 0, 3), &k->scope))
            k->scope = SCOPE_READ;
        k->expires_us = pg_col_i64(r, 0, 4);
        k->quota_words = col_opt(r, 0, 5);
        k->quota_images = col_opt(r, 0, 6);
        k->used.words = pg_col_i64(r, 0, 7);
        k->used.images = pg_col_i64(r, 0, 8);
        out->session_id = pg_col_i64(r, 0, 9);
        out->created_us = pg_col_i64(r, 0, 10);
        out->last_seen_us = pg_col_i64(r, 0, 11);
        out->expires_us = pg_col_i64(r, 0, 12);
        snprintf(out->csrf, sizeof(out->csrf), "%s", PQgetvalue(r, 0, 13));
        out->admin = strcmp(PQgetvalue(r, 0, 14), "admin") == 0;
    }
    PQclear(r);
    return rc;
}

/* Runs statement id with two numbers; *changed the rows it changed (when not NULL). */
static int run_nums(pg_conn_t *c, int id, int64_t a, int64_t b, int64_t *changed)
{
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t na = pg_num_i64(a), nb = pg_num_i64(b);
    const char *p[] = {na.s, nb.s};
    PGresult *r;
    if ((rc = run(c, id, p, &r)) != STORE_OK)
        return rc;
    if (changed)
        *changed = pg_affected(r);
    PQclear(r);
    return STORE_OK;
}

int pg_session_touch(store_conn_t *sc, int64_t id, int64_t now_us)
{
    return run_nums(pg_cast(sc), U_SESSION_TOUCH, id, now_us, NULL);
}

int pg_session_end(store_conn_t *sc, int64_t user_id, int64_t id, int64_t keep,
                   int64_t *ended)
{
    int64_t n = 0;
    int rc = id > 0 ? run_nums(pg_cast(sc), U_SESSION_END_ONE, id, user_id, &n)
                    : run_nums(pg_cast(sc), U_SESSION_END_ALL, user_id, keep, &n);
    if (rc == STORE_OK && ended)
        *ended = n;
    return rc;
}

int pg_session_list(store_conn_t *sc, int64_t user_id, int64_t limit, int64_t offset,
                    arena_t *a, session_info_t **out, size_t *n, int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), l, o = pg_num_i64(offset);
    const char *p[] = {uid.s, limit_param(&l, limit), o.s};
    PGresult *r;
    if ((rc = run(c, U_SESSION_LIST, p, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    session_info_t *v = arena_alloc(a, (rows ? rows : 1) * sizeof(*v));
    for (size_t i = 0; i < rows; i++) {
        v[i].id = pg_col_i64(r, (int)i, 0);
        v[i].created_us = pg_col_i64(r, (int)i, 1);
        v[i].last_seen_us = pg_col_i64(r, (int)i, 2);
        v[i].user_agent = PQgetisnull(r, (int)i, 3) ? NULL : pg_col_str(r, (int)i, 3, a);
    }
    rc = page_total(c, r, 4, "SELECT count(*) FROM sessions WHERE user_id = $1::bigint", uid.s,
                    total);
    PQclear(r);
    *out = v;
    *n = rows;
    return rc;
}

int pg_signin_failures(store_conn_t *sc, const char *bucket, int64_t minute, bool add,
                       int64_t *count)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t m = pg_num_i64(minute);
    const char *p[] = {bucket, m.s};
    PGresult *r;
    if ((rc = run(c, add ? U_FAIL_ADD : U_FAIL_GET, p, &r)) != STORE_OK)
        return rc;
    *count = PQntuples(r) > 0 ? pg_col_i64(r, 0, 0) : 0;
    PQclear(r);
    return STORE_OK;
}
