/* builtin_text.c — the offline text generator behind the builtin provider.
 *
 * It is a template-driven writer, not a language model. The prompt is read once
 * (at most ANALYSE_MAX bytes) into phrases (runs of content words, the longest being
 * the topic), single key words ranked by frequency, and an audience ("for
 * beginners"). Each of the 52 templates has a small writer that lays out its shape
 * (outline, email, FAQ, ...) from sentence patterns in a tiny notation that
 * expand() fills in:
 *   {a|b|c}  one alternative, chosen by the chooser (flat: no braces inside)
 *   $t $T    the topic, as written / in title case
 *   $n $N    the next phrase (the user's own first, then stock ones)
 *   $s $S    the current section's phrase          $w  the next single key word
 *   $a $A    the audience                          $x  a writer-specific string
 *   $$       a dollar sign                         ^   capitalise the next letter
 * The chooser is the temperature: each choice draws from a stream seeded by
 * (template, prompt) and from one seeded by the caller's seed too, and takes the
 * latter with probability = creativity; at 0 the seed is never looked at.
 * Three templates transform the prompt text itself: rewrite (synonyms), summary
 * (sentence extraction) and grammar (rule-based fixes, the same for every seed).
 *
 * Everything lives on the stack or in the output buffer: no globals that change,
 * no I/O, safe to call from any thread. */
#include "gen/builtin.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ANALYSE_MAX 4096   /* bytes of the prompt read for topic and key words */
#define TRANSFORM_MAX 65536 /* bytes of the prompt rewritten/corrected/summarised */
#define MAX_TOKENS 768
#define WORD_MAX 48        /* bytes of one word, NUL included */
#define PHRASE_WORDS 4
#define PHRASE_MAX (WORD_MAX * PHRASE_WORDS + 8)
#define MAX_PHRASES 10
#define MAX_WORDS 12
#define MAX_RUNS 64
#define MAX_SENTENCES 512
#define TAG_MAX 32

/* ------------------------------------------------------------------ word lists */

/* All lists are sorted in byte order (LC_ALL=C sort) for bsearch. */
static const char *const stop_words[] = {
    "a", "about", "above", "after", "again", "against", "all", "allows", "also", "am", "an",
    "and", "any", "are", "around", "as", "at", "be", "because", "been", "before", "being",
    "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "down", "during", "each", "either", "enables", "etc", "even", "ever", "every", "few", "for",
    "from", "further", "get", "gets", "got", "had", "has", "have", "having", "he", "helping",
    "helps", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "i'm", "if",
    "in", "into", "is", "it", "it's", "its", "itself", "just", "let", "let's", "lets", "like",
    "makes", "making", "many", "may", "me", "might", "more", "most", "much", "must", "my",
    "myself", "neither", "no", "nor", "not", "now", "of", "off", "on", "once", "one", "only",
    "or", "other", "our", "ours", "ourselves", "out", "over", "own", "per", "please", "quite",
    "rather", "really", "same", "she", "should", "so", "some", "such", "than", "that", "that's",
    "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "upon", "us", "using", "very",
    "via", "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who",
    "whom", "why", "will", "with", "within", "without", "would", "yet", "you", "your", "yours",
    "yourself",
};

/* Words that describe the request rather than its subject: used only when the
 * prompt has nothing else. */
static const char *const task_words[] = {
    "ad", "add", "ads", "advert", "advertisement", "article", "avoid", "bio", "blog", "caption",
    "compose", "copy", "cover", "create", "describe", "description", "discuss", "draft",
    "email", "emphasise", "emphasize", "explain", "faq", "focus", "generate", "give", "hashtag",
    "hashtags", "headline", "headlines", "help", "highlight", "idea", "ideas", "include",
    "intro", "introduction", "keep", "keyword", "keywords", "list", "listicle", "make",
    "mention", "name", "names", "need", "newsletter", "outline", "outro", "paragraph", "post",
    "posts", "provide", "quote", "rewrite", "script", "short", "show", "slogan", "some",
    "statement", "summarise", "summarize", "summary", "tag", "tags", "target", "text", "tips",
    "title", "titles", "tweet", "use", "want", "write",
};

static const char *const audience_words[] = {
    "adults", "agencies", "artists", "athletes", "beginners", "bloggers", "brands",
    "buyers", "children", "clients", "coaches", "companies", "creators", "customers", "dads",
    "designers", "developers", "doctors", "engineers", "entrepreneurs", "experts",
    "families", "founders", "freelancers", "gamers", "homeowners", "investors", "kids",
    "learners", "managers", "marketers", "moms", "newbies", "nonprofits", "nurses", "owners",
    "parents", "professionals", "readers", "researchers", "retailers", "runners", "seniors",
    "shoppers", "startups", "students", "teachers", "teams", "teens", "travelers",
    "travellers", "users", "women", "writers",
};

static const char *const role_words[] = {
    "accountant", "administrator", "agent", "analyst", "architect", "assistant",
    "associate", "barista", "chef", "cleaner", "coach", "consultant", "coordinator",
    "designer", "developer", "director", "driver", "editor", "engineer", "intern", "lead",
    "manager", "marketer", "nurse", "officer", "photographer", "programmer",
    "representative", "researcher", "scientist", "specialist", "teacher", "technician",
    "tester", "writer",
};

/* Stock phrases that follow the user's own in $n. */
static const char *const stock_phrases[] = {
    "the basics",        "everyday habits",      "good planning",    "long-term results",
    "the daily routine", "the first steps",      "small improvements", "the bigger picture",
    "real-world examples", "the right tools",   "clear goals",      "steady progress",
};

static const char *const fallback_audiences[] = {"people", "readers", "teams", "customers"};

/* ------------------------------------------------------------------ UTF-8 */

/* Decodes one sequence of s[0..n); returns its length, or 1 with *cp = UINT32_MAX
 * when the byte does not start a complete valid sequence. */
static size_t bt_u8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, v = c & 0x07, min = 0x10000;
    else
        goto bad;
    if (len > n)
        goto bad;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            goto bad;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        goto bad;
    *cp = v;
    return len;
bad:
    *cp = UINT32_MAX;
    return 1;
}

static bool bt_is_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

/* Letters and digits of any script; punctuation, symbols, emoji and joiners are not. */
static bool bt_is_word_cp(uint32_t c)
{
    if (c < 0x80)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               c == '_';
    if (c == UINT32_MAX || bt_is_space(c))
        return false;
    if (c < 0xC0)
        return c == 0xAA || c == 0xB5 || c == 0xBA;
    if (c == 0xD7 || c == 0xF7)
        return false;
    if ((c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) ||
        (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF || (c >= 0xFF01 && c <= 0xFF0F) ||
        (c >= 0xFF1A && c <= 0xFF20) || (c >= 0x1F000 && c <= 0x1FAFF) || c >= 0xE0000)
        return false;
    return true;
}

/* Joins two word parts: apostrophes, hyphen, dot (Node.js, v2.0). */
static bool bt_is_inner_cp(uint32_t c)
{
    return c == '\'' || c == '-' || c == '.' || c == 0x2019;
}

static bool bt_is_kanji_kana(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x30A0 && c <= 0x30FF);
}

/* Japanese particles that end a word when they follow kanji or katakana. */
static bool bt_is_particle(uint32_t c)
{
    return c == 0x3067 || c == 0x3092 || c == 0x306B || c == 0x306F || c == 0x304C ||
           c == 0x306E || c == 0x3068 || c == 0x3078 || c == 0x3082; /* で を に は が の と へ も */
}

/* A short run of hiragana only (a particle such as と): a stop word. */
static bool bt_is_hiragana_particle(const char *s, size_t n)
{
    size_t i = 0, chars = 0;
    while (i < n) {
        uint32_t cp;
        i += bt_u8_next((const unsigned char *)s + i, n - i, &cp);
        if (cp < 0x3040 || cp > 0x309F)
            return false;
        chars++;
    }
    return chars <= 2;
}

/* Largest n' <= n that does not cut a UTF-8 sequence of s. */
static size_t bt_u8_floor(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static size_t bt_u8_chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* Appends s[0..n) replacing invalid sequences by U+FFFD. */
static void bt_append_clean(buf_t *out, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t ascii = 0;
    while (ascii < n && u[ascii] != 0 && u[ascii] < 0x80)
        ascii++;
    if (ascii == n) { /* the common case */
        buf_append(out, s, n);
        return;
    }
    size_t run = 0, i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = bt_u8_next(u + i, n - i, &cp);
        if (cp == UINT32_MAX || cp == 0) {
            buf_append(out, s + run, i - run);
            if (cp == UINT32_MAX)
                buf_append(out, "\xEF\xBF\xBD", 3);
            run = i + len;
        }
        i += len;
    }
    buf_append(out, s + run, n - run);
}

/* ------------------------------------------------------------------ helpers */

/* Binary search of a sorted list; the first byte is compared inline, which settles
 * most probes without a call (this lookup runs for every word of the prompt). */
static bool bt_in_list(const char *lower, const char *const *list, size_t n)
{
    size_t lo = 0, hi = n;
    unsigned char c0 = (unsigned char)lower[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int d = (int)(unsigned char)list[mid][0] - (int)c0;
        if (d == 0)
            d = strcmp(list[mid], lower);
        if (d == 0)
            return true;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* ASCII-lowercased copy of s[0..n) into out (size WORD_MAX); other bytes as they are.
 * The typographic apostrophe becomes '\''. */
static void bt_lower(const char *s, size_t n, char *out)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 1 < WORD_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
            (unsigned char)s[i + 2] == 0x99) {
            out[j++] = '\'';
            i += 2;
            continue;
        }
        out[j++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[j] = '\0';
}

static bool bt_has_upper(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            return true;
    return false;
}

static uint64_t bt_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t bt_splitmix(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ull;
    return bt_mix(*state);
}

static uint64_t bt_hash(const char *s, size_t n, uint64_t h)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, u + i, 8);
        h = (h ^ w) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ u[i]) * 0x100000001B3ull;
    return bt_mix(h ^ n);
}

/* ------------------------------------------------------------------ analysis */

enum { CLS_CONTENT, CLS_TASK, CLS_STOP };

typedef struct {
    const char *p;
    uint16_t n;
    uint8_t cls;
    bool brk; /* punctuation, a line break or a symbol since the previous word */
    char lower[WORD_MAX];
} token_t;

typedef struct {
    char phrase[MAX_PHRASES][PHRASE_MAX]; /* phrase[0] is the topic */
    int nphrase;
    char word[MAX_WORDS][WORD_MAX]; /* single key words, most frequent first */
    int nword;
    char audience[PHRASE_MAX]; /* "" when the prompt names none */
    bool generic;              /* the prompt had no usable word at all */
} topic_t;

