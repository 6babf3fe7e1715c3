/* json.h — a small, fast JSON writer for responses (jansson is used for parsing).
 *
 * Writes straight into a buf_t. The caller emits separators through the jw_*
 * helpers, which track whether a comma is needed at each nesting level. Strings
 * are escaped per RFC 8259: quote, backslash and control characters; the input
 * must already be valid UTF-8 (everything stored is validated on the way in). */
#ifndef INK_JSON_H
#define INK_JSON_H

#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

#define JW_MAX_DEPTH 16

typedef struct {
    buf_t *out;
    int depth;
    bool need_comma[JW_MAX_DEPTH];
} jw_t;

void jw_init(jw_t *w, buf_t *out);
void jw_obj_begin(jw_t *w);
void jw_obj_end(jw_t *w);
void jw_arr_begin(jw_t *w);
void jw_arr_end(jw_t *w);
void jw_key(jw_t *w, const char *key); /* key is a literal: not escaped */
void jw_str(jw_t *w, const char *s);   /* NULL writes null */
void jw_strn(jw_t *w, const char *s, size_t n);
void jw_int(jw_t *w, int64_t v);
void jw_num(jw_t *w, double v); /* shortest form that reads back the same; 0.5, 1, 0.25 */
void jw_bool(jw_t *w, bool v);
void jw_null(jw_t *w);
void jw_raw(jw_t *w, const char *json); /* an already-encoded value */
void jw_rawn(jw_t *w, const char *json, size_t n);

/* Appends s as a JSON string literal (with quotes) to out. */
void json_escape(buf_t *out, const char *s, size_t n);

#endif
