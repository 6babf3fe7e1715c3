/* remote.c — record events between processes that share a PostgreSQL database.
 *
 * Sending. A text piece of a running generation (records_send_piece) is queued for the
 * service's sender thread, which appends it to the job's row (jobs.partial, with the
 * number of its last piece in partial_seq) and NOTIFYs it, in one statement: the row and
 * the notification commit together, so what a process reads from the row and what it
 * hears afterwards fit exactly. Pieces that pile up while a statement runs go joined in
 * the next one (one statement per job and turn): the worker never waits for the
 * database, and a generator faster than the database costs a statement per round trip,
 * not one per piece. Pieces whose statement failed (the database briefly away) are
 * sent again with the next ones, SEND_TRIES times SEND_RETRY_MS apart; the row keeps
 * pieces only where its text ends (store_job_progress's start), so pieces given up
 * leave the row short, never with a gap: a process that fills from it never takes a
 * later piece for an earlier one. A finished generation (completed or failed) is
 * NOTIFYed after its pieces (the worker calls records_flush_pieces first), and a
 * deleted record too.
 *
 * A payload is "<sender> <type> <kind> <id> <user_id> ...": sender is this process's
 * random tag, so a process ignores its own notifications.
 *   t ... <job> <gen_seq> <seq> <pieces> <offset>[ <text>]   text pieces: seq the
 *         number of the last, offset the byte just after them, then their text unless
 *         it would not fit a payload (TEXT_IN_PAYLOAD; then it is read from the row)
 *   c ... [<part_start> <part_after>]   completed (an action's bounds, API.md §17)
 *   f ..., d ...                        failed, deleted
 *   u 0 0 <user_id>                     the user and all its records were deleted
 *                                       (records_delete_user; the sender may be the
 *                                       command line, tag "-")
 *
 * Receiving: the store's listener thread (LISTEN on its own connection) calls
 * on_payload; only records with subscribers here are looked at. Pieces that continue
 * what the hub holds of that generation are published as they came; pieces that do
 * not (the first heard since the subscription, a notification missed, text not in the
 * payload) make this process read the row once and publish what it lacks as one TEXT
 * event numbered as the row says. An end is read from the record (its event_seq). After
 * each (re)connection of the listener every watched record is read once, in case a
 * notification was missed. Nothing is polled. */
#include "records/records_int.h"

#include "core/log.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WATCHED 4096
#define TEXT_IN_PAYLOAD 7000 /* NOTIFY payloads are under 8000 bytes, header included */
#define SEND_TRIES 20        /* a job's pieces are sent again for about 5 s of failures */
#define SEND_RETRY_MS 250
#define ANNOUNCE_TRIES 8 /* an end is NOTIFYed again for about 2 s of failures */

/* A job's pieces not sent yet. */
typedef struct pending {
    struct pending *next;
    int64_t job_id;
    char token[sizeof(((job_t *)0)->token)];
    rec_kind_t kind;
    int64_t id, user_id, gen_seq, seq, pieces, offset; /* offset: the byte after text */
    buf_t text;
    int fails; /* statements that failed in a row for these pieces */
    int rc;    /* the last statement's answer */
} pending_t;

struct remote {
    records_t *s;
    store_listener_t *listener;
    char tag[17];
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* the sender waits for pieces, flushers for the sender */
    pending_t *queue;    /* one per job, in order of their first piece */
    pending_t *inflight; /* being sent */
    bool stopping;
    bool sender_gone; /* (flushers do not wait for a sender that is not there) */
    pthread_t sender;
    bool sender_started;
};

static store_conn_t *conn(remote_t *r)
{
    char err[256];
    store_conn_t *c = store_conn(r->s->d.store, err, sizeof(err));
    if (!c)
        log_warn("records: no database connection for events of other processes: %s", err);
    return c;
}

/* ---- receiving ---- */

/* Publishes what the row holds of the text of generation gen_seq beyond the known
 * bytes, as one TEXT event. */
static void fill(remote_t *r, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                 int64_t gen_seq)
{
    size_t known;
    int64_t known_seq;
    hub_text_known(r->s->hub, kind, id, gen_seq, &known, &known_seq);
    if (!known_seq)
        known_seq = gen_seq;
    arena_t a;
    arena_init(&a);
    const char *text;
    int64_t seq;
    if (store_record_partial(c, kind, id, &a, &text, &seq) == STORE_OK && text &&
        strlen(text) > known && seq > known_seq) {
        size_t len = strlen(text);
        rev_t ev = {.type = REV_TEXT, .kind = kind, .id = id, .user_id = user_id,
                    .text = text + known, .len = len - known, .offset = (int64_t)len,
                    .seq = seq, .gen_seq = gen_seq, .pieces = seq - known_seq};
        records_deliver(r->s, &ev, false);
    }
    arena_free(&a);
}

