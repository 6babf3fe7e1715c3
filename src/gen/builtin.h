/* builtin.h — the offline generators: text shaped by a template, and PNG pictures
 * drawn from a description. Pure functions: no I/O, no globals, thread-safe. */
#ifndef INK_BUILTIN_H
#define INK_BUILTIN_H

#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

/* Appends to out a text for template_id (1..52) built from prompt (valid UTF-8).
 * creativity in [0,1] acts as a temperature: at 0 the text depends only on
 * (template_id, prompt) — seed is ignored; higher values let seed vary wording and
 * structure more and more. Well under 1 ms for a 16k-character prompt. */
void builtin_text(int template_id, const char *prompt, double creativity, uint64_t seed,
                  buf_t *out);
/* The same with §17's tone ("neutral".."empathetic"; NULL: neutral) and length
 * ("short", "medium", "long"; NULL: medium): short is about half the words of medium,
 * long about twice, where the template has a length (builtin_length_applies); every
 * tone has its own phrasing (builtin_text_style.c). neutral and medium: builtin_text. */
void builtin_text_styled(int template_id, const char *prompt, double creativity, uint64_t seed,
                         const char *tone, const char *length, buf_t *out);
/* False for the templates whose text is a line, a set of tags or the user's own text
 * transformed, where length means nothing. */
bool builtin_length_applies(int template_id);

/* An action of API.md §17 (every one but translate) on part[0..n), a part of a
 * document whose text before it is before[0..before_len); subject: what the document
 * is about (its prompt; NULL = the text itself); tone: change_tone's (NULL = neutral).
 * Appends the part's new text to out (continue: a paragraph to go after it). Same
 * inputs → same text. Returns -1 for an action it does not do. */
int builtin_action(const char *action, const char *part, size_t n, const char *before,
                   size_t before_len, const char *subject, const char *tone, buf_t *out);

/* The end of the piece of text that starts at start (start < n): the builtin
 * provider passes a text to on_text in pieces of a sentence, a line or a few words,
 * cut only after ASCII spaces (never inside a UTF-8 character). */
size_t builtin_piece_end(const char *s, size_t n, size_t start);

typedef enum { STYLE_NONE = 0, STYLE_VIVID = 1, STYLE_NATURAL = 2 } img_style_t;

/* Renders a width x height picture from the description and appends its PNG file
 * to png_out. Same (description, width, height, style) → same bytes. Colours named
 * in the description and scene words set palette and composition; vivid is saturated
 * and contrasted, natural muted and soft. Returns 0, or -1 if encoding failed. */
int builtin_image(const char *description, int width, int height, img_style_t style,
                  buf_t *png_out);

#endif
