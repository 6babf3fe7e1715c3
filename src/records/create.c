/* create.c — a create, regenerate or action (records.h records_create), its paths, and
 * its one exit.
 *
 * The paths:
 *   begin hook → quota → inline?  generate in the caller → writer (group commit) → COMPLETED
 *                                 (a regeneration: one transaction, record_regenerated →
 *                                 QUEUED, COMPLETED; one that fails takes the job path)
 *                      → job:     store record+job (QUEUED) → wake a worker
 *                                 WAIT: subscribe to the record, then read it once (a
 *                                 worker may have been faster); COMPLETED, FAILED,
 *                                 DELETED, the wait limit or shutdown end the wait
 *
 * The one exit, in two halves as libuv's work and after-work callbacks:
 *  - create_exit (any thread: the request's, the writer's, a worker's or the listener's
 *    through the subscription, the hub's ticker): every way a create can end calls it;
 *    the first call wins a compare-and-set and only it sets the outcome, settles the
 *    quota's reservation (released, unless it was handed to the stored record's
 *    generation, which ends it with its COMPLETED/FAILED/DELETED event), marks an
 *    Idempotency-Key answer rolled back with the record, and wakes the waiter
 *    (cr->done). Every later call is a no-op.
 *  - records_create_finish (the waiter's thread, which may use the store; once): ends
 *    the subscription, discards a failed waited create, reads a pending one again, and
 *    gives the idempotency hook its answer (the hook's end).
 * The effects go through s->fx (records_int.h), so a unit test counts each one
 * (tests/unit/test_exit.c). Events go out one way, records_publish. */
#include "records/records_int.h"

#include "core/log.h"
#include "core/unicode.h"
#include "records/jobs.h"
#include "store/writer.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The private part of a create: the waiter of the job path, or the writer item of the
 * inline path. Lives in cr->arena. */
typedef struct {
    records_t *s;
    records_create_t *cr;
    atomic_bool resolved; /* create_exit ran */
    bool finished;        /* records_create_finish ran */
    double deadline;
    records_sub_t *sub;
    writer_item_t item;
    double t0;
    int64_t ticket; /* the quota's reservation (quota.c), 0 for none or once settled */
} create_priv_t;

/* How a create ended, for create_exit. */
typedef struct {
    create_outcome_t outcome;
    const record_t *rec; /* the record as it ended, copied into cr->res.rec (NULL: as it is) */
    const char *error;   /* CREATE_FAILED: why (copied) */
    rec_failure_t failure;
    int store_rc;        /* CREATE_STORE_ERROR */
    bool unstored;       /* nothing was stored, or it was rolled back: a kept answer too */
    bool inline_text;    /* CREATED_STREAM of the inline path */
} create_end_t;

/* The real effects (records_start sets them in s->fx). */
static void fx_quota(records_t *s, int64_t ticket, int64_t id)
{
    if (id > 0)
        quota_bind(s->quota, ticket, id);
    else
        quota_release(s->quota, ticket);
}

static void fx_wake(records_t *s, records_create_t *cr)
{
    (void)s;
    cr->done(cr);
}

static void fx_answer(records_t *s, records_create_t *cr)
{
    if (s->has_hook && s->hook.end)
        s->hook.end(s->hook.arg, cr);
}

const records_exit_fx_t records_exit_fx = {fx_quota, fx_wake, fx_answer};

/* The reservation is settled, once: handed to record id's generation, stored (id > 0:
 * its end event ends it), or released (0). */
static void quota_settle(create_priv_t *p, int64_t id)
{
    if (p->ticket)
        p->s->fx.quota(p->s, p->ticket, id);
    p->ticket = 0;
}

