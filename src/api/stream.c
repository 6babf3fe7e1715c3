/* stream.c — streamed creates and shows: Server-Sent Events (§10).
 *
 * A stream follows one record. Its subscription to the record's events (records.h)
 * only updates what the stream knows — the text so far, and the end (the finished
 * record, or why it failed) — and wakes the connection; the writing happens in an
 * HTTP thread (on_work): the `record` event first, then deltas for the bytes not sent
 * yet (at most DELTA_MAX each, never splitting a UTF-8 character, `id:` the byte
 * offset after the piece), then `done` or `error`, and a `: keep-alive` comment when
 * nothing was sent for --stream-keepalive seconds. Nothing is sent twice and a
 * resumed show (Last-Event-ID: N) starts at byte N.
 *
 * A streamed regenerate (§16) is a streamed create answered 200 whose failure keeps
 * the record (its latest revision, error set).
 *
 * A streamed create whose generation fails removes its record before the `error`
 * event is written (the client waited: nothing is left behind). The event carries 502
 * with the reason, or 503 when storage refused (api_failure_status): a picture with no
 * room, or an outcome the store would not take for about 10 s (REV_UNSTORED; if the
 * removal fails too, the record stays and its job runs again once writes work). A client that goes
 * away only ends the stream: the generation goes on.
 *
 * Memory: a stream makes at most SSE_WINDOW bytes of events at a time and is called
 * again (http_stream_wake) once the client has read them, so a slow reader holds a
 * window, not its whole answer. A finished text (a completed record's `result`, in the
 * `record` and `done` events and as deltas) is held once for all the streams showing
 * it (shared_text_t, by content), and a record event's text is escaped a piece at a
 * time into the window (big_event_t). A live stream keeps the text it has learnt so far
 * (x->text) until its record completes. */
#include "api/api_int.h"

#include "core/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DELTA_MAX 512
#define SSE_WINDOW (64 * 1024) /* most bytes of events made before the client read them */
#define TEXT_PIECE 4096        /* a record event's text is escaped this much at a time */
#define SSE_RETRY_MS 1000 /* the reconnection delay sent as a released stream ends */

typedef enum { END_NONE, END_DONE, END_FAILED, END_RELEASED } sse_end_t;

/* ---- one copy of a finished text for every stream showing it ---- */

typedef struct shared_text {
    struct shared_text *next;
    int refs;
    size_t len;
    char data[]; /* len bytes and a NUL */
} shared_text_t;

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static shared_text_t *shared_texts; /* those held by some stream */

/* A reference to a copy of s[0..len): the one held already when some stream has the
 * same text, else a new one. */
static shared_text_t *text_share(const char *s, size_t len)
{
    pthread_mutex_lock(&shared_mu);
    for (shared_text_t *t = shared_texts; t; t = t->next)
        if (t->len == len && memcmp(t->data, s, len) == 0) {
            t->refs++;
            pthread_mutex_unlock(&shared_mu);
            return t;
        }
    pthread_mutex_unlock(&shared_mu);
    shared_text_t *t = xmalloc(sizeof(*t) + len + 1);
    memcpy(t->data, s, len);
    t->data[len] = '\0';
    t->len = len;
    t->refs = 1;
    pthread_mutex_lock(&shared_mu);
    t->next = shared_texts;
    shared_texts = t;
    pthread_mutex_unlock(&shared_mu);
    return t;
}

static void text_unshare(shared_text_t *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&shared_mu);
    bool last = --t->refs == 0;
    if (last)
        for (shared_text_t **p = &shared_texts; *p; p = &(*p)->next)
            if (*p == t) {
                *p = t->next;
                break;
            }
    pthread_mutex_unlock(&shared_mu);
    if (last)
        free(t);
}

/* A `record` or `done` event being written: json is the record with its result left
 * out (json[0..cut) goes before the text, json[cut..) after it); the text is escaped
 * into the window a piece at a time. */
typedef struct {
    bool active;
    buf_t json;
    size_t cut;
    const char *text;
    size_t len, pos;
} big_event_t;

