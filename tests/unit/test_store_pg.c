/* test_store_pg.c — what only the PostgreSQL backend has to show (the generic suite,
 * test_store.c, covers the behaviour both backends share):
 *  - migrate from several connections at once on a fresh database;
 *  - job claims from two connections never take the same job (FOR UPDATE SKIP LOCKED),
 *    and a claim skips a job another transaction holds locked instead of waiting;
 *  - outages: a killed backend, and (with INKWELL_TEST_PG_DIR) a restart of the whole
 *    cluster through scripts/pg-test.sh: calls answer STORE_UNAVAILABLE meanwhile, the
 *    connection comes back by itself and its prepared statements work again;
 *  - connection errors and logged errors carry no password and no user data.
 * Needs INKWELL_TEST_PG_URL (an admin URL, e.g. from scripts/pg-test.sh start DIR); every
 * test makes its own database and drops it. */
#include "core/log.h"
#include "store/store_int.h" /* the suite calls the backend's ops */
#include "test.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_CLAIM_JOBS 300

static const char *admin_url;

/* ---- databases ------------------------------------------------------------------- */

/* admin_url with its database replaced by name. */
static char *url_with_db(const char *url, const char *name)
{
    const char *scheme = strstr(url, "://");
    const char *host = scheme ? scheme + 3 : url;
    const char *query = strchr(host, '?');
    const char *path = strchr(host, '/');
    if (path && query && path > query)
        path = NULL;
    size_t head = path ? (size_t)(path - url) : query ? (size_t)(query - url) : strlen(url);
    buf_t b;
    buf_init(&b);
    buf_append(&b, url, head);
    buf_printf(&b, "/%s%s", name, query ? query : "");
    return buf_steal(&b);
}

/* Runs sql (with up to 2 text parameters) on url; returns the first column of the
 * first row as an integer, 0 when there is none, -1 on error. */
static int64_t sql_int(const char *url, const char *sql, const char *p1, const char *p2)
{
    PGconn *pg = PQconnectdb(url);
    int64_t v = -1;
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "test: cannot connect: %s", PQerrorMessage(pg));
    } else {
        const char *p[] = {p1, p2};
        int n = p2 ? 2 : p1 ? 1 : 0;
        PGresult *r = PQexecParams(pg, sql, n, NULL, p, NULL, NULL, 0);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_TUPLES_OK)
            v = PQntuples(r) && !PQgetisnull(r, 0, 0) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
        else if (st == PGRES_COMMAND_OK)
            v = 0;
        else
            fprintf(stderr, "test: %s: %s", sql, PQerrorMessage(pg));
        PQclear(r);
    }
    PQfinish(pg);
    return v;
}

typedef struct {
    char name[64];
    char *url;
} testdb_t;

static bool db_create(testdb_t *db)
{
    char hex[13], sql[128];
    random_hex(hex, 6);
    snprintf(db->name, sizeof(db->name), "inkwell_pgtest_%d_%s", (int)getpid(), hex);
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", db->name); /* our own name, no user text */
    db->url = url_with_db(admin_url, db->name);
    bool ok = sql_int(admin_url, sql, NULL, NULL) == 0;
    CHECK_MSG(ok, "cannot create database %s", db->name);
    return ok;
}

static void db_drop(testdb_t *db)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db->name);
    CHECK_INT(sql_int(admin_url, sql, NULL, NULL), 0);
    free(db->url);
    db->url = NULL;
}

/* A migrated store on db with this thread's connection. */
static store_conn_t *open_migrated(testdb_t *db, store_t **s)
{
    char err[256] = "";
    *s = store_open(db->url, err, sizeof(err));
    CHECK_MSG(*s != NULL, "store_open: %s", err);
    if (!*s)
        return NULL;
    store_conn_t *c = store_conn(*s, err, sizeof(err));
    CHECK_MSG(c != NULL, "store_conn: %s", err);
    if (c) {
        CHECK_STR(c->ops->name, "postgres");
        CHECK_INT(c->ops->migrate(c), STORE_OK);
    }
    return c;
}

static int64_t make_doc(store_conn_t *c, int64_t uid, const char *name, int64_t *job)
{
    record_t r = {.kind = KIND_DOC, .user_id = uid, .name = name, .prompt = "p",
                  .creativity = 0.5, .template_id = 1};
    int64_t j = 0;
    CHECK_INT(c->ops->record_create(c, &r, NULL, &j), STORE_OK);
    if (job)
        *job = j;
    return r.id;
}

