/* test_json.c — tests of the JSON writer (src/core/json.c) against a real parser:
 * every document written is read back with jansson and compared with the value it
 * should hold (strings byte for byte, numbers bit for bit, containers structurally). */
#include "core/json.h"
#include "test.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

/* Parses what the writer produced; NULL (and a failure) when it is not JSON. */
static json_t *parse(const buf_t *b, const char *what)
{
    json_error_t err;
    json_t *j = json_loadb(buf_cstr(b), b->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    CHECK_MSG(j != NULL, "%s: not JSON (%s at %d): %s", what, err.text, err.position,
              buf_cstr(b));
    return j;
}

/* ---- strings -------------------------------------------------------------------- */

#define BYTES(lit) lit, sizeof(lit) - 1

static const struct {
    const char *s;
    size_t n;
} str_cases[] = {
    {BYTES("")},
    {BYTES("plain text")},
    {BYTES("\"")},
    {BYTES("\"\"quoted\"\"")},
    {BYTES("\\")},
    {BYTES("\\\\")},
    {BYTES("\\\"")},   /* backslash then quote */
    {BYTES("a\\\"b\"\\c")},
    {BYTES("\\u0041")}, /* must stay literal, not become "A" */
    {BYTES("/")},
    {BYTES("</script>")},
    {BYTES("\x7f")}, /* DEL */
    {BYTES("line\nbreak\r\n\ttab")},
    {BYTES("\b\f")},
    {BYTES("\0")},
    {BYTES("a\0b\0")},
    {BYTES("\xc3\xa9t\xc3\xa9")},              /* été */
    {BYTES("\xe2\x82\xac 5")},                 /* € */
    {BYTES("\xf0\x9f\x98\x80")},               /* U+1F600 */
    {BYTES("\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd")}, /* emoji + modifier */
    {BYTES("\xf4\x8f\xbf\xbf")},               /* U+10FFFF */
    {BYTES("\xef\xbf\xbf")},                   /* U+FFFF */
    {BYTES("mix \"\xe6\x97\xa5\xe6\x9c\xac\" \\ \x01 \x1f end")},
};

/* Writes s[0..n) with jw_strn and checks that it reads back as the same bytes. */
static void check_string(const char *s, size_t n, const char *what)
{
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    jw_strn(&w, s, n);
    for (size_t i = 0; i < b.len; i++)
        CHECK_MSG((unsigned char)b.data[i] >= 0x20, "%s: raw control byte 0x%02x in output",
                  what, (unsigned char)b.data[i]);
    json_t *j = parse(&b, what);
    CHECK_MSG(j && json_is_string(j) && json_string_length(j) == n &&
                  memcmp(json_string_value(j), s, n) == 0,
              "%s: read back differs: %s", what, buf_cstr(&b));
    json_decref(j);

    /* json_escape writes the same literal */
    buf_t e;
    buf_init(&e);
    json_escape(&e, s, n);
    CHECK_MSG(e.len == b.len && memcmp(e.data, b.data, b.len) == 0, "%s: json_escape differs",
              what);
    buf_free(&e);
    buf_free(&b);
}

static void test_strings(void)
{
    char what[64];
    for (size_t i = 0; i < ARRAY_LEN(str_cases); i++) {
        snprintf(what, sizeof(what), "string case %zu", i);
        check_string(str_cases[i].s, str_cases[i].n, what);
    }
    /* every control character on its own, between text, and all at once */
    char all[32];
    for (int c = 0; c < 0x20; c++) {
        char one[3] = {'<', (char)c, '>'};
        snprintf(what, sizeof(what), "control 0x%02x", c);
        check_string(one, 1, what);
        check_string(one, 3, what);
        all[c] = (char)c;
    }
    check_string(all, sizeof(all), "all controls");
    /* every printable ASCII character */
    char ascii[0x7f - 0x20 + 1];
    for (int c = 0x20; c <= 0x7f; c++)
        ascii[c - 0x20] = (char)c;
    check_string(ascii, sizeof(ascii), "printable ASCII");

    /* the common escapes use their short forms; the others \u00XX */
    buf_t b;
    buf_init(&b);
    json_escape(&b, BYTES("\"\\\n\r\t\b\f\x01\x1f"));
    CHECK_STR(buf_cstr(&b), "\"\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\"");
    buf_reset(&b);
    json_escape(&b, BYTES("\0"));
    CHECK_STR(buf_cstr(&b), "\"\\u0000\"");
    buf_reset(&b);
    /* jw_str stops at the NUL terminator; NULL writes null */
    jw_t w;
    jw_init(&w, &b);
    jw_arr_begin(&w);
    jw_str(&w, "x\"y");
    jw_str(&w, NULL);
    jw_str(&w, "");
    jw_arr_end(&w);
    CHECK_STR(buf_cstr(&b), "[\"x\\\"y\",null,\"\"]");
    json_t *j = parse(&b, "jw_str array");
    json_t *want = json_pack("[s n s]", "x\"y", "");
    CHECK(j && want && json_equal(j, want));
    json_decref(j);
    json_decref(want);
    buf_free(&b);
}

/* ---- containers ----------------------------------------------------------------- */

static void write_item(jw_t *w, int id, const char *name)
{
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, id);
    jw_key(w, "name");
    jw_str(w, name);
    jw_key(w, "tags");
    jw_arr_begin(w);
    jw_arr_end(w);
    jw_key(w, "meta");
    jw_obj_begin(w);
    jw_obj_end(w);
    jw_obj_end(w);
}

