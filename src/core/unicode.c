/* unicode.c — case folding and the root collation order with ICU (unicode.h).
 *
 * ASCII characters take a short path (folding is A-Z to a-z there, as ICU's would be);
 * the others go through UTF-16, ICU's own form. Each thread opens its own root collator on
 * first use (a UCollator is not to be shared by threads) and closes it at its exit. */
#include "core/unicode.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/ucol.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf8.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/uversion.h>

bool uni_fold_is_same(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x80 || (ch >= 'A' && ch <= 'Z'))
            return false;
    }
    return true;
}

/* s[0..n) as UTF-16 in a malloc'd buffer (bad sequences as U+FFFD); NULL on failure. */
static UChar *to_utf16(const char *s, size_t n, int32_t *len)
{
    if (n > INT32_MAX / 2)
        return NULL;
    UErrorCode e = U_ZERO_ERROR;
    u_strFromUTF8WithSub(NULL, 0, len, s, (int32_t)n, 0xFFFD, NULL, &e);
    if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e))
        return NULL;
    UChar *u = malloc(((size_t)*len + 1) * sizeof(UChar));
    if (!u)
        return NULL;
    e = U_ZERO_ERROR;
    u_strFromUTF8WithSub(u, *len + 1, len, s, (int32_t)n, 0xFFFD, NULL, &e);
    if (U_FAILURE(e)) {
        free(u);
        return NULL;
    }
    return u;
}

/* ICU's folding of s[0..n) (UTF-8 -> UTF-16 -> folded -> UTF-8), malloc'd. */
static char *fold_icu(const char *s, size_t n, size_t *out_len)
{
    int32_t ulen;
    UChar *u = to_utf16(s, n, &ulen), *f = NULL;
    char *o = NULL;
    if (!u)
        return NULL;
    /* a full folding grows a text at most threefold (U+0390 -> three code points) */
    int32_t cap = ulen * 3 + 1, flen, blen;
    UErrorCode e = U_ZERO_ERROR;
    if (!(f = malloc((size_t)cap * sizeof(UChar))))
        goto out;
    flen = u_strFoldCase(f, cap, u, ulen, U_FOLD_CASE_DEFAULT, &e);
    if (U_FAILURE(e))
        goto out;
    u_strToUTF8(NULL, 0, &blen, f, flen, &e);
    if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e))
        goto out;
    e = U_ZERO_ERROR;
    if (!(o = malloc((size_t)blen + 1)))
        goto out;
    u_strToUTF8(o, blen + 1, &blen, f, flen, &e);
    if (U_FAILURE(e)) {
        free(o);
        o = NULL;
        goto out;
    }
    *out_len = (size_t)blen;
out:
    free(u);
    free(f);
    return o;
}

/* The default case folding maps each code point alone (no context), so a text is
 * folded piece by piece: ASCII bytes here (A-Z to a-z, as ICU would), each run of
 * other characters by ICU. A UTF-8 sequence has no ASCII byte, so runs end between
 * characters. */
char *uni_fold(const char *s, size_t n, size_t *out_len)
{
    size_t cap = n + 1, len = 0;
    char *o = malloc(cap);
    if (!o)
        return NULL;
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x80) {
            o[len++] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : (char)ch;
            i++;
            continue;
        }
        size_t j = i, fl = 0;
        while (j < n && (unsigned char)s[j] >= 0x80)
            j++;
        char *f = fold_icu(s + i, j - i, &fl);
        if (f && len + fl + (n - j) + 1 > cap) {
            size_t ncap = (len + fl + (n - j) + 1) * 2;
            char *no = realloc(o, ncap);
            if (no) {
                o = no;
                cap = ncap;
            } else {
                free(f);
                f = NULL;
            }
        }
        if (!f) {
            free(o);
            return NULL;
        }
        memcpy(o + len, f, fl);
        len += fl;
        free(f);
        i = j;
    }
    o[len] = '\0';
    if (out_len)
        *out_len = len;
    return o;
}

/* Texts up to this many bytes are folded for the search on the stack. */
#define CONTAINS_STACK 4096

#define HIGH_BITS 0x8080808080808080ull

