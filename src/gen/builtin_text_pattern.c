/* builtin_text_pattern.c — the builtin text generator's pattern language: the
 * chooser (creativity as a temperature), expand() of {a|b} alternatives and $ fields,
 * sentence picking from banks, fitting to a length, tags and hashtags. Part of
 * builtin_text.c (which see). */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ generator */


/* The temperature: a choice among n taken from the prompt's stream, or with
 * probability = creativity from the seed's. */
unsigned g_pick(gen_t *g, unsigned n)
{
    uint64_t b = bt_splitmix(&g->base), v = bt_splitmix(&g->var), u = bt_splitmix(&g->gate);
    double x = (double)(u >> 11) * 0x1.0p-53;
    uint64_t r = x < g->creativity ? v : b;
    return n ? (unsigned)(r % n) : 0;
}

int g_range(gen_t *g, int lo, int hi)
{
    return lo + (int)g_pick(g, (unsigned)(hi - lo + 1));
}

/* Writes bytes, upper-casing the first letter of a sentence or line unless the
 * word already has capitals of its own (iPhone). */
static void g_emit(gen_t *g, const char *s, size_t n)
{
    buf_reserve(g->out, n);
    char *d = g->out->data + g->out->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (g->cap_pending) {
            if (c >= 'a' && c <= 'z') {
                size_t e = i;
                while (e < n && ((s[e] >= 'a' && s[e] <= 'z') || (s[e] >= 'A' && s[e] <= 'Z')))
                    e++;
                if (g->autocap && !bt_has_upper(s + i, e - i))
                    c = (unsigned char)(c - 32);
                g->cap_pending = false;
            } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
                g->cap_pending = false;
            } else if (c >= 0xC0 && !(c == 0xE2 && i + 1 < n && (unsigned char)s[i + 1] == 0x80)) {
                g->cap_pending = false;
            }
        }
        *d++ = (char)c;
        if (c == '\n' || (c == ' ' && (g->last == '.' || g->last == '!' || g->last == '?')))
            g->cap_pending = true;
        g->last = c;
    }
    g->out->len += n;
    g->out->data[g->out->len] = '\0';
}

void g_puts(gen_t *g, const char *s)
{
    g_emit(g, s, strlen(s));
}

void g_printf(gen_t *g, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        g_emit(g, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static bool bt_small_word(const char *w, size_t n)
{
    static const char *const small[] = {"a",  "an", "and", "as", "at",  "but", "by", "for",
                                        "in", "nor", "of", "on", "or", "the", "to", "vs",
                                        "with"};
    for (size_t i = 0; i < ARRAY_LEN(small); i++)
        if (strlen(small[i]) == n && memcmp(small[i], w, n) == 0)
            return true;
    return false;
}

/* Title case: capitalises all-lowercase ASCII words except small ones (a line's
 * first letter is capitalised by g_emit anyway). */
void g_emit_title(gen_t *g, const char *s)
{
    char tmp[PHRASE_MAX];
    size_t n = strlen(s);
    if (n >= sizeof tmp)
        n = utf8_floor(s, sizeof tmp - 1);
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && tmp[e] != ' ')
            e++;
        if (tmp[i] >= 'a' && tmp[i] <= 'z' && !bt_has_upper(tmp + i, e - i) &&
            !bt_small_word(tmp + i, e - i))
            tmp[i] = (char)(tmp[i] - 32);
        i = e + 1;
    }
    g_emit(g, tmp, n);
}

const char *g_next_phrase(gen_t *g)
{
    const topic_t *tp = g->tp;
    int i = g->cursor++;
    int own = tp->nphrase - 1;
    if (i < own)
        return tp->phrase[1 + i];
    i -= own;
    return stock_phrases[(unsigned)(i + g->stock_off) % ARRAY_LEN(stock_phrases)];
}

const char *g_next_word(gen_t *g)
{
    return g->tp->word[(unsigned)g->wcursor++ % (unsigned)g->tp->nword];
}

