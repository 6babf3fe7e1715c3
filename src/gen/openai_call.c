/* openai_call.c — one logical call to an OpenAI-compatible server: a POST of a JSON
 * request, with the retries of API.md §5, for openai.c's text and image calls.
 *
 *   openai_post_json   up to MAX_ATTEMPTS HTTP attempts. Each attempt (attempt_once)
 *                      ends in an outcome: done, retry, fail, or resend (the server
 *                      refused stream_options). Between attempts we wait (Retry-After
 *                      or capped exponential backoff with full jitter), heartbeating.
 *                      Once a text piece has been passed to ctx->on_text, nothing is
 *                      retried: a failure after that fails the generation.
 *   libcurl callbacks  on_header notes Retry-After and whether the answer is an event
 *                      stream; on_body feeds a stream to chat_stream.c as it arrives
 *                      (or keeps a plain answer, capped); on_progress heartbeats and
 *                      drops a stream that fell silent.
 *
 * Errors for the user are fixed sentences; the provider's body, the key and the URL
 * never reach res->error or the log. */
#include "gen/openai_int.h"

#include "core/log.h"
#include "obs/metrics.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_ATTEMPTS 5
#define BACKOFF_BASE_S 0.5
#define BACKOFF_CAP_S 8.0
#define RETRY_AFTER_CAP_S 30.0
#define HEARTBEAT_EVERY_S 1.0
#define DONE_GRACE_S 1.0 /* after [DONE], how long the server may take to end the body */

/* ---- heartbeat and waiting ---- */

/* Calls the heartbeat when one is due (or always when force); false means stop. */
static bool call_beat(call_t *c, bool force)
{
    if (c->stopped)
        return false;
    if (!c->ctx->heartbeat)
        return true;
    double now = mono_s();
    if (!force && now - c->last_beat < HEARTBEAT_EVERY_S)
        return true;
    c->last_beat = now;
    if (!c->ctx->heartbeat(c->ctx))
        c->stopped = true;
    return !c->stopped;
}

/* Sleeps secs in short slices, heartbeating at the start and about every second. */
static bool wait_with_heartbeat(call_t *c, double secs)
{
    if (!call_beat(c, true))
        return false;
    double end = mono_s() + secs;
    for (double left = secs; left > 0; left = end - mono_s()) {
        sleep_ms(left < 0.1 ? (int)(left * 1000) + 1 : 100);
        if (!call_beat(c, false))
            return false;
    }
    return true;
}

/* Full jitter: uniform in [0, min(cap, base * 2^(attempt-1))]. */
static double backoff_s(int attempt)
{
    double ceiling = BACKOFF_BASE_S;
    for (int i = 1; i < attempt && ceiling < BACKOFF_CAP_S; i++)
        ceiling *= 2;
    if (ceiling > BACKOFF_CAP_S)
        ceiling = BACKOFF_CAP_S;
    return ceiling * ((double)(random_u64() >> 11) / (double)(UINT64_C(1) << 53));
}

/* ---- libcurl callbacks ---- */

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    call_t *c = arg;
    size_t len = size * n;
    if (!c->mode_known) {
        long status = 0;
        curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
        c->sse = c->cs && c->ct_sse && status >= 200 && status < 300;
        c->mode_known = true;
    }
    c->last_data = mono_s();
    if (c->sse) {
        if (chat_stream_feed(c->cs, data, len) != 0) {
            c->stream_failed = true;
            return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
        }
        return len;
    }
    if (c->body.len + len > c->cap) {
        c->too_large = true;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    buf_append(&c->body, data, len);
    return len;
}

/* Retry-After: delta-seconds or an HTTP-date (parsed by curl_getdate). */
static void parse_retry_after(call_t *c, const char *value, size_t n)
{
    char v[64];
    while (n > 0 && (*value == ' ' || *value == '\t'))
        value++, n--;
    while (n > 0 && (value[n - 1] == '\r' || value[n - 1] == '\n' || value[n - 1] == ' '))
        n--;
    if (n == 0 || n >= sizeof(v))
        return;
    memcpy(v, value, n);
    v[n] = '\0';
    char *end;
    long secs = strtol(v, &end, 10);
    if (end != v && *end == '\0') {
        c->retry_after = secs < 0 ? 0 : (double)secs;
        return;
    }
    time_t when = curl_getdate(v, NULL);
    if (when != -1)
        c->retry_after = when > time(NULL) ? (double)(when - time(NULL)) : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    call_t *c = arg;
    size_t len = size * n;
    static const char name[] = "Retry-After:";
    static const char ctype[] = "Content-Type:";
    if (len > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0)
        parse_retry_after(c, data + sizeof(name) - 1, len - (sizeof(name) - 1));
    else if (len > sizeof(ctype) - 1 && strncasecmp(data, ctype, sizeof(ctype) - 1) == 0)
        c->ct_sse = memmem(data, len, "text/event-stream", 17) != NULL;
    return len;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    call_t *c = arg;
    double quiet = c->sse ? mono_s() - c->last_data : 0;
    if (c->sse && c->cs->done) {
        if (quiet > DONE_GRACE_S || (c->idle_s > 0 && quiet > c->idle_s)) {
            c->over = true; /* [DONE] came, but the server keeps the body open: enough */
            return 1;
        }
    } else if (c->sse && c->idle_s > 0 && quiet > c->idle_s) {
        c->idle = true;
        return 1;
    }
    return call_beat(c, false) ? 0 : 1;
}

