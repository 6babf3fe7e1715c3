/* markdown.c — the Markdown subset of markdown.h: lines into blocks, then each
 * block's joined text into styled runs. One pass over the lines; the inline pass
 * counts its star markers first so that a marker opens only when a partner follows
 * (linear time, whatever the input). */
#include "export/markdown.h"

#include "core/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- growing arrays ---- */

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    *cap = n;
    return xrealloc(p, n * size);
}

static void text_put(md_doc_t *d, const char *s, size_t n)
{
    d->text = grow(d->text, &d->cap_text, d->text_len + n + 1, 1);
    memcpy(d->text + d->text_len, s, n);
    d->text_len += n;
    d->text[d->text_len] = '\0';
}

/* Appends text to the block's last run when it has the same style, else a new run. */
static void run_put(md_doc_t *d, md_block_t *b, const char *s, size_t n, uint8_t style)
{
    if (n == 0)
        return;
    if (b->nruns > 0) {
        md_run_t *last = &d->runs[d->nruns - 1];
        if (last->style == style && last->off + last->len == d->text_len) {
            text_put(d, s, n);
            last->len += (uint32_t)n;
            return;
        }
    }
    d->runs = grow(d->runs, &d->cap_runs, d->nruns + 1, sizeof(md_run_t));
    d->runs[d->nruns++] = (md_run_t){.off = (uint32_t)d->text_len, .len = (uint32_t)n,
                                     .style = style};
    b->nruns++;
    text_put(d, s, n);
}

/* ---- inline: stars, escapes, control characters ---- */

static bool is_punct(unsigned char c)
{
    return c > 0x20 && c < 0x7f && !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
                                     (c >= 'a' && c <= 'z'));
}

static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* White space around a star marker: a line break inside a block counts too. */
static bool is_ws(char c) { return is_space(c) || c == '\n'; }

/* Token at s[i]: 2 = "**", 1 = "*", 0 = anything else. Escaped characters are
 * skipped by the callers before asking. */
static int star_token(const char *s, size_t n, size_t i)
{
    if (s[i] != '*')
        return 0;
    return i + 1 < n && s[i + 1] == '*' ? 2 : 1;
}

/* Writes s[0..n) as the block's runs. */
static void parse_inline(md_doc_t *d, md_block_t *b, const char *s, size_t n)
{
    size_t left[3] = {0, 0, 0}; /* markers of each kind not yet passed */
    for (size_t i = 0; i < n;) {
        if (s[i] == '\\' && i + 1 < n && is_punct((unsigned char)s[i + 1])) {
            i += 2;
            continue;
        }
        int t = star_token(s, n, i);
        left[t]++;
        i += t ? (size_t)t : 1;
    }
    uint8_t style = 0;
    size_t start = 0; /* start of the pending literal text */
    static const char fffd[] = "\xEF\xBF\xBD";
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' && i + 1 < n && is_punct((unsigned char)s[i + 1])) {
            run_put(d, b, s + start, i - start, style);
            start = i + 1; /* the escaped character stays as text */
            i += 2;
            continue;
        }
        if (c == '\\' && i + 1 < n && s[i + 1] == '\n') { /* CommonMark's hard break */
            run_put(d, b, s + start, i - start, style);
            start = i + 1;
            i++;
            continue;
        }
        if (c == '\n') { /* a line break inside the block: kept as it is */
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f || (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                                      (unsigned char)s[i + 1] <= 0x9f)) {
            run_put(d, b, s + start, i - start, style);
            if (c == '\t')
                run_put(d, b, " ", 1, style);
            else
                run_put(d, b, fffd, 3, style);
            i += c == 0xC2 ? 2 : 1;
            start = i;
            continue;
        }
        int t = star_token(s, n, i);
        if (t == 0) {
            i++;
            continue;
        }
        left[t]--;
        uint8_t flag = t == 2 ? MD_BOLD : MD_ITALIC;
        bool next_ok = i + (size_t)t < n && !is_ws(s[i + (size_t)t]);
        bool prev_ok = i > 0 && !is_ws(s[i - 1]);
        bool toggle = (style & flag) ? prev_ok : (next_ok && left[t] > 0);
        if (toggle) {
            run_put(d, b, s + start, i - start, style);
            style ^= flag;
            start = i + (size_t)t;
        }
        i += (size_t)t;
    }
    run_put(d, b, s + start, n - start, style);
}

/* ---- lines into blocks ---- */

typedef struct {
    md_doc_t *d;
    buf_t raw; /* the open block's joined text */
    bool open;
    md_block_t cur;
} parser_t;

