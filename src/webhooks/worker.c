/* worker.c — the delivery workers of webhooks (API.md §22). Each thread claims the next
 * due delivery (store_webhook_claim: a lease, so each attempt is made by one thread of
 * one process; on PostgreSQL FOR UPDATE SKIP LOCKED), renders the event's body the first
 * time any attempt needs it, signs it with each valid secret, sends it (client.c) and
 * stores the outcome: delivered, pending again at the next time of the schedule, or
 * failed. With nothing due a thread sleeps up to WH_IDLE_S (or until wh_kick); one
 * thread sweeps deliveries older than 30 days every WH_SWEEP_S. */
#include "webhooks/webhooks.h"

#include "core/json.h"
#include "core/log.h"
#include "core/thread.h"
#include "core/util.h"
#include "obs/metrics.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WH_IDLE_S 0.2
#define WH_SWEEP_S 600.0
#define WH_KEEP_US (30LL * 86400 * 1000000)
#define WH_LEASE_S 20.0 /* above an attempt's 10 s: a crashed process's claims go again after it */
#define WH_RETRY_AFTER_MAX (12.0 * 3600)
#define WH_NICE 10
#define WH_BATCH 16 /* deliveries claimed at once: one write for the claim, one for the outcomes */

struct wh_service {
    wh_opts_t o;
    pthread_t *threads;
    int n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    unsigned kicks;
    int64_t last_lease; /* lease_for's */
};

static const double schedule[] = {5, 30, 120, 600, 3600, 10800, 21600, 43200};

double wh_retry_delay(int64_t failed_attempts)
{
    if (failed_attempts < 1 || failed_attempts > (int64_t)ARRAY_LEN(schedule))
        return -1;
    return schedule[failed_attempts - 1];
}

/* ±20 % spread */
static double jitter(double s)
{
    uint32_t r;
    random_bytes(&r, sizeof(r));
    return s * (0.8 + 0.4 * ((double)r / 4294967295.0));
}

static void deleted_json(jw_t *w, const webhook_job_t *j)
{
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, j->record_id);
    jw_key(w, "object");
    jw_str(w, j->kind == KIND_IMG ? "image" : "document");
    jw_key(w, "deleted");
    jw_bool(w, true);
    jw_obj_end(w);
}

/* The event's body: {"type","timestamp","data"}, data the record as GET showed it when
 * the event happened: rendered from the copy of its row the schema took in the change's
 * transaction (store_webhook_snapshot), so the same bytes at every attempt and for
 * every endpoint without being stored. An event older than the copies is rendered
 * from the record as it stands now and that body stored on the event at once (*keep);
 * a record gone since reads as deleted. */
static void render(wh_service_t *s, store_conn_t *c, const webhook_job_t *j, arena_t *a,
                   buf_t *out, bool *keep)
{
    char ts[32];
    fmt_timestamp(j->event_us, ts);
    jw_t w;
    jw_init(&w, out);
    jw_obj_begin(&w);
    jw_key(&w, "type");
    jw_str(&w, j->type);
    jw_key(&w, "timestamp");
    jw_str(&w, ts);
    jw_key(&w, "data");
    record_t rec;
    *keep = false;
    if (strcmp(j->type, "ping") == 0) {
        jw_obj_begin(&w);
        jw_key(&w, "webhook_id");
        jw_int(&w, j->webhook_id);
        jw_obj_end(&w);
    } else if (strstr(j->type, ".deleted") ||
               (store_webhook_snapshot(c, j, a, &rec) != STORE_OK &&
                (*keep = true) &&
                store_record_get(c, j->kind, j->user_id, j->record_id, NULL, NULL, a, &rec) !=
                    STORE_OK)) {
        deleted_json(&w, j);
    } else {
        buf_t one;
        buf_init(&one);
        s->o.render(s->o.render_arg, &rec, &one);
        jw_rawn(&w, buf_cstr(&one), one.len);
        buf_free(&one);
    }
    jw_obj_end(&w);
}

