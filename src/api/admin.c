/* admin.c — the /admin routes of API.md §19, for admin keys (router.c checks the
 * scope): users and their monthly quotas, their keys, and everyone's usage.
 *
 *   GET  /admin/users              page of users          POST  create (201)
 *   GET  /admin/users/{id}         one user               PATCH change, DELETE remove
 *   GET  /admin/users/{id}/keys    page of the user's keys POST  make one (201; the key
 *                                                                shown in this answer only)
 *   DELETE /admin/keys/{id}        revoke (200, the key as it now is)
 *   GET  /admin/usage?period=YYYY-MM  page of every user's usage
 *
 * Lists are §4 page envelopes (per_page 10/25/50/100, page; other values fall back to
 * the defaults), ordered by id. Bad input is a 422 naming the field; an unknown id 404.
 * Quotas are whole numbers >= 0, or null / empty for none. */
#include "api/api_int.h"

#include "auth/keys.h"
#include "auth/oidc.h"
#include "auth/password.h"
#include "auth/users.h"

#include <jansson.h>
#include <string.h>
#include <strings.h>

#define QUOTA_MAX 1000000000000000LL

/* ---- JSON of the objects ---- */

static void ts_json(jw_t *w, int64_t us)
{
    char ts[32];
    fmt_timestamp(us, ts);
    jw_str(w, ts);
}

static void opt_int(jw_t *w, int64_t v)
{
    if (v < 0)
        jw_null(w);
    else
        jw_int(w, v);
}

static void user_json(jw_t *w, const user_info_t *u)
{
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, u->id);
    jw_key(w, "name");
    jw_str(w, u->name);
    jw_key(w, "quota_words");
    opt_int(w, u->quota_words);
    jw_key(w, "quota_images");
    opt_int(w, u->quota_images);
    jw_key(w, "role");
    jw_str(w, u->admin ? "admin" : "member");
    jw_key(w, "created_at");
    ts_json(w, u->created_us);
    jw_obj_end(w);
}

static void key_json(jw_t *w, const key_info_t *k, const char *key)
{
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, k->id);
    jw_key(w, "user_id");
    jw_int(w, k->user_id);
    jw_key(w, "prefix");
    jw_str(w, k->prefix);
    jw_key(w, "scope");
    jw_str(w, key_scope_name(k->scope));
    jw_key(w, "expires_at");
    if (k->expires_us)
        ts_json(w, k->expires_us);
    else
        jw_null(w);
    jw_key(w, "revoked");
    jw_bool(w, k->revoked_us != 0);
    jw_key(w, "created_at");
    ts_json(w, k->created_us);
    jw_key(w, "name");
    if (k->name)
        jw_str(w, k->name);
    else
        jw_null(w);
    if (key) {
        jw_key(w, "key");
        jw_str(w, key);
    }
    jw_obj_end(w);
}

/* {"data": <one object>, "status": status} */
typedef enum { OBJ_USER, OBJ_KEY } obj_t;

static void respond_one(http_req_t *r, int status, obj_t kind, const void *obj, const char *key)
{
    jw_t w;
    api_data_begin(r, &w);
    if (kind == OBJ_USER)
        user_json(&w, obj);
    else
        key_json(&w, obj, key);
    api_data_end(r, &w, status);
}

/* ---- pages ---- */

typedef api_page_t page_t;

static void page_params(app_t *app, http_req_t *r, const char *path, page_t *p)
{
    kvlist_t q;
    api_query(r, &q);
    p->per_page = 10;
    p->page = 1;
    p->path = api_url(app, http_arena(r), "%s", path);
    const kv_t *kv;
    int64_t n;
    if ((kv = kv_get(&q, "per_page")) && kv->status == KV_OK && parse_uint(kv->val, &n) &&
        (n == 10 || n == 25 || n == 50 || n == 100))
        p->per_page = (int)n;
    if ((kv = kv_get(&q, "page")) && kv->status == KV_OK && parse_uint(kv->val, &n) && n >= 1 &&
        n <= 1000000000000LL)
        p->page = n;
}

