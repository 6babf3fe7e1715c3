/* service.c — the records service (records.h): create and its two paths, reads,
 * changes, deletes, and the clean-up after a failed generation.
 *
 * A create moves like this:
 *   begin hook → inline?  generate in the caller → writer (group commit) → COMPLETED
 *                         (a regeneration: → one transaction, record_regenerated → QUEUED,
 *                         COMPLETED; one that fails takes the job path)
 *              → job:     store record+job (QUEUED) → wake a worker
 *                         WAIT: subscribe to the record, then read it once (a worker
 *                         may have been faster); COMPLETED/FAILED/deadline/shutdown
 *                         resolve it
 *   → done(cr) → the caller calls records_create_finish in a thread that may use the
 *     store: a failed waited generation is discarded there, a pending one re-read,
 *     and the end hook runs. */
#include "records/records_int.h"
#include "core/unicode.h"

#include "core/log.h"
#include "core/testhooks.h"
#include "records/jobs.h"
#include "gen/templates.h"
#include "store/writer.h"

#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The private part of a create: the waiter of the job path, or the writer item of the
 * inline path. Lives in cr->arena. */
typedef struct {
    records_t *s;
    records_create_t *cr;
    atomic_bool resolved;
    double deadline;
    records_sub_t *sub;
    writer_item_t item;
    double t0;
    int64_t ticket; /* the quota's reservation (quota.c), 0 for none */
} create_priv_t;

void records_changed(records_t *s, rec_kind_t kind, int64_t id)
{
    if (s->d.changed)
        s->d.changed(s->d.changed_arg, kind, id);
}

records_t *records_start(const records_deps_t *deps)
{
    records_t *s = xcalloc(1, sizeof(*s));
    s->d = *deps;
    if (!(s->hub = hub_new(records_tick_s(s)))) { /* (its thread could not start: logged) */
        free(s);
        return NULL;
    }
    s->quota = quota_new();
    /* test-only (core/testhooks.h): die right after a create whose Idempotency-Key answer was committed
     * with it (tests/http/test_idempotency.py: the key outlives the crash) */
    const char *crash = test_hook_env("INKWELL_TEST_EXIT_AFTER_KEPT_COMMIT");
    s->exit_after_kept_commit = crash && *crash == '1';
    if (store_shared(deps->store) && !(s->remote = remote_start(s))) {
        records_stop(s);
        return NULL;
    }
    return s;
}

/* Ticks time the waits (--wait-limit, to RECORDS_TICK_S) and the keep-alives. */
double records_tick_s(records_t *s)
{
    (void)s;
    return RECORDS_TICK_S;
}

void records_set_jobs(records_t *s, struct jobs *jobs)
{
    s->d.jobs = jobs;
}

void records_release(records_t *s)
{
    if (s)
        hub_release(s->hub);
}

void records_stop(records_t *s)
{
    if (!s)
        return;
    remote_stop(s->remote);
    hub_free(s->hub);
    quota_free(s->quota);
    free(s);
}

void records_observe(records_t *s, records_event_fn fn, void *arg)
{
    hub_observe(s->hub, fn, arg);
}

records_sub_t *records_subscribe(records_t *s, rec_kind_t kind, int64_t user_id, int64_t id,
                                 int64_t from_seq, records_event_fn fn, void *arg)
{
    return hub_subscribe(s->hub, kind, user_id, id, from_seq, fn, arg);
}

records_sub_t *records_subscribe_job(records_t *s, rec_kind_t kind, int64_t user_id,
                                     int64_t id, int64_t from_seq, int64_t job_id,
                                     records_event_fn fn, void *arg)
{
    return hub_subscribe_job(s->hub, kind, user_id, id, from_seq, job_id, fn, arg);
}

int records_job_ended(records_t *s, store_conn_t *c, int64_t job_id, bool *ended)
{
    (void)s;
    bool exists = true;
    int rc = store_job_exists(c, job_id, &exists);
    *ended = rc == STORE_OK && !exists;
    return rc;
}

