/* pg_quota.c — the PostgreSQL store's quota holds (store.h store_quota_hold, API.md
 * §19): a generation in flight of a user with a limit holds its units in quota_holds,
 * so every process's admission sees every process's generations. An admission is one
 * transaction: the user's row locked first (FOR NO KEY UPDATE: admissions of one user,
 * in any process, one at a time; inserts referencing the user are not blocked), then
 * one statement — in READ COMMITTED a new snapshot, taken after the lock, so it sees
 * every hold committed before — removes the ended holds, reads the usage and the holds
 * left, and inserts the new one when it fits. */
#include "store/pg_int.h"

enum { Q_LOCK, Q_HOLD, Q_BIND, Q_DROP, Q_COUNT };
_Static_assert(Q_COUNT <= 64, "pg_conn_t.quota_prepared has one bit per statement");

static const pg_stmt_t stmts[Q_COUNT] = {
    [Q_LOCK] = {"ink_q_lock", 1, "SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE"},
    /* $1 user, $2 kind, $3 period, $4 units, $5 limit, $6 now, $7 expiry. Ended: unbound
     * and expired, or bound to a record with no job left (its generation ended and was
     * counted in the same transaction). The DELETE's rows are still in the statement's
     * snapshot: left out of `live` by id. */
    [Q_HOLD] = {"ink_q_hold", 7,
                "WITH gone AS (DELETE FROM quota_holds h WHERE h.user_id = $1::bigint"
                "  AND ((h.record_id IS NULL AND h.expires_us < $6::bigint)"
                "  OR (h.record_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jobs j"
                "  WHERE j.kind = h.kind AND j.record_id = h.record_id))) RETURNING h.id),"
                " live AS (SELECT count(*) AS n, COALESCE(sum(units), 0) AS s FROM quota_holds"
                "  WHERE user_id = $1::bigint AND kind = $2::smallint"
                "  AND id NOT IN (SELECT id FROM gone)),"
                " used AS (SELECT COALESCE((SELECT CASE WHEN $2::smallint = 1 THEN images"
                "  ELSE words END FROM usage_months WHERE user_id = $1::bigint"
                "  AND period = $3::text), 0) AS u),"
                " ins AS (INSERT INTO quota_holds (user_id, kind, units, expires_us)"
                "  SELECT $1::bigint, $2::smallint, $4::bigint, $7::bigint FROM live, used"
                "  WHERE used.u < $5::bigint"
                "  AND (used.u + live.s + $4::bigint <= $5::bigint OR live.n = 0) RETURNING id)"
                " SELECT COALESCE((SELECT id FROM ins), 0), (SELECT u FROM used)"},
    [Q_BIND] = {"ink_q_bind", 2, "UPDATE quota_holds SET record_id = $2 WHERE id = $1"},
    [Q_DROP] = {"ink_q_drop", 1, "DELETE FROM quota_holds WHERE id = $1"},
};

static int run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->quota_prepared >> id) & 1;
    int rc = pg_run_named(c, stmts[id].name, stmts[id].sql, stmts[id].nparams, &prepared,
                          params, out);
    if (prepared)
        c->quota_prepared |= (uint64_t)1 << id;
    return rc;
}

int pg_quota_hold(store_conn_t *sc, const quota_hold_t *h, int64_t *hold_id, int64_t *used)
{
    pg_conn_t *c = pg_cast(sc);
    *hold_id = 0;
    *used = 0;
    int rc = pg_ready(c);
    if (rc != STORE_OK || (rc = pg_command(c, "BEGIN", "quota hold")) != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(h->user_id), kind = pg_num_i64(h->kind == KIND_IMG ? 1 : 0),
             units = pg_num_i64(h->units), limit = pg_num_i64(h->limit),
             now = pg_num_i64(h->now_us), exp = pg_num_i64(h->expires_us);
    const char *lock[] = {uid.s};
    PGresult *r = NULL;
    if ((rc = run(c, Q_LOCK, lock, &r)) == STORE_OK) {
        bool found = PQntuples(r) > 0;
        PQclear(r);
        r = NULL;
        if (!found)
            rc = STORE_NOTFOUND; /* the user is gone */
    }
    const char *p[] = {uid.s, kind.s, h->period, units.s, limit.s, now.s, exp.s};
    if (rc == STORE_OK && (rc = run(c, Q_HOLD, p, &r)) == STORE_OK) {
        if (PQntuples(r) == 1) {
            *hold_id = pg_col_i64(r, 0, 0);
            *used = pg_col_i64(r, 0, 1);
        }
        PQclear(r);
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "quota hold commit");
    if (rc != STORE_OK) {
        *hold_id = 0;
        pg_rollback(c);
    }
    return rc;
}

int pg_quota_hold_end(store_conn_t *sc, int64_t hold_id, int64_t record_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(hold_id), rec = pg_num_i64(record_id);
    const char *p[] = {id.s, rec.s};
    PGresult *r;
    rc = run(c, record_id > 0 ? Q_BIND : Q_DROP, p, &r);
    if (rc == STORE_OK)
        PQclear(r);
    return rc;
}
