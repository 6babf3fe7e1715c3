/* templates.h — the 52 document templates (seed §2.1) and the creativity scale.
 * Each template has its name, the instruction a language model gets for it and a
 * one-sentence description for people (GET /templates, the web app's picker). */
#ifndef INK_TEMPLATES_H
#define INK_TEMPLATES_H

#include <stdbool.h>
#include <stddef.h>

#define TEMPLATE_COUNT 52

typedef struct {
    int id;                  /* 1..52 */
    const char *name;        /* "Freestyle", "About us", ... exactly as in the seed */
    const char *instruction; /* system message for a chat model, written for the template */
    const char *description; /* one sentence for people: what the template writes */
} template_t;

/* NULL when id is outside 1..52. */
const template_t *template_get(int id);

/* Creativity values 0, 0.25, 0.5, 0.75, 1 and their labels. */
bool creativity_valid(double c);
const char *creativity_label(double c); /* NULL when not valid */

#endif