static const char *bt_placeholder(gen_t *g, const char *p)
{
    char c = *p;
    const char *v = NULL;
    bool title = c >= 'A' && c <= 'Z';
    switch (c) {
    case 't': case 'T': v = g->tp->phrase[0]; break;
    case 'n': case 'N': v = g_next_phrase(g); break;
    case 's': case 'S': v = g->sect ? g->sect : g->tp->phrase[0]; break;
    case 'w': case 'W': v = g_next_word(g); break;
    case 'a': case 'A': v = g->audience; break;
    case 'x': case 'X': v = g->extra ? g->extra : ""; break;
    case '$': g_emit(g, "$", 1); return p + 1;
    default: g_emit(g, "$", 1); return p; /* not a placeholder: keep the dollar */
    }
    if (title)
        g_emit_title(g, v);
    else
        g_puts(g, v);
    return p + 1;
}

/* Expands pattern p[0..end) (see the top of the file). */
static void g_expand(gen_t *g, const char *p, const char *end)
{
    while (p < end) {
        if (*p == '$') {
            p = bt_placeholder(g, p + 1);
        } else if (*p == '^') {
            g->cap_pending = true;
            p++;
        } else if (*p == '{') {
            const char *close = p + 1;
            unsigned nalt = 1;
            while (close < end && *close != '}')
                nalt += *close++ == '|';
            const char *a = p + 1;
            for (unsigned k = g_pick(g, nalt); k > 0; k--)
                a = strchr(a, '|') + 1;
            const char *ae = a;
            while (ae < close && *ae != '|')
                ae++;
            g_expand(g, a, ae);
            p = close < end ? close + 1 : close;
        } else {
            const char *q = p;
            while (q < end && *q != '$' && *q != '{' && *q != '^')
                q++;
            g_emit(g, p, (size_t)(q - p));
            p = q;
        }
    }
}

void g_put(gen_t *g, const char *pattern)
{
    g_expand(g, pattern, pattern + strlen(pattern));
}

void g_line(gen_t *g, const char *pattern)
{
    g_put(g, pattern);
    g_emit(g, "\n", 1);
}

/* Picks k distinct indexes of 0..n-1 (k <= n <= 64), in random order, skipping
 * those set in *used (which it updates when not NULL). */
int g_choose(gen_t *g, size_t n, int k, uint64_t *used, int *idx)
{
    uint64_t mask = used ? *used : 0;
    int got = 0;
    for (; got < k; got++) {
        unsigned free_n = 0;
        for (size_t i = 0; i < n; i++)
            free_n += !(mask >> i & 1);
        if (free_n == 0)
            break;
        unsigned r = g_pick(g, free_n);
        for (size_t i = 0; i < n; i++) {
            if (mask >> i & 1)
                continue;
            if (r-- == 0) {
                idx[got] = (int)i;
                mask |= 1ull << i;
                break;
            }
        }
    }
    if (used)
        *used = mask;
    return got;
}

int bt_cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* k sentences of bank, space-separated. */
void g_sentences(gen_t *g, const char *const *bank, size_t n, int k, uint64_t *used)
{
    int idx[64];
    int got = g_choose(g, n, k, used, idx);
    for (int i = 0; i < got; i++) {
        if (i)
            g_emit(g, " ", 1);
        g_put(g, bank[idx[i]]);
    }
}

/* k lines of bank in bank order, each after prefix ("- ") or numbered when NULL. */
void g_list(gen_t *g, const char *const *bank, size_t n, int k, const char *prefix,
                   bool keep_order)
{
    int idx[64];
    int got = g_choose(g, n, k, NULL, idx);
    if (keep_order)
        qsort(idx, (size_t)got, sizeof idx[0], bt_cmp_int);
    for (int i = 0; i < got; i++) {
        if (prefix)
            g_puts(g, prefix);
        else
            g_printf(g, "%d. ", i + 1);
        g_line(g, bank[idx[i]]);
    }
}


/* Expands pattern into a separate string, cut at a word boundary to at most max
 * characters (code points); used for length-limited fields. */