void records_unsubscribe(records_t *s, records_sub_t *sub)
{
    hub_unsubscribe(s->hub, sub);
}

void records_publish(records_t *s, const rev_t *ev)
{
    quota_event(s->quota, ev);
    hub_publish(s->hub, ev, true);
    if (s->remote && !ev->inline_path)
        remote_announce(s->remote, ev);
}

void records_revision_event(records_t *s, const record_t *rec)
{
    rev_t ev = {.type = REV_REVISION, .kind = rec->kind, .id = rec->id, .user_id = rec->user_id,
                .rec = rec, .seq = rec->event_seq};
    hub_publish(s->hub, &ev, true);
}

void records_send_piece(records_t *s, const job_t *job, const rev_t *ev)
{
    if (s->remote)
        remote_send_piece(s->remote, job, ev);
}

void records_flush_pieces(records_t *s, int64_t job_id)
{
    if (s->remote)
        remote_flush_pieces(s->remote, job_id);
}

void records_set_create_hook(records_t *s, const records_create_hook_t *h)
{
    s->hook = *h;
    s->has_hook = true;
}

/* ---- create ---- */

/* The test hook of records_start: the commit that kept a key's answer is done; the
 * process dies as kill -9 would kill it (no exit handlers, nothing flushed; under
 * valgrind nothing is reported either, as for any kill -9). */
static void after_commit(records_t *s, records_create_t *cr)
{
    if (s->exit_after_kept_commit && cr->keep && cr->keep->stored)
        raise(SIGKILL);
}

/* The answer kept with the record for the path taken (see records_create_t.keep): the
 * hook's status for that outcome. */
static void keep_for(records_t *s, records_create_t *cr, create_outcome_t outcome, bool final)
{
    if (cr->keep) {
        cr->keep->status = s->hook.status ? s->hook.status(s->hook.arg, cr, outcome) : 0;
        cr->keep->final = final;
    }
}

rec_failure_t records_failure_of(const char *stored_error)
{
    if (stored_error && strcmp(stored_error, MEDIA_FULL_ERROR) == 0)
        return RF_STORAGE_FULL;
    if (stored_error && strcmp(stored_error, RECORDS_UNSTORED_ERROR) == 0)
        return RF_UNSTORED;
    if (stored_error && strcmp(stored_error, STORE_CHANGED_ERROR) == 0)
        return RF_CHANGED;
    return RF_GENERATION;
}

static void resolve(create_priv_t *p, create_outcome_t outcome)
{
    bool expected = false;
    if (!atomic_compare_exchange_strong(&p->resolved, &expected, true))
        return;
    p->cr->outcome = outcome;
    p->cr->done(p->cr);
}

/* A waiting create's subscription (under the event lock, any thread). */
static void on_wait_event(void *arg, const rev_t *ev)
{
    create_priv_t *p = arg;
    if (atomic_load(&p->resolved))
        return;
    if (ev->job_id && p->cr->job_id && ev->job_id != p->cr->job_id)
        return; /* a late event of the record's previous job (regenerated since) */
    switch (ev->type) {
    case REV_COMPLETED:
        if (ev->rec) {
            bool expected = false;
            if (!atomic_compare_exchange_strong(&p->resolved, &expected, true))
                return;
            record_copy(p->cr->arena, &p->cr->rec, ev->rec);
            p->cr->outcome = CREATED_DONE;
            p->cr->done(p->cr);
        } else {
            resolve(p, CREATED_PENDING); /* re-read by create_finish */
        }
        break;
    case REV_FAILED: {
        bool expected = false;
        if (!atomic_compare_exchange_strong(&p->resolved, &expected, true))
            return;
        p->cr->error = arena_strdup(p->cr->arena, ev->error ? ev->error : "Generation failed.");
        p->cr->failure = ev->failure ? ev->failure : records_failure_of(ev->error);
        p->cr->outcome = CREATE_FAILED;
        p->cr->done(p->cr);
        break;
    }
    case REV_DELETED: {
        bool expected = false;
        if (!atomic_compare_exchange_strong(&p->resolved, &expected, true))
            return;
        p->cr->error = "The record was deleted before its generation finished.";
        p->cr->failure = RF_DELETED;
        p->cr->outcome = CREATE_FAILED;
        p->cr->done(p->cr);
        break;
    }
    case REV_RELEASED: resolve(p, CREATED_PENDING); break;
    case REV_TICK:
        if (ev->now_mono >= p->deadline)
            resolve(p, CREATED_PENDING);
        break;
    default: break;
    }
}