/* The one exit (see above). True for the call that won. */
static bool create_exit(create_priv_t *p, create_end_t end)
{
    bool expected = false;
    if (!atomic_compare_exchange_strong(&p->resolved, &expected, true))
        return false;
    records_t *s = p->s;
    records_create_t *cr = p->cr;
    if (end.rec && end.rec != &cr->res.rec)
        record_copy(cr->arena, &cr->res.rec, end.rec);
    cr->res.outcome = end.outcome;
    if (end.outcome == CREATE_FAILED) {
        cr->res.error = arena_strdup(cr->arena, end.error ? end.error : "Generation failed.");
        cr->res.failure = end.failure ? end.failure : records_failure_of(end.error);
    }
    if (end.outcome == CREATE_STORE_ERROR)
        cr->res.store_rc = end.store_rc;
    cr->res.inline_text = end.inline_text;
    quota_settle(p, 0); /* (unless handed over: nothing of it is generating any more) */
    if (cr->hook.keep && end.unstored)
        cr->hook.keep->stored = false; /* rolled back with the record (or never written) */
    s->fx.wake(s, cr);
    return true;
}

/* The test hook of records_start: the commit that kept a key's answer is done; the
 * process dies as kill -9 would kill it (no exit handlers, nothing flushed; under
 * valgrind nothing is reported either, as for any kill -9). */
static void after_commit(records_t *s, records_create_t *cr)
{
    if (s->exit_after_kept_commit && cr->hook.keep && cr->hook.keep->stored)
        raise(SIGKILL);
}

/* The answer kept with the record for the path taken (see records_hook_state_t.keep): the
 * hook's status for that outcome. */
static void keep_for(records_t *s, records_create_t *cr, create_outcome_t outcome, bool final)
{
    if (cr->hook.keep) {
        cr->hook.keep->status = s->hook.status ? s->hook.status(s->hook.arg, cr, outcome) : 0;
        cr->hook.keep->final = final;
    }
}

/* The end of a store step that did not store (a rolled-back transaction). */
static create_end_t not_stored(int rc)
{
    return (create_end_t){.outcome = rc == STORE_BUSY       ? CREATE_BUSY
                                     : rc == STORE_NOTFOUND ? CREATE_NOTFOUND
                                                            : CREATE_STORE_ERROR,
                          .store_rc = rc, .unstored = true};
}

/* The end of a generation stored on the inline path. */
static create_end_t stored_inline(const records_create_t *cr)
{
    bool stream = cr->req.mode == CREATE_STREAM;
    return (create_end_t){.outcome = stream ? CREATED_STREAM : CREATED_DONE,
                          .inline_text = stream};
}

/* A waiting create's subscription (under the event lock, any thread). */
static void on_wait_event(void *arg, const rev_t *ev)
{
    create_priv_t *p = arg;
    if (ev->job_id && p->cr->res.job_id && ev->job_id != p->cr->res.job_id)
        return; /* a late event of the record's previous job (regenerated since) */
    create_end_t end = {.outcome = CREATED_PENDING}; /* (re-read by create_finish) */
    switch (ev->type) {
    case REV_COMPLETED:
        end.rec = ev->rec;
        end.outcome = ev->rec ? CREATED_DONE : CREATED_PENDING;
        break;
    case REV_FAILED:
        end.outcome = CREATE_FAILED;
        end.error = ev->error;
        end.failure = ev->failure;
        break;
    case REV_DELETED:
        end.outcome = CREATE_FAILED;
        end.error = "The record was deleted before its generation finished.";
        end.failure = RF_DELETED;
        break;
    case REV_RELEASED: break;
    case REV_TICK:
        if (ev->now_mono < p->deadline)
            return;
        break;
    default: return;
    }
    create_exit(p, end);
}

static void on_written(void *arg)
{
    create_priv_t *p = arg;
    records_create_t *cr = p->cr;
    if (p->item.rc != STORE_OK) {
        create_exit(p, (create_end_t){.outcome = CREATE_STORE_ERROR, .store_rc = p->item.rc,
                                       .unstored = true});
        return;
    }
    after_commit(p->s, cr);
    rev_t ev = {.type = REV_COMPLETED, .kind = cr->res.rec.kind, .id = cr->res.rec.id,
                .user_id = cr->res.rec.user_id, .rec = &cr->res.rec, .provider = p->s->d.prov->name,
                .duration_s = mono_s() - p->t0, .inline_path = true, .seq = cr->res.rec.event_seq};
    quota_settle(p, 0); /* (stored: the usage counts it now) */
    records_publish(p->s, &ev);
    create_exit(p, stored_inline(cr));
}

