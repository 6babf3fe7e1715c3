/* prompt.h — what a chat model is told, composed in one place for every generation,
 * regeneration and action (API.md §5, §17): the system message from the template's
 * instruction (one of the 52, or a template of the user's own: given as a string), the
 * writing options (tone, language, length), the Markdown the text is written in, and
 * for an action what to do; the user message is the prompt, or for an action the text
 * to work on (a selection marked inside its surroundings). Pure: no I/O. */
#ifndef INK_PROMPT_H
#define INK_PROMPT_H

#include "core/util.h"
#include "gen/provider.h"

/* Bytes of the text kept on each side of a selection, for context: a longer document
 * is cut (on a character) with "…" where it was cut. */
#define PROMPT_CONTEXT_MAX 6000

/* Appends the system message to sys and the user message to user. instruction: what
 * the model is told to write (never NULL). Uses req's prompt, tone, language, length,
 * and for an action its action, text and selection. */
void prompt_compose(const gen_text_req_t *req, const char *instruction, buf_t *sys, buf_t *user);

/* A BCP 47 tag in words for the model: "German (de)", "Brazilian Portuguese (pt-BR)",
 * or the tag alone in quotes when unknown. Appended to out. */
void prompt_language(const char *tag, buf_t *out);

#endif
