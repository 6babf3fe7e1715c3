/* test_openai.c — the OpenAI-compatible provider (src/gen/openai.c) against
 * tests/fake_openai.py, started as a child process.
 *
 * Each case resets the fake, scripts its behaviours, calls the provider's text or
 * image function directly, then checks both sides: what the provider sent (read back
 * from the fake's request log) and what it returned. Every error message is checked
 * to hold neither the key nor the fake's body text, and the provider's log lines
 * (standard error, captured to a file) are checked the same way at the end.
 * Run from the repository root (as `make check` does). */
#include "core/utf8.h"
#include "core/util.h"
#include "gen/png.h"
#include "gen/prompt.h"
#include "gen/provider.h"
#include "gen/templates.h"
#include "test.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAKE_SCRIPT "tests/fake_openai.py"
#define KEY "sk-test-SECRET123"
#define TEXT_MODEL "test-text-model"
#define IMAGE_MODEL "dall-e-3"
#define MAX_TOKENS 321
#define JOB_ID 4242

static pid_t fake_pid = -1;
static FILE *fake_out;
static int fake_port;
static CURL *ctl;
static char base_url[128];

/* ---- the fake server: start, stop, control ---- */

static void fake_stop(void)
{
    if (fake_pid > 0) {
        kill(fake_pid, SIGTERM);
        waitpid(fake_pid, NULL, 0);
        fake_pid = -1;
    }
    if (fake_out) {
        fclose(fake_out);
        fake_out = NULL;
    }
}

