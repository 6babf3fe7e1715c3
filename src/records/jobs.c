/* jobs.c — see jobs.h. How a job moves:
 *   records service → store.record_create (or record_regenerate): record "queued" + job
 *   row, one transaction
 *   worker_main → store.job_claim: token + lease, record "generating" (REV_GENERATING)
 *   run_job → provider text/image (each piece of text is published as REV_TEXT, numbered
 *   after the claim's GENERATING, and with PostgreSQL handed to the service's sender for
 *   the other processes: records_send_piece);
 *   meanwhile the lease thread (renewer_main) renews the lease of every running job on
 *   its own timer, whatever the provider is doing
 *   → records_store_outcome (records/outcome.c): the picture, the store with its
 *   retries, the revision cap and the event (COMPLETED with the row as stored, FAILED,
 *   UNSTORED) — the service's, not the runner's. */
#include "records/jobs.h"

#include "core/log.h"
#include "core/thread.h"
#include "gen/templates.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTEMPTS 3
#define IDLE_POLL_MS 500

/* A running job's lease, kept by the lease thread. A worker fills its slot after a
 * claim and empties it before it stores the outcome or releases the job, under
 * lease_mu, which the lease thread holds while it renews: no renewal can follow. */
typedef struct {
    bool active;
    int64_t id;
    char token[sizeof(((job_t *)0)->token)];
    atomic_bool lost; /* the token no longer matches: another worker took the job over */
    _Atomic int64_t running; /* the job this worker runs, from its claim until its outcome
                              * is stored (0: none): no worker of this process claims it */
} lease_slot_t;

struct jobs {
    const cfg_t *cfg;
    store_t *store;
    media_t *media;
    const provider_t *prov;
    records_t *records;
    bool shared; /* several processes share the store: send them the text pieces */
    atomic_bool stopping;
    atomic_bool draining; /* jobs_drain: no new claims; running jobs go on */
    atomic_int running;   /* jobs being run now */

    pthread_mutex_t mu;
    pthread_cond_t work_cv;    /* workers wait here for work */
    unsigned long work_seq;    /* bumped by jobs_notify */

    pthread_t *workers;
    int nworkers;
    int nstarted; /* workers[0..nstarted) are running threads */

    pthread_mutex_t lease_mu;
    pthread_cond_t lease_cv; /* signalled at stop */
    lease_slot_t *slots;     /* one per worker */
    pthread_t renewer;
    bool renewer_started;
};

typedef struct {
    jobs_t *j;
    int slot;
} worker_arg_t;

typedef struct {
    jobs_t *j;
    store_conn_t *c;
    const job_t *job;
    lease_slot_t *slot;
    int64_t offset; /* bytes of text published so far */
    int64_t pieces; /* pieces published so far: the last one is numbered G + pieces */
} hb_t;

static void publish(jobs_t *j, const job_t *job, rev_type_t type, const char *error,
                    rec_failure_t failure, double t0)
{
    const record_t *rec = &job->rec;
    rev_t ev = {.type = type, .kind = rec->kind, .id = rec->id, .user_id = rec->user_id,
                .error = error, .failure = failure, .provider = j->prov->name,
                .job_id = job->id};
    if (type == REV_GENERATING) /* the claim moved the record's sequence to G */
        ev.seq = ev.gen_seq = rec->event_seq;
    if (type == REV_COMPLETED || type == REV_FAILED)
        ev.duration_s = mono_s() - t0;
    records_publish(j->records, &ev);
}

/* The provider's next piece of text: to the record's subscribers. */
static void on_text(gen_ctx_t *ctx, const char *piece, size_t len)
{
    hb_t *hb = ctx->on_text_arg;
    const record_t *rec = &hb->job->rec;
    hb->offset += (int64_t)len;
    hb->pieces++;
    rev_t ev = {.type = REV_TEXT, .kind = rec->kind, .id = rec->id, .user_id = rec->user_id,
                .text = piece, .len = len, .offset = hb->offset, .job_id = hb->job->id,
                .gen_seq = rec->event_seq, .seq = rec->event_seq + hb->pieces, .pieces = 1};
    records_publish(hb->j->records, &ev);
    if (hb->j->shared)
        records_send_piece(hb->j->records, hb->job, &ev);
}

/* ---- workers ---- */

/* The provider asks whether to go on: not after a stop, not once another worker owns
 * the job. It renews nothing itself: the lease thread does, on its own timer. */
