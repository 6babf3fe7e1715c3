/* builtin_text_actions.c — the builtin generator's actions (API.md §17): each rewrites
 * a part of a document in its own simple, honest way, with no language model behind
 * it, and always the same way for the same text (creativity 0, no seed):
 *   improve      the grammar pass, then the rewrite (synonyms)
 *   rephrase     the rewrite (synonyms)
 *   fix_grammar  the grammar pass (spacing, doubled words, misspellings), then a
 *                capital letter at each sentence's start
 *   shorten      each paragraph keeps its first half of sentences (a single sentence:
 *                its first clause)
 *   expand       the text, then two sentences about its subject (what the document
 *                was written about: its prompt; else the text itself)
 *   simplify     long sentences split at their joins, long words made plain
 *   change_tone  the tone's phrasing: contractions for the casual tones, none for the
 *                formal ones, and a sentence that opens the text in that tone
 *   continue     a paragraph about the document's subject, worded after the text
 *                before the point (the same text, the same paragraph)
 * translate is not one of them: the builtin generator writes English only.
 * The part's own leading and trailing white space is kept, so it fits back where it
 * was. Part of the builtin text generator (builtin_text.c). */
#include "gen/builtin_text_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { T_REWRITE = 14, T_PARAGRAPH = 25, T_GRAMMAR = 45 };

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Runs one of the 52 writers on s[0..n) at creativity 0 into out. */
static void run_writer(int tpl, const char *s, size_t n, buf_t *out)
{
    char *z = xstrndup(s, n);
    builtin_text(tpl, z, 0, 0, out);
    free(z);
}

/* A paragraph about subject, its wording varied by the text it goes with (the same
 * text, the same paragraph): what expand and continue add. */
static void subject_paragraph(const char *subject, const char *text, size_t n, buf_t *out)
{
    builtin_text(T_PARAGRAPH, subject, 1, bt_hash(text, n, 0x9E3779B97F4A7C15ull), out);
}

/* Trims out's trailing white space. */
static void rtrim(buf_t *out, size_t from)
{
    while (out->len > from && is_ws(out->data[out->len - 1]))
        out->len--;
    if (out->data)
        out->data[out->len] = '\0';
}

/* ---- sentences ---- */

/* The end of the sentence that starts at s[i] in s[0..n): after its . ! ? (and the
 * quote or bracket that closes it) when a space, a line or the end follows. */
static size_t sentence_end(const char *s, size_t n, size_t i)
{
    for (; i < n; i++) {
        if (s[i] == '\n')
            return i;
        if (s[i] == '.' || s[i] == '!' || s[i] == '?') {
            size_t j = i + 1;
            while (j < n && (s[j] == '"' || s[j] == '\'' || s[j] == ')'))
                j++;
            if (j == n || s[j] == ' ' || s[j] == '\n')
                return j;
        }
    }
    return n;
}

/* Words in s[0..n). */
static int words_in(const char *s, size_t n)
{
    int w = 0;
    bool in = false;
    for (size_t i = 0; i < n; i++) {
        bool ws = is_ws(s[i]);
        if (!ws && !in)
            w++;
        in = !ws;
    }
    return w;
}

/* Calls fn for each paragraph of s[0..n) (runs of lines between blank lines), and
 * copies the blank lines between them as they are. */
static void by_paragraph(const char *s, size_t n, buf_t *out,
                         void (*fn)(const char *p, size_t pn, buf_t *out))
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && !(s[j] == '\n' && j + 1 < n && s[j + 1] == '\n'))
            j++;
        if (j < n)
            j++; /* the paragraph's own newline */
        fn(s + i, j - i, out);
        i = j;
        while (i < n && s[i] == '\n')
            buf_putc(out, s[i++]);
    }
}

/* A heading, list item, quote or code line: kept as it is by the sentence actions. */
static bool structural(const char *p, size_t pn)
{
    return pn > 0 && (p[0] == '#' || p[0] == '-' || p[0] == '*' || p[0] == '>' ||
                      p[0] == '|' || p[0] == '`' || (isdigit((unsigned char)p[0]) && pn > 1 &&
                                                     (p[1] == '.' || p[1] == ')')));
}