static int fake_start(void)
{
    int fds[2];
    if (access(FAKE_SCRIPT, R_OK) != 0 || pipe(fds) != 0) {
        fprintf(stderr, "test_openai: cannot find %s (run from the repository root)\n",
                FAKE_SCRIPT);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the fake dies with us, even on a crash */
        if (getppid() != parent)
            _exit(1);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execlp("python3", "python3", FAKE_SCRIPT, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    fake_pid = pid;
    atexit(fake_stop);
    fake_out = fdopen(fds[0], "r");
    char line[32];
    if (!fake_out || !fgets(line, sizeof(line), fake_out))
        return -1;
    fake_port = atoi(line);
    snprintf(base_url, sizeof(base_url), "http://127.0.0.1:%d/v1", fake_port);
    return fake_port > 0 ? 0 : -1;
}

static size_t ctl_write(char *data, size_t size, size_t n, void *arg)
{
    buf_append(arg, data, size * n);
    return size * n;
}

/* One control request; returns the parsed answer (or NULL). */
static json_t *ctl_call(const char *method, const char *path, const char *body)
{
    char url[256];
    buf_t out;
    buf_init(&out);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", fake_port, path);
    curl_easy_reset(ctl);
    curl_easy_setopt(ctl, CURLOPT_URL, url);
    curl_easy_setopt(ctl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(ctl, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(ctl, CURLOPT_WRITEFUNCTION, ctl_write);
    curl_easy_setopt(ctl, CURLOPT_WRITEDATA, &out);
    if (strcmp(method, "POST") == 0)
        curl_easy_setopt(ctl, CURLOPT_POSTFIELDS, body ? body : "{}");
    CURLcode rc = curl_easy_perform(ctl);
    json_t *j = rc == CURLE_OK ? json_loadb(buf_cstr(&out), out.len, 0, NULL) : NULL;
    CHECK_MSG(j != NULL, "control %s %s failed: %s", method, path, curl_easy_strerror(rc));
    buf_free(&out);
    return j;
}

static void fake_reset_and_script(const char *script)
{
    json_decref(ctl_call("POST", "/_control/reset", NULL));
    if (script)
        json_decref(ctl_call("POST", "/_control/script", script));
}

/* The requests the fake received since the last reset (a JSON array). */
static json_t *fake_requests(void)
{
    json_t *j = ctl_call("GET", "/_control/requests", NULL);
    return j ? j : json_array();
}

static const char *req_header(json_t *reqs, size_t i, const char *name)
{
    return json_string_value(
        json_object_get(json_object_get(json_array_get(reqs, i), "headers"), name));
}

static json_t *req_body(json_t *reqs, size_t i)
{
    return json_object_get(json_array_get(reqs, i), "json");
}

static const char *body_str(json_t *body, const char *key)
{
    return json_string_value(json_object_get(body, key));
}

/* ---- heartbeats, providers, calls ---- */

typedef struct {
    gen_ctx_t ctx;
    int beats;
    int false_from; /* the heartbeat returns false from this call on; 0 = never */
    buf_t pieces;   /* what on_text received, joined (when listening) */
    int npieces;
    int bad_pieces; /* pieces that were empty or not whole UTF-8 */
} hb_t;

static void on_text_fn(gen_ctx_t *ctx, const char *piece, size_t len)
{
    hb_t *h = ctx->on_text_arg;
    if (len == 0 || utf8_count(piece, len) < 0)
        h->bad_pieces++;
    buf_append(&h->pieces, piece, len);
    h->npieces++;
}

static bool hb_fn(gen_ctx_t *ctx)
{
    hb_t *h = ctx->heartbeat_arg;
    h->beats++;
    return h->false_from <= 0 || h->beats < h->false_from;
}

typedef struct {
    provider_t *p;
    void *worker;
} prov_t;

static double idle_timeout; /* 0: the default */

static prov_t prov_make_tokens(const char *base, const char *key, double timeout,
                               long max_tokens)
{
    cfg_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.provider = "openai";
    cfg.openai_base_url = (char *)base;
    cfg.openai_api_key = (char *)key;
    cfg.text_model = TEXT_MODEL;
    cfg.image_model = IMAGE_MODEL;
    cfg.provider_timeout = timeout;
    cfg.max_output_tokens = max_tokens;
    cfg.provider_idle_timeout = idle_timeout;
    char err[256] = "";
    prov_t v = {provider_openai_new(&cfg, err, sizeof(err)), NULL};
    CHECK_MSG(v.p != NULL, "provider_openai_new: %s", err);
    if (v.p)
        v.worker = v.p->worker_new(v.p);
    return v;
}

static prov_t prov_make(const char *base, const char *key, double timeout)
{
    return prov_make_tokens(base, key, timeout, MAX_TOKENS);
}

static void prov_free(prov_t *v)
{
    if (!v->p)
        return;
    v->p->worker_free(v->p, v->worker);
    v->p->destroy(v->p);
    v->p = NULL;
}

static void hb_init(hb_t *h, const prov_t *v, int false_from)
{
    memset(h, 0, sizeof(*h));
    h->ctx.job_id = JOB_ID;
    h->ctx.worker_state = v->worker;
    h->ctx.heartbeat = hb_fn;
    h->ctx.heartbeat_arg = h;
    h->false_from = false_from;
    buf_init(&h->pieces);
}

/* Also listens to the text pieces (ctx.on_text), as a streaming client does. */
static void hb_listen(hb_t *h)
{
    h->ctx.on_text = on_text_fn;
    h->ctx.on_text_arg = h;
}

static void hb_free(hb_t *h)
{
    buf_free(&h->pieces);
}

static double elapsed_since(double t0, const char *what)
{
    double e = mono_s() - t0;
    printf("  %-46s %6.2f s\n", what, e);
    return e;
}

static int call_text(const prov_t *v, hb_t *h, int tpl, const char *prompt, double creativity,
                     gen_result_t *res)
{
    gen_text_req_t req = {.template_id = tpl, .prompt = prompt, .creativity = creativity};
    gen_result_init(res);
    return v->p->text(v->p, &h->ctx, &req, res);
}

static int call_image(const prov_t *v, hb_t *h, const char *desc, int w, int hgt,
                      const char *style, gen_result_t *res)
{
    gen_image_req_t req = {.description = desc, .width = w, .height = hgt, .style = style};
    gen_result_init(res);
    return v->p->image(v->p, &h->ctx, &req, res);
}

/* An error message fit for users: set, short, and free of secrets and bodies. */
static void check_user_error(const char *msg, const char *must_contain)
{
    CHECK_MSG(msg[0] != '\0', "error message is empty");
    CHECK_MSG(strstr(msg, "SECRET123") == NULL, "key in error: %s", msg);
    CHECK_MSG(strstr(msg, "FAKEBODY") == NULL, "provider body in error: %s", msg);
    CHECK_MSG(strstr(msg, "CREDPASS") == NULL, "URL credentials in error: %s", msg);
    CHECK_MSG(strstr(msg, "127.0.0.1") == NULL, "URL in error: %s", msg);
    CHECK_MSG(strstr(msg, must_contain) != NULL, "error \"%s\" lacks \"%s\"", msg,
              must_contain);
}

/* Every chat request the fake got carries the full, identical request. */
static void check_chat_requests(json_t *reqs, int tpl, const char *prompt, double temp,
                                const char *auth)
{
    const template_t *t = template_get(tpl);
    CHECK(t != NULL);
    for (size_t i = 0; t && i < json_array_size(reqs); i++) {
        json_t *b = req_body(reqs, i);
        json_t *msgs = json_object_get(b, "messages");
        json_t *sys = json_array_get(msgs, 0), *usr = json_array_get(msgs, 1);
        CHECK_STR(json_string_value(json_object_get(json_array_get(reqs, i), "path")),
                  "/v1/chat/completions");
        CHECK_STR(body_str(b, "model"), TEXT_MODEL);
        CHECK_INT(json_array_size(msgs), 2);
        CHECK_STR(body_str(sys, "role"), "system");
        /* the system message is gen/prompt.c's, from the template's instruction */
        gen_text_req_t pr = {.template_id = tpl, .prompt = prompt, .creativity = temp};
        buf_t want_sys, want_user;
        buf_init(&want_sys);
        buf_init(&want_user);
        prompt_compose(&pr, t->instruction, &want_sys, &want_user);
        CHECK_STR(body_str(sys, "content"), buf_cstr(&want_sys));
        CHECK(strncmp(body_str(sys, "content") ? body_str(sys, "content") : "", t->instruction,
                      strlen(t->instruction)) == 0);
        buf_free(&want_sys);
        buf_free(&want_user);
        CHECK_STR(body_str(usr, "role"), "user");
        CHECK_STR(body_str(usr, "content"), prompt);
        CHECK(json_is_number(json_object_get(b, "temperature")));
        CHECK(json_number_value(json_object_get(b, "temperature")) == temp);
        CHECK_INT(json_integer_value(json_object_get(b, "max_tokens")), MAX_TOKENS);
        CHECK_STR(req_header(reqs, i, "content-type"), "application/json");
        if (auth)
            CHECK_STR(req_header(reqs, i, "authorization"), auth);
        else
            CHECK_MSG(req_header(reqs, i, "authorization") == NULL,
                      "an Authorization header was sent without a key");
    }
}

static void check_image_requests(json_t *reqs, const char *desc, const char *size,
                                 const char *style)
{
    for (size_t i = 0; i < json_array_size(reqs); i++) {
        json_t *b = req_body(reqs, i);
        CHECK_STR(json_string_value(json_object_get(json_array_get(reqs, i), "path")),
                  "/v1/images/generations");
        CHECK_STR(body_str(b, "model"), IMAGE_MODEL);
        CHECK_STR(body_str(b, "prompt"), desc);
        CHECK_INT(json_integer_value(json_object_get(b, "n")), 1);
        CHECK_STR(body_str(b, "size"), size);
        CHECK_STR(body_str(b, "response_format"), "b64_json");
        if (style)
            CHECK_STR(body_str(b, "style"), style);
        else
            CHECK_MSG(json_object_get(b, "style") == NULL, "style sent though not given");
        CHECK_STR(req_header(reqs, i, "authorization"), "Bearer " KEY);
    }
}

/* Scripts the fake, runs one text call, checks the failure and the request count. */
static void text_fails(const prov_t *v, const char *script, int want_requests,
                       const char *must_contain, const char *label)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    fake_reset_and_script(script);
    double t0 = mono_s();
    int rc = call_text(v, &h, 2, "A failing prompt", 0.5, &res);
    elapsed_since(t0, label);
    CHECK_INT(rc, -1);
    check_user_error(res.error, must_contain);
    CHECK_INT(res.text.len, 0);
    json_t *reqs = fake_requests();
    CHECK_MSG((int)json_array_size(reqs) == want_requests, "%s: %zu requests, want %d", label,
              json_array_size(reqs), want_requests);
    check_chat_requests(reqs, 2, "A failing prompt", 0.5, "Bearer " KEY);
    json_decref(reqs);
    gen_result_free(&res);
}

static void image_fails(const prov_t *v, const char *script, int want_requests,
                        const char *must_contain, const char *label)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    fake_reset_and_script(script);
    double t0 = mono_s();
    int rc = call_image(v, &h, "A failing picture", 1024, 1024, NULL, &res);
    elapsed_since(t0, label);
    CHECK_INT(rc, -1);
    check_user_error(res.error, must_contain);
    CHECK_INT(res.png.len, 0);
    CHECK(res.revised_prompt == NULL);
    json_t *reqs = fake_requests();
    CHECK_MSG((int)json_array_size(reqs) == want_requests, "%s: %zu requests, want %d", label,
              json_array_size(reqs), want_requests);
    check_image_requests(reqs, "A failing picture", "1024x1024", NULL);
    json_decref(reqs);
    gen_result_free(&res);
}

/* ---- cases ---- */

static void test_settings(void)
{
    cfg_t cfg;
    char err[256];
    memset(&cfg, 0, sizeof(cfg));
    cfg.provider = "openai";
    cfg.openai_api_key = KEY;
    cfg.text_model = TEXT_MODEL;
    cfg.image_model = IMAGE_MODEL;
    cfg.provider_timeout = 2;
    const char *bad[] = {"ftp://127.0.0.1/v1", "", "127.0.0.1:8080/v1", "file:///etc/passwd"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        cfg.openai_base_url = (char *)bad[i];
        err[0] = '\0';
        provider_t *p = provider_openai_new(&cfg, err, sizeof(err));
        CHECK_MSG(p == NULL, "base URL \"%s\" accepted", bad[i]);
        CHECK(strstr(err, "http://") != NULL);
        CHECK(strstr(err, "SECRET123") == NULL);
    }
    cfg.openai_base_url = base_url;
    cfg.openai_api_key = "sk-test-SECRET123\r\nX-Injected: 1";
    err[0] = '\0';
    CHECK(provider_openai_new(&cfg, err, sizeof(err)) == NULL);
    CHECK(err[0] != '\0' && strstr(err, "SECRET123") == NULL);
    cfg.openai_api_key = KEY;
    cfg.text_model = "";
    CHECK(provider_openai_new(&cfg, err, sizeof(err)) == NULL);
    cfg.text_model = TEXT_MODEL;
    provider_t *p = provider_openai_new(&cfg, err, sizeof(err));
    CHECK(p != NULL);
    if (p) {
        CHECK_STR(p->name, "openai");
        p->destroy(p);
    }
}

static void test_text_ok(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    fake_reset_and_script(NULL);
    double t0 = mono_s();
    int rc = call_text(v, &h, 7, "Write about otters and rivers", 0.75, &res);
    elapsed_since(t0, "text ok");
    CHECK_INT(rc, 0);
    CHECK_STR(buf_cstr(&res.text), "Echo: Write about otters and rivers");
    CHECK_STR(res.error, "");
    gen_result_free(&res);

    rc = call_text(v, &h, 7, "Write about otters and rivers", 0.75, &res);
    CHECK_INT(rc, 0);
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 2);
    check_chat_requests(reqs, 7, "Write about otters and rivers", 0.75, "Bearer " KEY);
    /* the worker's handle keeps the connection: both came from the same client port */
    json_int_t port0 = json_integer_value(json_object_get(json_array_get(reqs, 0), "client_port"));
    json_int_t port1 = json_integer_value(json_object_get(json_array_get(reqs, 1), "client_port"));
    CHECK_MSG(port0 == port1 && port0 != 0, "connection not reused: ports %lld, %lld",
              (long long)port0, (long long)port1);
    json_decref(reqs);

    /* temperature 0 is sent as 0, not left out */
    fake_reset_and_script(NULL);
    CHECK_INT(call_text(v, &h, 1, "Zero", 0, &res), 0);
    gen_result_free(&res);
    reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 1);
    check_chat_requests(reqs, 1, "Zero", 0, "Bearer " KEY);
    json_decref(reqs);
}