/* A regeneration (records_req_t.regenerate): the record goes back to queued with a
 * job of the new inputs, in one transaction; the rest is a job create's. */
static int store_regenerate(store_conn_t *c, records_create_t *cr, int64_t *job_id)
{
    record_t now;
    rec_action_t act = {cr->req.action, cr->req.sel_start, cr->req.sel_end};
    int rc = store_record_regenerate(c, &cr->res.rec, cr->req.action ? &act : NULL, cr->hook.keep, cr->arena,
                                     &now, job_id);
    if (rc == STORE_OK)
        cr->res.rec = now;
    return rc;
}

/* A regeneration generated in the request (create_inline): stored in one transaction,
 * then published as a job's would be (QUEUED and COMPLETED, their numbers the store's). */
static void regenerated_inline(records_t *s, create_priv_t *p)
{
    records_create_t *cr = p->cr;
    char err[256];
    store_conn_t *c = store_conn(s->d.store, err, sizeof(err));
    keep_for(s, cr, CREATED_DONE, true);
    record_t out;
    /* the revision cap in the same transaction (records_revision_made's, for a document) */
    int rc = c ? store_record_regenerated(c, &cr->res.rec, records_revision_cap(s), cr->hook.keep,
                                          cr->arena, &out)
               : STORE_UNAVAILABLE;
    quota_settle(p, 0); /* (stored: the usage counts it now) */
    if (rc != STORE_OK) {
        create_exit(p, not_stored(rc));
        return;
    }
    cr->res.rec = out;
    after_commit(s, cr); /* (the cap held in the commit: before anyone hears of it) */
    rev_t queued = {.type = REV_QUEUED, .kind = out.kind, .id = out.id, .user_id = out.user_id,
                    .seq = out.event_seq - 1};
    records_publish(s, &queued);
    rev_t ev = {.type = REV_COMPLETED, .kind = out.kind, .id = out.id, .user_id = out.user_id,
                .rec = &cr->res.rec, .provider = s->d.prov->name, .duration_s = mono_s() - p->t0,
                .seq = out.event_seq};
    records_publish(s, &ev); /* (other processes too: a regenerate has no job) */
    create_exit(p, stored_inline(cr));
}

/* Generates in the caller and stores through the writer (a create) or in one
 * transaction (a regeneration). False when a regeneration's generation failed: it then
 * takes the job path, which stores the failure on the record (§16). */
