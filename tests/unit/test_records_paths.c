/* test_records_paths.c — the records service's create paths end to end, in process
 * (issue 20 item 5): inline, job and streamed creates and regenerations, each ending
 * completed, failed, deleted, past the wait limit, at shutdown, and with the client
 * gone.
 *
 * With what: the real SQLite store in a fresh temporary directory per case, a real media
 * directory, the real writer (group commit, started as src/main.c starts it when the
 * provider's text_inline is true), the real job workers (jobs_start, records_set_jobs)
 * and the real event hub — and a FAKE provider whose calls are scripted one by one: give
 * a text in pieces through ctx->on_text (the pieces joined are the final text) or a
 * small valid PNG, fail with a message, or block until the test releases it (heartbeat
 * while blocked, giving up when it says no). Creates are driven as api/records.c drives
 * them (done, then records_create_finish in the test's thread, which has a store
 * connection); a stream's client subscribes as api/stream.c does (records_subscribe
 * from 0 once the create answered, then a read of the record) and goes away with
 * records_unsubscribe. Services stop in src/main.c's order (jobs_drain, records_release,
 * jobs_stop, writer_stop, records_stop).
 *
 * Time: the wait limit is 60 s except in the two wait-limit cases (0.3 s), where the
 * provider blocks until the test releases it after the create's outcome arrived. Every
 * wait is on a condition variable for an event; the only bound on elapsed time is a
 * hang detector (HANG_S × test_slow()). No verdict depends on the machine's speed.
 *
 * RP_ONLY=<case name> runs one case; RP_VERBOSE=1 prints each case with its time. */
#include "gen/png.h"
#include "records/jobs.h"
#include "records/records_int.h" /* hub_subscribers: a gone client leaves nothing behind */
#include "store/writer.h"
#include "core/log.h"
#include "test.h"

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WRITER_MAX_BATCH 64 /* as src/main.c */
#define LONG_WAIT_S 60.0    /* the wait limit of every case but the wait-limit ones */
#define SHORT_WAIT_S 0.3
#define HANG_S 30.0         /* a wait for an event longer than this × test_slow() is a hang */
#define MAX_SCRIPTS 8
#define MAX_LOG 256
#define MAX_SINK 64

/* ---- the fake provider's script: one entry per call, in the order of the calls ---- */

typedef struct {
    const char *pieces[6]; /* documents: the text, in pieces (NULL-terminated) */
    int block_at;          /* block after this many pieces (0: before any); -1 never */
    const char *fail;      /* fail with this message once the pieces are given; NULL: ok */
} script_t;

typedef struct env {
    char dir[64], db[96], mdir[96];
    cfg_t cfg;
    store_t *store;
    store_conn_t *c; /* the test thread's */
    media_t *media;
    provider_t prov;
    writer_t *writer;
    records_t *s;
    jobs_t *jobs;
    int64_t uid;
    bool stopped;

    pthread_mutex_t mu; /* guards everything below; never held while calling the service */
    pthread_cond_t cv;  /* broadcast at every change */
    /* the provider */
    script_t scripts[MAX_SCRIPTS];
    int nscripts;
    int calls;     /* calls begun */
    int blocks;    /* times a call began to block */
    int returned;  /* calls returned (either way) */
    int gave_up;   /* blocked calls that gave up (heartbeat said no) */
    bool released; /* blocked calls go on (sticky) */
    /* what the observer saw (records_observe: every event this process published) */
    struct {
        rev_type_t type;
        int64_t id, seq;
    } log[MAX_LOG];
    int nlog;
} env_t;

static bool blocking_wait(env_t *e, gen_ctx_t *ctx)
{
    pthread_mutex_lock(&e->mu);
    e->blocks++;
    pthread_cond_broadcast(&e->cv);
    while (!e->released) {
        pthread_mutex_unlock(&e->mu);
        /* as a long provider call does: ask whether to go on (a worker's ctx only; the
         * inline path is never scripted to block) */
        if (ctx->heartbeat && !ctx->heartbeat(ctx)) {
            pthread_mutex_lock(&e->mu);
            e->gave_up++;
            pthread_cond_broadcast(&e->cv);
            pthread_mutex_unlock(&e->mu);
            return false;
        }
        pthread_mutex_lock(&e->mu);
        if (!e->released) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 10 * 1000000L; /* the heartbeat's cadence */
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        }
    }
    pthread_mutex_unlock(&e->mu);
    return true;
}

static script_t next_script(env_t *e)
{
    pthread_mutex_lock(&e->mu);
    int n = e->calls++;
    script_t sc = {.block_at = -1, .fail = "The fake provider was not scripted for this call."};
    if (n < e->nscripts)
        sc = e->scripts[n];
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return sc;
}

static int call_returns(env_t *e, int rc)
{
    pthread_mutex_lock(&e->mu);
    e->returned++;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

static int fake_text(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                     gen_result_t *res)
{
    env_t *e = p->priv;
    (void)req;
    script_t sc = next_script(e);
    int i = 0;
    for (;; i++) {
        if (i == sc.block_at && !blocking_wait(e, ctx)) {
            snprintf(res->error, sizeof(res->error), "Interrupted.");
            return call_returns(e, -1);
        }
        if (!sc.pieces[i])
            break;
        buf_puts(&res->text, sc.pieces[i]);
        if (ctx->on_text)
            ctx->on_text(ctx, sc.pieces[i], strlen(sc.pieces[i]));
    }
    if (sc.fail) {
        snprintf(res->error, sizeof(res->error), "%s", sc.fail);
        return call_returns(e, -1);
    }
    return call_returns(e, 0);
}

static int fake_image(const provider_t *p, gen_ctx_t *ctx, const gen_image_req_t *req,
                      gen_result_t *res)
{
    env_t *e = p->priv;
    (void)req;
    script_t sc = next_script(e);
    if (sc.block_at == 0 && !blocking_wait(e, ctx)) {
        snprintf(res->error, sizeof(res->error), "Interrupted.");
        return call_returns(e, -1);
    }
    if (sc.fail) {
        snprintf(res->error, sizeof(res->error), "%s", sc.fail);
        return call_returns(e, -1);
    }
    uint8_t rgb[4 * 4 * 3];
    for (size_t i = 0; i < sizeof(rgb); i++)
        rgb[i] = (uint8_t)(i * 17);
    if (png_encode_rgb(rgb, 4, 4, 1, &res->png) != 0) {
        snprintf(res->error, sizeof(res->error), "The fake picture could not be encoded.");
        return call_returns(e, -1);
    }
    return call_returns(e, 0);
}

static void *fake_worker_new(const provider_t *p)
{
    return p->priv;
}

static void fake_worker_free(const provider_t *p, void *state)
{
    (void)p, (void)state;
}

static void fake_destroy(provider_t *p)
{
    (void)p;
}

/* ---- waiting for events (condition variables, with a hang bound only) ---- */

typedef bool (*pred_fn)(env_t *e, const void *arg);

static bool wait_for(env_t *e, pred_fn pred, const void *arg, const char *what, int line)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(HANG_S * test_slow());
    pthread_mutex_lock(&e->mu);
    bool ok;
    while (!(ok = pred(e, arg)))
        if (pthread_cond_timedwait(&e->cv, &e->mu, &until) != 0 && !(ok = pred(e, arg)))
            break;
    pthread_mutex_unlock(&e->mu);
    CHECK_MSG(ok, "line %d: no %s within %g s", line, what, HANG_S * test_slow());
    return ok;
}

