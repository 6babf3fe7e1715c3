/* router.c — the route table and the checks every /api/v1 request passes.
 *
 * Order for /api/v1: authentication (401; bad keys are rate limited per client
 * address), the key's rate limit (429), then the route: an unknown path is 404,
 * a known path with another method 405 with Allow, an {id} that is not a positive
 * decimal integer 404; then the key's scope (403) and, for a create, the user's
 * monthly quota (403, §19). Other paths: /healthz, /readyz, /media/<key>.png, /metrics,
 * /api/v1/openapi.json and the web app (/ and its compiled-in files, api/web.c), all
 * without auth. Each request is labelled with its route template for the metrics
 * (never its raw path). */
#include "api/api.h"

#include "auth/keys.h"
#include "core/log.h"
#include "gen/templates.h"
#include "obs/metrics.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

enum { M_GET = 1, M_POST = 2, M_PUT = 4, M_PATCH = 8, M_DELETE = 16 };

static int method_bit(const char *m)
{
    if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
        return M_GET;
    if (strcmp(m, "POST") == 0)
        return M_POST;
    if (strcmp(m, "PUT") == 0)
        return M_PUT;
    if (strcmp(m, "PATCH") == 0)
        return M_PATCH;
    if (strcmp(m, "DELETE") == 0)
        return M_DELETE;
    return 0;
}

static void not_allowed(http_req_t *r, int allowed)
{
    char allow[64] = "";
    static const struct {
        int bit;
        const char *names;
    } m[] = {{M_GET, "GET, HEAD"}, {M_POST, "POST"}, {M_PUT, "PUT"}, {M_PATCH, "PATCH"},
             {M_DELETE, "DELETE"}};
    for (size_t i = 0; i < ARRAY_LEN(m); i++) {
        if (!(allowed & m[i].bit))
            continue;
        if (allow[0])
            strcat(allow, ", ");
        strcat(allow, m[i].names);
    }
    http_add_header(r, "Allow", allow);
    api_error(r, 405, "Method not allowed.");
}

static void client_bucket(http_req_t *r, char *out, size_t outlen)
{
    snprintf(out, outlen, "ip:%s", http_client_addr(r)); /* a trusted proxy's client */
}

/* Authenticates and rate limits; false when it has answered. *k: the key, its user's
 * quotas and usage this month. */
static bool admit(app_t *app, http_req_t *r, key_auth_t *k)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return false;
    r->quota_at = mono_s(); /* the usage read below is at least this recent */
    int rc = keys_authenticate(c, http_header(r, "Authorization"), k);
    if (rc == STORE_NOTFOUND) {
        char bucket[80];
        client_bucket(r, bucket, sizeof(bucket));
        if (!ratelimit_check(app->rl, c, r, bucket)) {
            metrics_ratelimit_refused();
            api_error(r, 429, "Too Many Attempts.");
            return false;
        }
        http_add_header(r, "WWW-Authenticate", "Bearer");
        api_error(r, 401, "Unauthenticated.");
        return false;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return false;
    }
    r->user_id = k->user_id;
    char bucket[40];
    snprintf(bucket, sizeof(bucket), "key:%lld", (long long)k->key_id);
    if (!ratelimit_check(app->rl, c, r, bucket)) {
        metrics_ratelimit_refused();
        api_error(r, 429, "Too Many Attempts.");
        return false;
    }
    return true;
}

