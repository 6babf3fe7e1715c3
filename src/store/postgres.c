/* postgres.c — the PostgreSQL backend of store.h, over libpq: its ops table, the
 * connection, errors and retries, and the value helpers the other pg_*.c files share.
 *
 * How the parts fit (pg_int.h declares what the files share):
 *  - pg_conn_t is one libpq connection (one per thread, cached by store.c). Every
 *    operation starts with pg_ready(), which reconnects a broken connection (at most
 *    once every PG_RETRY_S seconds) or answers STORE_UNAVAILABLE.
 *  - Behind a transaction-pooling PgBouncer (store_t.pooled_url, --database-pooled)
 *    the statements' connections take no session state: statements are sent whole
 *    (unnamed, PQexecParams: one round trip, planned each time), transactions are
 *    single BEGIN..COMMIT exchanges, locks are transaction-scoped; the session-scoped
 *    things — LISTEN (pg_listen.c) and the owner's advisory lock (pg_owner.c) — keep
 *    direct connections to store_t.url.
 *  - Every statement is a prepared statement with parameters. The fixed ones live in
 *    pg_stmts[] (pg_stmts.c) and are prepared on first use; list queries (pg_lists.c)
 *    are assembled from fixed fragments chosen by the query's enum/bool fields (never
 *    from user text) and prepared under a name derived from that choice. A reconnect
 *    forgets them all.
 *  - pg_fail() sorts errors: connection-level → STORE_UNAVAILABLE (and the connection
 *    is marked broken), unique violation → STORE_CONFLICT, else STORE_ERROR, logged
 *    without user data.
 *  - pg_migrate() (pg_schema.c) applies the numbered migrations inside one transaction
 *    holding an advisory lock, so processes starting at once are safe.
 *  - records: pg_records.c; users, keys and usage: pg_users.c; jobs and the events of other processes:
 *    pg_jobs.c; rate limiting and idempotency keys: pg_limits.c; LISTEN: pg_listen.c.
 * Several server processes share the job queue: job_claim uses FOR UPDATE SKIP LOCKED. */
#include "store/pg_int.h"
#include "store/pg_listen.h"

#include "core/log.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG_RETRY_S 0.5 /* minimum pause between reconnect attempts */

/* ---- connection ------------------------------------------------------------------ */

/* Notices (e.g. "relation already exists, skipping") are not worth a line. */
static void pg_notice(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

/* Copies libpq's message (first line only) into err, unless it could show the URL's
 * password: when it contains it, or when the URL does not even parse (libpq then
 * quotes pieces of it). */
static void pg_conn_error(const char *url, const char *msg, char *err, size_t errlen)
{
    char line[512];
    size_t n = strcspn(msg, "\n");
    if (n >= sizeof(line))
        n = sizeof(line) - 1;
    memcpy(line, msg, n);
    line[n] = '\0';
    char *errmsg = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &errmsg);
    PQfreemem(errmsg);
    const char *pw = NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && o->val[0])
            pw = o->val;
    if (!opts)
        snprintf(err, errlen,
                 "postgres: malformed database URL (details withheld: it may hold a password)");
    else if (pw && strstr(line, pw))
        snprintf(err, errlen,
                 "postgres: cannot connect (details withheld: they hold the password)");
    else
        snprintf(err, errlen, "postgres: %s", line);
    PQconninfoFree(opts);
}

static store_conn_t *pg_connect(store_t *s, char *err, size_t errlen)
{
    /* Later values override earlier ones: the URL may set its own timeouts and
     * application_name; the client encoding is always UTF-8. Keepalives and
     * tcp_user_timeout notice a server that vanished without closing the connection. */
    const char *const keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval",
                                "keepalives_count", "tcp_user_timeout", "application_name",
                                "dbname", "client_encoding", NULL};
    const char *url = s->pooled_url ? s->pooled_url : s->url;
    const char *const vals[] = {"5", "30", "10", "3", "30000", "inkwell", url, "UTF8", NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (!pg) {
        snprintf(err, errlen, "postgres: out of memory");
        return NULL;
    }
    if (PQstatus(pg) != CONNECTION_OK) {
        pg_conn_error(url, PQerrorMessage(pg), err, errlen);
        PQfinish(pg);
        return NULL;
    }
    PQsetNoticeProcessor(pg, pg_notice, NULL);
    pg_conn_t *c = xcalloc(1, sizeof(*c));
    c->base.ops = &store_postgres_ops;
    c->base.store = s;
    c->pg = pg;
    c->last_try = -1e9;
    c->unnamed = s->pooled_url != NULL;
    return &c->base;
}

static void pg_disconnect(store_conn_t *sc)
{
    pg_conn_t *c = pg_cast(sc);
    if (!c)
        return;
    PQfinish(c->pg);
    pg_trgm_free(c->trgm);
    free(c);
}