/* The list's URL with page set and every other parameter of the query kept. */
static void page_link(jw_t *w, http_req_t *r, const page_t *p, int64_t page, bool present)
{
    if (!present) {
        jw_null(w);
        return;
    }
    buf_t u;
    buf_init(&u);
    buf_printf(&u, "%s?", p->path);
    for (const char *q = http_query(r); q && *q;) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        bool is_page = (len == 4 && strncmp(q, "page", 4) == 0) ||
                       (len >= 5 && strncmp(q, "page=", 5) == 0);
        if (len && !is_page) {
            buf_append(&u, q, len);
            buf_putc(&u, '&');
        }
        q += len + (amp ? 1 : 0);
    }
    buf_printf(&u, "page=%lld", (long long)page);
    jw_str(w, buf_cstr(&u));
    buf_free(&u);
}

/* Opens {"data":[ of a page envelope. */
static void page_begin(http_req_t *r, jw_t *w)
{
    buf_reset(http_resp(r));
    jw_init(w, http_resp(r));
    jw_obj_begin(w);
    jw_key(w, "data");
    jw_arr_begin(w);
}

/* Closes the data array and writes links, meta and status; answers 200. */
static void page_end(http_req_t *r, jw_t *w, const page_t *p, int64_t total, size_t n)
{
    jw_arr_end(w);
    int64_t last = total ? (total + p->per_page - 1) / p->per_page : 1;
    jw_key(w, "links");
    jw_obj_begin(w);
    jw_key(w, "first");
    page_link(w, r, p, 1, true);
    jw_key(w, "last");
    page_link(w, r, p, last, true);
    jw_key(w, "prev");
    page_link(w, r, p, p->page - 1, p->page > 1);
    jw_key(w, "next");
    page_link(w, r, p, p->page + 1, p->page < last);
    jw_obj_end(w);
    jw_key(w, "meta");
    jw_obj_begin(w);
    jw_key(w, "current_page");
    jw_int(w, p->page);
    jw_key(w, "from");
    if (n)
        jw_int(w, (p->page - 1) * p->per_page + 1);
    else
        jw_null(w);
    jw_key(w, "last_page");
    jw_int(w, last);
    jw_key(w, "path");
    jw_str(w, p->path);
    jw_key(w, "per_page");
    jw_int(w, p->per_page);
    jw_key(w, "to");
    if (n)
        jw_int(w, (p->page - 1) * p->per_page + (int64_t)n);
    else
        jw_null(w);
    jw_key(w, "total");
    jw_int(w, total);
    jw_obj_end(w);
    jw_key(w, "status");
    jw_int(w, 200);
    jw_obj_end(w);
    http_respond(r, 200);
}

static int64_t page_offset(const page_t *p)
{
    return (p->page - 1) * p->per_page;
}

/* ---- input ---- */

/* True when the JSON body gives key as null (the form decoder drops nulls as absent;
 * a quota of null means "none"). */
static bool json_null_field(http_req_t *r, const char *key)
{
    const char *ct = http_header(r, "Content-Type");
    if (!ct || strncasecmp(ct, "application/json", 16) != 0)
        return false;
    size_t len;
    const char *body = http_body(r, &len);
    json_t *root = json_loadb(body, len, JSON_ALLOW_NUL, NULL);
    bool is_null = root && json_is_null(json_object_get(root, key));
    json_decref(root);
    return is_null;
}

/* A quota field: *set true when it was given; *out -1 for none. */
static void quota_field(http_req_t *r, verrs_t *v, const kvlist_t *f, const char *key,
                        const char *label, bool *set, int64_t *out)
{
    bool present;
    const char *s = field_text(v, f, key, label, false, 0, &present);
    *set = present || json_null_field(r, key);
    if (!present) {
        *out = -1;
        return;
    }
    if (!s)
        return; /* malformed: recorded */
    int64_t n;
    if (!*s) {
        *out = -1;
    } else if (s[0] == '-' && parse_uint(s + 1, &n)) {
        verrs_add(v, key, "The %s field must be at least 0.", label);
    } else if (!parse_uint(s, &n) || n > QUOTA_MAX) {
        verrs_add(v, key, "The %s field must be an integer.", label);
    } else {
        *out = n;
    }
}