/* ---- migrations ------------------------------------------------------------------ */

typedef struct {
    const char *url;
    pthread_barrier_t *start;
    int rc;
} migrator_t;

/* Like a server process starting: its own store handle and connection. */
static void *migrate_thread(void *p)
{
    migrator_t *m = p;
    char err[256];
    store_t *s = store_open(m->url, err, sizeof(err));
    store_conn_t *c = s ? store_conn(s, err, sizeof(err)) : NULL;
    pthread_barrier_wait(m->start);
    m->rc = c ? c->ops->migrate(c) : -100;
    store_close(s);
    return NULL;
}

static void test_migrate_race(void)
{
    for (int round = 0; round < 3; round++) {
        testdb_t db;
        if (!db_create(&db))
            return;
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 4);
        pthread_t th[4];
        migrator_t m[4];
        for (int i = 0; i < 4; i++) {
            m[i] = (migrator_t){.url = db.url, .start = &start, .rc = -99};
            CHECK(pthread_create(&th[i], NULL, migrate_thread, &m[i]) == 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            CHECK_INT(m[i].rc, STORE_OK);
        }
        pthread_barrier_destroy(&start);
        /* each migration applied exactly once, every table there */
        int64_t n = sql_int(db.url, "SELECT count(*) FROM schema_migrations", NULL, NULL);
        CHECK(n >= 1);
        /* versions 1..n, each once: no gap, no double */
        CHECK_INT(sql_int(db.url, "SELECT max(version) FROM schema_migrations", NULL, NULL), n);
        CHECK_INT(sql_int(db.url,
                          "SELECT count(*) FROM unnest(ARRAY['users', 'api_keys', 'documents',"
                          " 'images', 'jobs', 'rate_tat']) t WHERE to_regclass(t) IS NOT NULL",
                          NULL, NULL),
                  6);
        /* and once more, later, changes nothing */
        store_t *s;
        store_conn_t *c = open_migrated(&db, &s);
        if (c)
            CHECK_INT(sql_int(db.url, "SELECT count(*) FROM schema_migrations", NULL, NULL), n);
        store_close(s);
        db_drop(&db);
    }
}

/* ---- job queue ------------------------------------------------------------------- */

typedef struct {
    const char *url;
    pthread_barrier_t *start;
    int64_t ids[N_CLAIM_JOBS];
    char tokens[N_CLAIM_JOBS][33];
    int n, errors, bad_attempts;
} claimer_t;

/* Like another server process: its own store and connection, claiming until empty. */
static void *claim_thread(void *p)
{
    claimer_t *w = p;
    char err[256];
    arena_t a;
    arena_init(&a);
    store_t *s = store_open(w->url, err, sizeof(err));
    store_conn_t *c = s ? store_conn(s, err, sizeof(err)) : NULL;
    pthread_barrier_wait(w->start);
    while (c) {
        job_t j;
        int rc = c->ops->job_claim(c, 300, NULL, &a, &j);
        if (rc == STORE_NOTFOUND)
            break;
        if (rc != STORE_OK || w->n == N_CLAIM_JOBS) {
            w->errors++;
            break;
        }
        w->bad_attempts += j.attempts != 1;
        w->ids[w->n] = j.id;
        memcpy(w->tokens[w->n], j.token, sizeof(j.token));
        w->n++;
    }
    if (!c)
        w->errors++;
    store_close(s);
    arena_free(&a);
    return NULL;
}

