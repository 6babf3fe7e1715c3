/* sqlite_quota.c — the SQLite store's quota holds (store.h store_quota_hold, API.md
 * §19): a generation in flight of a user with a limit holds its units in quota_holds,
 * admitted in one BEGIN IMMEDIATE transaction (SQLite's one writer serialises every
 * admission). Rarely run (users with a limit only): statements prepared each time.
 * Part of the SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

/* ?1 user, ?2 now: the user's holds that ended (unbound and expired; bound to a record
 * that has no job left: its generation ended, counted in the same transaction) */
static const char ended_sql[] =
    "DELETE FROM quota_holds WHERE user_id = ?1 AND ((record_id IS NULL AND expires_us < ?2)"
    " OR (record_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jobs j"
    " WHERE j.kind = quota_holds.kind AND j.record_id = quota_holds.record_id)))";
/* ?1 user, ?2 kind, ?3 period: the usage of the kind, the holds and their units */
static const char held_sql[] =
    "SELECT coalesce((SELECT CASE WHEN ?2 = 1 THEN images ELSE words END FROM usage_months"
    " WHERE user_id = ?1 AND period = ?3), 0), count(*), coalesce(sum(units), 0)"
    " FROM quota_holds WHERE user_id = ?1 AND kind = ?2";
/* ?1 user, ?2 kind, ?3 units, ?4 expiry */
static const char insert_sql[] =
    "INSERT INTO quota_holds (user_id, kind, units, expires_us) VALUES (?1, ?2, ?3, ?4)"
    " RETURNING id";

/* Runs sql with up to four integer parameters and the text one at text_at (0: none);
 * the first row's first cols columns into out (zeros when no row). */
static int one(sq_conn_t *c, const char *sql, const int64_t *p, int np, int text_at,
               const char *text, int64_t *out, int cols)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(c, sql, &st, "quota hold");
    if (rc != STORE_OK)
        return rc;
    for (int i = 0; i < np; i++)
        sqlite3_bind_int64(st, i + 1, p[i]);
    if (text_at)
        sq_bind_text(st, text_at, text);
    for (int i = 0; i < cols; i++)
        out[i] = 0;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        for (int i = 0; i < cols; i++)
            out[i] = sqlite3_column_int64(st, i);
    while (src == SQLITE_ROW)
        src = sqlite3_step(st);
    if (src != SQLITE_DONE)
        rc = sq_error(c, src, "quota hold");
    sqlite3_finalize(st);
    return rc;
}

int sq_quota_hold(store_conn_t *conn, const quota_hold_t *h, int64_t *hold_id, int64_t *used)
{
    sq_conn_t *c = sq(conn);
    *hold_id = 0;
    *used = 0;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    int64_t kind = h->kind == KIND_IMG ? 1 : 0, held[3];
    int64_t p_ended[] = {h->user_id, h->now_us};
    int64_t p_held[] = {h->user_id, kind};
    rc = one(c, "SELECT count(*) FROM users WHERE id = ?1", p_ended, 1, 0, NULL, held, 1);
    if (rc == STORE_OK && held[0] == 0)
        rc = STORE_NOTFOUND; /* the user is gone */
    if (rc == STORE_OK)
        rc = one(c, ended_sql, p_ended, 2, 0, NULL, held, 0);
    if (rc == STORE_OK)
        rc = one(c, held_sql, p_held, 2, 3, h->period, held, 3);
    if (rc == STORE_OK) {
        *used = held[0];
        if (held[0] < h->limit && (held[0] + held[2] + h->units <= h->limit || held[1] == 0)) {
            int64_t p_ins[] = {h->user_id, kind, h->units, h->expires_us};
            rc = one(c, insert_sql, p_ins, 4, 0, NULL, hold_id, 1);
        }
    }
    return sq_tx_end(c, rc);
}

int sq_quota_hold_end(store_conn_t *conn, int64_t hold_id, int64_t record_id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    int64_t none[1];
    if (record_id > 0) {
        int64_t p[] = {hold_id, record_id};
        rc = one(c, "UPDATE quota_holds SET record_id = ?2 WHERE id = ?1", p, 2, 0, NULL, none, 0);
    } else {
        int64_t p[] = {hold_id};
        rc = one(c, "DELETE FROM quota_holds WHERE id = ?1", p, 1, 0, NULL, none, 0);
    }
    return sq_tx_end(c, rc);
}
