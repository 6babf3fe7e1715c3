/* test_metrics.c — the metrics module: counting by fixed labels, histogram buckets
 * (cumulative, +Inf equals the count), the provider's last outcome, and that
 * --metrics off counts nothing. promtool checks the whole exposition in
 * tests/http/test_ops.py. */
#include "obs/metrics.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

static buf_t render(void)
{
    buf_t b;
    buf_init(&b);
    metrics_gauges_t g = {.jobs_queued = 3, .jobs_running = 1};
    metrics_render(&b, &g);
    return b;
}

static bool has(const buf_t *b, const char *line)
{
    char want[512];
    snprintf(want, sizeof(want), "\n%s\n", line);
    return strstr(b->data, want) != NULL;
}

int main(void)
{
    metrics_init(true, "openai", "postgres");
    metrics_http_begin();
    metrics_http_done(MR_DOCUMENT, "GET", 200, 0.0004);
    metrics_http_begin();
    metrics_http_done(MR_DOCUMENT, "GET", 404, 0.003);
    metrics_http_begin();
    metrics_http_done(MR_DOCUMENTS, "BREW", 405, 0.5);
    metrics_http_begin();
    metrics_http_done(MR_COUNT + 7, "POST", 503, 700); /* bad route: other; beyond the last bucket */
    metrics_http_begin(); /* one still in flight */
    metrics_http_begin();
    metrics_http_done(MR_HEALTHZ, "GET", 0, 0.1); /* left before an answer: not counted */
    metrics_generation(MK_IMAGE, "openai", MO_FAILED, 2.0);
    metrics_generation(MK_DOCUMENT, "builtin", MO_COMPLETED, 0.002);
    metrics_provider_attempt_end(true, 429, false, false);
    metrics_provider_retrying();
    metrics_provider_attempt_end(false, 0, true, true);
    metrics_provider_retrying();
    metrics_provider_attempt_end(false, 503, false, false); /* the last: not retried */
    metrics_tokens(12, 30);
    metrics_tokens(-1, -1);
    metrics_store_error(true);
    metrics_ratelimit_refused();
    metrics_streams_add(1);

    buf_t b = render();
    CHECK(has(&b, "inkwell_build_info{version=\"1.1.0\",storage=\"postgres\",provider=\"openai\"} 1"));
    CHECK(has(&b, "inkwell_http_requests_total{route=\"/api/v1/documents/{id}\",method=\"GET\",status=\"2xx\"} 1"));
    CHECK(has(&b, "inkwell_http_requests_total{route=\"/api/v1/documents/{id}\",method=\"GET\",status=\"4xx\"} 1"));
    CHECK(has(&b, "inkwell_http_requests_total{route=\"/api/v1/documents\",method=\"other\",status=\"4xx\"} 1"));
    CHECK(has(&b, "inkwell_http_requests_total{route=\"other\",method=\"POST\",status=\"5xx\"} 1"));
    CHECK(strstr(b.data, "route=\"/healthz\"") == NULL);
    /* buckets are cumulative: 0.0004 falls in le=0.0005, 0.003 in le=0.005 */
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"/api/v1/documents/{id}\",le=\"0.00025\"} 0"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"/api/v1/documents/{id}\",le=\"0.0005\"} 1"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"/api/v1/documents/{id}\",le=\"0.0025\"} 1"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"/api/v1/documents/{id}\",le=\"0.005\"} 2"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"/api/v1/documents/{id}\",le=\"+Inf\"} 2"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_count{route=\"/api/v1/documents/{id}\"} 2"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_sum{route=\"/api/v1/documents/{id}\"} 0.003400000"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"other\",le=\"120\"} 0"));
    CHECK(has(&b, "inkwell_http_request_duration_seconds_bucket{route=\"other\",le=\"+Inf\"} 1"));
    CHECK(has(&b, "inkwell_http_requests_in_flight 1"));
    CHECK(has(&b, "inkwell_sse_streams_open 1"));
    CHECK(has(&b, "inkwell_generations_total{kind=\"image\",provider=\"openai\",outcome=\"failed\"} 1"));
    CHECK(has(&b, "inkwell_generations_total{kind=\"document\",provider=\"builtin\",outcome=\"completed\"} 1"));
    CHECK(has(&b, "inkwell_generations_total{kind=\"document\",provider=\"openai\",outcome=\"completed\"} 0"));
    CHECK(has(&b, "inkwell_generation_duration_seconds_bucket{kind=\"image\",provider=\"openai\",le=\"1\"} 0"));
    CHECK(has(&b, "inkwell_generation_duration_seconds_bucket{kind=\"image\",provider=\"openai\",le=\"2.5\"} 1"));
    CHECK(has(&b, "inkwell_provider_attempts_total{kind=\"image\"} 1"));
    CHECK(has(&b, "inkwell_provider_attempts_total{kind=\"document\"} 2"));
    CHECK(has(&b, "inkwell_provider_retries_total{reason=\"rate_limit\"} 1"));
    CHECK(has(&b, "inkwell_provider_retries_total{reason=\"timeout\"} 1"));
    CHECK(has(&b, "inkwell_provider_retries_total{reason=\"server_error\"} 0"));
    CHECK(has(&b, "inkwell_provider_retries_total{reason=\"connection\"} 0"));
    CHECK(has(&b, "inkwell_tokens_total{type=\"prompt\"} 12"));
    CHECK(has(&b, "inkwell_tokens_total{type=\"completion\"} 30"));
    CHECK(has(&b, "inkwell_jobs_queued 3"));
    CHECK(has(&b, "inkwell_jobs_running 1"));
    CHECK(has(&b, "inkwell_store_errors_total{kind=\"unavailable\"} 1"));
    CHECK(has(&b, "inkwell_rate_limit_refusals_total 1"));
    CHECK(strstr(b.data, "inkwell_record_cache") == NULL); /* no cache given */
    buf_free(&b);

    double at = 0;
    CHECK_INT(metrics_provider_last(&at), 0);
    metrics_provider_outcome(false);
    CHECK_INT(metrics_provider_last(&at), -1);
    CHECK(at > 1.7e9);

    /* off: nothing more is counted, but the provider's outcome is still kept */
    metrics_init(false, "builtin", "sqlite");
    CHECK(!metrics_enabled());
    metrics_http_begin();
    metrics_http_done(MR_DOCUMENT, "GET", 200, 0.0004);
    metrics_ratelimit_refused();
    metrics_provider_outcome(true);
    CHECK_INT(metrics_provider_last(&at), 1);
    b = render();
    CHECK(has(&b, "inkwell_http_requests_total{route=\"/api/v1/documents/{id}\",method=\"GET\",status=\"2xx\"} 1"));
    CHECK(has(&b, "inkwell_rate_limit_refusals_total 1"));
    buf_free(&b);
    TEST_DONE();
}