static void test_claim_two_connections(void)
{
    testdb_t db;
    if (!db_create(&db))
        return;
    store_t *s;
    store_conn_t *c = open_migrated(&db, &s);
    int64_t uid = 0;
    if (!c || c->ops->user_ensure(c, "queue", &uid) != STORE_OK)
        goto out;
    for (int i = 0; i < N_CLAIM_JOBS; i++)
        make_doc(c, uid, "job", NULL);

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    claimer_t *w = xcalloc(2, sizeof(*w));
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i].url = db.url;
        w[i].start = &start;
        CHECK(pthread_create(&th[i], NULL, claim_thread, &w[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(w[i].errors, 0);
        CHECK_INT(w[i].bad_attempts, 0);
    }
    pthread_barrier_destroy(&start);
    /* disjoint, and together every job */
    int both = 0;
    for (int i = 0; i < w[0].n; i++)
        for (int k = 0; k < w[1].n; k++)
            both += w[0].ids[i] == w[1].ids[k];
    CHECK_INT(both, 0);
    CHECK_INT(w[0].n + w[1].n, N_CLAIM_JOBS);
    printf("claims split %d / %d between two connections\n", w[0].n, w[1].n);
    /* the database agrees: every job leased once, every record generating */
    CHECK_INT(sql_int(db.url, "SELECT count(*) FROM jobs WHERE attempts = 1 AND token IS NOT NULL",
                      NULL, NULL),
              N_CLAIM_JOBS);
    CHECK_INT(sql_int(db.url, "SELECT count(DISTINCT token) FROM jobs", NULL, NULL), N_CLAIM_JOBS);
    CHECK_INT(sql_int(db.url, "SELECT count(*) FROM documents WHERE state = 'generating'", NULL,
                      NULL),
              N_CLAIM_JOBS);
    /* the tokens held are the ones stored */
    int held = 0;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < w[i].n; k++) {
            char id[24];
            snprintf(id, sizeof(id), "%lld", (long long)w[i].ids[k]);
            held += sql_int(db.url, "SELECT count(*) FROM jobs WHERE id = $1 AND token = $2", id,
                            w[i].tokens[k]) == 1;
        }
    CHECK_INT(held, N_CLAIM_JOBS);
    free(w);
out:
    store_close(s);
    db_drop(&db);
}

typedef struct {
    store_conn_t *c;
    arena_t *a;
    job_t job;
    int rc;
    int done;
} claim_arg_t;

/* One claim on the caller's connection (store connections may move between threads as
 * long as one thread uses them at a time). */
static void *claim_once(void *p)
{
    claim_arg_t *ca = p;
    ca->rc = ca->c->ops->job_claim(ca->c, 60, NULL, ca->a, &ca->job);
    __atomic_store_n(&ca->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A job locked by another transaction is skipped, not waited for. */
static void test_claim_skips_locked(void)
{
    testdb_t db;
    if (!db_create(&db))
        return;
    arena_t a;
    arena_init(&a);
    store_t *s;
    store_conn_t *c = open_migrated(&db, &s);
    PGconn *locker = NULL;
    int64_t uid = 0, j1, j2, j3;
    if (!c || c->ops->user_ensure(c, "locks", &uid) != STORE_OK)
        goto out;
    make_doc(c, uid, "one", &j1);
    make_doc(c, uid, "two", &j2);
    make_doc(c, uid, "three", &j3);

    locker = PQconnectdb(db.url);
    CHECK(PQstatus(locker) == CONNECTION_OK);
    PGresult *r = PQexec(locker, "BEGIN");
    PQclear(r);
    char id1[24];
    snprintf(id1, sizeof(id1), "%lld", (long long)j1);
    const char *p[] = {id1};
    r = PQexecParams(locker, "SELECT id FROM jobs WHERE id = $1 FOR UPDATE", 1, NULL, p, NULL,
                     NULL, 0);
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
    PQclear(r);

    /* the claim runs in a thread: should it wait for the lock, PostgreSQL says so (a lock
     * not granted, in pg_locks), and the lock is let go so that the suite fails instead
     * of hanging; a slow claim that does not wait is no failure (60 s only catch a hang) */
    claim_arg_t ca = {.c = c, .a = &a, .rc = -99};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, claim_once, &ca) == 0);
    double t0 = mono_s();
    bool waited = false;
    while (!__atomic_load_n(&ca.done, __ATOMIC_ACQUIRE) && !waited) {
        if (mono_s() - t0 > 60 * test_slow()) {
            waited = true;
            break;
        }
        PGresult *w = PQexec(locker, "SELECT count(*) FROM pg_locks WHERE NOT granted");
        waited = PQresultStatus(w) == PGRES_TUPLES_OK && atoi(PQgetvalue(w, 0, 0)) > 0;
        PQclear(w);
        if (!waited)
            sleep_ms(5);
    }
    if (waited) {
        r = PQexec(locker, "ROLLBACK");
        PQclear(r);
    }
    pthread_join(th, NULL);
    CHECK_MSG(!waited, "the claim waited for a locked job instead of skipping it");
    job_t j = ca.job;
    CHECK_INT(ca.rc, STORE_OK);
    CHECK_INT(j.id, j2); /* j1 is locked: skipped */
    CHECK_INT(c->ops->job_claim(c, 60, NULL, &a, &j), STORE_OK);
    CHECK_INT(j.id, j3);
    CHECK_INT(c->ops->job_claim(c, 60, NULL, &a, &j), STORE_NOTFOUND);

    r = PQexec(locker, "ROLLBACK");
    PQclear(r);
    CHECK_INT(c->ops->job_claim(c, 60, NULL, &a, &j), STORE_OK);
    CHECK_INT(j.id, j1);
    CHECK_STR(j.rec.name, "one");

    /* a lease that runs out passes to another connection; the first holder is stale */
    store_t *s2;
    store_conn_t *c2 = open_migrated(&db, &s2);
    int64_t j4;
    make_doc(c, uid, "four", &j4);
    job_t first, second;
    CHECK_INT(c->ops->job_claim(c, 0.2, NULL, &a, &first), STORE_OK);
    CHECK_INT(first.id, j4);
    if (c2) {
        /* store_conn caches one connection per thread: c2 is c's twin on another handle */
        CHECK(c2 != c);
        CHECK_INT(c2->ops->job_claim(c2, 60, NULL, &a, &second), STORE_NOTFOUND);
        sleep_ms(300);
        CHECK_INT(c2->ops->job_claim(c2, 60, NULL, &a, &second), STORE_OK);
        CHECK_INT(second.id, j4);
        CHECK_INT(second.attempts, 2);
        CHECK_INT(c->ops->job_complete(c, &first, "late", 1, NULL, NULL, NULL, NULL), STORE_STALE);
        CHECK_INT(c2->ops->job_complete(c2, &second, "on time", 2, NULL, NULL, NULL, NULL), STORE_OK);
    }
    store_close(s2);
out:
    PQfinish(locker);
    store_close(s);
    arena_free(&a);
    db_drop(&db);
}