static void test_image_ok(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    static const struct {
        int w, h;
        const char *size, *style;
    } cases[] = {
        {1792, 1024, "1792x1024", "vivid"},
        {1024, 1792, "1024x1792", NULL},
        {1024, 1024, "1024x1024", "natural"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        fake_reset_and_script(NULL);
        double t0 = mono_s();
        int rc = call_image(v, &h, "A lighthouse at dusk", cases[i].w, cases[i].h,
                            cases[i].style, &res);
        elapsed_since(t0, "image ok");
        CHECK_INT(rc, 0);
        int w = 0, hh = 0;
        CHECK(png_inspect(res.png.data, res.png.len, &w, &hh));
        CHECK_INT(w, cases[i].w);
        CHECK_INT(hh, cases[i].h);
        CHECK_STR(res.revised_prompt, "Revised: A lighthouse at dusk");
        gen_result_free(&res);
        json_t *reqs = fake_requests();
        CHECK_INT(json_array_size(reqs), 1);
        check_image_requests(reqs, "A lighthouse at dusk", cases[i].size, cases[i].style);
        json_decref(reqs);
    }
}

static void test_no_key(void)
{
    char base[160];
    snprintf(base, sizeof(base), "%s/", base_url); /* a trailing slash is fine too */
    prov_t v = prov_make(base, "", 2);
    if (!v.p)
        return;
    hb_t h;
    gen_result_t res;
    hb_init(&h, &v, 0);
    fake_reset_and_script(NULL);
    CHECK_INT(call_text(&v, &h, 3, "No key needed", 1, &res), 0);
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 1);
    check_chat_requests(reqs, 3, "No key needed", 1, NULL);
    json_decref(reqs);
    prov_free(&v);
}

