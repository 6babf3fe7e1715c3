/* openai.c — the OpenAI-compatible provider: text through Chat Completions, images
 * through Images Generations, against any server chosen by base URL (OpenAI, Ollama,
 * LocalAI, vLLM, llama.cpp's server).
 *
 * How the parts fit:
 *   provider_openai_new   checks the settings once and keeps them in openai_priv_t.
 *   worker_new/free       one libcurl easy handle per worker thread, reused, so the
 *                         connection to the provider stays open between jobs.
 *   post_json             one logical call: up to MAX_ATTEMPTS HTTP attempts. Each
 *                         attempt (attempt_once) ends in an outcome: done, retry or
 *                         fail; between attempts we wait (Retry-After or capped
 *                         exponential backoff with full jitter), heartbeating.
 *   openai_text/_image    build the JSON request, parse the answer, check the PNG.
 *
 * Errors for the user are fixed sentences chosen here; the provider's body, the key
 * and the URL never reach res->error or the log. */
#include "gen/provider.h"

#include "core/log.h"
#include "gen/png.h"
#include "gen/templates.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_ATTEMPTS 5
#define BACKOFF_BASE_S 0.5
#define BACKOFF_CAP_S 8.0
#define RETRY_AFTER_CAP_S 30.0
#define CONNECT_TIMEOUT_CAP_MS 10000L
#define CHAT_BODY_CAP ((size_t)4 << 20)
#define IMAGE_BODY_CAP ((size_t)32 << 20)
#define HEARTBEAT_EVERY_S 1.0

#define MSG_INTERRUPTED "Generation was interrupted."
#define MSG_BUSY "The AI provider is busy (rate limited); please try again later."
#define MSG_QUOTA "The AI provider account has no quota left."
#define MSG_TIMEOUT "The AI provider did not answer in time."
#define MSG_UNREACHABLE "The AI provider could not be reached."
#define MSG_INVALID "The AI provider returned an invalid response."
#define MSG_TOO_LARGE "The AI provider returned an answer that is too large."
#define MSG_TLS "The AI provider's TLS certificate could not be verified."
#define MSG_REDIRECT "The AI provider answered with a redirect; check the base URL."
#define MSG_KEY "The AI provider rejected the API key."
#define MSG_POLICY "The AI provider refused this request under its content policy."
#define MSG_NO_TEXT "The AI provider returned no text."
#define MSG_URL_ONLY                                                                           \
    "The AI provider returned a link instead of the picture; it must support base64 images."
#define MSG_BAD_PNG "The AI provider returned a picture that is not a valid PNG."
#define MSG_ENCODE "The request could not be encoded for the AI provider."

typedef struct {
    char *chat_url;
    char *images_url;
    char *auth_header; /* "Authorization: Bearer KEY", or NULL when there is no key */
    char *text_model;
    char *image_model;
    long timeout_ms;
    long connect_timeout_ms;
    long max_tokens; /* <= 0: not sent */
} openai_priv_t;

typedef struct {
    CURL *curl;
} openai_worker_t;

/* The state of one logical call, shared with the libcurl callbacks. */
typedef struct {
    gen_ctx_t *ctx;
    const char *what; /* "chat" or "images", for log lines */
    buf_t body;
    size_t cap;
    bool too_large;
    bool stopped;       /* the heartbeat said stop */
    double last_beat;   /* mono_s() of the last heartbeat (or of the start) */
    double retry_after; /* seconds the server asked for, < 0 when it did not */
} call_t;

typedef enum { OUT_DONE, OUT_RETRY, OUT_FAIL } outcome_t;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

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
    if (len > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0)
        parse_retry_after(c, data + sizeof(name) - 1, len - (sizeof(name) - 1));
    return len;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    return call_beat(arg, false) ? 0 : 1;
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
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->cap);
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

