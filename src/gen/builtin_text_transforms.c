/* builtin_text_transforms.c — the three templates that transform the prompt text
 * itself: rewrite (synonyms), summary (sentence extraction) and grammar (rule-based
 * fixes). Part of builtin_text.c (which see). */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ transforms */

/* The text to transform: the prompt without a leading "Fix the grammar:" style
 * instruction. */
static void bt_body(const char *s, size_t n, const char **body, size_t *blen)
{
    static const char *const verbs[] = {"correct", "fix", "grammar", "paraphrase", "proofread",
                                        "rephrase", "reword", "rewrite", "shorten", "summar",
                                        "text", "tl;dr"};
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    for (size_t j = i; j < n && j < i + 100; j++) {
        if (s[j] != ':' && s[j] != '\n')
            continue;
        char head[112];
        bt_lower(s + i, j - i < 100 ? j - i : 100, head);
        bool instr = false;
        for (size_t k = 0; k < ARRAY_LEN(verbs) && !instr; k++)
            instr = strstr(head, verbs[k]) != NULL;
        if (!instr)
            break;
        size_t b = j + 1;
        while (b < n && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r'))
            b++;
        if (b < n)
            i = b;
        break;
    }
    size_t e = n;
    while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r'))
        e--;
    *body = s + i;
    *blen = e - i;
}

static bool bt_ascii_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Length of the word at s (letters, apostrophes inside, any non-ASCII letter). */
static size_t bt_word_len(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (bt_ascii_alpha(c) || c >= 0x80) {
            if (c >= 0x80) {
                uint32_t cp;
                size_t l = utf8_next(s + i, n - i, &cp);
                if (!bt_is_word_cp(cp) && cp != 0x2019)
                    break;
                i += l;
                continue;
            }
            i++;
        } else if (c == '\'' && i > 0 && i + 1 < n && bt_ascii_alpha((unsigned char)s[i + 1])) {
            i++;
        } else {
            break;
        }
    }
    return i;
}

