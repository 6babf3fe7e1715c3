/* fuzz_body.c — request body decoding (form and JSON, §1) and field validation on
 * arbitrary bytes. The first byte picks the Content-Type. Invariants: either the
 * body decodes (and every field handed on is valid UTF-8 without NUL after
 * validation) or a 415/422 answer in the contract's shape is written. */
#include "api/api_int.h"
#include "fuzz.h"

#include <jansson.h>
#include <string.h>

static const char *const types[] = {"application/x-www-form-urlencoded", "application/json",
                                    "application/json; charset=utf-8", "text/plain", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    http_req_t *r = http_req_detached("POST", "/api/v1/documents", "", data + 1, size - 1);
    buf_t *resp = http_resp(r);
    kvlist_t f;
    int rc = api_decode_body(r, types[data[0] % 5], &f);
    if (rc != 0) {
        FUZZ_CHECK(http_responded(r) && (http_status(r) == 415 || http_status(r) == 422));
        json_t *j = json_loadb(resp->data, resp->len, 0, NULL);
        FUZZ_CHECK(j && json_integer_value(json_object_get(j, "status")) == http_status(r));
        json_decref(j);
    } else {
        verrs_t v;
        verrs_init(&v, http_arena(r));
        const char *keys[] = {"name", "prompt", "result", "creativity", "favorite"};
        for (size_t i = 0; i < 5; i++) {
            const char *val = field_text(&v, &f, keys[i], keys[i], i < 2, 255, NULL);
            if (val)
                FUZZ_CHECK(utf8_count(val, strlen(val)) >= 0);
        }
        if (verrs_any(&v)) {
            api_validation_error(r, &v);
            json_t *j = json_loadb(resp->data, resp->len, 0, NULL);
            FUZZ_CHECK(j && json_is_object(json_object_get(j, "message")));
            json_decref(j);
        }
    }
    http_req_free_detached(r);
    return 0;
}