bool g_fit(gen_t *g, const char *pattern, size_t max, char *dst, size_t dstsize)
{
    bool cut_short = false;
    buf_t tmp;
    buf_init(&tmp);
    buf_t *saved = g->out;
    unsigned char last = g->last;
    bool pending = g->cap_pending;
    g->out = &tmp;
    g->cap_pending = true;
    g_put(g, pattern);
    g->out = saved;
    g->last = last;
    g->cap_pending = pending;
    const char *s = buf_cstr(&tmp);
    size_t n = tmp.len;
    if (utf8_chars(s, n) > max) {
        size_t cut = 0, chars = 0, last_space = 0;
        while (cut < n && chars < max) {
            cut++;
            while (cut < n && ((unsigned char)s[cut] & 0xC0) == 0x80)
                cut++;
            chars++;
            if (cut < n && s[cut] == ' ')
                last_space = cut;
        }
        if (last_space > 0 && (cut >= n || s[cut] != ' '))
            cut = last_space;
        while (cut > 0 && strchr(" ,;:-", s[cut - 1]))
            cut--;
        n = cut;
        cut_short = true;
    }
    if (n >= dstsize)
        n = utf8_floor(s, dstsize - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
    buf_free(&tmp);
    return cut_short;
}

/* The last two words of a longer topic ("urban gardening"), for short fields. */
const char *bt_short_topic(const char *topic)
{
    int spaces = 0;
    for (const char *q = topic + strlen(topic); q > topic; q--)
        if (q[-1] == ' ' && ++spaces == 2)
            return q;
    return topic;
}

/* Fills field with the first of n patterns (from a chosen start) that fits max
 * characters whole and differs from the previous fields; else the first one cut. */
void g_fit_any(gen_t *g, const char *const *pats, size_t n, size_t max, char (*prev)[256],
                      int nprev, char *field)
{
    char line[256];
    unsigned start = g_pick(g, (unsigned)n);
    field[0] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        for (size_t c = 0; c < n; c++) {
            bool cut = g_fit(g, pats[(start + c) % n], max, line, sizeof line);
            bool dup = !line[0];
            for (int i = 0; i < nprev && !dup; i++)
                dup = strcasecmp(prev[i], line) == 0;
            if (dup || (cut && pass == 0))
                continue;
            memcpy(field, line, sizeof line);
            return;
        }
    }
    g_fit(g, pats[start], max, field, sizeof line);
}

/* ------------------------------------------------------------------ tags */

typedef struct {
    char s[PHRASE_MAX + 16];
} tag_t;

static void bt_tag_add(tag_t *tags, int *nt, const char *s)
{
    if (*nt >= TAG_MAX || !*s)
        return;
    for (int i = 0; i < *nt; i++)
        if (strcasecmp(tags[i].s, s) == 0)
            return;
    snprintf(tags[*nt].s, sizeof tags[0].s, "%s", s);
    (*nt)++;
}

/* True when word w occurs as a whole word in a phrase of several words. */
static bool bt_word_in_phrases(const topic_t *tp, const char *w)
{
    size_t wn = strlen(w);
    for (int i = 0; i < tp->nphrase; i++) {
        const char *ph = tp->phrase[i];
        if (!strchr(ph, ' '))
            continue;
        for (const char *q = ph; (q = strcasestr(q, w)) != NULL; q++)
            if ((q == ph || q[-1] == ' ') && (q[wn] == '\0' || q[wn] == ' '))
                return true;
    }
    return false;
}

/* Tag candidates: the user's phrases and words, derived forms ("composting tips",
 * "learn composting"), and last the words already inside a phrase. The topic stays
 * first; the middle is shuffled by the chooser. */
