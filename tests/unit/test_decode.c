/* test_decode.c — table-driven tests of src/http/decode.c: UTF-8 validation,
 * percent-decoding, form/query parsing and the scalar field parsers. */
#include "http/decode.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* A byte string with an explicit length (inputs may hold NUL). */
#define BYTES(lit) lit, sizeof(lit) - 1

/* ---- utf8_count ----------------------------------------------------------------- */

static const struct {
    const char *in;
    size_t n;
    long long want; /* code points, or -1 */
} utf8_cases[] = {
    {BYTES(""), 0},
    {BYTES("abc"), 3},
    {BYTES("a\0b"), 3}, /* NUL is valid UTF-8 */
    {BYTES("\x7f"), 1}, /* U+007F, last 1-byte */
    {BYTES("\xc2\x80"), 1}, /* U+0080, first 2-byte */
    {BYTES("\xc3\xa9t\xc3\xa9"), 3}, /* "été" */
    {BYTES("\xdf\xbf"), 1}, /* U+07FF, last 2-byte */
    {BYTES("\xe0\xa0\x80"), 1}, /* U+0800, first 3-byte */
    {BYTES("\xe2\x82\xac"), 1}, /* U+20AC euro */
    {BYTES("\xed\x9f\xbf"), 1}, /* U+D7FF, just below the surrogates */
    {BYTES("\xee\x80\x80"), 1}, /* U+E000, just above the surrogates */
    {BYTES("\xef\xbf\xbf"), 1}, /* U+FFFF, last 3-byte */
    {BYTES("\xf0\x90\x80\x80"), 1}, /* U+10000, first 4-byte */
    {BYTES("\xf0\x9f\x98\x80"), 1}, /* U+1F600 emoji */
    {BYTES("x\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbdy"), 4}, /* thumbs up + skin tone */
    {BYTES("\xf4\x8f\xbf\xbf"), 1}, /* U+10FFFF, the last code point */
    /* beyond U+10FFFF */
    {BYTES("\xf4\x90\x80\x80"), -1}, /* U+110000 */
    {BYTES("\xf5\x80\x80\x80"), -1},
    {BYTES("\xf7\xbf\xbf\xbf"), -1},
    {BYTES("\xf8\x88\x80\x80\x80"), -1}, /* old 5-byte form */
    {BYTES("\xfc\x84\x80\x80\x80\x80"), -1}, /* old 6-byte form */
    {BYTES("\xfe"), -1},
    {BYTES("\xff"), -1},
    /* overlong forms */
    {BYTES("\xc0\x80"), -1}, /* NUL as 2 bytes */
    {BYTES("\xc0\xaf"), -1}, /* '/' as 2 bytes */
    {BYTES("\xc1\xbf"), -1}, /* U+007F as 2 bytes */
    {BYTES("\xe0\x80\x80"), -1},
    {BYTES("\xe0\x9f\xbf"), -1}, /* U+07FF as 3 bytes */
    {BYTES("\xf0\x80\x80\x80"), -1},
    {BYTES("\xf0\x8f\xbf\xbf"), -1}, /* U+FFFF as 4 bytes */
    /* surrogates */
    {BYTES("\xed\xa0\x80"), -1}, /* U+D800 */
    {BYTES("\xed\xaf\xbf"), -1}, /* U+DBFF */
    {BYTES("\xed\xb0\x80"), -1}, /* U+DC00 */
    {BYTES("\xed\xbf\xbf"), -1}, /* U+DFFF */
    {BYTES("\xed\xa0\xbd\xed\xb8\x80"), -1}, /* CESU-8 pair for U+1F600 */
    /* truncated sequences */
    {BYTES("\xc3"), -1},
    {BYTES("a\xc3"), -1},
    {BYTES("\xe2\x82"), -1},
    {BYTES("\xe2"), -1},
    {BYTES("\xf0\x9f\x98"), -1},
    {BYTES("\xf0\x9f"), -1},
    {BYTES("\xf0"), -1},
    {BYTES("\xc3x"), -1}, /* lead byte then ASCII */
    {BYTES("\xe2\x82x"), -1},
    {BYTES("\xf0\x9f\x98x"), -1},
    {BYTES("\xe2\x82\xc3\xa9"), -1}, /* lead byte in place of a continuation */
    /* stray continuation bytes */
    {BYTES("\x80"), -1},
    {BYTES("\xbf"), -1},
    {BYTES("a\x80"), -1},
    {BYTES("\xc3\xa9\xa9"), -1},
    {BYTES("\xf0\x9f\x98\x80\x80"), -1},
};

