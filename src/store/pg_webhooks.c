/* pg_webhooks.c — webhooks in the PostgreSQL store (store_webhooks.h, API.md §22):
 * endpoints, pings, the delivery log and the workers' claims (FOR UPDATE SKIP LOCKED:
 * each attempt by one process). The events themselves are written by migration 18's
 * triggers, in the transaction of the change they report. Its statements are its own
 * (stmts[], prepared on first use, one bit each in pg_conn_t.wh_prepared). */
#include "store/pg_int.h"

#include <string.h>

enum {
    W_INSERT, W_GET, W_LIST, W_UPDATE, W_DELETE, W_ROTATE, W_PING, W_DELIVS, W_RETRY,
    W_CLAIM, W_BODY, W_SNAP_DOC, W_SNAP_IMG, W_DONE, W_SWEEP, W_STATS, W_STMT_COUNT
};
_Static_assert(W_STMT_COUNT <= 64, "pg_conn_t.wh_prepared has one bit per statement");

#define WH_COLS                                                                            \
    "id, user_id, url, description, events, enabled, secret, prev_secret, prev_until_us,"   \
    " created_us, updated_us"

static const pg_stmt_t stmts[W_STMT_COUNT] = {
    /* $6 the most a user keeps: no row when that many exist already (two creates at once
     * may both pass: the limit is a bound against abuse, not an exact count) */
    [W_INSERT] = {"ink_w_insert", 7,
                  "INSERT INTO webhooks (user_id, url, description, events, enabled, secret,"
                  " prev_until_us, created_us, updated_us) SELECT $1::bigint, $2::text, $3::text,"
                  " $4::bigint, true, $5::text, 0, $7::bigint, $7::bigint WHERE (SELECT count(*)"
                  " FROM webhooks WHERE user_id = $1::bigint) < $6::bigint RETURNING " WH_COLS},
    [W_GET] = {"ink_w_get", 2,
               "SELECT " WH_COLS " FROM webhooks WHERE id = $1::bigint AND user_id = $2::bigint"},
    [W_LIST] = {"ink_w_list", 3,
                "SELECT " WH_COLS ", count(*) OVER () FROM webhooks WHERE user_id = $1::bigint"
                " ORDER BY id LIMIT $2::bigint OFFSET $3::bigint"},
    [W_UPDATE] = {"ink_w_update", 7,
                  "UPDATE webhooks SET url = COALESCE($3::text, url),"
                  " description = COALESCE($4::text, description),"
                  " events = CASE WHEN $5::bigint >= 0 THEN $5::bigint ELSE events END,"
                  " enabled = CASE WHEN $6::int >= 0 THEN $6::int <> 0 ELSE enabled END,"
                  " updated_us = $7::bigint WHERE id = $1::bigint AND user_id = $2::bigint"
                  " RETURNING " WH_COLS},
    [W_DELETE] = {"ink_w_delete", 2,
                  "WITH d AS (DELETE FROM webhook_deliveries WHERE webhook_id = $1::bigint"
                  " AND user_id = $2::bigint)"
                  " DELETE FROM webhooks WHERE id = $1::bigint AND user_id = $2::bigint"},
    [W_ROTATE] = {"ink_w_rotate", 5,
                  "UPDATE webhooks SET prev_secret = secret, prev_until_us = $4::bigint,"
                  " secret = $3::text, updated_us = $5::bigint WHERE id = $1::bigint"
                  " AND user_id = $2::bigint RETURNING " WH_COLS},
    [W_PING] = {"ink_w_ping", 3,
                "WITH e AS (INSERT INTO webhook_events (msg, user_id, type, kind, record_id,"
                " revision, created_us) SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''),"
                " user_id, 'ping', -1, id, 0, $3::bigint FROM webhooks WHERE id = $1::bigint"
                " AND user_id = $2::bigint RETURNING id, user_id, record_id)"
                " INSERT INTO webhook_deliveries (event_id, webhook_id, user_id, kind, record_id,"
                " state, attempts, next_us, lease_us, created_us) SELECT id, record_id, user_id,"
                " -1, 0, 0, 0, $3::bigint, 0, $3::bigint FROM e"},
    [W_DELIVS] = {"ink_w_delivs", 4,
                  "SELECT d.id, e.msg, e.type, d.record_id, d.state, d.attempts, d.last_status,"
                  " d.last_error, d.next_us, d.created_us, count(*) OVER ()"
                  " FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id"
                  " WHERE d.webhook_id = $1::bigint AND d.user_id = $2::bigint"
                  " ORDER BY d.id DESC LIMIT $3::bigint OFFSET $4::bigint"},
    /* the row's state before: no row = none such; 2 = now pending again */
    [W_RETRY] = {"ink_w_retry", 4,
                 "WITH o AS (SELECT id, state FROM webhook_deliveries WHERE id = $3::bigint"
                 " AND webhook_id = $1::bigint AND user_id = $2::bigint FOR UPDATE),"
                 " u AS (UPDATE webhook_deliveries d SET state = 0, next_us = $4::bigint,"
                 " lease_us = 0 FROM o WHERE d.id = o.id AND o.state = 2)"
                 " SELECT state FROM o"},
    /* $1 now, $2 the lease's end (the claim's name), $3 the most claims at once per
     * endpoint, $4 the most deliveries claimed */
    [W_CLAIM] = {"ink_w_claim", 4,
                 /* one endpoint with a due delivery and room for one more claim, chosen
                  * at random, then its due ones in order (migration 26's index): no
                  * claim scans the backlog, nor any while every endpoint is busy
                  * (SQLite's W_CLAIM_EP) */
                 "WITH ep AS (SELECT w.id FROM webhooks w WHERE w.enabled AND EXISTS (SELECT 1"
                 " FROM webhook_deliveries e WHERE e.webhook_id = w.id AND e.state = 0"
                 " AND e.next_us <= $1::bigint AND e.lease_us < $1::bigint)"
                 " AND (SELECT count(DISTINCT q.lease_us) FROM webhook_deliveries q"
                 " WHERE q.webhook_id = w.id AND q.state = 0"
                 " AND q.lease_us >= $1::bigint) < $3::bigint ORDER BY random() LIMIT 1),"
                 " c AS (SELECT d.id FROM webhook_deliveries d JOIN ep ON d.webhook_id = ep.id"
                 " WHERE d.state = 0 AND d.next_us <= $1::bigint"
                 " AND d.lease_us < $1::bigint AND (d.kind < 0 OR NOT EXISTS"
                 " (SELECT 1 FROM webhook_deliveries p WHERE p.webhook_id = d.webhook_id"
                 " AND p.kind = d.kind AND p.record_id = d.record_id AND p.state = 0"
                 " AND p.id < d.id))"
                 " ORDER BY d.next_us, d.id LIMIT $4::bigint FOR UPDATE OF d SKIP LOCKED),"
                 " u AS (UPDATE webhook_deliveries d SET lease_us = $2::bigint FROM c"
                 " WHERE d.id = c.id RETURNING d.id, d.event_id, d.webhook_id, d.user_id,"
                 " d.attempts)"
                 " SELECT u.id, u.event_id, u.webhook_id, u.user_id, u.attempts, e.msg, e.type,"
                 " e.kind, e.record_id, e.revision, e.created_us, e.body, w.url, w.secret,"
                 " w.prev_secret, w.prev_until_us FROM u JOIN webhook_events e"
                 " ON e.id = u.event_id JOIN webhooks w ON w.id = u.webhook_id"},
    [W_SNAP_DOC] = {"ink_w_snap_doc", 1,
                    "SELECT " DOC_COLS " FROM webhook_snap_docs WHERE event_id = $1::bigint"},
    [W_SNAP_IMG] = {"ink_w_snap_img", 1,
                    "SELECT " IMG_COLS " FROM webhook_snap_imgs WHERE event_id = $1::bigint"},
    [W_BODY] = {"ink_w_body", 2,
                "UPDATE webhook_events SET body = COALESCE(body, $2::text) WHERE id = $1::bigint"
                " RETURNING body"},
    /* a claim's outcomes at once, as arrays: $1 ids, $2 states, $3 statuses, $4 errors,
     * $5 next attempts, $6 leases, $7 disable, $8 now, $9 release (not attempted: the
     * claim given back only) */
    [W_DONE] = {"ink_w_done", 9,
                "WITH v AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[],"
                " $5::bigint[], $6::bigint[], $7::boolean[], $9::boolean[])"
                " AS v(id, st, status, err, next_us, lease, dis, rel)),"
                " u AS (UPDATE webhook_deliveries d SET"
                " state = CASE WHEN v.rel THEN d.state ELSE v.st END,"
                " attempts = d.attempts + CASE WHEN v.rel THEN 0 ELSE 1 END,"
                " last_status = CASE WHEN v.rel THEN d.last_status ELSE v.status END,"
                " last_error = CASE WHEN v.rel THEN d.last_error ELSE v.err END,"
                " next_us = CASE WHEN v.rel THEN d.next_us ELSE v.next_us END,"
                " lease_us = 0 FROM v WHERE d.id = v.id AND d.lease_us = v.lease AND d.state = 0"
                " RETURNING d.webhook_id, v.dis),"
                " w AS (UPDATE webhooks SET enabled = false, updated_us = $8::bigint"
                " WHERE id IN (SELECT webhook_id FROM u WHERE dis))"
                " SELECT count(*) FROM u"},
    [W_SWEEP] = {"ink_w_sweep", 2,
                 /* by id (no index by time or event: migration 25): the deliveries
                  * before the first young one (ids and times rise together); the
                  * events none of the rest names (one anti-join) */
                 "WITH b AS (SELECT COALESCE((SELECT id FROM webhook_deliveries WHERE"
                 " created_us >= $1::bigint ORDER BY id LIMIT 1), 9223372036854775807) AS id),"
                 " d AS (DELETE FROM webhook_deliveries x USING b WHERE x.created_us < $1::bigint"
                 " AND x.id < b.id)"
                 " DELETE FROM webhook_events e WHERE created_us < $2::bigint AND NOT EXISTS"
                 " (SELECT 1 FROM webhook_deliveries d, b WHERE d.event_id = e.id"
                 " AND NOT (d.created_us < $1::bigint AND d.id < b.id))"},
    [W_STATS] = {"ink_w_stats", 0,
                 "SELECT count(*), COALESCE(min(created_us), 0) FROM webhook_deliveries"
                 " WHERE state = 0"},
};

