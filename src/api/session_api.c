/* session_api.c — people sign in (API.md §21): the CSRF cookie, sign-in and sign-out,
 * the session cookie's authentication (for router.c), GET /me, the user's sessions, own
 * password and own keys.
 *
 *   GET    /session/csrf   204, sets XSRF-TOKEN (the session's when one is carried)
 *   POST   /session        name + password, or key; X-XSRF-TOKEN must equal the cookie
 *   DELETE /session        200 always; clears both cookies
 *   GET    /me             the user, the key (or null), auth, role, scope
 *   GET    /me/sessions    page of the user's sessions; DELETE ends all but this one
 *   PUT    /me/password    current + password
 *   GET    /keys, POST /keys, DELETE /keys/{id}: the user's own keys
 *
 * Passwords are checked and hashed (Argon2id, auth/password.h) on a bounded pool
 * (app->hashes, an export pool: api/export_pool.h) while the request is suspended, so a
 * flood of sign-ins holds no HTTP thread: past the pool's places a sign-in answers 429
 * with Retry-After at once. Failed sign-ins are counted in the store per name and per
 * client address (an IPv6 address by its /64) and minute, so the limits hold across
 * processes; the buckets are SHA-256 digests, so no name is kept there. */
#include "api/api_int.h"
#include "api/export_pool.h"

#include "auth/keys.h"
#include "auth/password.h"
#include "auth/session.h"
#include "core/log.h"
#include "core/testhooks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FAILS_PER_NAME 5
#define FAILS_PER_ADDR 20

/* ---- cookies ---- */

static const char *session_name(const app_t *app)
{
    return app->https ? "__Host-inkwell_session" : "inkwell_session";
}

static const char *xsrf_name(const app_t *app)
{
    return app->https ? "__Host-XSRF-TOKEN" : "XSRF-TOKEN";
}

/* The value of cookie name in the Cookie header (the first), copied into the request's
 * arena; NULL when absent. */
const char *api_cookie_get(http_req_t *r, const char *name)
{
    const char *h = http_header(r, "Cookie");
    size_t nl = strlen(name);
    while (h && *h) {
        while (*h == ' ' || *h == ';' || *h == '\t')
            h++;
        const char *end = strchr(h, ';');
        size_t len = end ? (size_t)(end - h) : strlen(h);
        if (len > nl && strncmp(h, name, nl) == 0 && h[nl] == '=')
            return arena_strndup(http_arena(r), h + nl + 1, len - nl - 1);
        h = end;
    }
    return NULL;
}

const char *api_session_cookie(app_t *app, http_req_t *r)
{
    return api_cookie_get(r, session_name(app));
}

void api_set_cookie(app_t *app, http_req_t *r, const char *name, const char *value,
                    long max_age, bool http_only)
{
    char c[256];
    snprintf(c, sizeof(c), "%s=%s; Path=/; Max-Age=%ld; SameSite=Lax%s%s", name, value,
             max_age, http_only ? "; HttpOnly" : "", app->https ? "; Secure" : "");
    http_add_header(r, "Set-Cookie", c);
}

static void clear_cookies(app_t *app, http_req_t *r)
{
    api_set_cookie(app, r, session_name(app), "", 0, true);
    api_set_cookie(app, r, xsrf_name(app), "", 0, false);
}

static int64_t idle_us(const app_t *app)
{
    return (int64_t)(app->cfg->session_idle * 1e6);
}

static int64_t max_us(const app_t *app)
{
    return (int64_t)(app->cfg->session_max * 1e6);
}

/* ---- authentication by the cookie (router.c) ---- */

int api_session_authenticate(app_t *app, http_req_t *r, store_conn_t *c, bool with_usage,
                             key_auth_t *k, bool *admin_both)
{
    session_auth_t s;
    int rc = session_authenticate(c, api_session_cookie(app, r), with_usage, idle_us(app), &s);
    if (rc != STORE_OK)
        return rc;
    *k = s.k;
    if (!s.k.key_id) /* a password or OIDC sign-in: the user's role now decides */
        k->scope = s.admin ? SCOPE_ADMIN : SCOPE_WRITE;
    *admin_both = !s.k.key_id && s.admin;
    api_state_t *st = api_state(r);
    st->session_id = s.session_id;
    st->csrf = arena_strdup(http_arena(r), s.csrf);
    st->admin_both = *admin_both;
    return STORE_OK;
}

