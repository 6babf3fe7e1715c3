/* test_builtin_text.c — the offline text generator: for every template a checker of
 * its shape, run on several prompts (English, multibyte with emoji, stop words only,
 * one character, 16384 characters); creativity 0 is repeatable whatever the seed,
 * creativity 1 varies with it; output is valid UTF-8 without NUL and carries the
 * prompt's words; plus the rule-based grammar, rewrite and summary, and threads. */
#include "gen/builtin.h"
#include "gen/builtin_text_int.h" /* the sentence banks, to tell one template's lines */
#include "gen/templates.h"
#include "test.h"

#include "core/unicode.h"

static long long words_of(const char *s)
{
    return uni_count_words(s, strlen(s));
}

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ text helpers */

typedef struct {
    char *line[512];
    int n;
    char *store;
} lines_t;

/* Splits text into lines (without the trailing empty line). */
static void lines_split(const char *text, lines_t *l)
{
    l->store = strdup(text);
    l->n = 0;
    char *p = l->store;
    while (*p && l->n < 512) {
        l->line[l->n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
}

static void lines_free(lines_t *l)
{
    free(l->store);
}

static size_t u8_chars(const char *s)
{
    size_t k = 0;
    for (; *s; s++)
        k += ((unsigned char)*s & 0xC0) != 0x80;
    return k;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "3. text" → 3, else 0. */
static int numbered(const char *s)
{
    int n = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9')
        n = n * 10 + (*p++ - '0');
    return p > s && p[0] == '.' && p[1] == ' ' && p[2] ? n : 0;
}

/* Lines "1. ", "2. ", ... consecutive from 1; returns how many, or -1 when out of order. */
static int count_numbered(const lines_t *l)
{
    int expect = 1;
    for (int i = 0; i < l->n; i++) {
        int k = numbered(l->line[i]);
        if (!k)
            continue;
        if (k != expect)
            return -1;
        expect++;
    }
    return expect - 1;
}

static int count_prefixed(const lines_t *l, const char *prefix)
{
    int k = 0;
    for (int i = 0; i < l->n; i++)
        k += starts(l->line[i], prefix);
    return k;
}

/* Markdown headings (CommonMark ATX: 1-6 '#' then a space or the end of the line) of
 * the given level, or of any level when level is 0. A hashtag line ("#tag") is none. */
static int count_headings(const lines_t *l, int level)
{
    int k = 0;
    for (int i = 0; i < l->n; i++) {
        const char *s = l->line[i];
        int h = 0;
        while (s[h] == '#')
            h++;
        if (h >= 1 && h <= 6 && (s[h] == ' ' || s[h] == '\0') && (level == 0 || h == level))
            k++;
    }
    return k;
}

static int find_line(const lines_t *l, const char *exact)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->line[i], exact) == 0)
            return i;
    return -1;
}

/* Sentences: . ! ? followed by a space, a line break or the end (or ”). */
static int count_sentences(const char *s)
{
    int k = 0;
    for (const char *p = s; *p; p++)
        if ((*p == '.' || *p == '!' || *p == '?') &&
            (p[1] == '\0' || p[1] == ' ' || p[1] == '\n' || starts(p + 1, "”")))
            k++;
    return k;
}

static int count_blocks(const char *s)
{
    int k = 1;
    for (const char *p = s; (p = strstr(p, "\n\n")) != NULL; p += 2)
        if (p[2] != '\0' && p[2] != '\n')
            k++;
    return k;
}

static bool single_paragraph(const char *s)
{
    size_t n = strlen(s);
    const char *nl = strchr(s, '\n');
    return n > 0 && (!nl || nl == s + n - 1);
}

/* A line of hashtags: every space-separated token "#x..." with no '#' inside. */
static int hashtag_count(const char *line)
{
    char *copy = strdup(line), *save = NULL;
    int k = 0;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (t[0] != '#' || strlen(t) < 2 || strchr(t + 1, '#')) {
            k = -1;
            break;
        }
        k++;
    }
    free(copy);
    return k;
}