static int run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->wh_prepared >> id) & 1;
    int rc = pg_run_named(c, stmts[id].name, stmts[id].sql, stmts[id].nparams, &prepared,
                          params, out);
    if (prepared)
        c->wh_prepared |= (uint64_t)1 << id;
    return rc;
}

static void read_webhook(const PGresult *r, int row, arena_t *a, webhook_t *w)
{
    w->id = pg_col_i64(r, row, 0);
    w->user_id = pg_col_i64(r, row, 1);
    w->url = pg_col_str(r, row, 2, a);
    w->description = pg_col_str(r, row, 3, a);
    w->events = pg_col_i64(r, row, 4);
    w->enabled = PQgetvalue(r, row, 5)[0] == 't';
    w->secret = pg_col_str(r, row, 6, a);
    w->prev_secret = pg_col_str(r, row, 7, a);
    w->prev_until_us = pg_col_i64(r, row, 8);
    w->created_us = pg_col_i64(r, row, 9);
    w->updated_us = pg_col_i64(r, row, 10);
}

static int one_webhook(pg_conn_t *c, int id, const char *const *p, arena_t *a, webhook_t *out)
{
    PGresult *r;
    int rc = run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        read_webhook(r, 0, a, out);
    PQclear(r);
    return rc;
}

static int pg_webhook_create(store_conn_t *sc, const webhook_t *in, int max, arena_t *a,
                             webhook_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(in->user_id), ev = pg_num_i64(in->events), m = pg_num_i64(max),
             now = pg_num_i64(now_us());
    const char *p[] = {uid.s, in->url, in->description, ev.s, in->secret, m.s, now.s};
    rc = one_webhook(c, W_INSERT, p, a, out);
    return rc == STORE_NOTFOUND ? STORE_CONFLICT : rc;
}