static void on_written(void *arg)
{
    create_priv_t *p = arg;
    records_create_t *cr = p->cr;
    quota_release(p->s->quota, p->ticket);
    if (p->item.rc != STORE_OK) {
        if (cr->keep)
            cr->keep->stored = false; /* rolled back with the record */
        cr->store_rc = p->item.rc;
        cr->outcome = CREATE_STORE_ERROR;
    } else {
        after_commit(p->s, cr);
        rev_t ev = {.type = REV_COMPLETED, .kind = cr->rec.kind, .id = cr->rec.id,
                    .user_id = cr->rec.user_id, .rec = &cr->rec,
                    .provider = p->s->d.prov->name, .duration_s = mono_s() - p->t0,
                    .inline_path = true, .seq = cr->rec.event_seq};
        quota_event(p->s->quota, &ev);
        hub_publish(p->s->hub, &ev, true);
        cr->outcome = cr->mode == CREATE_STREAM ? CREATED_STREAM : CREATED_DONE;
        cr->inline_text = cr->mode == CREATE_STREAM;
    }
    atomic_store(&p->resolved, true);
    cr->done(cr);
}

/* A regeneration (records_create_t.regenerate): the record goes back to queued with a
 * job of the new inputs, in one transaction; the rest is a job create's. */
static int store_regenerate(records_t *s, store_conn_t *c, records_create_t *cr, int64_t *job_id)
{
    record_t now;
    rec_action_t act = {cr->action, cr->sel_start, cr->sel_end};
    int rc = store_record_regenerate(c, &cr->rec, cr->action ? &act : NULL, cr->keep, cr->arena,
                                     &now, job_id);
    if (rc == STORE_OK)
        cr->rec = now;
    (void)s;
    return rc;
}

