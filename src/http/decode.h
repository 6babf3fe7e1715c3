/* decode.h — strict decoders for what clients send: percent-encoding, UTF-8 (through
 * core/utf8.h), application/x-www-form-urlencoded bodies and query strings, record ids.
 *
 * Nothing here trusts its input: every function takes explicit lengths, never reads
 * past them, and never crashes or truncates silently. Output is allocated from the
 * caller's arena. */
#ifndef INK_DECODE_H
#define INK_DECODE_H

#include "core/utf8.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Percent-decodes s[0..n). plus_as_space: '+' becomes ' ' (forms and queries).
 * Returns 0 and sets *out (NUL-terminated, arena) and *out_len; -1 on a malformed
 * escape ('%' not followed by two hex digits). Does not check UTF-8. */
int pct_decode(arena_t *a, const char *s, size_t n, bool plus_as_space, char **out,
               size_t *out_len);

typedef enum {
    KV_OK = 0,
    KV_BAD_ESCAPE = 1, /* malformed percent escape in the value */
    KV_BAD_UTF8 = 2,   /* value decodes to invalid UTF-8 */
    KV_HAS_NUL = 3,    /* value contains a NUL byte */
} kv_status_t;

typedef struct {
    const char *key;   /* decoded, valid UTF-8, NUL-free */
    const char *val;   /* decoded; NULL when status != KV_OK */
    size_t val_len;
    kv_status_t status;
} kv_t;

typedef struct {
    kv_t *items;
    size_t n;
} kvlist_t;

/* Parses "a=1&b=x%20y&c" (form body or query string, without the '?').
 * Empty pieces ("&&") are skipped; a piece without '=' has the value "".
 * Pairs whose key is malformed (bad escape, bad UTF-8, NUL) are dropped: unknown
 * fields are ignored anyway. A bad value is kept with its status so that the
 * handler answers 422 only if it uses that field. Never fails. */
void form_parse(arena_t *a, const char *s, size_t n, kvlist_t *out);

/* The LAST pair with this key (later values override earlier ones, as in PHP),
 * or NULL. */
const kv_t *kv_get(const kvlist_t *l, const char *key);

/* A record id: 1 to 19 ASCII digits, no sign, no leading zero, value 1..INT64_MAX.
 * Returns true and sets *id. */
bool parse_id(const char *s, size_t n, int64_t *id);

/* Booleans for fields: 1 0 true false, case-insensitive. -1 when not one of them. */
int parse_bool(const char *s);

/* A decimal number for fields such as creativity: optional '-', digits, optional
 * '.digits', no exponent, no spaces, at most 32 characters. Returns true on success. */
bool parse_decimal(const char *s, double *out);

/* A non-negative integer for query values (page, per_page, template_id): digits
 * only, at most INT64_MAX (a larger value is refused, never wrapped). Returns true on
 * success. */
bool parse_uint(const char *s, int64_t *out);

#endif