static bool heartbeat(gen_ctx_t *ctx)
{
    hb_t *hb = ctx->heartbeat_arg;
    return !atomic_load(&hb->j->stopping) && !atomic_load(&hb->slot->lost);
}

/* ---- the lease thread ---- */

static void lease_hold(jobs_t *j, lease_slot_t *slot, const job_t *job)
{
    pthread_mutex_lock(&j->lease_mu);
    slot->id = job->id;
    memcpy(slot->token, job->token, sizeof(slot->token));
    atomic_store(&slot->lost, false);
    slot->active = true;
    pthread_mutex_unlock(&j->lease_mu);
}

/* Ends the renewals of the slot's job: from here on the worker alone decides. */
static void lease_drop(jobs_t *j, lease_slot_t *slot)
{
    pthread_mutex_lock(&j->lease_mu);
    slot->active = false;
    pthread_mutex_unlock(&j->lease_mu);
}

/* Renews every running job's lease each quarter of --job-lease, from its own thread
 * and connection, so a provider that is busy (a long picture, a slow machine, valgrind)
 * never lets its lease run out while its worker lives. Only a dead process's jobs are
 * taken over. */
static void *renewer_main(void *arg)
{
    jobs_t *j = arg;
    store_conn_t *c = NULL;
    double every = j->cfg->job_lease / 4;
    pthread_mutex_lock(&j->lease_mu);
    while (!atomic_load(&j->stopping)) {
        thread_cond_wait_for(&j->lease_cv, &j->lease_mu, every);
        if (atomic_load(&j->stopping))
            break;
        char err[256];
        for (int i = 0; i < j->nworkers; i++) {
            lease_slot_t *slot = &j->slots[i];
            if (!slot->active || atomic_load(&slot->lost))
                continue;
            if (!c && !(c = store_conn(j->store, err, sizeof(err)))) {
                log_warn("jobs: lease thread has no database connection: %s", err);
                break;
            }
            int rc = store_job_renew(c, slot->id, slot->token, j->cfg->job_lease);
            if (rc == STORE_STALE) {
                log_warn("job=%lld: lease lost; another worker owns it now", (long long)slot->id);
                atomic_store(&slot->lost, true);
            }
        }
    }
    pthread_mutex_unlock(&j->lease_mu);
    return NULL;
}

static int parse_resolution(const char *res, int *w, int *h)
{
    return sscanf(res, "%dx%d", w, h) == 2 ? 0 : -1;
}

/* An action's run (API.md §17): the part of the text it rewrites and the whole new
 * text once spliced. */
typedef struct {
    size_t b0, b1;
    char *whole; /* malloc'd */
} action_t;

/* Runs job's action on its record's latest text: res->text gets the new part (a
 * continuation's separator first, passed on as its first piece). An empty selection
 * rewrites nothing: no provider call, the part stays empty. */
static int run_action(jobs_t *j, gen_ctx_t *ctx, const job_t *job, action_t *act,
                      gen_result_t *res)
{
    const record_t *rec = &job->rec;
    if (!rec->result) {
        snprintf(res->error, sizeof(res->error), "The document has no result yet.");
        return -1;
    }
    records_action_range(rec->result, job->action, job->sel_start, job->sel_end, &act->b0,
                         &act->b1);
    const char *sep = records_action_sep(rec->result, job->action, act->b0);
    bool cont = strcmp(job->action, "continue") == 0;
    if (act->b0 == act->b1 && !cont)
        return 0;
    gen_text_req_t req = {.template_id = rec->template_id, .prompt = rec->prompt,
                          .creativity = rec->creativity};
    req.tone = rec->tone;
    req.language = rec->language;
    req.length = rec->length;
    req.action = job->action;
    req.text = rec->result;
    req.sel_start = act->b0;
    req.sel_end = act->b1;
    gen_result_t part;
    gen_result_init(&part);
    if (*sep && ctx->on_text)
        ctx->on_text(ctx, sep, strlen(sep));
    int ok = j->prov->text(j->prov, ctx, &req, &part);
    buf_reset(&res->text);
    if (ok == 0) {
        buf_puts(&res->text, sep);
        buf_append(&res->text, part.text.data ? part.text.data : "", part.text.len);
        res->prompt_tokens = part.prompt_tokens;
        res->completion_tokens = part.completion_tokens;
        res->truncated = part.truncated;
    } else {
        memcpy(res->error, part.error, sizeof(res->error));
    }
    gen_result_free(&part);
    return ok;
}