/* Signs and sends one attempt; its outcome into out. */
static void attempt(wh_service_t *s, const webhook_job_t *j, arena_t *a, webhook_result_t *out)
{
    const char *body = j->body;
    int64_t now = now_us();
    int64_t ts = now / 1000000;
    buf_t sig;
    buf_init(&sig);
    buf_printf(&sig, "webhook-signature: ");
    size_t len = strlen(body);
    bool ok = wh_sign(j->secret, j->msg, ts, body, len, &sig);
    if (ok && j->prev_secret && j->prev_until_us > now) {
        buf_putc(&sig, ' ');
        ok = wh_sign(j->prev_secret, j->msg, ts, body, len, &sig);
    }
    char id_h[96], ts_h[48], ua[96];
    snprintf(id_h, sizeof(id_h), "webhook-id: %s", j->msg);
    snprintf(ts_h, sizeof(ts_h), "webhook-timestamp: %lld", (long long)ts);
    snprintf(ua, sizeof(ua), "User-Agent: %s", s->o.user_agent);
    const char *headers[] = {"Content-Type: application/json", ua, id_h, ts_h, buf_cstr(&sig),
                             NULL};
    wh_send_result_t res;
    if (ok) {
        wh_send(j->url, headers, body, len, s->o.allow_private, s->o.timeout_s, &res);
    } else {
        memset(&res, 0, sizeof(res));
        snprintf(res.error, sizeof(res.error), "the endpoint's secret is malformed");
    }
    buf_free(&sig);

    memset(out, 0, sizeof(*out));
    out->status = res.status;
    int64_t failed = j->attempts + 1;
    if (res.status >= 200 && res.status <= 299 && !res.error[0]) {
        out->state = WD_DELIVERED;
    } else {
        out->error = res.error[0] ? arena_strdup(a, res.error) : "no answer";
        double d = wh_retry_delay(failed);
        if (res.status == 410) {
            out->state = WD_FAILED; /* Gone: and the endpoint is disabled */
            out->disable = true;
        } else if (d < 0) {
            out->state = WD_FAILED;
        } else {
            d = jitter(d) * s->o.retry_scale;
            double ra = res.retry_after > WH_RETRY_AFTER_MAX ? WH_RETRY_AFTER_MAX
                                                              : res.retry_after;
            if (ra > d)
                d = ra;
            out->state = WD_PENDING;
            out->next_us = now_us() + (int64_t)(d * 1e6);
        }
    }
    metrics_webhook_attempt(out->state == WD_DELIVERED ? MWH_DELIVERED
                            : out->state == WD_FAILED  ? MWH_FAILED
                                                       : MWH_RETRYING);
    log_debug("webhooks: delivery %lld (%s) attempt %lld: %s %d", (long long)j->id, j->msg,
              (long long)failed,
              out->state == WD_DELIVERED ? "delivered"
              : out->state == WD_FAILED  ? "failed"
                                         : "retry",
              res.status);
}

