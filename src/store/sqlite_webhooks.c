/* sqlite_webhooks.c — webhooks in the SQLite store (store_webhooks.h, API.md §22):
 * endpoints, pings, the delivery log and the workers' claims. The events themselves are
 * written by migration 24's triggers, in the transaction of the change they report.
 * Its statements are its own (sq_conn_t.wh[], prepared on first use). */
#include "store/sqlite_int.h"

#include <string.h>

enum {
    W_INSERT, W_GET, W_LIST, W_COUNT, W_UPDATE, W_DEL_DELIV, W_DELETE, W_ROTATE,
    W_PING_EVENT, W_PING_DELIV, W_DELIVS, W_DELIV_COUNT, W_RETRY, W_DELIV_STATE, W_CLAIM_EP, W_CLAIM,
    W_CLAIM_INFO, W_BODY, W_SNAP_DOC, W_SNAP_IMG, W_DONE, W_RELEASE, W_DISABLE, W_SWEEP_DELIV, W_SWEEP_EVENTS, W_STATS,
    W_STMT_COUNT
};
_Static_assert(W_STMT_COUNT <= SQ_WH_STMTS, "sq_conn_t.wh has a slot per statement");

#define WH_COLS                                                                            \
    "id, user_id, url, description, events, enabled, secret, prev_secret, prev_until_us, "  \
    "created_us, updated_us"