int records_text_req(store_conn_t *c, const record_t *rec, arena_t *a, gen_text_req_t *req)
{
    *req = (gen_text_req_t){.template_id = rec->template_id, .prompt = rec->prompt,
                            .creativity = rec->creativity, .tone = rec->tone,
                            .language = rec->language, .length = rec->length};
    if (rec->template_id < CUSTOM_TEMPLATE_MIN_ID)
        return STORE_OK;
    if (!c)
        return STORE_UNAVAILABLE;
    custom_template_t t;
    int rc = store_template_get(c, rec->user_id, rec->template_id, true, a, &t);
    if (rc == STORE_OK) {
        req->instruction = t.instruction;
        req->template_name = t.name;
    }
    return rc == STORE_NOTFOUND ? STORE_OK : rc; /* its user is gone: freestyle */
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
    int rc = c ? store_record_regenerated(c, &cr->rec, records_revision_cap(s), cr->keep,
                                          cr->arena, &out)
               : STORE_UNAVAILABLE;
    quota_release(s->quota, p->ticket); /* (stored: the usage counts it now) */
    if (rc != STORE_OK) {
        if (cr->keep)
            cr->keep->stored = false; /* rolled back with the revision */
        cr->store_rc = rc;
        cr->outcome = rc == STORE_BUSY       ? CREATE_BUSY
                      : rc == STORE_NOTFOUND ? CREATE_NOTFOUND
                                             : CREATE_STORE_ERROR;
    } else {
        cr->rec = out;
        after_commit(s, cr); /* (the cap held in the commit: before anyone hears of it) */
        rev_t queued = {.type = REV_QUEUED, .kind = out.kind, .id = out.id,
                        .user_id = out.user_id, .seq = out.event_seq - 1};
        hub_publish(s->hub, &queued, true);
        rev_t ev = {.type = REV_COMPLETED, .kind = out.kind, .id = out.id, .user_id = out.user_id,
                    .rec = &cr->rec, .provider = s->d.prov->name, .duration_s = mono_s() - p->t0,
                    .seq = out.event_seq};
        records_publish(s, &ev); /* (other processes too: a regenerate has no job) */
        cr->outcome = cr->mode == CREATE_STREAM ? CREATED_STREAM : CREATED_DONE;
        cr->inline_text = cr->mode == CREATE_STREAM;
    }
    atomic_store(&p->resolved, true);
    cr->done(cr);
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
    int trc = records_text_req(store_conn(s->d.store, err, sizeof(err)), &cr->rec, cr->arena, &req);
    p->t0 = mono_s();
    if (trc != STORE_OK)
        snprintf(res.error, sizeof(res.error), "Storage is unavailable, try again later.");
    if (trc != STORE_OK || s->d.prov->text(s->d.prov, &ctx, &req, &res) != 0) {
        if (cr->regenerate) {
            gen_result_free(&res);
            return false;
        }
        cr->error = arena_strdup(cr->arena, res.error[0] ? res.error : "Generation failed.");
        cr->failure = RF_GENERATION;
        rev_t ev = {.type = REV_FAILED, .kind = cr->rec.kind, .user_id = cr->rec.user_id,
                    .error = cr->error, .failure = RF_GENERATION, .provider = s->d.prov->name,
                    .duration_s = mono_s() - p->t0, .inline_path = true};
        quota_release(s->quota, p->ticket);
        hub_publish(s->hub, &ev, true);
        gen_result_free(&res);
        atomic_store(&p->resolved, true);
        cr->outcome = CREATE_FAILED;
        cr->done(cr);
        return true;
    }
    cr->rec.result = arena_strndup(cr->arena, res.text.data ? res.text.data : "", res.text.len);
    cr->rec.words = uni_count_words(cr->rec.result, cr->rec.result ? strlen(cr->rec.result) : 0);
    cr->rec.prompt_tokens = res.prompt_tokens;
    cr->rec.completion_tokens = res.completion_tokens;
    cr->rec.truncated = res.truncated;
    gen_result_free(&res);
    if (cr->regenerate) {
        regenerated_inline(s, p);
        return true;
    }
    p->item.rec = &cr->rec;
    keep_for(s, cr, CREATED_DONE, true);
    p->item.keep = cr->keep;
    p->item.wake = on_written;
    p->item.arg = p;
    writer_submit(s->d.writer, &p->item);
    return true;
}