static void test_utf8(void)
{
    for (size_t i = 0; i < ARRAY_LEN(utf8_cases); i++)
        CHECK_MSG(utf8_count(utf8_cases[i].in, utf8_cases[i].n) == utf8_cases[i].want,
                  "utf8 case %zu: got %lld want %lld", i,
                  utf8_count(utf8_cases[i].in, utf8_cases[i].n), utf8_cases[i].want);
    /* the explicit length is honoured: the invalid byte lies past n */
    CHECK_INT(utf8_count("ab\xff", 2), 2);
    CHECK_INT(utf8_count("\xc3\xa9", 1), -1);
}

/* ---- pct_decode ----------------------------------------------------------------- */

static const struct {
    const char *in;
    bool plus;
    int rc;
    const char *out; /* when rc == 0 */
    size_t out_len;
} pct_cases[] = {
    {"", false, 0, "", 0},
    {"abc", false, 0, "abc", 3},
    {"a%20b", false, 0, "a b", 3},
    {"%41%42", false, 0, "AB", 2},
    {"%e2%82%ac", false, 0, "\xe2\x82\xac", 3}, /* lower-case hex */
    {"%E2%82%AC", false, 0, "\xe2\x82\xac", 3}, /* upper-case hex */
    {"%e2%82%AC", false, 0, "\xe2\x82\xac", 3}, /* mixed */
    {"%7e%7E", false, 0, "~~", 2},
    {"%25", false, 0, "%", 1},
    {"%2525", false, 0, "%25", 3}, /* decoded once only */
    {"%2B", true, 0, "+", 1},      /* an encoded plus stays a plus */
    {"a+b", false, 0, "a+b", 3},
    {"a+b", true, 0, "a b", 3},
    {"++", true, 0, "  ", 2},
    {"%00", false, 0, "\0", 1},
    {"a%00b", false, 0, "a\0b", 3},
    {"%ff%fe", false, 0, "\xff\xfe", 2}, /* not UTF-8: not checked here */
    {"%", false, -1, NULL, 0},
    {"%4", false, -1, NULL, 0},
    {"a%", false, -1, NULL, 0},
    {"a%4", false, -1, NULL, 0},
    {"%G1", false, -1, NULL, 0},
    {"%1G", false, -1, NULL, 0},
    {"%g1", false, -1, NULL, 0},
    {"%%41", false, -1, NULL, 0},
    {"% 1", false, -1, NULL, 0},
    {"%+1", true, -1, NULL, 0},
    {"%-1", false, -1, NULL, 0},
    {"%0x", false, -1, NULL, 0},
    {"ok%20then%zz", false, -1, NULL, 0},
};

static void test_pct(void)
{
    arena_t a;
    arena_init(&a);
    for (size_t i = 0; i < ARRAY_LEN(pct_cases); i++) {
        char *out = (char *)"untouched";
        size_t len = 12345;
        int rc = pct_decode(&a, pct_cases[i].in, strlen(pct_cases[i].in), pct_cases[i].plus,
                            &out, &len);
        CHECK_MSG(rc == pct_cases[i].rc, "pct case %zu (%s): rc %d", i, pct_cases[i].in, rc);
        if (pct_cases[i].rc == 0) {
            CHECK_MSG(len == pct_cases[i].out_len, "pct case %zu: len %zu", i, len);
            CHECK_MSG(len == pct_cases[i].out_len &&
                          memcmp(out, pct_cases[i].out, len) == 0 && out[len] == '\0',
                      "pct case %zu: bytes differ", i);
        } else {
            /* out-parameters are written only on success */
            CHECK_STR(out, "untouched");
            CHECK_INT(len, 12345);
        }
    }
    /* explicit length: the bad escape lies beyond n */
    char *out;
    size_t len;
    CHECK_INT(pct_decode(&a, "ab%zz", 2, false, &out, &len), 0);
    CHECK_STR(out, "ab");
    /* ...and an escape cut by n is malformed even if the bytes after n complete it */
    CHECK_INT(pct_decode(&a, "a%41", 3, false, &out, &len), -1);
    arena_free(&a);
}

