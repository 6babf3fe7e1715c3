/* utf8.h — the program's one UTF-8 decoder (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF). Everything in inkwell that validates, walks or
 * cuts UTF-8 text uses these: the HTTP decoders, the builtin text generator, word
 * counts, and the text pieces a provider streams. */
#ifndef INK_UTF8_H
#define INK_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The code point *utf8_next reports for a byte that does not start a valid sequence. */
#define UTF8_BAD UINT32_MAX

/* Decodes the sequence at s[0..n) (n >= 1). Returns its length, with the code point
 * in *cp; or 1 with *cp = UTF8_BAD when s[0] does not start a complete valid
 * sequence within n bytes. */
size_t utf8_next(const char *s, size_t n, uint32_t *cp);

/* Validates s[0..n). Returns the number of code points, or -1 when invalid. NUL
 * bytes are valid UTF-8 (callers that refuse them check separately). */
long long utf8_count(const char *s, size_t n);

/* The length of the longest prefix of s[0..n) that does not end inside a sequence:
 * n, less an incomplete sequence at the end (0 to 3 bytes held back). For text that
 * arrives in pieces: pass on s[0..utf8_whole), keep the rest for the next piece. */
size_t utf8_whole(const char *s, size_t n);

/* The largest n' <= n such that s[n'] does not continue a sequence (s must have at
 * least n + 1 readable bytes, e.g. a NUL-terminated string): where to cut s at or
 * before byte n without splitting a character. */
size_t utf8_floor(const char *s, size_t n);

/* Code points in s[0..n), counting lead bytes (s assumed valid). */
size_t utf8_chars(const char *s, size_t n);

/* Unicode White_Space. */
bool utf8_is_space(uint32_t cp);

#endif