static void test_rate_limited(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    fake_reset_and_script("{\"chat\": [{\"status\": 429, \"retry_after\": \"1\"}]}");
    double t0 = mono_s();
    int rc = call_text(v, &h, 4, "Busy then fine", 0.25, &res);
    double e = elapsed_since(t0, "429 Retry-After: 1, then ok");
    CHECK_INT(rc, 0);
    CHECK_STR(buf_cstr(&res.text), "Echo: Busy then fine");
    CHECK_MSG(e >= 1.0 && e < 1.0 + 3.0 * test_slow(), "waited %.2f s for Retry-After 1", e);
    CHECK_MSG(h.beats >= 1, "no heartbeat while waiting");
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 2);
    check_chat_requests(reqs, 4, "Busy then fine", 0.25, "Bearer " KEY);
    json_decref(reqs);

    /* Retry-After as an HTTP-date two seconds ahead */
    hb_init(&h, v, 0);
    fake_reset_and_script("{\"images\": [{\"status\": 429, \"retry_after_date\": 2}]}");
    t0 = mono_s();
    rc = call_image(v, &h, "Busy picture", 1024, 1024, NULL, &res);
    e = elapsed_since(t0, "429 Retry-After: <date +2 s>, then ok");
    CHECK_INT(rc, 0);
    CHECK_MSG(e >= 0.9 && e < 2.0 + 3.0 * test_slow(), "waited %.2f s for a Retry-After date 2 s ahead", e);
    gen_result_free(&res);
    reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 2);
    check_image_requests(reqs, "Busy picture", "1024x1024", NULL);
    json_decref(reqs);
}

static void test_not_retried(const prov_t *v)
{
    text_fails(v, "{\"chat\": [\"insufficient_quota\"]}", 1, "quota", "insufficient_quota");
    text_fails(v, "{\"chat\": [{\"status\": 429, \"code\": \"insufficient_quota\"}]}", 1,
               "quota", "429 error.code insufficient_quota");
    text_fails(v, "{\"chat\": [{\"status\": 429, \"type\": \"insufficient_quota\"}]}", 1,
               "quota", "429 error.type insufficient_quota");
    text_fails(v, "{\"chat\": [{\"status\": 400}]}", 1,
               "The AI provider refused the request (HTTP 400).", "400");
    text_fails(v, "{\"chat\": [{\"status\": 422}]}", 1, "(HTTP 422)", "422");
    text_fails(v, "{\"chat\": [{\"status\": 401}]}", 1, "rejected the API key", "401");
    text_fails(v, "{\"chat\": [{\"status\": 404}]}", 1, "does not offer", "404");
    image_fails(v, "{\"images\": [{\"status\": 400, \"code\": \"content_policy_violation\"}]}",
                1, "content policy", "400 content_policy_violation");
    text_fails(v, "{\"chat\": [\"redirect\"]}", 1, "redirect", "302 redirect (chat)");
    image_fails(v, "{\"images\": [\"redirect\"]}", 1, "redirect", "302 redirect (images)");
}

static void test_server_errors(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    const char *five = "{\"chat\": [{\"status\": 500}, {\"status\": 500}, {\"status\": 502},"
                       " {\"status\": 503}, {\"status\": 500}, {\"status\": 500}]}";
    fake_reset_and_script(five);
    double t0 = mono_s();
    int rc = call_text(v, &h, 5, "Always broken", 0.5, &res);
    double e = elapsed_since(t0, "persistent 5xx (5 attempts)");
    CHECK_INT(rc, -1);
    check_user_error(res.error, "(HTTP 500); please try again later.");
    CHECK_MSG(e < 7.5 + 1.0 * test_slow(), "backoff took %.2f s (cap 0.5+1+2+4)", e);
    CHECK_MSG(h.beats >= 4, "%d heartbeats over 4 waits", h.beats);
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 5);
    check_chat_requests(reqs, 5, "Always broken", 0.5, "Bearer " KEY);
    json_decref(reqs);

    hb_init(&h, v, 0);
    fake_reset_and_script("{\"images\": [{\"status\": 503}]}");
    t0 = mono_s();
    rc = call_image(v, &h, "Flaky picture", 1024, 1024, "natural", &res);
    elapsed_since(t0, "503 then ok");
    CHECK_INT(rc, 0);
    CHECK(res.png.len > 0);
    gen_result_free(&res);
    reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 2);
    check_image_requests(reqs, "Flaky picture", "1024x1024", "natural");
    json_decref(reqs);
}

static void test_hang(const prov_t *v, const prov_t *quick, const prov_t *slow)
{
    hb_t h;
    gen_result_t res;
    /* one hang (2 s timeout), then an answer */
    hb_init(&h, v, 0);
    fake_reset_and_script("{\"chat\": [\"hang\"]}");
    double t0 = mono_s();
    int rc = call_text(v, &h, 6, "Slow then fine", 0.5, &res);
    double e = elapsed_since(t0, "hang (timeout 2 s), then ok");
    CHECK_INT(rc, 0);
    CHECK_MSG(e >= 1.9 && e < 2.5 + 2.5 * test_slow(), "hang then ok took %.2f s", e);
    CHECK_MSG(h.beats >= 2, "%d heartbeats during a 2 s transfer and a wait", h.beats);
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 2);
    check_chat_requests(reqs, 6, "Slow then fine", 0.5, "Bearer " KEY);
    json_decref(reqs);

    /* every attempt hangs (timeout 0.4 s): gives up after 5 */
    hb_init(&h, quick, 0);
    fake_reset_and_script("{\"images\": [\"hang\", \"hang\", \"hang\", \"hang\", \"hang\"]}");
    t0 = mono_s();
    rc = call_image(quick, &h, "Never drawn", 1024, 1024, NULL, &res);
    e = elapsed_since(t0, "hang x5 (timeout 0.4 s)");
    CHECK_INT(rc, -1);
    check_user_error(res.error, "The AI provider did not answer in time.");
    CHECK_MSG(e >= 1.95 && e < 9.5 + 1.0 * test_slow(), "5 timed-out attempts took %.2f s", e);
    gen_result_free(&res);
    reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 5);
    json_decref(reqs);

    /* a hang (timeout 10 s) cut short when the heartbeat says the job is gone */
    hb_init(&h, slow, 2);
    fake_reset_and_script("{\"chat\": [\"hang\"]}");
    t0 = mono_s();
    rc = call_text(slow, &h, 6, "Lost job", 0.5, &res);
    e = elapsed_since(t0, "hang, heartbeat false on 2nd beat");
    CHECK_INT(rc, -1);
    check_user_error(res.error, "interrupted");
    CHECK_INT(h.beats, 2);
    /* well before the attempt's own timeout (10 s), which is what would end it otherwise */
    CHECK_MSG(e >= 1.5 && e < 10.0, "stopping a hang took %.2f s", e);
    gen_result_free(&res);
    reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 1);
    json_decref(reqs);
}

