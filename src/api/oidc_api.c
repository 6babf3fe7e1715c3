/* oidc_api.c — single sign-on (API.md §21), at the root like /healthz (no key):
 *
 *   GET /auth/oidc           {"data":{"name","login_url"}} for the sign-in page; data
 *                            null when no issuer is configured
 *   GET /auth/oidc/login     302 to the issuer (auth/oidc.h keeps the flow in the store)
 *                            and a short-lived HttpOnly cookie binding it to this browser
 *   GET /auth/oidc/callback  the code exchanged and the ID token checked; the person found
 *                            by (iss, sub), or created with --oidc-create-users; a session
 *                            started (session_api.c) and 302 to /. Any failure: no session,
 *                            a short HTML page (400, no referrer) saying why.
 *
 * The issuer is called on the sign-in pool (app->hashes, --signin-threads, the pool
 * that checks passwords) while the request is suspended: discovery and keys once, then
 * one token request per sign-in, 10 s at most each; a slow issuer holds no HTTP thread.
 * The store is used on the HTTP thread before and after. A full pool: 503 with
 * Retry-After at once. */
#include "api/api_int.h"

#include "api/export_pool.h"
#include "auth/oidc.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_BYTES 200
#define NAME_TRIES 50

static const char *flow_cookie(const app_t *app)
{
    return app->https ? "__Host-inkwell_oidc" : "inkwell_oidc";
}

static void html_escape(buf_t *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': buf_puts(b, "&amp;"); break;
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        case '\'': buf_puts(b, "&#39;"); break;
        default: buf_putc(b, (unsigned char)*s < 0x20 ? ' ' : *s);
        }
    }
}

/* The failure page: no session, the flow's cookie cleared, why (escaped). */
static void failed(app_t *app, http_req_t *r, int status, const char *why)
{
    api_set_cookie(app, r, flow_cookie(app), "", 0, true);
    http_add_header(r, "Referrer-Policy", "no-referrer");
    http_add_header(r, "Cache-Control", "no-store");
    http_add_header(r, "Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
    http_add_header(r, "X-Frame-Options", "DENY");
    http_set_content_type(r, "text/html; charset=utf-8");
    buf_t *b = http_resp(r);
    buf_reset(b);
    buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>Sign-in failed - inkwell</title></head>\n<body><main>"
                "<h1>Sign-in failed</h1>\n<p id=\"why\">");
    html_escape(b, why);
    buf_puts(b, "</p>\n<p><a href=\"/#/signin\">Back to sign-in</a></p></main></body></html>\n");
    http_respond(r, status);
}

void api_oidc_info(app_t *app, http_req_t *r)
{
    jw_t w;
    api_data_begin(r, &w);
    if (!app->oidc) { /* (not a 404: the sign-in page asks on every load) */
        jw_null(&w);
        api_data_end(r, &w, 200);
        return;
    }
    jw_obj_begin(&w);
    jw_key(&w, "name");
    jw_str(&w, oidc_display_name(app->oidc));
    jw_key(&w, "login_url");
    jw_str(&w, "/auth/oidc/login");
    jw_obj_end(&w);
    api_data_end(r, &w, 200);
}

/* The store when single sign-on is configured; NULL after answering (404 when not). */
static store_conn_t *oidc_conn(app_t *app, http_req_t *r)
{
    if (!app->oidc) {
        api_not_found(r);
        return NULL;
    }
    return api_conn(app, r);
}

/* ---- the issuer's calls on the pool ---- */

typedef struct {
    export_task_t task;
    http_req_t *r;
    bool login;          /* the start (discovery), else the callback (the exchange) */
    oidc_t *oidc;
    oidc_pending_t pending;
    arena_t *arena;      /* the request's: the identity's strings */
    oidc_identity_t id;
    int rc;              /* 0: done */
    char why[1024];
} issuer_job_t;

static void ij_run(export_task_t *t)
{
    issuer_job_t *j = t->arg;
    j->rc = j->login ? oidc_discover(j->oidc, j->why, sizeof(j->why))
                     : oidc_finish_exchange(j->oidc, &j->pending, j->arena, &j->id, j->why,
                                            sizeof(j->why));
}

