/* fuzz_pct.c — pct_decode and utf8_count on arbitrary bytes, each checked against a
 * plain reference written differently from src/http/decode.c. */
#include "fuzz.h"
#include "http/decode.h"

#include <stdint.h>
#include <string.h>

static int ref_hex(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20; /* to lower case */
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Number of escapes when every '%' starts a well-formed one, else -1. */
static long ref_escapes(const unsigned char *s, size_t n)
{
    long k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%')
            continue;
        if (n - i < 3)
            return -1;
        if (ref_hex(s[i + 1]) < 0 || ref_hex(s[i + 2]) < 0)
            return -1;
        k++;
        i += 2;
    }
    return k;
}

/* Reference UTF-8 check: decode by bit patterns, then reject overlongs, surrogates
 * and values past U+10FFFF by looking at the code point. */
static long long ref_utf8(const unsigned char *s, size_t n)
{
    long long count = 0;
    for (size_t i = 0; i < n; count++) {
        unsigned char c = s[i];
        int len;
        uint32_t cp;
        if ((c & 0x80) == 0) {
            len = 1;
            cp = c;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return -1;
        }
        if (n - i < (size_t)len)
            return -1;
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return -1;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return -1;
        i += (size_t)len;
    }
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    long long cps = utf8_count(s, size);
    FUZZ_CHECK(cps == ref_utf8(data, size));
    FUZZ_CHECK(cps >= -1 && cps <= (long long)size);

    long escapes = ref_escapes(data, size);
    arena_t a;
    arena_init(&a);
    for (int plus = 0; plus <= 1; plus++) {
        char *out = NULL;
        size_t len = 0;
        int rc = pct_decode(&a, s, size, plus, &out, &len);
        FUZZ_CHECK(rc == 0 || rc == -1);
        FUZZ_CHECK((rc == 0) == (escapes >= 0));
        if (rc != 0) {
            FUZZ_CHECK(out == NULL && len == 0); /* untouched on failure */
            continue;
        }
        FUZZ_CHECK(out != NULL && len <= size && out[len] == '\0');
        FUZZ_CHECK(len == size - 2 * (size_t)escapes);
        /* without escapes the bytes pass through ('+' aside) */
        if (escapes == 0)
            for (size_t i = 0; i < size; i++)
                FUZZ_CHECK(out[i] == (plus && s[i] == '+' ? ' ' : s[i]));
        if (!plus && escapes == 0)
            FUZZ_CHECK(memcmp(out, s, size) == 0);
        /* round trip: escaping every byte and decoding again gives the same bytes */
        char *enc = arena_alloc(&a, 3 * len + 1);
        static const char hex[] = "0123456789ABCDEF";
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)out[i];
            enc[3 * i] = '%';
            enc[3 * i + 1] = hex[c >> 4];
            enc[3 * i + 2] = hex[c & 15];
        }
        char *back = NULL;
        size_t back_len = 0;
        FUZZ_CHECK(pct_decode(&a, enc, 3 * len, plus, &back, &back_len) == 0);
        FUZZ_CHECK(back_len == len && memcmp(back, out, len) == 0);
        /* the decoded bytes validate the same way as the reference says */
        FUZZ_CHECK(utf8_count(out, len) == ref_utf8((const unsigned char *)out, len));
    }
    arena_free(&a);
    return 0;
}