static const char *const sql[W_STMT_COUNT] = {
    /* ?6 the most a user keeps: no row when that many exist already */
    [W_INSERT] = "INSERT INTO webhooks(user_id, url, description, events, enabled, secret, "
                 "prev_until_us, created_us, updated_us) SELECT ?1, ?2, ?3, ?4, 1, ?5, 0, ?7, ?7 "
                 "WHERE (SELECT count(*) FROM webhooks WHERE user_id = ?1) < ?6 RETURNING " WH_COLS,
    [W_GET] = "SELECT " WH_COLS " FROM webhooks WHERE id = ?1 AND user_id = ?2",
    [W_LIST] = "SELECT " WH_COLS " FROM webhooks WHERE user_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3",
    [W_COUNT] = "SELECT count(*) FROM webhooks WHERE user_id = ?1",
    [W_UPDATE] = "UPDATE webhooks SET url = coalesce(?3, url), "
                 "description = coalesce(?4, description), "
                 "events = CASE WHEN ?5 >= 0 THEN ?5 ELSE events END, "
                 "enabled = CASE WHEN ?6 >= 0 THEN ?6 ELSE enabled END, updated_us = ?7 "
                 "WHERE id = ?1 AND user_id = ?2 RETURNING " WH_COLS,
    [W_DEL_DELIV] = "DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND user_id = ?2",
    [W_DELETE] = "DELETE FROM webhooks WHERE id = ?1 AND user_id = ?2",
    [W_ROTATE] = "UPDATE webhooks SET prev_secret = secret, prev_until_us = ?4, secret = ?3, "
                 "updated_us = ?5 WHERE id = ?1 AND user_id = ?2 RETURNING " WH_COLS,
    [W_PING_EVENT] = "INSERT INTO webhook_events(msg, user_id, type, kind, record_id, revision, "
                     "created_us) SELECT 'msg_' || lower(hex(randomblob(12))), user_id, 'ping', "
                     "-1, id, 0, ?3 FROM webhooks WHERE id = ?1 AND user_id = ?2",
    [W_PING_DELIV] = "INSERT INTO webhook_deliveries(event_id, webhook_id, user_id, kind, "
                     "record_id, state, attempts, next_us, lease_us, created_us) "
                     "VALUES (?4, ?1, ?2, -1, 0, 0, 0, ?3, 0, ?3)",
    [W_DELIVS] = "SELECT d.id, e.msg, e.type, d.record_id, d.state, d.attempts, d.last_status, "
                 "d.last_error, d.next_us, d.created_us FROM webhook_deliveries d "
                 "JOIN webhook_events e ON e.id = d.event_id WHERE d.webhook_id = ?1 "
                 "AND d.user_id = ?2 ORDER BY d.id DESC LIMIT ?3 OFFSET ?4",
    [W_DELIV_COUNT] = "SELECT count(*) FROM webhook_deliveries WHERE webhook_id = ?1 AND user_id = ?2",
    [W_RETRY] = "UPDATE webhook_deliveries SET state = 0, next_us = ?4, lease_us = 0 "
                "WHERE id = ?3 AND webhook_id = ?1 AND user_id = ?2 AND state = 2",
    [W_DELIV_STATE] = "SELECT state FROM webhook_deliveries WHERE id = ?3 AND webhook_id = ?1 "
                      "AND user_id = ?2",
    /* A claim is of one endpoint's deliveries: one with a due delivery and room for one
     * more claim (fewer than ?2 distinct leases held now, ?1), chosen at random; then its
     * due ones in order (the index of migration 27), so no claim scans another endpoint's
     * backlog, nor any when every endpoint is busy. */
    [W_CLAIM_EP] = "SELECT w.id FROM webhooks w WHERE w.enabled = 1 AND EXISTS (SELECT 1 FROM "
                   "webhook_deliveries d WHERE d.webhook_id = w.id AND d.state = 0 AND "
                   "d.next_us <= ?1) AND (SELECT count(DISTINCT q.lease_us) FROM "
                   "webhook_deliveries q WHERE q.webhook_id = w.id AND q.state = 0 AND "
                   "q.lease_us >= ?1) < ?2 ORDER BY random() LIMIT 1",
    /* ?1 now, ?2 the lease's end (the claim's name), ?3 the endpoint, ?4 the most claimed */
    [W_CLAIM] = "UPDATE webhook_deliveries SET lease_us = ?2 WHERE id IN (SELECT d.id FROM "
                "webhook_deliveries d WHERE d.webhook_id = ?3 AND d.state = 0 AND "
                "d.next_us <= ?1 AND d.lease_us < ?1 AND (d.kind < 0 OR NOT EXISTS (SELECT 1 "
                "FROM webhook_deliveries p WHERE p.webhook_id = d.webhook_id AND p.kind = d.kind "
                "AND p.record_id = d.record_id AND p.state = 0 AND p.id < d.id)) "
                "ORDER BY d.next_us, d.id LIMIT ?4) "
                "RETURNING id, event_id, webhook_id, user_id, attempts",
    [W_CLAIM_INFO] = "SELECT e.msg, e.type, e.kind, e.record_id, e.revision, e.created_us, e.body, "
                     "w.url, w.secret, w.prev_secret, w.prev_until_us FROM webhook_events e, "
                     "webhooks w WHERE e.id = ?1 AND w.id = ?2",
    [W_SNAP_DOC] = "SELECT " DOC_COLS " FROM webhook_snap_docs WHERE event_id = ?1",
    [W_SNAP_IMG] = "SELECT " IMG_COLS " FROM webhook_snap_imgs WHERE event_id = ?1",
    [W_BODY] = "UPDATE webhook_events SET body = coalesce(body, ?2) WHERE id = ?1 RETURNING body",
    [W_DONE] = "UPDATE webhook_deliveries SET state = ?2, attempts = attempts + 1, "
               "last_status = ?3, last_error = ?4, next_us = ?5, lease_us = 0 "
               "WHERE id = ?1 AND lease_us = ?6 AND state = 0",
    [W_RELEASE] = "UPDATE webhook_deliveries SET lease_us = 0 WHERE id = ?1 AND lease_us = ?6 "
                  "AND state = 0",
    [W_DISABLE] = "UPDATE webhooks SET enabled = 0, updated_us = ?2 WHERE id = ?1",
    /* The sweeps go by id (no index by time or event: migration 32): the deliveries
     * before the first young one (ids and times rise together), then the events before
     * the first delivery's (a delivery is written with its event, in id order: one
     * writer), so none that a delivery left names. */
    [W_SWEEP_DELIV] = "DELETE FROM webhook_deliveries WHERE created_us < ?1 AND id < "
                      "coalesce((SELECT id FROM webhook_deliveries WHERE created_us >= ?1 "
                      "ORDER BY id LIMIT 1), 9223372036854775807)",
    [W_SWEEP_EVENTS] = "DELETE FROM webhook_events WHERE created_us < ?1 AND id < "
                       "coalesce((SELECT event_id FROM webhook_deliveries ORDER BY id LIMIT 1), "
                       "9223372036854775807)",
    [W_STATS] = "SELECT count(*), coalesce(min(created_us), 0) FROM webhook_deliveries "
                "WHERE state = 0",
};

