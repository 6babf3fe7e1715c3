/* metrics.c — counters, gauges and histograms of the process, and their text
 * exposition (Prometheus format 0.0.4). See metrics.h.
 *
 * Every series is a slot of a static array of relaxed atomics, so counting costs one
 * uncontended-or-not atomic add and never a lock. A histogram keeps one counter per
 * bucket (not cumulative; summed when rendered) and its sum in nanoseconds; its
 * count is the sum of its buckets, so a scrape always sees them agree. */
#include "obs/metrics.h"

#include "core/version.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef _Atomic uint64_t counter_t;

static const char *const route_names[MR_COUNT] = {
    [MR_OTHER] = "other",
    [MR_DOCUMENTS] = "/api/v1/documents",
    [MR_DOCUMENT] = "/api/v1/documents/{id}",
    [MR_DOCUMENT_EXPORT] = "/api/v1/documents/{id}/export",
    [MR_IMAGES] = "/api/v1/images",
    [MR_IMAGE] = "/api/v1/images/{id}",
    [MR_TEMPLATES] = "/api/v1/templates",
    [MR_TEMPLATE] = "/api/v1/templates/{id}",
    [MR_OPENAPI] = "/api/v1/openapi.json",
    [MR_HEALTHZ] = "/healthz",
    [MR_READYZ] = "/readyz",
    [MR_METRICS] = "/metrics",
    [MR_MEDIA] = "/media/{file}",
    [MR_WEBAPP] = "/",
    [MR_USAGE] = "/api/v1/usage",
    [MR_ME] = "/api/v1/me",
    [MR_ADMIN_USERS] = "/api/v1/admin/users",
    [MR_ADMIN_USER] = "/api/v1/admin/users/{id}",
    [MR_ADMIN_USER_KEYS] = "/api/v1/admin/users/{id}/keys",
    [MR_ADMIN_KEY] = "/api/v1/admin/keys/{id}",
    [MR_ADMIN_USAGE] = "/api/v1/admin/usage",
    [MR_SESSION_CSRF] = "/api/v1/session/csrf",
    [MR_SESSION] = "/api/v1/session",
    [MR_ME_SESSIONS] = "/api/v1/me/sessions",
    [MR_ME_PASSWORD] = "/api/v1/me/password",
    [MR_KEYS] = "/api/v1/keys",
    [MR_KEY] = "/api/v1/keys/{id}",
    [MR_TAGS] = "/api/v1/tags",
    [MR_DOCUMENTS_BULK] = "/api/v1/documents/bulk",
    [MR_IMAGES_BULK] = "/api/v1/images/bulk",
    [MR_DOCUMENT_DRAFT] = "/api/v1/documents/{id}/draft",
    [MR_WEBHOOKS] = "/api/v1/webhooks",
    [MR_WEBHOOK] = "/api/v1/webhooks/{id}",
    [MR_WEBHOOK_ROTATE] = "/api/v1/webhooks/{id}/rotate",
    [MR_WEBHOOK_PING] = "/api/v1/webhooks/{id}/ping",
    [MR_WEBHOOK_DELIVERIES] = "/api/v1/webhooks/{id}/deliveries",
    [MR_WEBHOOK_RETRY] = "/api/v1/webhooks/{id}/deliveries/{d}/retry",
    [MR_OIDC] = "/auth/oidc",
    [MR_OIDC_LOGIN] = "/auth/oidc/login",
    [MR_OIDC_CALLBACK] = "/auth/oidc/callback",
};

enum { MM_GET, MM_HEAD, MM_POST, MM_PUT, MM_PATCH, MM_DELETE, MM_OTHER, MM_COUNT };
static const char *const method_names[MM_COUNT] = {"GET",   "HEAD",   "POST", "PUT",
                                                   "PATCH", "DELETE", "other"};
enum { CLASS_COUNT = 5 }; /* 1xx .. 5xx */
static const char *const kind_names[MK_COUNT] = {"document", "image"};
static const char *const outcome_names[MO_COUNT] = {"completed", "failed"};
enum { MP_BUILTIN, MP_OPENAI, MP_COUNT };
static const char *const provider_names[MP_COUNT] = {"builtin", "openai"};
static const char *const reason_names[MRR_COUNT] = {"rate_limit", "server_error", "timeout",
                                                    "connection"};

/* Upper bounds in seconds; one more bucket (+Inf) follows the last. */
static const double http_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                     0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5,
                                     5,      10,      30,     60,    120};
