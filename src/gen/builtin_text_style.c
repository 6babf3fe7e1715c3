/* builtin_text_style.c — §17's `length` and `tone` on the builtin writers' texts.
 *
 * A writer writes the medium text of its template; this file then makes it short or
 * long and gives it its tone, the same way for every template:
 *   length  The text is read as units: a heading line, a list item, a sentence of a
 *           paragraph. `short` keeps the units from the start until half the words are
 *           kept (the first unit always; a last paragraph of a sixth of the words or
 *           less — a sign-off, a call to action — too), and drops headings left with
 *           nothing under them. `long` adds after each paragraph's sentences as many
 *           sentences again, and to each list item a clause, from banks about the
 *           topic (the pattern language of builtin_text_pattern.c). Templates whose
 *           text is a line or a set of tags (titles, headlines, hashtags, keywords, a
 *           meta description, a push notification, the three transforms of the
 *           user's own text...) have no length: builtin_length_applies says which.
 *   tone    Every tone but neutral draws the writer's choices from streams mixed
 *           with the tone (other words, other sentences), has a sentence of its own
 *           after the first sentence of the first paragraph, and the phrasing of
 *           change_tone: contractions for the friendly, casual, witty and empathetic
 *           tones, none for the professional and formal ones.
 * neutral and medium leave the writer's text as it is. Part of builtin_text.c. */
#include "gen/builtin_text_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const tone_names[] = {"neutral", "friendly", "professional", "casual",
                                         "persuasive", "witty", "formal", "empathetic"};
static const int tone_contract[] = {0, 1, -1, 1, 0, 1, -1, 1};

/* Each tone's own sentence (two wordings), put after the first sentence. */
static const char *const tone_lines[][2] = {
    {NULL, NULL},
    {"{The good news|Good news}: $t is {easier to enjoy|friendlier} than it looks, and you are "
     "in good company.",
     "{Happily|Even better}, you do not need to be an expert to enjoy $t."},
    {"In practical terms, $t {calls for|deserves} a clear plan and measurable goals.",
     "{From a business perspective|Professionally speaking}, $t is best handled with a "
     "clear process."},
    {"Honestly, $t is no big deal once you get going.",
     "{Look|Real talk}, $t is {way simpler|a lot easier} than people make it sound."},
    {"There has never been a better moment to take $t seriously.",
     "{Imagine|Picture} what $t could do for you, starting today."},
    {"Think of $t as a good joke: timing is everything.",
     "$T: {like a cat|a bit like a cat}, it does best when you pretend not to care."},
    {"It should be noted that $t warrants careful and considered attention.",
     "{Accordingly|In consequence}, $t merits a measured and thorough approach."},
    {"If $t feels overwhelming right now, that is completely understandable.",
     "{It is okay|It is perfectly fine} to take $t one small step at a time."},
};

/* Sentences a long text adds to a paragraph, about its topic. */
static const char *const more[] = {
    "{In practice|Day to day}, $t {rewards|repays} {patience|a steady routine} more than "
    "{big gestures|grand plans}.",
    "{Small|Simple} {choices|habits} around $n add up {faster than you might expect|over time}.",
    "{It helps to|A good idea is to} {write down|note} what {works|does not work} with $t{ and "
    "why|}.",
    "{For|Among} $a, $t {often|usually} {starts|begins} with {one question|a single step}: what "
    "matters most?",
    "{Looking at|Thinking about} $n {side by side with|together with} $t {makes the picture "
    "clearer|shows what to do next}.",
    "{A little|Some} {attention to|care with} $w goes a long way.",
    "{There is no|You need no} {perfect|single right} {way|answer}; {consistency|regular "
    "effort} matters more.",
    "{Examples|Stories} from $a show how $t {fits|works} in {everyday life|real situations}.",
    "{Over time|With practice}, $t {becomes|feels} {second nature|easier and more natural}.",
    "{Mistakes|Missteps} with $n are {normal|part of learning}, and each one {teaches|shows} "
    "something.",
    "{It is worth|Take time} {comparing|weighing} {a few|two or three} options before "
    "{settling on|choosing} one.",
    "{The details|Small details} of $t {deserve|repay} {a second look|careful attention}.",
    "{Many people|Plenty of readers} {find|say} that $n {changed|shaped} how they see $t.",
    "{Keep|Hold on to} {the basics|what works} and {adjust|change} the rest as you {learn|go}.",
    "{A short|A quick} {review|check-in} {every week|now and then} keeps $t on track.",
    "{When in doubt|If unsure}, {start small|begin with $w} and build from there.",
};

