/* decode.c — strict decoders for client input (see decode.h).
 *
 * utf8_count (core/utf8.c) validates UTF-8; pct_decode undoes percent-encoding; form_parse
 * splits a form body or query string into decoded pairs, using two arena allocations
 * in all (the item array and one byte area that holds every decoded key and value);
 * the parse_* helpers read field values. Every function works on explicit lengths
 * and accepts arbitrary bytes. */
#include "http/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Pairs beyond this many are ignored (the rest of the input is not even read). */
#define FORM_MAX_PAIRS 1000
/* parse_decimal: longest accepted text. */
#define DECIMAL_MAX_LEN 32
#define ID_MAX_DIGITS 19
#define UINT_MAX_DIGITS 19

/* ---- percent-decoding ----------------------------------------------------------- */

static int hex_val(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes s[0..n) into dst (room for n bytes; no NUL written). Returns the decoded
 * length, or -1 on a malformed escape. */
static long pct_decode_into(char *dst, const char *s, size_t n, bool plus_as_space)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (n - i < 3)
                return -1;
            int h = hex_val((unsigned char)s[i + 1]);
            int l = hex_val((unsigned char)s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            dst[o++] = (char)(h << 4 | l);
            i += 2;
        } else if (c == '+' && plus_as_space) {
            dst[o++] = ' ';
        } else {
            dst[o++] = c;
        }
    }
    return (long)o;
}

int pct_decode(arena_t *a, const char *s, size_t n, bool plus_as_space, char **out,
               size_t *out_len)
{
    char *dst = arena_alloc(a, n + 1);
    long len = pct_decode_into(dst, s, n, plus_as_space);
    if (len < 0)
        return -1;
    dst[len] = '\0';
    *out = dst;
    *out_len = (size_t)len;
    return 0;
}

/* ---- forms and query strings ---------------------------------------------------- */

/* Upper bound on the number of non-empty pieces (one more than the '&' count). */
static size_t form_count_pieces(const char *s, size_t n)
{
    size_t pieces = 1;
    const char *end = s + n;
    for (const char *p = s; p < end; p++) {
        p = memchr(p, '&', (size_t)(end - p));
        if (!p)
            break;
        pieces++;
    }
    return pieces;
}

static kv_status_t form_value_status(const char *v, long len)
{
    if (len < 0)
        return KV_BAD_ESCAPE;
    if (utf8_count(v, (size_t)len) < 0)
        return KV_BAD_UTF8;
    if (memchr(v, '\0', (size_t)len))
        return KV_HAS_NUL;
    return KV_OK;
}

/* Decodes one non-empty piece "key[=value]" into dst. Returns the bytes of dst used
 * (key, NUL, and for a good value the value and its NUL), or 0 when the pair is
 * dropped. */
static size_t form_piece(char *dst, const char *p, size_t len, kv_t *kv)
{
    const char *eq = memchr(p, '=', len);
    size_t klen_in = eq ? (size_t)(eq - p) : len;
    long klen = pct_decode_into(dst, p, klen_in, true);
    if (klen <= 0 || utf8_count(dst, (size_t)klen) < 0 || memchr(dst, '\0', (size_t)klen))
        return 0; /* bad or empty key: dropped */
    dst[klen] = '\0';
    kv->key = dst;
    size_t used = (size_t)klen + 1;

    char *v = dst + used;
    const char *vin = eq ? eq + 1 : p + len;
    long vlen = pct_decode_into(v, vin, (size_t)(p + len - vin), true);
    kv->status = form_value_status(v, vlen);
    if (kv->status != KV_OK) {
        kv->val = NULL;
        kv->val_len = 0;
        return used;
    }
    v[vlen] = '\0';
    kv->val = v;
    kv->val_len = (size_t)vlen;
    return used + (size_t)vlen + 1;
}

void form_parse(arena_t *a, const char *s, size_t n, kvlist_t *out)
{
    out->items = NULL;
    out->n = 0;
    if (!s || n == 0)
        return;
    size_t cap = form_count_pieces(s, n);
    if (cap > FORM_MAX_PAIRS)
        cap = FORM_MAX_PAIRS;
    out->items = arena_alloc(a, cap * sizeof(kv_t));
    /* Decoding never grows a piece, so the input length plus two NULs per stored
     * pair always suffices; a dropped piece uses no room. */
    char *area = arena_alloc(a, n + 2 * cap + 2);
    size_t used = 0;

    const char *p = s, *end = s + n;
    while (p < end && out->n < cap) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        size_t len = amp ? (size_t)(amp - p) : (size_t)(end - p);
        if (len > 0) {
            size_t u = form_piece(area + used, p, len, &out->items[out->n]);
            if (u > 0) {
                used += u;
                out->n++;
            }
        }
        if (!amp)
            break;
        p = amp + 1;
    }
}

const kv_t *kv_get(const kvlist_t *l, const char *key)
{
    if (!l || !key)
        return NULL;
    for (size_t i = l->n; i-- > 0;)
        if (strcmp(l->items[i].key, key) == 0)
            return &l->items[i];
    return NULL;
}

/* ---- scalar fields -------------------------------------------------------------- */

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

bool parse_id(const char *s, size_t n, int64_t *id)
{
    if (!s || n == 0 || n > ID_MAX_DIGITS || s[0] == '0' || !all_digits(s, n))
        return false;
    uint64_t v = 0; /* 19 digits stay below 10^19 < 2^64 */
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > (uint64_t)INT64_MAX)
        return false;
    *id = (int64_t)v;
    return true;
}

int parse_bool(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0)
        return 1;
    if (strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0)
        return 0;
    return -1;
}

/* Length of a run of ASCII digits at s. */
static size_t digit_run(const char *s)
{
    size_t i = 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

bool parse_decimal(const char *s, double *out)
{
    if (!s)
        return false;
    size_t n = strnlen(s, DECIMAL_MAX_LEN + 1);
    if (n == 0 || n > DECIMAL_MAX_LEN)
        return false;
    size_t i = s[0] == '-' ? 1 : 0;
    size_t d = digit_run(s + i);
    if (d == 0) /* ".5", "-", "-.5" */
        return false;
    i += d;
    if (s[i] == '.') {
        size_t f = digit_run(s + i + 1);
        if (f == 0) /* "1." */
            return false;
        i += 1 + f;
    }
    if (i != n)
        return false;
    /* The grammar above is a subset of strtod's, so strtod reads all of it (in the
     * C locale, which the server never changes); with at most 32 characters the
     * value is always finite. */
    char *end;
    double v = strtod(s, &end);
    if (end != s + n || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool parse_uint(const char *s, int64_t *out)
{
    if (!s)
        return false;
    size_t n = strnlen(s, UINT_MAX_DIGITS + 1);
    if (n == 0 || n > UINT_MAX_DIGITS || !all_digits(s, n))
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return false; /* beyond INT64_MAX */
        v = v * 10 + d;
    }
    *out = v;
    return true;
}