/* ---- outages --------------------------------------------------------------------- */

/* Kills every backend of db except the caller's; returns how many. */
static int64_t kill_backends(testdb_t *db)
{
    int64_t n = sql_int(admin_url,
                        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000))"
                        " FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                        db->name, NULL);
    return n; /* each counted backend has exited (the timeout form waits for that) */
}

/* Polls ping until it answers OK; returns the seconds it took, or -1. */
static double wait_ping_ok(store_conn_t *c, double limit_s)
{
    double t0 = mono_s();
    while (mono_s() - t0 < limit_s) {
        if (c->ops->ping(c) == STORE_OK)
            return mono_s() - t0;
        sleep_ms(20);
    }
    return -1;
}

/* Every kind of call, with the answer each gives now; all must be want. */
static void check_all_calls(store_conn_t *c, int64_t uid, int64_t doc, int want, int line)
{
    arena_t a;
    arena_init(&a);
    record_t g;
    record_list_t l;
    list_query_t q = {.user_id = uid, .favorite = -1, .per_page = 10, .page = 1,
                      .search = "Doc", .sort_by_name = true};
    int64_t n;
    key_auth_t ka;
    bool allowed;
    job_t j;
    record_t r = {.kind = KIND_DOC, .user_id = uid, .name = "during", .prompt = "p",
                  .template_id = 1};
    record_patch_t pt = {.favorite = 1, .words = -1};
    int rcs[] = {
        c->ops->ping(c),
        c->ops->record_get(c, KIND_DOC, uid, doc, &a, &g),
        c->ops->record_list(c, KIND_DOC, &q, &a, &l),
        c->ops->record_update(c, KIND_DOC, uid, doc, &pt, &a, &g),
        c->ops->job_count(c, &n),
        c->ops->rate_gcra(c, "outage", 7, 1, 60, false, &n, &allowed),
        /* an unknown key is NOTFOUND while the database answers */
        c->ops->key_auth(c, "0000", "2026-11", &ka) == STORE_NOTFOUND ? STORE_OK : STORE_UNAVAILABLE,
        c->ops->record_create(c, &r, NULL, &n),
        c->ops->job_claim(c, 60, NULL, &a, &j),
    };
    for (size_t i = 0; i < ARRAY_LEN(rcs); i++)
        CHECK_MSG(rcs[i] == want, "line %d: call %zu answered %d, expected %d", line, i, rcs[i],
                  want);
    arena_free(&a);
}