static bool pred_blocks(env_t *e, const void *arg)
{
    return e->blocks >= *(const int *)arg;
}

static bool pred_returned(env_t *e, const void *arg)
{
    return e->returned >= *(const int *)arg;
}

#define WAIT_BLOCKED(e, n)                                                                         \
    do {                                                                                           \
        int n_ = (n);                                                                              \
        wait_for((e), pred_blocks, &n_, "blocked provider call", __LINE__);                        \
    } while (0)
#define WAIT_RETURNED(e, n)                                                                        \
    do {                                                                                           \
        int n_ = (n);                                                                              \
        wait_for((e), pred_returned, &n_, "returned provider call", __LINE__);                     \
    } while (0)

static void release_provider(env_t *e)
{
    pthread_mutex_lock(&e->mu);
    e->released = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static void script(env_t *e, script_t sc)
{
    pthread_mutex_lock(&e->mu);
    if (e->nscripts < MAX_SCRIPTS)
        e->scripts[e->nscripts++] = sc;
    pthread_mutex_unlock(&e->mu);
}

static int provider_calls(env_t *e)
{
    pthread_mutex_lock(&e->mu);
    int n = e->calls;
    pthread_mutex_unlock(&e->mu);
    return n;
}

/* ---- the observer: every event this process publishes ---- */

static void observe(void *arg, const rev_t *ev)
{
    env_t *e = arg;
    pthread_mutex_lock(&e->mu);
    if (e->nlog < MAX_LOG) {
        e->log[e->nlog].type = ev->type;
        e->log[e->nlog].id = ev->id;
        e->log[e->nlog].seq = ev->seq;
        e->nlog++;
    }
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* How many events of type the observer saw for record id (id 0: any). */
static int seen_locked(env_t *e, rev_type_t type, int64_t id)
{
    int n = 0;
    for (int i = 0; i < e->nlog; i++)
        if (e->log[i].type == type && (id == 0 || e->log[i].id == id))
            n++;
    return n;
}

static int seen(env_t *e, rev_type_t type, int64_t id)
{
    pthread_mutex_lock(&e->mu);
    int n = seen_locked(e, type, id);
    pthread_mutex_unlock(&e->mu);
    return n;
}

typedef struct {
    rev_type_t type;
    int64_t id;
    int n;
} seen_arg_t;

static bool pred_seen(env_t *e, const void *arg)
{
    const seen_arg_t *s = arg;
    return seen_locked(e, s->type, s->id) >= s->n;
}

/* Waits until the observer saw n events of type for record id. */
#define WAIT_SEEN(e, type_, id_, n_)                                                               \
    do {                                                                                           \
        seen_arg_t sa_ = {(type_), (id_), (n_)};                                                   \
        wait_for((e), pred_seen, &sa_, "event " #type_, __LINE__);                                 \
    } while (0)

/* ---- the environment: store, media, writer, records, workers ---- */

static void env_start(env_t *e, bool text_inline, double wait_limit)
{
    memset(e, 0, sizeof(*e));
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &ca);
    pthread_condattr_destroy(&ca);
    snprintf(e->dir, sizeof(e->dir), "/tmp/inkwell-rp-XXXXXX");
    if (!mkdtemp(e->dir)) {
        fprintf(stderr, "mkdtemp failed\n");
        exit(2);
    }
    snprintf(e->db, sizeof(e->db), "%s/inkwell.db", e->dir);
    snprintf(e->mdir, sizeof(e->mdir), "%s/media", e->dir);
    char err[256] = "";
    e->store = store_open(e->db, err, sizeof(err));
    e->c = e->store ? store_conn(e->store, err, sizeof(err)) : NULL;
    e->media = media_open(e->mdir, err, sizeof(err));
    if (!e->store || !e->c || !e->media || store_migrate(e->c) != STORE_OK ||
        store_user_ensure(e->c, "alice", &e->uid) != STORE_OK) {
        fprintf(stderr, "cannot set up %s: %s\n", e->dir, err);
        exit(2);
    }
    e->cfg.wait_limit = wait_limit;
    e->cfg.workers = 2;
    e->cfg.job_lease = 30;
    e->cfg.max_revisions = 50;
    e->prov = (provider_t){.name = "fake", .text_inline = text_inline,
                           .worker_new = fake_worker_new, .worker_free = fake_worker_free,
                           .text = fake_text, .image = fake_image, .destroy = fake_destroy,
                           .priv = e};
    /* as src/main.c wires them */
    if (e->prov.text_inline && !(e->writer = writer_start(e->store, WRITER_MAX_BATCH))) {
        fprintf(stderr, "cannot start the writer\n");
        exit(2);
    }
    records_deps_t deps = {.cfg = &e->cfg, .store = e->store, .media = e->media,
                           .prov = &e->prov, .writer = e->writer};
    e->s = records_start(&deps);
    records_observe(e->s, observe, e);
    e->jobs = jobs_start(&e->cfg, e->store, e->media, &e->prov, e->s);
    records_set_jobs(e->s, e->jobs);
}

/* SIGTERM's drain, then the stop (src/main.c): after it no thread but the test's
 * touches the store, and what it holds can be checked. */
static void env_shutdown(env_t *e)
{
    if (e->stopped)
        return;
    jobs_drain(e->jobs);
    records_release(e->s);
    jobs_stop(e->jobs); /* a running job gives up (its heartbeat says no) and is released */
    writer_stop(e->writer);
    e->jobs = NULL;
    e->writer = NULL;
    e->stopped = true;
}

static void env_free(env_t *e)
{
    release_provider(e); /* (a case that failed may have left a call blocked) */
    env_shutdown(e);
    records_stop(e->s);
    store_close(e->store);
    media_close(e->media);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
    CHECK_INT(system(cmd), 0);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
}

/* The files in the media directory (pictures and temporary files). */
static int media_files(env_t *e)
{
    DIR *d = opendir(e->mdir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static int get(env_t *e, rec_kind_t kind, int64_t id, arena_t *a, record_t *out)
{
    memset(out, 0, sizeof(*out));
    return records_get(e->s, e->c, kind, e->uid, id, NULL, NULL, a, out);
}

/* The stored record is completed with this text and revision; a failure names the
 * caller's line. */
#define CHECK_COMPLETED(e, kind, id, text, rev) check_completed((e), (kind), (id), (text), (rev), __LINE__)
static void check_completed(env_t *e, rec_kind_t kind, int64_t id, const char *text, int64_t rev,
                            int line)
{
    arena_t a;
    arena_init(&a);
    record_t r;
    int rc = get(e, kind, id, &a, &r);
    CHECK_MSG(rc == STORE_OK && r.state == REC_COMPLETED && r.result && strcmp(r.result, text) == 0 &&
                  r.revision == rev,
              "line %d: record %lld: rc %d, state %s, revision %lld, result \"%s\"", line,
              (long long)id, rc, rc == STORE_OK ? rec_state_name(r.state) : "-",
              (long long)(rc == STORE_OK ? r.revision : -1),
              rc == STORE_OK && r.result ? r.result : "(null)");
    arena_free(&a);
}

static int64_t jobs_left(env_t *e, int64_t *running)
{
    int64_t queued = -1;
    *running = -1;
    CHECK_INT(store_job_counts(e->c, &queued, running), STORE_OK);
    return queued;
}

/* ---- one create, as api/records.c drives it ---- */

typedef struct {
    env_t *e;
    records_create_t cr;
    arena_t a;
    int ndone;
    double done_at; /* mono_s() when done was called */
} call_t;

static void on_done(records_create_t *cr)
{
    call_t *k = cr->arg;
    pthread_mutex_lock(&k->e->mu);
    k->ndone++;
    k->done_at = mono_s();
    pthread_cond_broadcast(&k->e->cv);
    pthread_mutex_unlock(&k->e->mu);
}

static void call_init(call_t *k, env_t *e, rec_kind_t kind, create_mode_t mode)
{
    memset(k, 0, sizeof(*k));
    k->e = e;
    arena_init(&k->a);
    records_create_t *cr = &k->cr;
    cr->arena = &k->a;
    cr->done = on_done;
    cr->arg = k;
    cr->req.mode = mode;
    cr->req.quota_limit = -1; /* no quota */
    cr->req.rec.kind = kind;
    cr->req.rec.user_id = e->uid;
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

/* A regeneration of rec (as api/records.c: the record as read, its inputs kept). */
static void call_init_regen(call_t *k, env_t *e, const record_t *rec, create_mode_t mode)
{
    call_init(k, e, rec->kind, mode);
    record_copy(&k->a, &k->cr.req.rec, rec);
    k->cr.req.regenerate = true;
}

static bool pred_done(env_t *e, const void *arg)
{
    (void)e;
    return ((const call_t *)arg)->ndone > 0;
}

/* Waits for done, then completes the outcome as the API's resumed request does. */
static bool call_finish(call_t *k, int line)
{
    bool ok = wait_for(k->e, pred_done, k, "create outcome (done)", line);
    if (ok)
        records_create_finish(k->e->s, k->e->c, &k->cr);
    return ok;
}
#define FINISH(k) call_finish((k), __LINE__)

static void call_free(call_t *k)
{
    pthread_mutex_lock(&k->e->mu);
    int n = k->ndone;
    pthread_mutex_unlock(&k->e->mu);
    CHECK_INT(n, 1); /* done exactly once */
    if (n > 0)
        arena_free(&k->a); /* (else a subscription may still point into it: left) */
}

/* A record completed through the service (inline or job, by the provider's kind). */
static int64_t make_completed(env_t *e, rec_kind_t kind, const char *text)
{
    script(e, (script_t){.pieces = {text}, .block_at = -1});
    call_t k;
    call_init(&k, e, kind, CREATE_WAIT);
    records_create(e->s, &k.cr);
    int64_t id = 0;
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_DONE);
        CHECK_INT(k.cr.res.rec.revision, 1);
        id = k.cr.res.rec.id;
    }
    call_free(&k);
    return id;
}

/* ---- a stream's client (api/stream.c: subscribed from 0 once the create answered) ---- */

typedef struct {
    env_t *e;
    records_sub_t *sub;
    int n;
    rev_type_t types[MAX_SINK];
    int64_t seqs[MAX_SINK];
    buf_t text;       /* the TEXT pieces joined */
    bool text_gap;    /* a piece did not continue the text */
    bool ended;       /* COMPLETED, FAILED, DELETED or RELEASED */
    int64_t revision; /* COMPLETED */
    char result[256]; /* COMPLETED */
    char error[256];  /* FAILED */
} sink_t;

static void on_sink(void *arg, const rev_t *ev)
{
    sink_t *k = arg;
    if (ev->type == REV_TICK)
        return;
    pthread_mutex_lock(&k->e->mu);
    if (k->n < MAX_SINK) {
        k->types[k->n] = ev->type;
        k->seqs[k->n] = ev->seq;
    }
    k->n++;
    switch (ev->type) {
    case REV_TEXT:
        if (ev->offset - (int64_t)ev->len != (int64_t)k->text.len)
            k->text_gap = true;
        buf_append(&k->text, ev->text, ev->len);
        break;
    case REV_COMPLETED:
        k->ended = true;
        if (ev->rec) {
            k->revision = ev->rec->revision;
            snprintf(k->result, sizeof(k->result), "%s", ev->rec->result ? ev->rec->result : "");
        }
        break;
    case REV_FAILED:
        k->ended = true;
        snprintf(k->error, sizeof(k->error), "%s", ev->error ? ev->error : "");
        break;
    case REV_DELETED:
    case REV_RELEASED: k->ended = true; break;
    default: break;
    }
    pthread_cond_broadcast(&k->e->cv);
    pthread_mutex_unlock(&k->e->mu);
}

/* Subscribes as api/stream.c follow() does, then reads the record once: it must still be
 * running (every case's provider is held until the client is there). */
static void sink_follow(sink_t *k, env_t *e, rec_kind_t kind, int64_t id)
{
    memset(k, 0, sizeof(*k));
    k->e = e;
    buf_init(&k->text);
    k->sub = records_subscribe(e->s, kind, e->uid, id, 0, on_sink, k);
    store_read_end(e->c);
    arena_t a;
    arena_init(&a);
    record_t now;
    CHECK_INT(get(e, kind, id, &a, &now), STORE_OK);
    CHECK_MSG(now.state == REC_QUEUED || now.state == REC_GENERATING, "state %s",
              rec_state_name(now.state));
    arena_free(&a);
}

static void sink_gone(sink_t *k)
{
    records_unsubscribe(k->e->s, k->sub);
    k->sub = NULL;
}

static void sink_free(sink_t *k)
{
    if (k->sub)
        sink_gone(k);
    buf_free(&k->text);
}

static bool pred_sink_ended(env_t *e, const void *arg)
{
    (void)e;
    return ((const sink_t *)arg)->ended;
}

static bool pred_sink_n(env_t *e, const void *arg)
{
    (void)e;
    const sink_t *k = arg;
    return k->n >= 2; /* GENERATING and the first TEXT */
}

/* The events a stream got (ticks aside): exactly these types in this order, every one
 * numbered but RELEASED (unnumbered), the numbers strictly increasing, each text piece
 * continuing the text. */
static void check_sink(sink_t *k, const rev_type_t *want, int nwant, int line)
{
    pthread_mutex_lock(&k->e->mu);
    CHECK_MSG(k->n == nwant, "line %d: %d events, expected %d", line, k->n, nwant);
    int64_t last = 0;
    for (int i = 0; i < k->n && i < MAX_SINK; i++) {
        if (i < nwant)
            CHECK_MSG(k->types[i] == want[i], "line %d: event %d is type %d, expected %d", line,
                      i, (int)k->types[i], (int)want[i]);
        if (k->types[i] == REV_RELEASED)
            continue;
        CHECK_MSG(k->seqs[i] > last, "line %d: event %d numbered %lld after %lld", line, i,
                  (long long)k->seqs[i], (long long)last);
        last = k->seqs[i];
    }
    CHECK_MSG(!k->text_gap, "line %d: a text piece did not continue the text", line);
    pthread_mutex_unlock(&k->e->mu);
}

static int64_t sink_last_seq(sink_t *k)
{
    pthread_mutex_lock(&k->e->mu);
    int64_t seq = k->n > 0 && k->n <= MAX_SINK ? k->seqs[k->n - 1] : -1;
    pthread_mutex_unlock(&k->e->mu);
    return seq;
}

static int sink_count(sink_t *k)
{
    pthread_mutex_lock(&k->e->mu);
    int n = k->n;
    pthread_mutex_unlock(&k->e->mu);
    return n;
}
#define CHECK_SINK(k, ...)                                                                         \
    do {                                                                                           \
        static const rev_type_t w_[] = {__VA_ARGS__};                                              \
        check_sink((k), w_, (int)ARRAY_LEN(w_), __LINE__);                                         \
    } while (0)

/* ============================== creates ============================== */

/* inline (waiting, a document, an inline provider): generated in the request, stored by
 * the writer's group commit: completed at once, revision 1, one event (COMPLETED, 1). */
static void test_inline_create_completes(void)
{
    env_t e;
    env_start(&e, true, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Inline ", "text."}, .block_at = -1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_WAIT);
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_DONE);
        CHECK_INT(k.cr.res.job_id, 0); /* no job */
        CHECK_INT(k.cr.res.rec.state, REC_COMPLETED);
        CHECK_STR(k.cr.res.rec.result, "Inline text.");
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, k.cr.res.rec.id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_STR(r.result, "Inline text.");
        CHECK_INT(r.revision, 1);
        CHECK(r.error == NULL);
        CHECK_INT(r.event_seq, 1);
        arena_free(&a);
        CHECK_INT(seen(&e, REV_COMPLETED, k.cr.res.rec.id), 1);
        CHECK_INT(seen(&e, REV_QUEUED, 0), 0);
    }
    call_free(&k);
    CHECK_INT(provider_calls(&e), 1);
    env_free(&e);
}

/* inline, streamed: stored completed before the answer; the stream tells the stored
 * text (inline_text), no job and no text events follow. */
static void test_inline_stream_create_is_stored_completed(void)
{
    env_t e;
    env_start(&e, true, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Streamed ", "inline."}, .block_at = -1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_STREAM);
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
        CHECK(k.cr.res.inline_text);
        CHECK_INT(k.cr.res.job_id, 0);
        CHECK_INT(k.cr.res.rec.state, REC_COMPLETED);
        CHECK_STR(k.cr.res.rec.result, "Streamed inline.");
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, k.cr.res.rec.id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_STR(r.result, "Streamed inline.");
        CHECK_INT(r.revision, 1);
        arena_free(&a);
        CHECK_INT(seen(&e, REV_TEXT, 0), 0);
    }
    call_free(&k);
    env_free(&e);
}

/* inline whose generation fails: CREATE_FAILED (a generation failure), and nothing was
 * stored — no record, no event but the FAILED. */
static void test_inline_create_failure_stores_nothing(void)
{
    env_t e;
    env_start(&e, true, LONG_WAIT_S);
    script(&e, (script_t){.block_at = -1, .fail = "The fake model refused."});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_WAIT);
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(k.cr.res.failure, RF_GENERATION);
        CHECK_STR(k.cr.res.error, "The fake model refused.");
        CHECK_INT(k.cr.res.rec.id, 0);
        arena_t a;
        arena_init(&a);
        list_query_t q = {.user_id = e.uid, .favorite = -1, .per_page = 10, .page = 1};
        record_list_t l = {0};
        CHECK_INT(records_list(e.s, e.c, KIND_DOC, &q, &a, &l), STORE_OK);
        CHECK_INT(l.total, 0);
        arena_free(&a);
        CHECK_INT(seen(&e, REV_FAILED, 0), 1);
        CHECK_INT(seen(&e, REV_QUEUED, 0) + seen(&e, REV_COMPLETED, 0), 0);
    }
    call_free(&k);
    CHECK_INT(provider_calls(&e), 1); /* not retried on the job path */
    env_free(&e);
}