static void test_nesting(void)
{
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    jw_obj_begin(&w);
    jw_key(&w, "data");
    jw_arr_begin(&w);
    write_item(&w, 1, "one");
    write_item(&w, 2, "two");
    write_item(&w, 3, "three");
    jw_arr_end(&w);
    jw_key(&w, "empty_arr");
    jw_arr_begin(&w);
    jw_arr_end(&w);
    jw_key(&w, "empty_obj");
    jw_obj_begin(&w);
    jw_obj_end(&w);
    jw_key(&w, "grid");
    jw_arr_begin(&w);
    jw_arr_begin(&w);
    jw_arr_end(&w);
    jw_arr_begin(&w);
    jw_int(&w, 1);
    jw_int(&w, 2);
    jw_arr_end(&w);
    jw_obj_begin(&w);
    jw_obj_end(&w);
    jw_arr_begin(&w);
    jw_arr_begin(&w);
    jw_null(&w);
    jw_arr_end(&w);
    jw_arr_end(&w);
    jw_arr_end(&w);
    jw_key(&w, "links");
    jw_obj_begin(&w);
    jw_key(&w, "next");
    jw_null(&w);
    jw_key(&w, "prev");
    jw_str(&w, "/p?page=1");
    jw_obj_end(&w);
    jw_key(&w, "status");
    jw_int(&w, 200);
    jw_obj_end(&w);

    const char *expect_text =
        "{\"data\":[{\"id\":1,\"name\":\"one\",\"tags\":[],\"meta\":{}},"
        "{\"id\":2,\"name\":\"two\",\"tags\":[],\"meta\":{}},"
        "{\"id\":3,\"name\":\"three\",\"tags\":[],\"meta\":{}}],"
        "\"empty_arr\":[],\"empty_obj\":{},\"grid\":[[],[1,2],{},[[null]]],"
        "\"links\":{\"next\":null,\"prev\":\"/p?page=1\"},\"status\":200}";
    CHECK_STR(buf_cstr(&b), expect_text);
    json_t *j = parse(&b, "nesting");
    json_t *want = json_pack(
        "{s:[{s:i,s:s,s:[],s:{}},{s:i,s:s,s:[],s:{}},{s:i,s:s,s:[],s:{}}],"
        "s:[],s:{},s:[[],[i,i],{},[[n]]],s:{s:n,s:s},s:i}",
        "data", "id", 1, "name", "one", "tags", "meta", "id", 2, "name", "two", "tags", "meta",
        "id", 3, "name", "three", "tags", "meta", "empty_arr", "empty_obj", "grid", 1, 2,
        "links", "next", "prev", "/p?page=1", "status", 200);
    CHECK(want != NULL);
    CHECK_MSG(j && want && json_equal(j, want), "nesting: parsed value differs");
    json_decref(j);
    json_decref(want);

    /* top-level empty containers */
    buf_reset(&b);
    jw_init(&w, &b);
    jw_arr_begin(&w);
    jw_arr_end(&w);
    CHECK_STR(buf_cstr(&b), "[]");
    buf_reset(&b);
    jw_init(&w, &b);
    jw_obj_begin(&w);
    jw_obj_end(&w);
    CHECK_STR(buf_cstr(&b), "{}");
    buf_free(&b);
}

