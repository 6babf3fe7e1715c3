/* actions.c — the actions of API.md §17 as the records service sees them: which part
 * of a document's text an action rewrites (its selection, in code points, as bytes),
 * the separator a continuation starts with, and the new text spliced into the
 * unchanged rest. The job runner (jobs.c) and the streams (api/stream.c) use the same
 * ranges, so a stream's deltas are exactly the part the outcome puts in. */
#include "records/records.h"

#include "core/utf8.h"

#include <string.h>

static const char *const action_names[] = {"improve",  "shorten",     "expand",
                                           "continue", "rephrase",    "simplify",
                                           "fix_grammar", "change_tone", "translate"};

bool records_action_valid(const char *name)
{
    for (size_t i = 0; name && i < sizeof(action_names) / sizeof(action_names[0]); i++)
        if (strcmp(name, action_names[i]) == 0)
            return true;
    return false;
}

/* The byte offset of code point cp in text[0..n) (n when past the end). */
static size_t cp_offset(const char *text, size_t n, int64_t cp)
{
    size_t at = 0;
    for (int64_t k = 0; k < cp && at < n; k++) {
        uint32_t c;
        at += utf8_next(text + at, n - at, &c);
    }
    return at < n ? at : n;
}

void records_action_range(const char *text, const char *action, int64_t sel_start,
                          int64_t sel_end, size_t *b0, size_t *b1)
{
    size_t n = text ? strlen(text) : 0;
    bool whole = sel_start < 0 || sel_end < 0;
    *b0 = whole ? 0 : cp_offset(text, n, sel_start);
    *b1 = whole ? n : cp_offset(text, n, sel_end);
    if (*b1 < *b0)
        *b1 = *b0;
    if (action && strcmp(action, "continue") == 0)
        *b0 = *b1; /* continue writes after the selection's end (or the text's) */
}

const char *records_action_sep(const char *text, const char *action, size_t b0)
{
    if (!action || strcmp(action, "continue") != 0 || b0 == 0)
        return "";
    if (text[b0 - 1] != '\n')
        return "\n\n";
    return b0 >= 2 && text[b0 - 2] == '\n' ? "" : "\n";
}

char *records_action_splice(const char *text, size_t b0, size_t b1, const char *part,
                            size_t part_len)
{
    size_t n = strlen(text);
    buf_t b;
    buf_init(&b);
    buf_append(&b, text, b0);
    buf_append(&b, part, part_len);
    buf_append(&b, text + b1, n - b1);
    char *s = xstrdup(buf_cstr(&b));
    buf_free(&b);
    return s;
}

void records_part_cps(const char *text, int64_t b_start, int64_t b_after, int64_t *cp_start,
                      int64_t *cp_end)
{
    int64_t n = text ? (int64_t)strlen(text) : 0;
    if (b_start > n)
        b_start = n;
    if (b_after > n - b_start)
        b_after = n - b_start;
    *cp_start = (int64_t)utf8_chars(text, (size_t)b_start);
    *cp_end = *cp_start + (int64_t)utf8_chars(text + b_start, (size_t)(n - b_start - b_after));
}

bool records_part_bytes(const char *text, int64_t cp_start, int64_t cp_end, int64_t *b_start,
                        int64_t *b_after)
{
    size_t n = text ? strlen(text) : 0;
    if (cp_start < 0 || cp_end < cp_start || cp_end > (int64_t)utf8_chars(text, n))
        return false;
    size_t b0 = cp_offset(text, n, cp_start);
    size_t b1 = b0 + cp_offset(text + b0, n - b0, cp_end - cp_start);
    *b_start = (int64_t)b0;
    *b_after = (int64_t)(n - b1);
    return true;
}