/* Reads one watched record and publishes its end, or fills its text so far. */
static void refresh(remote_t *r, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                    const rev_t *part, const rev_t *end)
{
    arena_t a;
    arena_init(&a);
    record_t rec;
    int rc = store_record_get(c, kind, user_id, id, NULL, NULL, &a, &rec);
    /* an end heard after the record moved on (another regeneration accepted since):
     * the end is still its job's, and the record's latest revision is what it left */
    bool moved_on = end && rc == STORE_OK && !record_finished(&rec);
    if (moved_on)
        rec.state = REC_COMPLETED;
    if (rc == STORE_OK && record_finished(&rec)) {
        bool ok = moved_on ? end->type == REV_COMPLETED : !records_last_failed(&rec);
        rev_t ev = {.type = ok ? REV_COMPLETED : REV_FAILED, .kind = kind, .id = id,
                    .user_id = user_id, .rec = &rec, .error = rec.error,
                    .failure = ok ? RF_NONE : records_failure_of(rec.error),
                    .seq = moved_on ? end->seq : rec.event_seq, .job_id = end ? end->job_id : 0};
        if (!ok && !ev.error)
            ev.error = "Generation failed.";
        if (ok && part) { /* an action's (API.md §17): its text events were the part */
            ev.part = true;
            ev.part_start = part->part_start;
            ev.part_after = part->part_after;
        }
        records_deliver(r->s, &ev, false);
    } else if (rc == STORE_OK && rec.state == REC_GENERATING) {
        fill(r, c, kind, user_id, id, rec.event_seq);
    } else if (rc == STORE_NOTFOUND) {
        rev_t ev = {.type = REV_DELETED, .kind = kind, .id = id, .user_id = user_id,
                    .seq = RECORDS_SEQ_END};
        records_deliver(r->s, &ev, false);
    }
    arena_free(&a);
}

/* A 't' payload (after its kind, id and user): pieces of another process's generation. */
static void on_pieces(remote_t *r, rec_kind_t kind, int64_t id, int64_t user_id, const char *rest)
{
    long long job, gen_seq, seq, pieces, offset;
    int n = 0;
    if (sscanf(rest, "%lld %lld %lld %lld %lld%n", &job, &gen_seq, &seq, &pieces, &offset, &n) < 5)
        return;
    const char *text = rest[n] == ' ' ? rest + n + 1 : NULL;
    size_t len = text ? strlen(text) : 0;
    size_t known;
    int64_t known_seq;
    hub_text_known(r->s->hub, kind, id, gen_seq, &known, &known_seq);
    if (offset <= (long long)known)
        return; /* held already */
    if (text && offset - (long long)len == (long long)known) {
        rev_t ev = {.type = REV_TEXT, .kind = kind, .id = id, .user_id = user_id, .text = text,
                    .len = len, .offset = offset, .seq = seq, .gen_seq = gen_seq,
                    .pieces = pieces, .job_id = 0};
        records_deliver(r->s, &ev, false);
        return;
    }
    store_conn_t *c = conn(r);
    if (c)
        fill(r, c, kind, user_id, id, gen_seq);
}

/* A 'u' payload: every record of the user followed here is read again (gone: DELETED,
 * as a 'd' for each would). */
static void user_gone(remote_t *r, int64_t user_id)
{
    rec_kind_t *kinds = xcalloc(MAX_WATCHED, sizeof(*kinds));
    int64_t *ids = xcalloc(MAX_WATCHED, sizeof(*ids));
    int64_t *users = xcalloc(MAX_WATCHED, sizeof(*users));
    size_t n = hub_watched(r->s->hub, kinds, users, ids, MAX_WATCHED);
    store_conn_t *c = NULL;
    for (size_t i = 0; i < n; i++)
        if (users[i] == user_id && (c || (c = conn(r))))
            refresh(r, c, kinds[i], users[i], ids[i], NULL, NULL);
    free(kinds);
    free(ids);
    free(users);
}