typedef struct {
    app_t *app;
    records_sub_t *sub;
    http_stream_t *st;
    rec_kind_t kind;
    int64_t user_id, id;
    bool is_create;
    bool is_regen; /* a regeneration (§16): a failure keeps the record */
    /* An action (§17): the deltas are the part rewritten, which is
     * result[part_start .. strlen - part_after) of the finished record */
    bool part;
    int64_t part_start, part_after;
    int64_t job_id; /* a streamed create's job: events of another job are not its own */
    double keepalive;

    pthread_mutex_t mu; /* guards what follows: the subscription writes, on_work reads */
    bool started;       /* the record event is out */
    arena_t arena;      /* first: the record event's record; final: the finished one */
    record_t first, final; /* their result: first_text's / final_text's data */
    shared_text_t *first_text, *final_text;
    buf_t text;         /* the text as known, from byte 0 (until final_text has it whole) */
    big_event_t big;    /* a record event being written */
    bool done_started;  /* the done event is being written (or out) */
    int64_t sent;       /* bytes of text sent as deltas (or skipped by Last-Event-ID) */
    sse_end_t end;
    char error[256];
    rec_failure_t failure;
    bool end_sent;
    bool final_needs_read; /* completed, but the event had no record */
    double last_send;
    bool keepalive_due;
} sse_t;

bool api_wants_stream(http_req_t *r)
{
    const char *a = http_header(r, "Accept");
    return a && strcasestr(a, "text/event-stream") != NULL;
}

/* Takes the text of an event that starts at byte start (under sse->mu). */
static void learn_text(sse_t *x, int64_t start, const char *text, size_t len)
{
    if (x->final_text)
        return; /* the whole text is known */
    int64_t have = (int64_t)x->text.len;
    if (start > have || start + (int64_t)len <= have)
        return; /* a gap (never from one source) or nothing new */
    buf_append(&x->text, text + (have - start), (size_t)(start + (int64_t)len - have));
}

/* The finished record (under sse->mu). */
static void learn_final(sse_t *x, const record_t *rec)
{
    if (x->part) { /* an action (§17): the deltas are the part rewritten, in x->text */
        record_copy(&x->arena, &x->final, rec);
        int64_t n = rec->result ? (int64_t)strlen(rec->result) : 0;
        if (rec->result && x->part_start >= 0 && x->part_after >= 0 &&
            x->part_start + x->part_after <= n)
            learn_text(x, 0, rec->result + x->part_start,
                       (size_t)(n - x->part_start - x->part_after));
        x->end = END_DONE;
        return;
    }
    record_t r = *rec;
    r.result = NULL;
    record_copy(&x->arena, &x->final, &r);
    text_unshare(x->final_text);
    x->final_text = rec->result ? text_share(rec->result, strlen(rec->result)) : NULL;
    if (x->final_text) {
        x->final.result = x->final_text->data;
        buf_free(&x->text); /* the deltas come from final_text now (text is a prefix of it) */
    }
    x->end = END_DONE;
}

/* The text the deltas come from (under sse->mu). */
static const char *delta_source(sse_t *x, int64_t *len)
{
    if (x->final_text) {
        *len = (int64_t)x->final_text->len;
        return x->final_text->data;
    }
    *len = (int64_t)x->text.len;
    return x->text.data;
}

/* The subscription: under the records service's event lock, any thread. */
static void on_event(void *arg, const rev_t *ev)
{
    sse_t *x = arg;
    bool wake = true;
    if (ev->job_id && x->job_id && ev->job_id != x->job_id)
        return; /* a late event of the record's previous job (regenerated since) */
    pthread_mutex_lock(&x->mu);
    if (x->end != END_NONE && ev->type != REV_TICK) {
        pthread_mutex_unlock(&x->mu);
        return;
    }
    switch (ev->type) {
    case REV_TEXT: learn_text(x, ev->offset - (int64_t)ev->len, ev->text, ev->len); break;
    case REV_COMPLETED:
        if (ev->part) { /* an action's: its text events were the part rewritten */
            x->part = true;
            x->part_start = ev->part_start;
            x->part_after = ev->part_after;
        }
        if (ev->rec)
            learn_final(x, ev->rec);
        else {
            x->end = END_DONE;
            x->final_needs_read = true;
        }
        break;
    case REV_FAILED:
        x->end = END_FAILED;
        x->failure = ev->failure ? ev->failure : records_failure_of(ev->error);
        snprintf(x->error, sizeof(x->error), "%s", ev->error ? ev->error : "Generation failed.");
        break;
    case REV_DELETED:
        x->end = END_FAILED;
        x->failure = RF_DELETED;
        snprintf(x->error, sizeof(x->error), "The record was deleted.");
        break;
    case REV_UNSTORED: /* its job will run again; the stream does not wait for that */
        x->end = END_FAILED;
        x->failure = RF_UNSTORED;
        snprintf(x->error, sizeof(x->error), "%s", RECORDS_UNSTORED_ERROR);
        break;
    case REV_RELEASED: x->end = END_RELEASED; break;
    case REV_TICK:
        wake = ev->now_mono - x->last_send >= x->keepalive;
        x->keepalive_due = wake;
        break;
    default: wake = false; break;
    }
    http_stream_t *st = x->st;
    pthread_mutex_unlock(&x->mu);
    if (wake && st)
        http_stream_wake(st);
}