/* job, waiting (a provider that is not inline): the worker's pieces, then COMPLETED with
 * the row as stored; the sequence created 1, generating 2, pieces 3..5, completed 6. */
static void test_job_wait_completes(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Once ", "upon ", "a time."}, .block_at = -1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_WAIT);
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_DONE);
        CHECK(k.cr.res.job_id > 0);
        CHECK_INT(k.cr.res.rec.state, REC_COMPLETED);
        CHECK_STR(k.cr.res.rec.result, "Once upon a time.");
        CHECK_INT(k.cr.res.rec.revision, 1);
        CHECK_INT(k.cr.res.rec.event_seq, 6);
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, k.cr.res.rec.id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_STR(r.result, "Once upon a time.");
        CHECK_INT(r.revision, 1);
        CHECK(r.error == NULL);
        CHECK_INT(r.event_seq, 6);
        arena_free(&a);
    }
    call_free(&k);
    env_shutdown(&e);
    int64_t running, queued = jobs_left(&e, &running);
    CHECK_INT(queued + running, 0);
    env_free(&e);
}

/* job, waiting, an image: the picture is in the media directory, a valid PNG, named by
 * the record. */
static void test_job_wait_image_completes_with_its_picture(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.block_at = -1});
    call_t k;
    call_init(&k, &e, KIND_IMG, CREATE_WAIT);
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_DONE);
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_IMG, k.cr.res.rec.id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 1);
        CHECK(r.media_key != NULL);
        int fd = -1;
        uint64_t size = 0;
        if (r.media_key && media_open_file(e.media, r.media_key, &fd, &size) == 0) {
            char *png = xmalloc(size ? size : 1);
            CHECK_INT(read(fd, png, size), (long long)size);
            int w = 0, h = 0;
            CHECK(png_inspect(png, size, &w, &h));
            CHECK_INT(w, 4);
            CHECK_INT(h, 4);
            free(png);
            close(fd);
        } else {
            CHECK_MSG(false, "the record's picture is missing");
        }
        arena_free(&a);
    }
    call_free(&k);
    env_shutdown(&e);
    CHECK_INT(media_files(&e), 1);
    env_free(&e);
}