static const double gen_bounds[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                    2.5,   5,     10,   20,   30,  60,   120, 300};
#define HTTP_NB (ARRAY_LEN(http_bounds) + 1)
#define GEN_NB (ARRAY_LEN(gen_bounds) + 1)

typedef struct {
    counter_t http_requests[MR_COUNT][MM_COUNT][CLASS_COUNT];
    counter_t http_buckets[MR_COUNT][HTTP_NB];
    counter_t http_sum_ns[MR_COUNT];
    _Atomic int64_t http_inflight;
    _Atomic int64_t streams_open;
    counter_t generations[MK_COUNT][MP_COUNT][MO_COUNT];
    counter_t gen_buckets[MK_COUNT][MP_COUNT][GEN_NB];
    counter_t gen_sum_ns[MK_COUNT][MP_COUNT];
    counter_t provider_attempts[MK_COUNT];
    counter_t provider_retries[MRR_COUNT];
    counter_t tokens_prompt, tokens_completion;
    counter_t store_unavailable, store_other;
    counter_t ratelimit_refused;
    counter_t webhook_attempts[MWH_COUNT];
    counter_t usage_words[MP_COUNT], usage_images[MP_COUNT];
    counter_t usage_tokens[MP_COUNT][2]; /* prompt, completion */
    counter_t quota_refused[MQ_COUNT];
} metrics_t;

static metrics_t M;
static bool enabled = true;
static char build_provider[16] = "builtin", build_storage[16] = "sqlite";
static double start_time;

static double unix_now(void);

