/* jobs.c — see jobs.h. How a job moves:
 *   api (records.c) → store.record_create: record "queued" + job row, one transaction
 *   worker_main → store.job_claim: token + lease, record "generating"
 *   run_job → provider text/image (heartbeat renews the lease) → media_put for images
 *   → store.job_complete (record "completed") or store.job_fail (record "failed")
 *   → finished(): wakes the waiters of that record → the request answers. */
#include "gen/jobs.h"

#include "core/log.h"
#include "gen/templates.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTEMPTS 3
#define IDLE_POLL_MS 500
#define REMOTE_POLL_S 0.25

typedef struct waiter {
    struct waiter *next;
    rec_kind_t kind;
    int64_t user_id, record_id;
    double deadline, next_poll;
    jobs_wake_fn wake;
    void *arg;
} waiter_t;

struct jobs {
    const cfg_t *cfg;
    store_t *store;
    media_t *media;
    const provider_t *prov;
    bool poll_remote;
    atomic_bool stopping;
    bool closing; /* waiters released: new waiters wake at once */

    pthread_mutex_t mu;
    pthread_cond_t work_cv;    /* workers wait here for work */
    unsigned long work_seq;    /* bumped by jobs_notify */
    pthread_cond_t watch_cv;   /* the watcher waits here */
    waiter_t *waiters;

    pthread_t *workers;
    int nworkers;
    pthread_t watcher;
};

typedef struct {
    jobs_t *j;
    store_conn_t *c;
    const job_t *job;
    double last_renew;
    bool lost;
} hb_t;

/* ---- waiters ---- */

void jobs_wait(jobs_t *j, rec_kind_t kind, int64_t user_id, int64_t record_id,
               double deadline_mono, jobs_wake_fn wake, void *arg)
{
    waiter_t *w = xcalloc(1, sizeof(*w));
    w->kind = kind;
    w->user_id = user_id;
    w->record_id = record_id;
    w->deadline = deadline_mono;
    w->next_poll = mono_s() + REMOTE_POLL_S;
    w->wake = wake;
    w->arg = arg;
    pthread_mutex_lock(&j->mu);
    bool closing = j->closing;
    if (!closing) {
        w->next = j->waiters;
        j->waiters = w;
        pthread_cond_signal(&j->watch_cv);
    }
    pthread_mutex_unlock(&j->mu);
    if (closing) {
        wake(arg);
        free(w);
    }
}

/* Takes the waiters matching pred out of the list (under the lock). */
typedef bool (*waiter_pred)(const waiter_t *w, const void *ctx);

static waiter_t *take_waiters(jobs_t *j, waiter_pred pred, const void *ctx)
{
    waiter_t *taken = NULL, **pp = &j->waiters;
    while (*pp) {
        waiter_t *w = *pp;
        if (pred(w, ctx)) {
            *pp = w->next;
            w->next = taken;
            taken = w;
        } else {
            pp = &w->next;
        }
    }
    return taken;
}

static void wake_all(waiter_t *list)
{
    while (list) {
        waiter_t *next = list->next;
        list->wake(list->arg);
        free(list);
        list = next;
    }
}

typedef struct {
    rec_kind_t kind;
    int64_t id;
} rec_ref_t;

static bool pred_record(const waiter_t *w, const void *ctx)
{
    const rec_ref_t *r = ctx;
    return w->kind == r->kind && w->record_id == r->id;
}

static bool pred_all(const waiter_t *w, const void *ctx)
{
    return true;
}

static bool pred_due(const waiter_t *w, const void *ctx)
{
    return w->deadline <= *(const double *)ctx;
}

void jobs_finished(jobs_t *j, rec_kind_t kind, int64_t id)
{
    rec_ref_t ref = {kind, id};
    pthread_mutex_lock(&j->mu);
    waiter_t *list = take_waiters(j, pred_record, &ref);
    pthread_mutex_unlock(&j->mu);
    wake_all(list);
}

void jobs_release_waiters(jobs_t *j)
{
    pthread_mutex_lock(&j->mu);
    j->closing = true;
    waiter_t *list = take_waiters(j, pred_all, NULL);
    pthread_mutex_unlock(&j->mu);
    wake_all(list);
}