/* The routes under /{kind}/{id}/ (sub starts with the '/'). */
static route_t sub_route(const char *sub, rec_kind_t kind, int m, int *allowed)
{
    if (kind == KIND_DOC && strcmp(sub, "/export") == 0) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_EXPORT : ROUTE_NOT_ALLOWED;
    }
    if (strcmp(sub, "/regenerate") == 0) {
        *allowed = M_POST;
        return m == M_POST ? ROUTE_REGENERATE : ROUTE_NOT_ALLOWED;
    }
    if (kind == KIND_DOC && strcmp(sub, "/actions") == 0) { /* §17 */
        *allowed = M_POST;
        return m == M_POST ? ROUTE_ACTIONS : ROUTE_NOT_ALLOWED;
    }
    if (strcmp(sub, "/revisions") == 0) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_REVISIONS : ROUTE_NOT_ALLOWED;
    }
    if (strncmp(sub, "/revisions/", 11) != 0)
        return ROUTE_NOT_FOUND;
    const char *ns = sub + 11, *slash = strchr(ns, '/');
    int64_t n;
    if (!parse_id(ns, slash ? (size_t)(slash - ns) : strlen(ns), &n))
        return ROUTE_NOT_FOUND;
    if (!slash) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_REVISION : ROUTE_NOT_ALLOWED;
    }
    if (strcmp(slash, "/restore") == 0) {
        *allowed = M_POST;
        return m == M_POST ? ROUTE_RESTORE : ROUTE_NOT_ALLOWED;
    }
    return ROUTE_NOT_FOUND;
}

/* The /usage and /admin/… routes (§19) of a path below /api/v1/ (rest), whatever the
 * method: sets *allowed and *id; ROUTE_NOT_FOUND when rest is none of them. */
static route_t admin_path(const char *rest, int64_t *id, int *allowed)
{
    if (strcmp(rest, "usage") == 0) {
        *allowed = M_GET;
        return ROUTE_USAGE;
    }
    if (strncmp(rest, "admin/", 6) != 0)
        return ROUTE_NOT_FOUND;
    rest += 6;
    if (strcmp(rest, "users") == 0) {
        *allowed = M_GET | M_POST;
        return ROUTE_ADMIN_USERS;
    }
    if (strcmp(rest, "usage") == 0) {
        *allowed = M_GET;
        return ROUTE_ADMIN_USAGE;
    }
    bool users = strncmp(rest, "users/", 6) == 0, keys = strncmp(rest, "keys/", 5) == 0;
    if (!users && !keys)
        return ROUTE_NOT_FOUND;
    const char *idp = rest + (users ? 6 : 5), *sub = strchr(idp, '/');
    size_t idlen = sub ? (size_t)(sub - idp) : strlen(idp);
    if (!parse_id(idp, idlen, id)) {
        *id = 0;
        return ROUTE_NOT_FOUND;
    }
    if (keys && !sub) {
        *allowed = M_DELETE;
        return ROUTE_ADMIN_KEY;
    }
    if (users && !sub) {
        *allowed = M_GET | M_PATCH | M_DELETE;
        return ROUTE_ADMIN_USER;
    }
    if (users && strcmp(sub, "/keys") == 0) {
        *allowed = M_GET | M_POST;
        return ROUTE_ADMIN_USER_KEYS;
    }
    *id = 0;
    return ROUTE_NOT_FOUND;
}

