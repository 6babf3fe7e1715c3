/* sqlite_users.c — the SQLite store's users, API keys and monthly usage (store.h,
 * API.md §19). Its statements are its own (sq_conn_t.users[], prepared on first use
 * and kept for the connection's life); user deletion's, run rarely, are prepared each
 * time. Part of the SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

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
    U_USER_COUNT,
    U_USER_UPDATE,
    U_KEY_INSERT,
    U_KEY_AUTH,
    U_KEY_AUTH_ONLY,
    U_KEY_LIST,
    U_KEY_COUNT,
    U_KEY_GET,
    U_KEY_REVOKE,
    U_USAGE_ADD,
    U_USAGE_LIST,
    U_IDEM_HELD,
    U_USER_SECRET,
    U_USER_PASSWORD,
    U_SESSION_PRUNE,
    U_SESSION_INSERT,
    U_SESSION_AUTH,
    U_SESSION_AUTH_ONLY,
    U_SESSION_TOUCH,
    U_SESSION_END_ONE,
    U_SESSION_END_ALL,
    U_SESSION_LIST,
    U_SESSION_COUNT,
    U_FAIL_PRUNE,
    U_FAIL_ADD,
    U_FAIL_GET,
    U_COUNT
};
_Static_assert(U_COUNT <= SQ_USER_STMTS, "sq_conn_t.users has a slot per statement");

#define USER_COLS "id, name, quota_words, quota_images, created_us, role"
#define KEY_COLS                                                                           \
    "k.id, k.user_id, u.name, k.prefix, k.created_us, k.revoked_us, k.scope, k.expires_us, " \
    "k.name"

static const char *const sql[U_COUNT] = {
    [U_USER_FIND] = "SELECT id FROM users WHERE name = ?1",
    [U_USER_ENSURE] = "INSERT INTO users(name, created_us) VALUES (?1, ?2) "
                      "ON CONFLICT(name) DO NOTHING",
    [U_USER_INSERT] = "INSERT INTO users(name, created_us, quota_words, quota_images) "
                      "VALUES (?1, ?2, ?3, ?4) RETURNING " USER_COLS,
    [U_USER_GET_ID] = "SELECT " USER_COLS " FROM users WHERE id = ?1",
    [U_USER_GET_NAME] = "SELECT " USER_COLS " FROM users WHERE name = ?1",
    [U_USER_LIST] = "SELECT " USER_COLS " FROM users ORDER BY id LIMIT ?1 OFFSET ?2",
    [U_USER_COUNT] = "SELECT count(*) FROM users",
    /* ?2 name or NULL, ?3 set words?, ?4 words, ?5 set images?, ?6 images, ?7 role or NULL */
    [U_USER_UPDATE] = "UPDATE users SET name = COALESCE(?2, name), role = COALESCE(?7, role), "
                      "quota_words = CASE WHEN ?3 THEN ?4 ELSE quota_words END, "
                      "quota_images = CASE WHEN ?5 THEN ?6 ELSE quota_images END "
                      "WHERE id = ?1 RETURNING " USER_COLS,
    [U_KEY_INSERT] = "INSERT INTO api_keys(user_id, hash, prefix, created_us, scope, expires_us, "
                     "name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    /* ?1 hash, ?2 period: the key, its user's quotas and usage in one lookup. The
     * usage only matters against a quota: a user without one does not read it (CASE
     * runs its subquery only when asked; with every create changing the database,
     * each table read costs its pages again) */
    [U_KEY_AUTH] = "SELECT k.user_id, k.id, k.hash, k.scope, k.expires_us, u.quota_words, "
                   "u.quota_images, "
                   "CASE WHEN u.quota_words IS NULL AND u.quota_images IS NULL THEN 0 ELSE "
                   "(SELECT words FROM usage_months WHERE user_id = k.user_id AND period = ?2) "
                   "END, "
                   "CASE WHEN u.quota_words IS NULL AND u.quota_images IS NULL THEN 0 ELSE "
                   "(SELECT images FROM usage_months WHERE user_id = k.user_id AND period = ?2) "
                   "END FROM api_keys k INDEXED BY api_keys_auth JOIN users u ON u.id = k.user_id "
                   "WHERE k.hash = ?1 AND k.revoked_us IS NULL",
    /* the first five without a period: the key alone (no quota, nothing used) */
    [U_KEY_AUTH_ONLY] = "SELECT user_id, id, hash, scope, expires_us "
                        "FROM api_keys INDEXED BY api_keys_auth "
                        "WHERE hash = ?1 AND revoked_us IS NULL",
    [U_KEY_LIST] = "SELECT " KEY_COLS " FROM api_keys k JOIN users u ON u.id = k.user_id "
                   "WHERE ?1 = 0 OR k.user_id = ?1 ORDER BY k.id LIMIT ?2 OFFSET ?3",
    [U_KEY_COUNT] = "SELECT count(*) FROM api_keys WHERE ?1 = 0 OR user_id = ?1",
    [U_KEY_GET] = "SELECT " KEY_COLS " FROM api_keys k JOIN users u ON u.id = k.user_id "
                  "WHERE k.id = ?1",
    [U_KEY_REVOKE] = "UPDATE api_keys SET revoked_us = COALESCE(revoked_us, ?2) WHERE id = ?1",
    [U_USAGE_ADD] = "INSERT INTO usage_months(user_id, period, words, images, prompt_tokens, "
                    "completion_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                    "ON CONFLICT(user_id, period) DO UPDATE SET words = words + excluded.words, "
                    "images = images + excluded.images, "
                    "prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
                    "completion_tokens = completion_tokens + excluded.completion_tokens",
    [U_USAGE_LIST] = "SELECT u.id, u.name, u.quota_words, u.quota_images, u.created_us, u.role, "
                     "coalesce(g.words, 0), coalesce(g.images, 0), coalesce(g.prompt_tokens, 0), "
                     "coalesce(g.completion_tokens, 0) FROM users u "
                     "LEFT JOIN usage_months g ON g.user_id = u.id AND g.period = ?1 "
                     "WHERE ?2 = 0 OR u.id = ?2 ORDER BY u.id LIMIT ?3 OFFSET ?4",
    [U_IDEM_HELD] = "SELECT 1 FROM idempotency_keys WHERE user_id = ?1 AND idem_key = ?2 "
                    "AND expires_us >= ?3 AND (state = 1 OR status IS NOT NULL "
                    "OR lease_until_us >= ?3)",
    /* ---- sign-in (API.md §21) ---- */
    [U_USER_SECRET] = "SELECT id, password_hash FROM users WHERE name = ?1",
    [U_USER_PASSWORD] = "UPDATE users SET password_hash = ?2 WHERE id = ?1",
    [U_SESSION_PRUNE] = "DELETE FROM sessions WHERE expires_us <= ?1 OR last_seen_us < ?2",
    [U_SESSION_INSERT] = "INSERT INTO sessions(user_id, key_id, hash, csrf, scope, user_agent, "
                         "created_us, last_seen_us, expires_us) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
    /* ?1 hash, ?2 period; a session made from a key lives while its key is not revoked */
    [U_SESSION_AUTH] = "SELECT s.user_id, COALESCE(s.key_id, 0), s.hash, s.scope, "
                       "COALESCE(k.expires_us, 0), u.quota_words, u.quota_images, "
                       "CASE WHEN u.quota_words IS NULL AND u.quota_images IS NULL THEN 0 ELSE "
                       "(SELECT words FROM usage_months WHERE user_id = s.user_id AND period = ?2) "
                       "END, "
                       "CASE WHEN u.quota_words IS NULL AND u.quota_images IS NULL THEN 0 ELSE "
                       "(SELECT images FROM usage_months WHERE user_id = s.user_id AND period = ?2) "
                       "END, s.id, s.created_us, s.last_seen_us, s.expires_us, s.csrf, u.role "
                       "FROM sessions s JOIN users u ON u.id = s.user_id "
                       "LEFT JOIN api_keys k ON k.id = s.key_id "
                       "WHERE s.hash = ?1 AND (s.key_id IS NULL OR k.revoked_us IS NULL)",
    [U_SESSION_AUTH_ONLY] = "SELECT s.user_id, COALESCE(s.key_id, 0), s.hash, s.scope, "
                            "COALESCE(k.expires_us, 0), NULL, NULL, 0, 0, "
                            "s.id, s.created_us, s.last_seen_us, s.expires_us, s.csrf, u.role "
                            "FROM sessions s JOIN users u ON u.id = s.user_id "
                            "LEFT JOIN api_keys k ON k.id = s.key_id "
                            "WHERE s.hash = ?1 AND (s.key_id IS NULL OR k.revoked_us IS NULL)",
    [U_SESSION_TOUCH] = "UPDATE sessions SET last_seen_us = max(last_seen_us, ?2) WHERE id = ?1",
    [U_SESSION_END_ONE] = "DELETE FROM sessions WHERE id = ?1 AND (?2 = 0 OR user_id = ?2)",
    [U_SESSION_END_ALL] = "DELETE FROM sessions WHERE user_id = ?1 AND id != ?2",
    [U_SESSION_LIST] = "SELECT id, created_us, last_seen_us, user_agent FROM sessions "
                       "WHERE user_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3",
    [U_SESSION_COUNT] = "SELECT count(*) FROM sessions WHERE user_id = ?1",
    [U_FAIL_PRUNE] = "DELETE FROM signin_failures WHERE minute < ?1 - ?2",
    [U_FAIL_ADD] = "INSERT INTO signin_failures(bucket, minute, n) VALUES (?1, ?2, 1) "
                   "ON CONFLICT(bucket, minute) DO UPDATE SET n = n + 1",
    [U_FAIL_GET] = "SELECT n FROM signin_failures WHERE bucket = ?1 AND minute = ?2",
};

