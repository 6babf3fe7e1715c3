/* sqlite_limits.c — rate limiting (GCRA buckets) and idempotency keys in the SQLite
 * store. Part of the SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

#include <string.h>

/* ---- rate limiting --------------------------------------------------------------------- */

int sq_rate_gcra(store_conn_t *conn, const char *bucket, int64_t now, int64_t interval,
                 int64_t period, bool prune, int64_t *tat_us, bool *allowed)
{
    sq_conn_t *c = sq(conn);
    int64_t tat = 0;
    bool ok = false;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if (prune) {
        if ((rc = sq_stmt(c, ST_RATE_PRUNE, &st)) != STORE_OK)
            goto out;
        sqlite3_bind_int64(st, 1, now);
        if ((rc = sq_run(c, st, "rate_gcra")) != STORE_OK)
            goto out;
    }
    if ((rc = sq_stmt(c, ST_RATE_HIT, &st)) != STORE_OK)
        goto out;
    sq_bind_text(st, 1, bucket);
    sqlite3_bind_int64(st, 2, now);
    sqlite3_bind_int64(st, 3, interval);
    sqlite3_bind_int64(st, 4, period);
    rc = sq_step_row(c, st, "rate_gcra");
    if (rc != STORE_OK) {
        rc = rc == STORE_NOTFOUND ? STORE_ERROR : rc;
        goto out;
    }
    tat = sqlite3_column_int64(st, 0);
    ok = sqlite3_column_int(st, 1) != 0;
    sq_stmt_done(st);
out:
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK) {
        *tat_us = tat;
        *allowed = ok;
    }
    return rc;
}

/* ---- idempotency keys ------------------------------------------------------------------ */

static int idem_take(sq_conn_t *c, int64_t user_id, const char *key, const char *digest,
                     int64_t now, int64_t lease_us, int64_t ttl_us, idem_t *out)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_IDEM_TAKE, &st);
    if (rc != STORE_OK)
        return rc;
    random_hex(out->token, 16);
    sqlite3_bind_int64(st, 1, user_id);
    sq_bind_text(st, 2, key);
    sq_bind_text(st, 3, digest);
    sq_bind_text(st, 4, out->token);
    sqlite3_bind_int64(st, 5, now + lease_us);
    sqlite3_bind_int64(st, 6, now + ttl_us);
    sqlite3_bind_int64(st, 7, now);
    rc = sq_step_row(c, st, "idem_begin");
    if (rc == STORE_OK)
        sq_stmt_done(st);
    return rc; /* NOTFOUND: the key is held */
}

int sq_idem_begin(store_conn_t *conn, int64_t user_id, const char *key,
                  const char *digest, int64_t now, int64_t lease_us, int64_t ttl_us,
                  bool prune, arena_t *a, idem_t *out)
{
    sq_conn_t *c = sq(conn);
    memset(out, 0, sizeof(*out));
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if (prune) {
        if ((rc = sq_stmt(c, ST_IDEM_PRUNE, &st)) != STORE_OK)
            goto out;
        sqlite3_bind_int64(st, 1, now);
        if ((rc = sq_run(c, st, "idem_begin")) != STORE_OK)
            goto out;
    }
    rc = idem_take(c, user_id, key, digest, now, lease_us, ttl_us, out);
    if (rc == STORE_OK) {
        out->state = IDEM_NEW;
        goto out;
    }
    if (rc != STORE_NOTFOUND || (rc = sq_stmt(c, ST_IDEM_GET, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, user_id);
    sq_bind_text(st, 2, key);
    if ((rc = sq_step_row(c, st, "idem_begin")) != STORE_OK) {
        rc = rc == STORE_NOTFOUND ? STORE_ERROR : rc; /* held, so there (one transaction) */
        goto out;
    }
    const char *d = (const char *)sqlite3_column_text(st, 0);
    if (!d || strcmp(d, digest) != 0) {
        out->state = IDEM_MISMATCH;
    } else if (sqlite3_column_int(st, 1) == 0 &&
               (sqlite3_column_type(st, 2) == SQLITE_NULL || sqlite3_column_int64(st, 5) >= now)) {
        out->state = IDEM_BUSY; /* (a kept answer of a holder whose lease ran out: replay) */
    } else {
        out->state = IDEM_REPLAY;
        out->status = sqlite3_column_int(st, 2);
        out->location = sq_col_text(st, 3, a);
        out->body = sq_col_text(st, 4, a);
        if (!out->body)
            out->body = "";
    }
    sq_stmt_done(st);
out:
    return sq_tx_end(c, rc);
}

/* Binds a key's user, key and token (?1..?3) to st; runs it then: STALE when no row
 * was held by that token. */
static void bind_held(sqlite3_stmt *st, int64_t user_id, const char *key, const char *token)
{
    sqlite3_bind_int64(st, 1, user_id);
    sq_bind_text(st, 2, key);
    sq_bind_text(st, 3, token);
}

static int run_held(sq_conn_t *c, sqlite3_stmt *st, const char *what)
{
    int rc = sq_run(c, st, what);
    if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
        rc = STORE_STALE;
    return rc;
}

/* The finish statement, in the caller's transaction; state 1 done, 0 in progress. */
static int idem_finish_stmt(sq_conn_t *c, int64_t user_id, const char *key, const char *token,
                            int status, const char *location, const char *body,
                            int64_t expires_us, int state)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_IDEM_FINISH, &st);
    if (rc != STORE_OK)
        return rc;
    bind_held(st, user_id, key, token);
    sqlite3_bind_int(st, 4, status);
    sq_bind_text(st, 5, location);
    sq_bind_text(st, 6, body);
    sqlite3_bind_int64(st, 7, expires_us);
    sqlite3_bind_int(st, 8, state);
    return run_held(c, st, "idem_finish");
}

int sq_idem_finish(store_conn_t *conn, int64_t user_id, const char *key,
                   const char *token, int status, const char *location, const char *body,
                   int64_t expires_us)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = idem_finish_stmt(c, user_id, key, token, status, location, body, expires_us, 1);
    return sq_tx_end(c, rc);
}

int sq_idem_keep(store_conn_t *conn, const idem_keep_t *k, const char *location,
                 const char *body)
{
    return idem_finish_stmt(sq(conn), k->user_id, k->key, k->token, k->status, location, body,
                            k->expires_us, k->final ? 1 : 0);
}

int sq_idem_abort(store_conn_t *conn, int64_t user_id, const char *key, const char *token)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_IDEM_ABORT, &st)) == STORE_OK) {
        bind_held(st, user_id, key, token);
        rc = run_held(c, st, "idem_abort");
    }
    return sq_tx_end(c, rc);
}