static bool pg_conn_lost(pg_conn_t *c, const char *sqlstate)
{
    if (PQstatus(c->pg) == CONNECTION_BAD)
        return true;
    if (!sqlstate)
        return false;
    return strncmp(sqlstate, "08", 2) == 0 || strcmp(sqlstate, "57P01") == 0 ||
           strcmp(sqlstate, "57P02") == 0 || strcmp(sqlstate, "57P03") == 0;
}

/* Sorts a failed result (or none) into a store_rc_t. Logs real errors without user
 * data: data exceptions and constraint violations (classes 22, 23) can quote values,
 * so only their SQLSTATE and constraint are logged. */
static int pg_fail(pg_conn_t *c, const PGresult *res, const char *what)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (!res || pg_conn_lost(c, state)) {
        if (!c->broken) {
            const char *m = PQerrorMessage(c->pg);
            log_warn("postgres: connection lost (%s): %.*s", what, (int)strcspn(m, "\n"), m);
        }
        c->broken = true;
        return STORE_UNAVAILABLE;
    }
    if (state && strcmp(state, "23505") == 0)
        return STORE_CONFLICT;
    const char *constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
    const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    bool quotes_data = state && (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0);
    log_error("postgres: %s failed: SQLSTATE %s%s%s%s%s", what, state ? state : "?",
              constraint ? " constraint " : "", constraint ? constraint : "",
              quotes_data || !primary ? "" : ": ", quotes_data || !primary ? "" : primary);
    return STORE_ERROR;
}

/* An idle connection expects nothing from the server: it has something to read only
 * when the server ended it (a restart sends "terminating connection" and closes, which
 * arrive while the connection sits in the pool). Seeing that now, before any statement
 * is sent, lets the operation reconnect instead of failing on its first statement. */
static bool pg_closed_while_idle(pg_conn_t *c)
{
    struct pollfd p = {.fd = PQsocket(c->pg), .events = POLLIN};
    if (p.fd < 0)
        return true;
    return poll(&p, 1, 0) != 0;
}

/* Makes the connection usable: reconnects a broken one (not more than once every
 * PG_RETRY_S), forgetting every prepared statement. */
int pg_ready(pg_conn_t *c)
{
    if (!c->broken && PQstatus(c->pg) == CONNECTION_OK) {
        if (PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
            /* left over from a failed call: never run inside someone else's transaction */
            PGresult *r = PQexec(c->pg, "ROLLBACK");
            PQclear(r);
            if (PQstatus(c->pg) != CONNECTION_OK)
                c->broken = true;
        } else if (pg_closed_while_idle(c)) {
            log_info("postgres: the server closed an idle connection; reconnecting");
            c->broken = true;
        }
        if (!c->broken) {
            pg_owner_touch(c);
            return STORE_OK;
        }
    }
    double t = mono_s();
    if (t - c->last_try < PG_RETRY_S)
        return STORE_UNAVAILABLE;
    c->last_try = t;
    PQreset(c->pg);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        c->broken = true;
        return STORE_UNAVAILABLE;
    }
    c->broken = false;
    c->prepared = 0;
    c->users_prepared = 0;
    c->tpl_prepared = 0;
    c->wh_prepared = 0;
    memset(c->list_prepared, 0, sizeof(c->list_prepared));
    log_info("postgres: reconnected");
    pg_owner_touch(c);
    return STORE_OK;
}

/* Runs a statement without parameters or result (BEGIN, COMMIT, schema text). */
int pg_command(pg_conn_t *c, const char *sql, const char *what)
{
    PGresult *r = PQexec(c->pg, sql);
    int rc = STORE_OK;
    if (!r || (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK))
        rc = pg_fail(c, r, what);
    PQclear(r);
    return rc;
}

/* Ends a transaction that failed; nothing to do when the connection is gone. */
void pg_rollback(pg_conn_t *c)
{
    if (c->broken || PQstatus(c->pg) != CONNECTION_OK ||
        PQtransactionStatus(c->pg) == PQTRANS_IDLE)
        return;
    pg_command(c, "ROLLBACK", "rollback");
}

/* A statement PostgreSQL chose as the victim of a deadlock (40P01) or of a
 * serialization failure (40001) was undone whole. Outside a transaction block it
 * was alone in its transaction, so running it again is safe and is what the server
 * asks for; inside one, the caller's whole transaction is lost and it is the
 * caller's failure. (E.g. a DELETE that locks a record and then its job, while the
 * job's worker locks the job and then the record.) */
#define PG_VICTIM_TRIES 4
static bool pg_victim_alone(pg_conn_t *c, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return state && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0) &&
           PQtransactionStatus(c->pg) == PQTRANS_IDLE;
}