static bool create_inline(records_t *s, create_priv_t *p)
{
    records_create_t *cr = p->cr;
    gen_ctx_t ctx = {0};
    gen_result_t res;
    gen_result_init(&res);
    gen_text_req_t req;
    char err[256];
    int trc = records_text_req(store_conn(s->d.store, err, sizeof(err)), &cr->res.rec, cr->arena, &req);
    p->t0 = mono_s();
    if (trc != STORE_OK)
        snprintf(res.error, sizeof(res.error), "Storage is unavailable, try again later.");
    if (trc != STORE_OK || s->d.prov->text(s->d.prov, &ctx, &req, &res) != 0) {
        if (cr->req.regenerate) {
            gen_result_free(&res);
            return false;
        }
        const char *why = arena_strdup(cr->arena, res.error[0] ? res.error : "Generation failed.");
        gen_result_free(&res);
        rev_t ev = {.type = REV_FAILED, .kind = cr->res.rec.kind, .user_id = cr->res.rec.user_id,
                    .error = why, .failure = RF_GENERATION, .provider = s->d.prov->name,
                    .duration_s = mono_s() - p->t0, .inline_path = true};
        quota_settle(p, 0);
        records_publish(s, &ev);
        create_exit(p, (create_end_t){.outcome = CREATE_FAILED, .error = why,
                                       .failure = RF_GENERATION, .unstored = true});
        return true;
    }
    cr->res.rec.result = arena_strndup(cr->arena, res.text.data ? res.text.data : "", res.text.len);
    cr->res.rec.words = uni_count_words(cr->res.rec.result, cr->res.rec.result ? strlen(cr->res.rec.result) : 0);
    cr->res.rec.prompt_tokens = res.prompt_tokens;
    cr->res.rec.completion_tokens = res.completion_tokens;
    cr->res.rec.truncated = res.truncated;
    gen_result_free(&res);
    if (cr->req.regenerate) {
        regenerated_inline(s, p);
        return true;
    }
    p->item.rec = &cr->res.rec;
    keep_for(s, cr, CREATED_DONE, true);
    p->item.keep = cr->hook.keep;
    p->item.wake = on_written;
    p->item.arg = p;
    writer_submit(s->d.writer, &p->item);
    return true;
}

/* A waiting create whose job may have ended before it subscribed: its end, from the
 * record as read now (the job's end is asked first: a record then read unfinished is a
 * later generation's, another regeneration accepted since, and this one's end is the
 * record's latest state). */
static void wait_read_once(records_t *s, create_priv_t *p, store_conn_t *c, rec_kind_t kind,
                           int64_t user_id, int64_t id, int64_t job_id)
{
    bool ended = false;
    records_job_ended(s, c, job_id, &ended);
    arena_t a;
    arena_init(&a);
    record_t now;
    int rc = store_record_get(c, kind, user_id, id, NULL, NULL, &a, &now);
    rev_t ev = {.kind = kind, .id = id, .user_id = user_id};
    if (rc == STORE_NOTFOUND)
        ev.type = REV_DELETED;
    else if (rc != STORE_OK || !(record_finished(&now) || ended))
        ev.type = REV_QUEUED; /* still going: the subscription hears its end */
    else if (ended && !record_finished(&now) ? now.error != NULL : records_last_failed(&now))
        ev.type = REV_FAILED;
    else
        ev.type = REV_COMPLETED;
    if (ev.type == REV_FAILED) {
        ev.error = now.error;
        ev.failure = records_failure_of(now.error);
    } else if (ev.type == REV_COMPLETED) {
        now.state = REC_COMPLETED; /* (as this generation left it, if moved on since) */
        ev.rec = &now;
    }
    if (ev.type != REV_QUEUED)
        on_wait_event(p, &ev);
    arena_free(&a);
}

