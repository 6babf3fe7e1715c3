/* test_json_scan.c — json_escape's 8-bytes-at-a-time scan: every byte value at
 * every position of strings of 1..40 bytes must come back exactly through jansson. */
#include "core/json.h"
#include "test.h"

#include <jansson.h>

int main(void)
{
    char in[41];
    for (int len = 1; len <= 40; len++) {
        for (int pos = 0; pos < len; pos++) {
            for (int c = 1; c < 128; c++) { /* ASCII: every one valid UTF-8 alone */
                memset(in, 'a', sizeof(in));
                in[pos] = (char)c;
                buf_t b;
                buf_init(&b);
                json_escape(&b, in, (size_t)len);
                json_t *j = json_loadb(b.data, b.len, JSON_DECODE_ANY, NULL);
                bool ok = j && json_is_string(j) && json_string_length(j) == (size_t)len &&
                          memcmp(json_string_value(j), in, (size_t)len) == 0;
                if (!ok)
                    CHECK_MSG(ok, "len %d pos %d byte 0x%02x: %s", len, pos, c, b.data);
                else
                    t_passed++;
                json_decref(j);
                buf_free(&b);
            }
        }
    }
    /* a NUL inside, multibyte text around specials */
    buf_t b;
    buf_init(&b);
    const char mix[] = "caf\xc3\xa9 \"q\" \\ \x01 \xe2\x82\xac\n\xf0\x9f\x98\x80 end of a longer run";
    json_escape(&b, mix, sizeof(mix) - 1);
    json_t *j = json_loadb(b.data, b.len, JSON_DECODE_ANY, NULL);
    CHECK(j && json_string_length(j) == sizeof(mix) - 1 &&
          memcmp(json_string_value(j), mix, sizeof(mix) - 1) == 0);
    json_decref(j);
    buf_free(&b);
    TEST_DONE();
}