/* A single lowercase comma-separated line; returns the items, -1 if malformed. */
static int comma_items(const char *text)
{
    size_t n = strlen(text);
    if (n == 0 || strchr(text, '\n') != text + n - 1)
        return -1;
    for (const char *p = text; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            return -1;
    int k = 1;
    for (const char *p = text; (p = strstr(p, ", ")) != NULL; p += 2)
        k++;
    return strstr(text, ",,") ? -1 : k;
}

/* A sentence pattern of the generator (builtin_text.c's notation) as a POSIX extended
 * regular expression: {a|b} an alternative, $x any text, ^ nothing; anchored at the
 * start, and at the end too when whole. */
static void pattern_regex(const char *pat, bool whole, char *out, size_t outlen)
{
    size_t w = 0;
    out[w++] = '^';
    for (const char *p = pat; *p && w + 8 < outlen; p++) {
        if (*p == '{')
            out[w++] = '(';
        else if (*p == '}')
            out[w++] = ')';
        else if (*p == '|')
            out[w++] = '|';
        else if (*p == '$' && p[1]) {
            p++;
            if (*p == '$') {
                out[w++] = '\\';
                out[w++] = '$';
            } else {
                memcpy(out + w, ".+", 2);
                w += 2;
            }
        } else if (*p == '^')
            continue;
        else {
            if (strchr(".[]()*+?\\^$", *p))
                out[w++] = '\\';
            out[w++] = *p;
        }
    }
    if (whole)
        out[w++] = '$';
    out[w] = '\0';
}

/* True when s (whole, or a prefix of it) is one of the bank's patterns filled in. */
static bool from_bank(const char *s, const char *const *bank, size_t n, bool whole)
{
    for (size_t i = 0; i < n; i++) {
        char re[2048];
        pattern_regex(bank[i], whole, re, sizeof re);
        regex_t r;
        if (regcomp(&r, re, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
            continue;
        bool m = regexec(&r, s, 0, NULL, 0) == 0;
        regfree(&r);
        if (m)
            return true;
    }
    return false;
}

#define FROM_BANK(s, bank, whole) from_bank((s), (bank), ARRAY_LEN(bank), (whole))

/* Every numbered line's text is one of the bank's patterns filled in. */
static bool numbered_from_bank(const lines_t *l, const char *const *bank, size_t n)
{
    for (int i = 0; i < l->n; i++) {
        const char *sp = strchr(l->line[i], ' ');
        if (numbered(l->line[i]) && !from_bank(sp + 1, bank, n, true))
            return false;
    }
    return true;
}

/* True when one of the bank's patterns, filled in, ends s (at a sentence start). */
static bool ends_with_bank(const char *s, const char *const *bank, size_t n)
{
    for (const char *p = s; *p; p++)
        if ((p == s || p[-1] == ' ') && from_bank(p, bank, n, true))
            return true;
    return false;
}

/* ------------------------------------------------------------------ checkers */

typedef bool (*check_fn)(const char *out, const char *prompt, const lines_t *l);

/* Plain prose: 2 or 3 paragraphs of several sentences, no headings, labels or lists. */
static bool ck_freestyle(const char *o, const char *p, const lines_t *l)
{
    int blocks = count_blocks(o);
    if (blocks < 2 || blocks > 3 || count_numbered(l) != 0 || !FROM_BANK(o, B_OPEN, false))
        return false;
    for (int i = 0; i < l->n; i++) {
        size_t t = strlen(l->line[i]);
        if (t == 0)
            continue;
        const char *colon = strchr(l->line[i], ':');
        if (!strchr(".!?", l->line[i][t - 1]) || count_sentences(l->line[i]) < 2 ||
            starts(l->line[i], "- ") || (colon && colon - l->line[i] < 16))
            return false;
    }
    return true;
}

static bool ck_about(const char *o, const char *p, const lines_t *l)
{
    /* two to four paragraphs in the first person plural */
    bool head = starts(o, "# About us\n\n");
    int blocks = count_blocks(o) - (head ? 1 : 0);
    return blocks >= 2 && blocks <= 4 && (strstr(o, "We") || strstr(o, " we ")) &&
           count_headings(l, 0) == (head ? 1 : 0) && !strchr(head ? o + 2 : o, '#') &&
           !strstr(o, "**");
}

static bool ck_advert(const char *o, const char *p, const lines_t *l)
{
    /* headline, body, call to action: three blocks; the last one a single line */
    return count_blocks(o) == 3 && l->n >= 5 && starts(l->line[0], "# ") && !strstr(o, "**") &&
           count_headings(l, 0) == 1 && strlen(l->line[l->n - 1]) > 0 &&
           strcmp(l->line[l->n - 2], "") == 0;
}

static bool ck_article(const char *o, const char *p, const lines_t *l)
{
    /* title (a level-1 heading), intro, 3-5 sections and a conclusion (level 2) */
    int blocks = count_blocks(o), sections = count_headings(l, 2);
    size_t t = strlen(l->line[0]);
    return blocks >= 6 && blocks <= 8 && starts(l->line[0], "# ") && l->line[0][t - 1] != '.' &&
           strcmp(l->line[1], "") == 0 && count_headings(l, 1) == 1 && sections >= 4 &&
           sections <= 6 && sections == count_headings(l, 0) - 1 && count_prefixed(l, "- ") == 0 &&
           !strstr(o, "comments") && l->line[0][t - 1] != '?';
}

static bool ck_blog_intro(const char *o, const char *p, const lines_t *l)
{
    /* an opening, a body, and the promise of what the post will give */
    int s = count_sentences(o);
    return single_paragraph(o) && s >= 3 && s <= 5 && FROM_BANK(o, B_OPEN, false) &&
           ends_with_bank(l->line[0], B_PROMISE, ARRAY_LEN(B_PROMISE));
}

static bool ck_outline(const char *o, const char *p, const lines_t *l)
{
    int n = count_numbered(l);
    if (n < 5 || n > 8 || find_line(l, "1. Introduction") < 0 || !starts(l->line[0], "# ") ||
        count_headings(l, 0) != 1)
        return false;
    /* every numbered section has 2 or 3 sub-points */
    for (int i = 0; i < l->n; i++) {
        if (!numbered(l->line[i]))
            continue;
        int subs = 0;
        for (int j = i + 1; j < l->n && starts(l->line[j], "   - "); j++)
            subs++;
        if (subs < 2 || subs > 3)
            return false;
    }
    return strstr(o, ". Conclusion\n") != NULL;
}

static bool ck_outro(const char *o, const char *p, const lines_t *l)
{
    return count_blocks(o) <= 2 && strchr(o, '?') && strstr(o, "comments");
}

static bool ck_blog_paragraph(const char *o, const char *p, const lines_t *l)
{
    int s = count_sentences(o);
    return single_paragraph(o) && s >= 4 && s <= 6 && FROM_BANK(o, B_OPEN, false) &&
           !ends_with_bank(l->line[0], B_PROMISE, ARRAY_LEN(B_PROMISE));
}

static bool ck_blog_post(const char *o, const char *p, const lines_t *l)
{
    int blocks = count_blocks(o), sections = count_headings(l, 2);
    return blocks >= 6 && blocks <= 7 && strcmp(l->line[1], "") == 0 &&
           strstr(o, "in the comments.\n") && starts(l->line[0], "# ") &&
           count_headings(l, 1) == 1 && sections >= 4 && sections <= 5;
}

static bool ck_blog_section(const char *o, const char *p, const lines_t *l)
{
    int blocks = count_blocks(o);
    size_t t = strlen(l->line[0]);
    return blocks >= 3 && blocks <= 4 && starts(l->line[0], "## ") && l->line[0][t - 1] != '.' &&
           count_headings(l, 0) == 1;
}

static bool ck_talking_points(const char *o, const char *p, const lines_t *l)
{
    return l->n >= 5 && l->n <= 8 && count_prefixed(l, "- ") == l->n;
}

static bool ck_numbered_only(const lines_t *l, int lo, int hi)
{
    int n = count_numbered(l);
    return n >= lo && n <= hi && n == l->n;
}

static bool ck_blog_title(const char *o, const char *p, const lines_t *l)
{
    return ck_numbered_only(l, 5, 10) && numbered_from_bank(l, B_TITLE, ARRAY_LEN(B_TITLE));
}

static bool ck_cta(const char *o, const char *p, const lines_t *l)
{
    if (!ck_numbered_only(l, 3, 5) || !numbered_from_bank(l, B_CTA, ARRAY_LEN(B_CTA)))
        return false;
    for (int i = 0; i < l->n; i++)
        if (words_of(strchr(l->line[i], ' ') + 1) > 12)
            return false;
    return true;
}

/* The share (0..1) of a's words (ASCII letters and digits, case folded; others split
 * words, so non-ASCII text counts as no words) that also occur in b. 1 when a has none. */
static double word_share(const char *a, const char *b)
{
    int words = 0, found = 0;
    const char *s = a;
    while (*s) {
        while (*s && !isalnum((unsigned char)*s))
            s++;
        const char *w = s;
        while (*s && isalnum((unsigned char)*s))
            s++;
        size_t n = (size_t)(s - w);
        if (n == 0)
            continue;
        words++;
        for (const char *t = b; *t;) {
            while (*t && !isalnum((unsigned char)*t))
                t++;
            const char *v = t;
            while (*t && isalnum((unsigned char)*t))
                t++;
            if ((size_t)(t - v) == n && strncasecmp(v, w, n) == 0) {
                found++;
                break;
            }
        }
    }
    return words ? (double)found / words : 1.0;
}

/* A rewrite says the prompt again in other words: about its length, not the same
 * text, and (for a prompt long enough to judge) most of its words still the prompt's. */
static bool ck_rewrite(const char *o, const char *p, const lines_t *l)
{
    size_t n = strlen(o), pn = strlen(p);
    /* and, for a prompt long enough to judge, as many sentences, most of its words */
    return strcmp(o, p) != 0 && n >= pn / 2 && n <= pn * 2 + 40 &&
           (pn < 60 || (word_share(o, p) >= 0.5 && word_share(p, o) >= 0.5 &&
                        count_sentences(o) == count_sentences(p)));
}

/* A summary is shorter than a long prompt and made of its words. */
static bool ck_summary(const char *o, const char *p, const lines_t *l)
{
    size_t n = strlen(o), pn = strlen(p);
    /* whole sentences: a long prompt's summary ends as a sentence does */
    size_t e = n;
    while (e > 0 && (o[e - 1] == '\n' || o[e - 1] == ' '))
        e--;
    return n > 0 && (pn < 60 || (n < pn && e > 0 && strchr(".!?", o[e - 1]))) &&
           word_share(o, p) >= 0.8;
}

static bool ck_faq(const char *o, const char *p, const lines_t *l)
{
    /* each question in bold, its answer on the next line */
    int q = count_prefixed(l, "**Q: "), a = count_prefixed(l, "A: ");
    if (q < 4 || q > 6 || q != a || count_headings(l, 0) != 0)
        return false;
    for (int i = 0; i < l->n; i++) {
        if (!starts(l->line[i], "**Q: "))
            continue;
        size_t t = strlen(l->line[i]);
        if (t < 8 || strcmp(l->line[i] + t - 3, "?**") != 0 || i + 1 >= l->n ||
            !starts(l->line[i + 1], "A: "))
            return false;
    }
    return true;
}

static bool ck_hashtags(const char *o, const char *p, const lines_t *l)
{
    int k = l->n == 1 ? hashtag_count(l->line[0]) : -1;
    return k >= 8 && k <= 15;
}

static bool ck_headline(const char *o, const char *p, const lines_t *l)
{
    return ck_numbered_only(l, 5, 8) && numbered_from_bank(l, B_HEAD, ARRAY_LEN(B_HEAD));
}

static bool ck_how_it_works(const char *o, const char *p, const lines_t *l)
{
    int steps = 0;
    for (int i = 0; i < l->n; i++) {
        char want[32];
        snprintf(want, sizeof want, "## Step %d: ", steps + 1);
        if (starts(l->line[i], want)) {
            /* the step's text under its heading, then a blank line or the end */
            if (i + 1 >= l->n || !isupper((unsigned char)l->line[i + 1][0]) ||
                (i + 2 < l->n && l->line[i + 2][0]))
                return false;
            steps++;
        }
    }
    return steps >= 3 && steps <= 5 && count_headings(l, 0) == steps;
}

static bool ck_meta_description(const char *o, const char *p, const lines_t *l)
{
    static const char *const openers[] = {"{Discover|Learn|Explore} ", "{Your|A} ",
                                          "{Looking for|Curious about} "};
    size_t t = l->n == 1 ? strlen(l->line[0]) : 0;
    return l->n == 1 && t > 0 && u8_chars(l->line[0]) <= 160 &&
           (l->line[0][t - 1] == '.' || l->line[0][t - 1] == '?') &&
           FROM_BANK(l->line[0], openers, false);
}

static bool ck_meta_keywords(const char *o, const char *p, const lines_t *l)
{
    int k = comma_items(o);
    return k >= 5 && k <= 15;
}

static bool ck_mission(const char *o, const char *p, const lines_t *l)
{
    int s = count_sentences(o);
    return single_paragraph(o) && s >= 1 && s <= 2 &&
           (starts(o, "Our mission is") || starts(o, "We exist"));
}

static bool ck_newsletter(const char *o, const char *p, const lines_t *l)
{
    if (!starts(l->line[0], "Subject: ") || strcmp(l->line[1], "") != 0)
        return false;
    if (!starts(l->line[2], "Hi") && !starts(l->line[2], "Hello"))
        return false;
    int heads = 0;
    for (int i = 4; i < l->n; i++)
        heads += starts(l->line[i], "## ") && strchr(l->line[i], ':') &&
                 strcmp(l->line[i - 1], "") == 0 && i + 1 < l->n && l->line[i + 1][0];
    if (heads != count_headings(l, 0))
        return false;
    size_t t = strlen(l->line[l->n - 2]);
    return heads >= 2 && heads <= 3 && l->line[l->n - 2][t - 1] == ',';
}

static bool ck_pas(const char *o, const char *p, const lines_t *l)
{
    const char *a = strstr(o, "**Pain:** "), *b = strstr(o, "\n**Agitate:** "),
               *c = strstr(o, "\n**Solution:** ");
    return a == o && b && c && b < c && count_blocks(o) == 3;
}

static bool ck_paragraph(const char *o, const char *p, const lines_t *l)
{
    static const char *const openers[] = {"When it comes to $t, a few things matter more "
                                          "than the rest.", "$t deserves a closer look",
                                          "There is more to $t than meets the eye."};
    int s = count_sentences(o);
    return single_paragraph(o) && s >= 5 && s <= 7 && FROM_BANK(o, openers, false);
}

static bool ck_press_release(const char *o, const char *p, const lines_t *l)
{
    bool dateline = false;
    for (int i = 0; i < l->n; i++)
        dateline |= starts(l->line[i], "[CITY] — [Month Day, Year] — ") &&
                    strlen(l->line[i]) > 40;
    const char *open = strstr(o, "“"), *close = open ? strstr(open, "”") : NULL;
    /* the closing "###" escaped, or it would be an empty heading */
    return strcmp(l->line[0], "FOR IMMEDIATE RELEASE") == 0 && dateline && open && close &&
           strstr(close, " said ") && l->n > 2 && starts(l->line[2], "# ") &&
           find_line(l, "## About [Organization]") > 0 && count_headings(l, 0) == 2 &&
           strcmp(l->line[l->n - 1], "\\###") == 0;
}

static bool ck_social_post(const char *o, const char *p, const lines_t *l)
{
    int k = hashtag_count(l->line[l->n - 1]);
    return count_blocks(o) == 2 && k >= 2 && k <= 3 && count_sentences(l->line[0]) <= 5;
}

static bool ck_caption(const char *o, const char *p, const lines_t *l)
{
    int k = hashtag_count(l->line[l->n - 1]);
    bool emoji = false;
    for (const char *q = o; *q; q++)
        emoji |= (unsigned char)*q == 0xF0 || starts(q, "\xE2\x9C") || starts(q, "\xE2\x98");
    return k >= 3 && k <= 5 && l->n == 4 && strcmp(l->line[2], "") == 0 && !emoji;
}

static bool ck_startup_ideas(const char *o, const char *p, const lines_t *l)
{
    int n = count_numbered(l), bold = 0;
    for (int i = 0; i < l->n; i++) /* each idea's name in bold: "1. **Name**" */
        if (numbered(l->line[i]))
            bold += strstr(l->line[i], ". **") != NULL &&
                    strcmp(l->line[i] + strlen(l->line[i]) - 2, "**") == 0;
    return n >= 3 && n <= 5 && bold == n && count_prefixed(l, "   Problem: ") == n &&
           count_prefixed(l, "   Solution: ") == n && count_prefixed(l, "   Business model: ") == n;
}

static bool ck_startup_names(const char *o, const char *p, const lines_t *l)
{
    if (!ck_numbered_only(l, 8, 12))
        return false;
    for (int i = 0; i < l->n; i++)
        if (!strstr(l->line[i], " — "))
            return false;
    return true;
}

static bool ck_subheadline(const char *o, const char *p, const lines_t *l)
{
    if (!ck_numbered_only(l, 3, 5) || !numbered_from_bank(l, B_SUBLINE, ARRAY_LEN(B_SUBLINE)))
        return false;
    for (int i = 0; i < l->n; i++)
        if (l->line[i][strlen(l->line[i]) - 1] != '.')
            return false;
    return true;
}

static bool ck_testimonial(const char *o, const char *p, const lines_t *l)
{
    return starts(o, "“") && strstr(o, "”\n— ") && l->n == 2 && starts(l->line[1], "— ") &&
           strchr(l->line[1], ',');
}

static bool ck_social_quote(const char *o, const char *p, const lines_t *l)
{
    size_t t = strlen(o);
    return l->n == 1 && starts(o, "“") && t > 4 && strcmp(o + t - 4, "”\n") == 0 &&
           words_of(o) <= 25 && !strchr(o, '#');
}

static bool ck_social_bio(const char *o, const char *p, const lines_t *l)
{
    static const char *const openers[] = {"{Helping|Inspiring} ", "{All things|Everything} ",
                                          "$t {lover|enthusiast} "};
    return l->n == 1 && u8_chars(l->line[0]) <= 160 && u8_chars(l->line[0]) > 10 &&
           FROM_BANK(l->line[0], openers, false);
}

static bool ck_value_prop(const char *o, const char *p, const lines_t *l)
{
    /* headline, supporting line, then three bullets */
    return count_prefixed(l, "- ") == 3 && l->n == 6 && starts(l->line[0], "# ") &&
           count_headings(l, 0) == 1 && l->line[1][0] != '-' && count_blocks(o) == 2;
}

static bool ck_video_description(const char *o, const char *p, const lines_t *l)
{
    int at = find_line(l, "Chapters:");
    if (at < 0 || at + 1 >= l->n || strcmp(l->line[at + 1], "00:00 Intro") != 0)
        return false;
    int prev = -1, chapters = 0;
    for (int i = at + 1; i < l->n && l->line[i][0]; i++) {
        int mm, ss;
        if (sscanf(l->line[i], "%2d:%2d ", &mm, &ss) != 2 || mm * 60 + ss <= prev)
            return false;
        prev = mm * 60 + ss;
        chapters++;
    }
    int k = hashtag_count(l->line[l->n - 1]);
    return chapters >= 5 && k >= 3 && k <= 5 && strstr(o, "ubscribe");
}

static bool ck_video_script(const char *o, const char *p, const lines_t *l)
{
    int scenes = 0;
    for (int i = 0; i < l->n; i++) {
        char want[40];
        snprintf(want, sizeof want, "## Scene %d — ", scenes + 1);
        if (!starts(l->line[i], want))
            continue;
        if (i + 2 >= l->n || !starts(l->line[i + 1], "[Visual: ") ||
            !starts(l->line[i + 2], "Narrator: "))
            return false;
        scenes++;
    }
    return scenes >= 3 && scenes <= 6 && count_headings(l, 0) == scenes;
}

static bool ck_video_tags(const char *o, const char *p, const lines_t *l)
{
    int k = comma_items(o);
    return k >= 5 && k <= 15;
}

static bool ck_video_title(const char *o, const char *p, const lines_t *l)
{
    if (!ck_numbered_only(l, 5, 5))
        return false;
    for (int i = 0; i < l->n; i++) { /* titles of their own, not a sentence */
        const char *t = strchr(l->line[i], ' ') + 1;
        if (t[strlen(t) - 1] == '.' || FROM_BANK(t, B_TITLE, true) || FROM_BANK(t, B_HEAD, true))
            return false;
    }
    return true;
}

static bool ck_vision(const char *o, const char *p, const lines_t *l)
{
    int s = count_sentences(o);
    return single_paragraph(o) && s >= 1 && s <= 2 && strstr(o, "a world where");
}

static bool ck_product_sheet(const char *o, const char *p, const lines_t *l)
{
    int h2 = count_headings(l, 2);
    return starts(o, "# Product: ") && find_line(l, "## Overview") > 0 &&
           find_line(l, "## Key features") > 0 && find_line(l, "## Benefits") > 0 &&
           find_line(l, "## Ideal for") > 0 && count_prefixed(l, "- ") >= 5 &&
           count_headings(l, 1) == 1 && h2 >= 4 && h2 <= 5;
}

static bool ck_welcome_email(const char *o, const char *p, const lines_t *l)
{
    int n = count_numbered(l);
    return starts(l->line[0], "Subject: ") && strcmp(l->line[1], "") == 0 &&
           (starts(l->line[2], "Hi") || starts(l->line[2], "Hello")) && n >= 2 && n <= 3 &&
           starts(l->line[l->n - 1], "The ") && l->line[l->n - 2][strlen(l->line[l->n - 2]) - 1] == ',';
}

static bool ck_push(const char *o, const char *p, const lines_t *l)
{
    if (count_numbered(l) != 3)
        return false;
    for (int i = 0; i < l->n; i++) {
        if (!numbered(l->line[i]))
            continue;
        if (u8_chars(l->line[i] + 3) > 40 || i + 1 >= l->n || !starts(l->line[i + 1], "   ") ||
            u8_chars(l->line[i + 1] + 3) > 120 || u8_chars(l->line[i + 1] + 3) < 5)
            return false;
    }
    return true;
}

static bool ck_listicle(const char *o, const char *p, const lines_t *l)
{
    /* "# 8 Ways ...", then "## 1. ..." to "## 8. ..." */
    int said = starts(o, "# ") ? atoi(o + 2) : 0;
    int items = 0;
    for (int i = 1; i < l->n; i++)
        items += starts(l->line[i], "## ") && numbered(l->line[i] + 3) == items + 1;
    return said >= 5 && said <= 10 && items == said && count_headings(l, 2) == said &&
           count_headings(l, 0) == said + 1;
}

static bool ck_grammar(const char *o, const char *p, const lines_t *l)
{
    /* first letter capitalised; a text that ends in a letter or digit gets a stop */
    size_t t = strlen(o), pn = strlen(p);
    while (pn > 0 && strchr(" \t\n", p[pn - 1]))
        pn--;
    bool alnum_end = pn > 0 && ((p[pn - 1] >= 'a' && p[pn - 1] <= 'z') ||
                                (p[pn - 1] >= 'A' && p[pn - 1] <= 'Z') ||
                                (p[pn - 1] >= '0' && p[pn - 1] <= '9'));
    /* and it is the prompt's own text: its words, about its length */
    return t > 0 && !(o[0] >= 'a' && o[0] <= 'z') && (!alnum_end || strchr(".!?", o[t - 1])) &&
           word_share(o, p) >= 0.9 && word_share(p, o) >= 0.9 && t <= pn + pn / 5 + 8 &&
           t + t / 5 + 8 >= pn;
}

static bool ck_blog_tags(const char *o, const char *p, const lines_t *l)
{
    int k = comma_items(o);
    return k >= 5 && k <= 10;
}

static bool ck_pros_cons(const char *o, const char *p, const lines_t *l)
{
    int pros = find_line(l, "## Pros"), cons = find_line(l, "## Cons");
    if (pros < 0 || cons < pros || count_headings(l, 0) != 2)
        return false;
    int np = 0, nc = 0;
    for (int i = pros + 1; i < l->n && starts(l->line[i], "- "); i++)
        np++;
    for (int i = cons + 1; i < l->n && starts(l->line[i], "- "); i++)
        nc++;
    return np >= 3 && np <= 5 && nc >= 3 && nc <= 5;
}

static bool ck_google_ad(const char *o, const char *p, const lines_t *l)
{
    static const char *const labels[] = {"Headline 1: ", "Headline 2: ", "Headline 3: ",
                                         "Description 1: ", "Description 2: "};
    if (l->n != 5)
        return false;
    for (int i = 0; i < 5; i++) {
        size_t max = i < 3 ? 30 : 90, lab = strlen(labels[i]);
        if (!starts(l->line[i], labels[i]) || u8_chars(l->line[i] + lab) > max ||
            u8_chars(l->line[i] + lab) == 0)
            return false;
    }
    return true;
}

static bool ck_facebook_ad(const char *o, const char *p, const lines_t *l)
{
    int h = -1;
    for (int i = 0; i < l->n; i++)
        if (starts(l->line[i], "Headline: "))
            h = i;
    return starts(o, "Primary text: ") && h > 0 && u8_chars(l->line[h] + 10) <= 40 &&
           count_prefixed(l, "Description: ") == 1 && count_prefixed(l, "Call to action: ") == 1;
}

static bool ck_job(const char *o, const char *p, const lines_t *l)
{
    int r = find_line(l, "## Responsibilities"), q = find_line(l, "## Requirements"),
        w = find_line(l, "## What we offer");
    if (!starts(o, "# Job title: ") || r < 0 || q < r || w < q ||
        find_line(l, "## About the role") != 2 || count_headings(l, 0) != 5)
        return false;
    int nr = 0, nq = 0;
    for (int i = r + 1; i < l->n && starts(l->line[i], "- "); i++)
        nr++;
    for (int i = q + 1; i < l->n && starts(l->line[i], "- "); i++)
        nq++;
    return nr >= 4 && nq >= 4 && !strstr(o, "$");
}

static bool ck_review(const char *o, const char *p, const lines_t *l)
{
    if (l->n < 4 || !starts(l->line[0], "# ") || !starts(l->line[1], "**Rating:** ") ||
        count_headings(l, 0) != 1)
        return false;
    int stars = 0, blanks = 0;
    const char *q = l->line[1] + 12;
    for (; starts(q, "★") || starts(q, "☆"); q += 3)
        stars += starts(q, "★"), blanks++;
    int said = 0;
    return blanks == 5 && sscanf(q, " (%d/5)", &said) == 1 && said == stars && stars >= 1 &&
           count_sentences(o) >= 3;
}

static bool ck_feature_section(const char *o, const char *p, const lines_t *l)
{
    int blocks = count_blocks(o), h2 = count_headings(l, 2);
    size_t t = strlen(l->line[0]);
    return starts(l->line[0], "# ") && l->line[0][t - 1] == '?' && blocks >= 5 && blocks <= 6 &&
           h2 == blocks - 2 && count_headings(l, 0) == h2 + 1;
}

static const struct {
    int id;
    check_fn check;
} checks[] = {
    {1, ck_freestyle},         {2, ck_about},           {3, ck_advert},
    {4, ck_article},           {5, ck_blog_intro},      {6, ck_outline},
    {7, ck_outro},             {8, ck_blog_paragraph},  {9, ck_blog_post},
    {10, ck_blog_section},     {11, ck_talking_points}, {12, ck_blog_title},
    {13, ck_cta},              {14, ck_rewrite},        {15, ck_summary},
    {16, ck_faq},              {17, ck_hashtags},       {18, ck_headline},
    {19, ck_how_it_works},     {20, ck_meta_description}, {21, ck_meta_keywords},
    {22, ck_mission},          {23, ck_newsletter},     {24, ck_pas},
    {25, ck_paragraph},        {26, ck_press_release},  {27, ck_social_post},
    {28, ck_caption},          {29, ck_startup_ideas},  {30, ck_startup_names},
    {31, ck_subheadline},      {32, ck_testimonial},    {33, ck_social_quote},
    {34, ck_social_bio},       {35, ck_value_prop},     {36, ck_video_description},
    {37, ck_video_script},     {38, ck_video_tags},     {39, ck_video_title},
    {40, ck_vision},           {41, ck_product_sheet},  {42, ck_welcome_email},
    {43, ck_push},             {44, ck_listicle},       {45, ck_grammar},
    {46, ck_blog_tags},        {47, ck_pros_cons},      {48, ck_google_ad},
    {49, ck_facebook_ad},      {50, ck_job},            {51, ck_review},
    {52, ck_feature_section},
};

/* ------------------------------------------------------------------ prompts */

typedef struct {
    const char *label;
    const char *text;
    const char *marker; /* a word of the prompt that must appear; NULL: none */
} prompt_t;

static char long_prompt[16384 + 1];

static void make_long_prompt(void)
{
    static const char *const sent[] = {
        "The lighthouse keeper climbs the tower every evening before dusk.",
        "Storms on the northern coast can last for days and test every lighthouse.",
        "Old logbooks describe ships, weather and the slow turning of the great lens.",
        "Modern automation changed lighthouse keeping, but the romance remains.",
        "Visitors still ask how keepers lived through long winters alone.",
    };
    size_t n = 0, i = 0;
    while (n < sizeof long_prompt - 1) {
        const char *s = sent[i++ % 5];
        for (size_t k = 0; s[k] && n < sizeof long_prompt - 1; k++)
            long_prompt[n++] = s[k];
        if (n < sizeof long_prompt - 1)
            long_prompt[n++] = ' ';
    }
    long_prompt[n] = '\0';
}

static const prompt_t prompts[] = {
    {"english",
     "Write a blog post about sustainable urban gardening for beginners. Cover composting, "
     "small balconies and rainwater. Keep it friendly and practical.",
     "gardening"},
    {"multibyte",
     "Café crème brûlée 🍮 for Zürich's bakers — naïve résumé tips 🎉 and 東京の抹茶 スイーツ",
     "brûlée"},
    {"stopwords", "the and of to with a", NULL},
    {"one-char", "x", "x"},
    {"punctuation", "?!... --- ;;", NULL},
    {"long", long_prompt, "lighthouse"},
};

/* ------------------------------------------------------------------ tests */

static char *gen(int id, const char *prompt, double c, uint64_t seed)
{
    buf_t b;
    buf_init(&b);
    builtin_text(id, prompt, c, seed, &b);
    return buf_steal(&b);
}

static bool valid_utf8(const char *s)
{
    json_t *j = json_stringn(s, strlen(s));
    bool ok = j != NULL;
    json_decref(j);
    return ok;
}

/* The templates that write Markdown headings (a string of ids, for strchr). */
static const char heading_templates[] = {2, 3, 4, 6, 9, 10, 19, 23, 26, 35, 37, 41, 44, 47,
                                         50, 51, 52, 0};

static void test_shapes(void)
{
    CHECK_INT(ARRAY_LEN(checks), TEMPLATE_COUNT);
    for (size_t c = 0; c < ARRAY_LEN(checks); c++) {
        CHECK_INT(checks[c].id, c + 1);
        for (size_t p = 0; p < ARRAY_LEN(prompts); p++) {
            for (int level = 0; level < 3; level++) {
                double creativity = level * 0.5;
                char *out = gen(checks[c].id, prompts[p].text, creativity, 1000 + p);
                lines_t l;
                lines_split(out, &l);
                CHECK_MSG(strlen(out) > 0 && l.n > 0, "template %d prompt %s: empty", checks[c].id,
                          prompts[p].label);
                CHECK_MSG(valid_utf8(out), "template %d prompt %s: invalid UTF-8", checks[c].id,
                          prompts[p].label);
                bool ok = l.n > 0 && checks[c].check(out, prompts[p].text, &l);
                /* Markdown: only the templates with a title or sections write headings
                 * (their checkers count them); no other line, a hashtag line least of
                 * all, may read as one. Rewrite, summary and grammar keep the prompt's. */
                int id = checks[c].id;
                if (!strchr(heading_templates, id) && id != 14 && id != 15 && id != 45)
                    CHECK_MSG(count_headings(&l, 0) == 0, "template %d: a heading in:\n%s", id,
                              out);
                CHECK_MSG(ok, "template %d (%s) prompt %s creativity %.1f: wrong shape:\n%s",
                          checks[c].id, template_get(checks[c].id)->name, prompts[p].label,
                          creativity, out);
                if (prompts[p].marker)
                    CHECK_MSG(strcasestr(out, prompts[p].marker) != NULL,
                              "template %d prompt %s: \"%s\" missing:\n%s", checks[c].id,
                              prompts[p].label, prompts[p].marker, out);
                lines_free(&l);
                free(out);
            }
        }
    }
}

/* Output length equals strlen: no NUL inside. */
static void test_no_nul(void)
{
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        buf_t b;
        buf_init(&b);
        builtin_text(id, prompts[1].text, 1, 7, &b);
        CHECK_MSG(b.len == strlen(buf_cstr(&b)) && b.len > 0, "template %d: NUL inside", id);
        buf_free(&b);
    }
}

static void test_creativity_zero_repeatable(void)
{
    static const uint64_t seeds[] = {0, 1, 42, 0xDEADBEEFull, UINT64_MAX};
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        for (size_t p = 0; p < ARRAY_LEN(prompts); p += 1) {
            char *first = gen(id, prompts[p].text, 0, seeds[0]);
            for (size_t s = 1; s < ARRAY_LEN(seeds); s++) {
                char *other = gen(id, prompts[p].text, 0, seeds[s]);
                CHECK_MSG(strcmp(first, other) == 0, "template %d prompt %s: seed changed output",
                          id, prompts[p].label);
                free(other);
            }
            free(first);
        }
    }
}

/* At creativity 1, ten seeds give several different texts (grammar correction
 * alone has one right answer and ignores the seed). */
static void test_creativity_one_varies(void)
{
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        char *outs[10];
        int distinct = 0;
        for (int s = 0; s < 10; s++) {
            outs[s] = gen(id, prompts[0].text, 1, 0x1234567ull * (uint64_t)(s + 1));
            bool seen = false;
            for (int k = 0; k < s && !seen; k++)
                seen = strcmp(outs[k], outs[s]) == 0;
            distinct += !seen;
        }
        if (id == 45)
            CHECK_MSG(distinct == 1, "grammar must not depend on the seed (%d)", distinct);
        else
            CHECK_MSG(distinct >= 4, "template %d: only %d distinct outputs over 10 seeds", id,
                      distinct);
        for (int s = 0; s < 10; s++)
            free(outs[s]);
    }
}

