/* test_route.c — the route table (API.md §4): paths, methods, ids, 404 vs 405 and its
 * Allow set, and each route's metric label (a 405 keeps its path's). */
#include "api/api_int.h"
#include "test.h"

static const struct {
    const char *method, *path;
    route_t want;
    rec_kind_t kind;
    int64_t id;
} cases[] = {
    {"GET", "/api/v1/documents", ROUTE_LIST, KIND_DOC, 0},
    {"HEAD", "/api/v1/documents", ROUTE_LIST, KIND_DOC, 0},
    {"POST", "/api/v1/documents", ROUTE_STORE, KIND_DOC, 0},
    {"PUT", "/api/v1/documents", ROUTE_NOT_ALLOWED, KIND_DOC, 0},
    {"GET", "/api/v1/documents/", ROUTE_LIST, KIND_DOC, 0},
    {"GET", "/api/v1/documents/12", ROUTE_SHOW, KIND_DOC, 12},
    {"PUT", "/api/v1/documents/12", ROUTE_UPDATE, KIND_DOC, 12},
    {"PATCH", "/api/v1/documents/12/", ROUTE_UPDATE, KIND_DOC, 12},
    {"DELETE", "/api/v1/documents/9223372036854775807", ROUTE_DELETE, KIND_DOC, INT64_MAX},
    {"POST", "/api/v1/documents/12", ROUTE_NOT_ALLOWED, KIND_DOC, 12},
    {"GET", "/api/v1/documents/0", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/012", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/-1", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/1x", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/%31", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/9223372036854775808", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/1/2", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documentsx", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents//", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/12/export", ROUTE_EXPORT, KIND_DOC, 12},
    {"HEAD", "/api/v1/documents/12/export/", ROUTE_EXPORT, KIND_DOC, 12},
    {"POST", "/api/v1/documents/12/export", ROUTE_NOT_ALLOWED, KIND_DOC, 12},
    {"DELETE", "/api/v1/documents/12/export", ROUTE_NOT_ALLOWED, KIND_DOC, 12},
    {"GET", "/api/v1/documents/0/export", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/x/export", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/12/exports", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/documents/12/export/pdf", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/images/12/export", ROUTE_NOT_FOUND, KIND_IMG, 0},
    {"GET", "/api/v1/images", ROUTE_LIST, KIND_IMG, 0},
    {"POST", "/api/v1/images", ROUTE_STORE, KIND_IMG, 0},
    {"DELETE", "/api/v1/images/7", ROUTE_DELETE, KIND_IMG, 7},
    {"GET", "/api/v1/templates", ROUTE_TEMPLATES, KIND_DOC, 0},
    {"DELETE", "/api/v1/templates", ROUTE_NOT_ALLOWED, KIND_DOC, 0},
    {"POST", "/api/v1/templates", ROUTE_TEMPLATES, KIND_DOC, 0},
    {"GET", "/api/v1/templates/52", ROUTE_TEMPLATE, KIND_DOC, 52},
    {"HEAD", "/api/v1/templates/1", ROUTE_TEMPLATE, KIND_DOC, 1},
    {"PATCH", "/api/v1/templates/52", ROUTE_NOT_ALLOWED, KIND_DOC, 52},
    {"DELETE", "/api/v1/templates/1", ROUTE_NOT_ALLOWED, KIND_DOC, 1},
    {"GET", "/api/v1/templates/1001", ROUTE_TEMPLATE, KIND_DOC, 1001},
    {"PATCH", "/api/v1/templates/1001/", ROUTE_TEMPLATE, KIND_DOC, 1001},
    {"DELETE", "/api/v1/templates/77", ROUTE_TEMPLATE, KIND_DOC, 77},
    {"POST", "/api/v1/templates/1001", ROUTE_NOT_ALLOWED, KIND_DOC, 1001},
    {"GET", "/api/v1/templates/0", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/templates/01", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/templates/1/x", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1/nope", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v1", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/api/v2/documents", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/healthz", ROUTE_HEALTHZ, KIND_DOC, 0},
    {"POST", "/healthz", ROUTE_NOT_ALLOWED, KIND_DOC, 0},
    {"GET", "/healthz/", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/readyz", ROUTE_READYZ, KIND_DOC, 0},
    {"GET", "/media/0123456789abcdef0123456789abcdef.png", ROUTE_MEDIA, KIND_DOC, 0},
    {"DELETE", "/media/x.png", ROUTE_NOT_ALLOWED, KIND_DOC, 0},
    {"GET", "/", ROUTE_WEB, KIND_DOC, 0},
    {"HEAD", "/", ROUTE_WEB, KIND_DOC, 0},
    {"POST", "/", ROUTE_NOT_ALLOWED, KIND_DOC, 0},
    {"GET", "/index.html", ROUTE_WEB, KIND_DOC, 0},
    {"GET", "/app.js", ROUTE_WEB, KIND_DOC, 0},
    {"GET", "/app.css", ROUTE_WEB, KIND_DOC, 0},
    {"GET", "/nope.js", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "/app.js/", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"GET", "//app.js", ROUTE_NOT_FOUND, KIND_DOC, 0},
    {"OPTIONS", "/api/v1/documents", ROUTE_NOT_ALLOWED, KIND_DOC, 0},
};

/* The metric label (obs/metrics.h) and, for a 405, the Allow set. */
static const struct {
    const char *method, *path;
    metrics_route_t metric;
    int allowed; /* checked for a 405 */
} labels[] = {
    {"GET", "/api/v1/documents", MR_DOCUMENTS, 0},
    {"PUT", "/api/v1/documents/", MR_DOCUMENTS, M_GET | M_POST},
    {"POST", "/api/v1/images", MR_IMAGES, 0},
    {"GET", "/api/v1/documents/3", MR_DOCUMENT, 0},
    {"POST", "/api/v1/images/3", MR_IMAGE, M_GET | M_PUT | M_PATCH | M_DELETE},
    {"GET", "/api/v1/documents/3/export", MR_DOCUMENT_EXPORT, 0},
    {"POST", "/api/v1/documents/3/export/", MR_DOCUMENT_EXPORT, M_GET},
    {"POST", "/api/v1/documents/3/regenerate", MR_DOCUMENT, 0},
    {"GET", "/api/v1/images/3/regenerate", MR_IMAGE, M_POST},
    {"POST", "/api/v1/documents/3/actions", MR_DOCUMENT, 0},
    {"GET", "/api/v1/documents/3/actions", MR_DOCUMENT, M_POST},
    {"GET", "/api/v1/images/3/revisions", MR_IMAGE, 0},
    {"POST", "/api/v1/images/3/revisions", MR_IMAGE, M_GET},
    {"DELETE", "/api/v1/documents/3/revisions/2", MR_DOCUMENT, M_GET},
    {"GET", "/api/v1/documents/3/revisions/2/restore", MR_DOCUMENT, M_POST},
    {"GET", "/api/v1/templates", MR_TEMPLATES, 0},
    {"PUT", "/api/v1/templates/", MR_TEMPLATES, M_GET | M_POST},
    {"PATCH", "/api/v1/templates/7", MR_TEMPLATE, M_GET},
    {"POST", "/api/v1/templates/1001", MR_TEMPLATE, M_GET | M_PATCH | M_DELETE},
    {"GET", "/api/v1/usage", MR_USAGE, 0},
    {"POST", "/api/v1/usage/", MR_USAGE, M_GET},
    {"GET", "/api/v1/me", MR_ME, 0},
    {"DELETE", "/api/v1/me", MR_ME, M_GET},
    {"POST", "/api/v1/admin/users", MR_ADMIN_USERS, 0},
    {"PUT", "/api/v1/admin/users/", MR_ADMIN_USERS, M_GET | M_POST},
    {"PATCH", "/api/v1/admin/users/4", MR_ADMIN_USER, 0},
    {"POST", "/api/v1/admin/users/4/", MR_ADMIN_USER, M_GET | M_PATCH | M_DELETE},
    {"GET", "/api/v1/admin/users/4/keys", MR_ADMIN_USER_KEYS, 0},
    {"DELETE", "/api/v1/admin/users/4/keys", MR_ADMIN_USER_KEYS, M_GET | M_POST},
    {"DELETE", "/api/v1/admin/keys/4", MR_ADMIN_KEY, 0},
    {"GET", "/api/v1/admin/keys/4", MR_ADMIN_KEY, M_DELETE},
    {"POST", "/api/v1/admin/usage", MR_ADMIN_USAGE, M_GET},
    {"GET", "/api/v1/openapi.json", MR_OPENAPI, 0},
    {"POST", "/healthz", MR_HEALTHZ, M_GET},
    {"GET", "/readyz", MR_READYZ, 0},
    {"GET", "/metrics", MR_METRICS, 0},
    {"PUT", "/media/a.png", MR_MEDIA, M_GET},
    {"GET", "/", MR_WEBAPP, 0},
    {"DELETE", "/app.js", MR_WEBAPP, M_GET},
    {"GET", "/api/v1/nope", MR_OTHER, 0},
    {"GET", "/no/such/path", MR_OTHER, 0},
    {"GET", "/api/v1/documents/0", MR_OTHER, 0},
};

int main(void)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        route_match_t m;
        route_t rt = api_route(cases[i].method, cases[i].path, &m);
        CHECK_MSG(rt == cases[i].want, "%s %s: route %d, want %d", cases[i].method, cases[i].path,
                  rt, cases[i].want);
        CHECK_MSG(m.route == rt, "%s %s: m.route", cases[i].method, cases[i].path);
        CHECK_MSG(m.id == cases[i].id, "%s %s: id %lld", cases[i].method, cases[i].path,
                  (long long)m.id);
        if (rt != ROUTE_NOT_FOUND)
            CHECK_MSG(m.kind == cases[i].kind, "%s %s: kind", cases[i].method, cases[i].path);
        if (rt == ROUTE_NOT_ALLOWED)
            CHECK(m.allowed != 0);
        /* a row answers exactly the requests that are neither 404 nor 405 */
        bool answered = rt != ROUTE_NOT_FOUND && rt != ROUTE_NOT_ALLOWED;
        CHECK_MSG((m.row != NULL) == answered, "%s %s: row", cases[i].method, cases[i].path);
    }
    for (size_t i = 0; i < ARRAY_LEN(labels); i++) {
        route_match_t m;
        route_t rt = api_route(labels[i].method, labels[i].path, &m);
        CHECK_MSG(m.metric == labels[i].metric, "%s %s: metric %d, want %d", labels[i].method,
                  labels[i].path, m.metric, labels[i].metric);
        CHECK_MSG((rt == ROUTE_NOT_ALLOWED) == (labels[i].allowed != 0), "%s %s: 405 or not",
                  labels[i].method, labels[i].path);
        if (rt == ROUTE_NOT_ALLOWED)
            CHECK_MSG(m.allowed == labels[i].allowed, "%s %s: allowed %d, want %d",
                      labels[i].method, labels[i].path, m.allowed, labels[i].allowed);
    }
    /* the media row hands on the file name, from the path given */
    route_match_t m;
    const char *media = "/media/0123456789abcdef0123456789abcdef.png";
    CHECK(api_route("GET", media, &m) == ROUTE_MEDIA && m.rest == media + 7);
    /* a revision's {n} */
    CHECK(api_route("POST", "/api/v1/images/5/revisions/17/restore/", &m) == ROUTE_RESTORE &&
          m.kind == KIND_IMG && m.id == 5 && m.n == 17);
    TEST_DONE();
}