route_t api_route(const char *method, const char *raw_path, rec_kind_t *kind, int64_t *id,
                  int *allowed)
{
    *allowed = 0;
    *id = 0;
    *kind = KIND_DOC;
    int m = method_bit(method);
    size_t n = strlen(raw_path);
    char path[512];
    if (n >= sizeof(path))
        return ROUTE_NOT_FOUND;
    memcpy(path, raw_path, n + 1);
    if (n > 8 && path[n - 1] == '/' && strncmp(path, "/api/v1/", 8) == 0)
        path[n - 1] = '\0'; /* one trailing slash is ignored on API routes */

    if (strcmp(path, "/api/v1/openapi.json") == 0) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_OPENAPI : ROUTE_NOT_ALLOWED;
    }
    if (strncmp(path, "/api/v1/", 8) == 0) {
        const char *rest = path + 8, *tail;
        if (strcmp(rest, "templates") == 0) {
            *allowed = M_GET | M_POST;
            return m & *allowed ? ROUTE_TEMPLATES : ROUTE_NOT_ALLOWED;
        }
        if (strncmp(rest, "templates/", 10) == 0) { /* §18: the 52 are read-only */
            if (!parse_id(rest + 10, strlen(rest + 10), id)) {
                *id = 0;
                return ROUTE_NOT_FOUND;
            }
            *allowed = *id <= TEMPLATE_COUNT ? M_GET : M_GET | M_PATCH | M_DELETE;
            return m & *allowed ? ROUTE_TEMPLATE : ROUTE_NOT_ALLOWED;
        }
        route_t ar = admin_path(rest, id, allowed);
        if (ar != ROUTE_NOT_FOUND)
            return (m & *allowed) ? ar : ROUTE_NOT_ALLOWED;
        if (strncmp(rest, "documents", 9) == 0) {
            tail = rest + 9;
        } else if (strncmp(rest, "images", 6) == 0) {
            *kind = KIND_IMG;
            tail = rest + 6;
        } else {
            return ROUTE_NOT_FOUND;
        }
        if (*tail == '\0') {
            *allowed = M_GET | M_POST;
            return m == M_GET ? ROUTE_LIST : m == M_POST ? ROUTE_STORE : ROUTE_NOT_ALLOWED;
        }
        if (*tail != '/') {
            *id = 0;
            return ROUTE_NOT_FOUND;
        }
        /* {id}/export: documents only (§12); regenerate and revisions (§16) */
        const char *sub = strchr(tail + 1, '/');
        size_t idlen = sub ? (size_t)(sub - tail - 1) : strlen(tail + 1);
        if (!parse_id(tail + 1, idlen, id)) {
            *id = 0;
            return ROUTE_NOT_FOUND;
        }
        if (sub) {
            route_t rt = sub_route(sub, *kind, m, allowed);
            if (rt == ROUTE_NOT_FOUND)
                *id = 0;
            return rt;
        }
        *allowed = M_GET | M_PUT | M_PATCH | M_DELETE;
        switch (m) {
        case M_GET: return ROUTE_SHOW;
        case M_PUT:
        case M_PATCH: return ROUTE_UPDATE;
        case M_DELETE: return ROUTE_DELETE;
        default: return ROUTE_NOT_ALLOWED;
        }
    }
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0) {
        *allowed = M_GET;
        return m != M_GET ? ROUTE_NOT_ALLOWED : path[1] == 'h' ? ROUTE_HEALTHZ : ROUTE_READYZ;
    }
    if (strncmp(path, "/media/", 7) == 0) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_MEDIA : ROUTE_NOT_ALLOWED;
    }
    if (strcmp(path, "/metrics") == 0) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_METRICS : ROUTE_NOT_ALLOWED;
    }
    if (strncmp(path, "/api/", 5) != 0 && api_web_asset(path)) {
        *allowed = M_GET;
        return m == M_GET ? ROUTE_WEB : ROUTE_NOT_ALLOWED;
    }
    return ROUTE_NOT_FOUND;
}

/* The route template of a request for the metrics: a known path keeps its template
 * even when its method is refused (405); unknown paths are "other". */