static void write_event(buf_t *out, const char *event, int64_t id, const char *data, size_t len)
{
    if (id >= 0)
        buf_printf(out, "id: %lld\n", (long long)id);
    buf_printf(out, "event: %s\ndata: ", event);
    buf_append(out, data, len);
    buf_puts(out, "\n\n");
}

/* The length of the longest prefix of s[0..n) of at most max bytes that ends on a
 * character boundary. */
static size_t utf8_cut(const char *s, size_t n, size_t max);

/* Writes what fits in the window of the record event being written (under sse->mu);
 * true when it is all out. */
static bool big_pump(big_event_t *b, buf_t *out)
{
    while (b->active && out->len < SSE_WINDOW) {
        if (b->pos < b->len) {
            size_t n = utf8_cut(b->text + b->pos, b->len - b->pos, TEXT_PIECE);
            size_t at = out->len;
            json_escape(out, b->text + b->pos, n); /* "…": the quotes are the JSON's own */
            memmove(out->data + at, out->data + at + 1, out->len - at - 2);
            out->len -= 2;
            out->data[out->len] = '\0';
            b->pos += n;
            continue;
        }
        buf_append(out, b->json.data + b->cut, b->json.len - b->cut);
        buf_puts(out, "\n\n");
        buf_free(&b->json);
        b->active = false;
    }
    return !b->active;
}

/* Starts the event (its text, when the record has one, goes out as the window lets
 * it: big_pump); true when it is all out. */
static bool write_record(sse_t *x, buf_t *out, const char *event, const record_t *rec)
{
    big_event_t *b = &x->big;
    record_t r = *rec;
    char mark[33], quoted[36];
    random_hex(mark, 16); /* unguessable: found in the JSON only where the result is */
    snprintf(quoted, sizeof(quoted), "\"%s\"", mark);
    if (rec->result)
        r.result = mark;
    buf_init(&b->json);
    jw_t w;
    jw_init(&w, &b->json);
    api_record_json(x->app, &w, &r);
    buf_printf(out, "event: %s\ndata: ", event);
    char *at = rec->result ? strstr(b->json.data, quoted) : NULL;
    if (!at) {
        buf_append(out, b->json.data, b->json.len);
        buf_puts(out, "\n\n");
        buf_free(&b->json);
        return true;
    }
    buf_append(out, b->json.data, (size_t)(at - b->json.data) + 1); /* up to the quote */
    b->cut = (size_t)(at - b->json.data) + 33;                     /* from the quote */
    b->text = rec->result;
    b->len = strlen(rec->result);
    b->pos = 0;
    b->active = true;
    return big_pump(b, out);
}

/* The length of the longest prefix of s[0..n) of at most max bytes that ends on a
 * character boundary. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t cut = max;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    return cut ? cut : max; /* (never 0 for valid UTF-8) */
}

/* Deltas from byte from, up to to or the window's end; returns where they stopped. */
static int64_t write_deltas(buf_t *out, const char *text, int64_t from, int64_t to)
{
    buf_t j;
    buf_init(&j);
    while (from < to && out->len < SSE_WINDOW) {
        size_t n = utf8_cut(text + from, (size_t)(to - from), DELTA_MAX);
        buf_reset(&j);
        buf_puts(&j, "{\"text\":");
        json_escape(&j, text + from, n);
        buf_putc(&j, '}');
        from += (int64_t)n;
        write_event(out, "delta", from, j.data, j.len);
    }
    buf_free(&j);
    return from;
}

/* In an HTTP thread: writes what is new, at most about a window of it; when there is
 * more, it asks to be called again once the client has read this (http_stream_wake). */