static int g_tags(gen_t *g, tag_t *tags, bool hashtags)
{
    static const char *const forms[][2] = {
        {"", " tips"}, {"", " ideas"},     {"", " guide"},  {"best ", ""},   {"learn ", ""},
        {"", " inspiration"}, {"", " life"}, {"", " community"}, {"", " daily"}, {"", " goals"},
    };
    const topic_t *tp = g->tp;
    int nt = 0;
    char tmp[PHRASE_MAX + 16];
    const char *bases[4];
    int nb = 0;
    for (int i = 0; i < tp->nphrase; i++) {
        const char *ph = tp->phrase[i];
        bt_tag_add(tags, &nt, ph);
        int spaces = 0;
        const char *last2 = NULL;
        for (const char *q = ph + strlen(ph); q > ph; q--)
            if (q[-1] == ' ' && ++spaces == 2 && !last2)
                last2 = q; /* the last two words of a longer phrase */
        if (last2) {
            bt_tag_add(tags, &nt, last2);
            if (nb < 4)
                bases[nb++] = last2;
        } else if (nb < 4) {
            bases[nb++] = ph;
        }
    }
    for (int i = 0; i < tp->nword; i++)
        if (!bt_word_in_phrases(tp, tp->word[i]))
            bt_tag_add(tags, &nt, tp->word[i]);
    int own = nb < 3 ? nb : 3;
    int idx[ARRAY_LEN(forms)];
    int nforms = hashtags ? (int)ARRAY_LEN(forms) : 6;
    int k = g_choose(g, (size_t)nforms, nforms, NULL, idx);
    for (int i = 0; own > 0 && i < k; i++) { /* own is 0 only for a topic without phrases */
        const char *base = bases[i % own], *pre = forms[idx[i]][0], *suf = forms[idx[i]][1];
        if ((*suf && strcasestr(base, suf + 1)) || (*pre && strncasecmp(base, pre, strlen(pre)) == 0))
            continue; /* no "fresh ideas ideas" */
        snprintf(tmp, sizeof tmp, "%s%s%s", pre, base, suf);
        bt_tag_add(tags, &nt, tmp);
    }
    for (int i = nt - 1; i > 1; i--) {
        int j = 1 + (int)g_pick(g, (unsigned)i);
        tag_t t = tags[i];
        tags[i] = tags[j];
        tags[j] = t;
    }
    for (int i = 0; i < tp->nword; i++)
        bt_tag_add(tags, &nt, tp->word[i]);
    return nt;
}

/* A comma-separated line of lowercase tags. */
void g_tag_line(gen_t *g, int lo, int hi)
{
    tag_t tags[TAG_MAX];
    int nt = g_tags(g, tags, false);
    int k = g_range(g, lo, hi);
    if (k > nt)
        k = nt;
    bool saved = g->autocap;
    g->autocap = false;
    g->cap_pending = false;
    for (int i = 0; i < k; i++) {
        char low[PHRASE_MAX + 16];
        size_t n = strlen(tags[i].s);
        for (size_t j = 0; j <= n; j++)
            low[j] = (char)(tags[i].s[j] >= 'A' && tags[i].s[j] <= 'Z' ? tags[i].s[j] + 32
                                                                        : tags[i].s[j]);
        if (i)
            g_emit(g, ", ", 2);
        g_emit(g, low, n);
    }
    g_emit(g, "\n", 1);
    g->autocap = saved;
}

/* "#UrbanGardening": words joined in camel case, ASCII punctuation dropped. */
static size_t bt_hashtag(const char *s, char *out, size_t size)
{
    size_t j = 0;
    bool up = true;
    out[j++] = '#';
    for (size_t i = 0; s[i] && j + 2 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '-') {
            up = true;
            continue;
        }
        if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                          (c >= 'A' && c <= 'Z') || c == '_'))
            continue;
        if (c == 0xE2 && (unsigned char)s[i + 1] == 0x80 && (unsigned char)s[i + 2] == 0x99) {
            i += 2;
            continue;
        }
        if (c >= 0xC0 && j + 6 >= size) /* room for a whole sequence */
            break;
        out[j++] = (char)(up && c >= 'a' && c <= 'z' ? c - 32 : c);
        up = false;
    }
    out[j] = '\0';
    return j > 1 ? j : 0;
}

/* k hashtags separated by spaces (no line break). */
void g_hashtags(gen_t *g, int lo, int hi)
{
    tag_t tags[TAG_MAX];
    char tag[PHRASE_MAX + 24];
    int nt = g_tags(g, tags, true);
    int k = g_range(g, lo, hi), written = 0;
    for (int i = 0; i < nt && written < k; i++) {
        if (!bt_hashtag(tags[i].s, tag, sizeof tag))
            continue;
        if (written++)
            g_emit(g, " ", 1);
        g_puts(g, tag);
    }
    if (!written)
        g_puts(g, "#FreshIdeas");
}