/* Constant time in the header's length only: true when both are given and equal. */
static bool tokens_equal(const char *a, const char *b)
{
    if (!a || !b || !*a)
        return false;
    size_t n = strlen(a);
    return n == strlen(b) && ct_equal(a, b, n);
}

static void csrf_mismatch(http_req_t *r)
{
    api_error(r, 419, "CSRF token mismatch.");
}

bool api_session_csrf_ok(http_req_t *r)
{
    if (tokens_equal(http_header(r, "X-XSRF-TOKEN"), api_state(r)->csrf))
        return true;
    csrf_mismatch(r);
    return false;
}

/* ---- /me ---- */

/* {"data":{"user","key","auth","role","scope"},"status":200} */
static void me_answer(app_t *app, http_req_t *r, store_conn_t *c, int64_t user_id,
                      int64_t key_id, bool session, key_scope_t scope)
{
    user_info_t u;
    key_info_t k;
    int rc = store_user_get(c, user_id, NULL, http_arena(r), &u);
    if (rc == STORE_OK && key_id)
        rc = store_key_get(c, key_id, http_arena(r), &k);
    if (rc == STORE_NOTFOUND) { /* revoked or deleted in between */
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    api_data_begin(r, &w);
    jw_obj_begin(&w);
    jw_key(&w, "user");
    api_user_json(&w, &u);
    jw_key(&w, "key");
    if (key_id)
        api_key_json(&w, &k, NULL);
    else
        jw_null(&w);
    jw_key(&w, "auth");
    jw_str(&w, session ? "session" : "key");
    jw_key(&w, "role");
    jw_str(&w, u.admin ? "admin" : "member");
    jw_key(&w, "scope");
    jw_str(&w, key_scope_name(scope));
    jw_obj_end(&w);
    api_data_end(r, &w, 200);
}

void api_me(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    api_state_t *st = api_state(r);
    me_answer(app, r, c, http_user_id(r), st->key_id, st->session_id != 0, st->scope);
}

/* ---- the password pool ---- */

typedef enum { HJ_SIGNIN, HJ_CHANGE, HJ_ADMIN } hj_kind_t;

typedef struct {
    export_task_t task;
    http_req_t *r;
    hj_kind_t kind;
    const char *hash; /* to check pw against (NULL: the dummy) */
    char *pw;         /* to check (malloc'd), or NULL */
    char *new_pw;     /* to hash (malloc'd), or NULL */
    bool ok;          /* pw matched */
    int hash_rc;      /* new_pw's hash: 0 made */
    char new_hash[PASSWORD_HASH_MAX];
    int64_t user_id;
    char name_bucket[65], addr_bucket[65];
    int64_t minute;
    user_patch_t patch; /* HJ_ADMIN: the rest of the change */
} hash_job_t;

static void hj_run(export_task_t *t)
{
    hash_job_t *j = t->arg;
    test_hook_hold("INKWELL_TEST_SIGNIN_HOLD");
    if (j->pw)
        j->ok = password_verify(j->hash, j->pw);
    j->hash_rc = -1;
    if (j->new_pw && (!j->pw || j->ok))
        j->hash_rc = password_hash(j->new_pw, j->new_hash);
}

static void hj_done(export_task_t *t)
{
    hash_job_t *j = t->arg;
    password_free(j->pw);
    password_free(j->new_pw);
    j->pw = j->new_pw = NULL;
    http_resume(j->r);
}

static void hj_suspended(http_req_t *r)
{
    app_t *app = http_app(r);
    hash_job_t *j = http_wait(r);
    export_pool_submit(app->hashes, &j->task);
}

static void hj_finish(app_t *app, http_req_t *r, hash_job_t *j);
static void hj_resumed(void *appv, http_req_t *r);

/* Takes a place on the pool for a job; false after answering 429 when it is full (at
 * once: nothing is read or counted for a request that cannot be served). */
static bool hj_reserve(app_t *app, http_req_t *r)
{
    if (!app->hashes || export_pool_reserve(app->hashes, 0) == 0)
        return true;
    http_add_header(r, "Retry-After", "1");
    api_error(r, 429, "Too Many Attempts.");
    return false;
}

static void hj_unreserve(app_t *app)
{
    if (app->hashes)
        export_pool_unreserve(app->hashes, 0);
}

/* Runs j, whose place hj_reserve took, on the pool (the request suspended) or, without
 * a pool, here; its end is hj_finish's. */
static void hj_start(app_t *app, http_req_t *r, hash_job_t *j)
{
    j->r = r;
    j->task.run = hj_run;
    j->task.done = hj_done;
    j->task.arg = j;
    if (!app->hashes) {
        hj_run(&j->task);
        password_free(j->pw);
        password_free(j->new_pw);
        j->pw = j->new_pw = NULL;
        hj_finish(app, r, j);
        return;
    }
    http_suspend(r, hj_suspended, hj_resumed, j);
}

static hash_job_t *hj_new(http_req_t *r, hj_kind_t kind)
{
    hash_job_t *j = arena_alloc(http_arena(r), sizeof(*j));
    memset(j, 0, sizeof(*j));
    j->kind = kind;
    return j;
}

/* ---- sign-in ---- */

/* The failure buckets of a name and of the client's address (an IPv6 one by its /64):
 * SHA-256 digests, so the table keeps no name. */
static void buckets(http_req_t *r, const char *name, char nb[65], char ab[65])
{
    char b[1100];
    int n = snprintf(b, sizeof(b), "name:%s", name ? name : "");
    sha256_hex(b, (size_t)(n < (int)sizeof(b) ? n : (int)sizeof(b) - 1), nb);
    const char *addr = http_client_addr(r);
    unsigned char a6[16];
    char text[INET6_ADDRSTRLEN] = "";
    if (addr && strchr(addr, ':') && inet_pton(AF_INET6, addr, a6) == 1) {
        memset(a6 + 8, 0, 8);
        inet_ntop(AF_INET6, a6, text, sizeof(text));
        addr = text;
    }
    n = snprintf(b, sizeof(b), "addr:%s", addr ? addr : "");
    sha256_hex(b, (size_t)(n < (int)sizeof(b) ? n : (int)sizeof(b) - 1), ab);
}

/* False after answering 429 when the name's or the address's failures of this minute
 * are used up. */
static bool signin_allowed(http_req_t *r, store_conn_t *c, const hash_job_t *j)
{
    int64_t nf = 0, af = 0;
    int rc = store_signin_failures(c, j->name_bucket, j->minute, false, &nf);
    if (rc == STORE_OK)
        rc = store_signin_failures(c, j->addr_bucket, j->minute, false, &af);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return false;
    }
    if (nf < FAILS_PER_NAME && af < FAILS_PER_ADDR)
        return true;
    char ra[24];
    snprintf(ra, sizeof(ra), "%lld",
             (long long)(60 - (store_clock_us() / 1000000) % 60));
    http_add_header(r, "Retry-After", ra);
    api_error(r, 429, "Too Many Attempts.");
    return false;
}