/* job, waiting, the generation fails after a piece: CREATE_FAILED with the provider's
 * words; the record is stored failed until records_create_finish removes it. */
static void test_job_wait_failure_removes_the_record(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Half "}, .block_at = -1,
                          .fail = "The fake model broke off."});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_WAIT);
    records_create(e.s, &k.cr);
    if (wait_for(&e, pred_done, &k, "create outcome (done)", __LINE__)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(k.cr.res.failure, RF_GENERATION);
        CHECK_STR(k.cr.res.error, "The fake model broke off.");
        int64_t id = k.cr.res.rec.id;
        CHECK(id > 0);
        arena_t a;
        arena_init(&a);
        record_t r;
        /* FAILED is published once stored: the record is there, failed */
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_FAILED);
        CHECK_STR(r.error, "The fake model broke off.");
        records_create_finish(e.s, e.c, &k.cr);
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_NOTFOUND);
        arena_free(&a);
        CHECK_INT(seen(&e, REV_DELETED, id), 1);
    }
    call_free(&k);
    env_free(&e);
}

/* job, waiting, an image whose generation fails: no record, no picture left. */
static void test_job_wait_image_failure_leaves_nothing(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.block_at = -1, .fail = "The fake painter refused."});
    call_t k;
    call_init(&k, &e, KIND_IMG, CREATE_WAIT);
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(k.cr.res.failure, RF_GENERATION);
        CHECK_STR(k.cr.res.error, "The fake painter refused.");
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_IMG, k.cr.res.rec.id, &a, &r), STORE_NOTFOUND);
        arena_free(&a);
    }
    call_free(&k);
    env_shutdown(&e);
    CHECK_INT(media_files(&e), 0);
    env_free(&e);
}