static int stmt(sq_conn_t *c, int id, sqlite3_stmt **out)
{
    if (!c->wh[id]) {
        int rc = sq_prepare(c, sql[id], &c->wh[id], "webhooks prepare");
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->wh[id];
    return STORE_OK;
}

static void read_webhook(sqlite3_stmt *st, arena_t *a, webhook_t *w)
{
    w->id = sqlite3_column_int64(st, 0);
    w->user_id = sqlite3_column_int64(st, 1);
    w->url = sq_col_text(st, 2, a);
    w->description = sq_col_text(st, 3, a);
    w->events = sqlite3_column_int64(st, 4);
    w->enabled = sqlite3_column_int(st, 5) != 0;
    w->secret = sq_col_text(st, 6, a);
    w->prev_secret = sq_col_text(st, 7, a);
    w->prev_until_us = sqlite3_column_int64(st, 8);
    w->created_us = sqlite3_column_int64(st, 9);
    w->updated_us = sqlite3_column_int64(st, 10);
}

static int one_webhook(sq_conn_t *c, sqlite3_stmt *st, const char *what, arena_t *a,
                       webhook_t *out)
{
    int rc = sq_step_row(c, st, what);
    if (rc == STORE_OK) {
        read_webhook(st, a, out);
        sq_stmt_done(st);
    }
    return rc;
}

/* One integer of a one-row statement (bound by the caller). */
static int one_int(sq_conn_t *c, sqlite3_stmt *st, const char *what, int64_t *out)
{
    int rc = sq_step_row(c, st, what);
    if (rc == STORE_OK) {
        *out = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
    }
    return rc;
}

static int sq_webhook_create(store_conn_t *conn, const webhook_t *in, int max, arena_t *a,
                             webhook_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_INSERT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, in->user_id);
        sq_bind_text(st, 2, in->url);
        sq_bind_text(st, 3, in->description);
        sqlite3_bind_int64(st, 4, in->events);
        sq_bind_text(st, 5, in->secret);
        sqlite3_bind_int(st, 6, max);
        sqlite3_bind_int64(st, 7, now_us());
        rc = one_webhook(c, st, "webhook_create", a, out);
        if (rc == STORE_NOTFOUND)
            rc = STORE_CONFLICT;
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_get(store_conn_t *conn, int64_t user_id, int64_t id, arena_t *a,
                          webhook_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, W_GET, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    return one_webhook(c, st, "webhook_get", a, out);
}

static int sq_webhook_list(store_conn_t *conn, int64_t user_id, int64_t limit, int64_t offset,
                           arena_t *a, webhook_t **out, size_t *n, int64_t *total)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_COUNT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        rc = one_int(c, st, "webhook_list", total);
    }
    if (rc == STORE_OK && (rc = stmt(c, W_LIST, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        sqlite3_bind_int64(st, 2, limit);
        sqlite3_bind_int64(st, 3, offset);
        webhook_t *v = arena_alloc(a, (size_t)(limit > 0 ? limit : 1) * sizeof(*v));
        size_t len = 0;
        int src;
        while ((src = sqlite3_step(st)) == SQLITE_ROW && len < (size_t)limit)
            read_webhook(st, a, &v[len++]);
        rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "webhook_list");
        sq_stmt_done(st);
        *out = v;
        *n = len;
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_update(store_conn_t *conn, int64_t user_id, int64_t id,
                             const webhook_patch_t *p, arena_t *a, webhook_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_UPDATE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sq_bind_text(st, 3, p->url);
        sq_bind_text(st, 4, p->description);
        sqlite3_bind_int64(st, 5, p->events);
        sqlite3_bind_int(st, 6, p->enabled);
        sqlite3_bind_int64(st, 7, now_us());
        rc = one_webhook(c, st, "webhook_update", a, out);
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_delete(store_conn_t *conn, int64_t user_id, int64_t id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    for (int i = W_DEL_DELIV; rc == STORE_OK && i <= W_DELETE; i++) {
        if ((rc = stmt(c, i, &st)) != STORE_OK)
            break;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        rc = sq_run(c, st, "webhook_delete");
        if (rc == STORE_OK && i == W_DELETE && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_rotate(store_conn_t *conn, int64_t user_id, int64_t id,
                             const char *secret, int64_t prev_until_us, arena_t *a,
                             webhook_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_ROTATE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sq_bind_text(st, 3, secret);
        sqlite3_bind_int64(st, 4, prev_until_us);
        sqlite3_bind_int64(st, 5, now_us());
        rc = one_webhook(c, st, "webhook_rotate", a, out);
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_ping(store_conn_t *conn, int64_t user_id, int64_t id, int64_t now)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_PING_EVENT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, now);
        rc = sq_run(c, st, "webhook_ping");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_NOTFOUND;
    }
    if (rc == STORE_OK && (rc = stmt(c, W_PING_DELIV, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, now);
        sqlite3_bind_int64(st, 4, sqlite3_last_insert_rowid(c->db));
        rc = sq_run(c, st, "webhook_ping");
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_deliveries(store_conn_t *conn, int64_t user_id, int64_t webhook_id,
                                 int64_t limit, int64_t offset, arena_t *a,
                                 webhook_delivery_t **out, size_t *n, int64_t *total)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_DELIV_COUNT, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, webhook_id);
        sqlite3_bind_int64(st, 2, user_id);
        rc = one_int(c, st, "webhook_deliveries", total);
    }
    if (rc == STORE_OK && (rc = stmt(c, W_DELIVS, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, webhook_id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, limit);
        sqlite3_bind_int64(st, 4, offset);
        webhook_delivery_t *v = arena_alloc(a, (size_t)(limit > 0 ? limit : 1) * sizeof(*v));
        size_t len = 0;
        int src;
        while ((src = sqlite3_step(st)) == SQLITE_ROW && len < (size_t)limit) {
            webhook_delivery_t *d = &v[len++];
            d->id = sqlite3_column_int64(st, 0);
            d->msg = sq_col_text(st, 1, a);
            d->type = sq_col_text(st, 2, a);
            d->record_id = sqlite3_column_int64(st, 3);
            d->state = (wd_state_t)sqlite3_column_int(st, 4);
            d->attempts = sqlite3_column_int64(st, 5);
            d->last_status = sqlite3_column_int(st, 6);
            d->last_error = sq_col_text(st, 7, a);
            d->next_us = d->state == WD_PENDING ? sqlite3_column_int64(st, 8) : 0;
            d->created_us = sqlite3_column_int64(st, 9);
        }
        rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK
                                                    : sq_error(c, src, "webhook_deliveries");
        sq_stmt_done(st);
        *out = v;
        *n = len;
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_retry(store_conn_t *conn, int64_t user_id, int64_t webhook_id, int64_t id,
                            int64_t now)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_RETRY, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, webhook_id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, id);
        sqlite3_bind_int64(st, 4, now);
        rc = sq_run(c, st, "webhook_retry");
    }
    if (rc == STORE_OK && sqlite3_changes(c->db) == 0 &&
        (rc = stmt(c, W_DELIV_STATE, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, webhook_id);
        sqlite3_bind_int64(st, 2, user_id);
        sqlite3_bind_int64(st, 3, id);
        int64_t state;
        rc = one_int(c, st, "webhook_retry", &state);
        if (rc == STORE_OK)
            rc = STORE_CONFLICT; /* there, but not failed */
    }
    return sq_tx_end(c, rc);
}

/* A claimed delivery's event and endpoint; an event gone (never) ends the delivery. */
static int claim_info(sq_conn_t *c, arena_t *a, webhook_job_t *out)
{
    sqlite3_stmt *st;
    int rc = stmt(c, W_CLAIM_INFO, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, out->event_id);
    sqlite3_bind_int64(st, 2, out->webhook_id);
    if ((rc = sq_step_row(c, st, "webhook_claim")) == STORE_OK) {
        out->msg = sq_col_text(st, 0, a);
        out->type = sq_col_text(st, 1, a);
        int k = sqlite3_column_int(st, 2);
        out->kind = k == 1 ? KIND_IMG : KIND_DOC;
        out->record_id = k < 0 ? 0 : sqlite3_column_int64(st, 3);
        out->revision = sqlite3_column_int64(st, 4);
        out->event_us = sqlite3_column_int64(st, 5);
        out->body = sq_col_text(st, 6, a);
        out->url = sq_col_text(st, 7, a);
        out->secret = sq_col_text(st, 8, a);
        out->prev_secret = sq_col_text(st, 9, a);
        out->prev_until_us = sqlite3_column_int64(st, 10);
        sq_stmt_done(st);
    } else if (rc == STORE_NOTFOUND) {
        sqlite3_stmt *f;
        if ((rc = sq_prepare(c, "UPDATE webhook_deliveries SET state = 2, lease_us = 0, "
                                "last_error = 'its event is gone' WHERE id = ?1",
                             &f, "webhook_claim")) == STORE_OK) {
            sqlite3_bind_int64(f, 1, out->id);
            rc = sq_run(c, f, "webhook_claim");
            sqlite3_finalize(f);
        }
        if (rc == STORE_OK)
            rc = STORE_NOTFOUND;
    }
    return rc;
}

static int sq_webhook_claim(store_conn_t *conn, int64_t now, int64_t lease_until,
                            int per_endpoint, size_t max, arena_t *a, webhook_job_t *out,
                            size_t *n)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    size_t len = 0;
    int64_t ep = 0;
    if ((rc = stmt(c, W_CLAIM_EP, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, now);
        sqlite3_bind_int(st, 2, per_endpoint);
        rc = one_int(c, st, "webhook_claim", &ep);
    }
    if (rc == STORE_OK && (rc = stmt(c, W_CLAIM, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, now);
        sqlite3_bind_int64(st, 2, lease_until);
        sqlite3_bind_int64(st, 3, ep);
        sqlite3_bind_int64(st, 4, (int64_t)max);
        int src;
        while ((src = sqlite3_step(st)) == SQLITE_ROW && len < max) {
            webhook_job_t *j = &out[len++];
            memset(j, 0, sizeof(*j));
            j->id = sqlite3_column_int64(st, 0);
            j->event_id = sqlite3_column_int64(st, 1);
            j->webhook_id = sqlite3_column_int64(st, 2);
            j->user_id = sqlite3_column_int64(st, 3);
            j->attempts = sqlite3_column_int64(st, 4);
            j->lease_until = lease_until;
        }
        rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "webhook_claim");
        sq_stmt_done(st);
    }
    size_t kept = 0;
    for (size_t i = 0; rc == STORE_OK && i < len; i++) {
        int irc = claim_info(c, a, &out[i]);
        if (irc == STORE_OK)
            out[kept++] = out[i];
        else if (irc != STORE_NOTFOUND)
            rc = irc;
    }
    if ((rc = sq_tx_end(c, rc == STORE_NOTFOUND ? STORE_OK : rc)) != STORE_OK)
        return rc;
    *n = kept;
    return kept ? STORE_OK : STORE_NOTFOUND;
}

static int sq_webhook_body(store_conn_t *conn, webhook_job_t *jobs, const char *const *bodies,
                           size_t n, arena_t *a)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        if (jobs[i].body || (rc = stmt(c, W_BODY, &st)) != STORE_OK)
            continue;
        sqlite3_bind_int64(st, 1, jobs[i].event_id);
        sq_bind_text(st, 2, bodies[i]);
        if ((rc = sq_step_row(c, st, "webhook_body")) == STORE_OK) {
            jobs[i].body = sq_col_text(st, 0, a);
            sq_stmt_done(st);
        }
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_snapshot(store_conn_t *conn, const webhook_job_t *j, arena_t *a,
                               record_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, j->kind == KIND_IMG ? W_SNAP_IMG : W_SNAP_DOC, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, j->event_id);
    if ((rc = sq_step_row(c, st, "webhook_snapshot")) == STORE_OK) {
        rc = sq_read_record(st, j->kind, a, out);
        sq_stmt_done(st);
    }
    return rc;
}

static int sq_webhook_done(store_conn_t *conn, const webhook_job_t *js,
                           const webhook_result_t *rs, size_t n)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    bool stale = false;
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        const webhook_job_t *j = &js[i];
        const webhook_result_t *r = &rs[i];
        if ((rc = stmt(c, r->release ? W_RELEASE : W_DONE, &st)) != STORE_OK)
            break;
        sqlite3_bind_int64(st, 1, j->id);
        sqlite3_bind_int64(st, 6, j->lease_until);
        if (!r->release) {
            sqlite3_bind_int(st, 2, (int)r->state);
            if (r->status > 0)
                sqlite3_bind_int(st, 3, r->status);
            else
                sqlite3_bind_null(st, 3);
            sq_bind_text(st, 4, r->error);
            sqlite3_bind_int64(st, 5, r->next_us);
        }
        rc = sq_run(c, st, "webhook_done");
        if (rc != STORE_OK || sqlite3_changes(c->db) == 0) {
            stale = stale || rc == STORE_OK;
            continue; /* its lease has gone: the outcome is another claim's now */
        }
        if (r->disable && (rc = stmt(c, W_DISABLE, &st)) == STORE_OK) {
            sqlite3_bind_int64(st, 1, j->webhook_id);
            sqlite3_bind_int64(st, 2, now_us());
            rc = sq_run(c, st, "webhook_done");
        }
    }
    rc = sq_tx_end(c, rc);
    return rc == STORE_OK && stale ? STORE_STALE : rc;
}

static int sq_webhook_sweep(store_conn_t *conn, int64_t before)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, W_SWEEP_DELIV, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, before);
        rc = sq_run(c, st, "webhook_sweep");
    }
    if (rc == STORE_OK && (rc = stmt(c, W_SWEEP_EVENTS, &st)) == STORE_OK) {
        /* an event without deliveries: swept, or dropped with its record (migration 24) */
        sqlite3_bind_int64(st, 1, now_us() - 3600 * (int64_t)1000000);
        rc = sq_run(c, st, "webhook_sweep");
    }
    return sq_tx_end(c, rc);
}

static int sq_webhook_stats(store_conn_t *conn, int64_t *pending, int64_t *oldest_us)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = stmt(c, W_STATS, &st);
    if (rc != STORE_OK)
        return rc;
    if ((rc = sq_step_row(c, st, "webhook_stats")) == STORE_OK) {
        *pending = sqlite3_column_int64(st, 0);
        *oldest_us = sqlite3_column_int64(st, 1);
        sq_stmt_done(st);
    }
    return rc;
}

const store_webhook_ops_t sq_webhook_ops = {
    .create = sq_webhook_create,
    .get = sq_webhook_get,
    .list = sq_webhook_list,
    .update = sq_webhook_update,
    .del = sq_webhook_delete,
    .rotate = sq_webhook_rotate,
    .ping = sq_webhook_ping,
    .deliveries = sq_webhook_deliveries,
    .retry = sq_webhook_retry,
    .claim = sq_webhook_claim,
    .body = sq_webhook_body,
    .snapshot = sq_webhook_snapshot,
    .done = sq_webhook_done,
    .sweep = sq_webhook_sweep,
    .stats = sq_webhook_stats,
};