/* Prepares (once per connection) and runs a named statement. On STORE_OK *out holds a
 * result the caller clears. */
int pg_run_named(pg_conn_t *c, const char *name, const char *sql, int nparams,
                 bool *prepared, const char *const *params, PGresult **out)
{
    if (!*prepared && !c->unnamed) {
        PGresult *r = PQprepare(c->pg, name, sql, nparams, NULL);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
            int rc = pg_fail(c, r, name);
            PQclear(r);
            return rc;
        }
        PQclear(r);
        *prepared = true;
    }
    for (int attempt = 1;; attempt++) {
        PGresult *r = c->unnamed
                          ? PQexecParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0)
                          : PQexecPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
        ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            *out = r;
            return STORE_OK;
        }
        if (attempt < PG_VICTIM_TRIES && pg_victim_alone(c, r)) {
            PQclear(r);
            continue;
        }
        int rc = pg_fail(c, r, name);
        PQclear(r);
        return rc;
    }
}

int pg_run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->prepared >> id) & 1;
    int rc = pg_run_named(c, pg_stmts[id].name, pg_stmts[id].sql, pg_stmts[id].nparams, &prepared,
                          params, out);
    if (prepared)
        c->prepared |= (uint64_t)1 << id;
    return rc;
}

/* Rows changed by an INSERT/UPDATE/DELETE without RETURNING. */
int64_t pg_affected(PGresult *r)
{
    return strtoll(PQcmdTuples(r), NULL, 10);
}

pg_num_t pg_num_i64(int64_t v)
{
    pg_num_t n;
    snprintf(n.s, sizeof(n.s), "%" PRId64, v);
    return n;
}

pg_num_t pg_num_f64(double v)
{
    pg_num_t n;
    snprintf(n.s, sizeof(n.s), "%.17g", v);
    return n;
}

int64_t pg_lease_until(int64_t now, double lease_s)
{
    return now + (int64_t)(lease_s * 1e6);
}

int64_t pg_col_i64(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static bool pg_col_bool(const PGresult *r, int row, int col)
{
    return PQgetvalue(r, row, col)[0] == 't';
}

const char *pg_col_str(const PGresult *r, int row, int col, arena_t *a)
{
    if (PQgetisnull(r, row, col))
        return NULL;
    return arena_strndup(a, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

/* A row of DOC_COLS or IMG_COLS. */
void pg_row_record(const PGresult *r, int row, rec_kind_t kind, arena_t *a, record_t *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    out->id = pg_col_i64(r, row, 0);
    out->user_id = pg_col_i64(r, row, 1);
    out->name = pg_col_str(r, row, 2, a);
    out->favorite = pg_col_bool(r, row, 3);
    out->state = rec_state_parse(PQgetvalue(r, row, 4));
    out->error = pg_col_str(r, row, 5, a);
    out->created_us = pg_col_i64(r, row, 6);
    out->updated_us = pg_col_i64(r, row, 7);
    if (kind == KIND_DOC) {
        out->prompt = pg_col_str(r, row, 8, a);
        out->creativity = strtod(PQgetvalue(r, row, 9), NULL);
        out->template_id = (int)pg_col_i64(r, row, 10);
        out->result = pg_col_str(r, row, 11, a);
        out->words = pg_col_i64(r, row, 12);
        out->prompt_tokens = PQgetisnull(r, row, 13) ? -1 : pg_col_i64(r, row, 13);
        out->completion_tokens = PQgetisnull(r, row, 14) ? -1 : pg_col_i64(r, row, 14);
        out->truncated = pg_col_bool(r, row, 15);
        out->tone = pg_col_str(r, row, 17, a);
        out->language = pg_col_str(r, row, 18, a);
        out->length = pg_col_str(r, row, 19, a);
    } else {
        out->description = pg_col_str(r, row, 8, a);
        out->resolution = pg_col_str(r, row, 9, a);
        out->style = pg_col_str(r, row, 10, a);
        out->media_key = pg_col_str(r, row, 11, a);
        out->revised_prompt = pg_col_str(r, row, 12, a);
    }
    out->revision = pg_col_i64(r, row, 16);
    out->event_seq = pg_col_i64(r, row, 20);
    out->tags_json = pg_col_str(r, row, 21, a);
    out->has_draft = pg_col_bool(r, row, 22);
}

const store_ops_t store_postgres_ops = {
    .name = "postgres",
    .caps = STORE_CAP_SHARED,
    .list_probes = true,
    .open = pg_open,
    .close = pg_close,
    .record_get_probed = pg_record_get_probed,
    STORE_OPS_COMMON(pg),
    .job_progress = pg_job_progress,
    .record_partial = pg_record_partial,
    .notify = pg_notify,
    .listen_start = pg_listen_start,
    .listen_stop = pg_listen_stop,
};