static void test_bad_answers(const prov_t *v)
{
    text_fails(v, "{\"chat\": [\"malformed\"]}", 1, "invalid response", "malformed JSON (chat)");
    image_fails(v, "{\"images\": [\"malformed\"]}", 1, "invalid response",
                "malformed JSON (images)");
    text_fails(v, "{\"chat\": [\"missing_field\"]}", 1, "invalid response",
               "missing choices (chat)");
    image_fails(v, "{\"images\": [\"missing_field\"]}", 1, "invalid response",
                "missing data (images)");
    text_fails(v, "{\"chat\": [\"empty_content\"]}", 1, "no text", "empty content (chat)");
    text_fails(v, "{\"chat\": [\"oversized\"]}", 1, "too large", "40 MiB streamed (chat)");
    image_fails(v, "{\"images\": [\"oversized\"]}", 1, "too large", "40 MiB streamed (images)");
    image_fails(v, "{\"images\": [\"oversized_declared\"]}", 1, "too large",
                "40 MiB Content-Length (images)");
    image_fails(v, "{\"images\": [\"wrong_size_png\"]}", 1,
                "wrong size (512x513 instead of 1024x1024)", "PNG of the wrong size");
    image_fails(v, "{\"images\": [\"bad_png\"]}", 1, "not a valid PNG", "base64 of garbage");
    image_fails(v, "{\"images\": [\"url_only\"]}", 1, "link instead of the picture",
                "URL instead of b64_json");
}

static void test_drop(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    fake_reset_and_script("{\"chat\": [\"drop\"]}");
    double t0 = mono_s();
    CHECK_INT(call_text(v, &h, 8, "Dropped then fine", 0.5, &res), 0);
    elapsed_since(t0, "dropped connection, then ok");
    CHECK_STR(buf_cstr(&res.text), "Echo: Dropped then fine");
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 2);
    check_chat_requests(reqs, 8, "Dropped then fine", 0.5, "Bearer " KEY);
    json_decref(reqs);

    hb_init(&h, v, 0);
    fake_reset_and_script("{\"images\": [\"drop\", \"drop\"]}");
    CHECK_INT(call_image(v, &h, "Dropped picture", 1024, 1024, NULL, &res), 0);
    gen_result_free(&res);
    reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 3);
    json_decref(reqs);
}

static void test_heartbeat_stops_retries(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 1);
    fake_reset_and_script("{\"chat\": [{\"status\": 500}]}");
    double t0 = mono_s();
    int rc = call_text(v, &h, 9, "Stop early", 0.5, &res);
    double e = elapsed_since(t0, "500, heartbeat false before retry");
    CHECK_INT(rc, -1);
    check_user_error(res.error, "Generation was interrupted.");
    CHECK_INT(h.beats, 1);
    CHECK_MSG(e < 0.5 + 0.5 * test_slow(), "stopping took %.2f s", e);
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 1);
    json_decref(reqs);
}

/* Nothing listens: refused connections are retried, then reported plainly; the
 * credentials in the URL appear nowhere. */
static void test_unreachable(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    int port = 0;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s); /* the port is now free and nothing listens on it */
    CHECK(port > 0);
    char base[160];
    snprintf(base, sizeof(base), "http://user:CREDPASS@127.0.0.1:%d/v1", port);
    prov_t v = prov_make(base, KEY, 2);
    if (!v.p)
        return;
    hb_t h;
    gen_result_t res;
    hb_init(&h, &v, 0);
    double t0 = mono_s();
    int rc = call_text(&v, &h, 1, "Nobody home", 0.5, &res);
    double e = elapsed_since(t0, "connection refused x5");
    CHECK_INT(rc, -1);
    check_user_error(res.error, "could not be reached");
    CHECK_MSG(h.beats >= 4, "%d heartbeats over 4 waits", h.beats);
    CHECK_MSG(e < 7.5 + 1.0 * test_slow(), "refused x5 took %.2f s (backoff cap 0.5+1+2+4)", e);
    gen_result_free(&res);
    prov_free(&v);
}

static void test_bad_input(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    hb_init(&h, v, 0);
    fake_reset_and_script(NULL);
    CHECK_INT(call_text(v, &h, 1, "bad \xff utf-8", 0.5, &res), -1);
    check_user_error(res.error, "could not be encoded");
    gen_result_free(&res);
    CHECK_INT(call_text(v, &h, 99, "no such template", 0.5, &res), -1);
    gen_result_free(&res);
    json_t *reqs = fake_requests();
    CHECK_INT(json_array_size(reqs), 0);
    json_decref(reqs);
}

/* ---- streaming (stream: true) ---- */

/* Scripts the fake, makes one call that listens to the pieces; returns the call's rc
 * and, in *nreq, how many requests the fake got. */