static void test_backend_killed(void)
{
    testdb_t db;
    if (!db_create(&db))
        return;
    arena_t a;
    arena_init(&a);
    store_t *s;
    store_conn_t *c = open_migrated(&db, &s);
    int64_t uid = 0;
    if (!c || c->ops->user_ensure(c, "outage", &uid) != STORE_OK)
        goto out;
    int64_t doc = make_doc(c, uid, "Doc before", NULL);
    record_t g;
    CHECK_INT(c->ops->record_get(c, KIND_DOC, uid, doc, &a, &g), STORE_OK); /* prepared */

    CHECK(kill_backends(&db) >= 1);
    /* the idle connection is found closed before use: the call reconnects, prepares
     * again and answers */
    CHECK_INT(c->ops->record_get(c, KIND_DOC, uid, doc, &a, &g), STORE_OK);
    CHECK_STR(g.name, "Doc before");
    double reconnected = mono_s();
    check_all_calls(c, uid, doc, STORE_OK, __LINE__);

    /* a second loss soon after: no new attempt within 0.5 s of the last one */
    CHECK(kill_backends(&db) >= 1);
    int rc = c->ops->ping(c);
    if (mono_s() - reconnected < 0.4)
        CHECK_INT(rc, STORE_UNAVAILABLE);
    rc = c->ops->ping(c);
    if (mono_s() - reconnected < 0.4)
        CHECK_INT(rc, STORE_UNAVAILABLE);
    double took = wait_ping_ok(c, 5);
    CHECK_MSG(took >= 0, "ping did not recover after a killed backend");
    CHECK_INT(c->ops->record_get(c, KIND_DOC, uid, doc, &a, &g), STORE_OK);
    CHECK_STR(g.name, "Doc before");
out:
    store_close(s);
    arena_free(&a);
    db_drop(&db);
}

/* Starts `scripts/pg-test.sh restart dir` with a pause while the server is down. */
static pid_t spawn_restart(const char *script, const char *dir, const char *log_path)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    setenv("PG_TEST_PAUSE", "1.5", 1);
    execl(script, script, "restart", dir, (char *)NULL);
    _exit(127);
}

static void test_cluster_restart(const char *dir)
{
    const char *script = getenv("INKWELL_TEST_PG_SCRIPT");
    if (!script || !script[0])
        script = "scripts/pg-test.sh";
    if (access(script, X_OK) != 0) {
        CHECK_MSG(false,
                  "%s not found (run from the repository root or set INKWELL_TEST_PG_SCRIPT)",
                  script);
        return;
    }
    testdb_t db;
    if (!db_create(&db))
        return;
    arena_t a;
    arena_init(&a);
    store_t *s;
    store_conn_t *c = open_migrated(&db, &s);
    int64_t uid = 0;
    if (!c || c->ops->user_ensure(c, "restart", &uid) != STORE_OK)
        goto out;
    int64_t doc = make_doc(c, uid, "Doc survives", NULL);
    check_all_calls(c, uid, doc, STORE_OK, __LINE__); /* everything prepared */

    char log_path[] = "/tmp/inkwell-pg-restart-XXXXXX";
    int lfd = mkstemp(log_path);
    if (lfd >= 0)
        close(lfd);
    pid_t pid = spawn_restart(script, dir, log_path);
    CHECK(pid > 0);
    /* wait for the server to go away under the open connection */
    double t0 = mono_s();
    int rc = STORE_OK;
    while (mono_s() - t0 < 30 && (rc = c->ops->ping(c)) == STORE_OK)
        sleep_ms(10);
    CHECK_INT(rc, STORE_UNAVAILABLE);
    /* while it is down (1.5 s), every call answers UNAVAILABLE at once */
    double t1 = mono_s();
    for (int i = 0; i < 3; i++)
        check_all_calls(c, uid, doc, STORE_UNAVAILABLE, __LINE__);
    double spent = mono_s() - t1;
    CHECK_MSG(spent < 1.0, "calls during the outage took %.2f s", spent);

    int status = -1;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "pg-test.sh restart failed (status %d), see %s", status, log_path);
    double took = wait_ping_ok(c, 10);
    CHECK_MSG(took >= 0, "ping did not recover after the restart");
    printf("cluster restart: outage seen, ping back %.2f s after the script finished\n", took);
    /* the same connection object works again, statements prepared anew */
    record_t g;
    CHECK_INT(c->ops->record_get(c, KIND_DOC, uid, doc, &a, &g), STORE_OK);
    CHECK_STR(g.name, "Doc survives");
    check_all_calls(c, uid, doc, STORE_OK, __LINE__);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) || took < 0) {
        FILE *f = fopen(log_path, "r");
        char line[256];
        while (f && fgets(line, sizeof(line), f))
            fputs(line, stderr);
        if (f)
            fclose(f);
    }
    unlink(log_path);