static bool stopping(wh_service_t *s)
{
    pthread_mutex_lock(&s->mu);
    bool st = s->stop;
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* A claim's deliveries: the bodies they lack rendered (those of events older than the
 * records' copies stored, in one transaction),
 * each sent in turn, the outcomes stored (one transaction). A delivery is given back
 * unsent when an earlier one of its endpoint failed in this claim, when the lease would
 * run out during its attempt, or at shutdown. */
static void deliver(wh_service_t *s, store_conn_t *c, webhook_job_t *jobs, size_t n, arena_t *a)
{
    webhook_result_t res[WH_BATCH];
    const char *bodies[WH_BATCH];
    bool need = false;
    for (size_t i = 0; i < n; i++) {
        bodies[i] = NULL;
        if (jobs[i].body)
            continue;
        buf_t b;
        buf_init(&b);
        bool keep;
        render(s, c, &jobs[i], a, &b, &keep);
        bodies[i] = arena_strdup(a, buf_cstr(&b));
        buf_free(&b);
        if (keep)
            need = true;
        else
            jobs[i].body = bodies[i]; /* the same bytes whenever rendered */
    }
    bool have = !need || store_webhook_body(c, jobs, bodies, n, a) == STORE_OK;
    for (size_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        bool gone = false; /* an earlier attempt of this endpoint failed */
        for (size_t k = 0; k < i && !gone; k++)
            gone = jobs[k].webhook_id == jobs[i].webhook_id && !res[k].release &&
                   res[k].state != WD_DELIVERED;
        if (!have || !jobs[i].body || gone || stopping(s) ||
            now_us() + (int64_t)((s->o.timeout_s + 1) * 1e6) > jobs[i].lease_until)
            res[i].release = true;
        else
            attempt(s, &jobs[i], a, &res[i]);
    }
    int rc = store_webhook_done(c, jobs, res, n);
    if (rc != STORE_OK && rc != STORE_STALE)
        log_warn("webhooks: the outcomes of %zu deliveries were not stored (%s); they are tried "
                 "again", n, store_rc_name(rc));
}

/* The claim's name: its lease's end, made unique in this process (two claims of one
 * microsecond would count as one of the endpoint's claims, and share outcomes). */
static int64_t lease_for(wh_service_t *s, int64_t now)
{
    pthread_mutex_lock(&s->mu);
    int64_t l = now + (int64_t)(WH_LEASE_S * 1e6);
    if (l <= s->last_lease)
        l = s->last_lease + 1;
    s->last_lease = l;
    pthread_mutex_unlock(&s->mu);
    return l;
}

static void idle(wh_service_t *s, double secs)
{
    pthread_mutex_lock(&s->mu);
    unsigned k = s->kicks;
    double end = mono_s() + secs; /* monotonic (core/thread.h) */
    while (!s->stop && k == s->kicks)
        if (!thread_cond_wait_until(&s->cv, &s->mu, end))
            break;
    pthread_mutex_unlock(&s->mu);
}


typedef struct {
    wh_service_t *s;
    int index;
} thread_arg_t;

static void *run(void *p)
{
    thread_arg_t *ta = p;
    wh_service_t *s = ta->s;
    int index = ta->index;
    free(ta);
    /* below the requests' threads: deliveries take the cores the creates leave (they
     * wait minutes anyway when a receiver is slow; docs/benchmarks.md "Webhooks") */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WH_NICE);
    double next_sweep = mono_s() + 5;
    while (!stopping(s)) {
        char err[256];
        store_conn_t *c = store_conn(s->o.store, err, sizeof(err));
        if (!c) {
            idle(s, 1);
            continue;
        }
        if (index == 0 && mono_s() >= next_sweep) {
            next_sweep = mono_s() + WH_SWEEP_S;
            store_webhook_sweep(c, now_us() - WH_KEEP_US);
        }
        arena_t a;
        arena_init(&a);
        webhook_job_t jobs[WH_BATCH];
        size_t n;
        int64_t now = now_us();
        int rc = store_webhook_claim(c, now, lease_for(s, now), s->o.per_endpoint, WH_BATCH,
                                     &a, jobs, &n);
        if (rc == STORE_OK)
            deliver(s, c, jobs, n, &a);
        arena_free(&a);
        if (rc != STORE_OK)
            idle(s, rc == STORE_NOTFOUND ? WH_IDLE_S : 1);
    }
    wh_send_end();
    return NULL;
}

wh_service_t *wh_start(const wh_opts_t *o)
{
    /* libcurl is loaded, and its global state made, at the first delivery's first call
     * (core/curl_lazy_va.c: once, in whichever worker comes first, the others waiting):
     * an idle server with no webhook never maps it. */
    wh_service_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->o = *o;
    if (s->o.workers < 1)
        s->o.workers = 1;
    if (s->o.per_endpoint < 1)
        s->o.per_endpoint = 1;
    if (s->o.timeout_s <= 0)
        s->o.timeout_s = 10;
    pthread_mutex_init(&s->mu, NULL);
    thread_cond_init(&s->cv);
    s->threads = calloc((size_t)s->o.workers, sizeof(pthread_t));
    for (int i = 0; s->threads && i < s->o.workers; i++) {
        thread_arg_t *ta = malloc(sizeof(*ta));
        if (!ta)
            break;
        ta->s = s;
        ta->index = i;
        char name[16];
        snprintf(name, sizeof(name), "ink-webhook-%u", (unsigned)i % 100u);
        if (!thread_start(&s->threads[i], name, run, ta)) { /* (logged) fewer workers */
            free(ta);
            break;
        }
        s->n++;
    }
    if (s->n == 0) {
        wh_stop(s);
        return NULL;
    }
    return s;
}

void wh_kick(wh_service_t *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->kicks++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void wh_stop(wh_service_t *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->n; i++)
        pthread_join(s->threads[i], NULL);
    free(s->threads);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
