/* test_sse.c — the Server-Sent Events parser (src/gen/sse.c) and the Chat Completions
 * stream decoder on top of it (src/gen/chat_stream.c), without any network: tables of
 * inputs, each fed whole and then cut at every byte (and byte by byte), which must all
 * give the same events and the same text. */
#include "core/utf8.h"
#include "gen/chat_stream.h"
#include "gen/sse.h"
#include "test.h"

#include <stdlib.h>

/* ---- sse ---- */

typedef struct {
    buf_t out; /* "type=data|" per event */
    int stop_after; /* return 1 from this event on (0 = never) */
    int events;
} collect_t;

static int collect(void *arg, const char *event, const char *data, size_t len)
{
    collect_t *c = arg;
    CHECK(data[len] == '\0');
    buf_printf(&c->out, "%s=", event);
    buf_append(&c->out, data, len);
    buf_puts(&c->out, "|");
    c->events++;
    return c->stop_after && c->events >= c->stop_after ? 1 : 0;
}

/* Feeds s in pieces of step bytes (0 = whole); returns the events and sse_finish. */
static bool sse_run(const char *s, size_t n, size_t step, buf_t *out)
{
    collect_t c = {.stop_after = 0};
    buf_init(&c.out);
    sse_t p;
    sse_init(&p, collect, &c);
    if (step == 0)
        step = n ? n : 1;
    for (size_t i = 0; i < n; i += step)
        CHECK_INT(sse_feed(&p, s + i, n - i < step ? n - i : step), 0);
    bool clean = sse_finish(&p);
    sse_free(&p);
    buf_reset(out);
    buf_append(out, c.out.data ? c.out.data : "", c.out.len);
    buf_free(&c.out);
    return clean;
}

static void test_sse_table(void)
{
    static const struct {
        const char *in, *want;
        bool clean;
    } cases[] = {
        {"data: a\n\n", "message=a|", true},
        {"data:a\r\n\r\ndata:  b\r\r", "message=a|message= b|", true},
        {"\xEF\xBB\xBF" "data: bom\n\n", "message=bom|", true},
        {"\xEF\xBB" "data: x\n\n", "", true}, /* not a BOM: part of an unknown field name */
        {"data: 1\ndata: 2\n\n", "message=1\n2|", true},
        {"event: error\ndata: {}\n\n", "error={}|", true},
        {": comment\n\nid: 7\nretry: 10\n\n", "", true},
        {"data\n\n", "message=|", true},
        {"data: x\n", "", false},             /* no blank line: not dispatched */
        {"data: x", "", false},
        {": keep-alive\n", "", true},
        {"event: a\n\ndata: b\n\n", "message=b|", true}, /* the type does not carry over */
        {"data: [DONE]\n\n", "message=[DONE]|", true},
        {"foo: bar\ndata: z\n\n", "message=z|", true},
    };
    buf_t out;
    buf_init(&out);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        size_t n = strlen(cases[i].in);
        for (size_t step = 0; step <= n; step++) {
            bool clean = sse_run(cases[i].in, n, step, &out);
            CHECK_MSG(strcmp(buf_cstr(&out), cases[i].want) == 0,
                      "case %zu step %zu: got \"%s\", want \"%s\"", i, step, buf_cstr(&out),
                      cases[i].want);
            CHECK_MSG(clean == cases[i].clean, "case %zu step %zu: clean %d", i, step, clean);
        }
    }
    buf_free(&out);
}

static void test_sse_stop_and_bounds(void)
{
    collect_t c = {.stop_after = 1};
    buf_init(&c.out);
    sse_t p;
    sse_init(&p, collect, &c);
    CHECK_INT(sse_feed(&p, "data: 1\n\ndata: 2\n\n", 18), 1);
    CHECK_STR(buf_cstr(&c.out), "message=1|");
    sse_free(&p);
    buf_free(&c.out);

    /* one event larger than SSE_MAX_EVENT is refused, in one line or many */
    buf_init(&c.out);
    c.stop_after = c.events = 0;
    sse_init(&p, collect, &c);
    char *big = malloc(SSE_MAX_EVENT + 16);
    memset(big, 'x', SSE_MAX_EVENT + 16);
    CHECK_INT(sse_feed(&p, "data: ", 6), 0);
    CHECK_INT(sse_feed(&p, big, SSE_MAX_EVENT + 16), -1);
    CHECK(p.too_large);
    sse_reset(&p);
    CHECK(!p.too_large);
    int rc = 0;
    for (int i = 0; i < 40 && rc == 0; i++) {
        char line[40000];
        memcpy(line, "data: ", 6);
        memset(line + 6, 'y', sizeof(line) - 7);
        line[sizeof(line) - 1] = '\n';
        rc = sse_feed(&p, line, sizeof(line));
    }
    CHECK_INT(rc, -1);
    CHECK_INT(c.events, 0);
    free(big);
    sse_free(&p);
    buf_free(&c.out);
}