static int stream_call(const prov_t *v, hb_t *h, const char *script, const char *prompt,
                       gen_result_t *res, int *nreq)
{
    hb_init(h, v, 0);
    hb_listen(h);
    fake_reset_and_script(script);
    int rc = call_text(v, h, 2, prompt, 0.5, res);
    json_t *reqs = fake_requests();
    *nreq = (int)json_array_size(reqs);
    json_decref(reqs);
    CHECK_MSG(h->bad_pieces == 0, "%d pieces empty or splitting a character", h->bad_pieces);
    return rc;
}

/* A successful streamed call: the text is want, and the pieces joined are the text. */
static void stream_ok(const prov_t *v, const char *script, const char *want, int want_req,
                      const char *label)
{
    hb_t h;
    gen_result_t res;
    int nreq = 0;
    int rc = stream_call(v, &h, script, "Stream me", &res, &nreq);
    CHECK_MSG(rc == 0, "%s: failed: %s", label, res.error);
    CHECK_MSG(strcmp(buf_cstr(&res.text), want) == 0, "%s: text \"%s\", want \"%s\"", label,
              buf_cstr(&res.text), want);
    CHECK_MSG(strcmp(buf_cstr(&h.pieces), buf_cstr(&res.text)) == 0,
              "%s: pieces joined \"%s\" != text \"%s\"", label, buf_cstr(&h.pieces),
              buf_cstr(&res.text));
    CHECK_MSG(nreq == want_req, "%s: %d requests, want %d", label, nreq, want_req);
    CHECK_MSG(strstr(buf_cstr(&res.text), "think") == NULL &&
                  strstr(buf_cstr(&res.text), "SECRETPLAN") == NULL,
              "%s: reasoning in the text: %s", label, buf_cstr(&res.text));
    gen_result_free(&res);
    hb_free(&h);
}

/* A failing streamed call: the message, the request count, and what was passed on. */
static void stream_fails(const prov_t *v, const char *script, const char *must_contain,
                         int want_req, const char *want_pieces, const char *label)
{
    hb_t h;
    gen_result_t res;
    int nreq = 0;
    double t0 = mono_s();
    int rc = stream_call(v, &h, script, "Stream me", &res, &nreq);
    elapsed_since(t0, label);
    CHECK_MSG(rc == -1, "%s: succeeded", label);
    check_user_error(res.error, must_contain);
    CHECK_MSG(res.text.len == 0, "%s: text kept after a failure", label);
    CHECK_MSG(nreq == want_req, "%s: %d requests, want %d", label, nreq, want_req);
    CHECK_MSG(strcmp(buf_cstr(&h.pieces), want_pieces) == 0, "%s: pieces \"%s\", want \"%s\"",
              label, buf_cstr(&h.pieces), want_pieces);
    gen_result_free(&res);
    hb_free(&h);
}

static void test_stream_basics(const prov_t *v)
{
    hb_t h;
    gen_result_t res;
    int nreq = 0;
    CHECK_INT(stream_call(v, &h, NULL, "Write about otters and rivers", &res, &nreq), 0);
    CHECK_STR(buf_cstr(&res.text), "Echo: Write about otters and rivers");
    CHECK_STR(buf_cstr(&h.pieces), buf_cstr(&res.text));
    CHECK_INT(h.npieces, 6); /* one per word, as the fake streams them */
    CHECK_INT(res.prompt_tokens, 5);
    CHECK_INT(res.completion_tokens, 6);
    CHECK(!res.truncated);
    gen_result_free(&res);
    hb_free(&h);
    json_t *reqs = fake_requests();
    json_t *b = req_body(reqs, 0);
    CHECK(json_is_true(json_object_get(b, "stream")));
    CHECK(json_is_true(json_object_get(json_object_get(b, "stream_options"), "include_usage")));
    CHECK_STR(req_header(reqs, 0, "accept"), "text/event-stream, application/json");
    json_decref(reqs);

    stream_ok(v, "{\"chat\": [{\"pieces\": [\"Gr\\u00fc\\u00dfe \", \"\\u65e5\\u672c\\u8a9e\", "
                 "\" \\ud83c\\udf89\"], \"split\": 3, \"crlf\": true}]}",
              "Grüße 日本語 🎉", 1, "multibyte text, 3-byte writes, CRLF");
    stream_ok(v, "{\"chat\": [{\"pieces\": [\"No \", \"finish\"], \"finish\": \"stop\", "
                 "\"done\": false}]}",
              "No finish", 1, "finish_reason but no [DONE]");
    stream_ok(v, "{\"chat\": [{\"plain\": true, \"pieces\": [\"Plain \", \"JSON\"]}]}",
              "Plain JSON", 1, "a server that ignores stream: plain JSON");

    /* usage and finish_reason length */
    CHECK_INT(stream_call(v, &h,
                          "{\"chat\": [{\"pieces\": [\"Cut\", \" short\"], \"finish\": \"length\","
                          " \"usage\": {\"prompt_tokens\": 11, \"completion_tokens\": 22}}]}",
                          "p", &res, &nreq), 0);
    CHECK_STR(buf_cstr(&res.text), "Cut short");
    CHECK(res.truncated);
    CHECK_INT(res.prompt_tokens, 11);
    CHECK_INT(res.completion_tokens, 22);
    gen_result_free(&res);
    hb_free(&h);
    CHECK_INT(stream_call(v, &h, "{\"chat\": [{\"plain\": true, \"pieces\": [\"Long\"], \"finish\":"
                                 " \"length\", \"usage\": {\"prompt_tokens\": 3, "
                                 "\"completion_tokens\": 4}}]}", "p", &res, &nreq), 0);
    CHECK(res.truncated);
    CHECK_INT(res.prompt_tokens, 3);
    CHECK_INT(res.completion_tokens, 4);
    gen_result_free(&res);
    hb_free(&h);
    CHECK_INT(stream_call(v, &h, "{\"chat\": [{\"pieces\": [\"x\"], \"usage\": false}]}", "p",
                          &res, &nreq), 0);
    CHECK_INT(res.prompt_tokens, -1);
    CHECK_INT(res.completion_tokens, -1);
    gen_result_free(&res);
    hb_free(&h);
}