static void signin_failed(http_req_t *r, store_conn_t *c, const hash_job_t *j)
{
    int64_t n;
    store_signin_failures(c, j->name_bucket, j->minute, true, &n);
    store_signin_failures(c, j->addr_bucket, j->minute, true, &n);
    api_error(r, 401, "These credentials do not match our records.");
}

int api_session_start(app_t *app, http_req_t *r, store_conn_t *c, int64_t user_id,
                      int64_t key_id, key_scope_t scope)
{
    int64_t old_user;
    const char *carried = api_session_cookie(app, r);
    if (carried)
        session_end_token(c, carried, &old_user);
    char id[SESSION_TOKEN_LEN + 1], csrf[SESSION_TOKEN_LEN + 1];
    int64_t sid;
    int rc = session_start(c, user_id, key_id, scope, http_header(r, "User-Agent"), max_us(app),
                           idle_us(app), id, csrf, &sid);
    if (rc != STORE_OK)
        return rc;
    long age = (long)app->cfg->session_max;
    api_set_cookie(app, r, session_name(app), id, age, true);
    api_set_cookie(app, r, xsrf_name(app), csrf, age, false);
    memset(id, 0, sizeof(id));
    http_add_header(r, "Cache-Control", "no-store");
    http_set_no_compress(r); /* it carries a secret (§26) */
    return STORE_OK;
}

/* Starts the session (ending the one the request carried), sets the cookies and answers
 * the /me object. */
static void signed_in(app_t *app, http_req_t *r, store_conn_t *c, int64_t user_id,
                      int64_t key_id, key_scope_t scope)
{
    int rc = api_session_start(app, r, c, user_id, key_id, scope);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    me_answer(app, r, c, user_id, key_id, true, scope);
}