static void shorten_paragraph(const char *p, size_t pn, buf_t *out)
{
    if (structural(p, pn)) {
        buf_append(out, p, pn);
        return;
    }
    size_t ends[MAX_SENTENCES];
    size_t k = 0;
    for (size_t i = 0; i < pn && k < MAX_SENTENCES;) {
        size_t e = sentence_end(p, pn, i);
        ends[k++] = e;
        i = e;
        while (i < pn && is_ws(p[i]))
            i++;
    }
    size_t keep = k >= 2 ? ends[(k + 1) / 2 - 1] : pn;
    if (k < 2) { /* one sentence: its first clause */
        const char *comma = memchr(p, ',', pn);
        if (comma && words_in(p, (size_t)(comma - p)) >= 3) {
            buf_append(out, p, (size_t)(comma - p));
            buf_putc(out, '.');
            if (pn && p[pn - 1] == '\n')
                buf_putc(out, '\n');
            return;
        }
    }
    buf_append(out, p, keep);
    if (keep < pn && p[pn - 1] == '\n')
        buf_putc(out, '\n');
}

/* ---- word swaps ---- */

typedef struct {
    const char *from, *to;
} swap_t;

static const swap_t plain_words[] = {
    {"utilize", "use"},        {"utilise", "use"},        {"approximately", "about"},
    {"additionally", "also"},  {"demonstrate", "show"},   {"facilitate", "help"},
    {"numerous", "many"},      {"subsequently", "later"}, {"commence", "start"},
    {"endeavour", "try"},      {"endeavor", "try"},       {"sufficient", "enough"},
    {"purchase", "buy"},       {"assistance", "help"},    {"nevertheless", "still"},
    {"consequently", "so"},    {"therefore", "so"},       {"individuals", "people"},
    {"objective", "goal"},     {"regarding", "about"},    {"furthermore", "also"},
    {"however", "but"},        {"obtain", "get"},         {"require", "need"},
};

static const swap_t contractions[] = {
    {"do not", "don't"},   {"does not", "doesn't"}, {"did not", "didn't"},
    {"is not", "isn't"},   {"are not", "aren't"},   {"was not", "wasn't"},
    {"cannot", "can't"},   {"will not", "won't"},   {"it is", "it's"},
    {"that is", "that's"}, {"you are", "you're"},   {"we are", "we're"},
    {"they are", "they're"}, {"I am", "I'm"},       {"have not", "haven't"},
    {"would not", "wouldn't"}, {"should not", "shouldn't"}, {"could not", "couldn't"},
};

/* s[0..n) with each whole-word `from` (case-insensitive; a capital first letter kept)
 * replaced by its `to`; reverse swaps to → from. */
static void swap_words(const char *s, size_t n, const swap_t *tab, size_t ntab, bool reverse,
                       buf_t *out)
{
    size_t i = 0;
    while (i < n) {
        bool start = i == 0 || !isalnum((unsigned char)s[i - 1]);
        const swap_t *hit = NULL;
        size_t hl = 0;
        for (size_t t = 0; start && t < ntab && !hit; t++) {
            const char *f = reverse ? tab[t].to : tab[t].from;
            size_t fl = strlen(f);
            if (fl <= n - i && strncasecmp(s + i, f, fl) == 0 &&
                (i + fl == n || !(isalnum((unsigned char)s[i + fl]) || s[i + fl] == '\''))) {
                hit = &tab[t];
                hl = fl;
            }
        }
        if (!hit) {
            buf_putc(out, s[i++]);
            continue;
        }
        const char *to = reverse ? hit->from : hit->to;
        size_t at = out->len;
        buf_puts(out, to);
        if (isupper((unsigned char)s[i]))
            out->data[at] = (char)toupper((unsigned char)out->data[at]);
        else if (strcmp(to, "I'm") != 0 && strcmp(to, "I am") != 0)
            out->data[at] = (char)tolower((unsigned char)out->data[at]);
        i += hl;
    }
}

/* ---- simplify ---- */

static const char *const joins[] = {", and ", ", but ", "; ", ", which ", ", so ", ", because "};
static const char *const join_words[] = {"", "But ", "", "It ", "So ", "That is because "};