/* Creativity between the extremes: the seed changes some templates, but less than at 1. */
static void test_creativity_scale(void)
{
    int changed_low = 0, changed_high = 0;
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        char *base = gen(id, prompts[0].text, 0, 1);
        for (uint64_t s = 2; s < 6; s++) {
            char *lo = gen(id, prompts[0].text, 0.25, s);
            char *hi = gen(id, prompts[0].text, 1, s);
            changed_low += strcmp(base, lo) != 0;
            changed_high += strcmp(base, hi) != 0;
            free(lo);
            free(hi);
        }
        free(base);
    }
    CHECK_MSG(changed_low > 0, "creativity 0.25 never varied");
    CHECK_MSG(changed_high > changed_low, "creativity 1 (%d) should vary more than 0.25 (%d)",
              changed_high, changed_low);
}

static void test_different_prompts_differ(void)
{
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        char *a = gen(id, "Tips for planning a family trip to Lisbon on a budget", 0, 1);
        char *b = gen(id, "A mobile app that helps nurses swap hospital shifts", 0, 1);
        CHECK_MSG(strcmp(a, b) != 0, "template %d: same text for different prompts", id);
        free(a);
        free(b);
    }
}

static void test_appends_and_bad_input(void)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "KEEP:");
    builtin_text(17, "coffee roasting", 0.5, 3, &b);
    CHECK(strncmp(buf_cstr(&b), "KEEP:#", 6) == 0);
    buf_free(&b);

    /* Out-of-range template and creativity, NULL prompt, invalid UTF-8: still text. */
    static const int ids[] = {0, 53, -1};
    for (size_t i = 0; i < ARRAY_LEN(ids); i++) {
        char *o = gen(ids[i], "garden", 0.5, 1);
        CHECK(strlen(o) > 0 && valid_utf8(o));
        free(o);
    }
    char *o = gen(1, "garden", NAN, 1);
    char *z = gen(1, "garden", 0, 99);
    CHECK_STR(o, z); /* NaN counts as 0 */
    free(o);
    free(z);
    o = gen(1, "garden", 7.5, 1);
    CHECK(strlen(o) > 0);
    free(o);
    o = gen(5, NULL, 0, 1);
    CHECK(strlen(o) > 0 && valid_utf8(o));
    free(o);
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        o = gen(id, "bad \xff\xfe bytes \xe2\x82 and gardening \xf0\x9f", 1, 5);
        CHECK_MSG(strlen(o) > 0 && valid_utf8(o), "template %d: invalid UTF-8 from bad input", id);
        free(o);
        o = gen(id, "   \n\t  ", 1, 5);
        CHECK_MSG(strlen(o) > 0 && strspn(o, " \t\n") < strlen(o), "template %d: blank output", id);
        free(o);
    }
}

