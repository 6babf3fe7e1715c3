/* sqlite_oidc.c — single sign-on's rows (API.md §21; store.h store_oidc_*): the flows
 * begun at the issuer (table oidc_flows) and the users' links to a subject (users.
 * oidc_issuer, users.oidc_subject; unique together). Rare statements: prepared per call. */
#include "store/sqlite_int.h"

/* Prepares sql and binds the texts t[0..n) to ?1.. (NULL binds NULL). */
static int prep(sq_conn_t *c, const char *sql, const char *const *t, int n, sqlite3_stmt **st)
{
    int rc = sq_prepare(c, sql, st, "oidc prepare");
    for (int i = 0; rc == STORE_OK && i < n; i++)
        sq_bind_text(*st, i + 1, t[i]);
    return rc;
}

int sq_oidc_flow_put(store_conn_t *conn, const oidc_flow_t *f)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = sq_prepare(c, "DELETE FROM oidc_flows WHERE expires_us <= ?1", &st,
                         "oidc prepare")) == STORE_OK) {
        sqlite3_bind_int64(st, 1, f->created_us);
        rc = sq_run(c, st, "oidc_flow_prune");
    }
    sqlite3_finalize(st);
    st = NULL;
    const char *t[] = {f->state_hash, f->browser_hash, f->nonce, f->verifier};
    if (rc == STORE_OK &&
        (rc = prep(c, "INSERT INTO oidc_flows (state_hash, browser_hash, nonce, verifier,"
                      " created_us, expires_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                   t, 4, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 5, f->created_us);
        sqlite3_bind_int64(st, 6, f->expires_us);
        rc = sq_run(c, st, "oidc_flow_put");
    }
    sqlite3_finalize(st);
    return sq_tx_end(c, rc);
}

int sq_oidc_flow_take(store_conn_t *conn, const char *state_hash, int64_t now_us, arena_t *a,
                      oidc_flow_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = prep(c, "DELETE FROM oidc_flows WHERE state_hash = ?1 RETURNING browser_hash,"
                      " nonce, verifier, created_us, expires_us",
                   &state_hash, 1, &st)) == STORE_OK &&
        (rc = sq_step_row(c, st, "oidc_flow_take")) == STORE_OK) {
        out->state_hash = arena_strdup(a, state_hash);
        out->browser_hash = sq_col_text(st, 0, a);
        out->nonce = sq_col_text(st, 1, a);
        out->verifier = sq_col_text(st, 2, a);
        out->created_us = sqlite3_column_int64(st, 3);
        out->expires_us = sqlite3_column_int64(st, 4);
        while (sqlite3_step(st) == SQLITE_ROW) { /* the delete's end */
        }
        if (out->expires_us <= now_us)
            rc = STORE_NOTFOUND; /* gone with it */
    }
    sqlite3_finalize(st);
    /* a miss commits too: an expired flow is removed all the same */
    int end = sq_tx_end(c, rc == STORE_NOTFOUND ? STORE_OK : rc);
    return end != STORE_OK ? end : rc;
}

int sq_user_oidc_find(store_conn_t *conn, const char *iss, const char *sub, int64_t *user_id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    const char *t[] = {iss, sub};
    if ((rc = prep(c, "SELECT id FROM users WHERE oidc_issuer = ?1 AND oidc_subject = ?2", t,
                   2, &st)) == STORE_OK &&
        (rc = sq_step_row(c, st, "user_oidc_find")) == STORE_OK)
        *user_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return sq_tx_end(c, rc);
}

int sq_user_oidc_link(store_conn_t *conn, int64_t id, const char *iss, const char *sub)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    const char *t[] = {sub ? iss : NULL, sub};
    if ((rc = prep(c, "UPDATE users SET oidc_issuer = ?1, oidc_subject = ?2 WHERE id = ?3", t,
                   2, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 3, id);
        rc = sq_run(c, st, "user_oidc_link");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    sqlite3_finalize(st);
    return sq_tx_end(c, rc);
}
