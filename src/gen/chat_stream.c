/* chat_stream.c — one Chat Completions answer into text pieces (see chat_stream.h).
 *
 * Events (from sse.c) and whole bodies are read with jansson; what matters is the
 * content, which goes through a small state machine so reasoning is cut out:
 *
 *   START ──"<think>"──▶ IN ──"</think>"──▶ SKIPWS ──non-space──▶ TEXT
 *     │                                        ▲
 *     ├──anything else──▶ TEXT ──"</think>", nothing passed yet──┘
 *     └──anything else, hold_untagged──▶ HOLD ──"</think>"──▶ SKIPWS
 *
 * START holds leading spaces and a prefix of "<think>" until it knows. IN drops
 * everything (keeping only a tail that may be a split closing tag). TEXT passes text
 * on as it comes, holding back only what may be the start of a "</think>" (until a
 * reasoning block has been seen) and an incomplete UTF-8 character. A "</think>" in
 * TEXT before any reasoning block means the model opened its reasoning without a tag:
 * if nothing was passed on yet the text so far is dropped as reasoning; otherwise it
 * is too late (pieces are never taken back) and the answer fails with
 * CS_ERR_REASONING. HOLD, for a model known to do that, passes nothing on until a
 * "</think>" or the end. */
#include "gen/chat_stream.h"

#include "core/utf8.h"

#include <jansson.h>
#include <string.h>

enum { TH_START, TH_IN, TH_SKIPWS, TH_TEXT, TH_HOLD };

static const char OPEN_TAG[] = "<think>";
static const char CLOSE_TAG[] = "</think>";
#define OPEN_LEN (sizeof(OPEN_TAG) - 1)
#define CLOSE_LEN (sizeof(CLOSE_TAG) - 1)

static int cs_event(void *arg, const char *event, const char *data, size_t len);

void chat_stream_init(chat_stream_t *cs, buf_t *text, size_t max_text, bool hold_untagged,
                      cs_emit_fn emit, void *emit_arg)
{
    memset(cs, 0, sizeof(*cs));
    sse_init(&cs->sse, cs_event, cs);
    buf_init(&cs->held);
    cs->text = text;
    cs->max_text = max_text;
    cs->hold_untagged = hold_untagged;
    cs->emit = emit;
    cs->emit_arg = emit_arg;
    cs->think = TH_START;
    cs->prompt_tokens = cs->completion_tokens = -1;
}

void chat_stream_reset(chat_stream_t *cs)
{
    sse_reset(&cs->sse);
    buf_reset(&cs->held);
    buf_reset(cs->text);
    cs->think = TH_START;
    cs->had_think = cs->done = cs->finished = cs->truncated = cs->quota = false;
    cs->error = CS_OK;
    cs->prompt_tokens = cs->completion_tokens = -1;
}

void chat_stream_free(chat_stream_t *cs)
{
    sse_free(&cs->sse);
    buf_free(&cs->held);
}

bool chat_stream_complete(const chat_stream_t *cs)
{
    return cs->done || cs->finished;
}

static int cs_fail(chat_stream_t *cs, cs_error_t e)
{
    if (cs->error == CS_OK)
        cs->error = e;
    return -1;
}

/* ---- content ---- */

static const char *find(const buf_t *b, const char *needle, size_t nlen)
{
    return b->len >= nlen ? memmem(b->data, b->len, needle, nlen) : NULL;
}

static void consume(buf_t *b, size_t k)
{
    if (k >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + k, b->len - k);
    b->len -= k;
    b->data[b->len] = '\0';
}

