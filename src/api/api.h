/* api.h — the HTTP API of inkwell (/api/v1, /healthz, /readyz, /media, /metrics) and the
 * web app (/), as the program that serves it sees it: the application's handles (app_t),
 * the server's request handler, and what main.c sets up.
 *
 * This is the API's public header: what is outside src/api/ (main.c) includes it and
 * nothing else of the folder but export_pool.h and rcache.h (their own services). The
 * handlers, the route table and their shared pieces are declared in api_int.h, for
 * src/api/ (and its unit tests) only (scripts/include-graph.py checks it). */
#ifndef INK_API_H
#define INK_API_H

#include "core/config.h"
#include "http/server.h"
#include "media/media.h"
#include "records/records.h"
#include "store/store.h"

typedef struct ratelimit ratelimit_t;

typedef struct {
    const cfg_t *cfg;
    store_t *store;
    media_t *media;
    records_t *records; /* the records service: every record operation goes through it */
    const provider_t *prov;
    struct rcache *rcache; /* rendered records (api/rcache.h); NULL = none */
    ratelimit_t *rl;
    char *public_url; /* no trailing slash */
    struct export_pool *exports; /* api/export_pool.h: exports off the HTTP threads; NULL =
                                  * made in the request's thread */
    struct export_pool *hashes; /* password hashing and checks (API.md §21), the same kind of
                                 * pool; NULL = in the request's thread */
    bool https; /* --public-url is https: __Host- cookies, Secure */
    struct oidc *oidc; /* auth/oidc.h: single sign-on (API.md §21); NULL = not configured */
    struct wh_service *webhooks; /* webhooks/webhooks.h: the delivery workers (§22) */
} app_t;

/* The server's request handler (http_opts_t.handler, with the app_t as its app): routes,
 * authenticates, rate limits and calls one handler per route. */
void api_handle(void *app, http_req_t *r);

/* Installs Idempotency-Key as the records service's create hook (records.h), so the
 * inline, job and streamed creates all honour it. */
void api_idempotency_install(app_t *app);

/* A record's JSON as GET shows it (the value of "data"), for a webhook's body
 * (webhooks.c; webhooks/webhooks.h's wh_render_fn with the app_t as its argument). */
void api_webhook_render(void *app, const record_t *rec, buf_t *out);

/* The rate limiter of app_t.rl (ratelimit.c): per_minute requests a key (or a client
 * address, for bad keys) may make; kept in the store when servers share it. */
ratelimit_t *ratelimit_new(long per_minute, bool shared_in_store);
void ratelimit_free(ratelimit_t *rl);

#endif