out:
    store_close(s);
    arena_free(&a);
    db_drop(&db);
}

/* ---- errors ---------------------------------------------------------------------- */

static void test_connect_errors(void)
{
    const char *urls[] = {
        "postgres://inkwell:pw-Secret-41@127.0.0.1:1/nowhere", /* refused */
        "postgres://inkwell:pw-Secret-41@127.0.0.1:1/x?sslmode=bogus",
        "postgres://inkwell:pw-Secret-41%zz@127.0.0.1:1/x", /* malformed escape */
    };
    for (size_t i = 0; i < ARRAY_LEN(urls); i++) {
        char err[512] = "";
        store_t *s = store_open(urls[i], err, sizeof(err));
        CHECK(s != NULL);
        if (!s)
            continue;
        store_conn_t *c = store_conn(s, err, sizeof(err));
        CHECK(c == NULL);
        CHECK_MSG(err[0] != '\0', "url %zu: no error text", i);
        CHECK_MSG(strstr(err, "pw-Secret-41") == NULL, "url %zu: password in \"%s\"", i, err);
        store_close(s);
    }
    /* a database that does not exist */
    char *url = url_with_db(admin_url, "inkwell_no_such_database");
    char err[512] = "";
    store_t *s = store_open(url, err, sizeof(err));
    CHECK(s && store_conn(s, err, sizeof(err)) == NULL && strstr(err, "postgres") != NULL);
    store_close(s);
    free(url);
}

/* Runs fn with standard error captured into out (NUL-terminated). */
static void capture_stderr(void (*fn)(void *), void *arg, char *out, size_t outlen)
{
    char path[] = "/tmp/inkwell-pg-log-XXXXXX";
    int fd = mkstemp(path);
    out[0] = '\0';
    if (fd < 0)
        return;
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, out, outlen - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
}

typedef struct {
    store_conn_t *c;
    int rc;
} err_arg_t;

static void create_for_missing_user(void *p)
{
    err_arg_t *e = p;
    record_t r = {.kind = KIND_DOC, .user_id = 987654321, .name = "TopSecretName-77",
                  .prompt = "TopSecretPrompt-78", .template_id = 1};
    int64_t job;
    e->rc = e->c->ops->record_create(e->c, &r, NULL, &job);
}

static void test_error_logs(void)
{
    testdb_t db;
    if (!db_create(&db))
        return;
    store_t *s;
    store_conn_t *c = open_migrated(&db, &s);
    if (c) {
        err_arg_t e = {.c = c, .rc = 99};
        char log[4096];
        capture_stderr(create_for_missing_user, &e, log, sizeof(log));
        CHECK_INT(e.rc, STORE_ERROR); /* as on SQLite: a foreign key violation */
        CHECK_MSG(strstr(log, "23503") != NULL, "log lacks the SQLSTATE: \"%s\"", log);
        CHECK_MSG(strstr(log, "TopSecret") == NULL && strstr(log, "987654321") == NULL,
                  "user data in the log: \"%s\"", log);
        /* the connection is still good after an error inside a transaction */
        CHECK_INT(c->ops->ping(c), STORE_OK);
        int64_t uid = 0;
        CHECK_INT(c->ops->user_ensure(c, "after-error", &uid), STORE_OK);
        CHECK(make_doc(c, uid, "fine", NULL) > 0);
    }
    store_close(s);
    db_drop(&db);
}

/* ---- a delete chosen as a deadlock's victim ---------------------------------------- */

typedef struct {
    store_conn_t *c;
    int64_t uid, id;
    int rc;
    int done;
} delete_arg_t;