static size_t bt_tokenize(const char *s, size_t n, token_t *tok, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, nt = 0;
    bool brk = true;
    while (i < n && nt < max) {
        uint32_t cp;
        size_t len = bt_u8_next(u + i, n - i, &cp);
        if (!bt_is_word_cp(cp)) {
            if (cp != ' ' && cp != '\t' && cp != 0xA0 && cp != 0x3000)
                brk = true;
            i += len;
            continue;
        }
        size_t start = i, j = i + len, skip = 0;
        uint32_t prev = cp;
        while (j < n) {
            size_t l2 = bt_u8_next(u + j, n - j, &cp);
            if (bt_is_particle(cp) && bt_is_kanji_kana(prev)) {
                skip = l2; /* 東京で… → 東京 | … */
                break;
            }
            prev = cp;
            if (bt_is_word_cp(cp)) {
                j += l2;
                continue;
            }
            uint32_t after;
            if (bt_is_inner_cp(cp) && j + l2 < n && (bt_u8_next(u + j + l2, n - j - l2, &after),
                                                     bt_is_word_cp(after))) {
                j += l2;
                continue;
            }
            break;
        }
        size_t wn = j - start;
        if (wn > WORD_MAX - 1)
            wn = bt_u8_floor(s + start, WORD_MAX - 1);
        token_t *t = &tok[nt++];
        t->p = s + start;
        t->n = (uint16_t)wn;
        t->brk = brk;
        bt_lower(t->p, wn, t->lower);
        if (bt_in_list(t->lower, stop_words, ARRAY_LEN(stop_words)) ||
            bt_is_hiragana_particle(t->p, wn))
            t->cls = CLS_STOP;
        else if (bt_in_list(t->lower, task_words, ARRAY_LEN(task_words)))
            t->cls = CLS_TASK;
        else
            t->cls = CLS_CONTENT;
        brk = skip > 0;
        i = j + skip;
    }
    return nt;
}

typedef struct {
    int start, count;
} run_t;

/* Runs of usable words (no break inside, at most PHRASE_WORDS long). */
static int bt_runs(const token_t *tok, size_t nt, int maxcls, run_t *runs)
{
    int nr = 0;
    int start = -1, count = 0;
    for (size_t i = 0; i <= nt; i++) {
        bool ok = i < nt && tok[i].cls <= maxcls;
        bool cont = ok && start >= 0 && !tok[i].brk && count < PHRASE_WORDS;
        if (cont) {
            count++;
            continue;
        }
        if (start >= 0 && nr < MAX_RUNS)
            runs[nr++] = (run_t){start, count};
        start = ok ? (int)i : -1;
        count = ok ? 1 : 0;
    }
    return nr;
}

static void bt_join(const token_t *tok, run_t r, char *out)
{
    size_t j = 0;
    for (int k = 0; k < r.count; k++) {
        const token_t *t = &tok[r.start + k];
        if (k)
            out[j++] = ' ';
        memcpy(out + j, t->p, t->n);
        j += t->n;
    }
    out[j] = '\0';
}

/* Words after which a noun phrase usually starts. */
static bool bt_is_determiner(const char *lower)
{
    /* not "for": "for X" names an audience or a purpose more often than the subject */
    static const char *const det[] = {"a",    "about", "an",    "around", "at",   "by",
                                      "from", "her",   "his",   "in",     "into",
                                      "its",  "my",    "of",    "on",     "our",  "regarding",
                                      "that", "the",   "their", "these",  "this", "those",
                                      "with", "your"};
    return bt_in_list(lower, det, ARRAY_LEN(det));
}

/* The topic is the best-scoring run: longer is better, and a run right after a
 * determiner or preposition ("about urban gardening", "a mobile app") is more
 * likely a noun phrase than one that starts with a verb. */
static int bt_run_score(const token_t *tok, run_t r)
{
    int score = r.count;
    if (r.start > 0 && !tok[r.start].brk && bt_is_determiner(tok[r.start - 1].lower))
        score += 3;
    else if (r.start == 0 || tok[r.start].brk)
        score += 1;
    return score;
}

static void bt_pick_phrases(topic_t *tp, const token_t *tok, const run_t *runs, int nr)
{
    int best = 0, best_score = bt_run_score(tok, runs[0]);
    for (int i = 1; i < nr; i++) {
        int sc = bt_run_score(tok, runs[i]);
        if (sc > best_score)
            best = i, best_score = sc;
    }
    bt_join(tok, runs[best], tp->phrase[0]);
    tp->nphrase = 1;
    for (int i = 0; i < nr && tp->nphrase < MAX_PHRASES; i++) {
        if (i == best)
            continue;
        char tmp[PHRASE_MAX];
        bt_join(tok, runs[i], tmp);
        bool dup = false;
        for (int k = 0; k < tp->nphrase && !dup; k++)
            dup = strcasecmp(tmp, tp->phrase[k]) == 0;
        if (!dup)
            memcpy(tp->phrase[tp->nphrase++], tmp, strlen(tmp) + 1);
    }
}

/* The most frequent usable words, ties broken by first appearance. */
static void bt_pick_words(topic_t *tp, const token_t *tok, size_t nt, int maxcls)
{
    enum { SLOTS = 2048 };
    int16_t slot[SLOTS];
    int16_t first[MAX_TOKENS];
    int16_t freq[MAX_TOKENS];
    int nu = 0;
    memset(slot, 0xff, sizeof slot);
    for (size_t i = 0; i < nt; i++) {
        if (tok[i].cls > maxcls)
            continue;
        size_t h = bt_hash(tok[i].lower, strlen(tok[i].lower), 7) & (SLOTS - 1);
        while (slot[h] >= 0 && strcmp(tok[first[slot[h]]].lower, tok[i].lower) != 0)
            h = (h + 1) & (SLOTS - 1);
        if (slot[h] < 0) {
            slot[h] = (int16_t)nu;
            first[nu] = (int16_t)i;
            freq[nu++] = 0;
        }
        freq[slot[h]]++;
    }
    tp->nword = 0;
    while (tp->nword < MAX_WORDS) {
        int best = -1;
        for (int k = 0; k < nu; k++)
            if (freq[k] > 0 && (best < 0 || freq[k] > freq[best]))
                best = k;
        if (best < 0)
            break;
        const token_t *t = &tok[first[best]];
        memcpy(tp->word[tp->nword], t->p, t->n);
        tp->word[tp->nword][t->n] = '\0';
        tp->nword++;
        freq[best] = 0;
    }
}

/* "for beginners", "for small business owners". */
static void bt_pick_audience(topic_t *tp, const token_t *tok, size_t nt)
{
    tp->audience[0] = '\0';
    for (size_t i = 0; i + 1 < nt; i++) {
        if (strcmp(tok[i].lower, "for") != 0)
            continue;
        size_t j = i + 1, end = j;
        while (end < nt && end - j < 3 && tok[end].cls != CLS_STOP && (end == j || !tok[end].brk))
            end++;
        if (end == j || !bt_in_list(tok[end - 1].lower, audience_words, ARRAY_LEN(audience_words)))
            continue;
        bt_join(tok, (run_t){(int)j, (int)(end - j)}, tp->audience);
        return;
    }
}

static void bt_analyse(const char *prompt, size_t len, topic_t *tp)
{
    _Static_assert(MAX_TOKENS < INT16_MAX, "token indexes fit int16_t");
    token_t *tok = xmalloc(sizeof(token_t) * MAX_TOKENS);
    size_t n = len < ANALYSE_MAX ? len : ANALYSE_MAX;
    size_t nt = bt_tokenize(prompt, n, tok, MAX_TOKENS);
    run_t runs[MAX_RUNS];
    int maxcls = CLS_CONTENT;
    int nr = bt_runs(tok, nt, maxcls, runs);
    if (nr == 0) {
        maxcls = CLS_TASK;
        nr = bt_runs(tok, nt, maxcls, runs);
    }
    memset(tp, 0, sizeof *tp);
    if (nr == 0) {
        tp->generic = true;
        strcpy(tp->phrase[0], "fresh ideas");
        tp->nphrase = 1;
        strcpy(tp->word[0], "ideas");
        tp->nword = 1;
    } else {
        bt_pick_phrases(tp, tok, runs, nr);
        bt_pick_words(tp, tok, nt, maxcls);
    }
    bt_pick_audience(tp, tok, nt);
    for (int i = 1; i < tp->nphrase && tp->audience[0]; i++) {
        if (strcasecmp(tp->phrase[i], tp->audience) != 0)
            continue;
        memmove(tp->phrase[i], tp->phrase[i + 1], sizeof tp->phrase[0] * (size_t)(tp->nphrase - i - 1));
        tp->nphrase--;
        i--;
    }
    free(tok);
}

/* ------------------------------------------------------------------ generator */

typedef struct {
    buf_t *out;
    const topic_t *tp;
    const char *prompt;
    size_t prompt_len;
    double creativity;
    uint64_t base, var, gate; /* the three chooser streams */
    int cursor, wcursor, stock_off;
    const char *sect;      /* $s */
    const char *extra;     /* $x */
    const char *audience;  /* $a */
    bool autocap, cap_pending;
    unsigned char last;
} gen_t;

/* The temperature: a choice among n taken from the prompt's stream, or with
 * probability = creativity from the seed's. */
static unsigned g_pick(gen_t *g, unsigned n)
{
    uint64_t b = bt_splitmix(&g->base), v = bt_splitmix(&g->var), u = bt_splitmix(&g->gate);
    double x = (double)(u >> 11) * 0x1.0p-53;
    uint64_t r = x < g->creativity ? v : b;
    return n ? (unsigned)(r % n) : 0;
}

static int g_range(gen_t *g, int lo, int hi)
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

static void g_puts(gen_t *g, const char *s)
{
    g_emit(g, s, strlen(s));
}

