/* test_exit.c — the one exit of a create, regenerate or action (src/records/create.c):
 * every outcome — completed (inline and job), failed (inline and job), deleted, past
 * the wait limit, shutdown, an idempotent replay (the begin hook answers), the quota
 * used up, a store refusal — goes through it, and each of its effects happens exactly
 * once: the waiter's wake-up (records_exit_fx_t.wake), the quota's reservation settled
 * (quota: handed to the stored record or released), the idempotency hook's answer
 * (answer, once records_create_finish ran), and the generation's end event. Late and
 * racing ends (the same end twice, an end after the wait limit, four threads ending
 * one create at once) change nothing.
 *
 * With what: the real SQLite store in a temporary directory, the real writer (the
 * inline path) and the real event hub, a provider that answers or fails at once, no job
 * workers: a job-path create stays queued until the test publishes its end through
 * records_publish, as a worker's records_store_outcome would. The service's exit
 * effects are wrapped (s->fx) to count them. Waits are on a condition variable, bounded
 * only by a hang detector (HANG_S × test_slow()). */
#include "core/log.h"
#include "records/records_int.h"
#include "store/writer.h"
#include "test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define HANG_S 30.0
#define LONG_WAIT_S 60.0

typedef struct {
    char dir[64], db[96], mdir[96];
    cfg_t cfg;
    store_t *store;
    store_conn_t *c;
    media_t *media;
    provider_t prov;
    writer_t *writer;
    records_t *s;
    int64_t uid;
    atomic_bool fail_next; /* the provider fails its next call */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* counted effects (under mu) */
    int quota_binds, quota_releases, begins, ends[REV_TICK + 1];
} env_t;

static env_t E;

typedef struct {
    records_create_t cr;
    arena_t a;
    int wakes, answers; /* under E.mu */
} call_t;

/* ---- the exit's effects, counted, then the real ones ---- */

static void count_quota(records_t *s, int64_t ticket, int64_t id)
{
    pthread_mutex_lock(&E.mu);
    if (id > 0)
        E.quota_binds++;
    else
        E.quota_releases++;
    pthread_mutex_unlock(&E.mu);
    records_exit_fx.quota(s, ticket, id);
}

static void count_wake(records_t *s, records_create_t *cr)
{
    call_t *k = cr->arg;
    records_exit_fx.wake(s, cr);
    pthread_mutex_lock(&E.mu);
    k->wakes++;
    pthread_cond_broadcast(&E.cv);
    pthread_mutex_unlock(&E.mu);
}

static void count_answer(records_t *s, records_create_t *cr)
{
    call_t *k = cr->arg;
    pthread_mutex_lock(&E.mu);
    k->answers++;
    pthread_mutex_unlock(&E.mu);
    records_exit_fx.answer(s, cr);
}

static void on_done(records_create_t *cr)
{
    (void)cr; /* (the wake-up is counted by count_wake) */
}

/* The idempotency hook's stand-in: a key "replay" is answered by begin (as a kept
 * answer is replayed); end is counted by count_answer. */
static bool hook_begin(void *arg, records_create_t *cr)
{
    (void)arg;
    pthread_mutex_lock(&E.mu);
    E.begins++;
    pthread_mutex_unlock(&E.mu);
    return cr->req.idempotency_key && strcmp(cr->req.idempotency_key, "replay") == 0;
}

static void hook_end(void *arg, records_create_t *cr)
{
    (void)arg, (void)cr;
}

static int hook_status(void *arg, const records_create_t *cr, create_outcome_t outcome)
{
    (void)arg, (void)cr;
    return outcome == CREATED_PENDING ? 202 : 201;
}

static void observe(void *arg, const rev_t *ev)
{
    (void)arg;
    pthread_mutex_lock(&E.mu);
    E.ends[ev->type]++;
    pthread_mutex_unlock(&E.mu);
}

/* ---- the provider: answers at once, or fails when told ---- */

static int fake_text(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                     gen_result_t *res)
{
    (void)p, (void)ctx, (void)req;
    if (atomic_exchange(&E.fail_next, false)) {
        snprintf(res->error, sizeof(res->error), "The fake model failed.");
        return -1;
    }
    buf_puts(&res->text, "A short text.");
    return 0;
}