static void run_job(jobs_t *j, store_conn_t *c, void *ws, const job_t *job, lease_slot_t *slot)
{
    const record_t *rec = &job->rec;
    publish(j, job, REV_GENERATING, NULL, RF_NONE, 0); /* the claim's number, G */
    if (job->attempts > MAX_ATTEMPTS) {
        log_warn("job=%lld: given up after %d attempts", (long long)job->id, job->attempts - 1);
        records_outcome_t o = {.error = "Generation was interrupted too many times.",
                               .failure = RF_GENERATION, .t0 = mono_s()};
        records_store_outcome(j->records, c, job, &o, &j->stopping);
        return;
    }
    hb_t hb = {j, c, job, slot, 0, 0};
    gen_ctx_t ctx = {.job_id = job->id, .worker_state = ws, .heartbeat = heartbeat,
                     .heartbeat_arg = &hb, .on_text = on_text, .on_text_arg = &hb};
    gen_result_t res;
    gen_result_init(&res);
    double t0 = mono_s();
    int ok;
    arena_t ta;
    arena_init(&ta);
    action_t act = {0};
    if (rec->kind == KIND_DOC && job->action) {
        ok = run_action(j, &ctx, job, &act, &res);
    } else if (rec->kind == KIND_DOC) {
        gen_text_req_t req; /* with the template's instruction and the writing options */
        if (records_text_req(c, rec, &ta, &req) != STORE_OK) {
            snprintf(res.error, sizeof(res.error), "Storage is unavailable, try again later.");
            ok = -1;
        } else {
            ok = j->prov->text(j->prov, &ctx, &req, &res);
        }
    } else {
        gen_image_req_t req = {rec->description, 0, 0, rec->style};
        if (parse_resolution(rec->resolution, &req.width, &req.height) != 0) {
            snprintf(res.error, sizeof(res.error), "The resolution is not supported.");
            ok = -1;
        } else {
            ok = j->prov->image(j->prov, &ctx, &req, &res);
        }
    }
    records_flush_pieces(j->records, job->id); /* the others hear of the end after the text */
    lease_drop(j, slot); /* no renewal from here on: the outcome is ours to store */
    if (atomic_load(&slot->lost)) {
        /* someone else owns the job now, or it is gone with its record: touch nothing
         * (a record deleted where no event reached this process is told here) */
        records_job_lost(j->records, c, job);
        goto out;
    }
    if (ok != 0 && atomic_load(&j->stopping)) {
        /* interrupted by shutdown: release the job so the next start resumes it */
        store_job_release(c, job->id, job->token);
        log_info("job=%lld: released at shutdown", (long long)job->id);
        goto out;
    }
    /* the service stores it: picture, store retries, revision cap, events */
    records_outcome_t o = {.ok = ok == 0, .t0 = t0, .pieces = hb.pieces};
    if (ok != 0) {
        o.error = res.error;
        o.failure = RF_GENERATION;
    } else if (rec->kind == KIND_DOC && job->action) {
        /* the part rewritten, spliced into the unchanged rest */
        o.text = act.whole = records_action_splice(rec->result, act.b0, act.b1,
                                                   res.text.data ? res.text.data : "",
                                                   res.text.len);
        o.part = true;
        o.part_start = (int64_t)act.b0;
        o.part_after = (int64_t)(strlen(rec->result) - act.b1);
        o.prompt_tokens = res.prompt_tokens;
        o.completion_tokens = res.completion_tokens;
        o.truncated = res.truncated;
    } else if (rec->kind == KIND_DOC) {
        o.text = buf_cstr(&res.text);
        o.prompt_tokens = res.prompt_tokens;
        o.completion_tokens = res.completion_tokens;
        o.truncated = res.truncated;
    } else {
        o.png = res.png.data;
        o.png_len = res.png.len;
        o.revised_prompt = res.revised_prompt;
    }
    records_store_outcome(j->records, c, job, &o, &j->stopping);
out:
    arena_free(&ta);
    free(act.whole);
    gen_result_free(&res);
}

static void idle_wait(jobs_t *j, unsigned long seen)
{
    pthread_mutex_lock(&j->mu);
    if (j->work_seq == seen && !atomic_load(&j->stopping))
        thread_cond_wait_for(&j->work_cv, &j->mu, IDLE_POLL_MS / 1e3);
    pthread_mutex_unlock(&j->mu);
}