static void on_work(void *arg, http_stream_t *st)
{
    sse_t *x = arg;
    if (x->end_sent)
        return;
    buf_t out;
    buf_init(&out);
    pthread_mutex_lock(&x->mu);
    bool more = false;
    if (!x->started) {
        x->started = true;
        more = !write_record(x, &out, "record", &x->first);
    } else if (x->big.active) {
        more = !big_pump(&x->big, &out);
    }
    if (!more && x->final_needs_read) {
        /* rare: the worker could not read the record it completed */
        pthread_mutex_unlock(&x->mu);
        char err[128];
        store_conn_t *c = store_conn(x->app->store, err, sizeof(err));
        arena_t a;
        arena_init(&a);
        record_t rec;
        int rc = c ? records_get(x->app->records, c, x->kind, x->user_id, x->id, NULL, NULL, &a,
                                 &rec)
                   : STORE_UNAVAILABLE;
        pthread_mutex_lock(&x->mu);
        x->final_needs_read = false;
        if (rc == STORE_OK)
            learn_final(x, &rec);
        else
            x->end = END_RELEASED; /* the client may come back with Last-Event-ID */
        arena_free(&a);
    }
    int64_t known;
    const char *text = delta_source(x, &known);
    if (!more && known > x->sent) {
        x->sent = write_deltas(&out, text, x->sent, known);
        more = x->sent < known;
    }
    sse_end_t end = more ? END_NONE : x->end; /* the end once all before it is out */
    char error[256];
    memcpy(error, x->error, sizeof(error));
    rec_failure_t failure = x->failure;
    if (end == END_DONE) {
        if (!x->done_started) {
            x->done_started = true;
            more = !write_record(x, &out, "done", &x->final);
        } else if (x->big.active) {
            more = !big_pump(&x->big, &out);
        }
        if (more)
            end = END_NONE;
    }
    if (end == END_RELEASED) /* §20: EventSource reconnects (elsewhere) with Last-Event-ID */
        buf_printf(&out, "retry: %d\n\n", SSE_RETRY_MS);
    if (x->end == END_NONE && x->keepalive_due && out.len == 0)
        buf_puts(&out, ": keep-alive\n\n");
    x->keepalive_due = false;
    if (out.len)
        x->last_send = mono_s();
    pthread_mutex_unlock(&x->mu);
    if (end == END_FAILED) {
        /* a create's client waited: no record is left behind, and it is gone before
         * the client hears of the failure */
        if (x->is_create)
            records_discard(x->app->records, x->kind, x->user_id, x->id);
        const char *msg;
        int status = api_failure_status(failure, error, &msg);
        buf_t j;
        buf_init(&j);
        buf_puts(&j, "{\"message\":");
        json_escape(&j, msg, strlen(msg));
        buf_printf(&j, ",\"status\":%d}", status);
        write_event(&out, "error", -1, j.data, j.len);
        buf_free(&j);
    }
    if (out.len)
        http_stream_write(st, out.data, out.len);
    buf_free(&out);
    if (end != END_NONE) {
        x->end_sent = true;
        http_stream_end(st);
    } else if (more) {
        http_stream_wake(st); /* the rest once this is read */
    }
}

static void sse_free(sse_t *x)
{
    records_unsubscribe(x->app->records, x->sub);
    pthread_mutex_destroy(&x->mu);
    buf_free(&x->text);
    buf_free(&x->big.json);
    text_unshare(x->first_text);
    text_unshare(x->final_text);
    arena_free(&x->arena);
    free(x);
}

static void on_close(void *arg)
{
    sse_free(arg);
}

static sse_t *sse_new(app_t *app, rec_kind_t kind, int64_t user_id, int64_t id)
{
    sse_t *x = xcalloc(1, sizeof(*x));
    x->app = app;
    x->kind = kind;
    x->user_id = user_id;
    x->id = id;
    x->keepalive = app->cfg->stream_keepalive > 0 ? app->cfg->stream_keepalive : 15;
    x->last_send = mono_s();
    pthread_mutex_init(&x->mu, NULL);
    arena_init(&x->arena);
    buf_init(&x->text);
    return x;
}

/* Subscribes, then reads the record once (it may have ended before the subscription)
 * and takes what it says. Returns the store's answer; on STORE_OK *now is the record
 * as read (in a, which the caller frees once it has taken what it needs). */