/* n nested arrays, each holding [0, <inner>, 1]; checks the commas at every level. */
static void check_depth(int n)
{
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    for (int i = 0; i < n; i++) {
        jw_arr_begin(&w);
        jw_int(&w, 0);
    }
    for (int i = 0; i < n; i++) {
        jw_int(&w, 1);
        jw_arr_end(&w);
    }
    buf_t want;
    buf_init(&want);
    for (int i = 0; i < n; i++)
        buf_puts(&want, "[0,");
    buf_puts(&want, "1]");
    for (int i = 1; i < n; i++)
        buf_puts(&want, ",1]");
    char what[32];
    snprintf(what, sizeof(what), "depth %d", n);
    CHECK_MSG(strcmp(buf_cstr(&b), buf_cstr(&want)) == 0, "%s: got %s", what, buf_cstr(&b));
    json_t *j = json_loadb(buf_cstr(&b), b.len, 0, NULL);
    CHECK_MSG(j != NULL, "%s: not JSON", what);
    json_decref(j);
    buf_free(&want);
    buf_free(&b);
}

/* n nested objects {"a":{"a":...{"z":1},"b":2},"b":2}: keys after a closed child. */
static void check_obj_depth(int n)
{
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    for (int i = 0; i < n; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "a");
    }
    jw_obj_begin(&w);
    jw_key(&w, "z");
    jw_int(&w, 1);
    jw_obj_end(&w);
    for (int i = 0; i < n; i++) {
        jw_key(&w, "b");
        jw_int(&w, 2);
        jw_obj_end(&w);
    }
    buf_t want;
    buf_init(&want);
    for (int i = 0; i < n; i++)
        buf_puts(&want, "{\"a\":");
    buf_puts(&want, "{\"z\":1}");
    for (int i = 0; i < n; i++)
        buf_puts(&want, ",\"b\":2}");
    CHECK_MSG(strcmp(buf_cstr(&b), buf_cstr(&want)) == 0, "object depth %d: got %s", n + 1,
              buf_cstr(&b));
    buf_free(&want);
    buf_free(&b);
}

static void test_depth(void)
{
    check_obj_depth(1);
    check_obj_depth(JW_MAX_DEPTH - 2);
    check_obj_depth(JW_MAX_DEPTH + 3);
    check_depth(1);
    check_depth(JW_MAX_DEPTH - 1); /* the deepest the comma table covers */
    check_depth(JW_MAX_DEPTH);
    check_depth(JW_MAX_DEPTH + 4);
}

/* ---- numbers -------------------------------------------------------------------- */