/* The ids of the jobs the workers run now, into out[0..nworkers): how many. */
static size_t running_ids(jobs_t *j, int64_t *out)
{
    size_t n = 0;
    for (int i = 0; i < j->nworkers; i++) {
        int64_t id = atomic_load(&j->slots[i].running);
        if (id)
            out[n++] = id;
    }
    return n;
}

static void *worker_main(void *arg)
{
    worker_arg_t *wa = arg;
    jobs_t *j = wa->j;
    lease_slot_t *slot = &j->slots[wa->slot];
    free(wa);
    void *ws = j->prov->worker_new(j->prov);
    int64_t *busy = xcalloc((size_t)j->nworkers, sizeof(*busy));
    store_conn_t *c = NULL;
    while (!atomic_load(&j->stopping)) {
        pthread_mutex_lock(&j->mu);
        unsigned long seen = j->work_seq;
        pthread_mutex_unlock(&j->mu);
        if (atomic_load(&j->draining)) { /* others claim what is queued */
            idle_wait(j, seen);
            continue;
        }
        char err[256];
        if (!c && !(c = store_conn(j->store, err, sizeof(err)))) {
            log_warn("jobs: no database connection: %s", err);
            idle_wait(j, seen);
            continue;
        }
        arena_t a;
        arena_init(&a);
        job_t job;
        /* The jobs this process runs now are alive, whatever their lease says (it runs
         * out when the store refuses the renewals, a full disk): never taken over here. */
        size_t nbusy = running_ids(j, busy);
        int rc = store_job_claim(c, j->cfg->job_lease, busy, nbusy, &a, &job);
        if (rc == STORE_OK) {
            atomic_store(&slot->running, job.id);
            atomic_fetch_add(&j->running, 1);
            lease_hold(j, slot, &job);
            run_job(j, c, ws, &job, slot);
            lease_drop(j, slot);
            atomic_fetch_sub(&j->running, 1);
            atomic_store(&slot->running, 0);
        }
        arena_free(&a);
        if (rc != STORE_OK)
            idle_wait(j, seen);
    }
    free(busy);
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
                   records_t *records)
{
    jobs_t *j = xcalloc(1, sizeof(*j));
    j->cfg = cfg;
    j->store = store;
    j->media = media;
    j->prov = prov;
    j->records = records;
    j->shared = store_shared(store);
    pthread_mutex_init(&j->mu, NULL);
    thread_cond_init(&j->work_cv);
    pthread_mutex_init(&j->lease_mu, NULL);
    thread_cond_init(&j->lease_cv);
    j->nworkers = (int)cfg->workers;
    j->workers = xcalloc((size_t)j->nworkers, sizeof(pthread_t));
    j->slots = xcalloc((size_t)j->nworkers, sizeof(lease_slot_t));
    /* all or nothing: a worker without the renewer would lose its leases, and fewer
     * workers than --workers is not what the operator asked for */
    bool ok = j->renewer_started = thread_start(&j->renewer, "ink-renewer", renewer_main, j);
    for (int i = 0; ok && i < j->nworkers; i++) {
        worker_arg_t *wa = xcalloc(1, sizeof(*wa));
        wa->j = j;
        wa->slot = i;
        char name[16];
        snprintf(name, sizeof(name), "ink-worker-%u", (unsigned)i % 1000u);
        if ((ok = thread_start(&j->workers[i], name, worker_main, wa)))
            j->nstarted++;
        else
            free(wa);
    }
    if (!ok) {
        jobs_stop(j);
        return NULL;
    }
    return j;
}

void jobs_drain(jobs_t *j)
{
    if (j)
        atomic_store(&j->draining, true);
}

int jobs_running(jobs_t *j)
{
    return j ? atomic_load(&j->running) : 0;
}

void jobs_stop(jobs_t *j)
{
    if (!j)
        return;
    atomic_store(&j->stopping, true);
    pthread_mutex_lock(&j->mu);
    pthread_cond_broadcast(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_lock(&j->lease_mu);
    pthread_cond_broadcast(&j->lease_cv);
    pthread_mutex_unlock(&j->lease_mu);
    thread_join(j->renewer, j->renewer_started);
    for (int i = 0; i < j->nstarted; i++)
        thread_join(j->workers[i], true);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->work_cv);
    pthread_mutex_destroy(&j->lease_mu);
    pthread_cond_destroy(&j->lease_cv);
    free(j->slots);
    free(j->workers);
    free(j);
}