/* ---- chat_stream ---- */

typedef struct {
    buf_t pieces;
    int n, bad;
} pieces_t;

static void on_piece(void *arg, const char *s, size_t n)
{
    pieces_t *p = arg;
    if (n == 0 || utf8_count(s, n) < 0)
        p->bad++;
    buf_append(&p->pieces, s, n);
    p->n++;
}

/* An SSE stream of the given content deltas, then finish and [DONE]. */
static void sse_of(buf_t *out, const char *const *deltas, const char *finish)
{
    buf_reset(out);
    buf_puts(out, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n");
    for (size_t i = 0; deltas[i]; i++)
        buf_printf(out, "data: {\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}\n\n", deltas[i]);
    buf_printf(out, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"%s\"}]}\n\n", finish);
    buf_puts(out, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":9}}\n\n");
    buf_puts(out, "data: [DONE]\n\n");
}

/* Runs a stream fed in steps of step bytes; returns the rc of feed+end. */
static int cs_run(const char *s, size_t n, size_t step, bool hold, bool listen, buf_t *text,
                  pieces_t *pc, chat_stream_t *out)
{
    chat_stream_t cs;
    buf_reset(text);
    buf_reset(&pc->pieces);
    pc->n = pc->bad = 0;
    chat_stream_init(&cs, text, 1 << 20, hold, listen ? on_piece : NULL, pc);
    if (step == 0)
        step = n;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i += step)
        rc = chat_stream_feed(&cs, s + i, n - i < step ? n - i : step);
    if (rc == 0)
        rc = chat_stream_end(&cs);
    *out = cs;
    chat_stream_free(&cs);
    return rc;
}

static void test_chat_stream_table(void)
{
    static const struct {
        const char *deltas[8];
        bool hold, listen;
        int rc;
        const char *want;
    } cases[] = {
        {{"Hello", " world", NULL}, false, true, 0, "Hello world"},
        {{"<think>", "plan", "</think>", "\\n\\nAnswer", NULL}, false, true, 0, "Answer"},
        {{"<th", "ink>pl", "an</th", "ink>", " ", "Answer", NULL}, false, true, 0, "Answer"},
        {{" \\n<think>x</think>Y", NULL}, false, true, 0, "Y"},
        {{"<thinking is fun", NULL}, false, true, 0, "<thinking is fun"},
        {{"<thi", NULL}, false, true, 0, "<thi"},
        {{"a</th", "ink>b", NULL}, false, true, -1, "a"},           /* too late */
        {{"a</th", "ink>b", NULL}, false, false, 0, "b"},           /* nobody saw "a" */
        {{"plan", "</think>", "Text", NULL}, true, true, 0, "Text"}, /* held */
        {{"No reasoning", NULL}, true, true, 0, "No reasoning"},
        {{"<think>only reasoning", NULL}, false, true, 0, ""},
        {{"<think>a</think>b</think>c", NULL}, false, true, 0, "b</think>c"},
        {{"Gr\\u00fc\\u00dfe ", "\\ud83c\\udf89", NULL}, false, true, 0, "Grüße 🎉"},
    };
    buf_t sse, text;
    buf_init(&sse);
    buf_init(&text);
    pieces_t pc;
    buf_init(&pc.pieces);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        sse_of(&sse, cases[i].deltas, "stop");
        for (size_t step = 0; step < 40; step += step < 3 ? 1 : 7) {
            chat_stream_t cs;
            int rc = cs_run(sse.data, sse.len, step, cases[i].hold, cases[i].listen, &text, &pc,
                            &cs);
            CHECK_MSG(rc == cases[i].rc, "case %zu step %zu: rc %d", i, step, rc);
            if (rc != 0) {
                CHECK_INT(cs.error, CS_ERR_REASONING);
                CHECK_STR(buf_cstr(&pc.pieces), cases[i].want);
                continue;
            }
            CHECK_MSG(strcmp(buf_cstr(&text), cases[i].want) == 0,
                      "case %zu step %zu: text \"%s\", want \"%s\"", i, step, buf_cstr(&text),
                      cases[i].want);
            if (cases[i].listen)
                CHECK_STR(buf_cstr(&pc.pieces), buf_cstr(&text));
            CHECK_INT(pc.bad, 0);
            CHECK(cs.done && cs.finished && !cs.truncated);
            CHECK_INT(cs.prompt_tokens, 7);
            CHECK_INT(cs.completion_tokens, 9);
        }
    }
    buf_free(&sse);
    buf_free(&text);
    buf_free(&pc.pieces);
}

