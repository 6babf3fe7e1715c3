/* test_utf8.c — the one UTF-8 decoder (src/core/utf8.c): utf8_next against a plain
 * reference decoder (mask and shift, then range checks) over every sequence of one
 * to three bytes and a spread of four-byte ones; utf8_count, utf8_whole, utf8_floor
 * and utf8_chars on tables. */
#include "core/utf8.h"
#include "core/util.h"
#include "test.h"

/* The textbook decoder: length from the lead byte, shift in the continuation bytes,
 * refuse overlong forms, surrogates and values past U+10FFFF. */
static size_t ref_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC0 && c <= 0xDF)
        len = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF7)
        len = 4, v = c & 0x07, min = 0x10000;
    else
        goto bad;
    if (len > n)
        goto bad;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            goto bad;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        goto bad;
    *cp = v;
    return len;
bad:
    *cp = UTF8_BAD;
    return 1;
}

static long mismatches, compared;

static void compare(const unsigned char *s, size_t n)
{
    uint32_t a, b;
    size_t la = utf8_next((const char *)s, n, &a), lb = ref_next(s, n, &b);
    if (la != lb || a != b) {
        if (mismatches++ < 5)
            CHECK_MSG(0, "utf8_next(%02x %02x %02x %02x / %zu) = %zu U+%X, reference %zu U+%X",
                      s[0], n > 1 ? s[1] : 0, n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, n, la, a, lb, b);
    }
    compared++;
}

static void test_exhaustive(void)
{
    unsigned char s[4];
    for (unsigned a = 0; a < 256; a++) {
        s[0] = (unsigned char)a;
        compare(s, 1);
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            compare(s, 2);
            for (unsigned c = 0; c < 256; c++) {
                s[2] = (unsigned char)c;
                compare(s, 3);
            }
        }
    }
    static const unsigned char tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
    for (unsigned a = 0xF0; a < 0x100; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t c = 0; c < sizeof(tails); c++)
                for (size_t d = 0; d < sizeof(tails); d++) {
                    s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = tails[c], s[3] = tails[d];
                    compare(s, 4);
                    compare(s, 3);
                }
    CHECK_INT(mismatches, 0);
    CHECK(compared > 16000000);
}

static void test_tables(void)
{
    static const struct {
        const char *s;
        long long count;
    } counts[] = {
        {"", 0},          {"abc", 3},         {"Grüße", 5},        {"日本語", 3},
        {"🎉", 1},        {"\xC0\xAF", -1},   {"\xED\xA0\x80", -1}, {"\xF4\x90\x80\x80", -1},
        {"\xE6\x97", -1}, {"a\x80", -1},      {"\xF5\x80\x80\x80", -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(counts); i++)
        CHECK_INT(utf8_count(counts[i].s, strlen(counts[i].s)), counts[i].count);

    const char *s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x8E\x89"; /* a é 日 🎉 */
    static const size_t whole[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
    static const size_t floor_[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
    for (size_t n = 0; n <= 10; n++) {
        CHECK_INT(utf8_whole(s, n), whole[n]);
        CHECK_INT(utf8_floor(s, n), floor_[n]);
    }
    CHECK_INT(utf8_chars(s, 10), 4);
    CHECK(utf8_is_space(0x3000) && utf8_is_space(' ') && !utf8_is_space('a') &&
          !utf8_is_space(UTF8_BAD));
}

int main(void)
{
    test_exhaustive();
    test_tables();
    TEST_DONE();
}