/* Polls the store for records that another process finished. */
static void poll_remote(jobs_t *j, store_conn_t *c, double now)
{
    enum { MAXQ = 64 };
    waiter_t snapshot[MAXQ];
    int n = 0;
    pthread_mutex_lock(&j->mu);
    for (waiter_t *w = j->waiters; w && n < MAXQ; w = w->next) {
        if (w->next_poll <= now) {
            w->next_poll = now + REMOTE_POLL_S;
            snapshot[n++] = *w;
        }
    }
    pthread_mutex_unlock(&j->mu);
    for (int i = 0; i < n; i++) {
        arena_t a;
        arena_init(&a);
        record_t rec;
        int rc = c->ops->record_get(c, snapshot[i].kind, snapshot[i].user_id,
                                    snapshot[i].record_id, &a, &rec);
        bool done = rc == STORE_NOTFOUND || (rc == STORE_OK && record_finished(&rec));
        arena_free(&a);
        if (done)
            jobs_finished(j, snapshot[i].kind, snapshot[i].record_id);
    }
}

static void *watcher_main(void *arg)
{
    jobs_t *j = arg;
    store_conn_t *c = NULL;
    while (!atomic_load(&j->stopping)) {
        double now = mono_s();
        pthread_mutex_lock(&j->mu);
        waiter_t *due = take_waiters(j, pred_due, &now);
        bool any = j->waiters != NULL;
        pthread_mutex_unlock(&j->mu);
        wake_all(due);
        if (any && j->poll_remote) {
            char err[256];
            if (!c)
                c = store_conn(j->store, err, sizeof(err));
            if (c)
                poll_remote(j, c, now);
        }
        /* sleep until the next deadline, at most 50 ms */
        pthread_mutex_lock(&j->mu);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long add_ns = j->waiters ? 20 * 1000000L : 50 * 1000000L;
        ts.tv_nsec += add_ns;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (!atomic_load(&j->stopping))
            pthread_cond_timedwait(&j->watch_cv, &j->mu, &ts);
        pthread_mutex_unlock(&j->mu);
    }
    return NULL;
}

/* ---- workers ---- */

static bool heartbeat(gen_ctx_t *ctx)
{
    hb_t *hb = ctx->heartbeat_arg;
    if (atomic_load(&hb->j->stopping))
        return false;
    if (hb->lost)
        return false;
    double now = mono_s();
    if (now - hb->last_renew >= hb->j->cfg->job_lease / 3) {
        int rc = hb->c->ops->job_renew(hb->c, hb->job->id, hb->job->token, hb->j->cfg->job_lease);
        if (rc == STORE_STALE) {
            log_warn("job=%lld: lease lost; another worker owns it now", (long long)hb->job->id);
            hb->lost = true;
            return false;
        }
        if (rc == STORE_OK)
            hb->last_renew = now;
    }
    return true;
}

static int parse_resolution(const char *res, int *w, int *h)
{
    return sscanf(res, "%dx%d", w, h) == 2 ? 0 : -1;
}

/* Applies an outcome, retrying while the database is briefly unreachable. */
static int apply(jobs_t *j, store_conn_t *c, const job_t *job, const char *text, int64_t words,
                 const char *media_key, const char *revised, const char *error)
{
    int rc = STORE_ERROR;
    for (int tries = 0; tries < 20; tries++) {
        rc = error ? c->ops->job_fail(c, job, error)
                   : c->ops->job_complete(c, job, text, words, media_key, revised);
        if (rc != STORE_UNAVAILABLE || atomic_load(&j->stopping))
            break;
        sleep_ms(500);
    }
    return rc;
}

