/* utf8.c — the one UTF-8 decoder (see utf8.h). utf8_lead holds the RFC 3629 table
 * (section 4): which bytes start a sequence, how long it is, and the allowed range of
 * its second byte (which is where overlong forms, surrogates and values above
 * U+10FFFF are refused). */
#include "core/utf8.h"

/* Length of the sequence lead byte c starts, and the allowed range of its second
 * byte; 0 for a byte that cannot start a sequence. */
static int utf8_lead(unsigned char c, unsigned char *lo, unsigned char *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c < 0xC2) /* continuation bytes, and C0/C1 (overlong 2-byte forms) */
        return 0;
    if (c < 0xE0)
        return 2;
    if (c < 0xF0) {
        if (c == 0xE0)
            *lo = 0xA0; /* overlong 3-byte forms */
        else if (c == 0xED)
            *hi = 0x9F; /* surrogates U+D800..U+DFFF */
        return 3;
    }
    if (c < 0xF5) {
        if (c == 0xF0)
            *lo = 0x90; /* overlong 4-byte forms */
        else if (c == 0xF4)
            *hi = 0x8F; /* above U+10FFFF */
        return 4;
    }
    return 0; /* F5..FF */
}

size_t utf8_next(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    unsigned char lo, hi;
    int len = utf8_lead(p[0], &lo, &hi);
    if (len == 0 || (size_t)len > n || p[1] < lo || p[1] > hi) {
        *cp = UTF8_BAD;
        return 1;
    }
    uint32_t v = p[0] & (0x7F >> len);
    for (int k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80) {
            *cp = UTF8_BAD;
            return 1;
        }
        v = (v << 6) | (p[k] & 0x3F);
    }
    *cp = v;
    return (size_t)len;
}

long long utf8_count(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    long long count = 0;
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) { /* fast path for ASCII */
            i++;
            count++;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_next(s + i, n - i, &cp);
        if (cp == UTF8_BAD)
            return -1;
        i += len;
        count++;
    }
    return count;
}

size_t utf8_whole(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    /* the last byte that is not a continuation byte, among the last four */
    size_t i = n;
    while (i > 0 && n - i < 4 && (p[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0 || n - i >= 4)
        return n; /* no lead byte close enough: nothing incomplete to hold back */
    unsigned char lo, hi;
    int len = utf8_lead(p[i - 1], &lo, &hi);
    if (len > 1 && (size_t)len > n - (i - 1))
        return i - 1; /* a lead byte whose sequence has not arrived whole */
    return n;
}

size_t utf8_floor(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

size_t utf8_chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

bool utf8_is_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}