/* ---- form_parse / kv_get -------------------------------------------------------- */

typedef struct {
    const char *key;
    const char *val; /* NULL: status is not KV_OK */
    size_t val_len;
    kv_status_t status;
} want_kv_t;

#define MAX_WANT 6
static const struct {
    const char *in;
    size_t n_want;
    want_kv_t want[MAX_WANT];
} form_cases[] = {
    {"", 0, {{0}}},
    {"&", 0, {{0}}},
    {"&&&", 0, {{0}}},
    {"a", 1, {{"a", "", 0, KV_OK}}},
    {"a=", 1, {{"a", "", 0, KV_OK}}},
    {"=b", 0, {{0}}},  /* empty key: dropped */
    {"=", 0, {{0}}},
    {"a=1", 1, {{"a", "1", 1, KV_OK}}},
    {"a=1&b=2", 2, {{"a", "1", 1, KV_OK}, {"b", "2", 1, KV_OK}}},
    {"a=1&a=2", 2, {{"a", "1", 1, KV_OK}, {"a", "2", 1, KV_OK}}},
    {"&&a=1&&", 1, {{"a", "1", 1, KV_OK}}},
    {"a%20b=c", 1, {{"a b", "c", 1, KV_OK}}},
    {"a+b=c+d", 1, {{"a b", "c d", 3, KV_OK}}},
    {"a=b=c", 1, {{"a", "b=c", 3, KV_OK}}}, /* split on the first '=' only */
    {"a==", 1, {{"a", "=", 1, KV_OK}}},
    {"a=%3D%26", 1, {{"a", "=&", 2, KV_OK}}},
    {"name=%E2%82%AC%F0%9F%98%80", 1, {{"name", "\xe2\x82\xac\xf0\x9f\x98\x80", 7, KV_OK}}},
    {"a=%G1", 1, {{"a", NULL, 0, KV_BAD_ESCAPE}}},
    {"a=%", 1, {{"a", NULL, 0, KV_BAD_ESCAPE}}},
    {"a=x%4", 1, {{"a", NULL, 0, KV_BAD_ESCAPE}}},
    {"a=%FF", 1, {{"a", NULL, 0, KV_BAD_UTF8}}},
    {"a=%C0%80", 1, {{"a", NULL, 0, KV_BAD_UTF8}}},
    {"a=%ED%A0%80", 1, {{"a", NULL, 0, KV_BAD_UTF8}}},
    {"a=\xff", 1, {{"a", NULL, 0, KV_BAD_UTF8}}}, /* raw byte, not escaped */
    {"a=%00", 1, {{"a", NULL, 0, KV_HAS_NUL}}},
    {"a=x%00y", 1, {{"a", NULL, 0, KV_HAS_NUL}}},
    {"%G1=1&b=2", 1, {{"b", "2", 1, KV_OK}}},  /* bad key escape: dropped */
    {"%FF=1&b=2", 1, {{"b", "2", 1, KV_OK}}},  /* bad key UTF-8: dropped */
    {"a%00=1&b=2", 1, {{"b", "2", 1, KV_OK}}}, /* NUL in key: dropped */
    {"%=1", 0, {{0}}},
    {"a=1&b=%zz&c=3",
     3,
     {{"a", "1", 1, KV_OK}, {"b", NULL, 0, KV_BAD_ESCAPE}, {"c", "3", 1, KV_OK}}},
    {"x&y=&z=1", 3, {{"x", "", 0, KV_OK}, {"y", "", 0, KV_OK}, {"z", "1", 1, KV_OK}}},
    {"%C3%A9t%C3%A9=summer", 1, {{"\xc3\xa9t\xc3\xa9", "summer", 6, KV_OK}}},
};