static int pg_webhook_get(store_conn_t *sc, int64_t user_id, int64_t id, arena_t *a,
                          webhook_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(id), uid = pg_num_i64(user_id);
    const char *p[] = {wid.s, uid.s};
    return one_webhook(c, W_GET, p, a, out);
}

static int pg_webhook_list(store_conn_t *sc, int64_t user_id, int64_t limit, int64_t offset,
                           arena_t *a, webhook_t **out, size_t *n, int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), l = pg_num_i64(limit), o = pg_num_i64(offset);
    const char *p[] = {uid.s, l.s, o.s};
    PGresult *r;
    if ((rc = run(c, W_LIST, p, &r)) != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    webhook_t *v = arena_alloc(a, (size_t)(rows ? rows : 1) * sizeof(*v));
    for (int i = 0; i < rows; i++)
        read_webhook(r, i, a, &v[i]);
    *out = v;
    *n = (size_t)rows;
    *total = rows ? pg_col_i64(r, 0, 11) : 0;
    PQclear(r);
    if (!rows && offset > 0) { /* a page past the last: the total still */
        webhook_t *all;
        size_t m;
        int64_t t;
        rc = pg_webhook_list(sc, user_id, 1, 0, a, &all, &m, &t);
        *total = rc == STORE_OK ? t : 0;
    }
    return rc;
}