static void on_payload(void *arg, const char *payload)
{
    remote_t *r = arg;
    char tag[17], type;
    int kind, n = 0;
    long long id, user_id;
    if (sscanf(payload, "%16s %c %d %lld %lld%n", tag, &type, &kind, &id, &user_id, &n) < 5 ||
        (kind != KIND_DOC && kind != KIND_IMG))
        return;
    if (strcmp(tag, r->tag) == 0)
        return;
    if (type == 'u') {
        user_gone(r, user_id);
        return;
    }
    if (hub_subscribers(r->s->hub, (rec_kind_t)kind, id) == 0)
        return;
    if (type == 't') {
        on_pieces(r, (rec_kind_t)kind, id, user_id, payload + n);
        return;
    }
    /* an end names its job and number; a completed action adds the bounds of the part
     * its text events were */
    long long job = 0, seq = 0, part_start, part_after;
    int m = 0;
    rev_t part = {0};
    if (type != 'd' && sscanf(payload + n, "%lld %lld%n", &job, &seq, &m) == 2 &&
        sscanf(payload + n + m, "%lld %lld", &part_start, &part_after) == 2 &&
        part_start >= 0 && part_after >= 0)
        part = (rev_t){.part = true, .part_start = part_start, .part_after = part_after};
    rev_t end = {.type = type == 'c' ? REV_COMPLETED : REV_FAILED, .job_id = job, .seq = seq};
    store_conn_t *c = conn(r);
    if (c)
        refresh(r, c, (rec_kind_t)kind, user_id, id, part.part ? &part : NULL,
                (type == 'c' || type == 'f') && job > 0 ? &end : NULL);
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
        refresh(r, c, kinds[i], users[i], ids[i], NULL, NULL);
    free(kinds);
    free(ids);
    free(users);
}

/* ---- sending ---- */

static void header(remote_t *r, buf_t *out, char type, rec_kind_t kind, int64_t id,
                   int64_t user_id)
{
    buf_printf(out, "%s %c %d %lld %lld", r->tag, type, (int)kind, (long long)id,
               (long long)user_id);
}

static void send_pieces(remote_t *r, store_conn_t *c, pending_t *p)
{
    buf_t payload;
    buf_init(&payload);
    header(r, &payload, 't', p->kind, p->id, p->user_id);
    buf_printf(&payload, " %lld %lld %lld %lld %lld", (long long)p->job_id,
               (long long)p->gen_seq, (long long)p->seq, (long long)p->pieces,
               (long long)p->offset);
    if (p->text.len <= TEXT_IN_PAYLOAD) {
        buf_putc(&payload, ' ');
        buf_append(&payload, p->text.data ? p->text.data : "", p->text.len);
    }
    int64_t start = p->offset - (int64_t)p->text.len;
    int rc = c ? store_job_progress(c, p->job_id, p->token, start, buf_cstr(&p->text), p->seq,
                                    buf_cstr(&payload))
               : STORE_UNAVAILABLE;
    p->rc = rc;
    if (rc == STORE_OK && p->fails)
        log_info("job=%lld: text pieces sent to other processes again", (long long)p->job_id);
    else if (rc != STORE_OK && rc != STORE_STALE && p->fails == 0)
        log_warn("job=%lld: text pieces could not be sent to other processes: %s; trying again",
                 (long long)p->job_id, store_rc_name(rc));
    else if (rc != STORE_OK && rc != STORE_STALE && p->fails + 1 >= SEND_TRIES)
        log_warn("job=%lld: text pieces could not be sent to other processes: %s; given up (they "
                 "read the text at its end)", (long long)p->job_id, store_rc_name(rc));
    buf_free(&payload);
}

/* Puts pieces whose statement failed back in the queue, before any that came since for
 * their job (under r->mu). Returns false when they are given up. */
static bool requeue(remote_t *r, pending_t *p)
{
    if (p->rc == STORE_OK || p->rc == STORE_STALE || ++p->fails >= SEND_TRIES || r->stopping)
        return false;
    pending_t **pp = &r->queue;
    while (*pp && (*pp)->job_id != p->job_id)
        pp = &(*pp)->next;
    pending_t *later = *pp;
    if (later) { /* p's text, then later's: one statement from p's start */
        buf_append(&p->text, later->text.data ? later->text.data : "", later->text.len);
        p->seq = later->seq;
        p->pieces += later->pieces;
        p->offset = later->offset;
        p->next = later->next;
        buf_free(&later->text);
        free(later);
    } else {
        p->next = NULL;
    }
    *pp = p;
    return true;
}

/* Waits ms or until a stop (under r->mu). */
static void pause_locked(remote_t *r, long ms)
{
    double until = mono_s() + ms / 1e3;
    while (!r->stopping && thread_cond_wait_until(&r->cv, &r->mu, until))
        ;
}

static void *sender_main(void *arg)
{
    remote_t *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->queue && !r->stopping)
            pthread_cond_wait(&r->cv, &r->mu);
        if (!r->queue)
            break; /* stopping, nothing left */
        r->inflight = r->queue;
        r->queue = NULL;
        pthread_mutex_unlock(&r->mu);
        store_conn_t *c = conn(r);
        for (pending_t *p = r->inflight; p; p = p->next)
            send_pieces(r, c, p);
        pthread_mutex_lock(&r->mu);
        pending_t *done = r->inflight;
        r->inflight = NULL;
        bool again = false;
        while (done) {
            pending_t *next = done->next;
            if (requeue(r, done)) {
                again = true;
            } else {
                buf_free(&done->text);
                free(done);
            }
            done = next;
        }
        pthread_cond_broadcast(&r->cv);
        if (again)
            pause_locked(r, SEND_RETRY_MS);
    }
    r->sender_gone = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