#define LONG_SENTENCE 16 /* words */

static void simplify_paragraph(const char *p, size_t pn, buf_t *out)
{
    if (structural(p, pn)) {
        buf_append(out, p, pn);
        return;
    }
    size_t i = 0;
    while (i < pn) {
        size_t e = sentence_end(p, pn, i);
        size_t cut = 0, j = 0;
        if (words_in(p + i, e - i) > LONG_SENTENCE) {
            /* the join nearest the middle */
            size_t mid = i + (e - i) / 2, best = (size_t)-1;
            for (size_t q = i; q < e; q++)
                for (size_t t = 0; t < ARRAY_LEN(joins); t++) {
                    size_t jl = strlen(joins[t]);
                    if (q + jl <= e && memcmp(p + q, joins[t], jl) == 0 &&
                        (size_t)(q > mid ? q - mid : mid - q) < best) {
                        best = q > mid ? q - mid : mid - q;
                        cut = q;
                        j = t;
                    }
                }
        }
        if (cut) {
            buf_append(out, p + i, cut - i);
            buf_puts(out, ". ");
            size_t rest = cut + strlen(joins[j]);
            size_t at = out->len;
            buf_puts(out, join_words[j]);
            if (!*join_words[j] && rest < e) {
                buf_putc(out, p[rest]);
                out->data[at] = (char)toupper((unsigned char)out->data[at]);
                rest++;
            }
            buf_append(out, p + rest, e - rest);
        } else {
            buf_append(out, p + i, e - i);
        }
        i = e;
        while (i < pn && is_ws(p[i]))
            buf_putc(out, p[i++]);
    }
}

/* ---- spacing ---- */

/* "word .next" (a mark typed against the next word instead of the last) becomes
 * "word. next", from b[from] on; the grammar pass leaves that case. */
static void respace(buf_t *b, size_t from)
{
    buf_t t;
    buf_init(&t);
    for (size_t i = from; i < b->len; i++) {
        char c = b->data[i];
        bool mark = c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?';
        if (mark && i > from && b->data[i - 1] == ' ' && i + 1 < b->len &&
            isalpha((unsigned char)b->data[i + 1])) {
            t.len--; /* the space before the mark goes after it */
            buf_putc(&t, c);
            buf_putc(&t, ' ');
            continue;
        }
        buf_putc(&t, c);
    }
    b->len = from;
    buf_append(b, t.data, t.len);
    buf_free(&t);
}

/* ---- capitals ---- */

/* A capital letter at the text's start and after each sentence's end. */
static void capitalise(buf_t *b, size_t from)
{
    bool cap = true;
    for (size_t i = from; i < b->len; i++) {
        unsigned char c = (unsigned char)b->data[i];
        if (cap && islower(c))
            b->data[i] = (char)toupper(c);
        if (isalnum(c) || c >= 0x80)
            cap = false;
        else if ((c == '.' || c == '!' || c == '?') && i + 1 < b->len &&
                 (b->data[i + 1] == ' ' || b->data[i + 1] == '\n'))
            cap = true;
        else if (c == '\n' && i + 1 < b->len && b->data[i + 1] == '\n')
            cap = true;
    }
}

/* ---- tones ---- */

typedef struct {
    const char *tone;
    int contract; /* 1 contract, -1 expand, 0 leave */
    const char *opening;
} tone_t;

static const tone_t tones[] = {
    {"neutral", 0, ""},
    {"friendly", 1, "Here's a friendly look at this."},
    {"professional", -1, "The following sets out the key points."},
    {"casual", 1, "So, here's the deal."},
    {"persuasive", 0, "Consider this carefully, because it matters."},
    {"witty", 1, "Buckle up: this is more fun than it sounds."},
    {"formal", -1, "The matter is set out below."},
    {"empathetic", 1, "We understand this can feel like a lot."},
};

