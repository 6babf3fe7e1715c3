/* json.c — see json.h. */
#include "core/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(jw_t *w, buf_t *out)
{
    w->out = out;
    w->depth = 0;
    w->need_comma[0] = false;
}

/* Before a value or key: a comma if the container already holds something. */
static void sep(jw_t *w)
{
    if (w->need_comma[w->depth])
        buf_putc(w->out, ',');
    w->need_comma[w->depth] = true;
}

static void open(jw_t *w, char c)
{
    sep(w);
    buf_putc(w->out, c);
    if (w->depth + 1 < JW_MAX_DEPTH)
        w->depth++;
    w->need_comma[w->depth] = false;
}

static void close_(jw_t *w, char c)
{
    buf_putc(w->out, c);
    if (w->depth > 0)
        w->depth--;
}

void jw_obj_begin(jw_t *w) { open(w, '{'); }
void jw_obj_end(jw_t *w) { close_(w, '}'); }
void jw_arr_begin(jw_t *w) { open(w, '['); }
void jw_arr_end(jw_t *w) { close_(w, ']'); }

void jw_key(jw_t *w, const char *key)
{
    sep(w);
    size_t n = strlen(key);
    buf_reserve(w->out, n + 3);
    char *o = w->out->data + w->out->len;
    o[0] = '"';
    memcpy(o + 1, key, n);
    o[n + 1] = '"';
    o[n + 2] = ':';
    o[n + 3] = '\0';
    w->out->len += n + 3;
    /* the value that follows must not get a comma of its own */
    w->need_comma[w->depth] = false;
    /* ...but the next key must: mark it after the value via value helpers */
}

/* 1 for the bytes a JSON string must escape: control characters, '"' and '\\'. */
static const unsigned char must_escape[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1,
};

void json_escape(buf_t *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* room for the worst case (every byte a \u00XX escape), so the loop writes
     * without checking: the buffer is reused across a response */
    buf_reserve(out, 6 * n + 2);
    char *o = out->data + out->len;
    *o++ = '"';
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        /* skip 8 plain bytes at a time: none below 0x20, none '"' or '\\' */
        while (i + 8 <= n) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
            uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
            uint64_t hit = ((x - ones * 0x20) | (q - ones) | (b - ones)) & ~x & high;
            if (hit)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        unsigned char c = (unsigned char)s[i];
        if (!must_escape[c])
            continue;
        memcpy(o, s + start, i - start);
        o += i - start;
        start = i + 1;
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        default:
            memcpy(o, "u00", 3);
            o[3] = hex[c >> 4];
            o[4] = hex[c & 15];
            o += 5;
        }
    }
    memcpy(o, s + start, n - start);
    o += n - start;
    *o++ = '"';
    *o = '\0';
    out->len = (size_t)(o - out->data);
}

void jw_strn(jw_t *w, const char *s, size_t n)
{
    sep(w);
    json_escape(w->out, s, n);
}

void jw_str(jw_t *w, const char *s)
{
    if (!s) {
        jw_null(w);
        return;
    }
    jw_strn(w, s, strlen(s));
}

/* Decimal digits of v, written backwards into a small buffer (no printf). */
static void put_int(buf_t *b, int64_t v)
{
    char tmp[24], *p = tmp + sizeof(tmp);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    buf_append(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

void jw_int(jw_t *w, int64_t v)
{
    sep(w);
    put_int(w->out, v);
}

void jw_num(jw_t *w, double v)
{
    sep(w);
    if (!isfinite(v)) {
        buf_puts(w->out, "null");
        return;
    }
    if (fabs(v) < 1e15 && v == (double)(int64_t)v) {
        put_int(w->out, (int64_t)v);
        return;
    }
    /* quarters (every creativity) without printf: exact in binary, shortest as below */
    double q = v * 4;
    if (fabs(v) < 1e9 && q == (double)(int64_t)q) {
        static const char *const frac[] = {"", ".25", ".5", ".75"};
        int64_t whole = (int64_t)(fabs(v)), part = (int64_t)fabs(q) % 4;
        if (v < 0)
            buf_putc(w->out, '-');
        put_int(w->out, whole);
        buf_puts(w->out, frac[part]);
        return;
    }
    char tmp[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    buf_puts(w->out, tmp);
}

void jw_bool(jw_t *w, bool v)
{
    sep(w);
    buf_puts(w->out, v ? "true" : "false");
}

void jw_null(jw_t *w)
{
    sep(w);
    buf_puts(w->out, "null");
}

void jw_raw(jw_t *w, const char *json)
{
    sep(w);
    buf_puts(w->out, json);
}

void jw_rawn(jw_t *w, const char *json, size_t n)
{
    sep(w);
    buf_append(w->out, json, n);
}