void remote_send_piece(remote_t *r, const job_t *job, const rev_t *ev)
{
    pthread_mutex_lock(&r->mu);
    pending_t **pp = &r->queue;
    while (*pp && (*pp)->job_id != job->id)
        pp = &(*pp)->next;
    pending_t *p = *pp;
    if (!p) {
        p = xcalloc(1, sizeof(*p));
        p->job_id = job->id;
        memcpy(p->token, job->token, sizeof(p->token));
        p->kind = ev->kind;
        p->id = ev->id;
        p->user_id = ev->user_id;
        p->gen_seq = ev->gen_seq;
        buf_init(&p->text);
        *pp = p;
    }
    buf_append(&p->text, ev->text, ev->len);
    p->seq = ev->seq;
    p->pieces += ev->pieces ? ev->pieces : 1;
    p->offset = ev->offset;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static bool has_job(const pending_t *p, int64_t job_id)
{
    for (; p; p = p->next)
        if (p->job_id == job_id)
            return true;
    return false;
}

void remote_flush_pieces(remote_t *r, int64_t job_id)
{
    pthread_mutex_lock(&r->mu);
    while (r->sender_started && !r->sender_gone &&
           (has_job(r->queue, job_id) || has_job(r->inflight, job_id)))
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

remote_t *remote_start(records_t *s)
{
    remote_t *r = xcalloc(1, sizeof(*r));
    r->s = s;
    random_hex(r->tag, 8);
    pthread_mutex_init(&r->mu, NULL);
    thread_cond_init(&r->cv);
    /* without the sender no other process would hear this one's generations */
    if (!(r->sender_started = thread_start(&r->sender, "ink-remote", sender_main, r))) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        free(r);
        return NULL;
    }
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
    pthread_mutex_lock(&r->mu);
    r->stopping = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    thread_join(r->sender, r->sender_started);
    while (r->queue) { /* pieces handed over after the sender ended */
        pending_t *next = r->queue->next;
        buf_free(&r->queue->text);
        free(r->queue);
        r->queue = next;
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* A local generation ended: tell the other processes. */
void remote_announce(remote_t *r, const rev_t *ev)
{
    if (!r || ev->id <= 0 ||
        (ev->type != REV_COMPLETED && ev->type != REV_FAILED && ev->type != REV_DELETED))
        return;
    char type = ev->type == REV_COMPLETED ? 'c' : ev->type == REV_FAILED ? 'f' : 'd';
    buf_t p;
    buf_init(&p);
    header(r, &p, type, ev->kind, ev->id, ev->user_id);
    if (ev->type != REV_DELETED) /* whose end it is: its clients elsewhere know their job */
        buf_printf(&p, " %lld %lld", (long long)ev->job_id, (long long)ev->seq);
    if (ev->type == REV_COMPLETED && ev->part)
        buf_printf(&p, " %lld %lld", (long long)ev->part_start, (long long)ev->part_after);
    /* (its subscribers here have heard already: only this thread waits, a few tries,
     * for a database briefly away. A process that misses it anyway learns of the end
     * when its own listener next connects; docs/status.md) */
    int rc = STORE_UNAVAILABLE;
    for (int tries = 0; tries < ANNOUNCE_TRIES; tries++) {
        store_conn_t *c = conn(r);
        rc = c ? store_notify(c, buf_cstr(&p)) : STORE_UNAVAILABLE;
        if (rc != STORE_UNAVAILABLE)
            break;
        sleep_ms(SEND_RETRY_MS);
    }
    if (rc != STORE_OK)
        log_warn("record=%lld: other processes could not be told that it ended: %s",
                 (long long)ev->id, store_rc_name(rc));
    buf_free(&p);
}

void remote_announce_user(remote_t *r, store_conn_t *c, int64_t user_id)
{
    char p[64];
    snprintf(p, sizeof(p), "%s u 0 0 %lld", r ? r->tag : "-", (long long)user_id);
    int rc = STORE_UNAVAILABLE;
    for (int tries = 0; tries < ANNOUNCE_TRIES; tries++) {
        rc = c ? store_notify(c, p) : STORE_UNAVAILABLE;
        if (rc != STORE_UNAVAILABLE)
            break;
        sleep_ms(SEND_RETRY_MS);
    }
    if (rc != STORE_OK)
        log_warn("user %lld: other processes could not be told of its deletion: %s",
                 (long long)user_id, store_rc_name(rc));
}

const char *records_partial(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t id,
                            arena_t *a, int64_t *seq)
{
    const char *text = NULL;
    *seq = 0;
    if (s->remote && store_record_partial(c, kind, id, a, &text, seq) != STORE_OK)
        text = NULL;
    return text;
}