static void env_start(void)
{
    memset(&E, 0, sizeof(E));
    pthread_mutex_init(&E.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&E.cv, &ca);
    pthread_condattr_destroy(&ca);
    snprintf(E.dir, sizeof(E.dir), "/tmp/inkwell-exit-XXXXXX");
    if (!mkdtemp(E.dir))
        exit(2);
    snprintf(E.db, sizeof(E.db), "%s/inkwell.db", E.dir);
    snprintf(E.mdir, sizeof(E.mdir), "%s/media", E.dir);
    char err[256] = "";
    E.store = store_open(E.db, err, sizeof(err));
    E.c = E.store ? store_conn(E.store, err, sizeof(err)) : NULL;
    E.media = media_open(E.mdir, err, sizeof(err));
    if (!E.store || !E.c || !E.media || store_migrate(E.c) != STORE_OK ||
        store_user_ensure(E.c, "alice", &E.uid) != STORE_OK) {
        fprintf(stderr, "cannot set up %s: %s\n", E.dir, err);
        exit(2);
    }
    E.cfg.wait_limit = LONG_WAIT_S;
    E.cfg.max_revisions = 50;
    E.prov = (provider_t){.name = "fake", .text_inline = true, .text = fake_text};
    if (!(E.writer = writer_start(E.store, 64)))
        exit(2);
    records_deps_t deps = {.cfg = &E.cfg, .store = E.store, .media = E.media, .prov = &E.prov,
                           .writer = E.writer};
    if (!(E.s = records_start(&deps)))
        exit(2);
    E.s->fx = (records_exit_fx_t){count_quota, count_wake, count_answer};
    records_create_hook_t h = {hook_begin, hook_end, hook_status, NULL};
    records_set_create_hook(E.s, &h);
    records_observe(E.s, observe, NULL);
}

static void env_free(void)
{
    records_release(E.s);
    writer_stop(E.writer);
    records_stop(E.s);
    store_close(E.store);
    media_close(E.media);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", E.dir);
    CHECK_INT(system(cmd), 0);
    pthread_cond_destroy(&E.cv);
    pthread_mutex_destroy(&E.mu);
}

/* ---- one create, as api/records.c drives it ---- */

static void call_init(call_t *k, rec_kind_t kind, create_mode_t mode)
{
    memset(k, 0, sizeof(*k));
    arena_init(&k->a);
    records_create_t *cr = &k->cr;
    cr->arena = &k->a;
    cr->done = on_done;
    cr->arg = k;
    cr->req.mode = mode;
    cr->req.quota_limit = 1000; /* a quota far from used: every create holds a reservation */
    cr->req.quota_used = 0;
    cr->req.quota_at = mono_s();
    cr->req.rec.kind = kind;
    cr->req.rec.user_id = E.uid;
    cr->req.rec.name = "a record";
    if (kind == KIND_DOC) {
        cr->req.rec.prompt = "a story";
        cr->req.rec.creativity = 0.5;
        cr->req.rec.template_id = 1;
    } else {
        cr->req.rec.description = "a lighthouse";
        cr->req.rec.resolution = "1024x1024";
        cr->req.rec.style = "vivid";
    }
}

/* Waits for the wake-up, then finishes as the API's resumed request does. */
static bool call_wait(call_t *k)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(HANG_S * test_slow());
    pthread_mutex_lock(&E.mu);
    while (k->wakes == 0 &&
           pthread_cond_timedwait(&E.cv, &E.mu, &until) == 0)
        ;
    bool woke = k->wakes > 0;
    pthread_mutex_unlock(&E.mu);
    CHECK_MSG(woke, "no wake-up within the hang bound");
    if (woke)
        records_create_finish(E.s, E.c, &k->cr);
    return woke;
}

static int wakes(call_t *k)
{
    pthread_mutex_lock(&E.mu);
    int n = k->wakes;
    pthread_mutex_unlock(&E.mu);
    return n;
}

typedef struct {
    int binds, releases, begins, ends[REV_TICK + 1];
} counts_t;

static counts_t counts(void)
{
    pthread_mutex_lock(&E.mu);
    counts_t n = {E.quota_binds, E.quota_releases, E.begins, {0}};
    memcpy(n.ends, E.ends, sizeof(n.ends));
    pthread_mutex_unlock(&E.mu);
    return n;
}

/* Each effect once: one wake-up, one answer (none after a hook that answered), and the
 * reservation settled once (binds + releases) when one was held. */
static void check_once(call_t *k, const counts_t *before, int answers, int binds, int releases)
{
    counts_t now = counts();
    CHECK_INT(wakes(k), 1);
    CHECK_INT(k->answers, answers);
    CHECK_INT(now.binds - before->binds, binds);
    CHECK_INT(now.releases - before->releases, releases);
    CHECK_INT(now.begins - before->begins, 1);
}