/* ---- one attempt ---- */

static void attempt_setup(CURL *h, const openai_priv_t *op, const char *url,
                          struct curl_slist *headers, const char *json, call_t *c)
{
    curl_easy_reset(h); /* keeps live connections and the DNS cache */
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, op->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, op->timeout_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(json));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "inkwell/1");
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->wire_cap);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
}

static bool is_retryable_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

outcome_t openai_stream_outcome(call_t *c, char *msg, size_t msglen)
{
    const char *m = MSG_INVALID;
    outcome_t out = OUT_FAIL;
    switch (c->cs->error) {
    case CS_ERR_EVENT:
        m = c->cs->quota ? MSG_QUOTA : MSG_STREAM_ERROR;
        out = c->cs->quota ? OUT_FAIL : OUT_RETRY;
        break;
    case CS_ERR_TOO_LARGE: m = MSG_TOO_LARGE; break;
    case CS_ERR_REASONING: m = MSG_REASONING; break;
    default: break;
    }
    snprintf(msg, msglen, "%s", m);
    return out;
}

/* Classifies a transfer that did not complete. */
static outcome_t curl_outcome(call_t *c, CURLcode rc, char *msg, size_t msglen)
{
    const char *m = MSG_UNREACHABLE;
    outcome_t out = is_retryable_curl(rc) ? OUT_RETRY : OUT_FAIL;
    if (c->stream_failed && rc == CURLE_WRITE_ERROR)
        return openai_stream_outcome(c, msg, msglen);
    if (c->idle && rc == CURLE_ABORTED_BY_CALLBACK) {
        m = MSG_TIMEOUT;
        out = OUT_RETRY;
    } else if (c->stopped && rc == CURLE_ABORTED_BY_CALLBACK)
        m = MSG_INTERRUPTED;
    else if ((rc == CURLE_WRITE_ERROR && c->too_large) || rc == CURLE_FILESIZE_EXCEEDED)
        m = MSG_TOO_LARGE;
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        m = MSG_TIMEOUT;
    else if (rc == CURLE_PEER_FAILED_VERIFICATION)
        m = MSG_TLS;
    else if (c->passed > 0 && out == OUT_RETRY)
        m = MSG_CUT; /* dropped mid-text */
    snprintf(msg, msglen, "%s", m);
    return out;
}

/* A 400 (or 422) that names stream_options: the server does not know the field. */
static bool refuses_stream_options(const call_t *c, long status)
{
    return c->sent_stream_options && (status == 400 || status == 422) &&
           strcasestr(buf_cstr(&c->body), "stream_options") != NULL;
}

/* The error.code / error.type strings of an OpenAI error body, when there are any. */
static bool error_body_has(const buf_t *body, const char *what)
{
    json_t *root = json_loadb(buf_cstr(body), body->len, 0, NULL);
    json_t *err = json_object_get(root, "error");
    const char *code = json_string_value(json_object_get(err, "code"));
    const char *type = json_string_value(json_object_get(err, "type"));
    bool has = (code && strcmp(code, what) == 0) || (type && strcmp(type, what) == 0);
    json_decref(root);
    return has;
}

/* Classifies a completed exchange by its HTTP status. */
static outcome_t status_outcome(call_t *c, long status, char *msg, size_t msglen)
{
    if (status >= 200 && status < 300)
        return c->finish ? c->finish(c, msg, msglen) : OUT_DONE;
    if (refuses_stream_options(c, status))
        return OUT_RESEND;
    if (status >= 300 && status < 400) {
        snprintf(msg, msglen, "%s", MSG_REDIRECT);
        return OUT_FAIL;
    }
    if (status == 429) {
        bool quota = error_body_has(&c->body, "insufficient_quota");
        snprintf(msg, msglen, "%s", quota ? MSG_QUOTA : MSG_BUSY);
        return quota ? OUT_FAIL : OUT_RETRY;
    }
    if (status >= 500 && status < 600) {
        snprintf(msg, msglen,
                 "The AI provider is unavailable (HTTP %ld); please try again later.", status);
        return OUT_RETRY;
    }
    if (status == 401 || status == 403)
        snprintf(msg, msglen, "%s", MSG_KEY);
    else if (status == 404)
        snprintf(msg, msglen,
                 "The AI provider does not offer this service (HTTP 404); "
                 "check the base URL and the model name.");
    else if (status == 400 && error_body_has(&c->body, "content_policy_violation"))
        snprintf(msg, msglen, "%s", MSG_POLICY);
    else if (status >= 400 && status < 500)
        snprintf(msg, msglen, "The AI provider refused the request (HTTP %ld).", status);
    else
        snprintf(msg, msglen, "%s", MSG_INVALID);
    return OUT_FAIL;
}