static int stmt(sq_conn_t *c, int id, sqlite3_stmt **out)
{
    if (!c->users[id]) {
        int rc = sq_prepare(c, sql[id], &c->users[id], "users prepare");
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->users[id];
    return STORE_OK;
}

static int64_t col_opt(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static void bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
    if (v < 0)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

static void read_user(sqlite3_stmt *st, int col, arena_t *a, user_info_t *u)
{
    u->id = sqlite3_column_int64(st, col);
    u->name = sq_col_text(st, col + 1, a);
    u->quota_words = col_opt(st, col + 2);
    u->quota_images = col_opt(st, col + 3);
    u->created_us = sqlite3_column_int64(st, col + 4);
    const unsigned char *role = sqlite3_column_text(st, col + 5);
    u->admin = role && strcmp((const char *)role, "admin") == 0;
}

static void read_key(sqlite3_stmt *st, arena_t *a, key_info_t *k)
{
    k->id = sqlite3_column_int64(st, 0);
    k->user_id = sqlite3_column_int64(st, 1);
    k->user_name = sq_col_text(st, 2, a);
    k->prefix = sq_col_text(st, 3, a);
    k->created_us = sqlite3_column_int64(st, 4);
    k->revoked_us = sqlite3_column_int64(st, 5); /* NULL reads as 0 = active */
    const char *scope = (const char *)sqlite3_column_text(st, 6);
    if (!key_scope_parse(scope, &k->scope))
        k->scope = SCOPE_WRITE;
    k->expires_us = sqlite3_column_int64(st, 7); /* NULL reads as 0 = never */
    k->name = sqlite3_column_type(st, 8) == SQLITE_NULL ? NULL : sq_col_text(st, 8, a);
}

/* A statement's one row read by fn; NOTFOUND when none. */
static int one_row(sq_conn_t *c, sqlite3_stmt *st, const char *what,
                   void (*fn)(sqlite3_stmt *, arena_t *, void *), arena_t *a, void *out)
{
    int rc = sq_step_row(c, st, what);
    if (rc == STORE_OK) {
        fn(st, a, out);
        sq_stmt_done(st);
    }
    return rc;
}

static void user_row(sqlite3_stmt *st, arena_t *a, void *out)
{
    read_user(st, 0, a, out);
}

static void key_row(sqlite3_stmt *st, arena_t *a, void *out)
{
    read_key(st, a, out);
}

static int count_of(sq_conn_t *c, int id, int64_t arg, int64_t *total)
{
    sqlite3_stmt *st;
    int rc = stmt(c, id, &st);
    if (rc != STORE_OK)
        return rc;
    if (id == U_KEY_COUNT)
        sqlite3_bind_int64(st, 1, arg);
    rc = sq_step_row(c, st, "count");
    if (rc == STORE_OK) {
        *total = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* ---- users ---- */

static int user_find(sq_conn_t *c, const char *name, int64_t *user_id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, U_USER_FIND, &st);
    if (rc != STORE_OK)
        return rc;
    sq_bind_text(st, 1, name);
    rc = sq_step_row(c, st, "user_find");
    if (rc == STORE_OK) {
        *user_id = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
    }
    return rc;
}

int sq_user_ensure(store_conn_t *conn, const char *name, int64_t *user_id)
{
    sq_conn_t *c = sq(conn);
    int rc = user_find(c, name, user_id);
    if (rc != STORE_NOTFOUND)
        return rc;
    if ((rc = sq_tx_begin(c)) != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_USER_ENSURE, &st)) == STORE_OK) {
        sq_bind_text(st, 1, name);
        sqlite3_bind_int64(st, 2, now_us());
        rc = sq_run(c, st, "user_ensure");
    }
    if (rc == STORE_OK)
        rc = user_find(c, name, user_id);
    if (rc == STORE_NOTFOUND)
        rc = STORE_ERROR;
    return sq_tx_end(c, rc);
}

int sq_user_create(store_conn_t *conn, const char *name, int64_t quota_words,
                   int64_t quota_images, arena_t *a, user_info_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_USER_INSERT, &st)) == STORE_OK) {
        sq_bind_text(st, 1, name);
        sqlite3_bind_int64(st, 2, now_us());
        bind_opt(st, 3, quota_words);
        bind_opt(st, 4, quota_images);
        rc = one_row(c, st, "user_create", user_row, a, out);
        if (rc == STORE_NOTFOUND)
            rc = STORE_ERROR;
    }
    return sq_tx_end(c, rc);
}

