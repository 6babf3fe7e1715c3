/* ops.c — what operators and tools read: GET /metrics (Prometheus text, obs/metrics.h),
 * GET /api/v1/openapi.json (the compiled-in OpenAPI document, src/api/openapi.json),
 * and the provider and job-queue fields of /readyz. */
#include "api/api_int.h"

#include "api/rcache.h"
#include "obs/metrics.h"
#include "store/store_webhooks.h"

#include <string.h>
#include <time.h>

static void queue_counts(store_conn_t *c, int64_t *queued, int64_t *running)
{
    *queued = *running = -1;
    if (c && store_job_counts(c, queued, running) != STORE_OK)
        *queued = *running = -1;
}

void api_metrics(app_t *app, http_req_t *r)
{
    if (!metrics_enabled()) {
        api_not_found(r);
        return;
    }
    char err[256];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    metrics_gauges_t g = {0};
    queue_counts(c, &g.jobs_queued, &g.jobs_running);
    g.search_pending = -1;
    if (c && store_has(app->store, STORE_CAP_LAGGING_INDEX))
        g.search_pending = store_sqlite_index_pending(c); /* negative: not written */
    if (app->rcache) {
        rcache_stats_t st;
        rcache_stats(app->rcache, &st);
        g.have_cache = true;
        g.cache_hits = st.hits;
        g.cache_misses = st.misses;
        g.cache_entries = st.entries;
        g.cache_bytes = st.bytes;
    }
    g.webhooks_pending = -1;
    int64_t oldest = 0;
    if (c && store_webhook_stats(c, &g.webhooks_pending, &oldest) != STORE_OK)
        g.webhooks_pending = -1;
    g.webhooks_oldest_s = g.webhooks_pending > 0 && oldest > 0 ? (now_us() - oldest) / 1e6 : 0;
    buf_reset(http_resp(r));
    metrics_render(http_resp(r), &g);
    http_set_content_type(r, "text/plain; version=0.0.4; charset=utf-8");
    http_add_header(r, "Cache-Control", "no-store");
    http_respond(r, 200);
}

void api_openapi(app_t *app, http_req_t *r)
{
    const asset_t *a = asset_find("/api/v1/openapi.json");
    if (!a) {
        api_not_found(r);
        return;
    }
    api_asset(r, a, "no-cache");
}

/* Whether the provider has what it needs to be called: the builtin one always; an
 * OpenAI-compatible one a base URL and models, and a key when it is OpenAI itself. */
static bool provider_configured(const cfg_t *cfg)
{
    if (strcmp(cfg->provider, "openai") != 0)
        return true;
    if (!cfg->openai_base_url[0] || !cfg->text_model[0] || !cfg->image_model[0])
        return false;
    return cfg->openai_api_key[0] || !strstr(cfg->openai_base_url, "api.openai.com");
}

static void put_time(buf_t *out, double at)
{
    time_t s = (time_t)at;
    struct tm tm;
    gmtime_r(&s, &tm);
    char ts[40];
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    buf_printf(out, "\"%s.%06dZ\"", ts, (int)((at - (double)s) * 1e6));
}

void api_readyz_fields(app_t *app, store_conn_t *c, buf_t *out)
{
    const cfg_t *cfg = app->cfg;
    bool openai = strcmp(cfg->provider, "openai") == 0;
    buf_printf(out, ",\"provider\":{\"name\":\"%s\",\"configured\":%s", openai ? "openai" : "builtin",
               provider_configured(cfg) ? "true" : "false");
    if (openai) {
        double at;
        int last = metrics_provider_last(&at);
        buf_printf(out, ",\"last_call\":\"%s\",\"last_call_at\":",
                   last > 0 ? "succeeded" : last < 0 ? "failed" : "none");
        if (last)
            put_time(out, at);
        else
            buf_puts(out, "null");
    }
    buf_puts(out, "}");
    int64_t queued, running;
    queue_counts(c, &queued, &running);
    if (queued >= 0)
        buf_printf(out, ",\"jobs\":{\"queued\":%lld,\"running\":%lld,\"workers\":%ld}",
                   (long long)queued, (long long)running, cfg->workers);
    else
        buf_printf(out, ",\"jobs\":null");
}