static void test_chat_stream_events(void)
{
    buf_t text;
    buf_init(&text);
    pieces_t pc;
    buf_init(&pc.pieces);
    chat_stream_t cs;
    const char *s;

    s = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\n";
    CHECK_INT(cs_run(s, strlen(s), 0, false, true, &text, &pc, &cs), 0);
    CHECK(cs.truncated && cs.finished && !cs.done);
    CHECK_INT(cs.prompt_tokens, -1);

    s = "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"secret\",\"reasoning\":\"s\"}}]}"
        "\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n";
    CHECK_INT(cs_run(s, strlen(s), 0, false, true, &text, &pc, &cs), 0);
    CHECK_STR(buf_cstr(&text), "ok");
    CHECK(!chat_stream_complete(&cs)); /* no [DONE], no finish: cut short */

    s = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
        "data: {\"error\":{\"message\":\"boom\",\"code\":\"insufficient_quota\"}}\n\n";
    CHECK_INT(cs_run(s, strlen(s), 0, false, true, &text, &pc, &cs), -1);
    CHECK_INT(cs.error, CS_ERR_EVENT);
    CHECK(cs.quota);
    CHECK_STR(buf_cstr(&pc.pieces), "a");

    s = "event: error\ndata: overloaded\n\n";
    CHECK_INT(cs_run(s, strlen(s), 0, false, true, &text, &pc, &cs), -1);
    CHECK_INT(cs.error, CS_ERR_EVENT);
    CHECK(!cs.quota);

    s = "data: {\"choices\": [\n\n";
    CHECK_INT(cs_run(s, strlen(s), 0, false, true, &text, &pc, &cs), -1);
    CHECK_INT(cs.error, CS_ERR_INVALID);

    s = "data: {\"error\": null, \"choices\":[{\"delta\":{\"content\":\"fine\"}}]}\n\n"
        "data: [DONE]\n\ndata: {\"error\":{}}\n\n";
    CHECK_INT(cs_run(s, strlen(s), 0, false, true, &text, &pc, &cs), 0);
    CHECK_STR(buf_cstr(&text), "fine");
    CHECK(cs.done);

    /* a plain JSON answer */
    chat_stream_init(&cs, &text, 1 << 20, false, on_piece, &pc);
    buf_reset(&text);
    s = "{\"choices\":[{\"message\":{\"content\":\"<think>r</think>\\n\\nBody\","
        "\"reasoning_content\":\"r\"},\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}";
    CHECK_INT(chat_stream_body(&cs, s, strlen(s)), 0);
    CHECK_STR(buf_cstr(&text), "Body");
    CHECK(cs.truncated);
    CHECK_INT(cs.completion_tokens, 2);
    chat_stream_reset(&cs);
    CHECK_INT(text.len, 0);
    CHECK_INT(chat_stream_body(&cs, "{\"choices\":[]}", 14), -1);
    CHECK_INT(cs.error, CS_ERR_INVALID);
    chat_stream_free(&cs);

    /* the text bound */
    chat_stream_init(&cs, &text, 4, false, NULL, NULL);
    buf_reset(&text);
    s = "data: {\"choices\":[{\"delta\":{\"content\":\"12345\"}}]}\n\n";
    CHECK_INT(chat_stream_feed(&cs, s, strlen(s)), -1);
    CHECK_INT(cs.error, CS_ERR_TOO_LARGE);
    chat_stream_free(&cs);

    buf_free(&text);
    buf_free(&pc.pieces);
}

/* ---- utf8_whole, used to hold back an incomplete character ---- */

static void test_utf8_whole(void)
{
    const char *s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x8E\x89"; /* a é 日 🎉 */
    static const size_t want[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
    for (size_t n = 0; n <= 10; n++)
        CHECK_MSG(utf8_whole(s, n) == want[n], "utf8_whole(%zu) = %zu, want %zu", n,
                  utf8_whole(s, n), want[n]);
    CHECK_INT(utf8_whole("\x80\x80\x80\x80\x80", 5), 5); /* invalid: nothing to wait for */
}

int main(void)
{
    test_sse_table();
    test_sse_stop_and_bounds();
    test_chat_stream_table();
    test_chat_stream_events();
    test_utf8_whole();
    TEST_DONE();
}