static void check_form_case(size_t ci)
{
    arena_t a;
    arena_init(&a);
    kvlist_t l;
    form_parse(&a, form_cases[ci].in, strlen(form_cases[ci].in), &l);
    CHECK_MSG(l.n == form_cases[ci].n_want, "form case %zu (%s): %zu pairs, want %zu", ci,
              form_cases[ci].in, l.n, form_cases[ci].n_want);
    for (size_t i = 0; i < l.n && i < form_cases[ci].n_want; i++) {
        const want_kv_t *w = &form_cases[ci].want[i];
        const kv_t *kv = &l.items[i];
        CHECK_MSG(strcmp(kv->key, w->key) == 0, "form case %zu pair %zu: key \"%s\"", ci, i,
                  kv->key);
        CHECK_MSG(kv->status == w->status, "form case %zu pair %zu: status %d", ci, i,
                  (int)kv->status);
        if (w->val) {
            CHECK_MSG(kv->val && kv->val_len == w->val_len &&
                          memcmp(kv->val, w->val, w->val_len) == 0 && kv->val[kv->val_len] == 0,
                      "form case %zu pair %zu: value differs", ci, i);
        } else {
            CHECK_MSG(kv->val == NULL, "form case %zu pair %zu: value should be NULL", ci, i);
        }
    }
    arena_free(&a);
}

static void test_form_many(void)
{
    /* 5000 pairs k0=0&k1=1&...: the first 1000 are kept, the rest ignored */
    buf_t b;
    buf_init(&b);
    for (int i = 0; i < 5000; i++)
        buf_printf(&b, "%sk%d=%d", i ? "&" : "", i, i);
    arena_t a;
    arena_init(&a);
    kvlist_t l;
    form_parse(&a, b.data, b.len, &l);
    CHECK_INT(l.n, 1000);
    const kv_t *kv = kv_get(&l, "k999");
    CHECK(kv && kv->status == KV_OK && strcmp(kv->val, "999") == 0);
    CHECK(kv_get(&l, "k1000") == NULL);
    CHECK(kv_get(&l, "k4999") == NULL);
    kv = kv_get(&l, "k0");
    CHECK(kv && strcmp(kv->val, "0") == 0);
    arena_free(&a);

    /* dropped pairs and empty pieces do not use up the bound */
    buf_reset(&b);
    for (int i = 0; i < 3000; i++)
        buf_puts(&b, "%zz=1&&");
    buf_puts(&b, "name=last");
    form_parse(&a, b.data, b.len, &l);
    CHECK_INT(l.n, 1);
    kv = kv_get(&l, "name");
    CHECK(kv && strcmp(kv->val, "last") == 0);
    arena_free(&a);

    /* one huge value, fully escaped */
    buf_reset(&b);
    buf_puts(&b, "big=");
    for (int i = 0; i < 100000; i++)
        buf_puts(&b, "%41");
    form_parse(&a, b.data, b.len, &l);
    CHECK_INT(l.n, 1);
    CHECK(l.n == 1 && l.items[0].status == KV_OK && l.items[0].val_len == 100000 &&
          l.items[0].val[0] == 'A' && l.items[0].val[99999] == 'A' &&
          l.items[0].val[100000] == '\0');
    arena_free(&a);
    buf_free(&b);
}

