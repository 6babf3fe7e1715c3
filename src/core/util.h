/* util.h — memory, growable buffers and per-request arenas.
 *
 * Allocation failure aborts the process (as Redis and h2o do), so error codes are
 * kept for real failures. buf_t is a growable byte string that is always
 * NUL-terminated. arena_t hands out memory that is freed all at once. */
#ifndef INK_UTIL_H
#define INK_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

typedef struct {
    char *data; /* NUL-terminated; NULL until something is appended */
    size_t len;
    size_t cap;
} buf_t;

void buf_init(buf_t *b);
void buf_free(buf_t *b);
void buf_reset(buf_t *b);                 /* len = 0, memory kept */
void buf_reserve(buf_t *b, size_t extra); /* room for extra more bytes + NUL */
void buf_append(buf_t *b, const void *p, size_t n);
void buf_puts(buf_t *b, const char *s);
void buf_putc(buf_t *b, char c);
void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(buf_t *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
char *buf_steal(buf_t *b); /* returns the malloc'd string (never NULL); b is emptied */
const char *buf_cstr(const buf_t *b); /* "" when empty */

typedef struct arena_block arena_block_t;
typedef struct {
    arena_block_t *head;
} arena_t;

void arena_init(arena_t *a);
void arena_free(arena_t *a); /* frees everything; the arena can be reused */
void *arena_alloc(arena_t *a, size_t n); /* 16-byte aligned, zeroed */
/* The same, not zeroed: for an array its caller fills item by item (a list page's
 * records, each cleared as it is read, and no more than were read are looked at). */
void *arena_take(arena_t *a, size_t n);
char *arena_strdup(arena_t *a, const char *s);  /* NULL stays NULL */
char *arena_strndup(arena_t *a, const char *s, size_t n);
char *arena_printf(arena_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Time. */
int64_t now_us(void);       /* wall clock, microseconds since the epoch */
double mono_s(void);        /* monotonic seconds */
void sleep_ms(int ms);
/* Laravel style UTC timestamp: 2026-11-21T10:00:00.000000Z (28 bytes + NUL). */
void fmt_timestamp(int64_t us, char out[32]);

/* Cryptographic randomness (OpenSSL); aborts if the system has none. */
void random_bytes(void *p, size_t n);
void random_hex(char *out, size_t nbytes); /* out gets 2*nbytes hex digits + NUL */
uint64_t random_u64(void);

/* SHA-256 of data as 64 lowercase hex digits + NUL. */
void sha256_hex(const void *data, size_t n, char out[65]);
/* Constant-time comparison of two equal-length byte strings. */
bool ct_equal(const void *a, const void *b, size_t n);

#endif