void api_session_csrf(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    session_auth_t s;
    char token[sizeof(s.csrf)];
    long age = 7200;
    if (session_authenticate(c, api_session_cookie(app, r), false, idle_us(app), &s) ==
        STORE_OK) {
        snprintf(token, sizeof(token), "%s", s.csrf); /* one per session, never rotated */
        age = (long)((s.expires_us - store_clock_us()) / 1000000);
    } else {
        session_token(token);
    }
    api_set_cookie(app, r, xsrf_name(app), token, age > 0 ? age : 1, false);
    http_add_header(r, "Cache-Control", "no-store");
    http_set_no_compress(r);
    buf_reset(http_resp(r));
    http_respond(r, 204);
}

static void session_delete(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    const char *carried = api_session_cookie(app, r);
    int64_t user;
    if (carried)
        session_end_token(c, carried, &user);
    clear_cookies(app, r);
    buf_reset(http_resp(r));
    buf_puts(http_resp(r), "{\"data\":null,\"status\":200}");
    http_respond(r, 200);
}

void api_session(app_t *app, http_req_t *r)
{
    if (strcmp(http_method(r), "DELETE") == 0) {
        session_delete(app, r);
        return;
    }
    if (!tokens_equal(http_header(r, "X-XSRF-TOKEN"), api_cookie_get(r, xsrf_name(app)))) {
        csrf_mismatch(r);
        return;
    }
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    bool has_key = kv_get(&f, "key") != NULL;
    const char *key = NULL, *name = NULL, *pw = NULL;
    if (has_key) {
        key = field_text(&v, &f, "key", "key", true, 0, NULL);
    } else {
        name = field_text(&v, &f, "name", "name", true, 255, NULL);
        pw = field_text(&v, &f, "password", "password", true, 0, NULL);
    }
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    /* a password check's place first: a flood past the pool costs no more than this */
    if (!has_key && !hj_reserve(app, r))
        return;
    store_conn_t *c = api_conn(app, r);
    hash_job_t *j = hj_new(r, HJ_SIGNIN);
    buckets(r, has_key ? NULL : name, j->name_bucket, j->addr_bucket);
    j->minute = store_clock_us() / 60000000;
    if (!c || !signin_allowed(r, c, j)) {
        if (!has_key)
            hj_unreserve(app);
        return;
    }
    if (has_key) { /* a key (the #key= link): no hashing, SHA-256 lookups as for requests */
        key_auth_t k;
        char *authz = arena_printf(http_arena(r), "Bearer %s", key);
        int rc = keys_authenticate(c, authz, false, &k);
        if (rc == STORE_NOTFOUND)
            signin_failed(r, c, j);
        else if (rc != STORE_OK)
            api_store_error(r, rc);
        else
            signed_in(app, r, c, k.user_id, k.key_id, k.scope);
        return;
    }
    arena_t a;
    arena_init(&a);
    const char *hash = NULL;
    int rc = store_user_secret(c, name, &a, &j->user_id, &hash);
    if (rc != STORE_OK && rc != STORE_NOTFOUND) {
        arena_free(&a);
        hj_unreserve(app);
        api_store_error(r, rc);
        return;
    }
    j->hash = hash ? arena_strdup(http_arena(r), hash) : NULL;
    arena_free(&a);
    char *nfc = NULL;
    if (password_normalize(pw, &nfc) != PW_OK || !j->hash) {
        /* no such user, no password, or not a password at all: the same work, failed */
        password_free(nfc);
        nfc = strdup(pw);
        j->hash = NULL;
    }
    j->pw = nfc;
    hj_start(app, r, j);
}

static void signin_resumed(app_t *app, http_req_t *r, hash_job_t *j)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (!j->ok) {
        signin_failed(r, c, j);
        return;
    }
    user_info_t u;
    int rc = store_user_get(c, j->user_id, NULL, http_arena(r), &u);
    if (rc == STORE_NOTFOUND) { /* deleted meanwhile */
        signin_failed(r, c, j);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    signed_in(app, r, c, u.id, 0, u.admin ? SCOPE_ADMIN : SCOPE_WRITE);
}

/* ---- the user's password ---- */

