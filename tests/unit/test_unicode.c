/* test_unicode.c — unit tests of core/unicode.c: the default case folding of searches
 * and the CLDR root order of names (API.md §15). */
#include "core/unicode.h"
#include "test.h"

#include <pthread.h>
#include <unicode/ubrk.h>
#include <unicode/ustring.h>
#include <stdlib.h>
#include <string.h>

static char *fold(const char *s)
{
    size_t n = 0;
    char *f = uni_fold(s, strlen(s), &n);
    CHECK(f != NULL && strlen(f) == n);
    return f;
}

/* Whether a and b fold to the same text. */
static bool same_fold(const char *a, const char *b)
{
    char *fa = fold(a), *fb = fold(b);
    bool same = fa && fb && strcmp(fa, fb) == 0;
    free(fa);
    free(fb);
    return same;
}

/* Whether needle's fold is a substring of hay's: the contract's search. */
static bool finds(const char *hay, const char *needle)
{
    char *fh = fold(hay), *fn = fold(needle);
    bool found = fh && fn && strstr(fh, fn) != NULL;
    free(fh);
    free(fn);
    return found;
}

static void test_fold(void)
{
    static const char *const pairs[][2] = {
        {"Кот", "кот"}, {"КОТ", "кот"}, {"Ω", "ω"}, {"É", "é"}, {"ß", "SS"}, {"ẞ", "ss"},
        {"ΣΊΣΥΦΟΣ", "σίσυφοσ"}, {"ς", "σ"}, {"\xe2\x84\xaa" /* KELVIN */, "k"},
        {"ﬁ", "FI"}, {"ǅ", "ǆ"}, {"Ǆ", "ǆ"}, {"ABC xyz", "abc XYZ"}, {"İ", "i̇"},
        {"Ǉubljana", "ǉUBLJANA"}, {"Ärger", "äRGER"}, {"日本語", "日本語"}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        CHECK_MSG(same_fold(pairs[i][0], pairs[i][1]), "%s ~ %s", pairs[i][0], pairs[i][1]);
    /* accents stay significant, both ways; so do other letters */
    CHECK(!same_fold("cafe", "café"));
    CHECK(!finds("café au lait", "cafe"));
    CHECK(!finds("a cafe", "café"));
    CHECK(finds("Straße", "STRASSE") && finds("STRASSE", "straße"));
    CHECK(finds("Мой КОТ спит", "кот") && finds("мой кот", "КОТ"));
    CHECK(finds("Ωmega", "ωM") && finds("ωmega", "ΩMEGA"));
    CHECK(finds("100% _sure_", "% _S"));
    CHECK(!finds("i", "ı") && !finds("e", "é"));
    /* the ASCII path and ICU's agree on every ASCII byte */
    char all[128], *f;
    for (int c = 1; c < 128; c++)
        all[c - 1] = (char)c;
    all[127] = '\0';
    f = fold(all);
    for (int c = 1; f && c < 128; c++)
        CHECK_INT(f[c - 1], c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    free(f);
    char mixed[140];
    snprintf(mixed, sizeof(mixed), "é%s", all);
    f = fold(mixed);
    CHECK(f && strncmp(f, "é", 2) == 0 && strlen(f) == 2 + 127);
    for (int c = 1; f && c < 128; c++)
        CHECK_INT(f[c + 1], c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    free(f);
    CHECK(uni_fold_is_same("abc 12%_", 8) && !uni_fold_is_same("aBc", 3) &&
          !uni_fold_is_same("é", 2));
    f = fold("");
    CHECK(f && f[0] == '\0');
    free(f);
    /* a bad sequence is replaced, not a crash */
    f = uni_fold("a\xff" "B", 3, NULL);
    CHECK(f && strcmp(f, "a\xef\xbf\xbd" "b") == 0);
    free(f);
}

static void test_order(void)
{
    /* API.md §15's example, and ties: names the collator holds equal go by bytes */
    static const char *const order[] = {"apple pie", "Ärger", "Banana", "éclair", "zebra",
                                        "Zürich", "Ωmega", "Кот"};
    size_t n = sizeof(order) / sizeof(order[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = (i > j) - (i < j);
            CHECK_MSG(uni_name_cmp(order[i], order[j]) == want, "%s vs %s: want %d", order[i],
                      order[j], want);
        }
    CHECK(uni_name_cmp("a", "A") < 0 && uni_name_cmp("A", "b") < 0);
    CHECK(uni_name_cmp("a", "a") == 0 && uni_name_cmp("", "a") < 0);
    CHECK(uni_name_cmp("ab", "a b") > 0 || uni_name_cmp("ab", "a b") < 0);
    /* canonically equivalent spellings: equal for the collator, ordered by bytes */
    const char *nfc = "\xc3\xa9", *nfd = "e\xcc\x81";
    CHECK(uni_name_cmp(nfc, nfd) == (strcmp(nfc, nfd) > 0 ? 1 : -1));
    /* a key is the sort key, its 0, then the name */
    size_t len = 0;
    uint8_t *k = uni_sort_key("Zürich", strlen("Zürich"), &len);
    CHECK(k && len > strlen("Zürich") + 1);
    CHECK(k && memcmp(k + len - strlen("Zürich"), "Zürich", strlen("Zürich")) == 0 &&
          k[len - strlen("Zürich") - 1] == 0);
    free(k);
    /* a long name (a key past the stack buffer) */
    char big[3000];
    for (size_t i = 0; i + 2 < sizeof(big); i += 2)
        memcpy(big + i, "\xd0\x96", 2); /* Ж */
    big[sizeof(big) - 2] = '\0';
    k = uni_sort_key(big, strlen(big), &len);
    CHECK(k && len > 512);
    free(k);
    CHECK(strlen(uni_icu_version()) >= 2);
}

/* Each thread has its own collator: keys made at once in several threads agree. */
static void *thread_keys(void *arg)
{
    int *bad = arg;
    for (int i = 0; i < 2000; i++)
        if (uni_name_cmp("Zürich", "zebra") <= 0 || uni_name_cmp("Кот", "Ωmega") <= 0)
            (*bad)++;
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[4];
    int bad[4] = {0};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_keys, &bad[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(bad[i], 0);
    }
}

/* uni_fold_contains agrees with folding both and strstr, on random texts of ASCII
 * (with and without capitals) and other letters. */
static void test_contains(void)
{
    static const char *const pieces[] = {"a", "A", "b", "B", "ss", "SS", "ß", "é", "É", "k",
                                         "\xe2\x84\xaa", "Кот", "кот", " ", "%", "日本", "—", "…"};
    unsigned seed = 99;
    int bad = 0;
    for (int round = 0; round < 3000; round++) {
        char hay[160] = "", needle[40] = "";
        for (int i = rand_r(&seed) % 8; i > 0; i--)
            strcat(hay, pieces[rand_r(&seed) % 18]);
        for (int i = 1 + rand_r(&seed) % 3; i > 0; i--)
            strcat(needle, pieces[rand_r(&seed) % 18]);
        if (round % 3 == 0) { /* ASCII only */
            char *o = hay;
            for (char *p = hay; *p; p++)
                if ((unsigned char)*p < 0x80)
                    *o++ = *p;
            *o = '\0';
        }
        char *fn = fold(needle);
        bool want = finds(hay, needle);
        if (uni_fold_contains(hay, strlen(hay), fn) != want)
            bad++;
        free(fn);
    }
    CHECK_INT(bad, 0);
    CHECK(uni_fold_contains("Hello WORLD", 11, "o w") && !uni_fold_contains("Hello", 5, "é"));
    CHECK(uni_fold_contains("STRASSE", 7, "ss") && uni_fold_contains("Straße", 7, "ss"));
    /* every ASCII byte at every place of two words of eight (an ASCII text is folded
     * eight bytes at once): A-Z found as a-z, no other byte as the one 0x20 above it */
    int wrong = 0;
    for (int c = 1; c < 0x80; c++)
        for (int at = 0; at < 19; at++) {
            char hay[20];
            memset(hay, '.', sizeof(hay));
            hay[at] = (char)c;
            bool upper = c >= 'A' && c <= 'Z';
            char low[2] = {(char)(upper ? c + 0x20 : c), 0}, up[2] = {(char)(c + 0x20), 0};
            wrong += !uni_fold_contains(hay, sizeof(hay), low);
            if (!upper && c + 0x20 < 0x80 && c + 0x20 != '.')
                wrong += uni_fold_contains(hay, sizeof(hay), up);
        }
    CHECK_INT(wrong, 0);
    CHECK(uni_fold_contains("The Kettle on THE HOB, é", 25, "the hob, é"));
    CHECK(!uni_fold_contains("The Kettle on THE HOB, e", 24, "the hob, é"));
}

/* ---- words (uni_count_words) ------------------------------------------------------- */

/* ICU's own answer, taken another way: the text as UTF-16 (u_strFromUTF8), a fresh word
 * break iterator on it, its segments whose rule status is not UBRK_WORD_NONE. */
static long long icu_words(const char *s)
{
    UErrorCode e = U_ZERO_ERROR;
    int32_t n = 0;
    u_strFromUTF8WithSub(NULL, 0, &n, s, -1, 0xFFFD, NULL, &e);
    UChar *u = calloc((size_t)n + 1, sizeof(UChar));
    e = U_ZERO_ERROR;
    u_strFromUTF8WithSub(u, n + 1, &n, s, -1, 0xFFFD, NULL, &e);
    UBreakIterator *b = ubrk_open(UBRK_WORD, "", u, n, &e);
    long long words = 0;
    if (U_SUCCESS(e))
        for (int32_t p = ubrk_first(b); (p = ubrk_next(b)) != UBRK_DONE;)
            if (ubrk_getRuleStatus(b) >= UBRK_WORD_NONE_LIMIT)
                words++;
    ubrk_close(b);
    free(u);
    return words;
}

static void test_words(void)
{
    /* want: the count a reader makes, the same as ICU's and as a browser's
     * Intl.Segmenter (granularity "word", isWordLike: checked with Node's ICU 78 too) */
    static const struct {
        const char *s;
        long long want;
    } cases[] = {
        {"", 0},
        {"   ", 0},
        {"\t\n\r\v\f", 0},
        {"one", 1},
        {"two words", 2},
        {"  leading and trailing  ", 3},
        {"tabs\tand\nnewlines\r\nhere", 4},
        {"héllo wörld", 2},
        {"a\xC2\xA0" "b", 2},     /* U+00A0 no-break space */
        {"a\xE3\x80\x80" "b", 2}, /* U+3000 ideographic space */
        {"... --- !!!", 0},       /* punctuation is no word */
        {"🎉", 0},                /* nor an emoji */
        /* Japanese: by its words, not by spaces (it has none) */
        {"今日は良い天気ですね。公園を散歩しましょう。", 11},
        {"私は日本語を勉強しています。毎日少しずつ読みます。", 13},
        /* Chinese */
        {"我们今天去公园散步。天气很好，阳光明媚。", 9},
        {"中文的词语没有空格分开。", 6},
        /* Thai */
        {"ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ", 8},
        {"สวัสดีครับ วันนี้อากาศดีมาก", 7},
        /* Korean (spaces between words) */
        {"오늘은 날씨가 좋습니다. 공원에 갑시다.", 5},
        {"한국어는 띄어쓰기를 합니다", 3},
        /* German */
        {"Die Donaudampfschifffahrtsgesellschaft fährt heute nicht.", 5},
        {"Straßenbahn, Übergrößen und Öffnungszeiten.", 4},
        /* English */
        {"The quick brown fox jumps over the lazy dog.", 9},
        {"don't stop-believing, it's 3.14 and 1,000 e.g. U.S.A. 🎉 party time", 11},
        {"a\xFF" "b c", 3}, /* an invalid byte is read as U+FFFD, between two words */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long long got = uni_count_words(cases[i].s, strlen(cases[i].s));
        CHECK_MSG(got == cases[i].want, "words of \"%s\": %lld, want %lld", cases[i].s, got,
                  cases[i].want);
        CHECK_MSG(got == icu_words(cases[i].s), "words of \"%s\": %lld, ICU %lld", cases[i].s,
                  got, icu_words(cases[i].s));
    }
    CHECK_INT(uni_count_words(NULL, 0), 0);
    CHECK_INT(uni_count_words("abc def", 3), 1); /* only the n bytes given */
    /* random texts of a mixed alphabet against ICU's answer taken the other way */
    static const char *const pieces[] = {"a", "Z", "7", " ", ".", ",", "'", "-", "\n", "é",
                                         "ß", "日", "本", "語", "は", "カ", "ナ", "中",
                                         "文", "ไ", "ท", "ย", "한", "국", "🎉", "\xC2\xA0"};
    unsigned seed = 12345;
    char buf[512];
    for (int round = 0; round < 2000; round++) {
        size_t len = 0;
        int k = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 40;
        for (int j = 0; j < k; j++) {
            const char *pc = pieces[((seed = seed * 1103515245u + 12345u) >> 16) %
                                    (sizeof(pieces) / sizeof(pieces[0]))];
            size_t pl = strlen(pc);
            memcpy(buf + len, pc, pl);
            len += pl;
        }
        buf[len] = '\0';
        long long got = uni_count_words(buf, len), want = icu_words(buf);
        CHECK_MSG(got == want, "words of \"%s\": %lld, ICU %lld", buf, got, want);
    }
}

int main(void)
{
    test_fold();
    test_contains();
    test_order();
    test_threads();
    test_words();
    TEST_DONE();
}