static void test_grammar_table(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"i has went to teh store  yesterday ,and i buyed alot of apple",
         "I has went to the store yesterday, and I buyed a lot of apple."},
        {"This is is a test. it works", "This is a test. It works."},
        {"you should of seen a elephant", "You should have seen an elephant."},
        {"Fix the grammar: i dont recieve emails", "I don't receive emails."},
        {"we waited an hour for a apple pie!", "We waited an hour for an apple pie!"},
        {"Prices rose by 1,000 at 3:30 .Really", "Prices rose by 1,000 at 3:30. Really."},
        {"  - first item\n  - second  item", "- First item\n  - Second item."},
        {"café au lait est très bon", "Café au lait est très bon."},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *o = gen(45, cases[i].in, 0.75, 9);
        CHECK_STR(o, cases[i].want);
        free(o);
    }
}

static void test_rewrite(void)
{
    const char *in = "This is a very good and simple example of a big problem for customers.";
    char *o = gen(14, in, 0, 1);
    CHECK(strcmp(o, in) != 0);
    CHECK(strstr(o, "example") == NULL && strstr(o, "problem") == NULL); /* swapped */
    CHECK(strstr(o, "This is") || strstr(o, "this is"));                   /* rest kept */
    free(o);
    /* Nothing to swap: a reframing, not an echo. */
    o = gen(14, "Zebras graze at dawn.", 0, 1);
    CHECK(strcmp(o, "Zebras graze at dawn.") != 0 && strstr(o, "Zebras graze at dawn."));
    free(o);
    /* Case kept: "Good" → capitalised synonym. */
    o = gen(14, "Good results.", 0, 1);
    CHECK(o[0] >= 'A' && o[0] <= 'Z');
    free(o);
}

