/* util.c — see util.h. */
#include "core/util.h"

#include <nettle/sha2.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void oom(void)
{
    fputs("inkwell: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void buf_init(buf_t *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_free(buf_t *b)
{
    free(b->data);
    buf_init(b);
}

void buf_reset(buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_reserve(buf_t *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void buf_append(buf_t *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_puts(buf_t *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_putc(buf_t *b, char c)
{
    if (b->len + 2 > b->cap)
        buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void buf_vprintf(buf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    buf_reserve(b, 64);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
    }
    b->len += (size_t)n;
    va_end(ap2);
}

void buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *buf_steal(buf_t *b)
{
    char *p = b->data ? b->data : xstrdup("");
    buf_init(b);
    return p;
}

const char *buf_cstr(const buf_t *b)
{
    return b->data ? b->data : "";
}

/* Arena: a list of blocks; large requests get a block of their own. */
struct arena_block {
    arena_block_t *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
};

#define ARENA_BLOCK 8192

void arena_init(arena_t *a)
{
    a->head = NULL;
}

void arena_free(arena_t *a)
{
    arena_block_t *b = a->head;
    while (b) {
        arena_block_t *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

/* n bytes, 16-aligned, not cleared. */
void *arena_take(arena_t *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    arena_block_t *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK / 2 ? n : ARENA_BLOCK;
        b = xmalloc(sizeof(*b) + cap);
        b->used = 0;
        b->cap = cap;
        if (n > ARENA_BLOCK / 2 && a->head) {
            /* keep the current block in front: it still has room */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = b->mem + b->used;
    b->used += n;
    return p;
}

void *arena_alloc(arena_t *a, size_t n)
{
    void *p = arena_take(a, n);
    memset(p, 0, n);
    return p;
}

char *arena_strndup(arena_t *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p = arena_take(a, n + 1); /* every byte written below */
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(arena_t *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_printf(arena_t *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, n < 0 ? 1 : (size_t)n + 1);
    if (n > 0)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian), after H. Hinnant's
 * public-domain algorithm: no time zone work, no locale, no printf. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static char *put_digits(char *o, unsigned v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + width;
}

void fmt_timestamp(int64_t us, char out[32])
{
    int64_t secs = us / 1000000, frac = us % 1000000;
    if (frac < 0) {
        frac += 1000000;
        secs -= 1;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) { /* outside what the format can say */
        memcpy(out, "0000-01-01T00:00:00.000000Z", 28);
        return;
    }
    char *o = put_digits(out, (unsigned)y, 4);
    *o++ = '-';
    o = put_digits(o, m, 2);
    *o++ = '-';
    o = put_digits(o, d, 2);
    *o++ = 'T';
    o = put_digits(o, (unsigned)(rem / 3600), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(rem / 60 % 60), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(rem % 60), 2);
    *o++ = '.';
    o = put_digits(o, (unsigned)frac, 6);
    *o++ = 'Z';
    *o = '\0';
}

/* Randomness and the constant-time comparison come from libsodium and SHA-256 from
 * nettle, not OpenSSL: every authenticated request hashes its key, and OpenSSL's first
 * use maps and initialises ~3 MB of libcrypto that an idle server on SQLite otherwise
 * never needs (libcrypto is loaded at its first use: core/lazylib.h; docs/benchmarks.md
 * "Idle memory"). nettle is mapped anyway (the HTTP library's gnutls is built on it) and
 * uses the CPU's SHA instructions: 0.13 µs for a key, where libsodium's portable code
 * takes 0.4. libsodium is started (sodium_init) before any thread, by password_init
 * and the commands that need it; randombytes_buf is the getrandom system call. */
void random_bytes(void *p, size_t n)
{
    randombytes_buf(p, n);
}

void random_hex(char *out, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char tmp[64];
    size_t o = 0;
    while (nbytes) {
        size_t k = nbytes < sizeof(tmp) ? nbytes : sizeof(tmp);
        random_bytes(tmp, k);
        for (size_t i = 0; i < k; i++) {
            out[o++] = hex[tmp[i] >> 4];
            out[o++] = hex[tmp[i] & 15];
        }
        nbytes -= k;
    }
    out[o] = '\0';
}

uint64_t random_u64(void)
{
    uint64_t v;
    random_bytes(&v, sizeof(v));
    return v;
}

void sha256_hex(const void *data, size_t n, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_SIZE];
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, n, data);
    sha256_digest(&ctx, sizeof(md), md);
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}

bool ct_equal(const void *a, const void *b, size_t n)
{
    return sodium_memcmp(a, b, n) == 0;
}