static int follow(sse_t *x, store_conn_t *c, record_t *now, arena_t *a)
{
    /* every event this process holds of the record is replayed to on_event (the text so
     * so far of a generation running or followed here, piece by piece), then the rest */
    x->sub = x->job_id ? records_subscribe_job(x->app->records, x->kind, x->user_id, x->id, 0,
                                               x->job_id, on_event, x)
                       : records_subscribe(x->app->records, x->kind, x->user_id, x->id, 0,
                                           on_event, x);
    store_read_end(c); /* a fresh read, after the subscription */
    /* a create's own generation may have ended before the subscription, and another
     * begun since (a regeneration accepted): asked before the record is read, so a
     * record read unfinished after its job ended is the later generation's */
    bool ended = false;
    if (x->job_id)
        records_job_ended(x->app->records, c, x->job_id, &ended);
    int rc = records_get(x->app->records, c, x->kind, x->user_id, x->id, NULL, NULL, a, now);
    pthread_mutex_lock(&x->mu);
    if (rc == STORE_OK && x->end == END_NONE && ended && !record_finished(now)) {
        record_t as_left = *now; /* the record as this generation left it */
        if (now->error) {
            x->end = END_FAILED;
            x->failure = records_failure_of(now->error);
            snprintf(x->error, sizeof(x->error), "%s", now->error);
        } else {
            as_left.state = REC_COMPLETED;
            learn_final(x, &as_left);
        }
    } else if (rc == STORE_OK && x->end == END_NONE) {
        /* a regeneration that failed leaves its record completed, with error set */
        bool failed = x->is_regen ? records_last_failed(now) : now->state == REC_FAILED;
        if (now->state == REC_COMPLETED && !failed)
            learn_final(x, now);
        else if (failed) {
            x->end = END_FAILED;
            x->failure = records_failure_of(now->error);
            snprintf(x->error, sizeof(x->error), "%s", now->error ? now->error : "Generation failed.");
        }
    }
    pthread_mutex_unlock(&x->mu);
    if (rc == STORE_OK && !record_finished(now)) {
        /* the text so far of a generation another process runs, read once: its pieces
         * are appended to the row in the statement that NOTIFYs them, so the ones heard
         * from now on continue it (learn_text takes each byte once) */
        int64_t seq;
        const char *partial = records_partial(x->app->records, c, x->kind, x->id, a, &seq);
        pthread_mutex_lock(&x->mu);
        if (partial)
            learn_text(x, 0, partial, strlen(partial));
        pthread_mutex_unlock(&x->mu);
    }
    return rc;
}

static void start(sse_t *x, http_req_t *r, int status)
{
    http_add_header(r, "Cache-Control", "no-store");
    http_add_header(r, "X-Accel-Buffering", "no");
    http_stream_cb_t cb = {on_work, on_close, x};
    http_stream_t *st = http_respond_stream(r, status, "text/event-stream", &cb);
    pthread_mutex_lock(&x->mu);
    x->st = st;
    pthread_mutex_unlock(&x->mu);
}

/* ---- show ---- */

static int64_t last_event_id(http_req_t *r)
{
    const char *h = http_header(r, "Last-Event-ID");
    int64_t n;
    return h && parse_uint(h, &n) ? n : 0;
}

/* A resume (Last-Event-ID: n) of a document completed by an action, as read (now): the
 * client was following the action's stream, whose ids count bytes within the part
 * rewritten (§17) — a stream of the action while it ran, cut by a drain or the network,
 * or ended by `done` and reconnected —, so the deltas are the rest of that part (the
 * part kept with the revision: records_latest_part) and `done` the whole record. An n
 * beyond the part is no offset within it: the whole text's (§10). (A stream that learnt
 * the end from the action's own event knows the part already.) */
static void resume_part(sse_t *x, store_conn_t *c, const record_t *now, int64_t n)
{
    pthread_mutex_lock(&x->mu);
    bool whole = n > 0 && x->end == END_DONE && !x->part && x->final_text;
    pthread_mutex_unlock(&x->mu);
    int64_t b_start, b_after;
    if (!whole || !records_latest_part(x->app->records, c, now, &b_start, &b_after) ||
        n > (int64_t)strlen(now->result) - b_start - b_after)
        return;
    pthread_mutex_lock(&x->mu);
    text_unshare(x->final_text); /* the deltas come from the part (x->text) */
    x->final_text = NULL;
    buf_reset(&x->text);
    x->part = true;
    x->part_start = b_start;
    x->part_after = b_after;
    learn_final(x, now);
    pthread_mutex_unlock(&x->mu);
}

