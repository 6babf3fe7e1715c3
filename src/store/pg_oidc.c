/* pg_oidc.c — single sign-on's rows on PostgreSQL (API.md §21; sqlite_oidc.c tells what
 * they are). Rare statements: run unnamed, one statement each (no transaction needed). */
#include "store/pg_int.h"

/* Runs sql with the text parameters p[0..n). */
static int run(pg_conn_t *c, const char *sql, const char *const *p, int n, PGresult **out)
{
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    bool prepared = false;
    return pg_run_named(c, "", sql, n, &prepared, p, out);
}

int pg_oidc_flow_put(store_conn_t *sc, const oidc_flow_t *f)
{
    pg_conn_t *c = pg_cast(sc);
    pg_num_t now = pg_num_i64(f->created_us), exp = pg_num_i64(f->expires_us);
    const char *p[] = {f->state_hash, f->browser_hash, f->nonce, f->verifier, now.s, exp.s};
    PGresult *r;
    int rc = run(c,
                 "WITH p AS (DELETE FROM oidc_flows WHERE expires_us <= $5::bigint)"
                 " INSERT INTO oidc_flows (state_hash, browser_hash, nonce, verifier,"
                 " created_us, expires_us) VALUES ($1, $2, $3, $4, $5::bigint, $6::bigint)",
                 p, 6, &r);
    if (rc == STORE_OK)
        PQclear(r);
    return rc;
}

int pg_oidc_flow_take(store_conn_t *sc, const char *state_hash, int64_t now_us, arena_t *a,
                      oidc_flow_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    const char *p[] = {state_hash};
    PGresult *r;
    int rc = run(c,
                 "DELETE FROM oidc_flows WHERE state_hash = $1 RETURNING browser_hash,"
                 " nonce, verifier, created_us, expires_us",
                 p, 1, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    out->state_hash = arena_strdup(a, state_hash);
    out->browser_hash = arena_strdup(a, PQgetvalue(r, 0, 0));
    out->nonce = arena_strdup(a, PQgetvalue(r, 0, 1));
    out->verifier = arena_strdup(a, PQgetvalue(r, 0, 2));
    out->created_us = pg_col_i64(r, 0, 3);
    out->expires_us = pg_col_i64(r, 0, 4);
    PQclear(r);
    return out->expires_us <= now_us ? STORE_NOTFOUND : STORE_OK;
}

int pg_user_oidc_find(store_conn_t *sc, const char *iss, const char *sub, int64_t *user_id)
{
    const char *p[] = {iss, sub};
    PGresult *r;
    int rc = run(pg_cast(sc), "SELECT id FROM users WHERE oidc_issuer = $1 AND oidc_subject = $2",
                 p, 2, &r);
    if (rc != STORE_OK)
        return rc;
    bool found = PQntuples(r) > 0;
    *user_id = found ? pg_col_i64(r, 0, 0) : 0;
    PQclear(r);
    return found ? STORE_OK : STORE_NOTFOUND;
}

int pg_user_oidc_link(store_conn_t *sc, int64_t id, const char *iss, const char *sub)
{
    pg_num_t n = pg_num_i64(id);
    const char *p[] = {sub ? iss : NULL, sub, n.s};
    PGresult *r;
    int rc = run(pg_cast(sc),
                 "UPDATE users SET oidc_issuer = $1, oidc_subject = $2 WHERE id = $3::bigint", p,
                 3, &r);
    if (rc != STORE_OK)
        return rc;
    if (pg_affected(r) == 0)
        rc = STORE_NOTFOUND;
    PQclear(r);
    return rc;
}