static int pg_webhook_update(store_conn_t *sc, int64_t user_id, int64_t id,
                             const webhook_patch_t *pt, arena_t *a, webhook_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(id), uid = pg_num_i64(user_id), ev = pg_num_i64(pt->events),
             en = pg_num_i64(pt->enabled), now = pg_num_i64(now_us());
    const char *p[] = {wid.s, uid.s, pt->url, pt->description, ev.s, en.s, now.s};
    return one_webhook(c, W_UPDATE, p, a, out);
}

static int pg_webhook_delete(store_conn_t *sc, int64_t user_id, int64_t id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(id), uid = pg_num_i64(user_id);
    const char *p[] = {wid.s, uid.s};
    PGresult *r;
    if ((rc = run(c, W_DELETE, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

static int pg_webhook_rotate(store_conn_t *sc, int64_t user_id, int64_t id, const char *secret,
                             int64_t prev_until_us, arena_t *a, webhook_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(id), uid = pg_num_i64(user_id), until = pg_num_i64(prev_until_us),
             now = pg_num_i64(now_us());
    const char *p[] = {wid.s, uid.s, secret, until.s, now.s};
    return one_webhook(c, W_ROTATE, p, a, out);
}

static int pg_webhook_ping(store_conn_t *sc, int64_t user_id, int64_t id, int64_t now)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(id), uid = pg_num_i64(user_id), t = pg_num_i64(now);
    const char *p[] = {wid.s, uid.s, t.s};
    PGresult *r;
    if ((rc = run(c, W_PING, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

static int pg_webhook_deliveries(store_conn_t *sc, int64_t user_id, int64_t webhook_id,
                                 int64_t limit, int64_t offset, arena_t *a,
                                 webhook_delivery_t **out, size_t *n, int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(webhook_id), uid = pg_num_i64(user_id), l = pg_num_i64(limit),
             o = pg_num_i64(offset);
    const char *p[] = {wid.s, uid.s, l.s, o.s};
    PGresult *r;
    if ((rc = run(c, W_DELIVS, p, &r)) != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    webhook_delivery_t *v = arena_alloc(a, (size_t)(rows ? rows : 1) * sizeof(*v));
    for (int i = 0; i < rows; i++) {
        webhook_delivery_t *d = &v[i];
        d->id = pg_col_i64(r, i, 0);
        d->msg = pg_col_str(r, i, 1, a);
        d->type = pg_col_str(r, i, 2, a);
        d->record_id = pg_col_i64(r, i, 3);
        d->state = (wd_state_t)pg_col_i64(r, i, 4);
        d->attempts = pg_col_i64(r, i, 5);
        d->last_status = (int)pg_col_i64(r, i, 6);
        d->last_error = pg_col_str(r, i, 7, a);
        d->next_us = d->state == WD_PENDING ? pg_col_i64(r, i, 8) : 0;
        d->created_us = pg_col_i64(r, i, 9);
    }
    *out = v;
    *n = (size_t)rows;
    *total = rows ? pg_col_i64(r, 0, 10) : 0;
    PQclear(r);
    if (!rows && offset > 0) {
        webhook_delivery_t *all;
        size_t m;
        int64_t t;
        rc = pg_webhook_deliveries(sc, user_id, webhook_id, 1, 0, a, &all, &m, &t);
        *total = rc == STORE_OK ? t : 0;
    }
    return rc;
}

static int pg_webhook_retry(store_conn_t *sc, int64_t user_id, int64_t webhook_id, int64_t id,
                            int64_t now)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t wid = pg_num_i64(webhook_id), uid = pg_num_i64(user_id), did = pg_num_i64(id),
             t = pg_num_i64(now);
    const char *p[] = {wid.s, uid.s, did.s, t.s};
    PGresult *r;
    if ((rc = run(c, W_RETRY, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        rc = pg_col_i64(r, 0, 0) == WD_FAILED ? STORE_OK : STORE_CONFLICT;
    PQclear(r);
    return rc;
}

static int pg_webhook_claim(store_conn_t *sc, int64_t now, int64_t lease_until,
                            int per_endpoint, size_t max, arena_t *a, webhook_job_t *out,
                            size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t t = pg_num_i64(now), l = pg_num_i64(lease_until), pe = pg_num_i64(per_endpoint),
             m = pg_num_i64((int64_t)max);
    const char *p[] = {t.s, l.s, pe.s, m.s};
    PGresult *r;
    if ((rc = run(c, W_CLAIM, p, &r)) != STORE_OK)
        return rc;
    size_t len = 0;
    for (int row = 0; row < PQntuples(r) && len < max; row++) {
        webhook_job_t *j = &out[len++];
        memset(j, 0, sizeof(*j));
        j->id = pg_col_i64(r, row, 0);
        j->event_id = pg_col_i64(r, row, 1);
        j->webhook_id = pg_col_i64(r, row, 2);
        j->user_id = pg_col_i64(r, row, 3);
        j->attempts = pg_col_i64(r, row, 4);
        j->msg = pg_col_str(r, row, 5, a);
        j->type = pg_col_str(r, row, 6, a);
        int64_t k = pg_col_i64(r, row, 7);
        j->kind = k == 1 ? KIND_IMG : KIND_DOC;
        j->record_id = k < 0 ? 0 : pg_col_i64(r, row, 8);
        j->revision = pg_col_i64(r, row, 9);
        j->event_us = pg_col_i64(r, row, 10);
        j->body = pg_col_str(r, row, 11, a);
        j->url = pg_col_str(r, row, 12, a);
        j->secret = pg_col_str(r, row, 13, a);
        j->prev_secret = pg_col_str(r, row, 14, a);
        j->prev_until_us = pg_col_i64(r, row, 15);
        j->lease_until = lease_until;
    }
    PQclear(r);
    *n = len;
    return len ? STORE_OK : STORE_NOTFOUND;
}

/* One statement per event (PostgreSQL's writers do not wait on each other). */
static int pg_webhook_body(store_conn_t *sc, webhook_job_t *jobs, const char *const *bodies,
                           size_t n, arena_t *a)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        if (jobs[i].body)
            continue;
        pg_num_t e = pg_num_i64(jobs[i].event_id);
        const char *p[] = {e.s, bodies[i]};
        PGresult *r;
        if ((rc = run(c, W_BODY, p, &r)) != STORE_OK)
            break;
        if (PQntuples(r) == 0)
            rc = STORE_NOTFOUND;
        else
            jobs[i].body = pg_col_str(r, 0, 0, a);
        PQclear(r);
    }
    return rc;
}

static int pg_webhook_snapshot(store_conn_t *sc, const webhook_job_t *j, arena_t *a,
                               record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t e = pg_num_i64(j->event_id);
    const char *p[] = {e.s};
    PGresult *r;
    if ((rc = run(c, j->kind == KIND_IMG ? W_SNAP_IMG : W_SNAP_DOC, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        pg_row_record(r, 0, j->kind, a, out);
    PQclear(r);
    return rc;
}

/* One element of a PostgreSQL array literal: NULL, or the text quoted. */
static void array_elem(buf_t *b, const char *v)
{
    if (b->len > 1)
        buf_putc(b, ',');
    if (!v) {
        buf_puts(b, "NULL");
        return;
    }
    buf_putc(b, '"');
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_putc(b, '\\');
        buf_putc(b, *p);
    }
    buf_putc(b, '"');
}

/* The claim's outcomes in one statement (arrays of the n). */
static int pg_webhook_done(store_conn_t *sc, const webhook_job_t *js, const webhook_result_t *rs,
                           size_t n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    enum { A_ID, A_ST, A_STATUS, A_ERR, A_NEXT, A_LEASE, A_DIS, A_REL, A_N };
    buf_t a[A_N];
    for (int k = 0; k < A_N; k++) {
        buf_init(&a[k]);
        buf_putc(&a[k], '{');
    }
    for (size_t i = 0; i < n; i++) {
        const webhook_result_t *r = &rs[i];
        char num[32];
        snprintf(num, sizeof(num), "%lld", (long long)js[i].id);
        array_elem(&a[A_ID], num);
        snprintf(num, sizeof(num), "%d", (int)r->state);
        array_elem(&a[A_ST], num);
        snprintf(num, sizeof(num), "%d", r->status);
        array_elem(&a[A_STATUS], r->status > 0 ? num : NULL);
        array_elem(&a[A_ERR], r->error);
        snprintf(num, sizeof(num), "%lld", (long long)r->next_us);
        array_elem(&a[A_NEXT], num);
        snprintf(num, sizeof(num), "%lld", (long long)js[i].lease_until);
        array_elem(&a[A_LEASE], num);
        array_elem(&a[A_DIS], r->disable ? "t" : "f");
        array_elem(&a[A_REL], r->release ? "t" : "f");
    }
    for (int k = 0; k < A_N; k++)
        buf_putc(&a[k], '}');
    pg_num_t now = pg_num_i64(now_us());
    const char *p[] = {buf_cstr(&a[A_ID]),   buf_cstr(&a[A_ST]),    buf_cstr(&a[A_STATUS]),
                       buf_cstr(&a[A_ERR]),  buf_cstr(&a[A_NEXT]),  buf_cstr(&a[A_LEASE]),
                       buf_cstr(&a[A_DIS]),  now.s,                 buf_cstr(&a[A_REL])};
    PGresult *r;
    if ((rc = run(c, W_DONE, p, &r)) == STORE_OK) {
        rc = pg_col_i64(r, 0, 0) == (int64_t)n ? STORE_OK : STORE_STALE;
        PQclear(r);
    }
    for (int k = 0; k < A_N; k++)
        buf_free(&a[k]);
    return rc;
}

static int pg_webhook_sweep(store_conn_t *sc, int64_t before)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    /* an event without deliveries: swept, or dropped with its record (migration 18) */
    pg_num_t b = pg_num_i64(before), e = pg_num_i64(now_us() - 3600 * (int64_t)1000000);
    const char *p[] = {b.s, e.s};
    PGresult *r;
    if ((rc = run(c, W_SWEEP, p, &r)) == STORE_OK)
        PQclear(r);
    return rc;
}

static int pg_webhook_stats(store_conn_t *sc, int64_t *pending, int64_t *oldest_us)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = run(c, W_STATS, NULL, &r)) != STORE_OK)
        return rc;
    *pending = pg_col_i64(r, 0, 0);
    *oldest_us = pg_col_i64(r, 0, 1);
    PQclear(r);
    return STORE_OK;
}

const store_webhook_ops_t pg_webhook_ops = {
    .create = pg_webhook_create,
    .get = pg_webhook_get,
    .list = pg_webhook_list,
    .update = pg_webhook_update,
    .del = pg_webhook_delete,
    .rotate = pg_webhook_rotate,
    .ping = pg_webhook_ping,
    .deliveries = pg_webhook_deliveries,
    .retry = pg_webhook_retry,
    .claim = pg_webhook_claim,
    .body = pg_webhook_body,
    .snapshot = pg_webhook_snapshot,
    .done = pg_webhook_done,
    .sweep = pg_webhook_sweep,
    .stats = pg_webhook_stats,
};