int sq_user_get(store_conn_t *conn, int64_t id, const char *name, arena_t *a, user_info_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, name ? U_USER_GET_NAME : U_USER_GET_ID, &st);
    if (rc != STORE_OK)
        return rc;
    if (name)
        sq_bind_text(st, 1, name);
    else
        sqlite3_bind_int64(st, 1, id);
    return one_row(c, st, "user_get", user_row, a, out);
}

int sq_user_list(store_conn_t *conn, int64_t limit, int64_t offset, arena_t *a,
                 user_info_t **out, size_t *n, int64_t *total)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = count_of(c, U_USER_COUNT, 0, total)) != STORE_OK ||
        (rc = stmt(c, U_USER_LIST, &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, limit);
    sqlite3_bind_int64(st, 2, offset);
    size_t cap = (size_t)(limit >= 0 && limit < *total ? limit : *total) + 1, len = 0;
    user_info_t *v = arena_alloc(a, cap * sizeof(*v));
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && len < cap)
        read_user(st, 0, a, &v[len++]);
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "user_list");
    sq_stmt_done(st);
    *out = v;
    *n = len;
    return sq_tx_end(c, rc);
}

int sq_user_update(store_conn_t *conn, int64_t id, const user_patch_t *p, arena_t *a,
                   user_info_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_USER_UPDATE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sq_bind_text(st, 2, p->name);
        sqlite3_bind_int(st, 3, p->set_words);
        bind_opt(st, 4, p->quota_words);
        sqlite3_bind_int(st, 5, p->set_images);
        bind_opt(st, 6, p->quota_images);
        sq_bind_text(st, 7, p->role);
        rc = one_row(c, st, "user_update", user_row, a, out);
    }
    return sq_tx_end(c, rc);
}

