/* router.c — the route table and the checks every /api/v1 request passes.
 *
 * Order for /api/v1: authentication (401; bad keys are rate limited per client
 * address), the key's rate limit (429), then the route: an unknown path is 404,
 * a known path with another method 405 with Allow, an {id} that is not a positive
 * decimal integer 404. Other paths: /healthz, /readyz, /media/<key>.png. */
#include "api/api.h"

#include "auth/keys.h"
#include "core/log.h"

#include <arpa/inet.h>
#include <microhttpd.h>
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
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char addr[INET6_ADDRSTRLEN] = "unknown";
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr, sizeof(addr));
        else if (sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr, sizeof(addr));
    }
    snprintf(out, outlen, "ip:%s", addr);
}

/* Authenticates and rate limits; false when it has answered. */
static bool admit(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return false;
    int64_t uid, kid;
    int rc = keys_authenticate(c, http_header(r, "Authorization"), &uid, &kid);
    if (rc == STORE_NOTFOUND) {
        char bucket[80];
        client_bucket(r, bucket, sizeof(bucket));
        if (!ratelimit_check(app->rl, c, r, bucket)) {
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
    r->user_id = uid;
    char bucket[40];
    snprintf(bucket, sizeof(bucket), "key:%lld", (long long)kid);
    if (!ratelimit_check(app->rl, c, r, bucket)) {
        api_error(r, 429, "Too Many Attempts.");
        return false;
    }
    return true;
}

/* /api/v1/<rest> */
static void route_v1(app_t *app, http_req_t *r, const char *rest)
{
    int m = method_bit(r->method);
    rec_kind_t kind;
    const char *tail;
    if (strncmp(rest, "documents", 9) == 0) {
        kind = KIND_DOC;
        tail = rest + 9;
    } else if (strncmp(rest, "images", 6) == 0) {
        kind = KIND_IMG;
        tail = rest + 6;
    } else if (strcmp(rest, "templates") == 0) {
        if (m == M_GET)
            api_templates(app, r);
        else
            not_allowed(r, M_GET);
        return;
    } else {
        api_not_found(r);
        return;
    }
    if (*tail == '\0') {
        if (m == M_GET)
            api_records_list(app, r, kind);
        else if (m == M_POST)
            api_records_store(app, r, kind);
        else
            not_allowed(r, M_GET | M_POST);
        return;
    }
    int64_t id;
    if (*tail != '/' || !parse_id(tail + 1, strlen(tail + 1), &id)) {
        api_not_found(r);
        return;
    }
    switch (m) {
    case M_GET: api_records_show(app, r, kind, id); break;
    case M_PUT:
    case M_PATCH: api_records_update(app, r, kind, id); break;
    case M_DELETE: api_records_delete(app, r, kind, id); break;
    default: not_allowed(r, M_GET | M_PUT | M_PATCH | M_DELETE);
    }
}

void api_handle(void *appv, http_req_t *r)
{
    app_t *app = appv;
    size_t n = strlen(r->path);
    char *path = arena_strndup(&r->arena, r->path, n);
    if (n > 8 && path[n - 1] == '/' && strncmp(path, "/api/v1/", 8) == 0)
        path[n - 1] = '\0'; /* one trailing slash is ignored on API routes */
    int m = method_bit(r->method);

    if (strncmp(path, "/api/v1/", 8) == 0) {
        if (admit(app, r))
            route_v1(app, r, path + 8);
        return;
    }
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0) {
        if (m != M_GET)
            not_allowed(r, M_GET);
        else if (path[1] == 'h')
            api_healthz(app, r);
        else
            api_readyz(app, r);
        return;
    }
    if (strncmp(path, "/media/", 7) == 0) {
        if (m != M_GET)
            not_allowed(r, M_GET);
        else
            api_media(app, r, path + 7);
        return;
    }
    api_not_found(r);
}
