/* pg_commit.c — a COMMIT whose outcome the connection did not tell.
 *
 * When the connection breaks after COMMIT was sent, the transaction may or may not have
 * been applied: answering "failed" (503) for a record that was in fact stored is an
 * answer that is not true (a retry makes a second record). pg_commit_record finds out
 * instead: it reconnects, waits until the backend that ran the COMMIT is gone from
 * pg_stat_activity (from then on its transaction cannot change state), and looks the
 * transaction's first record up by its id — ids come from a sequence inside the
 * transaction and are never reused, so the row exists exactly when the transaction
 * committed. STORE_OK when it did; STORE_UNAVAILABLE when it did not, or when the
 * database cannot be asked within PG_COMMIT_ASK_S (then the answer is the honest 503 of
 * §6, "storage unavailable", and the outcome is logged as unknown).
 *
 * Behind PgBouncer the backend pid is the pooler's, not the server's: the wait for the
 * backend then ends at once and the look-up can, in a narrow window, run before the
 * server has finished the COMMIT (see docs/deployment.md). */
#include "store/pg_int.h"

#include "core/log.h"

#include <stdio.h>

#define PG_COMMIT_ASK_S 10.0 /* how long a request waits to learn its commit's outcome */

/* Runs a one-parameter query; *found: it returned a row. */
static int ask(pg_conn_t *c, const char *sql, const char *param, bool *found)
{
    const char *p[] = {param};
    PGresult *r = PQexecParams(c->pg, sql, 1, NULL, p, NULL, NULL, 0);
    int rc = STORE_OK;
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK) {
        *found = PQntuples(r) > 0;
    } else {
        if (PQstatus(c->pg) != CONNECTION_OK)
            c->broken = true;
        rc = STORE_UNAVAILABLE;
    }
    PQclear(r);
    return rc;
}

int pg_commit_record(pg_conn_t *c, const char *what, rec_kind_t kind, int64_t id)
{
    int pid = PQbackendPID(c->pg);
    int rc = pg_command(c, "COMMIT", what);
    if (rc != STORE_UNAVAILABLE || id <= 0)
        return rc;
    log_warn("postgres: %s: the connection broke after COMMIT was sent; asking the database "
             "whether it was applied", what);
    pg_num_t backend = pg_num_i64(pid), rid = pg_num_i64(id);
    const char *look = kind == KIND_IMG ? "SELECT 1 FROM images WHERE id = $1::bigint"
                                        : "SELECT 1 FROM documents WHERE id = $1::bigint";
    for (double end = mono_s() + PG_COMMIT_ASK_S; mono_s() < end; sleep_ms(100)) {
        bool running = true, stored = false;
        if (pg_ready(c) != STORE_OK ||
            ask(c, "SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", backend.s,
                &running) != STORE_OK ||
            running || ask(c, look, rid.s, &stored) != STORE_OK)
            continue;
        log_info("postgres: %s: the COMMIT %s", what, stored ? "was applied" : "was not applied");
        return stored ? STORE_OK : STORE_UNAVAILABLE;
    }
    log_warn("postgres: %s: the COMMIT's outcome is unknown (the database could not be asked "
             "in %.0f s)", what, PG_COMMIT_ASK_S);
    return STORE_UNAVAILABLE;
}