static void test_form(void)
{
    for (size_t i = 0; i < ARRAY_LEN(form_cases); i++)
        check_form_case(i);

    arena_t a;
    arena_init(&a);
    kvlist_t l;
    /* kv_get: the last occurrence wins, whatever its status */
    form_parse(&a, BYTES("a=1&b=x&a=2"), &l);
    const kv_t *kv = kv_get(&l, "a");
    CHECK(kv && kv->val && strcmp(kv->val, "2") == 0);
    CHECK(kv_get(&l, "c") == NULL);
    CHECK(kv_get(&l, "") == NULL);
    CHECK(kv_get(&l, "A") == NULL); /* keys are case-sensitive */
    form_parse(&a, BYTES("a=1&a=%zz"), &l);
    kv = kv_get(&l, "a");
    CHECK(kv && kv->status == KV_BAD_ESCAPE && kv->val == NULL);
    form_parse(&a, BYTES("a=%zz&a=ok"), &l);
    kv = kv_get(&l, "a");
    CHECK(kv && kv->status == KV_OK && strcmp(kv->val, "ok") == 0);

    /* explicit lengths: bytes past n are not read, NUL bytes in the input are data */
    form_parse(&a, "a=1&b=2", 3, &l);
    CHECK_INT(l.n, 1);
    CHECK(kv_get(&l, "b") == NULL);
    form_parse(&a, BYTES("a=x\0y"), &l);
    CHECK(l.n == 1 && l.items[0].status == KV_HAS_NUL);
    form_parse(&a, BYTES("a\0b=1&c=2"), &l);
    CHECK(l.n == 1 && strcmp(l.items[0].key, "c") == 0);
    form_parse(&a, NULL, 0, &l);
    CHECK_INT(l.n, 0);
    CHECK(kv_get(&l, "a") == NULL);
    CHECK(kv_get(NULL, "a") == NULL);
    arena_free(&a);

    test_form_many();
}

/* ---- parse_id ------------------------------------------------------------------- */

static const struct {
    const char *in;
    bool ok;
    int64_t want;
} id_cases[] = {
    {"1", true, 1},
    {"42", true, 42},
    {"1000000", true, 1000000},
    {"9223372036854775807", true, INT64_MAX}, /* 19 digits, the largest */
    {"1000000000000000000", true, 1000000000000000000LL},
    {"9223372036854775808", false, 0}, /* INT64_MAX + 1 */
    {"9999999999999999999", false, 0}, /* 19 digits, above INT64_MAX */
    {"10000000000000000000", false, 0}, /* 20 digits */
    {"18446744073709551617", false, 0}, /* 2^64 + 1: must not wrap */
    {"0", false, 0},
    {"00", false, 0},
    {"01", false, 0},
    {"-1", false, 0},
    {"+1", false, 0},
    {"1.0", false, 0},
    {"1e3", false, 0},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"", false, 0},
    {"abc", false, 0},
    {"1a", false, 0},
    {"0x1", false, 0},
    {"\xd9\xa1", false, 0}, /* ARABIC-INDIC DIGIT ONE */
};

static void test_id(void)
{
    for (size_t i = 0; i < ARRAY_LEN(id_cases); i++) {
        int64_t id = -77;
        bool ok = parse_id(id_cases[i].in, strlen(id_cases[i].in), &id);
        CHECK_MSG(ok == id_cases[i].ok, "id case %zu (%s): ok %d", i, id_cases[i].in, ok);
        CHECK_MSG(id == (ok ? id_cases[i].want : -77), "id case %zu (%s): id %" PRId64, i,
                  id_cases[i].in, id);
    }
    int64_t id = 0;
    CHECK(parse_id("12x", 2, &id) && id == 12); /* explicit length */
    CHECK(!parse_id("1\0", 2, &id));
    CHECK(!parse_id(NULL, 0, &id));
}

/* ---- parse_bool ----------------------------------------------------------------- */

static const struct {
    const char *in;
    int want;
} bool_cases[] = {
    {"1", 1},       {"0", 0},       {"true", 1},   {"false", 0},  {"TRUE", 1},
    {"False", 0},   {"tRuE", 1},    {"FALSE", 0},  {"yes", -1},   {"no", -1},
    {"on", -1},     {"", -1},       {"2", -1},     {"01", -1},    {"00", -1},
    {" 1", -1},     {"1 ", -1},     {"true ", -1}, {"truex", -1}, {"t", -1},
    {"-1", -1},     {"10", -1},
};

static void test_bool(void)
{
    for (size_t i = 0; i < ARRAY_LEN(bool_cases); i++)
        CHECK_MSG(parse_bool(bool_cases[i].in) == bool_cases[i].want, "bool case %zu (%s)", i,
                  bool_cases[i].in);
    CHECK_INT(parse_bool(NULL), -1);
}

/* ---- parse_decimal -------------------------------------------------------------- */