void records_create(records_t *s, records_create_t *cr)
{
    create_priv_t *p = arena_alloc(cr->arena, sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->cr = cr;
    cr->priv = p;
    cr->res.rec = cr->req.rec; /* (the service works on the result's copy) */
    cr->res.rec.state = REC_QUEUED;
    if (s->has_hook && s->hook.begin && s->hook.begin(s->hook.arg, cr)) {
        create_exit(p, (create_end_t){.outcome = CREATE_HOOK});
        return;
    }
    char err[256];
    store_conn_t *c = store_conn(s->d.store, err, sizeof(err));
    create_outcome_t q = quota_admit(s, s->quota, c, &cr->req, &p->ticket);
    if (q != CREATED_DONE) {
        create_exit(p, (create_end_t){.outcome = q, .unstored = true});
        return;
    }
    /* the builtin generator writes a document at once: in the request, no job (an action
     * (§17) reads the record's text, which the job has) */
    if (cr->req.mode != CREATE_ASYNC && cr->res.rec.kind == KIND_DOC && s->d.writer &&
        s->d.prov->text_inline && !(cr->req.regenerate && cr->req.action) && create_inline(s, p))
        return;
    int64_t job_id;
    keep_for(s, cr, cr->req.mode == CREATE_STREAM ? CREATED_STREAM : CREATED_PENDING,
             cr->req.mode != CREATE_WAIT);
    int rc = !c                ? STORE_UNAVAILABLE
             : cr->req.regenerate ? store_regenerate(c, cr, &job_id)
                              : store_record_create(c, &cr->res.rec, cr->hook.keep, &job_id);
    if (rc != STORE_OK) {
        create_exit(p, not_stored(rc));
        return;
    }
    quota_settle(p, cr->res.rec.id); /* (before anyone can hear of its end) */
    cr->res.job_id = job_id;
    after_commit(s, cr);
    rev_t ev = {.type = REV_QUEUED, .kind = cr->res.rec.kind, .id = cr->res.rec.id,
                .user_id = cr->res.rec.user_id, .rec = &cr->res.rec, .seq = cr->res.rec.event_seq};
    records_publish(s, &ev);
    if (cr->req.mode != CREATE_WAIT) {
        if (s->d.jobs)
            jobs_notify(s->d.jobs);
        create_exit(p, (create_end_t){.outcome = cr->req.mode == CREATE_STREAM ? CREATED_STREAM
                                                                            : CREATED_PENDING});
        return;
    }
    p->deadline = mono_s() + s->d.cfg->wait_limit;
    /* once subscribed, the exit may copy the stored record into cr->res.rec from another
     * thread (on_wait_event): what is read below is taken before. (p lives in the
     * request's arena: an exit resumes the connection, which the HTTP server hands back
     * to this same thread only after this returns, so p is still there.) */
    rec_kind_t kind = cr->res.rec.kind;
    int64_t user_id = cr->res.rec.user_id, id = cr->res.rec.id;
    p->sub = hub_subscribe_job(s->hub, kind, user_id, id, cr->res.rec.event_seq, job_id,
                               on_wait_event, p);
    if (s->d.jobs)
        jobs_notify(s->d.jobs);
    wait_read_once(s, p, c, kind, user_id, id, job_id);
}

void records_create_finish(records_t *s, store_conn_t *c, records_create_t *cr)
{
    create_priv_t *p = cr->priv;
    if (p->finished)
        return;
    p->finished = true;
    if (p->sub) {
        hub_unsubscribe(s->hub, p->sub);
        p->sub = NULL;
    }
    if (cr->res.outcome == CREATE_HOOK)
        return;
    if (cr->res.outcome == CREATE_FAILED && cr->res.rec.id > 0 && cr->req.mode == CREATE_WAIT &&
        !cr->req.regenerate)
        records_discard(s, cr->res.rec.kind, cr->res.rec.user_id, cr->res.rec.id);
    if (cr->res.outcome == CREATE_FAILED && cr->req.regenerate && cr->res.rec.id > 0 && c) {
        /* a failed regeneration leaves its record: give it as it stands (its latest
         * revision, state back to completed, error set), not the queued copy */
        record_t now;
        if (store_record_get(c, cr->res.rec.kind, cr->res.rec.user_id, cr->res.rec.id, NULL, NULL,
                             cr->arena, &now) == STORE_OK)
            cr->res.rec = now;
    }
    if (cr->res.outcome == CREATED_PENDING && cr->req.mode == CREATE_WAIT) {
        /* the wait ended before the generation: the record as it stands */
        record_t now;
        int rc = store_record_get(c, cr->res.rec.kind, cr->res.rec.user_id, cr->res.rec.id, NULL, NULL,
                                  cr->arena, &now);
        if (rc == STORE_OK)
            cr->res.rec = now;
        else if (rc == STORE_NOTFOUND) {
            cr->res.outcome = CREATE_FAILED;
            cr->res.failure = RF_DELETED;
            cr->res.error = "The record was deleted before its generation finished.";
        } else {
            cr->res.outcome = CREATE_STORE_ERROR;
            cr->res.store_rc = rc;
        }
    }
    s->fx.answer(s, cr);
}
