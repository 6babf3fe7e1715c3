/* fuzz_list.c — list query parameters (§4) and pagination links on arbitrary query
 * strings. Invariants: values fall back into their allowed sets, and links are
 * NUL-free, start with the base URL and carry exactly the page asked for. */
#include "api/api_int.h"
#include "gen/templates.h"
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *q = strndup((const char *)data + 1, size - 1);
    http_req_t *r = http_req_detached("GET", "/api/v1/documents", q, NULL, 0);
    free(q);
    rec_kind_t kind = data[0] & 1 ? KIND_IMG : KIND_DOC;
    list_query_t lq;
    int64_t page;
    if (api_list_params(r, kind, &lq, &page) == 0) {
        FUZZ_CHECK(lq.per_page == 10 || lq.per_page == 25 || lq.per_page == 50 || lq.per_page == 100);
        FUZZ_CHECK(page >= 1 && lq.page >= 1 && lq.page <= page);
        FUZZ_CHECK(lq.favorite >= -1 && lq.favorite <= 1);
        /* none, one of the 52, or a user's own (§18: checked against the user later) */
        FUZZ_CHECK((lq.template_id >= 0 && lq.template_id <= TEMPLATE_COUNT) ||
                   lq.template_id >= CUSTOM_TEMPLATE_MIN_ID);
        buf_t u;
        buf_init(&u);
        app_t app = {.public_url = "http://h"};
        api_page_url(&u, &app, r, kind, 7);
        FUZZ_CHECK(strncmp(u.data, "http://h/api/v1/", 16) == 0);
        FUZZ_CHECK(strlen(u.data) == u.len);
        FUZZ_CHECK(strstr(u.data, "page=7") != NULL);
        buf_free(&u);
    } else {
        FUZZ_CHECK(http_status(r) == 422);
    }
    http_req_free_detached(r);
    return 0;
}