/* Classifies a transfer that did not complete. */
static outcome_t curl_outcome(const call_t *c, CURLcode rc, char *msg, size_t msglen)
{
    const char *m = MSG_UNREACHABLE;
    outcome_t out = is_retryable_curl(rc) ? OUT_RETRY : OUT_FAIL;
    if (c->stopped && rc == CURLE_ABORTED_BY_CALLBACK)
        m = MSG_INTERRUPTED;
    else if ((rc == CURLE_WRITE_ERROR && c->too_large) || rc == CURLE_FILESIZE_EXCEEDED)
        m = MSG_TOO_LARGE;
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        m = MSG_TIMEOUT;
    else if (rc == CURLE_PEER_FAILED_VERIFICATION)
        m = MSG_TLS;
    snprintf(msg, msglen, "%s", m);
    return out;
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
static outcome_t status_outcome(const call_t *c, long status, char *msg, size_t msglen)
{
    if (status >= 200 && status < 300)
        return OUT_DONE;
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
    attempt_setup(h, op, url, headers, json, c);
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "curl error %d (%s)", (int)rc, curl_easy_strerror(rc));
        return curl_outcome(c, rc, msg, msglen);
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    snprintf(why, whylen, "HTTP %ld", status);
    return status_outcome(c, status, msg, msglen);
}

/* ---- one logical call, with retries ---- */

static struct curl_slist *request_headers(const openai_priv_t *op)
{
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json");
    h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
    if (op->auth_header)
        h = curl_slist_append(h, op->auth_header);
    return h;
}

/* POSTs json to url. On success returns 0 with the 2xx body in c->body; otherwise
 * -1 with res->error set. */
static int post_json(const openai_priv_t *op, gen_ctx_t *ctx, const char *url,
                     const char *json, call_t *c, gen_result_t *res)
{
    openai_worker_t *w = ctx->worker_state;
    CURL *own = NULL, *h = w ? w->curl : NULL;
    if (!h)
        h = own = curl_easy_init();
    struct curl_slist *headers = request_headers(op);
    int rc = -1;
    if (!h || !headers) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_UNREACHABLE);
        goto out;
    }
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        char why[160];
        outcome_t o = attempt_once(h, op, url, headers, json, c, res->error,
                                   sizeof(res->error), why, sizeof(why));
        if (o == OUT_DONE) {
            res->error[0] = '\0';
            rc = 0;
            goto out;
        }
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

static void call_init(call_t *c, gen_ctx_t *ctx, const char *what, size_t cap)
{
    c->ctx = ctx;
    c->what = what;
    buf_init(&c->body);
    c->cap = cap;
    c->too_large = false;
    c->stopped = false;
    c->last_beat = mono_s();
    c->retry_after = -1;
}

/* Encodes a JSON request, or NULL (e.g. text that is not valid UTF-8). */
static char *dump_request(json_t *req)
{
    char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    return s;
}

/* ---- text ---- */

static char *chat_request(const openai_priv_t *op, const gen_text_req_t *req)
{
    const template_t *t = template_get(req->template_id);
    if (!t || !req->prompt)
        return NULL;
    json_t *j = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:f}", "model", op->text_model,
                          "messages", "role", "system", "content", t->instruction, "role",
                          "user", "content", req->prompt, "temperature", req->creativity);
    if (j && op->max_tokens > 0)
        json_object_set_new(j, "max_tokens", json_integer(op->max_tokens));
    return dump_request(j);
}

/* choices[0].message.content, appended to res->text. */
static int chat_parse(const buf_t *body, gen_result_t *res)
{
    json_t *root = json_loadb(buf_cstr(body), body->len, 0, NULL);
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    json_t *content = json_object_get(json_object_get(choice, "message"), "content");
    int rc = -1;
    if (!json_is_string(content))
        snprintf(res->error, sizeof(res->error), "%s", MSG_INVALID);
    else if (json_string_length(content) == 0)
        snprintf(res->error, sizeof(res->error), "%s", MSG_NO_TEXT);
    else {
        buf_append(&res->text, json_string_value(content), json_string_length(content));
        rc = 0;
    }
    json_decref(root);
    return rc;
}

static int openai_text(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                       gen_result_t *res)
{
    const openai_priv_t *op = p->priv;
    call_t c;
    call_init(&c, ctx, "chat", CHAT_BODY_CAP);
    int rc = -1;
    char *json = chat_request(op, req);
    if (!json) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_ENCODE);
        goto out;
    }
    if (post_json(op, ctx, op->chat_url, json, &c, res) != 0)
        goto out;
    rc = chat_parse(&c.body, res);
    if (rc != 0)
        log_warn("job %" PRId64 ": openai chat: unusable answer (%zu bytes)", ctx->job_id,
                 c.body.len);