/* Replacement in the case of the original: "Good" → "Great", "GOOD" → "GREAT". */
static void bt_put_cased(buf_t *out, const char *orig, size_t on, const char *rep, size_t rn)
{
    bool first_up = orig[0] >= 'A' && orig[0] <= 'Z';
    bool all_up = on > 1 && first_up;
    for (size_t i = 0; i < on && all_up; i++)
        all_up = !(orig[i] >= 'a' && orig[i] <= 'z');
    for (size_t i = 0; i < rn; i++) {
        char c = rep[i];
        if ((all_up || (i == 0 && first_up)) && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        buf_putc(out, c);
    }
}

typedef struct {
    const char *from, *to;
} pair_t;

static const pair_t *bt_find_pair(const pair_t *tab, size_t n, const char *w, size_t wn)
{
    if (wn == 0 || wn >= 16) /* no entry is longer */
        return NULL;
    char low[WORD_MAX];
    bt_lower(w, wn, low);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int d = (int)(unsigned char)tab[mid].from[0] - (int)(unsigned char)low[0];
        if (d == 0)
            d = strcmp(tab[mid].from, low);
        if (d == 0)
            return &tab[mid];
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Sorted by from (LC_ALL=C). Alternatives separated by '|'. */
static const pair_t synonyms[] = {
    {"accomplish", "achieve|complete"},
    {"actually", "in fact|really"},
    {"additional", "extra|further"},
    {"advantage", "benefit|edge"},
    {"affordable", "budget-friendly|inexpensive"},
    {"almost", "nearly"},
    {"amazing", "remarkable|impressive"},
    {"approximately", "about|roughly"},
    {"assist", "help|support"},
    {"awesome", "fantastic|terrific"},
    {"bad", "poor|weak"},
    {"beautiful", "lovely|stunning"},
    {"begin", "start"},
    {"beginner", "newcomer|novice"},
    {"beginners", "newcomers|novices"},
    {"benefit", "advantage|upside"},
    {"benefits", "advantages|upsides"},
    {"big", "large|major"},
    {"boost", "increase|lift"},
    {"build", "develop|construct"},
    {"but", "yet"},
    {"buy", "purchase"},
    {"cheap", "inexpensive|low-cost"},
    {"choose", "select|pick"},
    {"clients", "customers"},
    {"companies", "businesses|firms"},
    {"company", "business|firm"},
    {"completely", "entirely|fully"},
    {"cover", "address|include"},
    {"create", "build|craft"},
    {"currently", "at present|presently"},
    {"customer", "client"},
    {"customers", "clients"},
    {"delicious", "tasty|flavourful"},
    {"describe", "outline|depict"},
    {"difficult", "hard|challenging"},
    {"discuss", "explore|examine"},
    {"easily", "effortlessly|readily"},
    {"easy", "simple|straightforward"},
    {"effective", "powerful|efficient"},
    {"enjoy", "relish|appreciate"},
    {"ensure", "make sure|guarantee"},
    {"especially", "particularly"},
    {"essential", "vital|key"},
    {"every", "each"},
    {"example", "instance"},
    {"expensive", "costly|pricey"},
    {"explain", "clarify|describe"},
    {"fast", "quick|rapid"},
    {"feature", "capability"},
    {"features", "capabilities"},
    {"find", "discover|locate"},
    {"fix", "repair|resolve"},
    {"frequently", "often|regularly"},
    {"friendly", "approachable|welcoming"},
    {"fun", "enjoyable"},
    {"goal", "aim|objective"},
    {"goals", "aims|objectives"},
    {"good", "great|solid"},
    {"great", "excellent|superb"},
    {"grow", "expand|develop"},
    {"growth", "expansion|development"},
    {"happy", "glad|pleased"},
    {"helpful", "useful"},
    {"helps", "supports"},
    {"however", "nevertheless|still"},
    {"huge", "enormous|massive"},
    {"idea", "concept|notion"},
    {"ideas", "concepts"},
    {"immediately", "right away|at once"},
    {"important", "essential|crucial"},
    {"improve", "enhance|strengthen"},
    {"increase", "raise|boost"},
    {"interesting", "fascinating|intriguing"},
    {"issue", "problem|concern"},
    {"kids", "children"},
    {"large", "big|sizable"},
    {"learn", "discover"},
    {"main", "primary|key"},
    {"maybe", "perhaps"},
    {"mistake", "error"},
    {"mistakes", "errors"},
    {"modern", "contemporary"},
    {"mostly", "largely|mainly"},
    {"new", "fresh|novel"},
    {"nice", "pleasant|lovely"},
    {"often", "frequently|regularly"},
    {"option", "choice"},
    {"options", "choices"},
    {"people", "folks|individuals"},
    {"perfect", "ideal"},
    {"person", "individual"},
    {"popular", "well-loved|widely used"},
    {"powerful", "potent|capable"},
    {"practical", "hands-on|down-to-earth"},
    {"probably", "likely"},
    {"problem", "issue|challenge"},
    {"problems", "issues|challenges"},
    {"provide", "offer|supply"},
    {"quality", "calibre|standard"},
    {"quick", "fast|speedy"},
    {"quickly", "rapidly|swiftly"},
    {"really", "truly|genuinely"},
    {"recent", "latest"},
    {"recently", "lately"},
    {"reliable", "dependable|trustworthy"},
    {"result", "outcome"},
    {"results", "outcomes"},
    {"show", "demonstrate|reveal"},
    {"simple", "straightforward|easy"},
    {"small", "little|compact"},
    {"smart", "clever|sharp"},
    {"strong", "robust|solid"},
    {"tips", "pointers|hints"},
    {"unique", "distinctive|one-of-a-kind"},
    {"useful", "helpful|handy"},
    {"using", "employing|utilizing"},
    {"usually", "typically|generally"},
    {"various", "different|diverse"},
    {"very", "truly|remarkably"},
    {"want", "wish"},
    {"wants", "wishes"},
    {"whole", "entire"},
    {"wonderful", "marvelous|delightful"},
    {"write", "compose|draft"},
};

/* Rewrite: words swapped for synonyms chosen by the chooser; everything else kept. */
void t_content_rewrite(gen_t *g)
{
    const char *body;
    size_t n;
    bt_body(g->prompt, g->prompt_len, &body, &n);
    buf_t *out = g->out;
    buf_reserve(out, n + n / 4 + 32);
    size_t start = out->len;
    int swaps = 0;
    size_t i = 0;
    if (n > 0 && g_pick(g, 3) == 0) {
        /* Sometimes open with a connective, as a person rewording would. */
        static const char *const leads[] = {"Put simply, ", "In other words, ", "Simply put, "};
        size_t wl = bt_word_len(body, n);
        char low[WORD_MAX];
        bt_lower(body, wl < WORD_MAX ? wl : 0, low);
        if (wl > 0 && wl < WORD_MAX && strcmp(low, "i") != 0 &&
            bt_in_list(low, stop_words, ARRAY_LEN(stop_words))) {
            buf_puts(out, leads[g_pick(g, ARRAY_LEN(leads))]);
            buf_putc(out, (char)(body[0] >= 'A' && body[0] <= 'Z' ? body[0] + 32 : body[0]));
            i = 1;
            swaps++;
        }
    }
    while (i < n) {
        size_t wl = bt_word_len(body + i, n - i);
        if (wl == 0) {
            size_t j = i + 1;
            while (j < n && bt_word_len(body + j, n - j) == 0)
                j++;
            bt_append_clean(out, body + i, j - i);
            i = j;
            continue;
        }
        const pair_t *p = bt_find_pair(synonyms, ARRAY_LEN(synonyms), body + i, wl);
        if (p) {
            unsigned nalt = 1;
            for (const char *q = p->to; *q; q++)
                nalt += *q == '|';
            const char *a = p->to;
            for (unsigned k = g_pick(g, nalt); k > 0; k--)
                a = strchr(a, '|') + 1;
            const char *ae = strchr(a, '|');
            bt_put_cased(out, body + i, wl, a, ae ? (size_t)(ae - a) : strlen(a));
            swaps++;
        } else {
            bt_append_clean(out, body + i, wl);
        }
        i += wl;
    }
    if (swaps == 0 && out->len > start) {
        /* Nothing to swap: say it plainly in a new frame rather than echo it. */
        static const char *const frames[] = {"In other words: ", "Put another way: ",
                                             "To put it differently: "};
        buf_t tmp;
        buf_init(&tmp);
        buf_puts(&tmp, frames[g_pick(g, ARRAY_LEN(frames))]);
        buf_append(&tmp, out->data + start, out->len - start);
        out->len = start;
        buf_append(out, tmp.data, tmp.len);
        buf_free(&tmp);
    }
}

typedef struct {
    size_t off, len;
    int score;
} sent_t;

static size_t bt_split_sentences(const char *s, size_t n, sent_t *st, size_t max)
{
    size_t ns = 0, i = 0, start = 0;
    while (i <= n && ns < max) {
        size_t end = 0;
        if (i == n) {
            end = n;
        } else if (s[i] == '\n') {
            end = i;
        } else if ((s[i] == '.' || s[i] == '!' || s[i] == '?') &&
                   (i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\n' || s[i + 1] == '"' ||
                    s[i + 1] == ')')) {
            end = i + 1;
            while (end < n && (s[end] == '"' || s[end] == ')'))
                end++;
        } else if (i + 2 < n && (unsigned char)s[i] == 0xE3 && (unsigned char)s[i + 1] == 0x80 &&
                   (unsigned char)s[i + 2] == 0x82) { /* 。 */
            end = i + 3;
        }
        if (end == 0) {
            i++;
            continue;
        }
        size_t a = start, b = end;
        while (a < b && (s[a] == ' ' || s[a] == '\n' || s[a] == '\t' || s[a] == '\r'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
            b--;
        if (b > a)
            st[ns++] = (sent_t){a, b - a, 0};
        start = end;
        i = end > i ? end : i + 1;
    }
    return ns;
}

static int bt_sentence_score(const gen_t *g, const char *s, size_t n)
{
    int hits = 0, words = 0;
    size_t i = 0;
    while (i < n) {
        size_t wl = bt_word_len(s + i, n - i);
        if (wl == 0) {
            i++;
            continue;
        }
        words++;
        for (int k = 0; k < g->tp->nword; k++)
            if (strlen(g->tp->word[k]) == wl && strncasecmp(g->tp->word[k], s + i, wl) == 0)
                hits += MAX_WORDS - k;
        i += wl;
    }
    return words ? hits * 100 / (words + 4) : 0;
}

/* Summary: the best-scoring sentences in their original order; a single long
 * sentence is cut to its main clause or to its key words. */
void t_content_summary(gen_t *g)
{
    const char *body;
    size_t n;
    bt_body(g->prompt, g->prompt_len, &body, &n);
    if (n > 16384)
        n = utf8_floor(body, 16384);
    buf_t *out = g->out;
    size_t start = out->len;
    if (n < 60) {
        bt_append_clean(out, body, n);
        return;
    }
    sent_t *st = xmalloc(sizeof(sent_t) * MAX_SENTENCES);
    size_t ns = bt_split_sentences(body, n, st, MAX_SENTENCES);
    if (ns >= 2) {
        int k = (int)(ns + 2) / 3 + (int)g_pick(g, 3) - 1;
        if (k < 1)
            k = 1;
        if (k > 6)
            k = 6;
        if ((size_t)k >= ns)
            k = (int)ns - 1;
        for (size_t i = 0; i < ns; i++)
            st[i].score = bt_sentence_score(g, body + st[i].off, st[i].len) +
                          (i == 0 ? 40 : 0) + (int)g_pick(g, 30);
        bool *keep = xcalloc(ns, sizeof(bool));
        for (int c = 0; c < k; c++) {
            size_t best = ns;
            for (size_t i = 0; i < ns; i++)
                if (!keep[i] && (best == ns || st[i].score > st[best].score))
                    best = i;
            keep[best] = true;
        }
        static const char *const leads[] = {"", "In short: ", "Summary: ", "TL;DR: "};
        const char *lead = leads[g_pick(g, ARRAY_LEN(leads))];
        buf_puts(out, lead);
        bool firstout = true;
        for (size_t i = 0; i < ns; i++) {
            if (!keep[i])
                continue;
            if (!firstout)
                buf_putc(out, ' ');
            bt_append_clean(out, body + st[i].off, st[i].len);
            firstout = false;
        }
        free(keep);
        if (out->len - start >= n && *lead) { /* the lead made it longer: drop it */
            size_t ll = strlen(lead);
            memmove(out->data + start, out->data + start + ll, out->len - start - ll);
            out->len -= ll;
            out->data[out->len] = '\0';
        }
    } else {
        const char *s = body + (ns ? st[0].off : 0);
        size_t sl = ns ? st[0].len : n, cut = 0;
        for (size_t i = sl * 3 / 10; i < sl && !cut; i++)
            if (s[i] == ',' || s[i] == ';' || s[i] == ':')
                cut = i;
        if (cut && cut < sl * 8 / 10) {
            bt_append_clean(out, s, cut);
            buf_putc(out, '.');
        } else {
            buf_puts(out, "Key points: ");
            for (int i = 0; i < g->tp->nword && i < 5; i++)
                buf_printf(out, "%s%s", i ? ", " : "", g->tp->word[i]);
            buf_putc(out, '.');
        }
    }
    free(st);
    if (out->len - start >= n) { /* never longer than the text: cut at a space */
        size_t keep_n = n * 2 / 3;
        while (keep_n > 0 && out->data[start + keep_n] != ' ')
            keep_n--;
        if (keep_n == 0)
            keep_n = utf8_floor(out->data + start, n / 2);
        out->len = start + keep_n;
        buf_append(out, "…", 3);
    }
}

/* Sorted by from (LC_ALL=C). */
static const pair_t misspellings[] = {
    {"accomodate", "accommodate"}, {"acheive", "achieve"},     {"adress", "address"},
    {"alot", "a lot"},             {"aparent", "apparent"},    {"arent", "aren't"},
    {"arguement", "argument"},     {"basicly", "basically"},   {"becuase", "because"},
    {"begining", "beginning"},     {"beleive", "believe"},     {"buisness", "business"},
    {"calender", "calendar"},      {"cant", "can't"},          {"commited", "committed"},
    {"completly", "completely"},   {"concious", "conscious"},  {"couldnt", "couldn't"},
    {"definately", "definitely"},  {"definitly", "definitely"}, {"didnt", "didn't"},
    {"doesnt", "doesn't"},         {"dont", "don't"},          {"enviroment", "environment"},
    {"existance", "existence"},    {"finaly", "finally"},      {"foward", "forward"},
    {"freind", "friend"},          {"goverment", "government"}, {"grammer", "grammar"},
    {"hadnt", "hadn't"},           {"happend", "happened"},    {"hasnt", "hasn't"},
    {"havent", "haven't"},         {"im", "I'm"},              {"immediatly", "immediately"},
    {"independant", "independent"}, {"isnt", "isn't"},         {"ive", "I've"},
    {"knowlege", "knowledge"},     {"maintainance", "maintenance"}, {"neccessary", "necessary"},
    {"necesary", "necessary"},     {"noticable", "noticeable"}, {"occured", "occurred"},
    {"occurence", "occurrence"},   {"occuring", "occurring"},  {"persistant", "persistent"},
    {"posession", "possession"},   {"prefered", "preferred"},  {"publically", "publicly"},
    {"realy", "really"},           {"reccomend", "recommend"}, {"recieve", "receive"},
    {"recieved", "received"},      {"relevent", "relevant"},   {"resturant", "restaurant"},
    {"seperate", "separate"},      {"shouldnt", "shouldn't"},  {"succesful", "successful"},
    {"sucess", "success"},         {"suprise", "surprise"},    {"teh", "the"},
    {"thats", "that's"},           {"thier", "their"},         {"tommorow", "tomorrow"},
    {"tomorow", "tomorrow"},       {"truely", "truly"},        {"untill", "until"},
    {"wasnt", "wasn't"},           {"werent", "weren't"},      {"wich", "which"},
    {"wierd", "weird"},            {"wouldnt", "wouldn't"},    {"youre", "you're"},
};

/* buf_putc without the call when there is room (the caller reserved it). */
static inline void bt_put1(buf_t *out, char c)
{
    if (out->len + 1 < out->cap) {
        out->data[out->len++] = c;
        out->data[out->len] = '\0';
    } else {
        buf_putc(out, c);
    }
}

/* Pass 1 of grammar: spacing around punctuation. Indentation is kept; other runs
 * of spaces become one, spaces before , . ; : ! ? go, and a space follows , ; ! ?
 * before a letter (not "1,000" or "3:30") and a full stop between words
 * ("end.Next"). */
static void bt_fix_spacing(const char *s, size_t n, buf_t *out)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool line_start = out->len == 0 || out->data[out->len - 1] == '\n';
        if ((c == ' ' || c == '\t') && !line_start) {
            size_t j = i;
            while (j < n && (s[j] == ' ' || s[j] == '\t'))
                j++;
            /* " ,x" → ",x" always; " ." only before a space, the end or ".Word" (not ".NET") */
            unsigned char n1 = j + 1 < n ? (unsigned char)s[j + 1] : 0;
            unsigned char n2 = j + 2 < n ? (unsigned char)s[j + 2] : 0;
            bool before_punct = j < n && s[j] && strchr(",;:!?", s[j]) && !(n1 >= '0' && n1 <= '9');
            if (j < n && s[j] == '.')
                before_punct = n1 == 0 || n1 == ' ' || n1 == '\n' ||
                               (n1 >= 'A' && n1 <= 'Z' && n2 >= 'a' && n2 <= 'z');
            if (j < n && s[j] != '\n' && s[j] != '\r' && !before_punct)
                bt_put1(out, ' ');
            i = j - 1;
            continue;
        }
        bt_put1(out, c);
        unsigned char next = i + 1 < n ? (unsigned char)s[i + 1] : 0;
        unsigned char prev = i > 0 ? (unsigned char)s[i - 1] : 0;
        if ((c == ',' || c == ';' || c == '!' || c == '?') && bt_ascii_alpha(next))
            bt_put1(out, ' ');
        else if (c == '.' && next >= 'A' && next <= 'Z' && i + 2 < n && s[i + 2] >= 'a' &&
                 s[i + 2] <= 'z' && (bt_ascii_alpha(prev) || (prev >= '0' && prev <= '9') ||
                                     prev == ' '))
            bt_put1(out, ' ');
    }
}

static bool bt_word_eq(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && strncasecmp(a, b, an) == 0;
}

/* Pass 2 of grammar: words. */
static void bt_fix_words(const char *s, size_t n, buf_t *out)
{
    size_t i = 0;
    bool cap_next = true;
    const char *prev = NULL;
    size_t prevn = 0;
    size_t sep_start = 0;
    while (i < n) {
        size_t wl = bt_word_len(s + i, n - i);
        if (wl == 0) {
            if (s[i] == '\n' || ((s[i] == '.' || s[i] == '!' || s[i] == '?') &&
                                 (i + 1 >= n || s[i + 1] == ' ' || s[i + 1] == '\n')))
                cap_next = true;
            i++;
            continue;
        }
        const char *w = s + i;
        /* Doubled word ("the the"), separated by one space only. */
        if (prev && sep_start + 1 == i && s[sep_start] == ' ' && bt_word_eq(prev, prevn, w, wl) &&
            !bt_word_eq(w, wl, "had", 3) && !bt_word_eq(w, wl, "that", 4) &&
            bt_ascii_alpha((unsigned char)w[0])) {
            if (out->len > 0 && out->data[out->len - 1] == ' ')
                out->len--;
            out->data[out->len] = '\0';
            i += wl;
            sep_start = i;
            continue;
        }
        /* Flush the separator that preceded this word. */
        bt_append_clean(out, s + sep_start, i - sep_start);
        char rep[WORD_MAX + 8];
        size_t rn = 0;
        const pair_t *p = bt_find_pair(misspellings, ARRAY_LEN(misspellings), w, wl);
        if (p) {
            size_t tl = strlen(p->to);
            if (p->to[0] == 'I')
                memcpy(rep, p->to, tl), rn = tl;
            else {
                buf_t tmp;
                buf_init(&tmp);
                bt_put_cased(&tmp, w, wl, p->to, tl);
                memcpy(rep, tmp.data, tmp.len);
                rn = tmp.len;
                buf_free(&tmp);
            }
        } else if (prev && bt_word_eq(w, wl, "of", 2) &&
                   (bt_word_eq(prev, prevn, "should", 6) || bt_word_eq(prev, prevn, "could", 5) ||
                    bt_word_eq(prev, prevn, "would", 5) || bt_word_eq(prev, prevn, "must", 4) ||
                    bt_word_eq(prev, prevn, "might", 5)) &&
                   sep_start + 1 == i) {
            memcpy(rep, "have", 4), rn = 4;
        } else if ((wl == 1 && w[0] == 'i') ||
                   (wl > 2 && w[0] == 'i' && (w[1] == '\'' || (unsigned char)w[1] == 0xE2) &&
                    wl < 8)) {
            memcpy(rep, w, wl < WORD_MAX ? wl : WORD_MAX - 1);
            rn = wl < WORD_MAX ? wl : WORD_MAX - 1;
            rep[0] = 'I';
        } else if (bt_word_eq(w, wl, "a", 1) || bt_word_eq(w, wl, "an", 2)) {
            /* a/an by the next word's first letter (vowel letters a, e, i, o). */
            size_t j = i + wl;
            memcpy(rep, w, wl), rn = wl;
            if (j + 1 < n && s[j] == ' ' && bt_ascii_alpha((unsigned char)s[j + 1])) {
                char f = (char)(s[j + 1] | 0x20);
                size_t nl = bt_word_len(s + j + 1, n - j - 1);
                bool vowel = strchr("aeio", f) != NULL;
                bool silent_h = f == 'h' && nl >= 4 &&
                                (strncasecmp(s + j + 1, "hour", 4) == 0 ||
                                 strncasecmp(s + j + 1, "hone", 4) == 0);
                bool one = nl >= 3 && strncasecmp(s + j + 1, "one", 3) == 0;
                if (wl == 1 && vowel && !one)
                    rep[rn++] = 'n';
                else if (wl == 2 && !vowel && f != 'u' && f != 'h' && !silent_h)
                    rn = 1;
            }
        } else {
            size_t c = wl < WORD_MAX ? wl : 0;
            memcpy(rep, w, c), rn = c;
            if (c == 0) { /* an overlong word: copy as it is */
                bt_append_clean(out, w, wl);
            }
        }
        if (rn > 0) {
            if (cap_next && rep[0] >= 'a' && rep[0] <= 'z' && !bt_has_upper(rep, rn))
                rep[0] = (char)(rep[0] - 32);
            bt_append_clean(out, rep, rn);
        }
        cap_next = false;
        prev = w;
        prevn = wl;
        i += wl;
        sep_start = i;
    }
    bt_append_clean(out, s + sep_start, n - sep_start);
}

/* Grammar: rule-based corrections (spacing, capitals, common misspellings, doubled
 * words, a/an, "should of"), then a full stop at the end. The same for every seed. */
void t_content_grammar(gen_t *g)
{
    const char *body;
    size_t n;
    bt_body(g->prompt, g->prompt_len, &body, &n);
    buf_t pass1;
    buf_init(&pass1);
    buf_reserve(&pass1, n + n / 8 + 16);
    buf_reserve(g->out, n + n / 8 + 16);
    bt_fix_spacing(body, n, &pass1);
    size_t start = g->out->len;
    bt_fix_words(buf_cstr(&pass1), pass1.len, g->out);
    buf_free(&pass1);
    buf_t *out = g->out;
    if (out->len > start) {
        unsigned char last = (unsigned char)out->data[out->len - 1];
        if ((last >= 'a' && last <= 'z') || (last >= 'A' && last <= 'Z') ||
            (last >= '0' && last <= '9'))
            buf_putc(out, '.');
    }
}