/* Clauses a long text adds to a list item. */
static const char *const clauses[] = {
    "{worth|well worth} {a closer look|your time} for $a",
    "{with|and} {a practical|a simple} {example|tip} {or two|to try}",
    "{especially|above all} {useful|helpful} for $a",
    "{and how it|and why it} {connects|ties in} {to|with} $n",
    "{a good|an easy} place to {start|begin} with $t",
    "{explained|covered} {step by step|in plain words}, {with|and} $w in mind",
};

/* Templates where length means nothing (a line, a set of tags, the user's own text
 * transformed): 12 blog title, 14 rewrite, 15 summary, 17 hashtags, 18 headline,
 * 20 meta description, 21 meta keywords, 30 startup names, 31 subheadline,
 * 33 social quote, 38 video tags, 39 video title, 43 push notification, 45 grammar,
 * 46 blog tags. */
static const unsigned char no_length[53] = {[12] = 1, [14] = 1, [15] = 1, [17] = 1, [18] = 1,
                                            [20] = 1, [21] = 1, [30] = 1, [31] = 1, [33] = 1,
                                            [38] = 1, [39] = 1, [43] = 1, [45] = 1, [46] = 1};

bool builtin_length_applies(int template_id)
{
    return template_id >= 1 && template_id <= 52 && !no_length[template_id];
}

int bt_tone_index(const char *tone)
{
    for (int i = 0; tone && i < (int)ARRAY_LEN(tone_names); i++)
        if (strcmp(tone, tone_names[i]) == 0)
            return i;
    return 0;
}

int bt_length_index(const char *length)
{
    if (length && strcmp(length, "short") == 0)
        return 0;
    if (length && strcmp(length, "long") == 0)
        return 2;
    return 1;
}

/* ---- the text as lines and units ---- */

typedef enum { L_BLANK, L_HEAD, L_ITEM, L_PROSE } line_kind_t;

typedef struct {
    size_t at, len; /* the line, without its '\n' */
    line_kind_t kind;
    size_t prefix;  /* a list item's marker ("- ", "3. ") or an opening quote, kept */
    size_t suffix;  /* a closing quote, kept */
    bool furniture; /* a short line without a stop (a signature, "Best regards,") */
} line_t;

typedef struct {
    int line;
    size_t at, len; /* a sentence (prose), or the line's text after its marker */
    int words;
    bool keep;
} unit_t;

static int words_in(const char *s, size_t n)
{
    int w = 0;
    bool in = false;
    for (size_t i = 0; i < n; i++) {
        bool sp = s[i] == ' ' || s[i] == '\t' || s[i] == '\n';
        if (!sp && !in)
            w++;
        in = !sp;
    }
    return w;
}

static size_t item_prefix(const char *s, size_t n)
{
    size_t ind = 0;
    while (ind < n && s[ind] == ' ')
        ind++;
    s += ind, n -= ind;
    if (n >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+' || s[0] == '>') && s[1] == ' ')
        return ind + 2;
    size_t i = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    if (i > 0 && i + 1 < n && (s[i] == '.' || s[i] == ')') && s[i + 1] == ' ')
        return ind + i + 2;
    return 0;
}

static line_t *split_lines(const char *s, size_t n, int *count)
{
    int cap = 16, k = 0;
    line_t *v = xcalloc((size_t)cap, sizeof(*v));
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        if (k == cap)
            v = xrealloc(v, (size_t)(cap *= 2) * sizeof(*v));
        line_t *l = &v[k++];
        l->at = i;
        l->len = e - i;
        l->prefix = 0;
        size_t t = 0;
        while (t < l->len && s[i + t] == ' ')
            t++;
        if (t == l->len)
            l->kind = L_BLANK;
        else if (s[i] == '#' && l->len > strspn(s + i, "#") && s[i + strspn(s + i, "#")] == ' ')
            l->kind = L_HEAD; /* "## Title", not "#hashtag" */
        else if ((l->prefix = item_prefix(s + i, l->len)) > 0)
            l->kind = L_ITEM;
        else
            l->kind = L_PROSE;
        l->suffix = 0;
        if (l->kind == L_PROSE) {
            if (l->len >= 3 && memcmp(s + i, "\xE2\x80\x9C", 3) == 0)
                l->prefix = 3;
            else if (s[i] == '"')
                l->prefix = 1;
            if (l->len >= l->prefix + 3 && memcmp(s + i + l->len - 3, "\xE2\x80\x9D", 3) == 0)
                l->suffix = 3;
            else if (l->len > l->prefix && s[i + l->len - 1] == '"')
                l->suffix = 1;
            char last = l->len > l->suffix ? s[i + l->len - l->suffix - 1] : 0;
            l->furniture = words_in(s + i, l->len) <= 6 && last != '.' && last != '!' && last != '?';
        } else {
            l->furniture = false;
        }
        i = nl ? e + 1 : n;
    }
    *count = k;
    return v;
}

