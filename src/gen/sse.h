/* sse.h — an incremental parser for a Server-Sent Events stream (WHATWG HTML,
 * "Server-sent events", section "Interpreting an event stream"), as an AI provider
 * sends it: feed it the bytes as they arrive, in pieces of any size, and it calls
 * back once per complete event with the event's type and its data.
 *
 * What it does: lines end in CRLF, LF or CR (also split across pieces); a leading
 * BOM is skipped; `data:` lines join with "\n"; `event:` names the type ("message"
 * when absent); comments (`:`), `id:`, `retry:` and unknown fields are ignored; a
 * blank line dispatches; an event with no data line is dropped; an event not closed
 * by a blank line when the stream ends is dropped (sse_finish says so). One event's
 * data is bounded (SSE_MAX_EVENT): a longer one is an error. */
#ifndef INK_SSE_H
#define INK_SSE_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

#define SSE_MAX_EVENT ((size_t)1 << 20)

/* Called per event; data is NUL-terminated (data[len] == '\0'). Return 0 to go on,
 * anything else to stop: sse_feed then returns that value at once. */
typedef int (*sse_event_fn)(void *arg, const char *event, const char *data, size_t len);

typedef struct {
    sse_event_fn on_event;
    void *arg;
    buf_t line;        /* the current line, without its end */
    buf_t data;        /* the data lines of the current event, joined */
    char event[64];    /* the current event's type ("" = message) */
    bool has_data;     /* a data line was seen in the current event */
    bool after_cr;     /* the last byte was CR: an LF right after it ends nothing */
    bool started;      /* past the first bytes (where a BOM may be) */
    bool pending;      /* something of an event was read but not dispatched */
    bool too_large;    /* an event's data passed SSE_MAX_EVENT */
} sse_t;

void sse_init(sse_t *p, sse_event_fn on_event, void *arg);
void sse_free(sse_t *p);
/* Forgets everything read so far (for a new response). */
void sse_reset(sse_t *p);
/* Parses the next n bytes. Returns 0; the callback's non-zero value when it stopped;
 * or -1 when an event grew past SSE_MAX_EVENT (too_large set). */
int sse_feed(sse_t *p, const char *s, size_t n);
/* At the end of the stream: true when it ended cleanly (no unfinished event). */
bool sse_finish(const sse_t *p);

#endif