static void ij_done(export_task_t *t)
{
    issuer_job_t *j = t->arg;
    http_resume(j->r);
}

static void ij_suspended(http_req_t *r)
{
    app_t *app = http_app(r);
    issuer_job_t *j = http_wait(r);
    export_pool_submit(app->hashes, &j->task);
}

static void login_finish(app_t *app, http_req_t *r, issuer_job_t *j);
static void callback_finish(app_t *app, http_req_t *r, issuer_job_t *j);

static void ij_resumed(void *appv, http_req_t *r)
{
    app_t *app = appv;
    issuer_job_t *j = http_wait(r);
    if (j->task.cancelled) {
        http_add_header(r, "Retry-After", "1");
        failed(app, r, 503, "The server is shutting down; please try again.");
        return;
    }
    if (j->login)
        login_finish(app, r, j);
    else
        callback_finish(app, r, j);
}

/* Takes a place on the pool for a call to the issuer; false after answering 503 when
 * it is full (before anything is read or used up). */
static bool ij_reserve(app_t *app, http_req_t *r)
{
    if (!app->hashes || export_pool_reserve(app->hashes, 0) == 0)
        return true;
    http_add_header(r, "Retry-After", "1");
    failed(app, r, 503, "Too many sign-ins at once. Please try again in a moment.");
    return false;
}

static void ij_unreserve(app_t *app)
{
    if (app->hashes)
        export_pool_unreserve(app->hashes, 0);
}

/* Runs j's call to the issuer, whose place ij_reserve took, on the pool (the request
 * suspended), or here when there is no pool; then login_finish or callback_finish. */
static void ij_start(app_t *app, http_req_t *r, issuer_job_t *j)
{
    j->r = r;
    j->oidc = app->oidc;
    j->arena = http_arena(r);
    j->task.run = ij_run;
    j->task.done = ij_done;
    j->task.arg = j;
    if (app->hashes) {
        http_suspend(r, ij_suspended, ij_resumed, j);
        return;
    }
    ij_run(&j->task);
    if (j->login)
        login_finish(app, r, j);
    else
        callback_finish(app, r, j);
}

static issuer_job_t *ij_new(http_req_t *r, bool login)
{
    issuer_job_t *j = arena_alloc(http_arena(r), sizeof(*j));
    memset(j, 0, sizeof(*j));
    j->login = login;
    return j;
}

/* ---- the start ---- */

void api_oidc_login(app_t *app, http_req_t *r)
{
    store_conn_t *c = oidc_conn(app, r);
    if (!c)
        return;
    /* each start keeps a flow row for OIDC_FLOW_SECONDS: the per-address limit of
     * requests without a key (--rate-limit) bounds how many one client can make */
    if (!api_rate_limit_client(app, r, c)) {
        failed(app, r, 429, "Too many sign-ins from this address at once. Wait a minute, then try again.");
        return;
    }
    if (ij_reserve(app, r))
        ij_start(app, r, ij_new(r, true)); /* the discovery document, then login_finish */
}

static void login_finish(app_t *app, http_req_t *r, issuer_job_t *j)
{
    if (j->rc != 0) {
        failed(app, r, 502, j->why);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    char *url, browser[OIDC_BROWSER_LEN + 1], why[512];
    if (oidc_begin(app->oidc, c, &url, browser, why, sizeof(why)) != 0) {
        failed(app, r, 502, why);
        return;
    }
    api_set_cookie(app, r, flow_cookie(app), browser, OIDC_FLOW_SECONDS, true);
    memset(browser, 0, sizeof(browser));
    http_add_header(r, "Location", url);
    http_add_header(r, "Cache-Control", "no-store");
    http_add_header(r, "Referrer-Policy", "no-referrer");
    free(url);
    buf_reset(http_resp(r));
    http_set_content_type(r, "text/plain; charset=utf-8");
    http_respond(r, 302);
}

/* A new user's name from the name claim: printable, at most NAME_MAX_BYTES (cut at a
 * character's start), "user" when nothing is left. */
static const char *base_name(http_req_t *r, const char *claim)
{
    char *s = arena_strdup(http_arena(r), claim ? claim : "");
    size_t n = 0;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p >= 0x20 && *p != 0x7f)
            s[n++] = *p;
    s[n] = 0;
    if (n > NAME_MAX_BYTES) {
        n = NAME_MAX_BYTES;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        s[n] = 0;
    }
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = 0;
    return n && s[strspn(s, " ")] ? s + strspn(s, " ") : "user";
}