static const struct {
    double v;
    const char *text; /* exact expected text, or NULL to check the round trip only */
} num_cases[] = {
    {0, "0"},
    {0.25, "0.25"},
    {0.5, "0.5"},
    {0.75, "0.75"},
    {1, "1"},
    {-3, "-3"},
    {1e-7, NULL},
    {123456789.125, "123456789.125"},
    {0.1, "0.1"},
    {-0.3, "-0.3"},
    {1.0 / 3, NULL},
    {2.0 / 3, NULL},
    {1e15, NULL},
    {999999999999999.0, "999999999999999"},
    {9007199254740993.0, NULL}, /* 2^53 + 1 rounds to 2^53 */
    {1e21, NULL},
    {1e300, NULL}, /* far beyond int64_t */
    {-1e300, NULL},
    {DBL_MAX, NULL},
    {-DBL_MAX, NULL},
    {DBL_MIN, NULL},
    {5e-324, NULL}, /* smallest subnormal */
    {9.2233720368547758e18, NULL}, /* 2^63: not representable as int64_t */
    {-9.2233720368547758e18, NULL},
    {1.7976931348623157e308, NULL},
};

/* Significant digits of a number's text: mantissa digits without leading zeros. */
static int significant_digits(const char *t)
{
    int n = 0;
    bool started = false;
    for (; *t && *t != 'e' && *t != 'E'; t++) {
        if (*t < '0' || *t > '9')
            continue;
        if (*t != '0')
            started = true;
        if (started)
            n++;
    }
    return n;
}

static void check_num(double v, const char *text, size_t i)
{
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    jw_num(&w, v);
    if (text)
        CHECK_MSG(strcmp(buf_cstr(&b), text) == 0, "num case %zu: \"%s\", want \"%s\"", i,
                  buf_cstr(&b), text);
    json_t *j = json_loadb(buf_cstr(&b), b.len, JSON_DECODE_ANY, NULL);
    CHECK_MSG(j && json_is_number(j) && json_number_value(j) == v,
              "num case %zu (%.17g): read back as %s", i, v, buf_cstr(&b));
    json_decref(j);
    /* shortest: with one significant digit fewer the value no longer reads back */
    int digits = significant_digits(buf_cstr(&b));
    if (isfinite(v) && strpbrk(buf_cstr(&b), ".e") && digits > 1) {
        char shorter[400];
        snprintf(shorter, sizeof(shorter), "%.*g", digits - 1, v);
        CHECK_MSG(strtod(shorter, NULL) != v, "num case %zu: %s is not the shortest (%s)", i,
                  buf_cstr(&b), shorter);
    }
    buf_free(&b);
}

/* The shortest %g form that reads back: what jw_num must write for non-integers. */
static void shortest_g(double v, char *out, size_t n)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

static void test_numbers(void)
{
    for (size_t i = 0; i < ARRAY_LEN(num_cases); i++)
        check_num(num_cases[i].v, num_cases[i].text, i);
    /* quarters (every creativity) take a path without printf: the same text as %g */
    static const double big[] = {123456789.75, -999999999.25, 999999999.5, 1e9 - 0.75};
    for (int k = -4000; k <= 4000 + (int)ARRAY_LEN(big); k++) {
        double v = k <= 4000 ? k / 4.0 : big[k - 4001];
        char want[64];
        if (v == (double)(int64_t)v)
            snprintf(want, sizeof(want), "%lld", (long long)v);
        else
            shortest_g(v, want, sizeof(want));
        check_num(v, want, 10000 + (size_t)(k + 4000));
    }
    /* shortest form: 0.1 + 0.2 needs 17 digits, 1e-7 only one */
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    jw_arr_begin(&w);
    jw_num(&w, 1e-7);
    jw_num(&w, 0.1 + 0.2);
    jw_num(&w, NAN);
    jw_num(&w, INFINITY);
    jw_num(&w, -INFINITY);
    jw_num(&w, -0.0);
    jw_arr_end(&w);
    json_t *j = parse(&b, "numbers array");
    CHECK(j && json_array_size(j) == 6);
    CHECK(j && json_number_value(json_array_get(j, 0)) == 1e-7);
    CHECK(j && json_number_value(json_array_get(j, 1)) == 0.1 + 0.2);
    /* non-finite numbers have no JSON form: null */
    CHECK(j && json_is_null(json_array_get(j, 2)) && json_is_null(json_array_get(j, 3)) &&
          json_is_null(json_array_get(j, 4)));
    CHECK(j && json_number_value(json_array_get(j, 5)) == 0);
    json_decref(j);
    const char *txt = buf_cstr(&b);
    CHECK_MSG(strncmp(txt, "[1e-07,0.30000000000000004,null,null,null,", 42) == 0, "got %s", txt);
    buf_free(&b);

    /* a sweep of values: every one reads back exactly */
    for (int k = -40; k <= 40; k++) {
        double v = ldexp(1.0, k) / 3.0 * (k % 2 ? -1 : 1);
        check_num(v, NULL, 1000 + (size_t)(k + 40));
        v = pow(10.0, k) * 1.2345678901234567;
        check_num(v, NULL, 2000 + (size_t)(k + 40));
    }
}