/* name (1..255 characters, not blank) when present or required. */
static const char *name_field(verrs_t *v, const kvlist_t *f, bool required)
{
    if (!required && !kv_get(f, "name"))
        return NULL;
    return field_text(v, f, "name", "name", true, 255, NULL);
}

/* role (admin or member) when present; NULL when absent or bad (recorded). */
static const char *role_field(verrs_t *v, const kvlist_t *f)
{
    const char *s = field_text(v, f, "role", "role", false, 0, NULL);
    if (!s || !*s)
        return NULL;
    if (strcmp(s, "admin") != 0 && strcmp(s, "member") != 0) {
        verrs_add(v, "role", "The selected role is invalid.");
        return NULL;
    }
    return s;
}

/* password when present: its NFC form (malloc'd) or NULL with the error recorded. */
static char *password_field(verrs_t *v, const kvlist_t *f, const char *key, const char *label)
{
    bool present;
    const char *s = field_text(v, f, key, label, false, 0, &present);
    if (!present || !s)
        return NULL;
    char *nfc = NULL;
    switch (password_normalize(s, &nfc)) {
    case PW_OK: break;
    case PW_SHORT:
        verrs_add(v, key, "The %s field must be at least %d bytes.", label, PASSWORD_MIN);
        break;
    case PW_LONG:
        verrs_add(v, key, "The %s field must not be greater than %d bytes.", label, PASSWORD_MAX);
        break;
    default: verrs_add(v, key, "The %s field must be a valid UTF-8 string.", label); break;
    }
    return nfc;
}

char *api_password_field(verrs_t *v, const kvlist_t *f, const char *key, const char *label)
{
    return password_field(v, f, key, label);
}

/* ---- users ---- */

static void users_list(app_t *app, http_req_t *r, store_conn_t *c)
{
    page_t p;
    page_params(app, r, "/api/v1/admin/users", &p);
    user_info_t *v;
    size_t n;
    int64_t total;
    int rc = store_user_list(c, p.per_page, page_offset(&p), http_arena(r), &v, &n, &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    page_begin(r, &w);
    for (size_t i = 0; i < n; i++)
        user_json(&w, &v[i]);
    page_end(r, &w, &p, total, n);
}

static void users_create(app_t *app, http_req_t *r, store_conn_t *c)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    const char *name = name_field(&v, &f, true);
    bool set_w, set_i;
    int64_t qw = app->cfg->quota_words, qi = app->cfg->quota_images, w, i;
    quota_field(r, &v, &f, "quota_words", "quota words", &set_w, &w);
    quota_field(r, &v, &f, "quota_images", "quota images", &set_i, &i);
    const char *role = role_field(&v, &f);
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    user_info_t u;
    int rc = store_user_create(c, name, set_w ? w : qw, set_i ? i : qi, http_arena(r), &u);
    if (rc == STORE_OK && role && strcmp(role, "admin") == 0) {
        user_patch_t rp = {.role = role};
        rc = store_user_update(c, u.id, &rp, http_arena(r), &u);
    }
    if (rc == STORE_CONFLICT) {
        verrs_add(&v, "name", "The name has already been taken.");
        api_validation_error(r, &v);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    respond_one(r, 201, OBJ_USER, &u, NULL);
}

static void user_change(app_t *app, http_req_t *r, store_conn_t *c, int64_t id)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    user_patch_t p = {.name = name_field(&v, &f, false)};
    quota_field(r, &v, &f, "quota_words", "quota words", &p.set_words, &p.quota_words);
    quota_field(r, &v, &f, "quota_images", "quota images", &p.set_images, &p.quota_images);
    p.role = role_field(&v, &f);
    /* oidc_subject (API.md §21): the user linked to the issuer's subject; "" unlinks */
    bool set_sub;
    const char *sub = field_text(&v, &f, "oidc_subject", "oidc subject", false, 255, &set_sub);
    if (set_sub && sub && *sub && !app->oidc)
        verrs_add(&v, "oidc_subject", "Single sign-on is not configured (--oidc-issuer).");
    char *nfc = password_field(&v, &f, "password", "password");
    if (!verrs_any(&v) && set_sub && sub) {
        int lrc = store_user_oidc_link(c, id, app->oidc ? oidc_issuer(app->oidc) : NULL,
                                       *sub ? sub : NULL);
        if (lrc == STORE_CONFLICT)
            verrs_add(&v, "oidc_subject", "The oidc subject is already linked to another user.");
        else if (lrc != STORE_OK) {
            password_free(nfc);
            if (lrc == STORE_NOTFOUND)
                api_not_found(r);
            else
                api_store_error(r, lrc);
            return;
        }
    }
    if (verrs_any(&v)) {
        password_free(nfc);
        api_validation_error(r, &v);
        return;
    }
    if (nfc) { /* hashed off this thread; then the rest of the patch (session_api.c) */
        api_admin_password(app, r, id, &p, nfc);
        return;
    }
    user_info_t u;
    int rc = store_user_update(c, id, &p, http_arena(r), &u);
    if (rc == STORE_CONFLICT) {
        verrs_add(&v, "name", "The name has already been taken.");
        api_validation_error(r, &v);
    } else if (rc == STORE_NOTFOUND) {
        api_not_found(r);
    } else if (rc != STORE_OK) {
        api_store_error(r, rc);
    } else {
        respond_one(r, 200, OBJ_USER, &u, NULL);
    }
}

