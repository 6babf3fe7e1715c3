/* pg_owner.c — this process's owner lock on PostgreSQL, so that the job leases of a
 * process that died are known dead at once instead of after --job-lease. (Also the
 * backend's open/close: close frees store_t.pooled_url.) The lock's connection is
 * always a direct one (store_t.url), never the pooled one: a session lock through a
 * transaction pooler would be held by whichever client next got that server.
 *
 * Every serving process has an owner id (a random 31-bit number, fixed for its life)
 * and holds the session-level advisory lock (PG_OWNER_NS, owner) on a connection of
 * its own (taken before its first claim). Each lease token it writes starts with
 * the owner id as 8 hex digits (job_t.token: 8 + 24 random hex digits), so the lease
 * names its owner without a schema change. PostgreSQL drops a session's advisory locks
 * when the session ends, however the process ended (kill -9 included: the server sees
 * the socket close). So a lease whose owner's lock is absent from pg_locks belongs to
 * a dead process: pg_owner_release_dead (run by the claimer at most once a second,
 * and at once by a starting process's first claim) frees those leases in one
 * statement and the job is claimed again without waiting for its lease.
 *
 * A process whose lock connection is lost (a database restart, a network cut) takes
 * its lock again before its next claim; meanwhile another process may take its jobs
 * over, which the tokens already make safe (the old holder's renew, complete and fail
 * answer STALE and do nothing). */
#include "store/pg_int.h"

#include "core/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RELEASE_EVERY_US 1000000LL /* between two releases of dead leases, per process */
/* A process releases others' leases only once it has held its own lock without a break
 * for SETTLE_US — and, when it had to take it again (its lock's connection was lost),
 * for a lease's renewal interval (a quarter of the lease, records/jobs.c) more: after a
 * database restart or a failover every process has lost its lock at once, and the first
 * one back must not take the jobs of the others. A live process that holds a lease renews it within that interval, and every
 * statement it runs takes its lock again first (pg_owner_touch), so by then every live
 * holder has its lock back — on a machine however slow, as long as the renewals keep
 * their interval (which the leases need anyway). A fixed 1.5 s alone was a guess at
 * "within moments": the cluster test saw a live process's leases released after a
 * failover on a loaded machine. */
#define SETTLE_US 1500000LL
#define TOUCH_EVERY_US 200000LL /* pg_owner_touch checks the lock at most this often */
#define LOCK_TRIES 8               /* owner ids tried when one is held by another session */

typedef struct {
    pthread_mutex_t mu;
    PGconn *conn;       /* holds the advisory lock; NULL until the first claim */
    unsigned owner;     /* 1 .. 2^31 - 1 */
    char hex[9];        /* owner as 8 hex digits: every lease token's prefix */
    int64_t next_release_us;
    int64_t held_since_us;     /* when the lock was (re)taken */
    bool retaken;              /* its connection was lost once: the lock was taken again */
    atomic_bool taken;         /* the lock was taken once: pg_owner_touch keeps it */
    atomic_llong next_touch_us;
} pg_owner_t;

static void pick_owner(pg_owner_t *o)
{
    char r[9];
    do {
        random_hex(r, 4);
        o->owner = (unsigned)strtoul(r, NULL, 16) & 0x7fffffffu;
    } while (o->owner == 0);
    snprintf(o->hex, sizeof(o->hex), "%08x", o->owner);
}

void pg_open(store_t *s)
{
    pg_owner_t *o = xcalloc(1, sizeof(*o));
    pthread_mutex_init(&o->mu, NULL);
    pick_owner(o);
    s->backend = o;
}

void pg_close(store_t *s)
{
    pg_owner_t *o = s->backend;
    if (!o)
        return;
    PQfinish(o->conn); /* the lock goes with the session */
    free(s->pooled_url);
    s->pooled_url = NULL;
    pthread_mutex_destroy(&o->mu);
    free(o);
    s->backend = NULL;
}

/* With o->mu held: a connection that holds the lock, or false. */
static bool hold_lock(pg_owner_t *o, const char *url)
{
    if (o->conn) {
        PQconsumeInput(o->conn); /* no round trip: sees a connection the server closed */
        if (PQstatus(o->conn) == CONNECTION_OK && PQtransactionStatus(o->conn) == PQTRANS_IDLE)
            return true;
        log_info("postgres: the owner lock's connection was lost; taking the lock again");
        PQfinish(o->conn);
        o->conn = NULL;
        o->retaken = true;
    }
    PGconn *pg = PQconnectdb(url);
    if (PQstatus(pg) != CONNECTION_OK) {
        PQfinish(pg);
        return false;
    }
    for (int i = 0; i < LOCK_TRIES; i++) {
        char ns[16], id[16];
        snprintf(ns, sizeof(ns), "%d", PG_OWNER_NS);
        snprintf(id, sizeof(id), "%u", o->owner);
        const char *p[] = {ns, id};
        PGresult *r = PQexecParams(pg, "SELECT pg_try_advisory_lock($1::int, $2::int)", 2, NULL,
                                   p, NULL, NULL, 0);
        bool ok = PQresultStatus(r) == PGRES_TUPLES_OK, got = ok && PQgetvalue(r, 0, 0)[0] == 't';
        PQclear(r);
        if (!ok)
            break;
        if (got) {
            o->conn = pg;
            o->held_since_us = now_us();
            atomic_store(&o->taken, true);
            return true;
        }
        pick_owner(o); /* another session holds this id (rare): another one */
    }
    PQfinish(pg);
    return false;
}

int pg_owner_prepare(pg_conn_t *c, char prefix[9], double lease_s)
{
    store_t *s = c->base.store;
    pg_owner_t *o = s->backend;
    pthread_mutex_lock(&o->mu);
    if (!hold_lock(o, s->url)) {
        pthread_mutex_unlock(&o->mu);
        return STORE_UNAVAILABLE;
    }
    memcpy(prefix, o->hex, 9);
    int64_t now = now_us();
    int64_t settle = SETTLE_US + (o->retaken ? (int64_t)(lease_s / 4 * 1e6) : 0);
    bool release = now >= o->next_release_us && now - o->held_since_us >= settle;
    if (release)
        o->next_release_us = now + RELEASE_EVERY_US;
    pthread_mutex_unlock(&o->mu);
    if (!release)
        return STORE_OK;
    pg_num_t tnow = pg_num_i64(now), ns = pg_num_i64(PG_OWNER_NS);
    const char *p[] = {tnow.s, prefix, ns.s};
    PGresult *r;
    int rc = pg_run(c, S_JOB_RELEASE_DEAD, p, &r);
    if (rc != STORE_OK)
        return rc;
    int64_t n = pg_affected(r);
    PQclear(r);
    if (n > 0)
        log_info("postgres: released %lld job lease%s of a stopped process", (long long)n,
                 n == 1 ? "" : "s");
    return STORE_OK;
}

void pg_owner_touch(pg_conn_t *c)
{
    store_t *s = c->base.store;
    pg_owner_t *o = s->backend;
    if (!o || !atomic_load(&o->taken))
        return;
    int64_t now = now_us();
    if (now < atomic_load(&o->next_touch_us))
        return;
    atomic_store(&o->next_touch_us, now + TOUCH_EVERY_US);
    if (pthread_mutex_trylock(&o->mu) != 0)
        return; /* another thread is at it */
    hold_lock(o, s->url);
    pthread_mutex_unlock(&o->mu);
}
