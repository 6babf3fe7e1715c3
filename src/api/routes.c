/* routes.c — the route table: one row per route and method set, carrying its path
 * pattern, the route's name (route_t, for the key's scope and the quota in router.c),
 * its handler and its metric label. api_route() matches a request against it; the
 * router (router.c) calls the row's handler once the request has passed its checks.
 *
 * A pattern is literal but for whole segments "{kind}" (documents or images), "{id}" and
 * "{n}" (positive decimal integers, no leading zero: anything else is 404), and a
 * trailing "*" (the rest of the path, empty included). A path that no row's pattern
 * matches is 404 (metric label "other"); one that rows match for other methods only is
 * 405 with those methods in Allow, labelled with the path's template like the methods
 * it takes. A row may add a condition on the match (when): a row whose condition fails
 * does not match (the 52 templates take no PATCH or DELETE, so their Allow is GET). */
#include "api/api_int.h"

#include "gen/templates.h"

#include <pthread.h>
#include <string.h>

typedef void (*route_handler_fn)(app_t *app, http_req_t *r, const route_match_t *m);

struct route_row {
    int methods;         /* M_ bits this row answers */
    const char *pattern; /* see above */
    bool (*when)(const route_match_t *m, const char *path); /* NULL: always */
    route_t route;
    route_handler_fn handler;
    metrics_route_t metric[2]; /* the template's label for documents and for images */
};

/* ---- the handlers, as the table calls them ---- */

static void h_list(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_records_list(a, r, m->kind);
}
static void h_store(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_records_store(a, r, m->kind);
}
static void h_show(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_records_show(a, r, m->kind, m->id);
}
static void h_update(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_records_update(a, r, m->kind, m->id);
}
static void h_delete(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_records_delete(a, r, m->kind, m->id);
}
static void h_tags(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_tags_index(a, r);
}
static void h_bulk(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_bulk(a, r, m->kind);
}
static void h_draft(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_draft(a, r, m->id);
}
static void h_export(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_export(a, r, m->id);
}
static void h_regenerate(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_records_regenerate(a, r, m->kind, m->id);
}
static void h_actions(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_documents_action(a, r, m->id);
}
static void h_revisions(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_revisions_list(a, r, m->kind, m->id);
}
static void h_revision(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_revision_show(a, r, m->kind, m->id, m->n);
}
static void h_restore(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_revision_restore(a, r, m->kind, m->id, m->n);
}
static void h_templates(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_templates(a, r);
}
static void h_template(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_template(a, r, m->id);
}
static void h_webhooks(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_webhooks(a, r);
}
static void h_webhook(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_webhook(a, r, m->id);
}
static void h_webhook_rotate(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_webhook_rotate(a, r, m->id);
}
static void h_webhook_ping(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_webhook_ping(a, r, m->id);
}
static void h_webhook_deliveries(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_webhook_deliveries(a, r, m->id);
}
static void h_webhook_retry(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_webhook_retry(a, r, m->id, m->n);
}
static void h_usage(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_usage(a, r);
}
static void h_me(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_me(a, r);
}
static void h_session_csrf(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_session_csrf(a, r);
}
static void h_session(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_session(a, r);
}
static void h_me_sessions(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_me_sessions(a, r);
}
static void h_me_password(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_me_password(a, r);
}
static void h_keys(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_keys_own(a, r);
}
static void h_key(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_key_own(a, r, m->id);
}
static void h_admin(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_admin(a, r, m->route, m->id);
}
static void h_healthz(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_healthz(a, r);
}
static void h_oidc(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_oidc_info(a, r);
}
static void h_oidc_login(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_oidc_login(a, r);
}
static void h_oidc_callback(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_oidc_callback(a, r);
}
static void h_readyz(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_readyz(a, r);
}
static void h_media(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_media(a, r, m->rest);
}
static void h_metrics(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_metrics(a, r);
}
static void h_openapi(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_openapi(a, r);
}
static void h_web(app_t *a, http_req_t *r, const route_match_t *m)
{
    api_web(a, r);
}

