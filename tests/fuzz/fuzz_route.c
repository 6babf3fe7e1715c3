/* fuzz_route.c — the router on arbitrary paths and methods. Invariants: record
 * routes (a record's, its revisions', an admin user's or key's, a template's) carry a positive id, a 405 names the methods allowed, and the answer does
 * not depend on anything after a NUL. */
#include "api/api_int.h"
#include "fuzz.h"

#include <string.h>

static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "X"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *method = methods[data[0] % 8];
    char path[1024];
    size_t n = size - 1 < sizeof(path) - 1 ? size - 1 : sizeof(path) - 1;
    memcpy(path, data + 1, n);
    path[n] = '\0';
    route_match_t m;
    route_t rt = api_route(method, path, &m);
    rec_kind_t kind = m.kind;
    int64_t id = m.id;
    int allowed = m.allowed;
    bool with_id = rt == ROUTE_SHOW || rt == ROUTE_UPDATE || rt == ROUTE_DELETE ||
                   rt == ROUTE_EXPORT || rt == ROUTE_REGENERATE || rt == ROUTE_REVISIONS ||
                   rt == ROUTE_REVISION || rt == ROUTE_RESTORE || rt == ROUTE_ADMIN_USER ||
                   rt == ROUTE_ADMIN_USER_KEYS || rt == ROUTE_ADMIN_KEY || rt == ROUTE_TEMPLATE;
    if (with_id)
        FUZZ_CHECK(id >= 1 && strncmp(path, "/api/v1/", 8) == 0);
    else if (rt != ROUTE_NOT_ALLOWED) /* a 405 on a record path keeps its id */
        FUZZ_CHECK(id == 0);
    if (rt == ROUTE_NOT_ALLOWED)
        FUZZ_CHECK(allowed != 0);
    if (rt == ROUTE_MEDIA)
        FUZZ_CHECK(strncmp(path, "/media/", 7) == 0 && m.rest == path + 7);
    /* a row exactly when answered by a handler; a label exactly when the path is known */
    FUZZ_CHECK((m.row != NULL) == (rt != ROUTE_NOT_FOUND && rt != ROUTE_NOT_ALLOWED));
    FUZZ_CHECK((m.metric == MR_OTHER) == (rt == ROUTE_NOT_FOUND));
    FUZZ_CHECK(kind == KIND_DOC || kind == KIND_IMG);
    return 0;
}