/* Eight ASCII bytes with a-z for A-Z (each byte below 0x80: no carry crosses bytes). */
static uint64_t ascii_lower8(uint64_t w)
{
    uint64_t from_a = w + 0x3F3F3F3F3F3F3F3Full;  /* high bit: the byte is >= 'A' */
    uint64_t past_z = w + 0x2525252525252525ull;  /* high bit: the byte is > 'Z' */
    return w | ((from_a & ~past_z & HIGH_BITS) >> 2); /* + 0x20 where A-Z */
}

bool uni_fold_contains(const char *hay, size_t n, const char *needle_fold)
{
    size_t m = strlen(needle_fold);
    /* a text whose characters other than A-Z do not change when folded (ASCII, and
     * e.g. dashes, quotes, CJK) is its own folding but for A-Z: its copy with a-z for
     * A-Z (made in the same pass; on the heap past CONTAINS_STACK) is searched with
     * memmem (a search of each place in turn took 18 % of a result search's time) */
    char stack[CONTAINS_STACK];
    char *low = n <= sizeof(stack) ? stack : malloc(n);
    bool upper = false;
    for (size_t i = 0; i < n;) {
        uint64_t w;
        if (low && n - i >= 8 && (memcpy(&w, hay + i, 8), !(w & HIGH_BITS))) {
            /* eight ASCII bytes at once (the byte by byte loop was most of the check) */
            uint64_t l = ascii_lower8(w);
            upper |= l != w;
            memcpy(low + i, &l, 8);
            i += 8;
            continue;
        }
        unsigned char ch = (unsigned char)hay[i];
        if (ch < 0x80) {
            bool up = (unsigned)(ch - 'A') < 26u;
            upper |= up;
            if (low)
                low[i] = (char)(up ? ch + ('a' - 'A') : ch);
            i++;
            continue;
        }
        size_t at = i;
        UChar32 cp;
        U8_NEXT((const uint8_t *)hay, i, (int32_t)n, cp);
        if (cp < 0 || u_hasBinaryProperty(cp, UCHAR_CHANGES_WHEN_CASEFOLDED)) {
            if (low != stack)
                free(low);
            size_t flen = 0;
            char *f = uni_fold(hay, n, &flen);
            bool found = f && memmem(f, flen, needle_fold, m) != NULL;
            free(f);
            return found;
        }
        if (low)
            memcpy(low + at, hay + at, i - at);
    }
    if (!upper || low) {
        bool found = memmem(upper ? low : hay, n, needle_fold, m) != NULL;
        if (low != stack)
            free(low);
        return found;
    }
    /* no memory for the copy: compared folding A-Z on the fly */
    for (size_t i = 0; i + m <= n; i++) {
        size_t j = 0;
        while (j < m) {
            unsigned char ch = (unsigned char)hay[i + j];
            if ((ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch) != (unsigned char)needle_fold[j])
                break;
            j++;
        }
        if (j == m)
            return true;
    }
    return false;
}

/* ---- the root collator, one per thread ----------------------------------------------- */

static pthread_key_t coll_key;
static pthread_once_t coll_once = PTHREAD_ONCE_INIT;

static void coll_close(void *p)
{
    ucol_close(p);
}

static void coll_key_make(void)
{
    pthread_key_create(&coll_key, coll_close);
}

static UCollator *collator(void)
{
    pthread_once(&coll_once, coll_key_make);
    UCollator *c = pthread_getspecific(coll_key);
    if (!c) {
        UErrorCode e = U_ZERO_ERROR;
        c = ucol_open("", &e); /* the root locale: CLDR root order, default strength */
        if (U_FAILURE(e)) {
            ucol_close(c);
            return NULL;
        }
        pthread_setspecific(coll_key, c);
    }
    return c;
}

uint8_t *uni_sort_key(const char *s, size_t n, size_t *out_len)
{
    UCollator *c = collator();
    int32_t ulen;
    UChar *u = c ? to_utf16(s, n, &ulen) : NULL;
    if (!u)
        return NULL;
    uint8_t small[512], *k = small;
    int32_t klen = ucol_getSortKey(c, u, ulen, small, (int32_t)sizeof(small));
    uint8_t *out = NULL;
    if (klen > (int32_t)sizeof(small)) {
        if (!(k = malloc((size_t)klen)))
            goto done;
        klen = ucol_getSortKey(c, u, ulen, k, klen);
    }
    if (klen <= 0 || !(out = malloc((size_t)klen + n + 1)))
        goto done;
    memcpy(out, k, (size_t)klen); /* ends with its 0 */
    memcpy(out + klen, s, n);
    *out_len = (size_t)klen + n;
done:
    if (k != small)
        free(k);
    free(u);
    return out;
}