out:
    free(json);
    buf_free(&c.body);
    return rc;
}

/* ---- images ---- */

static char *image_request(const openai_priv_t *op, const gen_image_req_t *req)
{
    char size[32];
    if (!req->description)
        return NULL;
    snprintf(size, sizeof(size), "%dx%d", req->width, req->height);
    json_t *j = json_pack("{s:s, s:s, s:i, s:s, s:s}", "model", op->image_model, "prompt",
                          req->description, "n", 1, "size", size, "response_format",
                          "b64_json");
    if (j && req->style)
        json_object_set_new(j, "style", json_string(req->style));
    return dump_request(j);
}

/* Decodes base64 (OpenSSL's EVP decoder: padding and line breaks allowed) into out. */
static int b64_decode(const char *in, size_t n, buf_t *out)
{
    if (n > (size_t)IMAGE_BODY_CAP)
        return -1;
    EVP_ENCODE_CTX *e = EVP_ENCODE_CTX_new();
    if (!e)
        return -1;
    buf_reset(out);
    buf_reserve(out, (n / 4 + 1) * 3 + 64);
    int len = 0, tail = 0, rc = -1;
    EVP_DecodeInit(e);
    if (EVP_DecodeUpdate(e, (unsigned char *)out->data, &len, (const unsigned char *)in,
                         (int)n) < 0)
        goto out;
    if (EVP_DecodeFinal(e, (unsigned char *)out->data + len, &tail) < 0)
        goto out;
    out->len = (size_t)len + (size_t)tail;
    out->data[out->len] = '\0';
    rc = 0;
out:
    EVP_ENCODE_CTX_free(e);
    return rc;
}

/* Checks the decoded picture: a valid PNG of exactly the requested size. */
static int image_check(const gen_image_req_t *req, gen_result_t *res)
{
    int w = 0, h = 0;
    if (!png_inspect(res->png.data, res->png.len, &w, &h)) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_BAD_PNG);
        return -1;
    }
    if (w != req->width || h != req->height) {
        snprintf(res->error, sizeof(res->error),
                 "The AI provider returned a picture of the wrong size (%dx%d instead of "
                 "%dx%d).",
                 w, h, req->width, req->height);
        return -1;
    }
    return 0;
}

/* data[0].b64_json into res->png (checked), data[0].revised_prompt if a string. */
static int image_parse(const gen_image_req_t *req, const buf_t *body, gen_result_t *res)
{
    json_t *root = json_loadb(buf_cstr(body), body->len, 0, NULL);
    json_t *item = json_array_get(json_object_get(root, "data"), 0);
    json_t *b64 = json_object_get(item, "b64_json");
    const char *revised = json_string_value(json_object_get(item, "revised_prompt"));
    int rc = -1;
    if (!json_is_string(b64)) {
        bool url_only = json_is_string(json_object_get(item, "url"));
        snprintf(res->error, sizeof(res->error), "%s", url_only ? MSG_URL_ONLY : MSG_INVALID);
        goto out;
    }
    if (b64_decode(json_string_value(b64), json_string_length(b64), &res->png) != 0) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_BAD_PNG);
        goto out;
    }
    if (image_check(req, res) != 0)
        goto out;
    if (revised) {
        free(res->revised_prompt);
        res->revised_prompt = xstrdup(revised);
    }
    rc = 0;
out:
    if (rc != 0)
        buf_reset(&res->png);
    json_decref(root);
    return rc;
}

static int openai_image(const provider_t *p, gen_ctx_t *ctx, const gen_image_req_t *req,
                        gen_result_t *res)
{
    const openai_priv_t *op = p->priv;
    call_t c;
    call_init(&c, ctx, "images", IMAGE_BODY_CAP);
    int rc = -1;
    char *json = image_request(op, req);
    if (!json) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_ENCODE);
        goto out;
    }
    if (post_json(op, ctx, op->images_url, json, &c, res) != 0)
        goto out;
    rc = image_parse(req, &c.body, res);
    if (rc != 0)
        log_warn("job %" PRId64 ": openai images: unusable answer (%zu bytes): %s",
                 ctx->job_id, c.body.len, res->error);