/* job, waiting, the record deleted while its picture is being generated: CREATE_FAILED
 * (RF_DELETED) at once; the generation, let go after, finds its job gone: its picture
 * is removed and nothing is stored. */
static void test_job_wait_deleted_while_generating(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.block_at = 0});
    call_t k;
    call_init(&k, &e, KIND_IMG, CREATE_WAIT);
    records_create(e.s, &k.cr);
    WAIT_BLOCKED(&e, 1);
    int64_t id = k.cr.res.rec.id;
    arena_t a;
    arena_init(&a);
    record_t r;
    CHECK_INT(get(&e, KIND_IMG, id, &a, &r), STORE_OK);
    CHECK_INT(r.state, REC_GENERATING);
    CHECK_INT(records_delete(e.s, e.c, KIND_IMG, e.uid, id), STORE_OK);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
        CHECK_INT(k.cr.res.failure, RF_DELETED);
    }
    call_free(&k);
    release_provider(&e);
    WAIT_RETURNED(&e, 1);
    env_shutdown(&e); /* the worker has stored (or not) what the provider gave */
    CHECK_INT(get(&e, KIND_IMG, id, &a, &r), STORE_NOTFOUND);
    CHECK_INT(media_files(&e), 0);
    CHECK_INT(seen(&e, REV_COMPLETED, id), 0);
    int64_t running, queued = jobs_left(&e, &running);
    CHECK_INT(queued + running, 0);
    arena_free(&a);
    env_free(&e);
}

/* job, waiting past the wait limit (0.3 s; the provider holds until the outcome came):
 * CREATED_PENDING no sooner than the limit, and records_create_finish gives the record as
 * it stands; let go, the generation completes in the store. */
static void test_job_wait_past_the_wait_limit(void)
{
    env_t e;
    env_start(&e, false, SHORT_WAIT_S);
    script(&e, (script_t){.pieces = {"Slow ", "text."}, .block_at = 1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_WAIT);
    double t0 = mono_s();
    records_create(e.s, &k.cr);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
        CHECK_MSG(k.done_at - t0 >= SHORT_WAIT_S, "answered after %.3f s, before the limit",
                  k.done_at - t0);
        CHECK_MSG(k.cr.res.rec.state == REC_QUEUED || k.cr.res.rec.state == REC_GENERATING, "state %s",
                  rec_state_name(k.cr.res.rec.state));
        CHECK(k.cr.res.rec.result == NULL);
    }
    int64_t id = k.cr.res.rec.id;
    call_free(&k);
    release_provider(&e);
    WAIT_SEEN(&e, REV_COMPLETED, id, 1);
    CHECK_COMPLETED(&e, KIND_DOC, id, "Slow text.", 1);
    env_free(&e);
}

/* job, waiting at shutdown: records_release answers CREATED_PENDING; the stop makes the
 * provider give up and the job is released for the next start — not failed. */
static void test_job_wait_at_shutdown_releases_the_job(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Never ", "finished."}, .block_at = 1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_WAIT);
    records_create(e.s, &k.cr);
    WAIT_BLOCKED(&e, 1);
    jobs_drain(e.jobs);
    records_release(e.s);
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
        CHECK_INT(k.cr.res.rec.state, REC_GENERATING);
    }
    int64_t id = k.cr.res.rec.id;
    call_free(&k);
    env_shutdown(&e);
    pthread_mutex_lock(&e.mu);
    CHECK_INT(e.gave_up, 1);
    pthread_mutex_unlock(&e.mu);
    arena_t a;
    arena_init(&a);
    record_t r;
    CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
    CHECK_MSG(r.state != REC_FAILED, "state %s", rec_state_name(r.state));
    CHECK(r.error == NULL);
    CHECK(r.result == NULL);
    int64_t running, queued = jobs_left(&e, &running);
    CHECK_INT(queued, 1); /* released: the next start takes it */
    CHECK_INT(running, 0);
    CHECK_INT(seen(&e, REV_FAILED, id) + seen(&e, REV_COMPLETED, id), 0);
    arena_free(&a);
    env_free(&e);
}

/* async (Prefer: respond-async): CREATED_PENDING as soon as stored, then the worker
 * completes it in the store. */
static void test_async_create_completes_in_the_store(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Later."}, .block_at = -1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_ASYNC);
    records_create(e.s, &k.cr);
    CHECK_INT(k.ndone, 1); /* answered in the call: the ASYNC path waits for nothing */
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
        CHECK_INT(k.cr.res.rec.state, REC_QUEUED);
        CHECK_INT(k.cr.res.rec.event_seq, 1);
    }
    int64_t id = k.cr.res.rec.id;
    call_free(&k);
    WAIT_SEEN(&e, REV_COMPLETED, id, 1);
    CHECK_COMPLETED(&e, KIND_DOC, id, "Later.", 1);
    env_free(&e);
}

/* streamed: CREATED_STREAM once stored; the client then gets GENERATING, each TEXT
 * piece and COMPLETED, numbered in order, the pieces joined the stored text. */