static void test_stream_reasoning(const prov_t *v)
{
    stream_ok(v, "{\"chat\": [{\"pieces\": [\"<thi\", \"nk>SECRETPLAN one\", \" two</th\", "
                 "\"ink>\\n\\n\", \"Hello\", \" world\"]}]}",
              "Hello world", 1, "<think> in content, tags split");
    stream_ok(v, "{\"chat\": [{\"pieces\": [\"  <think>\\nSECRETPLAN</think>Hi <b>there</b>\"]}]}",
              "Hi <b>there</b>", 1, "<think> after spaces, one chunk");
    stream_ok(v, "{\"chat\": [{\"reasoning\": [\"SECRETPLAN\", \" more\"], \"pieces\": [\"Plain\"]}]}",
              "Plain", 1, "reasoning_content deltas");
    stream_ok(v, "{\"chat\": [{\"reasoning\": [\"SECRETPLAN\"], \"reasoning_field\": \"reasoning\","
                 " \"pieces\": [\"Field\"]}]}",
              "Field", 1, "reasoning deltas");
    stream_ok(v, "{\"chat\": [{\"plain\": true, \"reasoning\": [\"SECRETPLAN\"], \"pieces\": "
                 "[\"<think>SECRETPLAN</think>\\n\\nBody\"]}]}",
              "Body", 1, "plain JSON: <think> and reasoning_content");
    stream_ok(v, "{\"chat\": [{\"pieces\": [\"<\", \"b>bold</b> a < b\"]}]}", "<b>bold</b> a < b",
              1, "a '<' that is no tag");
    stream_ok(v, "{\"chat\": [{\"pieces\": [\"Ends with </thi\"]}]}", "Ends with </thi", 1,
              "a text ending in a prefix of </think>");
    stream_fails(v, "{\"chat\": [{\"pieces\": [\"<think>SECRETPLAN only\"]}]}", "no text", 1, "",
                 "reasoning and no text");
}

/* A model that opens its reasoning without <think> (only </think> shows): the first
 * time, text was already passed on and the call fails; the provider then holds text
 * back until </think> and the next call is clean. Nobody listening: clean at once. */
static void test_stream_orphan_close(void)
{
    prov_t v = prov_make(base_url, KEY, 2);
    if (!v.p)
        return;
    const char *orphan = "{\"chat\": [{\"pieces\": [\"SECRETPLAN\", \" more\", \"</think>\\n\\n\","
                         " \"Answer\", \" here\"]}]}";
    stream_fails(&v, orphan, "reasoning", 1, "SECRETPLAN more", "orphan </think> after text");
    stream_ok(&v, orphan, "Answer here", 1, "orphan </think>, learnt");
    stream_ok(&v, "{\"chat\": [{\"pieces\": [\"No\", \" reasoning\"]}]}", "No reasoning", 1,
              "learnt, a text without reasoning");
    prov_free(&v);

    v = prov_make(base_url, KEY, 2);
    if (!v.p)
        return;
    hb_t h;
    gen_result_t res;
    hb_init(&h, &v, 0); /* not listening */
    fake_reset_and_script(orphan);
    CHECK_INT(call_text(&v, &h, 2, "p", 0.5, &res), 0);
    CHECK_STR(buf_cstr(&res.text), "Answer here");
    gen_result_free(&res);
    fake_reset_and_script("{\"chat\": [{\"plain\": true, \"pieces\": [\"SECRETPLAN</think>Done\"]}]}");
    CHECK_INT(call_text(&v, &h, 2, "p", 0.5, &res), 0);
    CHECK_STR(buf_cstr(&res.text), "Done");
    gen_result_free(&res);
    hb_free(&h);
    prov_free(&v);
}

/* Retries are allowed until the first piece has been passed on, never after. */
static void test_stream_failures(const prov_t *v, const prov_t *quick)
{
    stream_ok(v, "{\"chat\": [{\"error_after\": 0}]}", "Echo: Stream me", 2,
              "error event before any text, then ok");
    stream_ok(v, "{\"chat\": [{\"drop_after\": 0}]}", "Echo: Stream me", 2,
              "dropped before any text, then ok");
    stream_ok(v, "{\"chat\": [{\"pieces\": [], \"finish\": null, \"done\": false}]}",
              "Echo: Stream me", 2, "ended without [DONE] before any text, then ok");
    stream_fails(v, "{\"chat\": [{\"error_after\": 2}]}", "reported an error while writing", 1, "Echo: Stream",
                 "error event after text");
    stream_fails(v, "{\"chat\": [{\"error_after\": 0, \"error_code\": \"insufficient_quota\"}]}",
                 "quota", 1, "", "insufficient_quota in the stream");
    stream_fails(v, "{\"chat\": [{\"drop_after\": 1}]}", "before the text was finished", 1,
                 "Echo:", "dropped after text");
    stream_fails(v, "{\"chat\": [{\"finish\": null, \"done\": false}]}",
                 "before the text was finished", 1, "Echo: Stream me",
                 "ended without [DONE] or finish after text");
    stream_fails(v, "{\"chat\": [{\"pieces\": [\"\"]}]}", "no text", 1, "", "empty stream");
    stream_fails(quick, "{\"chat\": [{\"stall_after\": 1}]}", "did not answer in time", 1,
                 "Echo:", "silent after text (timeout 0.4 s)");
    stream_ok(quick, "{\"chat\": [{\"stall_after\": 0}]}", "Echo: Stream me", 2,
              "silent before any text, then ok");
}