/* ---- a user's removal ----
 *
 * THE ONE PLACE A USER'S ROWS GO (API.md §19, issue 33): every table that holds anything
 * of a user — a row keyed by the user, or by one of the user's records — has its DELETE
 * in delete_sql below, in this one transaction, and the same in pg_users.c's
 * U_USER_DELETE. A table added later that holds a user's data adds its line to both
 * lists (tests/http/test_erasure.py scans every table of the database for a deleted
 * user's text and fails on a table missed). Before the deletes, the records and the
 * media keys (the records' pictures and every revision's) are read, for the service
 * to remove the files and tell of the deletions (records_delete_user).
 *
 * Not here: the search index's trigram rows (the FTS5 tables: a deleted record's
 * trigrams may stay in its block until the block is rebuilt; never readable text) and
 * search_changed, whose row of a document goes with it by the documents_fts_del
 * trigger. */

#define USER_DOCS "SELECT id FROM documents WHERE user_id = ?1"
#define USER_IMGS "SELECT id FROM images WHERE user_id = ?1"

/* ?1 the user: its records (kind, id). */
static const char records_sql[] = "SELECT 0, id FROM documents WHERE user_id = ?1"
                                  " UNION ALL SELECT 1, id FROM images WHERE user_id = ?1";
/* ?1 the user: every media key of its images and their revisions, each once. */
static const char media_sql[] =
    "SELECT media_key FROM images WHERE user_id = ?1 AND media_key IS NOT NULL"
    " UNION SELECT media_key FROM image_revisions WHERE image_id IN (" USER_IMGS ")"
    " AND media_key IS NOT NULL";

/* The statements of a user's removal, in order (?1 the user); the last one must remove
 * the user's row (none removed: NOTFOUND). */