static void user_one(app_t *app, http_req_t *r, store_conn_t *c, int64_t id)
{
    if (strcmp(http_method(r), "PATCH") == 0) {
        user_change(app, r, c, id);
        return;
    }
    if (strcmp(http_method(r), "DELETE") == 0) {
        size_t left;
        int rc = records_delete_user(app->records, c, app->media, id, &left);
        if (rc == STORE_NOTFOUND) {
            api_not_found(r);
        } else if (rc != STORE_OK) {
            api_store_error(r, rc);
        } else {
            buf_reset(http_resp(r));
            buf_printf(http_resp(r),
                       "{\"id\":%lld,\"object\":\"user\",\"deleted\":true,\"status\":200}",
                       (long long)id);
            http_respond(r, 200);
        }
        return;
    }
    user_info_t u;
    int rc = store_user_get(c, id, NULL, http_arena(r), &u);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        respond_one(r, 200, OBJ_USER, &u, NULL);
}

/* ---- keys ---- */

static void key_make(app_t *app, http_req_t *r, store_conn_t *c, int64_t user_id)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    key_scope_t scope;
    int64_t expires;
    if (!api_key_fields(&v, &f, true, 0, &scope, &expires)) {
        api_validation_error(r, &v);
        return;
    }
    char key[KEY_LEN + 1];
    int64_t kid;
    key_info_t k;
    int rc = STORE_OK;
    if (scope == SCOPE_ADMIN) { /* only an admin holds an admin key (§21) */
        user_patch_t rp = {.role = "admin"};
        user_info_t u;
        rc = store_user_update(c, user_id, &rp, http_arena(r), &u);
    }
    if (rc == STORE_OK)
        rc = keys_issue(c, user_id, scope, expires, NULL, key, &kid);
    if (rc == STORE_OK)
        rc = store_key_get(c, kid, http_arena(r), &k);
    if (rc != STORE_OK) { /* a user that went meanwhile: its foreign key */
        api_store_error(r, rc);
    } else {
        http_set_no_compress(r); /* it carries the key (§26) */
        http_add_header(r, "Cache-Control", "no-store");
        respond_one(r, 201, OBJ_KEY, &k, key);
    }
    memset(key, 0, sizeof(key));
}