/* A server that refuses stream_options: sent again without, and left out from then. */
static void test_stream_options_refused(void)
{
    prov_t v = prov_make(base_url, KEY, 2);
    if (!v.p)
        return;
    hb_t h;
    gen_result_t res;
    int nreq = 0;
    CHECK_INT(stream_call(&v, &h, "{\"reject_stream_options\": true}", "Refuse", &res, &nreq), 0);
    CHECK_STR(buf_cstr(&res.text), "Echo: Refuse");
    CHECK_INT(nreq, 2);
    CHECK_INT(res.prompt_tokens, -1); /* no usage without include_usage */
    gen_result_free(&res);
    hb_free(&h);
    json_t *reqs = fake_requests();
    CHECK(json_object_get(req_body(reqs, 0), "stream_options") != NULL);
    CHECK(json_object_get(req_body(reqs, 1), "stream_options") == NULL);
    CHECK(json_is_true(json_object_get(req_body(reqs, 1), "stream")));
    json_decref(reqs);
    CHECK_INT(stream_call(&v, &h, "{\"reject_stream_options\": true}", "Again", &res, &nreq), 0);
    CHECK_INT(nreq, 1);
    gen_result_free(&res);
    hb_free(&h);
    prov_free(&v);

    /* another 400 is not a refusal of stream_options: not sent again */
    v = prov_make(base_url, KEY, 2);
    if (!v.p)
        return;
    stream_fails(&v, "{\"chat\": [{\"status\": 400}]}", "(HTTP 400)", 1, "", "400 for something else");
    prov_free(&v);
}

/* A stream that falls silent is given up after the idle timeout, well before the
 * attempt's own timeout: final once text was passed on, retried before. */
static void test_stream_idle(void)
{
    idle_timeout = 0.5;
    prov_t v = prov_make(base_url, KEY, 10);
    idle_timeout = 0;
    if (!v.p)
        return;
    double t0 = mono_s();
    stream_fails(&v, "{\"chat\": [{\"stall_after\": 2}]}", "did not answer in time", 1,
                 "Echo: Stream", "silent after text (idle 0.5 s, timeout 10 s)");
    double e = mono_s() - t0;
    /* the bounds: the attempt's own timeout (10 s) would end it otherwise */
    CHECK_MSG(e >= 0.5 && e < 10.0, "idle stream given up after %.2f s", e);
    t0 = mono_s();
    stream_ok(&v, "{\"chat\": [{\"stall_after\": 0}]}", "Echo: Stream me", 2,
              "silent before any text (idle 0.5 s), then ok");
    e = mono_s() - t0;
    CHECK_MSG(e < 10.0, "idle stream before text retried after %.2f s", e);
    /* [DONE], then a body that stays open: whole, taken without waiting for its end */
    t0 = mono_s();
    stream_ok(&v, "{\"chat\": [{\"linger\": 8}]}", "Echo: Stream me", 1,
              "[DONE], then the body stays open");
    e = mono_s() - t0;
    CHECK_MSG(e < 8.0, "waited %.2f s after [DONE]", e); /* for the body's end: 8 s later */
    prov_free(&v);
}

static void test_max_tokens_unset(void)
{
    prov_t v = prov_make_tokens(base_url, KEY, 2, 0);
    if (!v.p)
        return;
    hb_t h;
    gen_result_t res;
    int nreq = 0;
    CHECK_INT(stream_call(&v, &h, NULL, "No limit", &res, &nreq), 0);
    gen_result_free(&res);
    hb_free(&h);
    json_t *reqs = fake_requests();
    CHECK_MSG(json_object_get(req_body(reqs, 0), "max_tokens") == NULL,
              "max_tokens sent though --max-output-tokens is 0");
    json_decref(reqs);
    prov_free(&v);
}

/* ---- the provider's log, captured from standard error ---- */

static char log_path[] = "/tmp/inkwell_test_openai_XXXXXX";
static int saved_stderr = -1;

static void log_capture_begin(void)
{
    int fd = mkstemp(log_path);
    if (fd < 0)
        return;
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

/* Restores stderr, replays what was captured, and checks it is free of secrets. */
static void log_capture_end(void)
{
    if (saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    FILE *f = fopen(log_path, "r");
    buf_t b;
    buf_init(&b);
    char chunk[4096];
    size_t n;
    while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_append(&b, chunk, n);
    if (f)
        fclose(f);
    unlink(log_path);
    const char *s = buf_cstr(&b);
    if (t_failed)
        fputs(s, stderr); /* failure messages were captured too */
    CHECK_MSG(strstr(s, "SECRET123") == NULL, "the key reached the log");
    CHECK_MSG(strstr(s, "FAKEBODY") == NULL, "a provider body reached the log");
    CHECK_MSG(strstr(s, "CREDPASS") == NULL, "URL credentials reached the log");
    CHECK_MSG(strstr(s, "job 4242: openai chat attempt 1 of 5 failed (HTTP 429)") != NULL,
              "no log line for a retried 429");
    CHECK_MSG(strstr(s, "attempt 5 of 5 failed (HTTP 500); giving up") != NULL,
              "no log line for giving up");
    CHECK_MSG(strstr(s, "curl error 28") != NULL, "no log line naming the curl timeout");
    buf_free(&b);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ctl = curl_easy_init();
    CHECK(ctl != NULL);
    if (!ctl || fake_start() != 0) {
        CHECK_MSG(0, "the fake OpenAI server did not start");
        fake_stop();
        TEST_DONE();
    }
    double t0 = mono_s();
    printf("test_openai: fake server on port %d\n", fake_port);
    log_capture_begin();

    test_settings();
    prov_t v = prov_make(base_url, KEY, 2);
    prov_t quick = prov_make(base_url, KEY, 0.4);
    prov_t slow = prov_make(base_url, KEY, 10);
    if (v.p && quick.p && slow.p) {
        test_text_ok(&v);
        test_image_ok(&v);
        test_no_key();
        test_rate_limited(&v);
        test_not_retried(&v);
        test_server_errors(&v);
        test_hang(&v, &quick, &slow);
        test_bad_answers(&v);
        test_drop(&v);
        test_heartbeat_stops_retries(&v);
        test_unreachable();
        test_bad_input(&v);
        test_stream_basics(&v);
        test_stream_reasoning(&v);
        test_stream_orphan_close();
        test_stream_failures(&v, &quick);
        test_stream_options_refused();
        test_max_tokens_unset();
        test_stream_idle();
    }
    prov_free(&v);
    prov_free(&quick);
    prov_free(&slow);

    log_capture_end();
    printf("test_openai: total %.2f s\n", mono_s() - t0);
    fake_stop();
    curl_easy_cleanup(ctl);
    curl_global_cleanup();
    TEST_DONE();
}