static const char *const delete_sql[] = {
    /* webhooks first (API.md §22): a user's deletion sends no event (docs/design.md) */
    "DELETE FROM webhook_deliveries WHERE webhook_id IN (SELECT id FROM webhooks WHERE"
    " user_id = ?1)",
    "DELETE FROM webhook_events WHERE user_id = ?1", /* (no index: migration 32) */
    "DELETE FROM webhooks WHERE user_id = ?1",
    "DELETE FROM jobs WHERE (kind = 0 AND record_id IN (" USER_DOCS ")) OR (kind = 1 AND"
    " record_id IN (" USER_IMGS "))",
    "DELETE FROM document_revisions WHERE document_id IN (" USER_DOCS ")",
    "DELETE FROM image_revisions WHERE image_id IN (" USER_IMGS ")",
    "DELETE FROM documents WHERE user_id = ?1", /* (triggers: search_changed, name index) */
    "DELETE FROM images WHERE user_id = ?1",
    "DELETE FROM idempotency_keys WHERE user_id = ?1",
    "DELETE FROM usage_months WHERE user_id = ?1",
    "DELETE FROM record_counts WHERE user_id = ?1",
    "DELETE FROM templates WHERE user_id = ?1",
    "DELETE FROM sessions WHERE user_id = ?1",
    "DELETE FROM api_keys WHERE user_id = ?1",
    "DELETE FROM quota_holds WHERE user_id = ?1",
    /* (later tables of a user's data: here, before the user's row) */
    "DELETE FROM users WHERE id = ?1",
};

/* Appends to a growing arena array of size elements (*len of *cap). */
static void *grow(arena_t *a, void *v, size_t *cap, size_t len, size_t size)
{
    if (len < *cap)
        return v;
    *cap = *cap ? *cap * 2 : 16;
    void *nv = arena_alloc(a, *cap * size);
    if (len)
        memcpy(nv, v, len * size);
    return nv;
}

static int removal_reads(sq_conn_t *c, int64_t id, arena_t *a, user_removed_t *out)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = sq_prepare(c, records_sql, &st, "user_delete");
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        out->records = grow(a, out->records, &cap, out->n_records, sizeof(*out->records));
        out->records[out->n_records].kind = sqlite3_column_int(st, 0) ? KIND_IMG : KIND_DOC;
        out->records[out->n_records++].id = sqlite3_column_int64(st, 1);
    }
    if (src != SQLITE_DONE)
        rc = sq_error(c, src, "user_delete");
    sqlite3_finalize(st);
    if (rc != STORE_OK || (rc = sq_prepare(c, media_sql, &st, "user_delete")) != STORE_OK)
        return rc;
    cap = 0;
    sqlite3_bind_int64(st, 1, id);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        out->media_keys = grow(a, out->media_keys, &cap, out->n_keys, sizeof(*out->media_keys));
        out->media_keys[out->n_keys++] = sq_col_text(st, 0, a);
    }
    if (src != SQLITE_DONE)
        rc = sq_error(c, src, "user_delete");
    sqlite3_finalize(st);
    return rc;
}

/* PRAGMA secure_delete's value on c (0 or 1; -1 when it cannot be read). */
static int secure_delete(sq_conn_t *c)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(c->db, "PRAGMA secure_delete", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

int sq_user_delete(store_conn_t *conn, int64_t id, arena_t *a, user_removed_t *out)
{
    sq_conn_t *c = sq(conn);
    /* the user's deleted rows are overwritten with zeros in the file (and its WAL's new
     * frames), not only unlinked from the b-trees, whatever this SQLite's default
     * (Debian's is on); the connection's setting is given back after */
    int was = secure_delete(c);
    if (was == 0)
        sqlite3_exec(c->db, "PRAGMA secure_delete = ON", NULL, NULL, NULL);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK) {
        if (was == 0)
            sqlite3_exec(c->db, "PRAGMA secure_delete = OFF", NULL, NULL, NULL);
        return rc;
    }
    sqlite3_stmt *st = NULL;
    rc = removal_reads(c, id, a, out);
    for (size_t i = 0; rc == STORE_OK && i < ARRAY_LEN(delete_sql); i++) {
        if ((rc = sq_prepare(c, delete_sql[i], &st, "user_delete")) != STORE_OK)
            break;
        sqlite3_bind_int64(st, 1, id);
        int src = sqlite3_step(st);
        rc = src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "user_delete");
        sqlite3_finalize(st);
        if (rc == STORE_OK && i + 1 == ARRAY_LEN(delete_sql) && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    rc = sq_tx_end(c, rc);
    if (was == 0)
        sqlite3_exec(c->db, "PRAGMA secure_delete = OFF", NULL, NULL, NULL);
    if (rc != STORE_OK)
        memset(out, 0, sizeof(*out));
    return rc;
}

/* ---- keys ---- */

int sq_key_insert(store_conn_t *conn, int64_t user_id, const char *hash_hex, const char *prefix,
                  key_scope_t scope, int64_t expires_us, const char *name, int64_t *key_id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_KEY_INSERT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        sq_bind_text(st, 2, hash_hex);
        sq_bind_text(st, 3, prefix);
        sqlite3_bind_int64(st, 4, now_us());
        sq_bind_text(st, 5, key_scope_name(scope));
        bind_opt(st, 6, expires_us > 0 ? expires_us : -1);
        sq_bind_text(st, 7, name && *name ? name : NULL);
        rc = sq_run(c, st, "key_insert");
    }
    int64_t id = sqlite3_last_insert_rowid(c->db);
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *key_id = id;
    return rc;
}