int uni_name_cmp(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    uint8_t *ka = uni_sort_key(a, strlen(a), &la), *kb = uni_sort_key(b, strlen(b), &lb);
    int c;
    if (!ka || !kb) {
        c = strcmp(a, b);
    } else {
        c = memcmp(ka, kb, la < lb ? la : lb);
        if (c == 0)
            c = (la > lb) - (la < lb);
    }
    free(ka);
    free(kb);
    return c < 0 ? -1 : c > 0;
}

const char *uni_icu_version(void)
{
    static char v[U_MAX_VERSION_STRING_LENGTH];
    UVersionInfo info;
    u_getVersion(info);
    u_versionToString(info, v);
    return v;
}

/* ---- words, as a reader counts them (ICU's word boundaries) --------------------------- */

static pthread_key_t brk_key;
static pthread_once_t brk_once = PTHREAD_ONCE_INIT;

static void brk_close(void *p)
{
    ubrk_close(p);
}

static void brk_key_make(void)
{
    pthread_key_create(&brk_key, brk_close);
}

/* The thread's word break iterator (root locale: the dictionaries of Chinese, Japanese,
 * Thai, Lao, Khmer and Burmese come with it), opened on first use. */
static UBreakIterator *word_breaker(void)
{
    pthread_once(&brk_once, brk_key_make);
    UBreakIterator *b = pthread_getspecific(brk_key);
    if (!b) {
        UErrorCode e = U_ZERO_ERROR;
        b = ubrk_open(UBRK_WORD, "", NULL, 0, &e);
        if (U_FAILURE(e)) {
            ubrk_close(b);
            return NULL;
        }
        pthread_setspecific(brk_key, b);
    }
    return b;
}

long long uni_count_words(const char *s, size_t n)
{
    if (!s || n == 0)
        return 0;
    if (n > INT32_MAX / 2)
        n = INT32_MAX / 2; /* no text of the API comes near */
    UBreakIterator *b = word_breaker();
    if (!b)
        return 0;
    UErrorCode e = U_ZERO_ERROR;
    UText *ut = utext_openUTF8(NULL, s, (int64_t)n, &e);
    if (U_FAILURE(e)) {
        utext_close(ut);
        return 0;
    }
    ubrk_setUText(b, ut, &e);
    long long words = 0;
    if (U_SUCCESS(e)) {
        ubrk_first(b);
        while (ubrk_next(b) != UBRK_DONE)
            if (ubrk_getRuleStatus(b) >= UBRK_WORD_NONE_LIMIT)
                words++;
    }
    /* the iterator keeps no pointer to the text once given another; an empty one */
    UErrorCode e2 = U_ZERO_ERROR;
    ubrk_setText(b, NULL, 0, &e2);
    utext_close(ut);
    return words;
}

/* ---- NFC (API.md §23: tags) ------------------------------------------------------------- */

char *uni_nfc(const char *s, size_t n, size_t *out_len)
{
    UErrorCode e = U_ZERO_ERROR;
    const UNormalizer2 *nfc = unorm2_getNFCInstance(&e);
    if (U_FAILURE(e))
        return NULL;
    int32_t ulen, nlen, blen;
    UChar *u = to_utf16(s, n, &ulen), *m = NULL;
    char *o = NULL;
    if (!u)
        return NULL;
    /* NFC of a text is at most three times its length in UTF-16 units */
    int32_t cap = ulen * 3 + 1;
    if (!(m = malloc((size_t)cap * sizeof(UChar))))
        goto out;
    nlen = unorm2_normalize(nfc, u, ulen, m, cap, &e);
    if (U_FAILURE(e))
        goto out;
    u_strToUTF8(NULL, 0, &blen, m, nlen, &e);
    if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e))
        goto out;
    e = U_ZERO_ERROR;
    if (!(o = malloc((size_t)blen + 1)))
        goto out;
    u_strToUTF8(o, blen + 1, &blen, m, nlen, &e);
    if (U_FAILURE(e)) {
        free(o);
        o = NULL;
        goto out;
    }
    if (out_len)
        *out_len = (size_t)blen;
out:
    free(u);
    free(m);
    return o;
}