static void test_summary(void)
{
    const char *in =
        "Solar panels turn sunlight into electricity. Prices for solar panels fell sharply "
        "over the past decade. Many homeowners now install solar panels on their roofs. "
        "Batteries store the extra energy for the night. Some cities offer grants for solar "
        "panels. The weather in my town was cloudy yesterday.";
    for (uint64_t s = 0; s < 5; s++) {
        char *o = gen(15, in, 1, s);
        CHECK(strlen(o) < strlen(in) && strlen(o) > 20);
        CHECK(strcasestr(o, "solar") != NULL);
        CHECK(strstr(o, "cloudy") == NULL); /* the off-topic sentence goes */
        free(o);
    }
    /* A single long sentence is cut to its main clause or key words. */
    const char *one = "Our bakery in the old town sells sourdough bread, croissants, seasonal "
                      "fruit tarts and strong coffee to early commuters every morning";
    char *o = gen(15, one, 0, 1);
    CHECK(strlen(o) < strlen(one) && strlen(o) > 0);
    free(o);
    /* The 16k text is summarised far shorter than itself. */
    o = gen(15, long_prompt, 0.5, 1);
    CHECK(strlen(o) < strlen(long_prompt) / 4);
    free(o);
}

/* The topic is the noun phrase of the prompt, not its task words or verbs. */
static void test_topic_choice(void)
{
    static const struct {
        int id;
        const char *prompt, *want, *not_want;
    } cases[] = {
        {18, "A mobile app that helps nurses swap hospital shifts", "Mobile App", "Helps"},
        {18, "Write a blog post about sustainable urban gardening for beginners",
         "Sustainable Urban Gardening", "Blog Post"},
        {18, "Generate hashtags for my coffee shop", "Coffee Shop", "Hashtags"},
        {18, "yourself about with the a zebra", "Zebra", "Yourself"},
        {18, "Benefits of drinking green tea every morning", "Drinking Green Tea", NULL},
        {50, "Senior backend developer for a fintech startup in Berlin",
         "Job title: Senior Backend Developer\n", NULL},
        {50, "Handmade leather wallets", "Job title: Handmade Leather Wallets ", NULL},
        {22, "Tips for beginners who knit scarves", "beginners", NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *o = gen(cases[i].id, cases[i].prompt, 0, 1);
        CHECK_MSG(strstr(o, cases[i].want) != NULL, "\"%s\": want \"%s\" in:\n%s",
                  cases[i].prompt, cases[i].want, o);
        if (cases[i].not_want)
            CHECK_MSG(strstr(o, cases[i].not_want) == NULL, "\"%s\": \"%s\" in:\n%s",
                      cases[i].prompt, cases[i].not_want, o);
        free(o);
    }
}

/* Tags and hashtags keep the user's words, multibyte ones included. */
static void test_tags_keep_words(void)
{
    char *o = gen(17, "東京の抹茶 スイーツ and Zürich bakeries", 0, 1);
    CHECK(strstr(o, "#") == o && strstr(o, "抹茶") && strstr(o, "Zürich"));
    free(o);
    o = gen(21, "Handmade leather wallets for travellers", 0, 1);
    CHECK(strstr(o, "leather wallets") || strstr(o, "handmade leather wallets"));
    CHECK(strstr(o, "travellers") != NULL);
    free(o);
}

/* Each checker must reject what the other templates write: a checker that accepts
 * anything would prove nothing. Returns how many foreign outputs it accepted. */
static bool tag_trio(int id) { return id == 21 || id == 38 || id == 46; }

static void test_checkers_discriminate(void)
{
    char *outs[TEMPLATE_COUNT];
    for (int id = 1; id <= TEMPLATE_COUNT; id++)
        outs[id - 1] = gen(id, prompts[0].text, 0.5, 3);
    for (size_t c = 0; c < ARRAY_LEN(checks); c++) {
        int accepted = 0;
        for (int other = 0; other < TEMPLATE_COUNT; other++) {
            if (other == (int)c)
                continue;
            lines_t l;
            lines_split(outs[other], &l);
            bool yes = checks[c].check(outs[other], prompts[0].text, &l);
            if (yes && tag_trio(checks[c].id))
                CHECK_MSG(tag_trio(other + 1), "checker %d accepts template %d", checks[c].id,
                          other + 1);
            accepted += yes;
            if (yes && getenv("SHOW_ACCEPT"))
                fprintf(stderr, "checker %d accepts template %d:\n%s\n", checks[c].id, other + 1,
                        outs[other]);
            lines_free(&l);
        }
        if (getenv("SHOW_ACCEPT") && accepted)
            fprintf(stderr, "checker %d accepts %d foreign outputs\n", checks[c].id, accepted);
        /* none: except that meta keywords, video tags and blog tags are the same shape
         * by design (one lowercase comma-separated line, from the same tag writer) and
         * differ only in how many tags, in overlapping ranges; each of those three may
         * accept the other two, and nothing else */
        int limit = tag_trio(checks[c].id) ? 2 : 0;
        CHECK_MSG(accepted <= limit, "checker %d accepts %d other templates' outputs",
                  checks[c].id, accepted);
    }
    for (int i = 0; i < TEMPLATE_COUNT; i++)
        free(outs[i]);
}

typedef struct {
    int id;
    char *out;
} job_t;

static void *thread_main(void *arg)
{
    job_t *jobs = arg;
    for (int i = 0; i < TEMPLATE_COUNT; i++)
        jobs[i].out = gen(jobs[i].id, prompts[1].text, 0.75, 77);
    return NULL;
}

static void test_threads(void)
{
    enum { NT = 4 };
    static job_t jobs[NT][TEMPLATE_COUNT];
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) {
        for (int i = 0; i < TEMPLATE_COUNT; i++)
            jobs[t][i].id = i + 1;
        pthread_create(&th[t], NULL, thread_main, jobs[t]);
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < TEMPLATE_COUNT; i++) {
        char *want = gen(i + 1, prompts[1].text, 0.75, 77);
        for (int t = 0; t < NT; t++) {
            CHECK_MSG(strcmp(jobs[t][i].out, want) == 0, "template %d differs in thread %d",
                      i + 1, t);
            free(jobs[t][i].out);
        }
        free(want);
    }
}