/* A user's own template (§18): the 52 are read-only. */
static bool own_template(const route_match_t *m, const char *path)
{
    return m->id > TEMPLATE_COUNT;
}

/* One of the web app's compiled-in files (not under /api/). */
static bool web_file(const route_match_t *m, const char *path)
{
    return strncmp(path, "/api/", 5) != 0 && api_web_asset(path) != NULL;
}

#define L(mr) {mr, mr}
#define RECORD {MR_DOCUMENT, MR_IMAGE}
#define COLLECTION {MR_DOCUMENTS, MR_IMAGES}

static const route_row_t routes[] = {
    {M_GET, "/api/v1/openapi.json", NULL, ROUTE_OPENAPI, h_openapi, L(MR_OPENAPI)},
    /* the 52 and the user's own templates (§14, §18) */
    {M_GET | M_POST, "/api/v1/templates", NULL, ROUTE_TEMPLATES, h_templates, L(MR_TEMPLATES)},
    {M_GET, "/api/v1/templates/{id}", NULL, ROUTE_TEMPLATE, h_template, L(MR_TEMPLATE)},
    {M_PATCH | M_DELETE, "/api/v1/templates/{id}", own_template, ROUTE_TEMPLATE, h_template,
     L(MR_TEMPLATE)},
    /* usage and the admin routes (§19; admin.c tells the methods apart) */
    {M_GET, "/api/v1/usage", NULL, ROUTE_USAGE, h_usage, L(MR_USAGE)},
    {M_GET, "/api/v1/me", NULL, ROUTE_ME, h_me, L(MR_ME)},
    /* signing in, the user's sessions, password and own keys (§21) */
    {M_GET, "/api/v1/session/csrf", NULL, ROUTE_SESSION_CSRF, h_session_csrf,
     L(MR_SESSION_CSRF)},
    {M_POST | M_DELETE, "/api/v1/session", NULL, ROUTE_SESSION, h_session, L(MR_SESSION)},
    {M_GET | M_DELETE, "/api/v1/me/sessions", NULL, ROUTE_ME_SESSIONS, h_me_sessions,
     L(MR_ME_SESSIONS)},
    {M_PUT, "/api/v1/me/password", NULL, ROUTE_ME_PASSWORD, h_me_password, L(MR_ME_PASSWORD)},
    {M_GET | M_POST, "/api/v1/keys", NULL, ROUTE_KEYS, h_keys, L(MR_KEYS)},
    {M_DELETE, "/api/v1/keys/{id}", NULL, ROUTE_KEY, h_key, L(MR_KEY)},
    {M_GET | M_POST, "/api/v1/admin/users", NULL, ROUTE_ADMIN_USERS, h_admin,
     L(MR_ADMIN_USERS)},
    {M_GET, "/api/v1/admin/usage", NULL, ROUTE_ADMIN_USAGE, h_admin, L(MR_ADMIN_USAGE)},
    {M_GET | M_PATCH | M_DELETE, "/api/v1/admin/users/{id}", NULL, ROUTE_ADMIN_USER, h_admin,
     L(MR_ADMIN_USER)},
    {M_GET | M_POST, "/api/v1/admin/users/{id}/keys", NULL, ROUTE_ADMIN_USER_KEYS, h_admin,
     L(MR_ADMIN_USER_KEYS)},
    {M_DELETE, "/api/v1/admin/keys/{id}", NULL, ROUTE_ADMIN_KEY, h_admin, L(MR_ADMIN_KEY)},
    /* webhooks (§22) */
    {M_GET | M_POST, "/api/v1/webhooks", NULL, ROUTE_WEBHOOKS, h_webhooks, L(MR_WEBHOOKS)},
    {M_GET | M_PATCH | M_DELETE, "/api/v1/webhooks/{id}", NULL, ROUTE_WEBHOOK, h_webhook,
     L(MR_WEBHOOK)},
    {M_POST, "/api/v1/webhooks/{id}/rotate", NULL, ROUTE_WEBHOOK_ROTATE, h_webhook_rotate,
     L(MR_WEBHOOK_ROTATE)},
    {M_POST, "/api/v1/webhooks/{id}/ping", NULL, ROUTE_WEBHOOK_PING, h_webhook_ping,
     L(MR_WEBHOOK_PING)},
    {M_GET, "/api/v1/webhooks/{id}/deliveries", NULL, ROUTE_WEBHOOK_DELIVERIES,
     h_webhook_deliveries, L(MR_WEBHOOK_DELIVERIES)},
    {M_POST, "/api/v1/webhooks/{id}/deliveries/{n}/retry", NULL, ROUTE_WEBHOOK_RETRY,
     h_webhook_retry, L(MR_WEBHOOK_RETRY)},
    /* documents and images (§4–§9), a document's export (§12), regeneration and
     * revisions (§16), actions (§17) */
    {M_GET, "/api/v1/tags", NULL, ROUTE_TAGS, h_tags, L(MR_TAGS)},
    {M_POST, "/api/v1/{kind}/bulk", NULL, ROUTE_BULK, h_bulk, {MR_DOCUMENTS_BULK, MR_IMAGES_BULK}},
    {M_GET | M_PUT | M_DELETE, "/api/v1/documents/{id}/draft", NULL, ROUTE_DRAFT, h_draft,
     L(MR_DOCUMENT_DRAFT)},
    {M_GET, "/api/v1/{kind}", NULL, ROUTE_LIST, h_list, COLLECTION},
    {M_POST, "/api/v1/{kind}", NULL, ROUTE_STORE, h_store, COLLECTION},
    {M_GET, "/api/v1/{kind}/{id}", NULL, ROUTE_SHOW, h_show, RECORD},
    {M_PUT | M_PATCH, "/api/v1/{kind}/{id}", NULL, ROUTE_UPDATE, h_update, RECORD},
    {M_DELETE, "/api/v1/{kind}/{id}", NULL, ROUTE_DELETE, h_delete, RECORD},
    {M_GET, "/api/v1/documents/{id}/export", NULL, ROUTE_EXPORT, h_export,
     L(MR_DOCUMENT_EXPORT)},
    {M_POST, "/api/v1/{kind}/{id}/regenerate", NULL, ROUTE_REGENERATE, h_regenerate, RECORD},
    {M_POST, "/api/v1/documents/{id}/actions", NULL, ROUTE_ACTIONS, h_actions, RECORD},
    {M_GET, "/api/v1/{kind}/{id}/revisions", NULL, ROUTE_REVISIONS, h_revisions, RECORD},
    {M_GET, "/api/v1/{kind}/{id}/revisions/{n}", NULL, ROUTE_REVISION, h_revision, RECORD},
    {M_POST, "/api/v1/{kind}/{id}/revisions/{n}/restore", NULL, ROUTE_RESTORE, h_restore,
     RECORD},
    /* without a key */
    {M_GET, "/healthz", NULL, ROUTE_HEALTHZ, h_healthz, L(MR_HEALTHZ)},
    {M_GET, "/readyz", NULL, ROUTE_READYZ, h_readyz, L(MR_READYZ)},
    {M_GET, "/media/*", NULL, ROUTE_MEDIA, h_media, L(MR_MEDIA)},
    {M_GET, "/metrics", NULL, ROUTE_METRICS, h_metrics, L(MR_METRICS)},
    {M_GET, "/auth/oidc", NULL, ROUTE_OIDC, h_oidc, L(MR_OIDC)},
    {M_GET, "/auth/oidc/login", NULL, ROUTE_OIDC, h_oidc_login, L(MR_OIDC_LOGIN)},
    {M_GET, "/auth/oidc/callback", NULL, ROUTE_OIDC, h_oidc_callback, L(MR_OIDC_CALLBACK)},
    {M_GET, "/*", web_file, ROUTE_WEB, h_web, L(MR_WEBAPP)},
};