void api_stream_show(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    sse_t *x = sse_new(app, kind, http_user_id(r), id);
    record_t now;
    arena_t a;
    arena_init(&a);
    int rc = follow(x, c, &now, &a);
    if (rc != STORE_OK) {
        arena_free(&a);
        sse_free(x);
        if (rc == STORE_NOTFOUND)
            api_not_found(r);
        else
            api_store_error(r, rc);
        return;
    }
    int64_t n = last_event_id(r);
    resume_part(x, c, &now, n);
    record_t bare = now;
    bare.result = NULL;
    pthread_mutex_lock(&x->mu); /* (x->arena: the subscription may be learning the end) */
    record_copy(&x->arena, &x->first, &bare);
    if (x->end != END_NONE && now.result) { /* a running record's text comes as deltas */
        x->first_text = text_share(now.result, strlen(now.result));
        x->first.result = x->first_text->data;
    }
    pthread_mutex_unlock(&x->mu);
    arena_free(&a);
    /* resume: the client has the first N bytes (a character split by N is sent whole) */
    pthread_mutex_lock(&x->mu);
    if (n > 0) {
        /* (an action's deltas are its part, which x->text holds) */
        bool whole = x->end == END_DONE && x->final.result && !x->part;
        const char *t = whole ? x->final.result : x->text.data;
        int64_t known = (int64_t)(whole ? strlen(t) : x->text.len);
        if (n > known && x->end != END_NONE)
            n = known;
        while (n > 0 && n < known && ((unsigned char)t[n] & 0xC0) == 0x80)
            n--;
        x->sent = n;
    }
    pthread_mutex_unlock(&x->mu);
    start(x, r, 200);
}

/* ---- create ---- */

static void on_stream_create_resumed(void *appv, http_req_t *r)
{
    app_t *app = appv;
    records_create_t *cr = http_wait(r);
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    records_create_finish(app->records, c, cr);
    const records_req_t *req = &cr->req;
    const records_result_t *res = &cr->res;
    if (res->outcome != CREATED_STREAM) {
        api_create_answer(app, r, cr); /* JSON: nothing was streamed yet */
        return;
    }
    sse_t *x = sse_new(app, res->rec.kind, http_user_id(r), res->rec.id);
    x->is_create = !req->regenerate;
    x->is_regen = req->regenerate;
    x->job_id = res->job_id;
    if (req->action && res->rec.result) {
        /* the part of the record's text the action rewrites (records/actions.c) */
        size_t b0, b1;
        records_action_range(res->rec.result, req->action, req->sel_start, req->sel_end, &b0, &b1);
        x->part = true;
        x->part_start = (int64_t)b0;
        x->part_after = (int64_t)(strlen(res->rec.result) - b1);
    }
    if (res->inline_text) {
        /* generated in the request and stored: the stream tells it as it happened */
        learn_final(x, &res->rec);
        x->first = x->final;
    } else {
        record_t now;
        arena_t a;
        arena_init(&a);
        follow(x, c, &now, &a);
        arena_free(&a);
        record_t bare = res->rec; /* as created: queued (a regeneration's old text unused) */
        bare.result = NULL;
        pthread_mutex_lock(&x->mu);
        record_copy(&x->arena, &x->first, &bare);
        pthread_mutex_unlock(&x->mu);
    }
    if (req->regenerate) {
        /* the record as a GET shows it meanwhile (§16): its latest finished revision's
         * result (or picture), words and usage; the new text follows as deltas */
        const record_t *shown = res->inline_text || !res->rec.revision ? &req->rec : &res->rec;
        record_t was = *shown;
        was.state = res->inline_text ? REC_GENERATING : x->first.state;
        if (res->inline_text) /* (the record's number and times are the new ones) */
            was.event_seq = res->rec.event_seq;
        was.error = NULL;
        pthread_mutex_lock(&x->mu);
        const char *text = was.result;
        was.result = NULL;
        record_copy(&x->arena, &x->first, &was);
        if (text && *text) {
            x->first_text = text_share(text, strlen(text));
            x->first.result = x->first_text->data;
        }
        pthread_mutex_unlock(&x->mu);
    } else {
        x->first.result = NULL;
        x->first.words = 0;
        x->first.media_key = NULL;
        x->first.revised_prompt = NULL;
    }
    if (record_finished(&x->first))
        x->first.state = REC_GENERATING;
    http_add_header(r, "Location", api_record_url(app, http_arena(r), res->rec.kind, res->rec.id));
    start(x, r, req->regenerate ? 200 : 201);
}

void api_stream_create(app_t *app, http_req_t *r, records_create_t *cr)
{
    cr->req.mode = CREATE_STREAM;
    http_suspend(r, api_create_suspended, on_stream_create_resumed, cr);
}
