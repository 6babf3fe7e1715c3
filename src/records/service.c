/* service.c — the records service (records.h): start and stop, events (the one way
 * they go out: records_deliver), reads, changes, removals, and the clean-up after a
 * failed generation. A create and its one exit are create.c's. */
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

void records_changed(records_t *s, rec_kind_t kind, int64_t id)
{
    if (s->d.changed)
        s->d.changed(s->d.changed_arg, kind, id);
}

records_t *records_start(const records_deps_t *deps)
{
    records_t *s = xcalloc(1, sizeof(*s));
    s->d = *deps;
    s->fx = records_exit_fx;
    if (!(s->hub = hub_new(records_tick_s(s)))) { /* (its thread could not start: logged) */
        free(s);
        return NULL;
    }
    s->quota = quota_new(deps->store);
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

void records_deliver(records_t *s, const rev_t *ev, bool local)
{
    quota_event(s->quota, ev); /* (a reservation ends with its record's generation) */
    hub_publish(s->hub, ev, local);
    if (local && s->remote && !ev->inline_path && !ev->here_only)
        remote_announce(s->remote, ev); /* (ends and deletions only: remote.c) */
}

void records_publish(records_t *s, const rev_t *ev)
{
    records_deliver(s, ev, true);
}

void records_revision_event(records_t *s, const record_t *rec)
{
    rev_t ev = {.type = REV_REVISION, .kind = rec->kind, .id = rec->id, .user_id = rec->user_id,
                .rec = rec, .seq = rec->event_seq};
    records_publish(s, &ev);
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
                .seq = RECORDS_SEQ_END, .here_only = !remote};
    records_publish(s, &ev);
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