void api_me_password(app_t *app, http_req_t *r)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    const char *current = field_text(&v, &f, "current", "current", true, 0, NULL);
    char *nfc = NULL;
    if (!kv_get(&f, "password"))
        verrs_add(&v, "password", "The password field is required.");
    else
        nfc = api_password_field(&v, &f, "password", "password");
    if (verrs_any(&v)) {
        password_free(nfc);
        api_validation_error(r, &v);
        return;
    }
    if (!hj_reserve(app, r)) {
        password_free(nfc);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c) {
        hj_unreserve(app);
        password_free(nfc);
        return;
    }
    hash_job_t *j = hj_new(r, HJ_CHANGE);
    j->user_id = http_user_id(r);
    user_info_t u;
    arena_t a;
    arena_init(&a);
    const char *hash = NULL;
    int64_t id;
    int rc = store_user_get(c, j->user_id, NULL, http_arena(r), &u);
    if (rc == STORE_OK)
        rc = store_user_secret(c, u.name, &a, &id, &hash);
    if (rc != STORE_OK) {
        arena_free(&a);
        password_free(nfc);
        hj_unreserve(app);
        api_store_error(r, rc == STORE_NOTFOUND ? STORE_ERROR : rc);
        return;
    }
    j->hash = hash ? arena_strdup(http_arena(r), hash) : NULL;
    arena_free(&a);
    char *cur = NULL;
    if (password_normalize(current, &cur) != PW_OK) {
        password_free(cur);
        cur = strdup(current);
        j->hash = NULL;
    }
    j->pw = cur;
    j->new_pw = nfc;
    hj_start(app, r, j);
}

static void change_resumed(app_t *app, http_req_t *r, hash_job_t *j)
{
    if (!j->ok) {
        verrs_t v;
        verrs_init(&v, http_arena(r));
        verrs_add(&v, "current", "The current password is incorrect.");
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (j->hash_rc != 0) {
        api_store_error(r, STORE_ERROR);
        return;
    }
    api_state_t *st = api_state(r);
    int64_t ended;
    /* every other session of the user ends (a key's requests keep none) */
    int rc = store_user_password(c, j->user_id, j->new_hash, st->session_id, &ended);
    memset(j->new_hash, 0, sizeof(j->new_hash));
    if (rc != STORE_OK) {
        api_store_error(r, rc == STORE_NOTFOUND ? STORE_ERROR : rc);
        return;
    }
    me_answer(app, r, c, j->user_id, st->key_id, st->session_id != 0, st->scope);
}

void api_admin_password(app_t *app, http_req_t *r, int64_t id, const user_patch_t *p,
                        char *nfc)
{
    if (!hj_reserve(app, r)) {
        password_free(nfc);
        return;
    }
    hash_job_t *j = hj_new(r, HJ_ADMIN);
    j->user_id = id;
    j->patch = *p;
    j->new_pw = nfc;
    hj_start(app, r, j);
}

static void admin_resumed(app_t *app, http_req_t *r, hash_job_t *j)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (j->hash_rc != 0) {
        api_store_error(r, STORE_ERROR);
        return;
    }
    int64_t ended;
    int rc = store_user_password(c, j->user_id, j->new_hash, 0, &ended); /* all sessions */
    memset(j->new_hash, 0, sizeof(j->new_hash));
    user_info_t u;
    if (rc == STORE_OK)
        rc = store_user_update(c, j->user_id, &j->patch, http_arena(r), &u);
    if (rc == STORE_CONFLICT) {
        verrs_t v;
        verrs_init(&v, http_arena(r));
        verrs_add(&v, "name", "The name has already been taken.");
        api_validation_error(r, &v);
    } else if (rc == STORE_NOTFOUND) {
        api_not_found(r);
    } else if (rc != STORE_OK) {
        api_store_error(r, rc);
    } else {
        jw_t w;
        api_data_begin(r, &w);
        api_user_json(&w, &u);
        api_data_end(r, &w, 200);
    }
}

static void hj_resumed(void *appv, http_req_t *r)
{
    hj_finish(appv, r, http_wait(r));
}

static void hj_finish(app_t *app, http_req_t *r, hash_job_t *j)
{
    if (j->task.cancelled) {
        http_add_header(r, "Retry-After", "1");
        api_error(r, 503, "The server is shutting down; please try again.");
        return;
    }
    switch (j->kind) {
    case HJ_SIGNIN: signin_resumed(app, r, j); break;
    case HJ_CHANGE: change_resumed(app, r, j); break;
    case HJ_ADMIN: admin_resumed(app, r, j); break;
    }
}