static void change_tone(const char *s, size_t n, const char *tone, buf_t *out)
{
    const tone_t *t = &tones[0];
    for (size_t i = 0; i < ARRAY_LEN(tones); i++)
        if (tone && strcmp(tone, tones[i].tone) == 0)
            t = &tones[i];
    if (*t->opening && !(n >= strlen(t->opening) && memcmp(s, t->opening, strlen(t->opening)) == 0)) {
        buf_puts(out, t->opening);
        buf_puts(out, memchr(s, '\n', n) ? "\n\n" : " ");
    }
    if (t->contract)
        swap_words(s, n, contractions, ARRAY_LEN(contractions), t->contract < 0, out);
    else
        buf_append(out, s, n);
}

/* ---- the entry ---- */

/* The first k sentences of s (at most), on one line. */
static void first_sentences(const char *s, size_t n, int k, buf_t *out)
{
    size_t i = 0;
    for (int got = 0; got < k && i < n; got++) {
        while (i < n && is_ws(s[i]))
            i++;
        size_t e = sentence_end(s, n, i);
        if (e > i) {
            if (got)
                buf_putc(out, ' ');
            buf_append(out, s + i, e - i);
        }
        i = e;
    }
}

int builtin_action(const char *action, const char *part, size_t n, const char *before,
                   size_t before_len, const char *subject, const char *tone, buf_t *out)
{
    /* the part's own white space stays around whatever it becomes */
    size_t lead = 0, trail = 0;
    while (lead < n && is_ws(part[lead]))
        lead++;
    while (trail < n - lead && is_ws(part[n - 1 - trail]))
        trail++;
    const char *s = part + lead;
    size_t sn = n - lead - trail;
    bool cont = strcmp(action, "continue") == 0;
    if (sn == 0 && !cont) {
        buf_append(out, part, n);
        return 0;
    }
    buf_append(out, part, lead);
    size_t from = out->len;
    buf_t tmp;
    buf_init(&tmp);
    if (strcmp(action, "rephrase") == 0) {
        run_writer(T_REWRITE, s, sn, out);
    } else if (strcmp(action, "improve") == 0) {
        run_writer(T_GRAMMAR, s, sn, &tmp);
        respace(&tmp, 0);
        capitalise(&tmp, 0);
        run_writer(T_REWRITE, tmp.data, tmp.len, out);
    } else if (strcmp(action, "fix_grammar") == 0) {
        run_writer(T_GRAMMAR, s, sn, out);
        respace(out, from);
        capitalise(out, from);
    } else if (strcmp(action, "shorten") == 0) {
        by_paragraph(s, sn, out, shorten_paragraph);
    } else if (strcmp(action, "expand") == 0) {
        buf_append(out, s, sn);
        char *own = xstrndup(s, sn);
        subject_paragraph(subject && *subject ? subject : own, s, sn, &tmp);
        free(own);
        buf_puts(out, memchr(s, '\n', sn) ? "\n\n" : " ");
        first_sentences(tmp.data, tmp.len, 2, out);
    } else if (strcmp(action, "simplify") == 0) {
        swap_words(s, sn, plain_words, ARRAY_LEN(plain_words), false, &tmp);
        by_paragraph(tmp.data, tmp.len, out, simplify_paragraph);
    } else if (strcmp(action, "change_tone") == 0) {
        change_tone(s, sn, tone, out);
    } else if (cont) {
        /* about the subject, or the text before the point: its last 4 KiB */
        size_t off = before_len > 4096 ? utf8_floor(before, before_len - 4096) : 0;
        char *own = xstrndup(before + off, before_len - off);
        subject_paragraph(subject && *subject ? subject : own, before, before_len, out);
        free(own);
    } else {
        buf_free(&tmp);
        return -1;
    }
    buf_free(&tmp);
    rtrim(out, from);
    if (cont)
        return 0; /* a paragraph of its own: the runner puts the separator before it */
    buf_append(out, part + n - trail, trail);
    return 0;
}

/* ---- shared with the writers' tone and length (builtin_text_style.c) ---- */

void bt_contract(const char *s, size_t n, bool expand, buf_t *out)
{
    swap_words(s, n, contractions, ARRAY_LEN(contractions), expand, out);
}

size_t bt_sentence_end(const char *s, size_t n, size_t i)
{
    return sentence_end(s, n, i);
}