static metrics_route_t metric_route(const char *path, route_t rt, rec_kind_t kind, int allowed)
{
    bool img = kind == KIND_IMG;
    switch (rt) {
    case ROUTE_NOT_FOUND: return MR_OTHER;
    case ROUTE_LIST:
    case ROUTE_STORE: return img ? MR_IMAGES : MR_DOCUMENTS;
    case ROUTE_SHOW:
    case ROUTE_UPDATE:
    case ROUTE_DELETE: return img ? MR_IMAGE : MR_DOCUMENT;
    case ROUTE_EXPORT: return MR_DOCUMENT_EXPORT;
    case ROUTE_REGENERATE:
    case ROUTE_ACTIONS:
    case ROUTE_REVISIONS:
    case ROUTE_REVISION:
    case ROUTE_RESTORE: return img ? MR_IMAGE : MR_DOCUMENT; /* a record's own routes */
    case ROUTE_WEB: return MR_WEBAPP;
    case ROUTE_TEMPLATES: return MR_TEMPLATES;
    case ROUTE_TEMPLATE: return MR_TEMPLATE;
    case ROUTE_HEALTHZ: return MR_HEALTHZ;
    case ROUTE_READYZ: return MR_READYZ;
    case ROUTE_MEDIA: return MR_MEDIA;
    case ROUTE_METRICS: return MR_METRICS;
    case ROUTE_OPENAPI: return MR_OPENAPI;
    case ROUTE_USAGE:
    case ROUTE_ADMIN_USERS:
    case ROUTE_ADMIN_USER:
    case ROUTE_ADMIN_USER_KEYS:
    case ROUTE_ADMIN_KEY:
    case ROUTE_ADMIN_USAGE: return MR_USAGE + (int)(rt - ROUTE_USAGE);
    case ROUTE_NOT_ALLOWED: break;
    }
    int64_t id;
    int any;
    route_t ar = strncmp(path, "/api/v1/", 8) == 0 ? admin_path(path + 8, &id, &any)
                                                   : ROUTE_NOT_FOUND;
    if (ar != ROUTE_NOT_FOUND)
        return MR_USAGE + (int)(ar - ROUTE_USAGE);
    if (strncmp(path, "/api/v1/templates", 17) == 0)
        return path[17] == '/' ? MR_TEMPLATE : MR_TEMPLATES;
    if (allowed & M_POST)
        return img ? MR_IMAGES : MR_DOCUMENTS;
    if (allowed & M_DELETE)
        return img ? MR_IMAGE : MR_DOCUMENT;
    static const struct {
        const char *prefix;
        metrics_route_t mr;
    } single[] = {{"/api/v1/templates", MR_TEMPLATES}, {"/api/v1/openapi.json", MR_OPENAPI},
                  {"/healthz", MR_HEALTHZ},           {"/readyz", MR_READYZ},
                  {"/metrics", MR_METRICS},           {"/media/", MR_MEDIA}};
    for (size_t i = 0; i < ARRAY_LEN(single); i++)
        if (strncmp(path, single[i].prefix, strlen(single[i].prefix)) == 0)
            return single[i].mr;
    size_t n = strlen(path);
    if (strncmp(path, "/api/v1/documents/", 18) == 0 && n > 7 &&
        strcmp(path + n - 7, "/export") == 0)
        return MR_DOCUMENT_EXPORT;
    return strncmp(path, "/api/", 5) != 0 ? MR_WEBAPP : MR_OTHER; /* the app's files */
}

static void dispatch(app_t *app, http_req_t *r, route_t rt, rec_kind_t kind, int64_t id,
                     int allowed);

/* The key's scope (§19): admin keys take the /admin routes only, and only they do; read
 * keys only GET (and HEAD). Unknown paths and refused methods are answered 404/405 by
 * dispatch first. False when it has answered 403. */
static bool scope_allows(http_req_t *r, const key_auth_t *k, route_t rt)
{
    if (rt == ROUTE_NOT_FOUND || rt == ROUTE_NOT_ALLOWED)
        return true;
    if (api_route_admin(rt) != (k->scope == SCOPE_ADMIN)) {
        api_error(r, 403, "This action is unauthorized.");
        return false;
    }
    if (k->scope == SCOPE_READ && method_bit(r->method) != M_GET) {
        api_error(r, 403, "This key may only read.");
        return false;
    }
    return true;
}

/* The monthly quota of a route that generates (§19), from the usage read with the key:
 * used up (used >= limit) answers 403 before anything is stored. A generation that
 * started under the limit is never cut off, so a month may end a little over it.
 * Creates, regenerations (§16) and actions (§17) generate. */
static bool quota_allows(app_t *app, http_req_t *r, const key_auth_t *k, route_t rt,
                         rec_kind_t kind)
{
    if (rt != ROUTE_STORE && rt != ROUTE_REGENERATE && rt != ROUTE_ACTIONS)
        return true;
    bool img = kind == KIND_IMG;
    int64_t limit = img ? k->quota_images : k->quota_words;
    int64_t used = img ? k->used.images : k->used.words;
    r->quota_limit = limit; /* for the records service's reservation (records/quota.c) */
    r->quota_used = used;
    if (limit < 0 || used < limit)
        return true;
    /* a retry of a create already answered (Idempotency-Key, §11) gets that answer: the
     * key's hook replays it (or answers 409/422) and creates nothing */
    const char *idem = http_header(r, "Idempotency-Key");
    bool held = false;
    store_conn_t *c = idem ? api_conn(app, r) : NULL;
    if (c && store_idem_held(c, k->user_id, idem, now_us(), &held) == STORE_OK && held)
        return true;
    metrics_quota_refused(img ? MQ_IMAGES : MQ_WORDS);
    api_error(r, 403, img ? "Your monthly image quota is used up."
                          : "Your monthly word quota is used up.");
    return false;
}