static unit_t *split_units(const char *s, const line_t *lines, int nl, int *count)
{
    int cap = 32, k = 0;
    unit_t *u = xcalloc((size_t)cap, sizeof(*u));
    for (int i = 0; i < nl; i++) {
        const line_t *l = &lines[i];
        if (l->kind == L_BLANK)
            continue;
        size_t p = l->at + l->prefix, end = l->at + l->len - l->suffix;
        while (p < end) {
            size_t e = l->kind == L_PROSE ? bt_sentence_end(s, end, p) : end;
            if (e <= p)
                e = end;
            if (k == cap)
                u = xrealloc(u, (size_t)(cap *= 2) * sizeof(*u));
            u[k++] = (unit_t){i, p, e - p, words_in(s + p, e - p), false};
            p = e;
            while (p < end && s[p] == ' ')
                p++;
        }
    }
    *count = k;
    return u;
}

/* Writes pattern into out as a sentence (capitalised), through g. */
static void put_pattern(gen_t *g, buf_t *out, const char *pattern)
{
    buf_t *saved = g->out;
    g->out = out;
    g->cap_pending = true;
    g->last = ' ';
    g_put(g, pattern);
    g->out = saved;
}

/* ---- short ---- */

static void make_short(const char *s, const line_t *lines, int nl, unit_t *u, int nu, buf_t *out)
{
    int total = 0;
    for (int i = 0; i < nu; i++)
        if (lines[u[i].line].kind != L_HEAD)
            total += u[i].words;
    int budget = (total + 1) / 2, kept = 0;
    bool any = false;
    for (int i = 0; i < nu; i++) /* lines kept whatever the length count first */
        if (lines[u[i].line].furniture)
            kept += u[i].words;
    for (int i = 0; i < nu; i++) {
        if (lines[u[i].line].kind == L_HEAD) {
            u[i].keep = kept < budget;
            continue;
        }
        if (lines[u[i].line].furniture) {
            u[i].keep = true;
            continue;
        }
        if (kept < budget || !any) {
            int next = kept + u[i].words;
            /* the unit that would pass the half by more than it stays under is left */
            if (any && next - budget > budget - kept)
                continue;
            u[i].keep = true;
            kept = next;
            any = true;
        }
    }
    /* the last paragraph, when short (a sign-off, a call to action) */
    int last_block = nl;
    while (last_block > 0 && lines[last_block - 1].kind == L_BLANK)
        last_block--;
    while (last_block > 0 && lines[last_block - 1].kind != L_BLANK)
        last_block--;
    int tail = 0;
    bool tail_kept = true;
    for (int i = 0; i < nu; i++)
        if (u[i].line >= last_block && lines[u[i].line].kind != L_HEAD) {
            tail += u[i].words;
            tail_kept &= u[i].keep;
        }
    if (!tail_kept && tail * 6 <= total)
        for (int i = 0; i < nu; i++)
            if (u[i].line >= last_block)
                u[i].keep = true;
    /* headings with nothing kept under them go */
    for (int i = 0; i < nu; i++) {
        if (lines[u[i].line].kind != L_HEAD || !u[i].keep)
            continue;
        bool body = false;
        for (int j = i + 1; j < nu && lines[u[j].line].kind != L_HEAD; j++)
            body |= u[j].keep;
        if (!body)
            u[i].keep = false;
    }
    /* the lines again, with their kept units */
    bool blank = false, started = false;
    int ui = 0;
    for (int i = 0; i < nl; i++) {
        const line_t *l = &lines[i];
        if (l->kind == L_BLANK) {
            blank = started;
            continue;
        }
        bool wrote = false;
        for (; ui < nu && u[ui].line == i; ui++) {
            if (!u[ui].keep)
                continue;
            if (!wrote) {
                if (blank)
                    buf_putc(out, '\n');
                blank = false;
                buf_append(out, s + l->at, l->prefix);
            } else {
                buf_putc(out, ' ');
            }
            buf_append(out, s + u[ui].at, u[ui].len);
            wrote = true;
        }
        if (wrote) {
            buf_append(out, s + l->at + l->len - l->suffix, l->suffix);
            buf_putc(out, '\n');
            started = true;
        }
    }
}

/* ---- long ---- */