out:
    free(json);
    buf_free(&c.body);
    return rc;
}

/* ---- workers and set-up ---- */

static void *openai_worker_new(const provider_t *p)
{
    openai_worker_t *w = xcalloc(1, sizeof(*w));
    w->curl = curl_easy_init(); /* NULL is survivable: each call then makes its own */
    return w;
}

static void openai_worker_free(const provider_t *p, void *state)
{
    openai_worker_t *w = state;
    if (!w)
        return;
    if (w->curl)
        curl_easy_cleanup(w->curl);
    free(w);
}

static void free_secret(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

static void openai_destroy(provider_t *p)
{
    openai_priv_t *op = p->priv;
    free(op->chat_url);
    free(op->images_url);
    free_secret(op->auth_header);
    free(op->text_model);
    free(op->image_model);
    free(op);
    free(p);
}

static bool has_control_chars(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

/* Checks the settings; 0, or -1 with err (which never holds the key or the URL). */
static int check_settings(const cfg_t *cfg, char *err, size_t errlen)
{
    const char *base = cfg->openai_base_url ? cfg->openai_base_url : "";
    const char *key = cfg->openai_api_key ? cfg->openai_api_key : "";
    if (strncasecmp(base, "http://", 7) != 0 && strncasecmp(base, "https://", 8) != 0)
        snprintf(err, errlen, "openai-base-url must start with http:// or https://");
    else if (has_control_chars(base) || strchr(base, ' '))
        snprintf(err, errlen, "openai-base-url contains spaces or control characters");
    else if (has_control_chars(key))
        snprintf(err, errlen, "openai-api-key contains control characters");
    else if (!cfg->text_model || !cfg->text_model[0])
        snprintf(err, errlen, "the openai provider needs a text model (--text-model)");
    else if (!cfg->image_model || !cfg->image_model[0])
        snprintf(err, errlen, "the openai provider needs an image model (--image-model)");
    else if (!(cfg->provider_timeout > 0))
        snprintf(err, errlen, "provider-timeout must be a positive number of seconds");
    else
        return 0;
    return -1;
}

static char *endpoint_url(const char *base, const char *path)
{
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    buf_t b;
    buf_init(&b);
    buf_append(&b, base, n);
    buf_puts(&b, path);
    return buf_steal(&b);
}

provider_t *provider_openai_new(const cfg_t *cfg, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK) {
        snprintf(err, errlen, "libcurl could not be initialised");
        return NULL;
    }
    if (check_settings(cfg, err, errlen) != 0)
        return NULL;
    openai_priv_t *op = xcalloc(1, sizeof(*op));
    op->chat_url = endpoint_url(cfg->openai_base_url, "/chat/completions");
    op->images_url = endpoint_url(cfg->openai_base_url, "/images/generations");
    if (cfg->openai_api_key && cfg->openai_api_key[0]) {
        buf_t b;
        buf_init(&b);
        buf_printf(&b, "Authorization: Bearer %s", cfg->openai_api_key);
        op->auth_header = buf_steal(&b);
    }
    op->text_model = xstrdup(cfg->text_model);
    op->image_model = xstrdup(cfg->image_model);
    double ms = cfg->provider_timeout * 1000.0;
    op->timeout_ms = ms > 86400000.0 ? 86400000L : (ms < 1 ? 1 : (long)ms);
    op->connect_timeout_ms =
        op->timeout_ms < CONNECT_TIMEOUT_CAP_MS ? op->timeout_ms : CONNECT_TIMEOUT_CAP_MS;
    op->max_tokens = cfg->max_tokens;

    provider_t *p = xcalloc(1, sizeof(*p));
    p->name = "openai";
    p->worker_new = openai_worker_new;
    p->worker_free = openai_worker_free;
    p->text = openai_text;
    p->image = openai_image;
    p->destroy = openai_destroy;
    p->priv = op;
    return p;
}
