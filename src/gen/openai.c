/* openai.c — the OpenAI-compatible provider: text through Chat Completions, images
 * through Images Generations, against any server chosen by base URL (OpenAI, Ollama,
 * LocalAI, vLLM, llama.cpp's server).
 *
 * How the parts fit:
 *   provider_openai_new   checks the settings once and keeps them in openai_priv_t.
 *   worker_new/free       one libcurl easy handle per worker thread, reused, so the
 *                         connection to the provider stays open between jobs.
 *   openai_post_json      one logical call with its retries (openai_call.c).
 *   openai_text           a streamed chat call ("stream": true): libcurl's write
 *                         callback feeds the Server-Sent Events to chat_stream.c, which
 *                         strips reasoning and hands each piece on as it arrives; a
 *                         server that answers plain JSON goes through the same path.
 *                         A server that refuses stream_options gets the call again
 *                         without it, and this process leaves it out from then on.
 *   openai_image          build the JSON request, parse the answer, check the PNG.
 *
 * Errors for the user are fixed sentences chosen here; the provider's body, the key
 * and the URL never reach res->error or the log. */
#include "gen/openai_int.h"

#include "core/log.h"
#include "obs/metrics.h"
#include "gen/png.h"
#include "gen/templates.h"

#include <inttypes.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}
/* Encodes a JSON request, or NULL (e.g. text that is not valid UTF-8). */
static char *dump_request(json_t *req)
{
    char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    return s;
}

/* ---- text ---- */

static char *chat_request(const openai_priv_t *op, const gen_text_req_t *req,
                          bool stream_options)
{
    const template_t *t = template_get(req->template_id);
    const char *instruction = req->instruction ? req->instruction : t ? t->instruction : NULL;
    if (!instruction || !req->prompt)
        return NULL;
    json_t *j = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:f, s:b}", "model", op->text_model,
                          "messages", "role", "system", "content", instruction, "role",
                          "user", "content", req->prompt, "temperature", req->creativity,
                          "stream", 1);
    if (j && stream_options)
        json_object_set_new(j, "stream_options", json_pack("{s:b}", "include_usage", 1));
    if (j && op->max_tokens > 0)
        json_object_set_new(j, "max_tokens", json_integer(op->max_tokens));
    return dump_request(j);
}

/* A piece of text from chat_stream: on to whoever listens. */
static void chat_piece(void *arg, const char *piece, size_t len)
{
    call_t *c = arg;
    c->passed += len;
    c->ctx->on_text(c->ctx, piece, len);
}

/* A 2xx answer of a chat call has been read: was it whole, and is there text? */
static outcome_t chat_finish(call_t *c, char *msg, size_t msglen)
{
    chat_stream_t *cs = c->cs;
    if (c->sse) {
        if (!chat_stream_complete(cs)) { /* the stream ended without [DONE] or a finish */
            snprintf(msg, msglen, "%s", c->passed > 0 ? MSG_CUT : MSG_UNREACHABLE);
            return OUT_RETRY;
        }
        if (chat_stream_end(cs) != 0)
            return openai_stream_outcome(c, msg, msglen);
    } else if (chat_stream_body(cs, buf_cstr(&c->body), c->body.len) != 0) {
        return openai_stream_outcome(c, msg, msglen); /* a server that ignored "stream" */
    }
    if (cs->text->len == 0) {
        snprintf(msg, msglen, "%s", MSG_NO_TEXT);
        return OUT_FAIL;
    }
    return OUT_DONE;
}

static int openai_text(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                       gen_result_t *res)
{
    openai_priv_t *op = p->priv;
    call_t c;
    openai_call_init(&c, ctx, "chat", CHAT_BODY_CAP);
    c.wire_cap = CHAT_STREAM_CAP;
    c.idle_s = op->idle_s;
    c.finish = chat_finish;
    chat_stream_t cs;
    chat_stream_init(&cs, &res->text, CHAT_BODY_CAP,
                     __atomic_load_n(&op->hold_untagged, __ATOMIC_RELAXED),
                     ctx->on_text ? chat_piece : NULL, &c);
    c.cs = &cs;
    int rc = -1;
    char *json = NULL;
    for (int round = 0; round < 2; round++) {
        c.sent_stream_options = !__atomic_load_n(&op->no_stream_options, __ATOMIC_RELAXED);
        free(json);
        json = chat_request(op, req, c.sent_stream_options);
        if (!json) {
            snprintf(res->error, sizeof(res->error), "%s", MSG_ENCODE);
            goto out;
        }
        rc = openai_post_json(op, ctx, op->chat_url, json, &c, res);
        if (rc != 1)
            break;
        log_warn("job %" PRId64 ": openai chat: the server refuses stream_options; sending "
                 "without it from now on", ctx->job_id);
        __atomic_store_n(&op->no_stream_options, true, __ATOMIC_RELAXED);
        rc = -1;
    }
    if (cs.saw_orphan && !__atomic_load_n(&op->hold_untagged, __ATOMIC_RELAXED)) {
        log_warn("job %" PRId64 ": openai chat: the model starts its reasoning without "
                 "<think>; holding its text back until </think> from now on", ctx->job_id);
        __atomic_store_n(&op->hold_untagged, true, __ATOMIC_RELAXED);
    }
    if (rc != 0) {
        if (cs.error == CS_ERR_INVALID)
            log_warn("job %" PRId64 ": openai chat: unusable answer", ctx->job_id);
        buf_reset(&res->text);
        goto out;
    }
    res->truncated = cs.truncated;
    res->prompt_tokens = cs.prompt_tokens;
    res->completion_tokens = cs.completion_tokens;
    metrics_tokens(res->prompt_tokens, res->completion_tokens);
out:
    chat_stream_free(&cs);
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
    openai_call_init(&c, ctx, "images", IMAGE_BODY_CAP);
    int rc = -1;
    char *json = image_request(op, req);
    if (!json) {
        snprintf(res->error, sizeof(res->error), "%s", MSG_ENCODE);
        goto out;
    }
    if (openai_post_json(op, ctx, op->images_url, json, &c, res) != 0)
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
    op->max_tokens = cfg->max_output_tokens;
    /* (0 when the settings did not say, e.g. a cfg_t built by hand) */
    double idle = cfg->provider_idle_timeout > 0 ? cfg->provider_idle_timeout : IDLE_TIMEOUT_S;
    op->idle_s = idle < cfg->provider_timeout ? idle : cfg->provider_timeout;

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