static void test_stream_create_events(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Stream ", "of ", "words."}, .block_at = 0});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_STREAM);
    records_create(e.s, &k.cr);
    sink_t sk;
    memset(&sk, 0, sizeof(sk));
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
        CHECK(!k.cr.res.inline_text);
        sink_follow(&sk, &e, KIND_DOC, k.cr.res.rec.id);
        release_provider(&e);
        if (wait_for(&e, pred_sink_ended, &sk, "end of stream", __LINE__)) {
            CHECK_SINK(&sk, REV_GENERATING, REV_TEXT, REV_TEXT, REV_TEXT, REV_COMPLETED);
            CHECK_STR(buf_cstr(&sk.text), "Stream of words.");
            CHECK_STR(sk.result, "Stream of words.");
            CHECK_INT(sk.revision, 1);
        }
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, k.cr.res.rec.id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_STR(r.result, "Stream of words.");
        CHECK_INT(r.event_seq, sink_last_seq(&sk)); /* COMPLETED carried the stored number */
        arena_free(&a);
    }
    sink_free(&sk);
    call_free(&k);
    env_free(&e);
}

/* streamed, failing after two pieces: the client gets GENERATING, TEXT, TEXT, FAILED;
 * the record stays (a stream's does), failed with the error stored. */
static void test_stream_failure_after_pieces(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Partial ", "text"}, .block_at = 0,
                          .fail = "The fake stream failed."});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_STREAM);
    records_create(e.s, &k.cr);
    sink_t sk;
    memset(&sk, 0, sizeof(sk));
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
        sink_follow(&sk, &e, KIND_DOC, k.cr.res.rec.id);
        release_provider(&e);
        if (wait_for(&e, pred_sink_ended, &sk, "end of stream", __LINE__)) {
            CHECK_SINK(&sk, REV_GENERATING, REV_TEXT, REV_TEXT, REV_FAILED);
            CHECK_STR(buf_cstr(&sk.text), "Partial text");
            CHECK_STR(sk.error, "The fake stream failed.");
        }
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, k.cr.res.rec.id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_FAILED);
        CHECK_STR(r.error, "The fake stream failed.");
        CHECK(r.result == NULL);
        arena_free(&a);
    }
    sink_free(&sk);
    call_free(&k);
    env_free(&e);
}

/* streamed, the client gone after the first piece (the stream ends: records_unsubscribe,
 * as api/stream.c's sse_free), then the generation ends (completes, or fails): the store
 * ends as it would have, no event reaches the gone client, its subscription is gone. */
static void stream_client_gone(const char *fail)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Before ", "after."}, .block_at = 1, .fail = fail});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_STREAM);
    records_create(e.s, &k.cr);
    sink_t sk;
    memset(&sk, 0, sizeof(sk));
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
        int64_t id = k.cr.res.rec.id;
        sink_follow(&sk, &e, KIND_DOC, id);
        wait_for(&e, pred_sink_n, &sk, "first piece on the stream", __LINE__);
        WAIT_BLOCKED(&e, 1);
        sink_gone(&sk);
        CHECK_INT(hub_subscribers(e.s->hub, KIND_DOC, id), 0);
        int had = sink_count(&sk);
        CHECK_SINK(&sk, REV_GENERATING, REV_TEXT);
        release_provider(&e);
        WAIT_SEEN(&e, fail ? REV_FAILED : REV_COMPLETED, id, 1);
        pthread_mutex_lock(&e.mu);
        CHECK_INT(sk.n, had); /* nothing after the unsubscribe */
        CHECK(!sk.ended);
        pthread_mutex_unlock(&e.mu);
        CHECK_STR(buf_cstr(&sk.text), "Before ");
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        if (fail) {
            CHECK_INT(r.state, REC_FAILED);
            CHECK_STR(r.error, fail);
        } else {
            CHECK_INT(r.state, REC_COMPLETED);
            CHECK_STR(r.result, "Before after.");
            CHECK(r.error == NULL);
        }
        arena_free(&a);
    }
    sink_free(&sk);
    call_free(&k);
    env_free(&e);
}

static void test_stream_client_gone_then_completes(void)
{
    stream_client_gone(NULL);
}

static void test_stream_client_gone_then_fails(void)
{
    stream_client_gone("The fake model gave up.");
}

/* streamed, the record deleted while generating (after the first piece): the client
 * gets DELETED, numbered last; the piece written after the delete and the generation's
 * end reach nobody, nothing is stored. */
static void test_stream_deleted_while_generating(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Gone ", "soon."}, .block_at = 1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_STREAM);
    records_create(e.s, &k.cr);
    sink_t sk;
    memset(&sk, 0, sizeof(sk));
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
        int64_t id = k.cr.res.rec.id;
        sink_follow(&sk, &e, KIND_DOC, id);
        wait_for(&e, pred_sink_n, &sk, "first piece on the stream", __LINE__);
        WAIT_BLOCKED(&e, 1);
        CHECK_INT(records_delete(e.s, e.c, KIND_DOC, e.uid, id), STORE_OK);
        CHECK_SINK(&sk, REV_GENERATING, REV_TEXT, REV_DELETED);
        CHECK_INT(sink_last_seq(&sk), RECORDS_SEQ_END);
        release_provider(&e);
        WAIT_RETURNED(&e, 1);
        /* the workers stopped (joined): the outcome was tried; the client still listens
         * (records_release would now tell it RELEASED: not yet) */
        jobs_drain(e.jobs);
        jobs_stop(e.jobs);
        e.jobs = NULL;
        CHECK_INT(sink_count(&sk), 3);
        CHECK_STR(buf_cstr(&sk.text), "Gone ");
        env_shutdown(&e);
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_NOTFOUND);
        arena_free(&a);
        CHECK_INT(seen(&e, REV_COMPLETED, id) + seen(&e, REV_FAILED, id), 0);
        int64_t running, queued = jobs_left(&e, &running);
        CHECK_INT(queued + running, 0);
    }
    sink_free(&sk);
    call_free(&k);
    env_free(&e);
}

/* streamed, at shutdown: the client gets RELEASED (its stream ends, to resume
 * elsewhere); the job is released for the next start, the record not failed. */
static void test_stream_at_shutdown_is_released(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Cut ", "short."}, .block_at = 1});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_STREAM);
    records_create(e.s, &k.cr);
    sink_t sk;
    memset(&sk, 0, sizeof(sk));
    if (FINISH(&k)) {
        CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
        int64_t id = k.cr.res.rec.id;
        sink_follow(&sk, &e, KIND_DOC, id);
        wait_for(&e, pred_sink_n, &sk, "first piece on the stream", __LINE__);
        WAIT_BLOCKED(&e, 1);
        jobs_drain(e.jobs);
        records_release(e.s);
        CHECK_SINK(&sk, REV_GENERATING, REV_TEXT, REV_RELEASED);
        env_shutdown(&e);
        CHECK_INT(sink_count(&sk), 3);
        pthread_mutex_lock(&e.mu);
        CHECK_INT(e.gave_up, 1);
        pthread_mutex_unlock(&e.mu);
        arena_t a;
        arena_init(&a);
        record_t r;
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_MSG(r.state != REC_FAILED, "state %s", rec_state_name(r.state));
        CHECK(r.error == NULL);
        arena_free(&a);
        int64_t running, queued = jobs_left(&e, &running);
        CHECK_INT(queued, 1);
        CHECK_INT(running, 0);
    }
    sink_free(&sk);
    call_free(&k);
    env_free(&e);
}