void api_handle(void *appv, http_req_t *r)
{
    app_t *app = appv;
    rec_kind_t kind;
    int64_t id;
    int allowed;
    route_t rt = api_route(r->method, r->path, &kind, &id, &allowed);
    r->metric_route = (int)metric_route(r->path, rt, kind, allowed);
    /* the API's description is public, like /healthz */
    bool api = strncmp(r->path, "/api/v1/", 8) == 0 && rt != ROUTE_OPENAPI;
    /* a GET under /api/v1 only reads: its key and its records in one read session */
    store_conn_t *session = NULL;
    if (api && strcmp(r->method, "GET") == 0 && (session = api_conn(app, r)) == NULL)
        return;
    if (session)
        store_read_begin(session); /* nothing on a backend without read sessions */
    /* everything under /api/v1 is authenticated and rate limited, known route or not;
     * a body over --max-body is a 413 after that (with the rate-limit headers); then the
     * key's scope and the user's quota are checked (§19) */
    key_auth_t key;
    if (!api || admit(app, r, &key)) {
        if (r->body_too_large)
            api_error(r, 413, "Payload too large.");
        else if (!api || (scope_allows(r, &key, rt) && quota_allows(app, r, &key, rt, kind)))
            dispatch(app, r, rt, kind, id, allowed);
    }
    if (session)
        store_read_end(session);
}

static void dispatch(app_t *app, http_req_t *r, route_t rt, rec_kind_t kind, int64_t id,
                     int allowed)
{
    switch (rt) {
    case ROUTE_NOT_FOUND: api_not_found(r); break;
    case ROUTE_NOT_ALLOWED: not_allowed(r, allowed); break;
    case ROUTE_LIST: api_records_list(app, r, kind); break;
    case ROUTE_STORE: api_records_store(app, r, kind); break;
    case ROUTE_SHOW: api_records_show(app, r, kind, id); break;
    case ROUTE_UPDATE: api_records_update(app, r, kind, id); break;
    case ROUTE_DELETE: api_records_delete(app, r, kind, id); break;
    case ROUTE_EXPORT: api_export(app, r, id); break;
    case ROUTE_REGENERATE: api_records_regenerate(app, r, kind, id); break;
    case ROUTE_ACTIONS: api_documents_action(app, r, id); break;
    case ROUTE_REVISIONS: api_revisions_list(app, r, kind, id); break;
    case ROUTE_REVISION: api_revision_show(app, r, kind, id, api_route_revision(r->path)); break;
    case ROUTE_RESTORE: api_revision_restore(app, r, kind, id, api_route_revision(r->path)); break;
    case ROUTE_TEMPLATES: api_templates(app, r); break;
    case ROUTE_TEMPLATE: api_template(app, r, id); break;
    case ROUTE_HEALTHZ: api_healthz(app, r); break;
    case ROUTE_READYZ: api_readyz(app, r); break;
    case ROUTE_MEDIA: api_media(app, r, r->path + 7); break;
    case ROUTE_METRICS: api_metrics(app, r); break;
    case ROUTE_OPENAPI: api_openapi(app, r); break;
    case ROUTE_WEB: api_web(app, r); break;
    case ROUTE_USAGE: api_usage(app, r); break;
    case ROUTE_ADMIN_USERS:
    case ROUTE_ADMIN_USER:
    case ROUTE_ADMIN_USER_KEYS:
    case ROUTE_ADMIN_KEY:
    case ROUTE_ADMIN_USAGE: api_admin(app, r, rt, id); break;
    }
}
