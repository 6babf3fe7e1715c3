/* builtin_text_analyse.c — the builtin text generator's reading of the prompt: word
 * lists, UTF-8 and case helpers, tokenising, and the analysis into a topic, phrases,
 * key words and an audience (topic_t). Part of builtin_text.c (which see). */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ word lists */

/* All lists are sorted in byte order (LC_ALL=C sort) for bsearch. */
const char *const stop_words[] = {
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

const char *const role_words[] = {
    "accountant", "administrator", "agent", "analyst", "architect", "assistant",
    "associate", "barista", "chef", "cleaner", "coach", "consultant", "coordinator",
    "designer", "developer", "director", "driver", "editor", "engineer", "intern", "lead",
    "manager", "marketer", "nurse", "officer", "photographer", "programmer",
    "representative", "researcher", "scientist", "specialist", "teacher", "technician",
    "tester", "writer",
};

/* Stock phrases that follow the user's own in $n. */
const char *const stock_phrases[] = {
    "the basics",        "everyday habits",      "good planning",    "long-term results",
    "the daily routine", "the first steps",      "small improvements", "the bigger picture",
    "real-world examples", "the right tools",   "clear goals",      "steady progress",
};

const char *const fallback_audiences[] = {"people", "readers", "teams", "customers"};

/* ------------------------------------------------------------------ UTF-8 */

/* Letters and digits of any script; punctuation, symbols, emoji and joiners are not. */
bool bt_is_word_cp(uint32_t c)
{
    if (c < 0x80)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               c == '_';
    if (c == UTF8_BAD || utf8_is_space(c))
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
        i += utf8_next(s + i, n - i, &cp);
        if (cp < 0x3040 || cp > 0x309F)
            return false;
        chars++;
    }
    return chars <= 2;
}

/* Appends s[0..n) replacing invalid sequences by U+FFFD. */
void bt_append_clean(buf_t *out, const char *s, size_t n)
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
        size_t len = utf8_next((const char *)u + i, n - i, &cp);
        if (cp == UTF8_BAD || cp == 0) {
            buf_append(out, s + run, i - run);
            if (cp == UTF8_BAD)
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
bool bt_in_list(const char *lower, const char *const *list, size_t n)
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
void bt_lower(const char *s, size_t n, char *out)
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

bool bt_has_upper(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            return true;
    return false;
}

uint64_t bt_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t bt_splitmix(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ull;
    return bt_mix(*state);
}

uint64_t bt_hash(const char *s, size_t n, uint64_t h)
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


static size_t bt_tokenize(const char *s, size_t n, token_t *tok, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, nt = 0;
    bool brk = true;
    while (i < n && nt < max) {
        uint32_t cp;
        size_t len = utf8_next((const char *)u + i, n - i, &cp);
        if (!bt_is_word_cp(cp)) {
            if (cp != ' ' && cp != '\t' && cp != 0xA0 && cp != 0x3000)
                brk = true;
            i += len;
            continue;
        }
        size_t start = i, j = i + len, skip = 0;
        uint32_t prev = cp;
        while (j < n) {
            size_t l2 = utf8_next((const char *)u + j, n - j, &cp);
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
            if (bt_is_inner_cp(cp) && j + l2 < n && (utf8_next((const char *)u + j + l2, n - j - l2, &after),
                                                     bt_is_word_cp(after))) {
                j += l2;
                continue;
            }
            break;
        }
        size_t wn = j - start;
        if (wn > WORD_MAX - 1)
            wn = utf8_floor(s + start, WORD_MAX - 1);
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

void bt_analyse(const char *prompt, size_t len, topic_t *tp)
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