/* ============================== regenerations ============================== */

/* The record id as stored, to regenerate. */
static bool read_rec(env_t *e, rec_kind_t kind, int64_t id, arena_t *a, record_t *r)
{
    int rc = get(e, kind, id, a, r);
    CHECK_INT(rc, STORE_OK);
    return rc == STORE_OK;
}

/* inline: generated in the request, stored in one transaction: CREATED_DONE, revision 2,
 * no job. */
static void test_inline_regenerate_makes_revision_2(void)
{
    env_t e;
    env_start(&e, true, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "First.");
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.pieces = {"Sec", "ond."}, .block_at = -1});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_WAIT);
        records_create(e.s, &k.cr);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATED_DONE);
            CHECK_INT(k.cr.res.job_id, 0);
            CHECK_INT(k.cr.res.rec.revision, 2);
            CHECK_STR(k.cr.res.rec.result, "Second.");
        }
        call_free(&k);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 2);
        CHECK_STR(r.result, "Second.");
        CHECK(r.error == NULL);
    }
    arena_free(&a);
    CHECK_INT(provider_calls(&e), 2);
    env_free(&e);
}

/* inline, the regeneration's generation fails: it takes the job path, which stores the
 * failure on the record: CREATE_FAILED, revision 1 kept, completed, error set. */
static void test_inline_regenerate_failure_keeps_revision_1(void)
{
    env_t e;
    env_start(&e, true, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "Kept.");
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.block_at = -1, .fail = "The fake model refused again."});
        script(&e, (script_t){.block_at = -1, .fail = "The fake model refused again."});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_WAIT);
        records_create(e.s, &k.cr);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
            CHECK_INT(k.cr.res.failure, RF_GENERATION);
            CHECK_STR(k.cr.res.error, "The fake model refused again.");
            CHECK(k.cr.res.job_id > 0); /* the job path */
        }
        call_free(&k);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 1);
        CHECK_STR(r.result, "Kept.");
        CHECK_STR(r.error, "The fake model refused again.");
    }
    arena_free(&a);
    CHECK_INT(provider_calls(&e), 3); /* the create, the inline try, the worker's */
    env_free(&e);
}

/* job, waiting: the worker regenerates; CREATED_DONE with revision 2. */
static void test_job_regenerate_makes_revision_2(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "First.");
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.pieces = {"Second ", "take."}, .block_at = -1});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_WAIT);
        records_create(e.s, &k.cr);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATED_DONE);
            CHECK(k.cr.res.job_id > 0);
            CHECK_INT(k.cr.res.rec.revision, 2);
            CHECK_STR(k.cr.res.rec.result, "Second take.");
        }
        call_free(&k);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 2);
        CHECK_STR(r.result, "Second take.");
        CHECK(r.error == NULL);
    }
    arena_free(&a);
    env_free(&e);
}

/* job, waiting, the regeneration fails: CREATE_FAILED, and the record is kept — revision
 * 1's text, state back to completed, the error set. */
static void test_job_regenerate_failure_keeps_revision_1(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "Original.");
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.pieces = {"Doomed "}, .block_at = -1,
                              .fail = "The fake regeneration failed."});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_WAIT);
        records_create(e.s, &k.cr);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATE_FAILED);
            CHECK_INT(k.cr.res.failure, RF_GENERATION);
            CHECK_STR(k.cr.res.error, "The fake regeneration failed.");
            /* out rec: the record as it stands, not the queued copy */
            CHECK_INT(k.cr.res.rec.state, REC_COMPLETED);
            CHECK_INT(k.cr.res.rec.revision, 1);
            CHECK_STR(k.cr.res.rec.result, "Original.");
            CHECK_STR(k.cr.res.rec.error, "The fake regeneration failed.");
        }
        call_free(&k);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK); /* not discarded */
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 1);
        CHECK_STR(r.result, "Original.");
        CHECK_STR(r.error, "The fake regeneration failed.");
        CHECK(records_last_failed(&r));
    }
    arena_free(&a);
    env_free(&e);
}

/* A regeneration of a record being generated (an async create's, held by the provider):
 * CREATE_BUSY, nothing changed; the running generation then completes as revision 1. */
static void regenerate_while_generating(bool text_inline)
{
    env_t e;
    env_start(&e, text_inline, LONG_WAIT_S);
    script(&e, (script_t){.pieces = {"Running."}, .block_at = 0});
    call_t k;
    call_init(&k, &e, KIND_DOC, CREATE_ASYNC); /* the job path whatever the provider */
    records_create(e.s, &k.cr);
    FINISH(&k);
    int64_t id = k.cr.res.rec.id;
    call_free(&k);
    WAIT_BLOCKED(&e, 1);
    arena_t a;
    arena_init(&a);
    record_t r;
    if (read_rec(&e, KIND_DOC, id, &a, &r)) {
        CHECK_INT(r.state, REC_GENERATING);
        /* inline: generated in the request first, refused by the store after */
        script(&e, (script_t){.pieces = {"Never stored."}, .block_at = -1});
        call_t g;
        call_init_regen(&g, &e, &r, CREATE_WAIT);
        records_create(e.s, &g.cr);
        if (FINISH(&g))
            CHECK_INT(g.cr.res.outcome, CREATE_BUSY);
        call_free(&g);
    }
    release_provider(&e);
    WAIT_SEEN(&e, REV_COMPLETED, id, 1);
    CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
    CHECK_INT(r.state, REC_COMPLETED);
    CHECK_INT(r.revision, 1);
    CHECK_STR(r.result, "Running.");
    CHECK(r.error == NULL);
    arena_free(&a);
    CHECK_INT(provider_calls(&e), text_inline ? 2 : 1);
    env_free(&e);
}

static void test_job_regenerate_while_generating_is_busy(void)
{
    regenerate_while_generating(false);
}

static void test_inline_regenerate_while_generating_is_busy(void)
{
    regenerate_while_generating(true);
}

/* A regeneration of a record that does not exist, or is another user's: CREATE_NOTFOUND,
 * nothing stored. */
static void regenerate_missing(bool text_inline)
{
    env_t e;
    env_start(&e, text_inline, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "Alice's.");
    int64_t bob = 0;
    CHECK_INT(store_user_ensure(e.c, "bob", &bob), STORE_OK);
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        for (int i = 0; i < 2; i++) {
            script(&e, (script_t){.pieces = {"Nowhere."}, .block_at = -1});
            call_t k;
            call_init_regen(&k, &e, &r, CREATE_WAIT);
            if (i == 0)
                k.cr.req.rec.id = id + 1000; /* missing */
            else
                k.cr.req.rec.user_id = bob; /* another user's */
            records_create(e.s, &k.cr);
            if (FINISH(&k))
                CHECK_INT(k.cr.res.outcome, CREATE_NOTFOUND);
            call_free(&k);
        }
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.revision, 1);
        CHECK_STR(r.result, "Alice's.");
    }
    arena_free(&a);
    env_shutdown(&e);
    int64_t running, queued = jobs_left(&e, &running);
    CHECK_INT(queued + running, 0);
    env_free(&e);
}