/* Makes a member for id (named from its claim, made unique) and links it: STORE_OK with
 * *user_id, or a STORE_ code. A link made meanwhile by another process wins. */
static int create_user(app_t *app, http_req_t *r, store_conn_t *c, const oidc_identity_t *id,
                       int64_t *user_id)
{
    const char *base = base_name(r, id->name);
    user_info_t u;
    int rc = STORE_CONFLICT;
    for (int i = 1; i <= NAME_TRIES && rc == STORE_CONFLICT; i++) {
        const char *name = i == 1 ? base : arena_printf(http_arena(r), "%s-%d", base, i);
        rc = store_user_create(c, name, app->cfg->quota_words, app->cfg->quota_images,
                               http_arena(r), &u);
    }
    if (rc != STORE_OK)
        return rc;
    rc = store_user_oidc_link(c, u.id, id->iss, id->sub);
    if (rc == STORE_CONFLICT) { /* another process linked one first: that one */
        user_removed_t gone;
        store_user_delete(c, u.id, http_arena(r), &gone);
        return store_user_oidc_find(c, id->iss, id->sub, user_id);
    }
    if (rc == STORE_OK) {
        *user_id = u.id;
        log_info("oidc: user %lld made for a new subject of the issuer", (long long)u.id);
    }
    return rc;
}

/* A query parameter's value when it is there and decodes, else NULL. */
static const char *qval(const kvlist_t *q, const char *key)
{
    const kv_t *kv = kv_get(q, key);
    return kv && kv->status == KV_OK ? kv->val : NULL;
}

void api_oidc_callback(app_t *app, http_req_t *r)
{
    store_conn_t *c = oidc_conn(app, r);
    if (!c)
        return;
    kvlist_t q;
    api_query(r, &q);
    if (!ij_reserve(app, r))
        return;
    issuer_job_t *j = ij_new(r, false);
    if (oidc_finish_take(app->oidc, c, qval(&q, "state"), qval(&q, "code"), qval(&q, "error"),
                         qval(&q, "error_description"), api_cookie_get(r, flow_cookie(app)),
                         http_arena(r), &j->pending, j->why, sizeof(j->why)) != 0) {
        log_info("oidc: a sign-in failed: %s", j->why);
        ij_unreserve(app);
        failed(app, r, 400, j->why);
        return;
    }
    ij_start(app, r, j); /* the code exchanged, then callback_finish */
}

static void callback_finish(app_t *app, http_req_t *r, issuer_job_t *j)
{
    if (j->rc != 0) {
        log_info("oidc: a sign-in failed: %s", j->why);
        failed(app, r, 400, j->why);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    const oidc_identity_t id = j->id;
    int64_t user_id = 0;
    int rc = store_user_oidc_find(c, id.iss, id.sub, &user_id);
    if (rc == STORE_NOTFOUND && cfg_switch_value(app->cfg->oidc_create_users) == 1)
        rc = create_user(app, r, c, &id, &user_id);
    if (rc == STORE_NOTFOUND) {
        log_info("oidc: a subject of the issuer linked to no user was refused");
        failed(app, r, 400, "You are not allowed to sign in here: no account is linked to this "
                            "identity. Ask an administrator to link it.");
        return;
    }
    user_info_t u;
    if (rc == STORE_OK)
        rc = store_user_get(c, user_id, NULL, http_arena(r), &u);
    if (rc == STORE_OK)
        rc = api_session_start(app, r, c, u.id, 0, u.admin ? SCOPE_ADMIN : SCOPE_WRITE);
    if (rc != STORE_OK) {
        failed(app, r, 400, "The sign-in could not be finished; please try again.");
        return;
    }
    api_set_cookie(app, r, flow_cookie(app), "", 0, true);
    http_add_header(r, "Location", "/");
    http_add_header(r, "Referrer-Policy", "no-referrer");
    buf_reset(http_resp(r));
    http_set_content_type(r, "text/plain; charset=utf-8");
    http_respond(r, 302);
}