/* The '/'s of each row's pattern (a path with another count cannot match it; -1: the
 * pattern ends in '*', any count), counted once: most rows are passed over on that. */
static int row_slashes[ARRAY_LEN(routes)];
static pthread_once_t slashes_once = PTHREAD_ONCE_INIT;

static int slashes(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '/';
    return n;
}

static void count_slashes(void)
{
    for (size_t i = 0; i < ARRAY_LEN(routes); i++)
        row_slashes[i] = strchr(routes[i].pattern, '*') ? -1 : slashes(routes[i].pattern);
}

int api_method_bit(const char *m)
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

/* Matches path against pattern; fills in the captures of m. */
static bool match(const char *pat, const char *path, route_match_t *m)
{
    const char *s = path;
    while (*pat) {
        if (*pat == '*') {
            m->rest = s;
            return true;
        }
        if (*pat != '{') {
            if (*pat++ != *s++)
                return false;
            continue;
        }
        size_t len = 0;
        while (s[len] && s[len] != '/')
            len++;
        if (pat[1] == 'k') { /* {kind} */
            if (len == 9 && memcmp(s, "documents", 9) == 0)
                m->kind = KIND_DOC;
            else if (len == 6 && memcmp(s, "images", 6) == 0)
                m->kind = KIND_IMG;
            else
                return false;
        } else if (!parse_id(s, len, pat[1] == 'i' ? &m->id : &m->n)) { /* {id}, {n} */
            return false;
        }
        pat = strchr(pat, '}') + 1;
        s += len;
    }
    return *s == '\0';
}