static outcome_t attempt_once(CURL *h, const openai_priv_t *op, const char *url,
                              struct curl_slist *headers, const char *json, call_t *c,
                              char *msg, size_t msglen, char *why, size_t whylen)
{
    buf_reset(&c->body);
    c->too_large = false;
    c->retry_after = -1;
    c->curl = h;
    c->ct_sse = c->mode_known = c->sse = c->stream_failed = c->idle = c->over = false;
    c->last_data = mono_s();
    if (c->cs)
        chat_stream_reset(c->cs); /* (only ever after nothing was passed on) */
    attempt_setup(h, op, url, headers, json, c);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    outcome_t out;
    if (rc == CURLE_ABORTED_BY_CALLBACK && c->over)
        rc = CURLE_OK; /* the answer was whole */
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "curl error %d (%s)", (int)rc, curl_easy_strerror(rc));
        out = curl_outcome(c, rc, msg, msglen);
    } else {
        snprintf(why, whylen, "HTTP %ld", status);
        out = status_outcome(c, status, msg, msglen);
    }
    metrics_provider_attempt_end(strcmp(c->what, "images") == 0, status, rc != CURLE_OK,
                                 rc == CURLE_OPERATION_TIMEDOUT || c->idle);
    if (c->cs && out != OUT_DONE && status >= 200 && status < 300) {
        /* what went wrong inside a 2xx answer, in our words (never its content) */
        static const char *const reasons[] = {
            [CS_OK] = "cut short", [CS_ERR_EVENT] = "an error in the stream",
            [CS_ERR_INVALID] = "not the protocol", [CS_ERR_TOO_LARGE] = "too large",
            [CS_ERR_REASONING] = "reasoning after text"};
        size_t n = strlen(why);
        snprintf(why + n, whylen - n, ", %s answer: %s, %zu bytes passed on",
                 c->sse ? "streamed" : "plain",
                 c->cs->error != CS_OK ? reasons[c->cs->error]
                 : chat_stream_complete(c->cs) ? "no text" : reasons[CS_OK],
                 c->passed);
    }
    return out;
}

/* ---- one logical call, with retries ---- */

static struct curl_slist *request_headers(const openai_priv_t *op, bool stream)
{
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, stream ? "Accept: text/event-stream, application/json"
                                    : "Accept: application/json");
    h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
    if (op->auth_header)
        h = curl_slist_append(h, op->auth_header);
    return h;
}

int openai_post_json(const openai_priv_t *op, gen_ctx_t *ctx, const char *url,
                     const char *json, call_t *c, gen_result_t *res)
{
    openai_worker_t *w = ctx->worker_state;
    CURL *own = NULL, *h = w ? w->curl : NULL;
    if (!h)
        h = own = curl_easy_init();
    struct curl_slist *headers = request_headers(op, c->cs != NULL);
    int rc = -1;
    if (!h || !headers) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_UNREACHABLE);
        goto out;
    }
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        char why[160];
        outcome_t o = attempt_once(h, op, url, headers, json, c, res->error,
                                   sizeof(res->error), why, sizeof(why));
        if (o == OUT_DONE || o == OUT_RESEND) {
            res->error[0] = '\0';
            rc = o == OUT_DONE ? 0 : 1;
            goto out;
        }
        if (o == OUT_RETRY && c->passed > 0)
            o = OUT_FAIL; /* text was passed on: never written twice */
        if (o == OUT_FAIL || attempt == MAX_ATTEMPTS) {
            log_warn("job %" PRId64 ": openai %s attempt %d of %d failed (%s); giving up",
                     ctx->job_id, c->what, attempt, MAX_ATTEMPTS, why);
            goto out;
        }
        double wait = c->retry_after >= 0 ? c->retry_after : backoff_s(attempt);
        if (wait > RETRY_AFTER_CAP_S)
            wait = RETRY_AFTER_CAP_S;
        log_warn("job %" PRId64 ": openai %s attempt %d of %d failed (%s); retrying in %.2f s",
                 ctx->job_id, c->what, attempt, MAX_ATTEMPTS, why, wait);
        metrics_provider_retrying();
        if (!wait_with_heartbeat(c, wait)) {
            snprintf(res->error, sizeof(res->error), "%s", MSG_INTERRUPTED);
            log_info("job %" PRId64 ": openai %s stopped: the job is no longer ours",
                     ctx->job_id, c->what);
            goto out;
        }
    }
out:
    curl_slist_free_all(headers);
    if (own)
        curl_easy_cleanup(own);
    return rc;
}

void openai_call_init(call_t *c, gen_ctx_t *ctx, const char *what, size_t cap)
{
    memset(c, 0, sizeof(*c));
    c->ctx = ctx;
    c->what = what;
    buf_init(&c->body);
    c->cap = c->wire_cap = cap;
    c->last_beat = mono_s();
    c->retry_after = -1;
}