static void g_printf(gen_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void g_printf(gen_t *g, const char *fmt, ...)
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
static void g_emit_title(gen_t *g, const char *s)
{
    char tmp[PHRASE_MAX];
    size_t n = strlen(s);
    if (n >= sizeof tmp)
        n = bt_u8_floor(s, sizeof tmp - 1);
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

static const char *g_next_phrase(gen_t *g)
{
    const topic_t *tp = g->tp;
    int i = g->cursor++;
    int own = tp->nphrase - 1;
    if (i < own)
        return tp->phrase[1 + i];
    i -= own;
    return stock_phrases[(unsigned)(i + g->stock_off) % ARRAY_LEN(stock_phrases)];
}

static const char *g_next_word(gen_t *g)
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

static void g_put(gen_t *g, const char *pattern)
{
    g_expand(g, pattern, pattern + strlen(pattern));
}

static void g_line(gen_t *g, const char *pattern)
{
    g_put(g, pattern);
    g_emit(g, "\n", 1);
}

/* Picks k distinct indexes of 0..n-1 (k <= n <= 64), in random order, skipping
 * those set in *used (which it updates when not NULL). */
static int g_choose(gen_t *g, size_t n, int k, uint64_t *used, int *idx)
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

static int bt_cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* k sentences of bank, space-separated. */
static void g_sentences(gen_t *g, const char *const *bank, size_t n, int k, uint64_t *used)
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
static void g_list(gen_t *g, const char *const *bank, size_t n, int k, const char *prefix,
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

#define SENTS(g, bank, k, used) g_sentences((g), (bank), ARRAY_LEN(bank), (k), (used))
#define LIST(g, bank, k, prefix, ordered) g_list((g), (bank), ARRAY_LEN(bank), (k), (prefix), (ordered))

/* Expands pattern into a separate string, cut at a word boundary to at most max
 * characters (code points); used for length-limited fields. */
static bool g_fit(gen_t *g, const char *pattern, size_t max, char *dst, size_t dstsize)
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
    if (bt_u8_chars(s, n) > max) {
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
        n = bt_u8_floor(s, dstsize - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
    buf_free(&tmp);
    return cut_short;
}

/* The last two words of a longer topic ("urban gardening"), for short fields. */
static const char *bt_short_topic(const char *topic)
{
    int spaces = 0;
    for (const char *q = topic + strlen(topic); q > topic; q--)
        if (q[-1] == ' ' && ++spaces == 2)
            return q;
    return topic;
}

/* Fills field with the first of n patterns (from a chosen start) that fits max
 * characters whole and differs from the previous fields; else the first one cut. */
static void g_fit_any(gen_t *g, const char *const *pats, size_t n, size_t max, char (*prev)[256],
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
static void g_tag_line(gen_t *g, int lo, int hi)
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
static void g_hashtags(gen_t *g, int lo, int hi)
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

/* ------------------------------------------------------------------ shared banks */

static const char *const B_OPEN[] = {
    "{Few topics|Not many subjects} {spark as much curiosity|come up as often} as $t.",
    "If you have ever wondered about $t, you are {not alone|in good company}.",
    "$t is {easy to overlook|often misunderstood}, yet it {matters more than most people "
    "think|shapes more of our days than we notice}.",
    "{Lately|These days|Over the past few years}, $t has {become hard to ignore|moved to the "
    "center of the conversation}.",
    "What does it {really take|actually mean} to get $t right?",
    "Ask ten people about $t and you {will|may well} hear ten different answers.",
    "{Everyone|Almost everyone} {has an opinion on|talks about} $t, but {few|not many} {look "
    "closely at how it works|take the time to understand it}.",
};

static const char *const B_BODY[] = {
    "At its core, $t is about {making deliberate choices|understanding what really "
    "matters|paying attention to the details}.",
    "A good place to start is $n, because that {shapes everything that follows|sets the tone "
    "for the rest}.",
    "{Many|Plenty of} people {underestimate|overlook} $n, but {that is often what makes the "
    "biggest difference|that is where small changes pay off}.",
    "When it comes to $t, {consistency beats intensity|small steps add up quickly|clarity "
    "beats complexity}.",
    "It also helps to {think about|keep an eye on} $n {from the very beginning|early on}.",
    "{Experience shows|It turns out} that $n and $n {work best together|are closely "
    "connected}.",
    "The details {matter|count}: $n can {turn a decent result into a great one|make or break "
    "the outcome}.",
    "{There is no single right way to approach $t|No one approach to $t fits everyone}, "
    "{but|yet} the {basics|fundamentals} {stay the same|rarely change}.",
    "{Start small|Begin with one change}, {measure what happens|see what works}, and {build "
    "from there|adjust as you go}.",
    "{Keep in mind|Remember} that {progress with $n takes time|getting $n right is a skill "
    "that grows with practice}.",
    "{Done well|Handled with care}, $t {pays off in ways that are easy to see|brings benefits "
    "that last}.",
    "{The good news|What is encouraging} is that {anyone|you} can {get better at|make "
    "progress with} $t, one step at a time.",
};

static const char *const B_CLOSE[] = {
    "{In the end|Ultimately}, $t {rewards|favours} {patience and curiosity|those who keep "
    "learning}.",
    "{Whatever your starting point|Wherever you are today}, {real progress|a better result} "
    "with $t is {closer than it looks|within reach}.",
    "{Give it a try|Start today}, and {see|notice} how $t {fits into your own "
    "routine|changes the way you work}.",
    "The best time to {take $t seriously|look closer at $t} is {now|today}.",
    "{Keep these ideas in mind|Hold on to these basics}, and $t will {feel far less "
    "daunting|start to make sense}.",
};

/* Sentences about the current section's phrase $s. */
static const char *const B_SECT[] = {
    "{In practice|Day to day}, questions about $s {come up early|are never far from the "
    "conversation}.",
    "It pays to give $s {more attention than most people do|a closer look}.",
    "{The key|One key idea} is to treat $s as {part of the whole picture|a habit rather than "
    "a one-off task}.",
    "{A simple way to begin|One easy first step} is to {look at how you handle $s "
    "today|write down what you want from $s}.",
    "{Small|Modest} improvements in $s {tend to compound|add up over time}.",
    "{It is tempting to|Many people} {rush past|skip over} $s, {but that usually "
    "backfires|yet that is often where the real gains are}.",
    "{Ask yourself|Consider} what success with $s would look like {a month from now|in "
    "practice}, and work backwards.",
    "{Examples help|Concrete examples make this clearer}: {see how others approach "
    "$s|notice the part $s plays in everyday situations}.",
};

static const char *const B_PROMISE[] = {
    "In this post, {we will look at|you will learn} {what matters most about|how to "
    "approach} $t, {from $n to $n|step by step}.",
    "{Below|In the next few minutes}, {we break down|you will find} {the essentials of|a "
    "practical guide to} $t.",
    "{Let's|We'll} {dig into|unpack} $t {together|one step at a time} and {see what really "
    "works|separate the useful from the noise}.",
    "{By the end|Once you finish reading}, you will {know exactly how to approach|have a "
    "clear plan for} $t.",
};

static const char *const B_TITLE[] = {
    "$T: A {Practical|Complete|Beginner's|Straightforward} Guide",
    "Everything You Need to Know About $T",
    "How to Get Started with $T",
    "Why $T Matters More Than Ever",
    "The {Simple|Honest|Surprising} Truth About $T",
    "$T, Explained",
    "What Nobody Tells You About $T",
    "$T Made {Simple|Easy}",
    "A Fresh Look at $T",
    "The {Real|Hidden} Benefits of $T",
    "{Common|Costly} Mistakes to Avoid with $T",
    "Is $T Worth It? {An Honest Look|What to Consider First}",
    "$T for $A: {Where to Begin|What to Know First}",
    "{Getting|Doing} $T Right: {Lessons|Ideas} That Work",
};

static const char *const B_HEAD[] = {
    "$T, {Finally Made Simple|Reimagined|Done Right}",
    "{Discover|Experience|Meet} the {Smarter|Simpler|Better} Side of $T",
    "Everything You Love About $T, None of the Hassle",
    "$T That Actually {Works|Delivers}",
    "Your {Shortcut|Fast Track} to Better $T",
    "Make $T Your {Advantage|Superpower}",
    "The Future of $T Starts {Here|Today}",
    "$T for $A Who Want More",
    "Rethink $T. {Start Today|Start Small|Start Here}.",
    "{Less Effort|Less Guesswork}, Better $T",
    "Why {Everyone|Smart Teams|So Many People} Are Talking About $T",
};

static const char *const B_SUBHEAD[] = {
    "The Case for $S",
    "Getting Started with $S",
    "The Role of $S",
    "{Common|Frequent} Mistakes with $S",
    "What to Know About $S",
    "Making the Most of $S",
    "$S in Practice",
    "A Closer Look at $S",
};

static const char *const B_MKT[] = {
    "{Say goodbye to|Forget} {the hassle|the guesswork|wasted time} and {enjoy|say hello to} "
    "{better|smarter} $t.",
    "{Designed with $n in mind|Built with $n at heart}, it {removes the guesswork|keeps "
    "things simple|fits right into your day}.",
    "{Enjoy|Get} $n without the {usual hassle|complexity|extra cost}.",
    "{Made|Created} for $a who {expect more|care about quality|value their time}.",
    "It is the {simple|reliable} choice for $n{, every single day|}.",
    "{Whether you are new to $t or an old hand|Beginner or expert}, {it adapts to you|you "
    "will feel right at home}.",
    "{Quality you can feel|Results you can see}, {from $n to $n|in every detail}.",
};

static const char *const B_CTA[] = {
    "{Get started|Try it} today{ — it only takes a minute|}.",
    "{Discover|Explore} $t {now|today} and see the difference.",
    "{Order|Book|Sign up} now{ and get started in minutes|}.",
    "{Join us|Come along} and {make $t part of your day|take $t further}.",
    "{Learn more|Find out more} about $t{ today|}.",
    "{Claim|Reserve} your spot {today|now} and start with $n.",
    "Start your first {project|step} with $t {today|now}.",
};

static const char *const B_SUBLINE[] = {
    "{Discover|Find out} how $t can {save you time|simplify your day|help you do more with "
    "less}, without the {usual hassle|guesswork}.",
    "Everything you need for $t {in one place|under one roof}, so you can focus on what "
    "matters.",
    "{Built|Designed} for $a who want $t to {just work|be simple|feel effortless}.",
    "From $n to $n, {get|enjoy} {results you can see|real progress} {from day one|in less "
    "time}.",
    "Make $t {easier|clearer|more rewarding} with {practical guidance|tools} {that fit the "
    "way you work|that grow with you}.",
    "Spend less time {worrying about|figuring out} $n and more time {enjoying the "
    "results|doing what you love}.",
    "{A fresh|An honest}, {practical|down-to-earth} approach to $t that {respects your "
    "time|puts you first}.",
};

/* ------------------------------------------------------------------ writers */

static void g_title_line(gen_t *g)
{
    SENTS(g, B_TITLE, 1, NULL);
    g_puts(g, "\n\n");
}

static void g_section(gen_t *g, uint64_t *used_sect)
{
    g->sect = g_next_phrase(g);
    SENTS(g, B_SUBHEAD, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, B_SECT, g_range(g, 2, 3), used_sect);
    g_puts(g, "\n\n");
}

static void t_freestyle(gen_t *g)
{
    uint64_t used = 0;
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, 2, &used);
    g_puts(g, "\n\n");
    if (g_pick(g, 2)) {
        SENTS(g, B_BODY, g_range(g, 2, 3), &used);
        g_puts(g, "\n\n");
    }
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

static void t_about_us(gen_t *g)
{
    static const char *const intro[] = {
        "{We are|We're} {a team|a small team|a group of people} {passionate about|dedicated "
        "to} $t.",
        "{At heart|First and foremost}, we are people who care deeply about $t.",
    };
    static const char *const story[] = {
        "{We started with a simple idea|It all began with a simple question}: {$t should be "
        "easier|what if $t could be simpler} for $a{ everywhere|}.",
        "{What began as a side project|What started as a simple idea} {has grown|grew} into "
        "{a team|a company} {built around|focused on} $n.",
    };
    static const char *const what[] = {
        "Today we {help|work with} $a {to make the most of|who care about} $t, with a "
        "{special focus|focus} on $n and $n.",
        "{Every|Each} project {starts with listening|begins with a conversation} and ends "
        "with {work we are proud of|results you can see}.",
        "{We keep things simple|We do not believe in shortcuts}: {honest advice|clear "
        "communication}, {careful work|real craft} and {no surprises|fair prices}.",
    };
    static const char *const values[] = {
        "{We believe in|What drives us is} {honesty, craft and care|doing things "
        "properly|keeping things simple}.",
        "{If that sounds like you|If you share that view}, {we would love to hear from you|get "
        "in touch — we would love to meet you}.",
    };
    if (g_pick(g, 2))
        g_puts(g, "About us\n\n");
    SENTS(g, intro, 1, NULL);
    g_puts(g, " ");
    SENTS(g, story, 1, NULL);
    g_puts(g, "\n\n");
    SENTS(g, what, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\n");
    g_put(g, values[0]);
    g_puts(g, " ");
    g_line(g, values[1]);
}

static void t_advertisement(gen_t *g)
{
    SENTS(g, B_HEAD, 1, NULL);
    g_puts(g, "\n\n");
    SENTS(g, B_MKT, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\n");
    SENTS(g, B_CTA, 1, NULL);
    g_puts(g, "\n");
}

static void t_article(gen_t *g)
{
    static const char *const concl[] = {"Conclusion", "Final thoughts", "The bottom line"};
    uint64_t used = 0, used_sect = 0;
    g_title_line(g);
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 1, 2), &used);
    g_puts(g, "\n\n");
    for (int i = g_range(g, 3, 5); i > 0; i--) {
        g_section(g, &used_sect);
        if (used_sect == (1ull << ARRAY_LEN(B_SECT)) - 1)
            used_sect = 0;
    }
    SENTS(g, concl, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

static void t_blog_intro(gen_t *g)
{
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 1, 2), NULL);
    g_puts(g, " ");
    SENTS(g, B_PROMISE, 1, NULL);
    g_puts(g, "\n");
}

static void t_blog_outline(gen_t *g)
{
    static const char *const sec[] = {
        "Understanding $s",          "Why $t depends on $s",    "Getting started with $s",
        "Common mistakes with $s",   "Tools and resources for $s", "Real-world examples of $s",
        "$s and $t: how they connect", "Measuring progress with $s", "Advanced tips for $s",
    };
    static const char *const sub[] = {
        "Define $s in plain terms",
        "Why $a should care",
        "A quick example",
        "{Key|Main} benefits",
        "Mistakes to avoid",
        "{One simple|A practical} first step",
        "How to measure {progress|success}",
        "{Questions|Objections} readers often have",
        "{Useful|Recommended} tools",
        "How it connects to $n",
    };
    int total = g_range(g, 5, 8);
    SENTS(g, B_TITLE, 1, NULL);
    g_puts(g, "\n\n1. Introduction\n");
    g_line(g, "   - Hook: {a surprising fact|a relatable question|a short story} about $t");
    g_line(g, "   - Why $t matters {now|today}");
    if (g_pick(g, 2))
        g_line(g, "   - What the reader will learn");
    int idx[16];
    int nsec = g_choose(g, ARRAY_LEN(sec), total - 2, NULL, idx);
    for (int i = 0; i < nsec; i++) {
        g->sect = g_next_phrase(g);
        g_printf(g, "%d. ", i + 2);
        g_line(g, sec[idx[i]]);
        int sidx[4];
        int ns = g_choose(g, ARRAY_LEN(sub), g_range(g, 2, 3), NULL, sidx);
        for (int k = 0; k < ns; k++) {
            g_puts(g, "   - ");
            g_line(g, sub[sidx[k]]);
        }
    }
    g_printf(g, "%d. Conclusion\n", nsec + 2);
    g_line(g, "   - Recap of the key points about $t");
    g_line(g, "   - {A final tip|One last piece of advice}");
    if (g_pick(g, 2))
        g_line(g, "   - Call to action: {share your experience|try one idea this week}");
}

static void t_blog_outro(gen_t *g)
{
    g_put(g, "{To wrap up|In short|All in all}, $t {comes down to|is really about} $n and $n. ");
    SENTS(g, B_BODY, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, g_pick(g, 2) ? "\n\n" : " ");
    g_line(g, "{What is your experience with $t|Which of these ideas will you try first}? "
              "{Share it in the comments|Let us know in the comments}{ — we read every "
              "one|}.");
}

static void t_blog_paragraph(gen_t *g)
{
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 3, 4), NULL);
    if (g_pick(g, 2)) {
        g_puts(g, " ");
        SENTS(g, B_CLOSE, 1, NULL);
    }
    g_puts(g, "\n");
}

static void t_blog_post(gen_t *g)
{
    static const char *const concl[] = {"Conclusion", "Wrapping up", "Final thoughts"};
    uint64_t used = 0, used_sect = 0;
    g_title_line(g);
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_PROMISE, 1, NULL);
    g_puts(g, "\n\n");
    for (int i = g_range(g, 3, 4); i > 0; i--) {
        g_section(g, &used_sect);
        if (used_sect == (1ull << ARRAY_LEN(B_SECT)) - 1)
            used_sect = 0;
    }
    SENTS(g, concl, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_line(g, " {What has your experience with $t been|Which idea will you try first}? "
              "{Tell us in the comments|Share it in the comments}.");
}

static void t_blog_section(gen_t *g)
{
    uint64_t used = 0;
    g->sect = g->tp->phrase[0];
    SENTS(g, B_SUBHEAD, 1, NULL);
    g_puts(g, "\n\n");
    for (int p = g_range(g, 2, 3); p > 0; p--) {
        SENTS(g, B_SECT, 2, &used);
        g_puts(g, " ");
        SENTS(g, B_BODY, 1, NULL);
        g_puts(g, p > 1 ? "\n\n" : "\n");
    }
}

static void t_talking_points(gen_t *g)
{
    static const char *const pts[] = {
        "Why $t matters {right now|today} and who it affects",
        "The {basics|key terms} of $n, explained {simply|in plain language}",
        "{Common|Widespread} myths about $t{ and what is actually true|}",
        "How $n {changes|shapes} {the outcome|the results}",
        "{A step-by-step|A simple} approach for $a",
        "{Mistakes|Pitfalls} to avoid with $n",
        "{Real-world examples|Short case studies} that show $t in action",
        "{Tools|Resources} that make $n easier",
        "How to measure progress with $t",
        "What the future of $t {might look like|holds}",
    };
    LIST(g, pts, g_range(g, 5, 8), "- ", true);
}

static void t_blog_title(gen_t *g)
{
    LIST(g, B_TITLE, g_range(g, 5, 10), NULL, false);
}

static void t_call_to_action(gen_t *g)
{
    LIST(g, B_CTA, g_range(g, 3, 5), NULL, false);
}

static void t_faq(gen_t *g)
{
    static const char *const qa[] = {
        "Q: What is $t?\nA: ^$t {is about|covers} $n and $n. {In short, it|Put simply, it} "
        "{helps $a get better results with less effort|is a practical way to reach your "
        "goals}.",
        "Q: Who is $t for?\nA: {It suits|It is a good fit for} $a{, whether they are just "
        "starting out or already experienced|}. Anyone who cares about $n can benefit.",
        "Q: How do I get started with $t?\nA: {Start small|Begin with one simple step}: "
        "{focus on $n first|pick one area, such as $n}, {then build from there|and add more "
        "once it feels natural}.",
        "Q: How long does it take to see results?\nA: {It depends on your starting "
        "point|That varies}, but {many people notice a difference within a few "
        "weeks|steady effort usually shows results sooner than expected}.",
        "Q: What are the most common mistakes with $t?\nA: {Trying to do everything at "
        "once|Skipping the basics} and {ignoring|overlooking} $n are the {usual|most "
        "frequent} ones.",
        "Q: Does $t cost a lot?\nA: {Not necessarily|Not always}. {You can begin with what "
        "you already have|Many of the basics are free}, and invest more {only when you are "
        "sure it is worth it|as your needs grow}.",
        "Q: Where can I learn more about $n?\nA: {Good starting points are|Try} {reputable "
        "guides, community forums and hands-on practice|trusted guides and people who "
        "already practise it}.",
        "Q: Why does $t matter?\nA: Because it {affects|touches} $n{ and $n|}, and {small "
        "improvements add up|getting it right early saves time later}.",
    };
    int idx[8];
    int k = g_choose(g, ARRAY_LEN(qa), g_range(g, 4, 6), NULL, idx);
    for (int i = 0; i < k; i++) {
        if (i)
            g_puts(g, "\n");
        g_line(g, qa[idx[i]]);
    }
}

static void t_hashtags(gen_t *g)
{
    g_hashtags(g, 8, 15);
    g_puts(g, "\n");
}

static void t_headline(gen_t *g)
{
    LIST(g, B_HEAD, g_range(g, 5, 8), NULL, false);
}

static void t_how_it_works(gen_t *g)
{
    static const char *const steps[] = {
        "Tell us what you need\n   {Share|Describe} your goals for $t {in a few words|in a "
        "short form}, so we understand where you are.",
        "{Get|Receive} a {tailored|personal} plan\n   We {map out|put together} {the steps|a "
        "plan} around $n, {matched to your situation|so nothing is left to chance}.",
        "{Set it up|Get set up} {in minutes|quickly}\n   {Everything you need for $t is "
        "ready|Connect your tools and preferences}, {with guidance at every step|without a "
        "steep learning curve}.",
        "{Put it to work|Start using it}\n   {Use it day to day|Apply it to $n}, and adjust "
        "as you learn what works for you.",
        "{Track|See} your {progress|results}\n   {Clear updates show|A simple overview shows} "
        "{how $t is improving|what has changed}, so you always know where you stand.",
        "{Keep improving|Grow with it}\n   {As your needs change|When you are ready for more}, "
        "{add $n|expand} {without starting over|at your own pace}.",
    };
    int k = g_range(g, 3, 5);
    int idx[6];
    int got = g_choose(g, ARRAY_LEN(steps) - 1, k - 1, NULL, idx);
    for (int i = 0; i < got; i++)
        idx[i]++;
    idx[got++] = 0;
    qsort(idx, (size_t)got, sizeof idx[0], bt_cmp_int);
    for (int i = 0; i < got; i++) {
        g_printf(g, "Step %d: ", i + 1);
        g_line(g, steps[idx[i]]);
    }
}

static void t_meta_description(gen_t *g)
{
    static const char *const long_form[] = {
        "{Discover|Learn|Explore} {everything you need to know about|the essentials "
        "of|practical tips on} $t{, from $n to $n|}. {Start today|Read more|Get started now}.",
        "{Your|A} {practical|clear|friendly} guide to $t for $a: {tips, examples and next "
        "steps|what works and what to avoid}.",
        "{Looking for|Curious about} $t? {Find|Get} {clear answers|practical advice} on $n "
        "and {more|how to get started}.",
    };
    char line[512];
    g_fit(g, long_form[g_pick(g, ARRAY_LEN(long_form))], 159, line, sizeof line);
    size_t n = strlen(line);
    while (n > 0 && strchr(".!?,;: ", line[n - 1]))
        n--;
    line[n] = '\0';
    g_puts(g, line);
    g_puts(g, n > 0 && line[n - 1] == '?' ? "\n" : ".\n");
}

static void t_meta_keywords(gen_t *g)
{
    g_tag_line(g, 8, 15);
}

static void t_mission(gen_t *g)
{
    static const char *const m1[] = {
        "Our mission is to make $t {simple, accessible and rewarding|easier and more "
        "rewarding} for $a.",
        "Our mission is to help $a {get more out of|succeed with} $t{ through $n| every "
        "day|}.",
        "We exist to {bring|put} $t within reach of $a{, wherever they are|}.",
    };
    static const char *const m2[] = {
        "{We do this by|Every day, we focus on} {listening closely|putting people first}, "
        "{doing honest work|keeping things simple} and {never settling for good "
        "enough|learning as we go}.",
        "{Through|With} $n, we {help people|make it possible to} {spend less time worrying "
        "and more time living|turn good intentions into real results}.",
    };
    SENTS(g, m1, 1, NULL);
    if (g_pick(g, 3)) {
        g_puts(g, " ");
        SENTS(g, m2, 1, NULL);
    }
    g_puts(g, "\n");
}

static void t_newsletter(gen_t *g)
{
    static const char *const heads[] = {
        "{Spotlight|This week's focus}: $S",
        "{Quick tip|Try this}: $S",
        "{Worth your time|Worth a look}: $S",
        "{On our radar|What we are exploring}: $S",
    };
    uint64_t used = 0;
    g_line(g, "Subject: {This week in|Your update on|What's new with} $T");
    g_puts(g, "\n");
    g_line(g, "{Hi there,|Hello $a,|Hi friends,}");
    g_puts(g, "\n");
    SENTS(g, B_OPEN, 1, NULL);
    g_put(g, " {Here is what we have for you this time.|This issue is all about $t.}\n\n");
    int idx[4];
    int k = g_choose(g, ARRAY_LEN(heads), g_range(g, 2, 3), NULL, idx);
    for (int i = 0; i < k; i++) {
        g->sect = g_next_phrase(g);
        g_line(g, heads[idx[i]]);
        SENTS(g, B_SECT, 2, &used);
        g_puts(g, "\n\n");
    }
    g_line(g, "{Until next time|Thanks for reading|See you next week},");
    g_line(g, "The $T {team|newsletter team}");
}

static void t_pas(gen_t *g)
{
    static const char *const pain[] = {
        "{Struggling with|Tired of wrestling with|Frustrated by} $t? {You are not alone|It "
        "happens to the best of us}.",
        "{Most days|Too often}, $t {feels harder than it should|takes more time than it "
        "deserves}, and $n {only adds to the pile|never quite gets done}.",
    };
    static const char *const agitate[] = {
        "{Every day it stays unsolved|The longer it drags on}, {it costs you time, money and "
        "energy|it eats into your time and focus}.",
        "{Meanwhile|And all the while}, {small problems with $n grow into big ones|you fall "
        "further behind on what matters}.",
        "{It is not just frustrating|It is more than an annoyance}: it {holds you back|keeps "
        "you from the results you want}.",
    };
    static const char *const sol[] = {
        "{That is where|This is exactly why} {we come in|our approach helps}: {a simple, "
        "reliable|a clear, practical} way to {handle $t|take control of $t}{, starting with "
        "$n|}.",
        "{Get started today|Try it today} and {feel the difference|see the difference for "
        "yourself}.",
    };
    g_puts(g, "Pain: ");
    g_put(g, pain[0]);
    if (g_pick(g, 2)) {
        g_puts(g, " ");
        g_put(g, pain[1]);
    }
    g_puts(g, "\n\nAgitate: ");
    SENTS(g, agitate, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\nSolution: ");
    g_put(g, sol[0]);
    g_puts(g, " ");
    g_line(g, sol[1]);
}

static void t_paragraph(gen_t *g)
{
    g_put(g, "{When it comes to $t, a few things matter more than the rest.|$t deserves a "
             "closer look than it usually gets.|There is more to $t than meets the eye.} ");
    SENTS(g, B_BODY, g_range(g, 3, 4), NULL);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

static void t_press_release(gen_t *g)
{
    g_puts(g, "FOR IMMEDIATE RELEASE\n\n");
    if (g_pick(g, 3))
        g_line(g, "[Organization] {Announces|Introduces|Launches} $T{ for $A|}");
    else
        g_line(g, "New {Initiative|Program} Brings $T to $A");
    g_puts(g, "\n[CITY] — [Month Day, Year] — ");
    g_line(g, "{Today|This week}, [Organization] {announced|unveiled|launched} a new "
              "{initiative|offering} {focused on|dedicated to} $t, {designed to|which aims to} "
              "{help $a with $n|make $n simpler for $a}.");
    g_puts(g, "\n");
    SENTS(g, B_MKT, g_range(g, 1, 2), NULL);
    g_line(g, " {The launch|The announcement} {reflects|builds on} [Organization]'s "
              "{long-standing|ongoing} work on $n.");
    g_puts(g, "\n");
    g_line(g, "“{We built this because|We started this work because} {$t deserves "
              "better|people told us $n felt too hard}. {Our goal is simple|What we want is "
              "simple}: {to make $t work for everyone|to help $a do more with less},” said "
              "[Name], [Title] at [Organization].");
    g_puts(g, "\n");
    g_line(g, "{The new offering|It} is available {starting today|from [Date]}. More "
              "information is available at [website].");
    g_puts(g, "\nAbout [Organization]\n");
    g_line(g, "[Organization] {works on|focuses on} $t{ and $n|}. {Learn more at "
              "[website].|Media contact: [Name], [email].}");
    g_puts(g, "\n###\n");
}

static void t_social_post(gen_t *g)
{
    static const char *const hook[] = {
        "{Let's talk about|Quick thought on} $t.",
        "{Here is something|Something} {nobody tells you|we wish we had known sooner}: $t.",
        "{Hot take|Unpopular opinion}: $t is {simpler|more rewarding} than it looks.",
    };
    static const char *const ask[] = {
        "What is your {take on|experience with} $t? {Tell us|Share it} below.",
        "{Save this|Bookmark this} for later and share it with someone who needs it.",
        "{Which|What} would you add? Drop it in the comments.",
    };
    SENTS(g, hook, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 1, 2), NULL);
    g_puts(g, " ");
    SENTS(g, ask, 1, NULL);
    g_puts(g, "\n\n");
    g_hashtags(g, 2, 3);
    g_puts(g, "\n");
}

static void t_caption(gen_t *g)
{
    static const char *const line1[] = {
        "{Little moments|Small things}, big {difference|impact}: $t.",
        "$T, {just the way we like it|done our way}.",
        "{All about|Here for} $t{ today|}.",
        "{Proof|A reminder} that $t {never gets old|is always worth it}.",
    };
    static const char *const cta[] = {
        "{Tap the link in our bio|Visit the link in bio} to {learn more|see more}.",
        "Tell us {in the comments|below}: {how do you enjoy $t|what does $t mean to you}?",
        "{Tag a friend|Share this with someone} who {loves|needs} $t.",
        "{Save this post|Follow us} for more on $n.",
    };
    SENTS(g, line1, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, cta, 1, NULL);
    g_puts(g, "\n\n");
    g_hashtags(g, 3, 5);
    g_puts(g, "\n");
}

static bool bt_ends(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n > k + 2 && memcmp(s + n - k, suf, k) == 0;
}

/* The stem of an ASCII word for a brand name: "gardening" → "garden",
 * "beginners" → "begin", "balconies" → "balcony". */
static size_t bt_stem(char *w, size_t n)
{
    bool cut = true;
    if (bt_ends(w, n, "ing") || bt_ends(w, n, "ers"))
        n -= 3;
    else if (bt_ends(w, n, "able"))
        n -= 4;
    else if (bt_ends(w, n, "ies"))
        n -= 3, w[n++] = 'y';
    else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's')
        n -= 1;
    else
        cut = false;
    if (cut && n > 3 && w[n - 1] == w[n - 2] && !strchr("aeiou", w[n - 1]))
        n--;
    if (n > 8)
        n = 8;
    w[n] = '\0';
    return n;
}

/* A name for a startup made from a word: "Gardenify", "GoUrban", "CompostHub". */
static void bt_brand(const char *word, unsigned style, char *out, size_t size)
{
    static const char *const suffix[] = {"ly", "ify", "Hub", "Lab", "Nest", "io", "Works",
                                         "Base", "Loop", "Kit", "Flow", "Wise", "Spark", "Path"};
    static const char *const prefix[] = {"Go", "Get", "Try", "My", "Up", "Neo", "Hello"};
    char stem[WORD_MAX];
    size_t n = 0;
    bool ascii = true;
    for (const char *p = word; *p && n + 2 < sizeof stem; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80)
            ascii = false;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c >= 0x80)
            stem[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    stem[n] = '\0';
    if (n == 0)
        n = (size_t)snprintf(stem, sizeof stem, "nova");
    const char *suf = suffix[(style / 3) % ARRAY_LEN(suffix)];
    if (ascii) {
        n = bt_stem(stem, n);
        if (strcmp(suf, "ly") == 0 && strchr("ly", stem[n - 1]))
            suf = "ify";
        while (n > 3 && strchr("aeiouy", stem[n - 1]) && strchr("aeiouy", suf[0]))
            stem[--n] = '\0';
        if (stem[0] >= 'a' && stem[0] <= 'z')
            stem[0] = (char)(stem[0] - 32);
    }
    if (style % 3 == 2)
        snprintf(out, size, "%s%s", prefix[(style / 3) % ARRAY_LEN(prefix)], stem);
    else
        snprintf(out, size, "%s%s", stem, suf);
}

static void t_startup_ideas(gen_t *g)
{
    static const char *const problem[] = {
        "{$A|People} {struggle to|find it hard to} {keep track of|make sense of|find "
        "trustworthy help with} $s.",
        "{Getting started with|Keeping up with} $s is {slow, costly and confusing|harder than "
        "it should be} for $a.",
        "There is no {simple|affordable} way for $a to {plan|organise|share} $s.",
    };
    static const char *const solution[] = {
        "A {mobile app|web platform|subscription service} that {turns $s into a simple weekly "
        "routine|makes $s easy to plan and track}.",
        "A {marketplace|community platform} that {connects $a with experts in $s|lets $a "
        "share and swap $s}.",
        "A {tool|service} that {automates the boring parts of $s|gives personal, step-by-step "
        "guidance on $s}.",
    };
    static const char *const model[] = {
        "Monthly subscription{ with a free tier|}", "Commission on each booking or sale",
        "Freemium, with paid features for power users", "Per-seat pricing for teams",
        "One-off purchase plus optional add-ons",
    };
    int k = g_range(g, 3, 5);
    for (int i = 0; i < k; i++) {
        char name[64];
        g->sect = i == 0 ? g->tp->phrase[0] : g_next_phrase(g);
        bt_brand(g_next_word(g), g_pick(g, 64), name, sizeof name);
        g_printf(g, "%s%d. %s\n   Problem: ", i ? "\n" : "", i + 1, name);
        SENTS(g, problem, 1, NULL);
        g_puts(g, "\n   Solution: ");
        SENTS(g, solution, 1, NULL);
        g_puts(g, "\n   Business model: ");
        SENTS(g, model, 1, NULL);
        g_puts(g, ".\n");
    }
}

static void t_startup_names(gen_t *g)
{
    static const char *const why[] = {
        "short and easy to remember, with $t at its heart",
        "{friendly|warm} and {modern|approachable}; hints at $s",
        "suggests {growth|momentum} in $t",
        "easy to spell and to say out loud",
        "{playful|confident}, and a natural fit for $s",
        "works well as a domain and a social handle",
        "{clear|direct}: says what you do in one word",
        "{memorable|distinctive} without being hard to pronounce",
    };
    int k = g_range(g, 8, 12);
    char names[12][64];
    int got = 0;
    for (int tries = 0; got < k && tries < 60; tries++) {
        char name[64];
        bt_brand(g_next_word(g), g_pick(g, 98), name, sizeof name);
        bool dup = false;
        for (int i = 0; i < got && !dup; i++)
            dup = strcmp(names[i], name) == 0;
        if (dup)
            continue;
        memcpy(names[got], name, sizeof name);
        g->sect = g_next_phrase(g);
        g_printf(g, "%d. %s — ", got + 1, name);
        g->cap_pending = false;
        g_line(g, why[g_pick(g, ARRAY_LEN(why))]);
        got++;
    }
}

static void t_subheadline(gen_t *g)
{
    LIST(g, B_SUBLINE, g_range(g, 3, 5), NULL, false);
}

static void t_testimonial(gen_t *g)
{
    static const char *const first[] = {
        "{I was skeptical at first|I did not expect much at first}, but $t {completely "
        "changed|really improved} the way I {handle|think about} $n.",
        "{I have tried a lot of things|Over the years I tried many options}, and $t is the "
        "{first|only} one that {actually stuck|made a real difference}.",
    };
    static const char *const more[] = {
        "{Within a few weeks|Almost right away}, I {noticed|saw} {a real difference|real "
        "results} in $n.",
        "{Everything is|It is all} {simple, clear and|easy to follow and} {genuinely "
        "helpful|well thought out}.",
        "{I would recommend it to|I have already recommended it to} {anyone interested in "
        "$t|friends and colleagues}.",
        "{What I like most is|The best part is} {how much time it saves me|that I finally "
        "feel in control of $n}.",
    };
    static const char *const names[] = {"Alex M.", "Priya S.", "Jordan K.", "Maria G.",
                                        "Sam T.",  "Chen L.",  "Fatima R.", "Lukas B."};
    static const char *const roles[] = {"customer", "small business owner", "long-time user",
                                        "project manager", "first-time buyer", "team lead"};
    g_puts(g, "“");
    SENTS(g, first, 1, NULL);
    g_puts(g, " ");
    SENTS(g, more, g_range(g, 1, 3), NULL);
    g_printf(g, "”\n— %s, %s\n", names[g_pick(g, ARRAY_LEN(names))],
             roles[g_pick(g, ARRAY_LEN(roles))]);
}

static void t_social_quote(gen_t *g)
{
    static const char *const q[] = {
        "{Great|Good} $t {is not an accident|does not happen by chance}; it is the result of "
        "{small choices made every day|care and practice}.",
        "Every expert in $t was once a beginner{ who refused to quit|}.",
        "{Invest in|Take care of} $t today, and your future self will thank you.",
        "The {secret|heart} of $t is {simple|not complicated}: {show up|keep going} {and keep "
        "learning|every single day}.",
        "$t is {not a destination|less a destination than a habit}; it is a {journey worth "
        "taking|way of seeing the world}.",
        "{Start where you are|Begin today}: $t {grows|gets easier} with every step you take.",
    };
    g_puts(g, "“");
    SENTS(g, q, 1, NULL);
    g_puts(g, "”\n");
}

static void t_social_bio(gen_t *g)
{
    static const char *const bio[] = {
        "{Helping|Inspiring} $a {with|through} $t{ and $n|}. {Tips, ideas and stories|Practical "
        "tips} {every week|daily}. {Say hi below|Follow along}.",
        "$T {lover|enthusiast} | {Sharing|Writing about} $n | {New posts every week|DMs "
        "open}. {Join us|Follow along}.",
        "{All things|Everything} $t. {Honest advice|Real stories} for $a. {Start here|Link "
        "below}.",
    };
    char line[512];
    g_fit(g, bio[g_pick(g, ARRAY_LEN(bio))], 160, line, sizeof line);
    g_puts(g, line);
    g_puts(g, "\n");
}

static void t_value_prop(gen_t *g)
{
    static const char *const head[] = {
        "{The easiest way to|The smarter way to|A simpler way to} {enjoy|handle|get the most "
        "from} $t.",
        "$T {without the hassle|made simple|that works as hard as you do}.",
    };
    static const char *const bullets[] = {
        "{Save time|Move faster} on $n",
        "{Clear|Simple} {guidance|steps} {from day one|at every stage}",
        "{Better|More reliable} results with $n",
        "{Fair|Transparent} pricing with no surprises",
        "{Friendly support|Help} whenever you need it",
        "{Works|Fits} with {the way you already work|your existing routine}",
    };
    SENTS(g, head, 1, NULL);
    g_puts(g, "\n");
    g_line(g, "{Made|Built} for $a who want {real results|more from $t} {without wasted time "
              "or money|in less time}.");
    g_puts(g, "\n");
    LIST(g, bullets, 3, "- ", false);
}

static void t_video_description(gen_t *g)
{
    static const char *const chapters[] = {"The role of $s", "Getting started with $s",
                                           "Common mistakes with $s", "$s in practice",
                                           "Tips for better $s", "Tools for $s"};
    g_put(g, "In this video, {we|I} {explore|walk through|break down} $t{, covering $n and "
             "$n|}. ");
    SENTS(g, B_BODY, g_range(g, 1, 2), NULL);
    g_puts(g, "\n\nChapters:\n00:00 Intro\n");
    int idx[6];
    int k = g_choose(g, ARRAY_LEN(chapters), g_range(g, 3, 5), NULL, idx);
    int secs = 0;
    for (int i = 0; i < k; i++) {
        secs += 45 + (int)g_pick(g, 150);
        g->sect = g_next_phrase(g);
        g_printf(g, "%02d:%02d ", secs / 60, secs % 60);
        g->cap_pending = true;
        g_line(g, chapters[idx[i]]);
    }
    secs += 40 + (int)g_pick(g, 80);
    g_printf(g, "%02d:%02d Wrap-up\n\n", secs / 60, secs % 60);
    g_line(g, "{Subscribe|If you found this useful, subscribe} for more videos on $t{ and "
              "turn on notifications so you never miss one|}.");
    g_puts(g, "\n");
    g_hashtags(g, 3, 5);
    g_puts(g, "\n");
}

static void t_video_script(gen_t *g)
{
    static const char *const mid_visual[] = {
        "[Visual: {close-up|slow pan} of $s]",
        "[Visual: {on-screen text|a simple diagram} explaining $s]",
        "[Visual: {b-roll|a quick montage} of $s in everyday life]",
    };
    g_puts(g, "Scene 1 — Hook\n");
    g_line(g, "[Visual: {quick montage|bold title card} about $t]");
    g_put(g, "Narrator: ^");
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, "\n\n");
    int mids = g_range(g, 1, 4);
    for (int i = 0; i < mids; i++) {
        g->sect = g_next_phrase(g);
        g_printf(g, "Scene %d — ", i + 2);
        g_line(g, i == 0 ? "{The basics|Setting the scene}: $s" : "{Key point|Next up}: $s");
        SENTS(g, mid_visual, 1, NULL);
        g_put(g, "\nNarrator: ^");
        SENTS(g, B_SECT, 2, NULL);
        g_puts(g, "\n\n");
    }
    g_printf(g, "Scene %d — Call to action\n", mids + 2);
    g_line(g, "[Visual: {host on camera|end screen with subscribe button}]");
    g_put(g, "Narrator: ^");
    SENTS(g, B_CLOSE, 1, NULL);
    g_line(g, " {Subscribe for more on $t|Like and subscribe if this helped}{, and tell us in "
              "the comments what you want to see next|}.");
}

static void t_video_tags(gen_t *g)
{
    g_tag_line(g, 10, 15);
}

static void t_video_title(gen_t *g)
{
    static const char *const vt[] = {
        "I Tried $T for 30 Days — Here's What Happened",
        "$T Explained in {5|10} Minutes",
        "The {Beginner's|Complete} Guide to $T",
        "{Stop Making|Avoid} These $T Mistakes",
        "How I Got Better at $T",
        "$T: {What Nobody Tells You|The Honest Truth}",
        "Watch This Before You Try $T",
        "{5|7} $T Tips You Need to Know",
        "$T for $A: {Start Here|A Simple Plan}",
    };
    LIST(g, vt, 5, NULL, false);
}

static void t_vision(gen_t *g)
{
    g_put(g, "{We envision|Our vision is} a world where $t {is within everyone's "
             "reach|brings people together|is simple, fair and sustainable}.");
    if (g_pick(g, 3))
        g_put(g, " {Within|Over} the next decade, we want $n to {become the norm, not the "
                 "exception|feel effortless for $a}.");
    g_puts(g, "\n");
}

static void t_product_sheet(gen_t *g)
{
    static const char *const feats[] = {
        "{Thoughtful|Smart} design {built around|centred on} $n",
        "{Simple|Quick} {setup|start}: {ready to use in minutes|no special skills needed}",
        "{Durable|Reliable} {quality|construction} {made to last|for everyday use}",
        "{Flexible|Adaptable} {options|settings} for $n",
        "{Clear|Step-by-step} {instructions|guidance} included",
        "{Friendly|Responsive} support when you need it",
    };
    static const char *const bens[] = {
        "{Save time|Spend less effort} on $n",
        "{Enjoy|Get} {better|more consistent} results with $t",
        "{Feel confident|Stay in control} from the first day",
        "{Less|No} guesswork{, more results|}",
    };
    g_line(g, "Product: $T");
    g_puts(g, "\nOverview\n");
    SENTS(g, B_MKT, 2, NULL);
    g_puts(g, "\n\n");
    bool benefits_first = g_pick(g, 4) == 0;
    for (int part = 0; part < 2; part++) {
        if ((part == 0) != benefits_first) {
            g_puts(g, "Key features\n");
            LIST(g, feats, g_range(g, 3, 5), "- ", false);
        } else {
            g_puts(g, "Benefits\n");
            LIST(g, bens, g_range(g, 2, 3), "- ", false);
        }
        g_puts(g, "\n");
    }
    g_line(g, "Ideal for\n$A who want {more from $t|$t without the hassle}.");
    if (g_pick(g, 2))
        g_puts(g, "\nSpecifications\n- Dimensions: [to be added]\n- Materials: [to be "
                  "added]\n- Price: [to be added]\n");
    g_puts(g, "\n");
    SENTS(g, B_CTA, 1, NULL);
    g_puts(g, "\n");
}

static void t_welcome_email(gen_t *g)
{
    static const char *const steps[] = {
        "{Set up|Complete} your profile so we can {tailor|personalise} it around $n.",
        "{Explore|Browse} our {guide|starter guide} to $t.",
        "{Try|Pick} one small thing {today|this week}: {start with $n|focus on $n}.",
        "{Join|Say hello in} our community of $a.",
        "{Save|Bookmark} this email so the links are always at hand.",
    };
    g_line(g, "Subject: {Welcome to|You're in! Welcome to} $T");
    g_puts(g, "\n");
    g_line(g, "{Hi there,|Hello,|Hi and welcome,}");
    g_puts(g, "\n");
    g_line(g, "{Thank you for joining|Thanks for signing up for} $t{!|.} {We are "
              "thrilled|We're glad} to have you{ with us|}.");
    g_puts(g, "\n");
    g_line(g, "{Here is how to get started|A few first steps}:");
    LIST(g, steps, g_range(g, 2, 3), NULL, false);
    g_puts(g, "\n");
    g_line(g, "{If you have any questions, just reply|Questions at any point? Just reply} to "
              "this email{ — we read every message|}.");
    g_puts(g, "\n");
    g_line(g, "{Warm regards|Cheers|Best wishes},");
    g_line(g, "The $T team");
}

static void t_push(gen_t *g)
{
    static const char *const titles[] = {
        "{New|Fresh} for you: $T", "$T {is waiting|awaits}", "{Quick tip|Today's tip}: $T",
        "{Ready|Time} for $T?",    "Don't miss this: $T",
    };
    static const char *const msgs[] = {
        "{Tap to see|Open the app to discover} {what's new with $t|today's picks for $n}.",
        "Your $t {update|guide} is ready. {Take a look|Check it out} {now|before it's gone}.",
        "{Just a few minutes|Two minutes} {today|is all it takes} to move forward with $n. "
        "{Let's go|Start now}.",
        "{Something new|A small surprise} about $t {just landed|is here}. Tap to {see "
        "more|find out}.",
    };
    char t[3][256], m[3][256];
    for (int i = 0; i < 3; i++) {
        g_fit_any(g, titles, ARRAY_LEN(titles), 40, t, i, t[i]);
        g_fit_any(g, msgs, ARRAY_LEN(msgs), 120, m, i, m[i]);
        g_printf(g, "%d. ", i + 1);
        g_puts(g, t[i]);
        g_puts(g, "\n   ");
        g_puts(g, m[i]);
        g_puts(g, i < 2 ? "\n\n" : "\n");
    }
}

static void t_listicle(gen_t *g)
{
    static const char *const heads[] = {
        "Start with $s",   "Focus on $s",         "Rethink $s",       "Pay attention to $s",
        "Make time for $s", "Don't ignore $s",    "Experiment with $s", "Keep track of $s",
        "Learn from $s",   "Simplify $s",
    };
    int k = g_range(g, 5, 8);
    uint64_t used = 0;
    g_printf(g, "%d ", k);
    g_line(g, "{Ways|Tips|Ideas} {to Make the Most of|for Better|to Rethink} $T");
    g_puts(g, "\n");
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_PROMISE, 1, NULL);
    g_puts(g, "\n\n");
    int idx[10];
    int got = g_choose(g, ARRAY_LEN(heads), k, NULL, idx);
    for (int i = 0; i < got; i++) {
        g->sect = i == 0 ? g->tp->phrase[0] : g_next_phrase(g);
        g_printf(g, "%d. ", i + 1);
        g_line(g, heads[idx[i]]);
        SENTS(g, B_SECT, 2, &used);
        if (used == (1ull << ARRAY_LEN(B_SECT)) - 1)
            used = 0;
        g_puts(g, "\n\n");
    }
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

static void t_blog_tags(gen_t *g)
{
    g_tag_line(g, 5, 10);
}

static void t_pros_cons(gen_t *g)
{
    static const char *const pros[] = {
        "{Can save|Saves} time {on $n|once it becomes routine}",
        "{Improves|Strengthens} $n",
        "{Flexible|Adaptable} enough for $a",
        "{Low|Modest} cost to {start|try}",
        "{Builds|Develops} useful {skills|habits} that last",
        "{A large|An active} community{ and plenty of resources|}",
    };
    static const char *const cons[] = {
        "{Takes|Requires} time {to learn|before results show}",
        "{Results can vary|Not every approach works for everyone}",
        "{Can get|May become} {expensive|costly} with premium options",
        "{Easy to overdo|Easy to lose momentum with} $n",
        "{Needs|Demands} {regular attention|consistent effort}",
        "{Conflicting advice|Too much information} about $t can be confusing",
    };
    if (g_pick(g, 2))
        g_line(g, "{Thinking about|Considering} $t? {Here is an honest look at both "
                  "sides.|Here is how it stacks up.}\n");
    g_puts(g, "Pros\n");
    LIST(g, pros, g_range(g, 3, 5), "- ", false);
    g_puts(g, "\nCons\n");
    LIST(g, cons, g_range(g, 3, 5), "- ", false);
    if (g_pick(g, 2))
        g_line(g, "\nVerdict: ^{for most $a, the pros outweigh the cons|$t is worth it if you "
                  "are ready to commit to $n}.");
}

static void t_google_ad(gen_t *g)
{
    static const char *const heads[] = {
        "$T",           "{Try|Discover|Explore} $T", "$T {Made Easy|Done Right}",
        "$X {Made Easy|Done Right}", "Better $N",   "{Get Started|Start} Today",
        "{Simple|Smart} $X Solutions", "$X for $A", "Learn More About $X", "{Try|Discover} $X",
    };
    static const char *const descs[] = {
        "{Discover|Explore} $t {for $a|today}. {Simple, reliable and built around you|Clear "
        "guidance at every step}.",
        "{Get|Enjoy} better $n without the hassle. {Start today|Sign up in minutes}.",
        "{Everything you need for|Your shortcut to} $t in one place. {Learn more|Find out how} "
        "today.",
        "{Trusted|Friendly} help with $t and $n. {Book|Get in touch} today.",
        "{Discover|Explore} $x {for $a|today}. Clear guidance at every step.",
    };
    char fields[5][256];
    g->extra = bt_short_topic(g->tp->phrase[0]);
    for (int i = 0; i < 3; i++) {
        g_fit_any(g, heads, ARRAY_LEN(heads), 30, fields, i, fields[i]);
        g_printf(g, "Headline %d: ", i + 1);
        g_puts(g, fields[i]);
        g_puts(g, "\n");
    }
    for (int i = 0; i < 2; i++) {
        g_fit_any(g, descs, ARRAY_LEN(descs), 90, fields + 3, i, fields[3 + i]);
        g_printf(g, "Description %d: ", i + 1);
        g_puts(g, fields[3 + i]);
        g_puts(g, "\n");
    }
}

static void t_facebook_ad(gen_t *g)
{
    static const char *const buttons[] = {"Learn More", "Shop Now", "Sign Up", "Get Offer",
                                          "Book Now"};
    static const char *const descs[] = {"{Simple|Smart|Honest} $t for $a.",
                                        "{Simple|Smart|Honest} $x for $a.", "$X, made simple."};
    char line[256];
    g->extra = bt_short_topic(g->tp->phrase[0]);
    g_puts(g, "Primary text: ");
    SENTS(g, B_MKT, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\nHeadline: ");
    static const char *const heads[] = {
        "$T, {Reimagined|Done Right}",     "$X, {Finally Made Simple|Reimagined|Done Right}",
        "Better $X Starts {Here|Today}",   "{Discover|Meet} the Simpler Side of $X",
        "$X That Actually {Works|Delivers}", "Make $X Your {Advantage|Superpower}",
    };
    g_fit_any(g, heads, ARRAY_LEN(heads), 40, NULL, 0, line);
    g_puts(g, line);
    g_puts(g, "\n\nDescription: ");
    g_fit_any(g, descs, ARRAY_LEN(descs), 60, NULL, 0, line);
    g_puts(g, line);
    g_printf(g, "\n\nCall to action: %s\n", buttons[g_pick(g, ARRAY_LEN(buttons))]);
}

static void t_job_description(gen_t *g)
{
    static const char *const resp[] = {
        "{Plan|Own} and {deliver|carry out} work on $n",
        "{Collaborate|Work closely} with {colleagues|the team} on shared goals",
        "{Keep|Maintain} {clear|accurate} {documentation|records} of $n",
        "{Identify|Spot} opportunities to improve $n",
        "{Communicate|Share} progress with {stakeholders|the team} {regularly|every week}",
        "{Stay up to date|Keep current} with {best practices|new developments} in $t",
    };
    static const char *const req[] = {
        "{Proven|Solid} experience with $n or a related field",
        "{Strong|Clear} written and verbal communication skills",
        "{Good|Strong} organisational skills and attention to detail",
        "Ability to work {independently|on your own} and as part of a team",
        "{Knowledge of|Familiarity with} $n",
        "{A genuine interest in|Enthusiasm for} $t",
    };
    static const char *const offer[] = {
        "{A supportive|A friendly} team that values your ideas",
        "{Flexible|Hybrid} working {hours|arrangements}",
        "{Room to grow|Learning and development opportunities}",
        "Salary: [to be confirmed]",
    };
    static const char *const roles[] = {"specialist", "coordinator", "manager", "lead"};
    char title[PHRASE_MAX + 32];
    const topic_t *saved_tp = g->tp;
    topic_t rest = *g->tp; /* the topic without the role phrase, for $t and $n */
    int role = -1;
    /* A phrase naming a role ("senior backend developer") is the job title. */
    for (int i = 0; i < rest.nphrase && role < 0; i++) {
        const char *ph = rest.phrase[i], *lastw = strrchr(ph, ' ');
        char low[WORD_MAX];
        lastw = lastw ? lastw + 1 : ph;
        bt_lower(lastw, strlen(lastw), low);
        if (bt_in_list(low, role_words, ARRAY_LEN(role_words)))
            role = i;
    }
    if (role >= 0) {
        snprintf(title, sizeof title, "%s", rest.phrase[role]);
        if (rest.nphrase > 1) {
            memmove(rest.phrase[role], rest.phrase[role + 1],
                    sizeof rest.phrase[0] * (size_t)(rest.nphrase - role - 1));
            rest.nphrase--;
        }
        g->tp = &rest;
    } else {
        snprintf(title, sizeof title, "%s %s", rest.phrase[0], roles[g_pick(g, ARRAY_LEN(roles))]);
    }
    g_puts(g, "Job title: ");
    g_emit_title(g, title);
    if (title[0] >= 'A' && title[0] <= 'Z' && title[1] >= 'a' && title[1] <= 'z')
        title[0] = (char)(title[0] + 32); /* mid-sentence: "a senior developer" */
    g->extra = title;
    g_puts(g, "\n\nAbout the role\n");
    g_line(g, "We are looking for a {motivated|talented|detail-oriented} $x to {join our "
              "team|help us grow}. {In this role|Day to day}, you will {focus on|take "
              "ownership of} $t{ and $n|}.");
    g_puts(g, "\nResponsibilities\n");
    LIST(g, resp, g_range(g, 4, 6), "- ", false);
    g_puts(g, "\nRequirements\n");
    LIST(g, req, g_range(g, 4, 6), "- ", false);
    g_puts(g, "\nWhat we offer\n");
    LIST(g, offer, g_range(g, 2, 4), "- ", false);
    g_line(g, "\n{To apply, send|Interested? Send} your CV and a short note about your "
              "experience with $t to [email].");
    g->tp = saved_tp;
}

static void t_review(gen_t *g)
{
    static const char *const titles[] = {"A solid choice", "Worth it",
                                         "Impressive, with one caveat", "Better than expected",
                                         "Good, not perfect"};
    int stars = g_pick(g, 4) == 0 ? 3 : 4 + (int)g_pick(g, 2);
    g_puts(g, titles[g_pick(g, ARRAY_LEN(titles))]);
    g_puts(g, ": ");
    g_emit_title(g, g->tp->phrase[0]);
    g_puts(g, "\nRating: ");
    for (int i = 0; i < 5; i++)
        g_puts(g, i < stars ? "★" : "☆");
    g_printf(g, " (%d/5)\n\n", stars);
    g_put(g, "I {tried|spent a few weeks with} $t{ recently|}, and {overall I am "
             "impressed|it mostly lived up to my expectations}. {What stood out|The highlight} "
             "was $n: it felt {well thought out|genuinely useful}.");
    if (g_pick(g, 2))
        g_put(g, " {It was also easy to get started|Getting started took no time at all}, "
                 "which I appreciated.");
    g_put(g, g_pick(g, 2) ? "\n\n" : " ");
    g_line(g, "{On the downside|One thing could be better}: $n {could be simpler|took a while "
              "to get used to}. {Would I recommend it|Would I try it again}? {Yes|Absolutely}"
              "{, especially for $a|}.");
}

static void t_feature_section(gen_t *g)
{
    static const char *const names[] = {"{Smart|Simple} $S", "Built-in $S", "Effortless $S",
                                        "$S, {simplified|your way}", "Everything for $S"};
    static const char *const lines[] = {
        "{Get|Enjoy} $s {without the usual hassle|in a few clicks}, so you can relax.",
        "{Everything|All you need} for $s is {ready when you are|right where you expect it}.",
        "{Stay on top of|Keep track of} $s with {clear|simple} {overviews|reminders}.",
        "{Designed|Made} to make $s {faster|easier} {from day one|for $a}.",
    };
    g_line(g, "{Why choose $T?|What makes $T different?|What sets $T apart?}");
    g_puts(g, "\n");
    g_line(g, "{Everything you need|All the tools you need} {for $t|to enjoy $t}, {in one "
              "place|designed around you}.");
    g_puts(g, "\n");
    int k = g_range(g, 3, 4);
    int ni[5], li[4];
    g_choose(g, ARRAY_LEN(names), k, NULL, ni);
    g_choose(g, ARRAY_LEN(lines), k, NULL, li);
    for (int i = 0; i < k; i++) {
        g->sect = i == 0 ? g->tp->phrase[0] : g_next_phrase(g);
        g_line(g, names[ni[i]]);
        g_line(g, lines[li[i]]);
        if (i + 1 < k)
            g_puts(g, "\n");
    }
}

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
                size_t l = bt_u8_next((const unsigned char *)s + i, n - i, &cp);
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
static void t_content_rewrite(gen_t *g)
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
static void t_content_summary(gen_t *g)
{
    const char *body;
    size_t n;
    bt_body(g->prompt, g->prompt_len, &body, &n);
    if (n > 16384)
        n = bt_u8_floor(body, 16384);
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
            keep_n = bt_u8_floor(out->data + start, n / 2);
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
static void t_content_grammar(gen_t *g)
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

/* ------------------------------------------------------------------ entry */

typedef void (*writer_fn)(gen_t *g);

static const writer_fn writers[53] = {
    [1] = t_freestyle,        [2] = t_about_us,         [3] = t_advertisement,
    [4] = t_article,          [5] = t_blog_intro,       [6] = t_blog_outline,
    [7] = t_blog_outro,       [8] = t_blog_paragraph,   [9] = t_blog_post,
    [10] = t_blog_section,    [11] = t_talking_points,  [12] = t_blog_title,
    [13] = t_call_to_action,  [14] = t_content_rewrite, [15] = t_content_summary,
    [16] = t_faq,             [17] = t_hashtags,        [18] = t_headline,
    [19] = t_how_it_works,    [20] = t_meta_description, [21] = t_meta_keywords,
    [22] = t_mission,         [23] = t_newsletter,      [24] = t_pas,
    [25] = t_paragraph,       [26] = t_press_release,   [27] = t_social_post,
    [28] = t_caption,         [29] = t_startup_ideas,   [30] = t_startup_names,
    [31] = t_subheadline,     [32] = t_testimonial,     [33] = t_social_quote,
    [34] = t_social_bio,      [35] = t_value_prop,      [36] = t_video_description,
    [37] = t_video_script,    [38] = t_video_tags,      [39] = t_video_title,
    [40] = t_vision,          [41] = t_product_sheet,   [42] = t_welcome_email,
    [43] = t_push,            [44] = t_listicle,        [45] = t_content_grammar,
    [46] = t_blog_tags,       [47] = t_pros_cons,       [48] = t_google_ad,
    [49] = t_facebook_ad,     [50] = t_job_description, [51] = t_review,
    [52] = t_feature_section,
};

void builtin_text(int template_id, const char *prompt, double creativity, uint64_t seed,
                  buf_t *out)
{
    if (template_id < 1 || template_id > 52)
        template_id = 1;
    if (!prompt)
        prompt = "";
    if (!(creativity > 0)) /* also NaN */
        creativity = 0;
    if (creativity > 1)
        creativity = 1;
    size_t len = strlen(prompt);
    if (len > TRANSFORM_MAX)
        len = bt_u8_floor(prompt, TRANSFORM_MAX);

    topic_t tp;
    bt_analyse(prompt, len, &tp);

    uint64_t h = bt_hash(prompt, len, 0xCBF29CE484222325ull ^ (uint64_t)template_id);
    gen_t g = {
        .out = out,
        .tp = &tp,
        .prompt = prompt,
        .prompt_len = len,
        .creativity = creativity,
        .base = h,
        .var = h ^ bt_mix(seed ^ 0x5EEDull),
        .gate = bt_mix(h + seed * 0x9E3779B97F4A7C15ull),
        .autocap = true,
        .cap_pending = true,
        .last = '\n',
    };
    g.stock_off = (int)g_pick(&g, ARRAY_LEN(stock_phrases));
    g.audience = tp.audience[0] ? tp.audience
                                : fallback_audiences[g_pick(&g, ARRAY_LEN(fallback_audiences))];

    size_t start = out->len;
    writers[template_id](&g);

    /* Never empty, never only white space. */
    bool blank = true;
    for (size_t i = start; i < out->len && blank; i++)
        blank = strchr(" \t\r\n", out->data[i]) != NULL;
    if (blank) {
        out->len = start;
        buf_puts(out, "There is no text to work with yet: add a few words to the prompt.\n");
    }
}