static void close_block(parser_t *p)
{
    if (!p->open)
        return;
    p->open = false;
    md_doc_t *d = p->d;
    md_block_t b = p->cur;
    b.run = d->nruns;
    b.nruns = 0;
    /* trailing spaces of the joined text are not content */
    size_t n = p->raw.len;
    while (n > 0 && is_space(p->raw.data[n - 1]))
        n--;
    parse_inline(d, &b, p->raw.data ? p->raw.data : "", n);
    if (b.nruns == 0 && b.kind == MD_PARA)
        return;
    d->blocks = grow(d->blocks, &d->cap_blocks, d->nblocks + 1, sizeof(md_block_t));
    d->blocks[d->nblocks++] = b;
}

static void open_block(parser_t *p, md_kind_t kind, int level, long number)
{
    close_block(p);
    buf_reset(&p->raw);
    p->cur = (md_block_t){.kind = kind, .level = level, .number = number};
    p->open = true;
}

static void add_text(parser_t *p, const char *s, size_t n)
{
    while (n > 0 && is_space(*s)) {
        s++;
        n--;
    }
    if (n == 0)
        return;
    while (n > 0 && is_space(s[n - 1])) /* trailing spaces (a Markdown hard break) */
        n--;
    if (p->raw.len > 0)
        buf_putc(&p->raw, '\n'); /* a single line break stays a line break */
    buf_append(&p->raw, s, n);
}

static void parse_line(parser_t *p, const char *s, size_t n)
{
    size_t i = 0, cols = 0;
    while (i < n && is_space(s[i]))
        cols += s[i++] == '\t' ? 2 : 1;
    if (i == n) { /* blank: ends the open block */
        close_block(p);
        return;
    }
    const char *t = s + i;
    size_t m = n - i;
    if (cols < 4 && t[0] == '#') {
        size_t h = 0;
        while (h < m && t[h] == '#')
            h++;
        if (h <= 6 && (h == m || is_space(t[h]))) {
            size_t end = m;
            while (end > h && is_space(t[end - 1]))
                end--;
            size_t e = end;
            while (e > h && t[e - 1] == '#')
                e--;
            if (e == h || is_space(t[e - 1]))
                end = e; /* a closing "###" run */
            open_block(p, MD_HEADING, (int)h, 0);
            add_text(p, t + h, end > h ? end - h : 0);
            close_block(p);
            return;
        }
    }
    int depth = (int)(cols / 2);
    if (depth >= MD_MAX_DEPTH)
        depth = MD_MAX_DEPTH - 1;
    if ((t[0] == '-' || t[0] == '*' || t[0] == '+') && m >= 2 && is_space(t[1])) {
        open_block(p, MD_BULLET, depth, 0);
        add_text(p, t + 2, m - 2);
        return;
    }
    size_t k = 0;
    long num = 0;
    while (k < m && k < 9 && t[k] >= '0' && t[k] <= '9')
        num = num * 10 + (t[k++] - '0');
    if (k > 0 && k + 1 < m && (t[k] == '.' || t[k] == ')') && is_space(t[k + 1])) {
        open_block(p, MD_ORDERED, depth, num);
        add_text(p, t + k + 2, m - k - 2);
        return;
    }
    if (!p->open)
        open_block(p, MD_PARA, 0, 0);
    add_text(p, t, m);
}

void md_parse(md_doc_t *d, const char *src, size_t len)
{
    memset(d, 0, sizeof(*d));
    parser_t p = {.d = d};
    buf_init(&p.raw);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(src + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - src) : len;
        size_t n = end - i;
        if (n > 0 && src[i + n - 1] == '\r')
            n--;
        parse_line(&p, src + i, n);
        i = end + 1;
    }
    close_block(&p);
    buf_free(&p.raw);
    if (!d->text)
        text_put(d, "", 0);
}

void md_free(md_doc_t *d)
{
    free(d->text);
    free(d->blocks);
    free(d->runs);
    memset(d, 0, sizeof(*d));
}

size_t md_block_text(const md_doc_t *d, const md_block_t *b, char *out, size_t outlen)
{
    size_t w = 0;
    for (size_t r = b->run; r < b->run + b->nruns && outlen > 0; r++) {
        size_t n = d->runs[r].len;
        if (n > outlen - 1 - w)
            n = outlen - 1 - w;
        memcpy(out + w, d->text + d->runs[r].off, n);
        w += n;
    }
    if (outlen > 0)
        out[w] = '\0';
    return w;
}
