/* chat_stream.h — the text of one Chat Completions answer, streamed or not, as the
 * OpenAI-compatible provider (openai.c) hands it on: what the model writes minus its
 * reasoning, in pieces as it arrives, with the finish reason and the token usage.
 *
 * A streamed answer is fed as raw bytes (its Server-Sent Events, parsed by sse.h);
 * a plain JSON answer (a server that ignores "stream": true) is given whole to
 * chat_stream_body. Both go through the same content path:
 *  - reasoning never lands in the text: a `<think>…</think>` block at the start of the
 *    content (tags may be split anywhere across chunks), a closing `</think>` with no
 *    opening tag (everything before it was reasoning), and the `reasoning_content` /
 *    `reasoning` delta fields (ignored);
 *  - each piece is passed to emit as soon as it is known to be text, never splitting a
 *    UTF-8 character; the pieces joined are exactly *text;
 *  - finish_reason "length" sets truncated; a usage object sets the token counts;
 *  - `data: [DONE]` ends the stream; a chunk with an "error" member fails it.
 * Pure: no I/O, no globals. */
#ifndef INK_CHAT_STREAM_H
#define INK_CHAT_STREAM_H

#include "core/util.h"
#include "gen/sse.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    CS_OK = 0,
    CS_ERR_EVENT,     /* the provider sent an error in the stream */
    CS_ERR_INVALID,   /* something that is not the protocol (bad JSON, no content) */
    CS_ERR_TOO_LARGE, /* the text or one event grew past its bound */
    CS_ERR_REASONING, /* a closing </think> came after text had been passed on */
} cs_error_t;

typedef void (*cs_emit_fn)(void *arg, const char *piece, size_t len);

typedef struct {
    sse_t sse;
    buf_t *text;         /* the text: everything passed on, in order */
    size_t max_text;     /* the longest text accepted */
    cs_emit_fn emit;     /* NULL: nobody listens */
    void *emit_arg;
    bool hold_untagged;  /* hold all text until a </think> or the end (see .c) */
    int think;           /* where the content is (see chat_stream.c) */
    bool had_think;      /* a reasoning block was seen and left */
    bool saw_orphan;     /* a </think> came without <think>: the model opens its
                            reasoning untagged (the caller may remember it) */
    buf_t held;          /* content not yet known to be text */
    bool done;           /* data: [DONE] came */
    bool finished;       /* a finish_reason came */
    bool truncated;      /* finish_reason "length" */
    bool quota;          /* the error in the stream was insufficient_quota */
    cs_error_t error;
    int64_t prompt_tokens, completion_tokens; /* -1 until the provider says */
} chat_stream_t;

void chat_stream_init(chat_stream_t *cs, buf_t *text, size_t max_text, bool hold_untagged,
                      cs_emit_fn emit, void *emit_arg);
/* Forgets everything of an earlier answer (text included), for a new attempt. */
void chat_stream_reset(chat_stream_t *cs);
void chat_stream_free(chat_stream_t *cs);

/* The next bytes of a streamed answer. 0, or -1 with cs->error set (stop reading). */
int chat_stream_feed(chat_stream_t *cs, const char *s, size_t n);
/* A whole non-streamed answer (choices[0].message.content). 0 or -1 with cs->error.
 * Ends the content (no chat_stream_end needed). */
int chat_stream_body(chat_stream_t *cs, const char *body, size_t n);
/* The answer is over: passes on text still held back (e.g. a lone "<thi"). 0 or -1. */
int chat_stream_end(chat_stream_t *cs);
/* The stream said it was complete ([DONE] or a finish_reason): not cut short. */
bool chat_stream_complete(const chat_stream_t *cs);

#endif