static void user_keys(app_t *app, http_req_t *r, store_conn_t *c, int64_t user_id)
{
    user_info_t u;
    int rc = store_user_get(c, user_id, NULL, http_arena(r), &u);
    if (rc != STORE_OK) {
        if (rc == STORE_NOTFOUND)
            api_not_found(r);
        else
            api_store_error(r, rc);
        return;
    }
    if (strcmp(http_method(r), "POST") == 0) {
        key_make(app, r, c, user_id);
        return;
    }
    page_t p;
    page_params(app, r,
                arena_printf(http_arena(r), "/api/v1/admin/users/%lld/keys", (long long)user_id),
                &p);
    key_info_t *v;
    size_t n;
    int64_t total;
    rc = store_key_list(c, user_id, p.per_page, page_offset(&p), http_arena(r), &v, &n, &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    page_begin(r, &w);
    for (size_t i = 0; i < n; i++)
        key_json(&w, &v[i], NULL);
    page_end(r, &w, &p, total, n);
}

static void key_revoke(http_req_t *r, store_conn_t *c, int64_t id)
{
    key_info_t k;
    int rc = store_key_revoke(c, id);
    if (rc == STORE_OK)
        rc = store_key_get(c, id, http_arena(r), &k);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        respond_one(r, 200, OBJ_KEY, &k, NULL);
}

/* ---- usage ---- */

static void usage_list(app_t *app, http_req_t *r, store_conn_t *c)
{
    kvlist_t q;
    api_query(r, &q);
    verrs_t v;
    verrs_init(&v, http_arena(r));
    char period[8];
    const char *s = param_value(&v, &q, "period", "period");
    if (s && *s && !users_period_parse(s, period))
        verrs_add(&v, "period", "The period field must match the format Y-m.");
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    if (!s || !*s)
        store_period(store_clock_us(), period);
    page_t p;
    page_params(app, r, "/api/v1/admin/usage", &p);
    usage_row_t *rows;
    size_t n;
    int64_t total;
    int rc = store_usage_list(c, period, 0, p.per_page, page_offset(&p), http_arena(r), &rows, &n,
                                &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    page_begin(r, &w);
    for (size_t i = 0; i < n; i++)
        api_usage_json(&w, &rows[i], period, true);
    page_end(r, &w, &p, total, n);
}

void api_admin(app_t *app, http_req_t *r, route_t rt, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    bool get = strcmp(http_method(r), "GET") == 0 || strcmp(http_method(r), "HEAD") == 0;
    switch (rt) {
    case ROUTE_ADMIN_USERS:
        if (get)
            users_list(app, r, c);
        else
            users_create(app, r, c);
        break;
    case ROUTE_ADMIN_USER: user_one(app, r, c, id); break;
    case ROUTE_ADMIN_USER_KEYS: user_keys(app, r, c, id); break;
    case ROUTE_ADMIN_KEY: key_revoke(r, c, id); break;
    case ROUTE_ADMIN_USAGE: usage_list(app, r, c); break;
    default: api_not_found(r); break;
    }
}

/* ---- shared with the user's own routes (session_api.c) ---- */

bool api_key_fields(verrs_t *v, const kvlist_t *f, bool admin_ok, int64_t limit_us,
                    key_scope_t *scope, int64_t *expires_us)
{
    *scope = SCOPE_WRITE;
    *expires_us = 0;
    const char *s = field_text(v, f, "scope", "scope", false, 0, NULL);
    if (s && *s && (!key_scope_parse(s, scope) || (!admin_ok && *scope == SCOPE_ADMIN)))
        verrs_add(v, "scope", "The selected scope is invalid.");
    s = field_text(v, f, "expires_at", "expires at", false, 0, NULL);
    if (s && *s && !keys_parse_time(s, expires_us))
        verrs_add(v, "expires_at", "The expires at field must be a valid date.");
    else if (s && *s && *expires_us <= store_clock_us())
        verrs_add(v, "expires_at", "The expires at field must be a date after now.");
    else if (limit_us > 0 && s && *s && *expires_us > limit_us)
        verrs_add(v, "expires_at", "The expires at field must not be after the key's own expiry.");
    if (limit_us > 0 && (!s || !*s))
        *expires_us = limit_us; /* no later than the key that makes it */
    return !verrs_any(v);
}

void api_page_params(app_t *app, http_req_t *r, const char *path, api_page_t *p)
{
    page_params(app, r, path, p);
}

void api_page_begin(http_req_t *r, jw_t *w)
{
    page_begin(r, w);
}

void api_page_end(http_req_t *r, jw_t *w, const api_page_t *p, int64_t total, size_t n)
{
    page_end(r, w, p, total, n);
}

void api_user_json(jw_t *w, const user_info_t *u)
{
    user_json(w, u);
}

void api_key_json(jw_t *w, const key_info_t *k, const char *key)
{
    key_json(w, k, key);
}

void api_ts_json(jw_t *w, int64_t us)
{
    ts_json(w, us);
}