static inline void inc(counter_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t get(counter_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static void copy_name(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < n; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

void metrics_init(bool on, const char *provider, const char *storage)
{
    enabled = on;
    copy_name(build_provider, sizeof(build_provider), provider);
    copy_name(build_storage, sizeof(build_storage), storage);
    start_time = unix_now();
}

bool metrics_enabled(void)
{
    return enabled;
}

static int method_index(const char *m)
{
    if (!m)
        return MM_OTHER;
    for (int i = 0; i < MM_OTHER; i++)
        if (strcmp(m, method_names[i]) == 0)
            return i;
    return MM_OTHER;
}

static size_t bucket(const double *bounds, size_t n, double v)
{
    size_t i = 0;
    while (i < n && v > bounds[i])
        i++;
    return i;
}

static uint64_t to_ns(double seconds)
{
    return seconds > 0 ? (uint64_t)(seconds * 1e9) : 0;
}

void metrics_http_begin(void)
{
    if (enabled)
        atomic_fetch_add_explicit(&M.http_inflight, 1, memory_order_relaxed);
}

void metrics_http_done(metrics_route_t route, const char *method, int status, double seconds)
{
    if (!enabled)
        return;
    atomic_fetch_sub_explicit(&M.http_inflight, 1, memory_order_relaxed);
    if (status < 100)
        return; /* the client left before any answer */
    if ((unsigned)route >= MR_COUNT)
        route = MR_OTHER;
    int cls = status / 100 - 1;
    if (cls < 0 || cls >= CLASS_COUNT)
        cls = CLASS_COUNT - 1;
    inc(&M.http_requests[route][method_index(method)][cls], 1);
    inc(&M.http_buckets[route][bucket(http_bounds, ARRAY_LEN(http_bounds), seconds)], 1);
    inc(&M.http_sum_ns[route], to_ns(seconds));
}

void metrics_streams_add(int delta)
{
    if (enabled)
        atomic_fetch_add_explicit(&M.streams_open, delta, memory_order_relaxed);
}

static int provider_index(const char *p)
{
    return p && strcmp(p, "openai") == 0 ? MP_OPENAI : MP_BUILTIN;
}

void metrics_generation(metrics_kind_t kind, const char *provider, metrics_outcome_t outcome,
                        double seconds)
{
    if (!enabled || (unsigned)kind >= MK_COUNT || (unsigned)outcome >= MO_COUNT)
        return;
    int p = provider_index(provider);
    inc(&M.generations[kind][p][outcome], 1);
    inc(&M.gen_buckets[kind][p][bucket(gen_bounds, ARRAY_LEN(gen_bounds), seconds)], 1);
    inc(&M.gen_sum_ns[kind][p], to_ns(seconds));
}

static _Thread_local metrics_retry_reason_t last_reason;

void metrics_provider_attempt_end(bool image, long status, bool transfer_failed, bool timed_out)
{
    if (!enabled)
        return;
    inc(&M.provider_attempts[image ? MK_IMAGE : MK_DOCUMENT], 1);
    if (transfer_failed)
        last_reason = timed_out ? MRR_TIMEOUT : MRR_CONNECTION;
    else
        last_reason = status == 429 ? MRR_RATE_LIMIT : MRR_SERVER_ERROR;
}

void metrics_provider_retrying(void)
{
    if (enabled)
        inc(&M.provider_retries[last_reason], 1);
}

static _Atomic int provider_last;
static _Atomic int64_t provider_last_ms;

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void metrics_provider_outcome(bool ok)
{
    atomic_store_explicit(&provider_last_ms, (int64_t)(unix_now() * 1000), memory_order_relaxed);
    atomic_store_explicit(&provider_last, ok ? 1 : -1, memory_order_relaxed);
}

int metrics_provider_last(double *at)
{
    int last = atomic_load_explicit(&provider_last, memory_order_relaxed);
    *at = (double)atomic_load_explicit(&provider_last_ms, memory_order_relaxed) / 1000.0;
    return last;
}

void metrics_tokens(int64_t prompt, int64_t completion)
{
    if (!enabled)
        return;
    if (prompt > 0)
        inc(&M.tokens_prompt, (uint64_t)prompt);
    if (completion > 0)
        inc(&M.tokens_completion, (uint64_t)completion);
}

void metrics_store_error(bool unavailable)
{
    if (enabled)
        inc(unavailable ? &M.store_unavailable : &M.store_other, 1);
}

void metrics_webhook_attempt(metrics_webhook_t outcome)
{
    if (enabled && outcome < MWH_COUNT)
        inc(&M.webhook_attempts[outcome], 1);
}

void metrics_ratelimit_refused(void)
{
    if (enabled)
        inc(&M.ratelimit_refused, 1);
}

void metrics_usage(const char *provider, int64_t words, int64_t images, int64_t prompt_tokens,
                   int64_t completion_tokens)
{
    if (!enabled)
        return;
    int p = provider_index(provider);
    if (words > 0)
        inc(&M.usage_words[p], (uint64_t)words);
    if (images > 0)
        inc(&M.usage_images[p], (uint64_t)images);
    if (prompt_tokens > 0)
        inc(&M.usage_tokens[p][0], (uint64_t)prompt_tokens);
    if (completion_tokens > 0)
        inc(&M.usage_tokens[p][1], (uint64_t)completion_tokens);
}

void metrics_quota_refused(metrics_quota_t kind)
{
    if (enabled && (unsigned)kind < MQ_COUNT)
        inc(&M.quota_refused[kind], 1);
}

/* ---- exposition ------------------------------------------------------------------- */

static void head(buf_t *o, const char *name, const char *type, const char *help)
{
    buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A bucket bound as Prometheus writes it: shortest form that reads back the same. */
static void put_bound(buf_t *o, double b)
{
    buf_printf(o, "%g", b);
}

static void histogram(buf_t *o, const char *name, const char *labels, counter_t *buckets,
                      const double *bounds, size_t nb, counter_t *sum_ns)
{
    uint64_t cum = 0;
    for (size_t i = 0; i <= nb; i++) {
        cum += get(&buckets[i]);
        buf_printf(o, "%s_bucket{%s,le=\"", name, labels);
        if (i < nb)
            put_bound(o, bounds[i]);
        else
            buf_puts(o, "+Inf");
        buf_printf(o, "\"} %llu\n", (unsigned long long)cum);
    }
    buf_printf(o, "%s_sum{%s} %.9f\n", name, labels, (double)get(sum_ns) / 1e9);
    buf_printf(o, "%s_count{%s} %llu\n", name, labels, (unsigned long long)cum);
}

static void counter_line(buf_t *o, const char *name, const char *labels, counter_t *c)
{
    if (labels)
        buf_printf(o, "%s{%s} %llu\n", name, labels, (unsigned long long)get(c));
    else
        buf_printf(o, "%s %llu\n", name, (unsigned long long)get(c));
}

void metrics_render(buf_t *o, const metrics_gauges_t *g)
{
    char labels[160];

    head(o, "inkwell_build_info", "gauge",
         "Always 1; the labels name the version, storage backend and generation provider.");
    buf_printf(o, "inkwell_build_info{version=\"%s\",storage=\"%s\",provider=\"%s\"} 1\n",
               INKWELL_VERSION, build_storage, build_provider);
    head(o, "inkwell_start_time_seconds", "gauge", "When the process started, Unix time.");
    buf_printf(o, "inkwell_start_time_seconds %.3f\n", start_time);

    head(o, "inkwell_http_requests_total", "counter",
         "HTTP requests answered, by route template, method and status class.");
    for (int r = 0; r < MR_COUNT; r++)
        for (int m = 0; m < MM_COUNT; m++)
            for (int c = 0; c < CLASS_COUNT; c++) {
                if (get(&M.http_requests[r][m][c]) == 0)
                    continue;
                snprintf(labels, sizeof(labels), "route=\"%s\",method=\"%s\",status=\"%dxx\"",
                         route_names[r], method_names[m], c + 1);
                counter_line(o, "inkwell_http_requests_total", labels, &M.http_requests[r][m][c]);
            }
    head(o, "inkwell_http_request_duration_seconds", "histogram",
         "Time from a request's arrival to its answer, by route template.");
    for (int r = 0; r < MR_COUNT; r++) {
        uint64_t any = 0;
        for (size_t b = 0; b < HTTP_NB; b++)
            any += get(&M.http_buckets[r][b]);
        if (!any)
            continue;
        snprintf(labels, sizeof(labels), "route=\"%s\"", route_names[r]);
        histogram(o, "inkwell_http_request_duration_seconds", labels, M.http_buckets[r],
                  http_bounds, ARRAY_LEN(http_bounds), &M.http_sum_ns[r]);
    }
    head(o, "inkwell_http_requests_in_flight", "gauge",
         "Requests begun and not yet answered (waiting creates and streams included).");
    buf_printf(o, "inkwell_http_requests_in_flight %lld\n",
               (long long)atomic_load_explicit(&M.http_inflight, memory_order_relaxed));
    head(o, "inkwell_sse_streams_open", "gauge", "Server-Sent Event streams open now.");
    buf_printf(o, "inkwell_sse_streams_open %lld\n",
               (long long)atomic_load_explicit(&M.streams_open, memory_order_relaxed));

    head(o, "inkwell_generations_total", "counter",
         "Generations ended in this process, by record kind, provider and outcome.");
    for (int k = 0; k < MK_COUNT; k++)
        for (int p = 0; p < MP_COUNT; p++)
            for (int out = 0; out < MO_COUNT; out++) {
                snprintf(labels, sizeof(labels), "kind=\"%s\",provider=\"%s\",outcome=\"%s\"",
                         kind_names[k], provider_names[p], outcome_names[out]);
                counter_line(o, "inkwell_generations_total", labels, &M.generations[k][p][out]);
            }
    head(o, "inkwell_generation_duration_seconds", "histogram",
         "Time a generation took, from its start to its result, by kind and provider.");
    for (int k = 0; k < MK_COUNT; k++)
        for (int p = 0; p < MP_COUNT; p++) {
            snprintf(labels, sizeof(labels), "kind=\"%s\",provider=\"%s\"", kind_names[k],
                     provider_names[p]);
            histogram(o, "inkwell_generation_duration_seconds", labels, M.gen_buckets[k][p],
                      gen_bounds, ARRAY_LEN(gen_bounds), &M.gen_sum_ns[k][p]);
        }
    head(o, "inkwell_provider_attempts_total", "counter",
         "HTTP calls made to the OpenAI-compatible provider, retries included, by kind.");
    for (int k = 0; k < MK_COUNT; k++) {
        snprintf(labels, sizeof(labels), "kind=\"%s\"", kind_names[k]);
        counter_line(o, "inkwell_provider_attempts_total", labels, &M.provider_attempts[k]);
    }
    head(o, "inkwell_provider_retries_total", "counter",
         "Provider calls tried again, by the reason of the failed attempt.");
    for (int r = 0; r < MRR_COUNT; r++) {
        snprintf(labels, sizeof(labels), "reason=\"%s\"", reason_names[r]);
        counter_line(o, "inkwell_provider_retries_total", labels, &M.provider_retries[r]);
    }
    head(o, "inkwell_tokens_total", "counter",
         "Tokens the provider reported using, by type (prompt or completion).");
    counter_line(o, "inkwell_tokens_total", "type=\"prompt\"", &M.tokens_prompt);
    counter_line(o, "inkwell_tokens_total", "type=\"completion\"", &M.tokens_completion);

    head(o, "inkwell_generated_words_total", "counter",
         "Words of text generated (generations, regenerations, actions), by provider.");
    for (int p = 0; p < MP_COUNT; p++) {
        snprintf(labels, sizeof(labels), "provider=\"%s\"", provider_names[p]);
        counter_line(o, "inkwell_generated_words_total", labels, &M.usage_words[p]);
    }
    head(o, "inkwell_generated_images_total", "counter", "Pictures generated, by provider.");
    for (int p = 0; p < MP_COUNT; p++) {
        snprintf(labels, sizeof(labels), "provider=\"%s\"", provider_names[p]);
        counter_line(o, "inkwell_generated_images_total", labels, &M.usage_images[p]);
    }
    head(o, "inkwell_generated_tokens_total", "counter",
         "Tokens the provider reported for finished generations, by provider and type.");
    for (int p = 0; p < MP_COUNT; p++)
        for (int t = 0; t < 2; t++) {
            snprintf(labels, sizeof(labels), "provider=\"%s\",type=\"%s\"", provider_names[p],
                     t ? "completion" : "prompt");
            counter_line(o, "inkwell_generated_tokens_total", labels, &M.usage_tokens[p][t]);
        }
    head(o, "inkwell_quota_refusals_total", "counter",
         "Creates refused because the user's monthly quota was used up, by kind.");
    counter_line(o, "inkwell_quota_refusals_total", "kind=\"words\"", &M.quota_refused[MQ_WORDS]);
    counter_line(o, "inkwell_quota_refusals_total", "kind=\"images\"",
                 &M.quota_refused[MQ_IMAGES]);

    if (g && g->jobs_queued >= 0) {
        head(o, "inkwell_jobs_queued", "gauge",
             "Generation jobs waiting for a worker (the whole deployment's queue).");
        buf_printf(o, "inkwell_jobs_queued %lld\n", (long long)g->jobs_queued);
        head(o, "inkwell_jobs_running", "gauge",
             "Generation jobs held by a worker now (the whole deployment).");
        buf_printf(o, "inkwell_jobs_running %lld\n", (long long)g->jobs_running);
    }
    if (g && g->search_pending >= 0) {
        head(o, "inkwell_search_index_pending", "gauge",
             "Records not in the search index yet (SQLite indexes after the commit; "
             "searches scan them meanwhile).");
        buf_printf(o, "inkwell_search_index_pending %lld\n", (long long)g->search_pending);
    }
    if (g && g->have_cache) {
        head(o, "inkwell_record_cache_hits_total", "counter",
             "Records answered from the rendered-record cache.");
        buf_printf(o, "inkwell_record_cache_hits_total %llu\n", (unsigned long long)g->cache_hits);
        head(o, "inkwell_record_cache_misses_total", "counter",
             "Records looked up in the rendered-record cache and rendered anew.");
        buf_printf(o, "inkwell_record_cache_misses_total %llu\n",
                   (unsigned long long)g->cache_misses);
        head(o, "inkwell_record_cache_entries", "gauge", "Records kept in the cache now.");
        buf_printf(o, "inkwell_record_cache_entries %llu\n", (unsigned long long)g->cache_entries);
        head(o, "inkwell_record_cache_bytes", "gauge", "Memory the cache's renderings take.");
        buf_printf(o, "inkwell_record_cache_bytes %llu\n", (unsigned long long)g->cache_bytes);
    }
    head(o, "inkwell_store_errors_total", "counter",
         "Store operations that failed, by kind (unavailable: database unreachable).");
    counter_line(o, "inkwell_store_errors_total", "kind=\"unavailable\"", &M.store_unavailable);
    counter_line(o, "inkwell_store_errors_total", "kind=\"error\"", &M.store_other);
    head(o, "inkwell_rate_limit_refusals_total", "counter",
         "Requests refused with 429 by the rate limit.");
    counter_line(o, "inkwell_rate_limit_refusals_total", NULL, &M.ratelimit_refused);
    head(o, "inkwell_webhook_attempts_total", "counter",
         "Webhook delivery attempts by outcome (retrying: to be tried again; failed: no "
         "attempt left, or 410).");
    static const char *const wh[MWH_COUNT] = {"outcome=\"delivered\"", "outcome=\"retrying\"",
                                              "outcome=\"failed\""};
    for (int i = 0; i < MWH_COUNT; i++)
        counter_line(o, "inkwell_webhook_attempts_total", wh[i], &M.webhook_attempts[i]);
    if (g && g->webhooks_pending >= 0) {
        head(o, "inkwell_webhook_deliveries_pending", "gauge",
             "Webhook deliveries not yet delivered or failed.");
        buf_printf(o, "inkwell_webhook_deliveries_pending %lld\n", (long long)g->webhooks_pending);
        head(o, "inkwell_webhook_oldest_pending_seconds", "gauge",
             "Age of the oldest pending webhook delivery (0 when none).");
        buf_printf(o, "inkwell_webhook_oldest_pending_seconds %.3f\n", g->webhooks_oldest_s);
    }
}
