/* json.c — see json.h. */
#include "core/json.h"

#include <math.h>
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
    buf_putc(w->out, '"');
    buf_puts(w->out, key);
    buf_puts(w->out, "\":");
    /* the value that follows must not get a comma of its own */
    w->need_comma[w->depth] = false;
    /* ...but the next key must: mark it after the value via value helpers */
}

/* Values: after a key the flag is false, so sep() writes nothing and sets it. */
void json_escape(buf_t *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    buf_reserve(out, n + 2);
    buf_putc(out, '"');
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        buf_append(out, s + start, i - start);
        start = i + 1;
        switch (c) {
        case '"': buf_puts(out, "\\\""); break;
        case '\\': buf_puts(out, "\\\\"); break;
        case '\n': buf_puts(out, "\\n"); break;
        case '\r': buf_puts(out, "\\r"); break;
        case '\t': buf_puts(out, "\\t"); break;
        case '\b': buf_puts(out, "\\b"); break;
        case '\f': buf_puts(out, "\\f"); break;
        default: {
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            buf_puts(out, u);
        }
        }
    }
    buf_append(out, s + start, n - start);
    buf_putc(out, '"');
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

void jw_int(jw_t *w, int64_t v)
{
    sep(w);
    buf_printf(w->out, "%lld", (long long)v);
}

void jw_num(jw_t *w, double v)
{
    sep(w);
    if (!isfinite(v)) {
        buf_puts(w->out, "null");
        return;
    }
    if (fabs(v) < 1e15 && v == (double)(int64_t)v) {
        buf_printf(w->out, "%lld", (long long)v);
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
