/* metrics.h — the process's Prometheus metrics (GET /metrics, API.md §13).
 *
 * Counters are relaxed atomics in fixed arrays indexed by small enums (route
 * template, method, status class, kind, provider, outcome...): counting is one
 * atomic add, with no lock and no allocation, from any thread. Labels come only
 * from those fixed sets — never a user, key, record id or raw path. When metrics
 * are off (--metrics off) every call returns at once and /metrics answers 404.
 *
 * metrics_render() writes the text exposition format (version 0.0.4); the gauges
 * that are read rather than counted (jobs queued and running, the record cache's
 * counters, which it keeps itself) are passed in. */
#ifndef INK_METRICS_H
#define INK_METRICS_H

#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

/* Route templates of the HTTP request metrics. */
typedef enum {
    MR_OTHER, /* unknown paths (404) and requests refused before routing */
    MR_DOCUMENTS,
    MR_DOCUMENT,
    MR_DOCUMENT_EXPORT,
    MR_IMAGES,
    MR_IMAGE,
    MR_TEMPLATES,
    MR_TEMPLATE,
    MR_OPENAPI,
    MR_HEALTHZ,
    MR_READYZ,
    MR_METRICS,
    MR_MEDIA,
    MR_WEBAPP, /* / and the web app's static files */
    /* §19, in the order of route_t's ROUTE_USAGE … ROUTE_ADMIN_USAGE */
    MR_USAGE,
    MR_ME,
    MR_ADMIN_USERS,
    MR_ADMIN_USER,
    MR_ADMIN_USER_KEYS,
    MR_ADMIN_KEY,
    MR_ADMIN_USAGE,
    MR_SESSION_CSRF, /* API.md §21 */
    MR_SESSION,
    MR_ME_SESSIONS,
    MR_ME_PASSWORD,
    MR_KEYS,
    MR_KEY,
    MR_TAGS,           /* API.md §23 */
    MR_DOCUMENTS_BULK,
    MR_IMAGES_BULK,
    MR_DOCUMENT_DRAFT, /* §24 */
    /* webhooks (§22) */
    MR_WEBHOOKS,
    MR_WEBHOOK,
    MR_WEBHOOK_ROTATE,
    MR_WEBHOOK_PING,
    MR_WEBHOOK_DELIVERIES,
    MR_WEBHOOK_RETRY,
    MR_OIDC,          /* single sign-on (§21) */
    MR_OIDC_LOGIN,
    MR_OIDC_CALLBACK,
    MR_COUNT
} metrics_route_t;

typedef enum { MK_DOCUMENT, MK_IMAGE, MK_COUNT } metrics_kind_t;
typedef enum { MO_COMPLETED, MO_FAILED, MO_COUNT } metrics_outcome_t;
/* Why a provider call is tried again (API.md §5). */
typedef enum {
    MRR_RATE_LIMIT,   /* 429 */
    MRR_SERVER_ERROR, /* 5xx */
    MRR_TIMEOUT,
    MRR_CONNECTION,   /* refused, reset, dropped */
    MRR_COUNT
} metrics_retry_reason_t;

/* Turns counting on (the default) or off; provider and storage name the build_info
 * labels ("builtin"/"openai", "sqlite"/"postgres"). */
void metrics_init(bool enabled, const char *provider, const char *storage);
bool metrics_enabled(void);

/* HTTP: a request has begun / has been answered (seconds since it began). */
void metrics_http_begin(void);
void metrics_http_done(metrics_route_t route, const char *method, int status, double seconds);
/* Server-Sent Event streams: one opened (+1) or closed (-1). */
void metrics_streams_add(int delta);

/* A generation ended (provider "builtin" or "openai"). */
void metrics_generation(metrics_kind_t kind, const char *provider, metrics_outcome_t outcome,
                        double seconds);
/* One HTTP attempt of a provider call ended: image or text, its HTTP status (0 when
 * none), whether the transfer failed (a libcurl error) and whether it was cut by a
 * timeout. Counts the attempt and remembers, for this thread, why it would be tried
 * again: 429 rate_limit, a failed transfer timeout or connection, else server_error. */
void metrics_provider_attempt_end(bool image, long status, bool transfer_failed, bool timed_out);
/* The attempt this thread just ended is being tried again: counts a retry by its reason. */
void metrics_provider_retrying(void);
/* The outcome of a whole provider call (after its retries), for /readyz: kept even
 * when metrics are off. metrics_provider_last: 0 none yet, 1 succeeded, -1 failed,
 * and when (Unix time) in *at. */
void metrics_provider_outcome(bool ok);
int metrics_provider_last(double *at);
/* Tokens the provider reported (negative = unknown, not counted). */
void metrics_tokens(int64_t prompt, int64_t completion);

/* What a finished generation used (§19): words of text, pictures, the provider's
 * tokens (< 0 = not said), by provider (never by user). */
void metrics_usage(const char *provider, int64_t words, int64_t images, int64_t prompt_tokens,
                   int64_t completion_tokens);
/* A create refused because its user's monthly quota is used up. */
typedef enum { MQ_WORDS, MQ_IMAGES, MQ_COUNT } metrics_quota_t;
void metrics_quota_refused(metrics_quota_t kind);

/* A store operation failed: unavailable (true) or another error. */
void metrics_store_error(bool unavailable);
void metrics_ratelimit_refused(void);

/* Figures read at scrape time rather than counted here. */
typedef struct {
    int64_t jobs_queued, jobs_running; /* -1 = unknown (store unreachable): not written */
    int64_t search_pending;            /* SQLite: records not in the search index yet; -1 */
    bool have_cache;                   /* the rendered-record cache's own counters */
    uint64_t cache_hits, cache_misses, cache_entries, cache_bytes;
    /* webhooks (API.md §22): pending deliveries and the age of the oldest, seconds; -1 =
     * unknown (not written) */
    int64_t webhooks_pending;
    double webhooks_oldest_s;
} metrics_gauges_t;

/* Appends the exposition text. */
void metrics_render(buf_t *out, const metrics_gauges_t *g);

/* One webhook delivery attempt ended (API.md §22): delivered, retrying (to be tried
 * again) or failed (no attempt left, or 410). */
typedef enum { MWH_DELIVERED, MWH_RETRYING, MWH_FAILED, MWH_COUNT } metrics_webhook_t;
void metrics_webhook_attempt(metrics_webhook_t outcome);

#endif