static void run_job(jobs_t *j, store_conn_t *c, void *ws, const job_t *job)
{
    const record_t *rec = &job->rec;
    if (job->attempts > MAX_ATTEMPTS) {
        log_warn("job=%lld: given up after %d attempts", (long long)job->id, job->attempts - 1);
        apply(j, c, job, NULL, 0, NULL, NULL, "Generation was interrupted too many times.");
        jobs_finished(j, rec->kind, rec->id);
        return;
    }
    hb_t hb = {j, c, job, mono_s(), false};
    gen_ctx_t ctx = {.job_id = job->id, .worker_state = ws, .heartbeat = heartbeat, .heartbeat_arg = &hb};
    gen_result_t res;
    gen_result_init(&res);
    double t0 = mono_s();
    int ok;
    if (rec->kind == KIND_DOC) {
        gen_text_req_t req = {rec->template_id, rec->prompt, rec->creativity};
        ok = j->prov->text(j->prov, &ctx, &req, &res);
    } else {
        gen_image_req_t req = {rec->description, 0, 0, rec->style};
        if (parse_resolution(rec->resolution, &req.width, &req.height) != 0) {
            snprintf(res.error, sizeof(res.error), "The resolution is not supported.");
            ok = -1;
        } else {
            ok = j->prov->image(j->prov, &ctx, &req, &res);
        }
    }
    if (hb.lost)
        goto out; /* someone else owns the job now: touch nothing */
    if (ok != 0 && atomic_load(&j->stopping)) {
        /* interrupted by shutdown: release the job so the next start resumes it */
        c->ops->job_renew(c, job->id, job->token, 0);
        log_info("job=%lld: released at shutdown", (long long)job->id);
        goto out;
    }
    int rc;
    if (ok != 0) {
        rc = apply(j, c, job, NULL, 0, NULL, NULL, res.error[0] ? res.error : "Generation failed.");
        log_info("job=%lld: failed (%s)", (long long)job->id, res.error);
    } else if (rec->kind == KIND_DOC) {
        const char *text = buf_cstr(&res.text);
        rc = apply(j, c, job, text, count_words(text), NULL, NULL, NULL);
    } else {
        char key[MEDIA_KEY_LEN + 1];
        int mrc = media_put(j->media, res.png.data, res.png.len, key);
        if (mrc != 0) {
            rc = apply(j, c, job, NULL, 0, NULL, NULL,
                       mrc == MEDIA_FULL ? MEDIA_FULL_ERROR : "The picture could not be stored.");
        } else {
            rc = apply(j, c, job, NULL, 0, key, res.revised_prompt, NULL);
            if (rc != STORE_OK)
                media_remove(j->media, key); /* no record points at it: no orphan */
        }
    }
    if (rc == STORE_STALE)
        log_warn("job=%lld: result discarded (lease lost or record deleted)", (long long)job->id);
    else if (rc != STORE_OK)
        log_error("job=%lld: cannot store the outcome: %s", (long long)job->id, store_rc_name(rc));
    else
        log_info("job=%lld record=%s/%lld: completed in %.1f ms", (long long)job->id,
                 rec->kind == KIND_DOC ? "document" : "image", (long long)rec->id,
                 (mono_s() - t0) * 1000);
    jobs_finished(j, rec->kind, rec->id);
out:
    gen_result_free(&res);
}

static void idle_wait(jobs_t *j, unsigned long seen)
{
    pthread_mutex_lock(&j->mu);
    if (j->work_seq == seen && !atomic_load(&j->stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += IDLE_POLL_MS * 1000000L;
        while (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&j->work_cv, &j->mu, &ts);
    }
    pthread_mutex_unlock(&j->mu);
}

static void *worker_main(void *arg)
{
    jobs_t *j = arg;
    void *ws = j->prov->worker_new(j->prov);
    store_conn_t *c = NULL;
    while (!atomic_load(&j->stopping)) {
        pthread_mutex_lock(&j->mu);
        unsigned long seen = j->work_seq;
        pthread_mutex_unlock(&j->mu);
        char err[256];
        if (!c && !(c = store_conn(j->store, err, sizeof(err)))) {
            log_warn("jobs: no database connection: %s", err);
            idle_wait(j, seen);
            continue;
        }
        arena_t a;
        arena_init(&a);
        job_t job;
        int rc = c->ops->job_claim(c, j->cfg->job_lease, &a, &job);
        if (rc == STORE_OK)
            run_job(j, c, ws, &job);
        arena_free(&a);
        if (rc != STORE_OK)
            idle_wait(j, seen);
    }
    j->prov->worker_free(j->prov, ws);
    return NULL;
}

void jobs_notify(jobs_t *j)
{
    pthread_mutex_lock(&j->mu);
    j->work_seq++;
    pthread_cond_signal(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
}

jobs_t *jobs_start(const cfg_t *cfg, store_t *store, media_t *media, const provider_t *prov,
                   bool poll_remote_flag)
{
    jobs_t *j = xcalloc(1, sizeof(*j));
    j->cfg = cfg;
    j->store = store;
    j->media = media;
    j->prov = prov;
    j->poll_remote = poll_remote_flag;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->work_cv, NULL);
    pthread_cond_init(&j->watch_cv, NULL);
    j->nworkers = (int)cfg->workers;
    j->workers = xcalloc((size_t)j->nworkers, sizeof(pthread_t));
    for (int i = 0; i < j->nworkers; i++)
        pthread_create(&j->workers[i], NULL, worker_main, j);
    pthread_create(&j->watcher, NULL, watcher_main, j);
    return j;
}

void jobs_stop(jobs_t *j)
{
    if (!j)
        return;
    atomic_store(&j->stopping, true);
    pthread_mutex_lock(&j->mu);
    pthread_cond_broadcast(&j->work_cv);
    pthread_cond_broadcast(&j->watch_cv);
    pthread_mutex_unlock(&j->mu);
    for (int i = 0; i < j->nworkers; i++)
        pthread_join(j->workers[i], NULL);
    pthread_join(j->watcher, NULL);
    jobs_release_waiters(j);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->work_cv);
    pthread_cond_destroy(&j->watch_cv);
    free(j->workers);
    free(j);
}