int sq_key_auth(store_conn_t *conn, const char *hash_hex, const char *period, key_auth_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, period ? U_KEY_AUTH : U_KEY_AUTH_ONLY, &st);
    if (rc != STORE_OK)
        return rc;
    sq_bind_text(st, 1, hash_hex);
    if (period)
        sq_bind_text(st, 2, period);
    rc = sq_step_row(c, st, "key_auth");
    if (rc == STORE_OK) {
        /* the index found it; the digest is confirmed in constant time all the same */
        const unsigned char *stored = sqlite3_column_text(st, 2);
        if (!stored || strlen((const char *)stored) != 64 || !ct_equal(stored, hash_hex, 64))
            rc = STORE_NOTFOUND;
        memset(out, 0, sizeof(*out));
        out->user_id = sqlite3_column_int64(st, 0);
        out->key_id = sqlite3_column_int64(st, 1);
        if (!key_scope_parse((const char *)sqlite3_column_text(st, 3), &out->scope))
            out->scope = SCOPE_READ;
        out->expires_us = sqlite3_column_int64(st, 4);
        out->quota_words = period ? col_opt(st, 5) : -1;
        out->quota_images = period ? col_opt(st, 6) : -1;
        if (period) {
            out->used.words = sqlite3_column_int64(st, 7);
            out->used.images = sqlite3_column_int64(st, 8);
        }
        sq_stmt_done(st);
    }
    return rc;
}

int sq_key_list(store_conn_t *conn, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                key_info_t **out, size_t *n, int64_t *total)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = count_of(c, U_KEY_COUNT, user_id, total)) != STORE_OK ||
        (rc = stmt(c, U_KEY_LIST, &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_int64(st, 2, limit);
    sqlite3_bind_int64(st, 3, offset);
    size_t cap = (size_t)(limit >= 0 && limit < *total ? limit : *total) + 1, len = 0;
    key_info_t *v = arena_alloc(a, cap * sizeof(*v));
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && len < cap)
        read_key(st, a, &v[len++]);
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "key_list");
    sq_stmt_done(st);
    *out = v;
    *n = len;
    return sq_tx_end(c, rc);
}

int sq_key_get(store_conn_t *conn, int64_t key_id, arena_t *a, key_info_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, U_KEY_GET, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, key_id);
    return one_row(c, st, "key_get", key_row, a, out);
}

int sq_key_revoke(store_conn_t *conn, int64_t key_id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_KEY_REVOKE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, key_id);
        sqlite3_bind_int64(st, 2, now_us());
        rc = sq_run(c, st, "key_revoke");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    return sq_tx_end(c, rc);
}

/* ---- usage ---- */

/* Inside the caller's transaction when one is open (docs_create_completed), else its
 * own. */
int sq_usage_add(store_conn_t *conn, int64_t user_id, const char *period,
                 const usage_counts_t *add)
{
    sq_conn_t *c = sq(conn);
    bool own = sqlite3_get_autocommit(c->db) || c->session;
    int rc = own ? sq_tx_begin(c) : STORE_OK;
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_USAGE_ADD, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        sq_bind_text(st, 2, period);
        sqlite3_bind_int64(st, 3, add->words);
        sqlite3_bind_int64(st, 4, add->images);
        sqlite3_bind_int64(st, 5, add->prompt_tokens);
        sqlite3_bind_int64(st, 6, add->completion_tokens);
        rc = sq_run(c, st, "usage_add");
    }
    return own ? sq_tx_end(c, rc) : rc;
}

