/* test_route.c — the route table (API.md §4): paths, methods, ids, 404 vs 405. */
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

int main(void)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        rec_kind_t kind;
        int64_t id;
        int allowed;
        route_t rt = api_route(cases[i].method, cases[i].path, &kind, &id, &allowed);
        CHECK_MSG(rt == cases[i].want, "%s %s: route %d, want %d", cases[i].method, cases[i].path,
                  rt, cases[i].want);
        CHECK_MSG(id == cases[i].id, "%s %s: id %lld", cases[i].method, cases[i].path, (long long)id);
        if (rt != ROUTE_NOT_FOUND)
            CHECK_MSG(kind == cases[i].kind, "%s %s: kind", cases[i].method, cases[i].path);
        if (rt == ROUTE_NOT_ALLOWED)
            CHECK(allowed != 0);
    }
    TEST_DONE();
}
