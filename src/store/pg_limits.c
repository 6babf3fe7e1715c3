/* pg_limits.c — the PostgreSQL store's rate limiting (GCRA buckets) and idempotency
 * keys. */
#include "store/pg_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- rate limiting --------------------------------------------------------------- */

int pg_rate_gcra(store_conn_t *sc, const char *bucket, int64_t now_us, int64_t interval_us,
                 int64_t period_us, bool prune, int64_t *tat_us, bool *allowed)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    pg_num_t now = pg_num_i64(now_us), iv = pg_num_i64(interval_us), per = pg_num_i64(period_us);
    if (prune) {
        const char *pp[] = {now.s};
        if ((rc = pg_run(c, S_RATE_PRUNE, pp, &r)) != STORE_OK)
            return rc;
        PQclear(r);
    }
    const char *p[] = {bucket, now.s, iv.s, per.s};
    if ((rc = pg_run(c, S_RATE_HIT, p, &r)) != STORE_OK)
        return rc;
    *tat_us = pg_col_i64(r, 0, 0);
    const char *a = PQgetvalue(r, 0, 1);
    *allowed = a && a[0] == 't';
    PQclear(r);
    return STORE_OK;
}

/* ---- idempotency keys ------------------------------------------------------------ */

#define PG_IDEM_TRIES 4 /* a key freed between the take and the read is taken again */

int pg_idem_begin(store_conn_t *sc, int64_t user_id, const char *key, const char *digest,
                  int64_t now_us, int64_t lease_us, int64_t ttl_us, bool prune, arena_t *a,
                  idem_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    memset(out, 0, sizeof(*out));
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    pg_num_t uid = pg_num_i64(user_id), now = pg_num_i64(now_us),
             lease = pg_num_i64(now_us + lease_us), exp = pg_num_i64(now_us + ttl_us);
    if (prune) {
        const char *pp[] = {now.s};
        if ((rc = pg_run(c, S_IDEM_PRUNE, pp, &r)) != STORE_OK)
            return rc;
        PQclear(r);
    }
    for (int tries = 0; tries < PG_IDEM_TRIES; tries++) {
        /* one statement: taken atomically, or held by someone (the row lock of the
         * upsert makes a concurrent first use wait for the other's outcome) */
        random_hex(out->token, 16);
        const char *p[] = {uid.s, key, digest, out->token, lease.s, exp.s, now.s};
        if ((rc = pg_run(c, S_IDEM_TAKE, p, &r)) != STORE_OK)
            return rc;
        bool taken = PQntuples(r) == 1;
        PQclear(r);
        if (taken) {
            out->state = IDEM_NEW;
            return STORE_OK;
        }
        const char *g[] = {uid.s, key};
        if ((rc = pg_run(c, S_IDEM_GET, g, &r)) != STORE_OK)
            return rc;
        if (PQntuples(r) == 0) { /* aborted meanwhile: try to take it again */
            PQclear(r);
            continue;
        }
        if (strcmp(PQgetvalue(r, 0, 0), digest) != 0) {
            out->state = IDEM_MISMATCH;
        } else if (pg_col_i64(r, 0, 1) == 0 &&
                   (PQgetisnull(r, 0, 2) || pg_col_i64(r, 0, 5) >= now_us)) {
            out->state = IDEM_BUSY; /* (a kept answer of a holder whose lease ran out: replay) */
        } else {
            out->state = IDEM_REPLAY;
            out->status = (int)pg_col_i64(r, 0, 2);
            out->location = pg_col_str(r, 0, 3, a);
            out->body = pg_col_str(r, 0, 4, a);
            if (!out->body)
                out->body = "";
        }
        PQclear(r);
        return STORE_OK;
    }
    out->state = IDEM_BUSY; /* taken and freed again and again: say it is busy */
    return STORE_OK;
}

/* The finish statement; state 1 done, 0 in progress (see store.h idem_keep). */
static int idem_finish_stmt(pg_conn_t *c, int64_t user_id, const char *key, const char *token,
                            int status, const char *location, const char *body,
                            int64_t expires_us, int state)
{
    pg_num_t uid = pg_num_i64(user_id), st = pg_num_i64(status), exp = pg_num_i64(expires_us),
             done = pg_num_i64(state);
    const char *p[] = {uid.s, key, token, st.s, location, body, exp.s, done.s};
    PGresult *r;
    int rc = pg_run(c, S_IDEM_FINISH, p, &r);
    if (rc != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

int pg_idem_finish(store_conn_t *sc, int64_t user_id, const char *key, const char *token,
                   int status, const char *location, const char *body, int64_t expires_us)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    return idem_finish_stmt(c, user_id, key, token, status, location, body, expires_us, 1);
}

/* Inside the caller's transaction (pg_record_create, pg_docs_create_completed). */
int pg_idem_keep(store_conn_t *sc, const idem_keep_t *k, const char *location,
                 const char *body)
{
    return idem_finish_stmt(pg_cast(sc), k->user_id, k->key, k->token, k->status, location,
                            body, k->expires_us, k->final ? 1 : 0);
}

int pg_idem_abort(store_conn_t *sc, int64_t user_id, const char *key, const char *token)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id);
    const char *p[] = {uid.s, key, token};
    PGresult *r;
    if ((rc = pg_run(c, S_IDEM_ABORT, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}