static size_t ascii_spaces(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

/* The length of the longest end of s[0..n) that is a proper prefix of tag. */
static size_t tag_prefix_at_end(const char *s, size_t n, const char *tag, size_t tlen)
{
    for (size_t k = tlen - 1 < n ? tlen - 1 : n; k > 0; k--)
        if (memcmp(s + n - k, tag, k) == 0)
            return k;
    return 0;
}

static int pass_on(chat_stream_t *cs, size_t n)
{
    if (n == 0)
        return 0;
    if (cs->text->len + n > cs->max_text)
        return cs_fail(cs, CS_ERR_TOO_LARGE);
    buf_append(cs->text, cs->held.data, n);
    if (cs->emit)
        cs->emit(cs->emit_arg, cs->held.data, n);
    consume(&cs->held, n);
    return 0;
}

/* Moves held content through the states; at_end: no more content will come. */
static int cs_step(chat_stream_t *cs, bool at_end)
{
    for (;;) {
        buf_t *h = &cs->held;
        const char *tag;
        switch (cs->think) {
        case TH_START: {
            size_t ws = ascii_spaces(h->data, h->len);
            size_t tn = h->len - ws;
            if (tn >= OPEN_LEN && memcmp(h->data + ws, OPEN_TAG, OPEN_LEN) == 0) {
                consume(h, ws + OPEN_LEN);
                cs->think = TH_IN;
                continue;
            }
            if (!at_end && (tn == 0 || (tn < OPEN_LEN && memcmp(h->data + ws, OPEN_TAG, tn) == 0)))
                return 0; /* not known yet */
            cs->think = cs->hold_untagged ? TH_HOLD : TH_TEXT;
            continue;
        }
        case TH_IN:
            if ((tag = find(h, CLOSE_TAG, CLOSE_LEN))) {
                consume(h, (size_t)(tag - h->data) + CLOSE_LEN);
                cs->had_think = true;
                cs->think = TH_SKIPWS;
                continue;
            }
            /* reasoning: dropped, but for what may be the start of the closing tag */
            if (at_end)
                buf_reset(h);
            else if (h->len >= CLOSE_LEN)
                consume(h, h->len - (CLOSE_LEN - 1));
            return 0;
        case TH_HOLD:
            if ((tag = find(h, CLOSE_TAG, CLOSE_LEN))) {
                cs->saw_orphan = true;
                consume(h, (size_t)(tag - h->data) + CLOSE_LEN);
                cs->had_think = true;
                cs->think = TH_SKIPWS;
                continue;
            }
            if (!at_end)
                return 0;
            cs->think = TH_TEXT; /* no reasoning this time: all of it is text */
            continue;
        case TH_SKIPWS: {
            size_t ws = ascii_spaces(h->data, h->len);
            consume(h, ws);
            if (h->len == 0)
                return 0;
            cs->think = TH_TEXT;
            continue;
        }
        case TH_TEXT:
        default: {
            if (!cs->had_think && (tag = find(h, CLOSE_TAG, CLOSE_LEN))) {
                cs->saw_orphan = true;
                if (cs->emit && cs->text->len > 0)
                    return cs_fail(cs, CS_ERR_REASONING);
                buf_reset(cs->text); /* nobody saw it: it was reasoning */
                consume(h, (size_t)(tag - h->data) + CLOSE_LEN);
                cs->had_think = true;
                cs->think = TH_SKIPWS;
                continue;
            }
            if (at_end)
                return pass_on(cs, h->len);
            size_t keep = cs->had_think ? 0 : tag_prefix_at_end(h->data, h->len, CLOSE_TAG, CLOSE_LEN);
            return pass_on(cs, utf8_whole(h->data, h->len - keep));
        }
        }
    }
}

static int cs_content(chat_stream_t *cs, const char *s, size_t n)
{
    if (cs->held.len + n > cs->max_text)
        return cs_fail(cs, CS_ERR_TOO_LARGE);
    buf_append(&cs->held, s, n);
    return cs_step(cs, false);
}

int chat_stream_end(chat_stream_t *cs)
{
    if (cs->error != CS_OK)
        return -1;
    return cs_step(cs, true);
}

/* ---- chunks ---- */

static void read_usage(chat_stream_t *cs, json_t *root)
{
    json_t *usage = json_object_get(root, "usage");
    json_t *p = json_object_get(usage, "prompt_tokens");
    json_t *c = json_object_get(usage, "completion_tokens");
    if (json_is_integer(p) && json_integer_value(p) >= 0)
        cs->prompt_tokens = json_integer_value(p);
    if (json_is_integer(c) && json_integer_value(c) >= 0)
        cs->completion_tokens = json_integer_value(c);
}

static void read_finish(chat_stream_t *cs, json_t *choice)
{
    const char *fr = json_string_value(json_object_get(choice, "finish_reason"));
    if (fr) {
        cs->finished = true;
        if (strcmp(fr, "length") == 0)
            cs->truncated = true;
    }
}

/* An error member (or an `event: error`): why, for the caller's classification. */
static int cs_error_event(chat_stream_t *cs, json_t *err)
{
    const char *code = json_string_value(json_object_get(err, "code"));
    const char *type = json_string_value(json_object_get(err, "type"));
    cs->quota = (code && strcmp(code, "insufficient_quota") == 0) ||
                (type && strcmp(type, "insufficient_quota") == 0);
    return cs_fail(cs, CS_ERR_EVENT);
}

static int cs_event(void *arg, const char *event, const char *data, size_t len)
{
    chat_stream_t *cs = arg;
    if (cs->done)
        return 0; /* nothing counts after [DONE] */
    size_t ws = ascii_spaces(data, len);
    if (len - ws == 6 && memcmp(data + ws, "[DONE]", 6) == 0) {
        cs->done = true;
        return 0;
    }
    json_t *root = json_loadb(data, len, 0, NULL);
    int rc = 0;
    json_t *err = json_object_get(root, "error");
    if (strcmp(event, "error") == 0 || (err && !json_is_null(err)))
        rc = cs_error_event(cs, err);
    else if (!json_is_object(root))
        rc = cs_fail(cs, CS_ERR_INVALID);
    else {
        read_usage(cs, root);
        json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
        /* delta.reasoning_content and delta.reasoning are left alone: never text */
        json_t *content = json_object_get(json_object_get(choice, "delta"), "content");
        if (json_is_string(content))
            rc = cs_content(cs, json_string_value(content), json_string_length(content));
        read_finish(cs, choice);
    }
    json_decref(root);
    return rc;
}

int chat_stream_feed(chat_stream_t *cs, const char *s, size_t n)
{
    if (cs->error != CS_OK)
        return -1;
    int rc = sse_feed(&cs->sse, s, n);
    if (rc == 0)
        return 0;
    if (cs->sse.too_large)
        return cs_fail(cs, CS_ERR_TOO_LARGE);
    return cs_fail(cs, CS_ERR_INVALID); /* (the event callback set the real reason) */
}

int chat_stream_body(chat_stream_t *cs, const char *body, size_t n)
{
    json_t *root = json_loadb(body, n, 0, NULL);
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    json_t *content = json_object_get(json_object_get(choice, "message"), "content");
    int rc = -1;
    if (!json_is_string(content))
        cs_fail(cs, CS_ERR_INVALID); /* (message.reasoning_content is never read) */
    else {
        read_usage(cs, root);
        read_finish(cs, choice);
        if (cs_content(cs, json_string_value(content), json_string_length(content)) == 0)
            rc = chat_stream_end(cs);
    }
    json_decref(root);
    return rc;
}