int sq_usage_list(store_conn_t *conn, const char *period, int64_t user_id, int64_t limit,
                  int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    *total = 1;
    if ((!user_id && (rc = count_of(c, U_USER_COUNT, 0, total)) != STORE_OK) ||
        (rc = stmt(c, U_USAGE_LIST, &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sq_bind_text(st, 1, period);
    sqlite3_bind_int64(st, 2, user_id);
    sqlite3_bind_int64(st, 3, limit);
    sqlite3_bind_int64(st, 4, offset);
    size_t cap = (size_t)(limit >= 0 && limit < *total ? limit : *total) + 1, len = 0;
    usage_row_t *v = arena_alloc(a, cap * sizeof(*v));
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && len < cap) {
        usage_row_t *u = &v[len++];
        read_user(st, 0, a, &u->user);
        u->used.words = sqlite3_column_int64(st, 6);
        u->used.images = sqlite3_column_int64(st, 7);
        u->used.prompt_tokens = sqlite3_column_int64(st, 8);
        u->used.completion_tokens = sqlite3_column_int64(st, 9);
    }
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "usage_list");
    sq_stmt_done(st);
    if (user_id)
        *total = (int64_t)len;
    *out = v;
    *n = len;
    return sq_tx_end(c, rc);
}

int sq_idem_held(store_conn_t *conn, int64_t user_id, const char *key, int64_t now_us,
                 bool *held)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, U_IDEM_HELD, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, user_id);
    sq_bind_text(st, 2, key);
    sqlite3_bind_int64(st, 3, now_us);
    rc = sq_step_row(c, st, "idem_held");
    *held = rc == STORE_OK;
    if (rc == STORE_OK)
        sq_stmt_done(st);
    return rc == STORE_NOTFOUND ? STORE_OK : rc;
}

/* ---- sign-in (API.md §21) ---- */

int sq_user_secret(store_conn_t *conn, const char *name, arena_t *a, int64_t *user_id,
                   const char **hash)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, U_USER_SECRET, &st);
    if (rc != STORE_OK)
        return rc;
    sq_bind_text(st, 1, name);
    rc = sq_step_row(c, st, "user_secret");
    if (rc == STORE_OK) {
        *user_id = sqlite3_column_int64(st, 0);
        *hash = sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : sq_col_text(st, 1, a);
        sq_stmt_done(st);
    }
    return rc;
}

/* Runs statement id with ?1 a and ?2 b; *changed its rows changed (when not NULL). */
static int run2(sq_conn_t *c, int id, int64_t a, int64_t b, const char *what, int64_t *changed)
{
    sqlite3_stmt *st;
    int rc = stmt(c, id, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    rc = sq_run(c, st, what);
    if (rc == STORE_OK && changed)
        *changed = sqlite3_changes(c->db);
    return rc;
}

int sq_user_password(store_conn_t *conn, int64_t user_id, const char *hash, int64_t keep,
                     int64_t *ended)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_USER_PASSWORD, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        sq_bind_text(st, 2, hash);
        rc = sq_run(c, st, "user_password");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    if (rc == STORE_OK)
        rc = run2(c, U_SESSION_END_ALL, user_id, keep, "user_password", ended);
    return sq_tx_end(c, rc);
}

int sq_session_insert(store_conn_t *conn, const session_new_t *s, int64_t *id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = run2(c, U_SESSION_PRUNE, s->now_us, s->idle_before_us, "session_prune", NULL);
    sqlite3_stmt *st;
    if (rc == STORE_OK && (rc = stmt(c, U_SESSION_INSERT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, s->user_id);
        bind_opt(st, 2, s->key_id > 0 ? s->key_id : -1);
        sq_bind_text(st, 3, s->hash_hex);
        sq_bind_text(st, 4, s->csrf);
        sq_bind_text(st, 5, key_scope_name(s->scope));
        sq_bind_text(st, 6, s->user_agent);
        sqlite3_bind_int64(st, 7, s->now_us);
        sqlite3_bind_int64(st, 8, s->expires_us);
        rc = sq_run(c, st, "session_insert");
    }
    int64_t new_id = sqlite3_last_insert_rowid(c->db);
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *id = new_id;
    return rc;
}

int sq_session_auth(store_conn_t *conn, const char *hash_hex, const char *period,
                    session_auth_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, period ? U_SESSION_AUTH : U_SESSION_AUTH_ONLY, &st);
    if (rc != STORE_OK)
        return rc;
    sq_bind_text(st, 1, hash_hex);
    if (period)
        sq_bind_text(st, 2, period);
    rc = sq_step_row(c, st, "session_auth");
    if (rc == STORE_OK) {
        const unsigned char *stored = sqlite3_column_text(st, 2);
        if (!stored || strlen((const char *)stored) != 64 || !ct_equal(stored, hash_hex, 64))
            rc = STORE_NOTFOUND;
        memset(out, 0, sizeof(*out));
        key_auth_t *k = &out->k;
        k->user_id = sqlite3_column_int64(st, 0);
        k->key_id = sqlite3_column_int64(st, 1);
        if (!key_scope_parse((const char *)sqlite3_column_text(st, 3), &k->scope))
            k->scope = SCOPE_READ;
        k->expires_us = sqlite3_column_int64(st, 4);
        k->quota_words = period ? col_opt(st, 5) : -1;
        k->quota_images = period ? col_opt(st, 6) : -1;
        k->used.words = sqlite3_column_int64(st, 7);
        k->used.images = sqlite3_column_int64(st, 8);
        out->session_id = sqlite3_column_int64(st, 9);
        out->created_us = sqlite3_column_int64(st, 10);
        out->last_seen_us = sqlite3_column_int64(st, 11);
        out->expires_us = sqlite3_column_int64(st, 12);
        const unsigned char *csrf = sqlite3_column_text(st, 13);
        snprintf(out->csrf, sizeof(out->csrf), "%s", csrf ? (const char *)csrf : "");
        const unsigned char *role = sqlite3_column_text(st, 14);
        out->admin = role && strcmp((const char *)role, "admin") == 0;
        sq_stmt_done(st);
    }
    return rc;
}