static void test_job_regenerate_missing_is_notfound(void)
{
    regenerate_missing(false);
}

static void test_inline_regenerate_missing_is_notfound(void)
{
    regenerate_missing(true);
}

/* streamed regeneration: CREATED_STREAM, then GENERATING, the pieces and COMPLETED
 * carrying revision 2. */
static void test_stream_regenerate_ends_with_revision_2(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "Old words.");
    arena_t a;
    arena_init(&a);
    record_t r;
    sink_t sk;
    memset(&sk, 0, sizeof(sk));
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.pieces = {"New ", "words."}, .block_at = 0});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_STREAM);
        records_create(e.s, &k.cr);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATED_STREAM);
            CHECK_INT(k.cr.res.rec.state, REC_QUEUED);
            sink_follow(&sk, &e, KIND_DOC, id);
            release_provider(&e);
            if (wait_for(&e, pred_sink_ended, &sk, "end of stream", __LINE__)) {
                CHECK_SINK(&sk, REV_GENERATING, REV_TEXT, REV_TEXT, REV_COMPLETED);
                CHECK_STR(buf_cstr(&sk.text), "New words.");
                CHECK_STR(sk.result, "New words.");
                CHECK_INT(sk.revision, 2);
            }
        }
        call_free(&k);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 2);
        CHECK_STR(r.result, "New words.");
    }
    sink_free(&sk);
    arena_free(&a);
    env_free(&e);
}

/* A waiting regeneration at shutdown: CREATED_PENDING; the job is released, not failed:
 * the record keeps revision 1 and no error. */
static void test_regenerate_at_shutdown_is_pending(void)
{
    env_t e;
    env_start(&e, false, LONG_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "Before the stop.");
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.pieces = {"Cut "}, .block_at = 1});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_WAIT);
        records_create(e.s, &k.cr);
        WAIT_BLOCKED(&e, 1);
        jobs_drain(e.jobs);
        records_release(e.s);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
            CHECK_INT(k.cr.res.rec.state, REC_GENERATING);
        }
        call_free(&k);
        env_shutdown(&e);
        pthread_mutex_lock(&e.mu);
        CHECK_INT(e.gave_up, 1);
        pthread_mutex_unlock(&e.mu);
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_MSG(r.state != REC_FAILED, "state %s", rec_state_name(r.state));
        CHECK(r.error == NULL);
        CHECK_INT(r.revision, 1);
        CHECK_STR(r.result, "Before the stop.");
        int64_t running, queued = jobs_left(&e, &running);
        CHECK_INT(queued, 1);
        CHECK_INT(running, 0);
    }
    arena_free(&a);
    env_free(&e);
}

/* A waiting regeneration past the wait limit (0.3 s; the provider holds until the
 * outcome came): CREATED_PENDING with the record as it stands; let go, revision 2. */
static void test_regenerate_past_the_wait_limit_is_pending(void)
{
    env_t e;
    env_start(&e, false, SHORT_WAIT_S);
    int64_t id = make_completed(&e, KIND_DOC, "Quick.");
    arena_t a;
    arena_init(&a);
    record_t r;
    if (id && read_rec(&e, KIND_DOC, id, &a, &r)) {
        script(&e, (script_t){.pieces = {"Slow ", "again."}, .block_at = 1});
        call_t k;
        call_init_regen(&k, &e, &r, CREATE_WAIT);
        double t0 = mono_s();
        records_create(e.s, &k.cr);
        if (FINISH(&k)) {
            CHECK_INT(k.cr.res.outcome, CREATED_PENDING);
            CHECK_MSG(k.done_at - t0 >= SHORT_WAIT_S, "answered after %.3f s, before the limit",
                      k.done_at - t0);
            CHECK_MSG(k.cr.res.rec.state == REC_QUEUED || k.cr.res.rec.state == REC_GENERATING,
                      "state %s", rec_state_name(k.cr.res.rec.state));
            CHECK_INT(k.cr.res.rec.revision, 1);
            CHECK_STR(k.cr.res.rec.result, "Quick.");
        }
        call_free(&k);
        release_provider(&e);
        WAIT_SEEN(&e, REV_COMPLETED, id, 2); /* the create's, then the regeneration's */
        CHECK_INT(get(&e, KIND_DOC, id, &a, &r), STORE_OK);
        CHECK_INT(r.state, REC_COMPLETED);
        CHECK_INT(r.revision, 2);
        CHECK_STR(r.result, "Slow again.");
    }
    arena_free(&a);
    env_free(&e);
}

int main(void)
{
    log_level = LOG_ERROR;
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
#define CASE(f) {#f, f}
        CASE(test_inline_create_completes),
        CASE(test_inline_stream_create_is_stored_completed),
        CASE(test_inline_create_failure_stores_nothing),
        CASE(test_job_wait_completes),
        CASE(test_job_wait_image_completes_with_its_picture),
        CASE(test_job_wait_failure_removes_the_record),
        CASE(test_job_wait_image_failure_leaves_nothing),
        CASE(test_job_wait_deleted_while_generating),
        CASE(test_job_wait_past_the_wait_limit),
        CASE(test_job_wait_at_shutdown_releases_the_job),
        CASE(test_async_create_completes_in_the_store),
        CASE(test_stream_create_events),
        CASE(test_stream_failure_after_pieces),
        CASE(test_stream_client_gone_then_completes),
        CASE(test_stream_client_gone_then_fails),
        CASE(test_stream_deleted_while_generating),
        CASE(test_stream_at_shutdown_is_released),
        CASE(test_inline_regenerate_makes_revision_2),
        CASE(test_inline_regenerate_failure_keeps_revision_1),
        CASE(test_job_regenerate_makes_revision_2),
        CASE(test_job_regenerate_failure_keeps_revision_1),
        CASE(test_job_regenerate_while_generating_is_busy),
        CASE(test_inline_regenerate_while_generating_is_busy),
        CASE(test_job_regenerate_missing_is_notfound),
        CASE(test_inline_regenerate_missing_is_notfound),
        CASE(test_stream_regenerate_ends_with_revision_2),
        CASE(test_regenerate_at_shutdown_is_pending),
        CASE(test_regenerate_past_the_wait_limit_is_pending),
#undef CASE
    };
    const char *only = getenv("RP_ONLY"); /* run one case by name */
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        if (only && *only && strcmp(only, cases[i].name) != 0)
            continue;
        int failed = t_failed;
        double t0 = mono_s();
        cases[i].fn();
        if (getenv("RP_VERBOSE") || t_failed != failed)
            fprintf(stderr, "%s %s (%.3f s)\n", t_failed != failed ? "FAILED" : "ok",
                    cases[i].name, mono_s() - t0);
    }
    TEST_DONE();
}
