/* remote.c — record events between processes that share a PostgreSQL database.
 *
 * Sending: a worker keeps the text so far of its running generation in the job row
 * at most every PROGRESS_S while it grows (records_progress), and that same
 * statement NOTIFYs; a finished generation (completed or failed) is NOTIFYed too.
 * A deleted record is NOTIFYed as well.
 * A payload is "<sender> <t|c|f|d> <kind> <id> <user_id>": sender is this process's
 * random tag, so a process ignores its own notifications.
 *
 * Receiving: the store's listener thread (LISTEN on its own connection) calls
 * on_payload; a record that has subscribers here is read there (its partial text, or
 * the finished record) and published to them. After each (re)connection of the
 * listener every watched record is read once, in case a notification was missed. */
#include "records/records_int.h"

#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WATCHED 4096

struct remote {
    records_t *s;
    store_listener_t *listener;
    char tag[17];
};

static store_conn_t *conn(remote_t *r)
{
    char err[256];
    store_conn_t *c = store_conn(r->s->d.store, err, sizeof(err));
    if (!c)
        log_warn("records: no database connection for events of other processes: %s", err);
    return c;
}

/* Reads one watched record and publishes what it says to this process's subscribers. */
static void refresh(remote_t *r, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                    bool text_only, const rev_t *part)
{
    arena_t a;
    arena_init(&a);
    if (text_only) {
        const char *text;
        if (store_record_partial(c, kind, id, &a, &text) == STORE_OK && text) {
            size_t len = strlen(text);
            rev_t ev = {.type = REV_TEXT, .kind = kind, .id = id, .user_id = user_id,
                        .text = text, .len = len, .offset = (int64_t)len};
            hub_publish(r->s->hub, &ev, false);
        }
        arena_free(&a);
        return;
    }
    record_t rec;
    int rc = store_record_get(c, kind, user_id, id, NULL, NULL, &a, &rec);
    if (rc == STORE_OK && record_finished(&rec)) {
        bool ok = !records_last_failed(&rec);
        rev_t ev = {.type = ok ? REV_COMPLETED : REV_FAILED, .kind = kind, .id = id,
                    .user_id = user_id, .rec = &rec, .error = rec.error,
                    .failure = ok ? RF_NONE : records_failure_of(rec.error)};
        if (ok && part) { /* an action's (API.md §17): its text events were the part */
            ev.part = true;
            ev.part_start = part->part_start;
            ev.part_after = part->part_after;
        }
        quota_event(r->s->quota, &ev);
        hub_publish(r->s->hub, &ev, false);
    } else if (rc == STORE_OK) {
        arena_free(&a);
        refresh(r, c, kind, user_id, id, true, NULL);
        return;
    } else if (rc == STORE_NOTFOUND) {
        rev_t ev = {.type = REV_DELETED, .kind = kind, .id = id, .user_id = user_id};
        quota_event(r->s->quota, &ev);
        hub_publish(r->s->hub, &ev, false);
    }
    arena_free(&a);
}

static void on_payload(void *arg, const char *payload)
{
    remote_t *r = arg;
    char tag[17], type;
    int kind;
    long long id, user_id, part_start, part_after;
    /* a completed action adds the bounds of the part its text events were */
    int n = sscanf(payload, "%16s %c %d %lld %lld %lld %lld", tag, &type, &kind, &id, &user_id,
                   &part_start, &part_after);
    if (n < 5 || (kind != KIND_DOC && kind != KIND_IMG))
        return;
    rev_t part = {.part = n == 7 && part_start >= 0 && part_after >= 0,
                  .part_start = part_start, .part_after = part_after};
    if (strcmp(tag, r->tag) == 0 || hub_subscribers(r->s->hub, (rec_kind_t)kind, id) == 0)
        return;
    store_conn_t *c = conn(r);
    if (c)
        refresh(r, c, (rec_kind_t)kind, user_id, id, type == 't', part.part ? &part : NULL);
}

static void on_connected(void *arg)
{
    remote_t *r = arg;
    rec_kind_t *kinds = xcalloc(MAX_WATCHED, sizeof(*kinds));
    int64_t *ids = xcalloc(MAX_WATCHED, sizeof(*ids));
    int64_t *users = xcalloc(MAX_WATCHED, sizeof(*users));
    size_t n = hub_watched(r->s->hub, kinds, users, ids, MAX_WATCHED);
    store_conn_t *c = n ? conn(r) : NULL;
    for (size_t i = 0; c && i < n; i++)
        refresh(r, c, kinds[i], users[i], ids[i], false, NULL);
    free(kinds);
    free(ids);
    free(users);
}

remote_t *remote_start(records_t *s)
{
    remote_t *r = xcalloc(1, sizeof(*r));
    r->s = s;
    random_hex(r->tag, 8);
    r->listener = store_listen(s->d.store, on_payload, on_connected, r);
    if (!r->listener)
        log_error("records: cannot follow the records of other processes");
    return r;
}

void remote_stop(remote_t *r)
{
    if (!r)
        return;
    store_listen_stop(r->s->d.store, r->listener);
    free(r);
}

static void payload(remote_t *r, char *out, size_t len, char type, rec_kind_t kind, int64_t id,
                    int64_t user_id)
{
    snprintf(out, len, "%s %c %d %lld %lld", r->tag, type, (int)kind, (long long)id,
             (long long)user_id);
}

/* A local generation ended: tell the other processes. */
void remote_announce(remote_t *r, const rev_t *ev)
{
    if (!r || ev->id <= 0 ||
        (ev->type != REV_COMPLETED && ev->type != REV_FAILED && ev->type != REV_DELETED))
        return;
    char p[160];
    char type = ev->type == REV_COMPLETED ? 'c' : ev->type == REV_FAILED ? 'f' : 'd';
    payload(r, p, sizeof(p), type, ev->kind, ev->id, ev->user_id);
    if (ev->type == REV_COMPLETED && ev->part)
        snprintf(p + strlen(p), sizeof(p) - strlen(p), " %lld %lld", (long long)ev->part_start,
                 (long long)ev->part_after);
    store_conn_t *c = conn(r);
    if (c && store_notify(c, p) != STORE_OK)
        log_warn("record=%lld: other processes could not be told that it ended", (long long)ev->id);
}

bool records_progress_due(records_t *s, double *last_flush)
{
    if (!s->remote)
        return false;
    double now = mono_s();
    if (now - *last_flush < RECORDS_PROGRESS_S)
        return false;
    *last_flush = now;
    return true;
}

void records_progress(records_t *s, store_conn_t *c, const job_t *job, const char *text)
{
    if (!s->remote)
        return;
    char p[96];
    payload(s->remote, p, sizeof(p), 't', job->rec.kind, job->rec.id, job->rec.user_id);
    int rc = store_job_progress(c, job, text, p);
    if (rc != STORE_OK && rc != STORE_STALE)
        log_warn("job=%lld: its text so far could not be kept: %s", (long long)job->id,
                 store_rc_name(rc));
}

const char *records_partial(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t id,
                            arena_t *a)
{
    const char *text = NULL;
    if (s->remote && store_record_partial(c, kind, id, a, &text) != STORE_OK)
        text = NULL;
    return text;
}