/* The end a worker would publish for a job of record rec (records_store_outcome's). */
static void publish_end_of(const record_t *rec, int64_t job_id, rev_type_t type)
{
    record_t done = *rec;
    done.state = type == REV_COMPLETED ? REC_COMPLETED : REC_FAILED;
    rev_t ev = {.type = type, .kind = done.kind, .id = done.id, .user_id = done.user_id,
                .job_id = job_id, .seq = done.event_seq + 2};
    if (type == REV_COMPLETED)
        ev.rec = &done;
    else if (type == REV_FAILED)
        ev.error = "The fake model failed.";
    else if (type == REV_DELETED)
        ev.seq = RECORDS_SEQ_END;
    records_publish(E.s, &ev);
}

/* The same for k's job, from the test's thread once k's exit has run or cannot run
 * meanwhile (the exit writes k->cr.res). */
static void publish_end(call_t *k, rev_type_t type)
{
    publish_end_of(&k->cr.res.rec, k->cr.res.job_id, type);
}

/* A job-path create left waiting: stored, subscribed, not woken. */
static void start_waiting(call_t *k)
{
    call_init(k, KIND_IMG, CREATE_WAIT); /* (a picture: never the inline path) */
    records_create(E.s, &k->cr);
    CHECK(k->cr.res.job_id > 0);
    CHECK_INT(wakes(k), 0);
}

/* ---- cases ---- */

static void test_inline_completed(void)
{
    counts_t b = counts();
    call_t k;
    call_init(&k, KIND_DOC, CREATE_WAIT);
    records_create(E.s, &k.cr);
    if (call_wait(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_DONE);
        CHECK_STR(k.cr.res.rec.result, "A short text.");
    }
    records_create_finish(E.s, E.c, &k.cr); /* (a second call does nothing) */
    check_once(&k, &b, 1, 0, 1);
    CHECK_INT(counts().ends[REV_COMPLETED] - b.ends[REV_COMPLETED], 1);
    arena_free(&k.a);
}