static void *delete_once(void *p)
{
    delete_arg_t *d = p;
    arena_t a;
    arena_init(&a);
    const char **media = NULL;
    size_t nmedia = 0;
    d->rc = store_record_delete(d->c, KIND_DOC, d->uid, d->id, &a, &media, &nmedia);
    arena_free(&a);
    __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A worker's transaction locks a job and then its record; a DELETE locks the record
 * and then its job. PostgreSQL breaks the deadlock by undoing one of them (here the
 * DELETE, which waited first): the store runs a statement undone alone again, so the
 * delete succeeds once the worker's transaction ends, instead of failing with 40P01. */
static void test_delete_deadlock_victim_retried(void)
{
    testdb_t db;
    if (!db_create(&db))
        return;
    store_t *s;
    store_conn_t *c = open_migrated(&db, &s);
    PGconn *worker = NULL;
    int64_t uid = 0, job;
    if (!c || c->ops->user_ensure(c, "deadlock", &uid) != STORE_OK)
        goto out;
    int64_t doc = make_doc(c, uid, "victim", &job);
    worker = PQconnectdb(db.url);
    CHECK(PQstatus(worker) == CONNECTION_OK);
    char jid[24], did[24];
    snprintf(jid, sizeof(jid), "%lld", (long long)job);
    snprintf(did, sizeof(did), "%lld", (long long)doc);
    const char *pj[] = {jid}, *pd[] = {did};
    PGresult *r = PQexec(worker, "BEGIN");
    PQclear(r);
    r = PQexecParams(worker, "UPDATE jobs SET attempts = attempts WHERE id = $1", 1, NULL, pj,
                     NULL, NULL, 0);
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);

    delete_arg_t d = {.c = c, .uid = uid, .id = doc, .rc = -99};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, delete_once, &d) == 0);
    /* the DELETE now holds the document and waits for the job: wait until it does */
    double t0 = mono_s();
    bool waiting = false;
    while (!waiting && mono_s() - t0 < 5.0) {
        sleep_ms(20);
        r = PQexec(worker, "SELECT count(*) FROM pg_locks WHERE NOT granted");
        waiting = PQresultStatus(r) == PGRES_TUPLES_OK && atoi(PQgetvalue(r, 0, 0)) > 0;
        PQclear(r);
    }
    CHECK_MSG(waiting, "the delete never waited for the locked job");
    /* the worker now wants the document: a deadlock, found after deadlock_timeout (1 s) */
    r = PQexecParams(worker, "UPDATE documents SET favorite = favorite WHERE id = $1", 1, NULL,
                     pd, NULL, NULL, 0);
    bool worker_ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    r = PQexec(worker, worker_ok ? "COMMIT" : "ROLLBACK");
    PQclear(r);
    pthread_join(th, NULL);
    CHECK_INT(d.rc, STORE_OK);
    arena_t a;
    arena_init(&a);
    record_t rec;
    CHECK_INT(c->ops->record_get(c, KIND_DOC, uid, doc, &a, &rec), STORE_NOTFOUND);
    arena_free(&a);
out:
    if (worker)
        PQfinish(worker);
    if (s)
        store_close(s);
    db_drop(&db);
}

int main(void)
{
    log_level = LOG_ERROR; /* the outages below log a warning each */
    alarm(300); /* a claim that blocks instead of skipping must not hang the suite */
    admin_url = getenv("INKWELL_TEST_PG_URL");
    if (!admin_url || !admin_url[0]) {
        printf("test_store_pg: the PostgreSQL suite needs INKWELL_TEST_PG_URL "
               "(e.g. the URL printed by scripts/pg-test.sh start DIR)\n");
        return 1;
    }
    char *u = url_with_db("postgres://u@h:5/postgres?sslmode=disable", "x");
    CHECK_STR(u, "postgres://u@h:5/x?sslmode=disable");
    free(u);
    u = url_with_db("postgresql://u@h", "x");
    CHECK_STR(u, "postgresql://u@h/x");
    free(u);

    test_migrate_race();
    test_claim_two_connections();
    test_claim_skips_locked();
    test_delete_deadlock_victim_retried();
    test_backend_killed();
    test_connect_errors();
    test_error_logs();
    const char *dir = getenv("INKWELL_TEST_PG_DIR");
    CHECK_MSG(dir && dir[0], "INKWELL_TEST_PG_DIR is not set: the cluster restart case needs "
                             "the DIR given to scripts/pg-test.sh (tests/run.sh sets it)");
    if (dir && dir[0])
        test_cluster_restart(dir);
    TEST_DONE();
}