void records_create(records_t *s, records_create_t *cr)
{
    create_priv_t *p = arena_alloc(cr->arena, sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->cr = cr;
    cr->priv = p;
    cr->rec.state = REC_QUEUED;
    if (s->has_hook && s->hook.begin && s->hook.begin(s->hook.arg, cr)) {
        atomic_store(&p->resolved, true);
        cr->outcome = CREATE_HOOK;
        cr->done(cr);
        return;
    }
    char err[256];
    store_conn_t *c = store_conn(s->d.store, err, sizeof(err));
    create_outcome_t q = quota_admit(s, s->quota, c, cr, &p->ticket);
    if (q != CREATED_DONE) {
        if (cr->keep)
            cr->keep->stored = false;
        atomic_store(&p->resolved, true);
        cr->outcome = q;
        cr->done(cr);
        return;
    }
    /* the builtin generator writes a document at once: in the request, no job (an action
     * (§17) reads the record's text, which the job has) */
    if (cr->mode != CREATE_ASYNC && cr->rec.kind == KIND_DOC && s->d.writer &&
        s->d.prov->text_inline && !(cr->regenerate && cr->action) && create_inline(s, p))
        return;
    int64_t job_id;
    keep_for(s, cr, cr->mode == CREATE_STREAM ? CREATED_STREAM : CREATED_PENDING,
             cr->mode != CREATE_WAIT);
    int rc = !c                ? STORE_UNAVAILABLE
             : cr->regenerate ? store_regenerate(s, c, cr, &job_id)
                              : store_record_create(c, &cr->rec, cr->keep, &job_id);
    if (rc != STORE_OK)
        quota_release(s->quota, p->ticket);
    else
        quota_bind(s->quota, p->ticket, cr->rec.id);
    if (rc == STORE_BUSY || rc == STORE_NOTFOUND) {
        if (cr->keep)
            cr->keep->stored = false;
        atomic_store(&p->resolved, true);
        cr->outcome = rc == STORE_BUSY ? CREATE_BUSY : CREATE_NOTFOUND;
        cr->done(cr);
        return;
    }
    if (rc != STORE_OK) {
        if (cr->keep)
            cr->keep->stored = false; /* rolled back with the record */
        cr->store_rc = rc;
        atomic_store(&p->resolved, true);
        cr->outcome = CREATE_STORE_ERROR;
        cr->done(cr);
        return;
    }
    cr->job_id = job_id;
    after_commit(s, cr);
    rev_t ev = {.type = REV_QUEUED, .kind = cr->rec.kind, .id = cr->rec.id,
                .user_id = cr->rec.user_id, .rec = &cr->rec, .seq = cr->rec.event_seq};
    hub_publish(s->hub, &ev, true);
    if (cr->mode != CREATE_WAIT) {
        if (s->d.jobs)
            jobs_notify(s->d.jobs);
        atomic_store(&p->resolved, true);
        cr->outcome = cr->mode == CREATE_STREAM ? CREATED_STREAM : CREATED_PENDING;
        cr->done(cr);
        return;
    }
    p->deadline = mono_s() + s->d.cfg->wait_limit;
    /* once subscribed, the completion may copy the stored record into cr->rec from
     * another thread (on_wait_event): what is read below is taken before */
    rec_kind_t kind = cr->rec.kind;
    int64_t user_id = cr->rec.user_id, id = cr->rec.id;
    p->sub = hub_subscribe_job(s->hub, kind, user_id, id, cr->rec.event_seq, job_id,
                               on_wait_event, p);
    if (s->d.jobs)
        jobs_notify(s->d.jobs);
    /* The job may have ended before the subscription. (p lives in the request's arena:
     * a resolution above resumes the connection, which the HTTP server hands back to this
     * same thread only after this returns, so p is still there.) Whether it ended is
     * asked first: a record then read unfinished is a later generation's (another
     * regeneration accepted since), and this one's end is the record's latest state. */
    bool ended = false;
    records_job_ended(s, c, job_id, &ended);
    arena_t a;
    arena_init(&a);
    record_t now;
    rc = store_record_get(c, kind, user_id, id, NULL, NULL, &a, &now);
    if (rc == STORE_OK && ended && !record_finished(&now)) {
        if (now.error) {
            rev_t failed = {.type = REV_FAILED, .kind = now.kind, .id = now.id,
                            .error = now.error, .failure = records_failure_of(now.error)};
            on_wait_event(p, &failed);
        } else {
            now.state = REC_COMPLETED; /* as this generation left it */
            rev_t done = {.type = REV_COMPLETED, .kind = now.kind, .id = now.id, .rec = &now};
            on_wait_event(p, &done);
        }
    } else if (rc == STORE_OK && records_last_failed(&now)) {
        rev_t failed = {.type = REV_FAILED, .kind = now.kind, .id = now.id, .error = now.error,
                        .failure = records_failure_of(now.error)};
        on_wait_event(p, &failed);
    } else if (rc == STORE_OK && now.state == REC_COMPLETED) {
        rev_t done = {.type = REV_COMPLETED, .kind = now.kind, .id = now.id, .rec = &now};
        on_wait_event(p, &done);
    } else if (rc == STORE_OK && now.state == REC_FAILED) {
        rev_t failed = {.type = REV_FAILED, .kind = now.kind, .id = now.id, .error = now.error};
        on_wait_event(p, &failed);
    } else if (rc == STORE_NOTFOUND) {
        rev_t deleted = {.type = REV_DELETED, .kind = kind, .id = id};
        on_wait_event(p, &deleted);
    }
    arena_free(&a);
}

void records_create_finish(records_t *s, store_conn_t *c, records_create_t *cr)
{
    create_priv_t *p = cr->priv;
    if (p->sub) {
        hub_unsubscribe(s->hub, p->sub);
        p->sub = NULL;
    }
    if (cr->outcome == CREATE_HOOK)
        return;
    if (cr->outcome == CREATE_FAILED && cr->rec.id > 0 && cr->mode == CREATE_WAIT &&
        !cr->regenerate)
        records_discard(s, cr->rec.kind, cr->rec.user_id, cr->rec.id);
    if (cr->outcome == CREATE_FAILED && cr->regenerate && cr->rec.id > 0 && c) {
        /* a failed regeneration leaves its record: give it as it stands (its latest
         * revision, state back to completed, error set), not the queued copy */
        record_t now;
        if (store_record_get(c, cr->rec.kind, cr->rec.user_id, cr->rec.id, NULL, NULL,
                             cr->arena, &now) == STORE_OK)
            cr->rec = now;
    }
    if (cr->outcome == CREATED_PENDING && cr->mode == CREATE_WAIT) {
        /* the wait ended before the generation: the record as it stands */
        record_t now;
        int rc = store_record_get(c, cr->rec.kind, cr->rec.user_id, cr->rec.id, NULL, NULL,
                                  cr->arena, &now);
        if (rc == STORE_OK)
            cr->rec = now;
        else if (rc == STORE_NOTFOUND) {
            cr->outcome = CREATE_FAILED;
            cr->failure = RF_DELETED;
            cr->error = "The record was deleted before its generation finished.";
        } else {
            cr->outcome = CREATE_STORE_ERROR;
            cr->store_rc = rc;
        }
    }
    if (s->has_hook && s->hook.end)
        s->hook.end(s->hook.arg, cr);
}

/* ---- read and change ---- */

int records_get(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                record_probe_fn probe, void *probe_arg, arena_t *a, record_t *out)
{
    (void)s;
    return store_record_get(c, kind, user_id, id, probe, probe_arg, a, out);
}

int records_list(records_t *s, store_conn_t *c, rec_kind_t kind, list_query_t *q, arena_t *a,
                 record_list_t *out)
{
    (void)s;
    return store_record_list(c, kind, q, a, out);
}

int records_update(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                   const record_patch_t *p, arena_t *a, record_t *out)
{
    int rc = store_record_update(c, kind, user_id, id, p, a, out);
    if (rc == STORE_OK && p->result) {
        records_revision_made(s, c, out);
        records_revision_event(s, out);
    }
    return rc;
}

/* ---- removal: one way for a record, a revision past the cap and a user ----
 *
 * Each removal is the same three steps: the store removes the rows in one transaction
 * and hands back every media key it removed; records_removed_files removes the files
 * (after the commit: a picture whose row is gone is only a file, and one left by a
 * failure is swept at the next start, main.c media_sweep); records_removed tells of each
 * record removed (DELETED: streams end, waiters answer, quota reservations end) here,
 * and to the other processes when asked (a user's records: one notification for all,
 * remote_announce_user). */

size_t records_removed_files(media_t *media, const char *const *keys, size_t n,
                             const char *what, int64_t id)
{
    size_t left = 0;
    for (size_t i = 0; i < n; i++)
        if (media_remove(media, keys[i]) != 0)
            left++;
    if (left)
        log_warn("%s %lld: %zu picture file(s) could not be removed", what, (long long)id, left);
    return left;
}

void records_removed(records_t *s, rec_kind_t kind, int64_t user_id, int64_t id, bool remote)
{
    records_changed(s, kind, id);
    rev_t ev = {.type = REV_DELETED, .kind = kind, .id = id, .user_id = user_id,
                .seq = RECORDS_SEQ_END};
    quota_event(s->quota, &ev);
    hub_publish(s->hub, &ev, true);
    if (remote && s->remote)
        remote_announce(s->remote, &ev);
}

int records_delete(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id)
{
    arena_t a;
    arena_init(&a);
    const char **keys;
    size_t n;
    int rc = store_record_delete(c, kind, user_id, id, &a, &keys, &n);
    if (rc == STORE_OK) { /* the record's picture and its revisions' */
        records_removed_files(s->d.media, keys, n, "record", id);
        records_removed(s, kind, user_id, id, true);
    }
    arena_free(&a);
    return rc;
}

int records_delete_many(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id,
                        const int64_t *ids, size_t n, arena_t *a, int64_t **done, size_t *ndone)
{
    arena_t ka;
    arena_init(&ka);
    const char **keys;
    size_t nkeys;
    int64_t *d;
    size_t nd;
    int rc = store_record_delete_many(c, kind, user_id, ids, n, &ka, &keys, &nkeys, &d, &nd);
    *done = NULL;
    *ndone = 0;
    if (rc == STORE_OK) { /* every record's picture and its revisions' */
        records_removed_files(s->d.media, keys, nkeys, "bulk delete of user", user_id);
        *done = arena_alloc(a, (nd ? nd : 1) * sizeof(**done));
        for (size_t i = 0; i < nd; i++) {
            records_removed(s, kind, user_id, d[i], true);
            (*done)[i] = d[i];
        }
        *ndone = nd;
    }
    arena_free(&ka);
    return rc;
}

int records_delete_user(records_t *s, store_conn_t *c, media_t *media, int64_t user_id,
                        size_t *files_left)
{
    arena_t a;
    arena_init(&a);
    user_removed_t gone;
    *files_left = 0;
    int rc = store_user_delete(c, user_id, &a, &gone);
    if (rc == STORE_OK) {
        *files_left = records_removed_files(media, gone.media_keys, gone.n_keys, "user",
                                            user_id);
        for (size_t i = 0; s && i < gone.n_records; i++)
            records_removed(s, gone.records[i].kind, user_id, gone.records[i].id, false);
        remote_announce_user(s ? s->remote : NULL, c, user_id);
    }
    arena_free(&a);
    return rc;
}

void records_job_lost(records_t *s, store_conn_t *c, const job_t *job)
{
    arena_t a;
    arena_init(&a);
    record_t now;
    const record_t *rec = &job->rec;
    if (store_record_get(c, rec->kind, rec->user_id, rec->id, NULL, NULL, &a, &now) ==
        STORE_NOTFOUND) {
        log_info("job=%lld: its record was deleted meanwhile", (long long)job->id);
        records_removed(s, rec->kind, rec->user_id, rec->id, false);
    }
    arena_free(&a);
}

void records_discard(records_t *s, rec_kind_t kind, int64_t user_id, int64_t id)
{
    char err[256];
    store_conn_t *c = store_conn(s->d.store, err, sizeof(err));
    int rc = c ? records_delete(s, c, kind, user_id, id) : STORE_UNAVAILABLE;
    if (rc != STORE_OK && rc != STORE_NOTFOUND)
        log_warn("record=%lld: a failed generation could not be removed: %s", (long long)id,
                 store_rc_name(rc));
}