/* ---- the user's sessions ---- */

void api_me_sessions(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    api_state_t *st = api_state(r);
    if (strcmp(http_method(r), "DELETE") == 0) {
        int64_t ended = 0;
        int rc = store_session_end(c, http_user_id(r), 0, st->session_id, &ended);
        if (rc != STORE_OK) {
            api_store_error(r, rc);
            return;
        }
        buf_reset(http_resp(r));
        buf_printf(http_resp(r), "{\"data\":{\"ended\":%lld},\"status\":200}", (long long)ended);
        http_respond(r, 200);
        return;
    }
    api_page_t p;
    api_page_params(app, r, "/api/v1/me/sessions", &p);
    session_info_t *v;
    size_t n;
    int64_t total;
    int rc = store_session_list(c, http_user_id(r), p.per_page, (p.page - 1) * p.per_page,
                                http_arena(r), &v, &n, &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    api_page_begin(r, &w);
    for (size_t i = 0; i < n; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "id");
        jw_int(&w, v[i].id);
        jw_key(&w, "created_at");
        api_ts_json(&w, v[i].created_us);
        jw_key(&w, "last_seen_at");
        api_ts_json(&w, v[i].last_seen_us);
        jw_key(&w, "user_agent");
        if (v[i].user_agent)
            jw_str(&w, v[i].user_agent);
        else
            jw_null(&w);
        jw_key(&w, "current");
        jw_bool(&w, v[i].id == st->session_id);
        jw_obj_end(&w);
    }
    api_page_end(r, &w, &p, total, n);
}

/* ---- the user's own keys ---- */

void api_keys_own(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    int64_t user = http_user_id(r);
    if (strcmp(http_method(r), "POST") == 0) {
        kvlist_t f;
        if (api_body_fields(r, &f) != 0)
            return;
        verrs_t v;
        verrs_init(&v, http_arena(r));
        key_scope_t scope;
        int64_t expires;
        api_state_t *st = api_state(r);
        /* a key made by a key, or by a session made from one, ends no later than it */
        int64_t limit = st->key_id ? st->key_expires_us : 0;
        const char *name = field_text(&v, &f, "name", "name", false, 100, NULL);
        if (!api_key_fields(&v, &f, false, limit, &scope, &expires)) {
            api_validation_error(r, &v);
            return;
        }
        char key[KEY_LEN + 1];
        int64_t kid;
        key_info_t k;
        int rc = keys_issue(c, user, scope, expires, name, key, &kid);
        if (rc == STORE_OK)
            rc = store_key_get(c, kid, http_arena(r), &k);
        if (rc != STORE_OK) {
            api_store_error(r, rc);
        } else {
            http_add_header(r, "Cache-Control", "no-store");
            http_set_no_compress(r); /* it carries the key (§26) */
            jw_t w;
            api_data_begin(r, &w);
            api_key_json(&w, &k, key);
            api_data_end(r, &w, 201);
        }
        memset(key, 0, sizeof(key));
        return;
    }
    api_page_t p;
    api_page_params(app, r, "/api/v1/keys", &p);
    key_info_t *v;
    size_t n;
    int64_t total;
    int rc = store_key_list(c, user, p.per_page, (p.page - 1) * p.per_page, http_arena(r), &v,
                            &n, &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    api_page_begin(r, &w);
    for (size_t i = 0; i < n; i++)
        api_key_json(&w, &v[i], NULL);
    api_page_end(r, &w, &p, total, n);
}

void api_key_own(app_t *app, http_req_t *r, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    key_info_t k;
    int rc = store_key_get(c, id, http_arena(r), &k);
    if (rc == STORE_OK && k.user_id != http_user_id(r))
        rc = STORE_NOTFOUND; /* another user's key answers as a missing one */
    if (rc == STORE_OK)
        rc = store_key_revoke(c, id);
    if (rc == STORE_OK)
        rc = store_key_get(c, id, http_arena(r), &k);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
    } else if (rc != STORE_OK) {
        api_store_error(r, rc);
    } else {
        jw_t w;
        api_data_begin(r, &w);
        api_key_json(&w, &k, NULL);
        api_data_end(r, &w, 200);
    }
}