int sq_session_touch(store_conn_t *conn, int64_t id, int64_t now_us)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = run2(c, U_SESSION_TOUCH, id, now_us, "session_touch", NULL);
    return sq_tx_end(c, rc);
}

int sq_session_end(store_conn_t *conn, int64_t user_id, int64_t id, int64_t keep,
                   int64_t *ended)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    int64_t n = 0;
    if (id > 0)
        rc = run2(c, U_SESSION_END_ONE, id, user_id, "session_end", &n);
    else
        rc = run2(c, U_SESSION_END_ALL, user_id, keep, "session_end", &n);
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK && ended)
        *ended = n;
    return rc;
}

int sq_session_list(store_conn_t *conn, int64_t user_id, int64_t limit, int64_t offset,
                    arena_t *a, session_info_t **out, size_t *n, int64_t *total)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, U_SESSION_COUNT, &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, user_id);
    if ((rc = sq_step_row(c, st, "session_count")) != STORE_OK)
        return sq_tx_end(c, rc == STORE_NOTFOUND ? STORE_ERROR : rc);
    *total = sqlite3_column_int64(st, 0);
    sq_stmt_done(st);
    if ((rc = stmt(c, U_SESSION_LIST, &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_int64(st, 2, limit);
    sqlite3_bind_int64(st, 3, offset);
    size_t cap = (size_t)(limit >= 0 && limit < *total ? limit : *total) + 1, len = 0;
    session_info_t *v = arena_alloc(a, cap * sizeof(*v));
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && len < cap) {
        session_info_t *s = &v[len++];
        s->id = sqlite3_column_int64(st, 0);
        s->created_us = sqlite3_column_int64(st, 1);
        s->last_seen_us = sqlite3_column_int64(st, 2);
        s->user_agent = sqlite3_column_type(st, 3) == SQLITE_NULL ? NULL : sq_col_text(st, 3, a);
    }
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "session_list");
    sq_stmt_done(st);
    *out = v;
    *n = len;
    return sq_tx_end(c, rc);
}

int sq_signin_failures(store_conn_t *conn, const char *bucket, int64_t minute, bool add,
                       int64_t *count)
{
    sq_conn_t *c = sq(conn);
    int rc = add ? sq_tx_begin(c) : sq_tx_begin_read(c); /* a look only reads */
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if (add) {
        rc = run2(c, U_FAIL_PRUNE, minute, 0, "signin_failures", NULL);
        if (rc == STORE_OK && (rc = stmt(c, U_FAIL_ADD, &st)) == STORE_OK) {
            sq_bind_text(st, 1, bucket);
            sqlite3_bind_int64(st, 2, minute);
            rc = sq_run(c, st, "signin_failures");
        }
    }
    *count = 0;
    if (rc == STORE_OK && (rc = stmt(c, U_FAIL_GET, &st)) == STORE_OK) {
        sq_bind_text(st, 1, bucket);
        sqlite3_bind_int64(st, 2, minute);
        rc = sq_step_row(c, st, "signin_failures");
        if (rc == STORE_OK) {
            *count = sqlite3_column_int64(st, 0);
            sq_stmt_done(st);
        } else if (rc == STORE_NOTFOUND) {
            rc = STORE_OK;
        }
    }
    return sq_tx_end(c, rc);
}