/* ---- integers and literals ------------------------------------------------------ */

static void test_scalars(void)
{
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    jw_obj_begin(&w);
    jw_key(&w, "min");
    jw_int(&w, INT64_MIN);
    jw_key(&w, "max");
    jw_int(&w, INT64_MAX);
    jw_key(&w, "zero");
    jw_int(&w, 0);
    jw_key(&w, "neg");
    jw_int(&w, -1);
    jw_key(&w, "t");
    jw_bool(&w, true);
    jw_key(&w, "f");
    jw_bool(&w, false);
    jw_key(&w, "n");
    jw_null(&w);
    jw_key(&w, "raw");
    jw_raw(&w, "{\"pre\":[1,\"x\"]}");
    jw_key(&w, "rawnum");
    jw_raw(&w, "2.5");
    jw_key(&w, "after");
    jw_str(&w, "end");
    jw_obj_end(&w);
    CHECK_STR(buf_cstr(&b), "{\"min\":-9223372036854775808,\"max\":9223372036854775807,"
                            "\"zero\":0,\"neg\":-1,\"t\":true,\"f\":false,\"n\":null,"
                            "\"raw\":{\"pre\":[1,\"x\"]},\"rawnum\":2.5,\"after\":\"end\"}");
    json_t *j = parse(&b, "scalars");
    CHECK(j && json_integer_value(json_object_get(j, "min")) == INT64_MIN);
    CHECK(j && json_integer_value(json_object_get(j, "max")) == INT64_MAX);
    CHECK(j && json_is_integer(json_object_get(j, "zero")) &&
          json_integer_value(json_object_get(j, "zero")) == 0);
    CHECK(j && json_integer_value(json_object_get(j, "neg")) == -1);
    CHECK(j && json_is_true(json_object_get(j, "t")));
    CHECK(j && json_is_false(json_object_get(j, "f")));
    CHECK(j && json_is_null(json_object_get(j, "n")));
    json_t *raw = json_pack("{s:[i,s]}", "pre", 1, "x");
    CHECK(j && json_equal(json_object_get(j, "raw"), raw));
    json_decref(raw);
    CHECK(j && json_real_value(json_object_get(j, "rawnum")) == 2.5);
    CHECK(j && strcmp(json_string_value(json_object_get(j, "after")), "end") == 0);
    CHECK(j && json_object_size(j) == 10);
    json_decref(j);

    /* the same values in an array: commas between every kind */
    buf_reset(&b);
    jw_init(&w, &b);
    jw_arr_begin(&w);
    jw_bool(&w, false);
    jw_null(&w);
    jw_raw(&w, "[]");
    jw_int(&w, 7);
    jw_num(&w, 0.5);
    jw_str(&w, "s");
    jw_arr_end(&w);
    CHECK_STR(buf_cstr(&b), "[false,null,[],7,0.5,\"s\"]");
    j = parse(&b, "scalar array");
    json_t *want = json_pack("[b n [] i f s]", 0, 7, 0.5, "s");
    CHECK(j && want && json_equal(j, want));
    json_decref(j);
    json_decref(want);
    buf_free(&b);
}

int main(void)
{
    test_strings();
    test_nesting();
    test_depth();
    test_numbers();
    test_scalars();
    TEST_DONE();
}
