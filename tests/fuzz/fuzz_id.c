/* fuzz_id.c — parse_id, parse_bool, parse_decimal and parse_uint on arbitrary bytes.
 * A success must mean the text is exactly what the grammar allows: re-printing an id
 * gives the input back, and the others are checked against plain references. */
#include "fuzz.h"
#include "http/decode.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void fuzz_id(const char *s, size_t n)
{
    int64_t id = -5;
    bool ok = parse_id(s, n, &id);
    if (ok) {
        char back[24];
        int len = snprintf(back, sizeof(back), "%" PRId64, id);
        FUZZ_CHECK(id >= 1 && (size_t)len == n && memcmp(back, s, n) == 0);
        return;
    }
    FUZZ_CHECK(id == -5);
    /* the converse: 1..19 digits without a leading zero that fit must be accepted */
    bool digits = n >= 1 && n <= 19 && s[0] != '0';
    for (size_t i = 0; digits && i < n; i++)
        digits = is_digit(s[i]);
    if (digits) {
        char tmp[20];
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        FUZZ_CHECK(strtoull(tmp, NULL, 10) > (unsigned long long)INT64_MAX);
    }
}

static void fuzz_bool(const char *z)
{
    int b = parse_bool(z);
    int want = -1;
    if (!strcmp(z, "1") || !strcasecmp(z, "true"))
        want = 1;
    else if (!strcmp(z, "0") || !strcasecmp(z, "false"))
        want = 0;
    FUZZ_CHECK(b == want);
}

/* -?digits(.digits)? with at most 32 characters */
static bool ref_decimal_syntax(const char *z)
{
    size_t n = strlen(z), i = z[0] == '-';
    if (n == 0 || n > 32)
        return false;
    size_t d = i;
    while (is_digit(z[i]))
        i++;
    if (i == d)
        return false;
    if (z[i] == '.') {
        size_t f = ++i;
        while (is_digit(z[i]))
            i++;
        if (i == f)
            return false;
    }
    return i == n;
}

static void fuzz_decimal(const char *z)
{
    double v = -5;
    bool ok = parse_decimal(z, &v);
    FUZZ_CHECK(ok == ref_decimal_syntax(z));
    if (ok)
        FUZZ_CHECK(isfinite(v) && v == strtod(z, NULL));
    else
        FUZZ_CHECK(v == -5);
}

static void fuzz_uint(const char *z)
{
    int64_t v = -5;
    bool ok = parse_uint(z, &v);
    size_t n = strlen(z);
    /* 1 to 19 digits whose value fits in int64_t (at most INT64_MAX) */
    bool want = n >= 1 && n <= 19;
    for (size_t i = 0; want && i < n; i++)
        want = is_digit(z[i]);
    const char *sig = z; /* without its leading zeros */
    while (sig[0] == '0' && sig[1])
        sig++;
    if (want && strlen(sig) == 19)
        want = strcmp(sig, "9223372036854775807") <= 0;
    FUZZ_CHECK(ok == want);
    if (!ok) {
        FUZZ_CHECK(v == -5);
        return;
    }
    FUZZ_CHECK(v >= 0);
    /* re-printing gives the input without its leading zeros */
    char back[24];
    snprintf(back, sizeof(back), "%" PRId64, v);
    FUZZ_CHECK(strcmp(back, sig) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    fuzz_id(s, size);
    /* the other parsers take C strings: the input up to its first NUL */
    char *z = malloc(size + 1);
    if (!z)
        return 0;
    memcpy(z, s, size);
    z[size] = '\0';
    fuzz_bool(z);
    fuzz_decimal(z);
    fuzz_uint(z);
    free(z);
    return 0;
}