static void test_inline_failed(void)
{
    counts_t b = counts();
    call_t k;
    call_init(&k, KIND_DOC, CREATE_WAIT);
    atomic_store(&E.fail_next, true);
    records_create(E.s, &k.cr);
    if (call_wait(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(k.cr.res.failure, RF_GENERATION);
        CHECK_STR(k.cr.res.error, "The fake model failed.");
    }
    check_once(&k, &b, 1, 0, 1);
    CHECK_INT(counts().ends[REV_FAILED] - b.ends[REV_FAILED], 1);
    arena_free(&k.a);
}

static void test_job_completed_once_though_ended_twice(void)
{
    counts_t b = counts();
    call_t k;
    start_waiting(&k);
    publish_end(&k, REV_COMPLETED);
    publish_end(&k, REV_COMPLETED); /* a late repeat */
    publish_end(&k, REV_FAILED);    /* and a late other end */
    if (call_wait(&k))
        CHECK_INT(k.cr.res.outcome, CREATED_DONE);
    check_once(&k, &b, 1, 1, 0); /* handed to the record at its store, never released */
    arena_free(&k.a);
}

static void test_job_failed_removes_the_record(void)
{
    counts_t b = counts();
    call_t k;
    start_waiting(&k);
    int64_t id = k.cr.res.rec.id;
    publish_end(&k, REV_FAILED);
    if (call_wait(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_STR(k.cr.res.error, "The fake model failed.");
    }
    check_once(&k, &b, 1, 1, 0);
    arena_t a;
    arena_init(&a);
    record_t r;
    CHECK_INT(records_get(E.s, E.c, KIND_IMG, E.uid, id, NULL, NULL, &a, &r), STORE_NOTFOUND);
    arena_free(&a);
    arena_free(&k.a);
}

static void test_job_deleted(void)
{
    counts_t b = counts();
    call_t k;
    start_waiting(&k);
    CHECK_INT(records_delete(E.s, E.c, KIND_IMG, E.uid, k.cr.res.rec.id), STORE_OK);
    if (call_wait(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(k.cr.res.failure, RF_DELETED);
    }
    check_once(&k, &b, 1, 1, 0);
    arena_free(&k.a);
}

static void test_past_the_wait_limit(void)
{
    counts_t b = counts();
    E.cfg.wait_limit = 0.1;
    call_t k;
    double t0 = mono_s();
    start_waiting(&k);
    E.cfg.wait_limit = LONG_WAIT_S;
    if (call_wait(&k)) {
        CHECK(mono_s() - t0 >= 0.1);
        CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
        CHECK_INT(k.cr.res.rec.state, REC_QUEUED); /* read again: as it stands */
    }
    publish_end(&k, REV_COMPLETED); /* the generation ends after its waiter gave up */
    check_once(&k, &b, 1, 1, 0);
    arena_free(&k.a);
}

static void test_async_and_stream_answer_at_once(void)
{
    create_mode_t modes[] = {CREATE_ASYNC, CREATE_STREAM};
    create_outcome_t want[] = {CREATED_PENDING, CREATED_STREAM};
    for (int i = 0; i < 2; i++) {
        counts_t b = counts();
        call_t k;
        call_init(&k, KIND_IMG, modes[i]);
        records_create(E.s, &k.cr);
        if (call_wait(&k))
            CHECK_INT(k.cr.res.outcome, want[i]);
        publish_end(&k, REV_COMPLETED);
        check_once(&k, &b, 1, 1, 0);
        arena_free(&k.a);
    }
}

static void test_idempotent_replay(void)
{
    counts_t b = counts();
    call_t k;
    call_init(&k, KIND_DOC, CREATE_WAIT);
    k.cr.req.idempotency_key = "replay";
    records_create(E.s, &k.cr);
    if (call_wait(&k))
        CHECK_INT(k.cr.res.outcome, CREATE_HOOK);
    check_once(&k, &b, 0, 0, 0); /* nothing reserved, nothing to answer again */
    arena_free(&k.a);
}

static void test_quota_used_up(void)
{
    counts_t b = counts();
    call_t k;
    call_init(&k, KIND_IMG, CREATE_WAIT);
    k.cr.req.quota_limit = 5;
    k.cr.req.quota_used = 5;
    records_create(E.s, &k.cr);
    if (call_wait(&k))
        CHECK_INT(k.cr.res.outcome, CREATE_QUOTA_USED);
    check_once(&k, &b, 1, 0, 0);
    arena_free(&k.a);
}

static void test_store_refusal_releases_the_reservation(void)
{
    counts_t b = counts();
    call_t k;
    call_init(&k, KIND_IMG, CREATE_WAIT);
    k.cr.req.regenerate = true;
    k.cr.req.rec.id = 999999; /* no such record */
    records_create(E.s, &k.cr);
    if (call_wait(&k))
        CHECK_INT(k.cr.res.outcome, CREATE_NOTFOUND);
    check_once(&k, &b, 1, 0, 1);
    arena_free(&k.a);
}

typedef struct {
    record_t rec; /* the record as stored, queued: read before the racers start */
    int64_t job_id;
    rev_type_t type; /* the end it publishes; REV_DELETED: it deletes the record */
    atomic_int *go;
    int rc; /* the delete's */
} racer_t;

static void *race(void *arg)
{
    racer_t *r = arg;
    atomic_fetch_add(r->go, 1);
    while (atomic_load(r->go) < 4)
        ; /* all four at once */
    if (r->type == REV_DELETED)
        r->rc = records_delete(E.s, store_conn(E.store, (char[64]){0}, 64), KIND_IMG, E.uid,
                               r->rec.id);
    else
        publish_end_of(&r->rec, r->job_id, r->type);
    return NULL;
}

static void test_racing_ends_wake_once(void)
{
    for (int round = 0; round < 5; round++) {
        counts_t b = counts();
        call_t k;
        start_waiting(&k);
        atomic_int go = 0;
        rev_type_t ends[4] = {REV_COMPLETED, REV_FAILED, REV_COMPLETED, REV_DELETED};
        racer_t r[4];
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            r[i] = (racer_t){.rec = k.cr.res.rec, .job_id = k.cr.res.job_id, .type = ends[i],
                             .go = &go};
        for (int i = 0; i < 4; i++)
            CHECK_INT(pthread_create(&t[i], NULL, race, &r[i]), 0);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        CHECK_INT(r[3].rc, STORE_OK);
        if (call_wait(&k))
            CHECK(k.cr.res.outcome == CREATED_DONE || k.cr.res.outcome == CREATE_FAILED);
        check_once(&k, &b, 1, 1, 0);
        arena_free(&k.a);
    }
}

/* Last: the service releases every waiter and stays released. */
static void test_shutdown(void)
{
    counts_t b = counts();
    call_t k;
    start_waiting(&k);
    records_release(E.s);
    if (call_wait(&k))
        CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
    check_once(&k, &b, 1, 1, 0);
    arena_free(&k.a);
}

int main(void)
{
    log_level = LOG_WARN;
    env_start();
    test_inline_completed();
    test_inline_failed();
    test_job_completed_once_though_ended_twice();
    test_job_failed_removes_the_record();
    test_job_deleted();
    test_past_the_wait_limit();
    test_async_and_stream_answer_at_once();
    test_idempotent_replay();
    test_quota_used_up();
    test_store_refusal_releases_the_reservation();
    test_racing_ends_wake_once();
    test_shutdown();
    env_free();
    TEST_DONE();
}