static void make_long(gen_t *g, const char *s, const line_t *lines, int nl, const unit_t *u,
                      int nu, buf_t *out)
{
    uint64_t used = 0;
    int ui = 0;
    for (int i = 0; i < nl; i++) {
        const line_t *l = &lines[i];
        buf_append(out, s + l->at, l->len - l->suffix);
        int sentences = 0, words = 0;
        for (; ui < nu && u[ui].line == i; ui++) {
            sentences++;
            words += u[ui].words;
        }
        char last = l->len > l->suffix ? s[l->at + l->len - l->suffix - 1] : 0;
        bool ends = last == '.' || last == '!' || last == '?';
        if (l->kind == L_PROSE && ends && words > 4 && !l->furniture) {
            /* as many words again, in whole sentences */
            (void)sentences;
            for (int added = 0; added * 10 < words * 9;) {
                if (used == (1ull << ARRAY_LEN(more)) - 1)
                    used = 0;
                int idx;
                g_choose(g, ARRAY_LEN(more), 1, &used, &idx);
                buf_putc(out, ' ');
                size_t before = out->len;
                put_pattern(g, out, more[idx]);
                added += words_in(out->data + before, out->len - before);
            }
        } else if (l->kind == L_ITEM && words > 0 && words < 30) {
            /* "- item" → "- item, a clause" (a closing stop stays at the end) */
            bool stop = ends;
            if (stop)
                out->len--;
            buf_puts(out, last == ':' ? " " : " — ");
            buf_t c;
            buf_init(&c);
            put_pattern(g, &c, clauses[g_pick(g, ARRAY_LEN(clauses))]);
            if (c.len && c.data[0] >= 'A' && c.data[0] <= 'Z' && last != ':')
                c.data[0] = (char)(c.data[0] - 'A' + 'a');
            buf_append(out, c.data, c.len);
            buf_free(&c);
            if (stop)
                buf_putc(out, last);
        }
        buf_append(out, s + l->at + l->len - l->suffix, l->suffix);
        buf_putc(out, '\n');
    }
}

/* ---- tone ---- */

/* The tone's sentence after the first sentence of the first paragraph of prose (or,
 * with prepend, before the text when it has none); false when it has none. */
static bool add_tone_line(gen_t *g, int tone, bool prepend, const char *s, const line_t *lines,
                          int nl, buf_t *out)
{
    int at = -1;
    for (int i = 0; i < nl && at < 0; i++) {
        const line_t *l = &lines[i];
        char last = l->len ? s[l->at + l->len - 1] : 0;
        if (l->kind == L_PROSE && l->suffix == 0 && (last == '.' || last == '!' || last == '?') &&
            words_in(s + l->at, l->len) >= 6)
            at = i;
    }
    size_t end = lines[nl - 1].at + lines[nl - 1].len;
    if (at < 0) {
        if (prepend) {
            put_pattern(g, out, tone_lines[tone][g_pick(g, 2)]);
            buf_puts(out, "\n\n");
        }
        buf_append(out, s, end);
        return prepend;
    }
    const line_t *l = &lines[at];
    size_t e = bt_sentence_end(s, l->at + l->len, l->at + l->prefix);
    buf_append(out, s, e);
    buf_putc(out, ' ');
    put_pattern(g, out, tone_lines[tone][g_pick(g, 2)]);
    buf_append(out, s + e, end - e);
    return true;
}

bool bt_style(gen_t *g, size_t from, int tone, int length, bool prepend)
{
    buf_t *o = g->out;
    bool marked = false;
    if (o->len <= from || (tone == 0 && length == 1))
        return false;
    char *s = xstrndup(o->data + from, o->len - from);
    size_t n = o->len - from;
    buf_t a, b;
    buf_init(&a);
    buf_init(&b);
    int nl, nu;
    line_t *lines = split_lines(s, n, &nl);
    unit_t *u = split_units(s, lines, nl, &nu);
    if (length == 0 && nu > 0)
        make_short(s, lines, nl, u, nu, &a);
    else if (length == 2)
        make_long(g, s, lines, nl, u, nu, &a);
    else
        buf_append(&a, s, n);
    free(lines);
    free(u);
    if (tone != 0 && a.len) {
        lines = split_lines(a.data, a.len, &nl);
        marked = add_tone_line(g, tone, prepend, a.data, lines, nl, &b);
        free(lines);
        if (n && s[n - 1] == '\n' && (!b.len || b.data[b.len - 1] != '\n'))
            buf_putc(&b, '\n');
        buf_reset(&a);
        if (tone_contract[tone])
            bt_contract(b.data, b.len, tone_contract[tone] < 0, &a);
        else
            buf_append(&a, b.data, b.len);
    }
    o->len = from;
    buf_append(o, a.data ? a.data : "", a.len);
    buf_free(&a);
    buf_free(&b);
    free(s);
    return marked;
}