static const struct {
    const char *in;
    bool ok;
    double want;
} dec_cases[] = {
    {"0", true, 0},
    {"0.5", true, 0.5},
    {"1", true, 1},
    {"0.25", true, 0.25},
    {"0.75", true, 0.75},
    {"0.3", true, 0.3},
    {"0.250", true, 0.25},
    {"00.5", true, 0.5}, /* leading zeros are digits */
    {"-0", true, 0},     /* -0.0 == 0 */
    {"-0.5", true, -0.5},
    {"12345", true, 12345},
    {"99999999999999999999999999999999", true, 1e32}, /* 32 characters */
    {"0.000000000000000000000000000001", true, 1e-30},
    {".5", false, 0}, /* decision: an integer part is required */
    {"-.5", false, 0},
    {"1.", false, 0}, /* decision: a '.' must be followed by digits */
    {"1..5", false, 0},
    {"1.5.", false, 0},
    {"", false, 0},
    {"-", false, 0},
    {"+1", false, 0},
    {"--1", false, 0},
    {"1e0", false, 0},
    {"1E5", false, 0},
    {"0x1", false, 0},
    {"nan", false, 0},
    {"NaN", false, 0},
    {"inf", false, 0},
    {"-infinity", false, 0},
    {" 0.5", false, 0},
    {"0.5 ", false, 0},
    {"0,5", false, 0},
    {"999999999999999999999999999999999", false, 0}, /* 33 characters */
    {"0.0000000000000000000000000000000", false, 0}, /* 33 characters */
};

static void test_decimal(void)
{
    for (size_t i = 0; i < ARRAY_LEN(dec_cases); i++) {
        double v = -77;
        bool ok = parse_decimal(dec_cases[i].in, &v);
        CHECK_MSG(ok == dec_cases[i].ok, "decimal case %zu (%s): ok %d", i, dec_cases[i].in, ok);
        CHECK_MSG(v == (ok ? dec_cases[i].want : -77), "decimal case %zu (%s): %.17g", i,
                  dec_cases[i].in, v);
    }
    double v = 0;
    CHECK(parse_decimal("-0", &v) && v == 0 && signbit(v));
    CHECK(!parse_decimal(NULL, &v));
    /* a very long string is rejected without reading all of it */
    char *longs = xmalloc(1 << 20);
    memset(longs, '1', (1 << 20) - 1);
    longs[(1 << 20) - 1] = '\0';
    CHECK(!parse_decimal(longs, &v));
    free(longs);
}

/* ---- parse_uint ----------------------------------------------------------------- */

static const struct {
    const char *in;
    bool ok;
    int64_t want;
} uint_cases[] = {
    {"0", true, 0},
    {"1", true, 1},
    {"10", true, 10},
    {"100", true, 100},
    {"007", true, 7}, /* decision: leading zeros are plain digits */
    {"999999999999999999", true, 999999999999999999LL}, /* 18 digits */
    {"000000000000000001", true, 1},
    {"1000000000000000000", true, 1000000000000000000LL}, /* 19 digits */
    {"9223372036854775807", true, INT64_MAX},
    {"9223372036854775808", false, 0}, /* INT64_MAX + 1 */
    {"9999999999999999999", false, 0},
    {"10000000000000000000", false, 0}, /* 20 digits */
    {"0009223372036854775807", false, 0},
    {"", false, 0},
    {"-1", false, 0},
    {"+1", false, 0},
    {"1.0", false, 0},
    {"1e3", false, 0},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"abc", false, 0},
    {"0x10", false, 0},
};

static void test_uint(void)
{
    for (size_t i = 0; i < ARRAY_LEN(uint_cases); i++) {
        int64_t v = -77;
        bool ok = parse_uint(uint_cases[i].in, &v);
        CHECK_MSG(ok == uint_cases[i].ok, "uint case %zu (%s): ok %d", i, uint_cases[i].in, ok);
        CHECK_MSG(v == (ok ? uint_cases[i].want : -77), "uint case %zu (%s): %" PRId64, i,
                  uint_cases[i].in, v);
    }
    int64_t v;
    CHECK(!parse_uint(NULL, &v));
}

int main(void)
{
    test_utf8();
    test_pct();
    test_form();
    test_id();
    test_bool();
    test_decimal();
    test_uint();
    TEST_DONE();
}