route_t api_route(const char *method, const char *raw_path, route_match_t *m)
{
    memset(m, 0, sizeof(*m));
    m->kind = KIND_DOC;
    m->route = ROUTE_NOT_FOUND;
    m->metric = MR_OTHER;
    int bit = api_method_bit(method);
    size_t n = strlen(raw_path);
    char path[512];
    if (n >= sizeof(path))
        return ROUTE_NOT_FOUND;
    memcpy(path, raw_path, n + 1);
    if (n > 8 && path[n - 1] == '/' && strncmp(path, "/api/v1/", 8) == 0)
        path[n - 1] = '\0'; /* one trailing slash is ignored on API routes */

    pthread_once(&slashes_once, count_slashes);
    int nslash = slashes(path);
    route_match_t first = {0}; /* the first row whose path matched, for a 405 */
    for (size_t i = 0; i < ARRAY_LEN(routes); i++) {
        const route_row_t *row = &routes[i];
        if (row_slashes[i] >= 0 && row_slashes[i] != nslash)
            continue;
        route_match_t c = {.kind = KIND_DOC};
        if (!match(row->pattern, path, &c) || (row->when && !row->when(&c, path)))
            continue;
        if (!m->allowed) {
            first = c;
            first.metric = row->metric[c.kind];
        }
        m->allowed |= row->methods;
        if (!(row->methods & bit))
            continue;
        c.row = row;
        c.route = row->route;
        c.allowed = m->allowed;
        c.metric = row->metric[c.kind];
        *m = c;
        break;
    }
    if (!m->row && m->allowed) {
        int allowed = m->allowed;
        *m = first;
        m->route = ROUTE_NOT_ALLOWED;
        m->allowed = allowed;
    }
    if (m->rest) /* into the path given (the media and web rows have one: no slash cut) */
        m->rest = raw_path + (m->rest - path);
    return m->route;
}

void api_route_call(app_t *app, http_req_t *r, const route_match_t *m)
{
    m->row->handler(app, r, m);
}