/* §17: length and tone on every template. For each template and a few prompts (at
 * creativity 0, and at 0.6 with a seed): short has 0.3-0.75 of medium's words and long
 * 1.5-2.8 times them (summed over the prompts) where the template has a length, and the
 * same text where it has none; the eight tones give eight different texts, pairwise;
 * neutral and medium are the writer's own text (builtin_text). */
static void test_length_and_tone(void)
{
    static const char *const lt_prompts[] = {
        "a post about growing tomatoes on a balcony for beginners",
        "coffee roasting at home",
        "remote work tips for small teams. Keep meetings short and write things down.",
        "Our new running shoe is light, cheap and lasts for years.",
    };
    static const char *const tones[] = {"neutral", "friendly", "professional", "casual",
                                        "persuasive", "witty", "formal", "empathetic"};
    static const char *const lengths[] = {"short", "medium", "long"};
    for (int id = 1; id <= 52; id++) {
        for (int pass = 0; pass < 2; pass++) {
            double c = pass ? 0.6 : 0;
            uint64_t seed = pass ? 99 : 0;
            long long words[3] = {0, 0, 0};
            bool same_all = true;
            for (size_t p = 0; p < ARRAY_LEN(lt_prompts); p++) {
                buf_t b[3];
                for (int l = 0; l < 3; l++) {
                    buf_init(&b[l]);
                    builtin_text_styled(id, lt_prompts[p], c, seed, NULL, lengths[l], &b[l]);
                    words[l] += words_of(b[l].data);
                }
                same_all &= strcmp(b[0].data, b[1].data) == 0 && strcmp(b[1].data, b[2].data) == 0;
                buf_t plain;
                buf_init(&plain);
                builtin_text(id, lt_prompts[p], c, seed, &plain);
                CHECK_MSG(strcmp(plain.data, b[1].data) == 0, "template %d: medium is not the writer's text", id);
                buf_free(&plain);
                for (int l = 0; l < 3; l++)
                    buf_free(&b[l]);

                buf_t t[8];
                for (int k = 0; k < 8; k++) {
                    buf_init(&t[k]);
                    builtin_text_styled(id, lt_prompts[p], c, seed, tones[k], NULL, &t[k]);
                }
                for (int i = 0; i < 8; i++)
                    for (int j = i + 1; j < 8; j++)
                        CHECK_MSG(strcmp(t[i].data, t[j].data) != 0,
                                  "template %d, prompt %zu: %s and %s give the same text", id, p,
                                  tones[i], tones[j]);
                for (int k = 0; k < 8; k++)
                    buf_free(&t[k]);
            }
            if (builtin_length_applies(id)) {
                double rs = (double)words[0] / (double)words[1];
                double rl = (double)words[2] / (double)words[1];
                CHECK_MSG(rs >= 0.3 && rs <= 0.75, "template %d (c=%g): short/medium %.2f", id, c, rs);
                CHECK_MSG(rl >= 1.5 && rl <= 2.8, "template %d (c=%g): long/medium %.2f", id, c, rl);
            } else {
                CHECK_MSG(same_all, "template %d has no length, yet its texts differ", id);
            }
        }
    }
    /* a tone and a length together */
    buf_t a, b;
    buf_init(&a);
    buf_init(&b);
    builtin_text_styled(9, lt_prompts[0], 0, 0, "formal", "long", &a);
    builtin_text_styled(9, lt_prompts[0], 0, 0, "casual", "long", &b);
    CHECK(strcmp(a.data, b.data) != 0);
    CHECK(words_of(a.data) > 300);
    /* casual contracts ("is not" -> "isn't"...), formal does not */
    CHECK(strstr(b.data, "n't") || strcasestr(b.data, "it's") || strcasestr(b.data, "'re"));
    CHECK(!strstr(a.data, "n't") && !strcasestr(a.data, "it's") && !strcasestr(a.data, "'re"));
    buf_free(&a);
    buf_free(&b);
}

int main(void)
{
    make_long_prompt();
    CHECK_INT(strlen(long_prompt), 16384);
    test_shapes();
    test_no_nul();
    test_creativity_zero_repeatable();
    test_creativity_one_varies();
    test_creativity_scale();
    test_different_prompts_differ();
    test_appends_and_bad_input();
    test_grammar_table();
    test_rewrite();
    test_summary();
    test_tags_keep_words();
    test_topic_choice();
    test_checkers_discriminate();
    test_threads();
    test_length_and_tone();
    TEST_DONE();
}
