/* fuzz_sse.c — the provider's stream reading: Server-Sent Events (src/gen/sse.c) into
 * Chat Completions text (src/gen/chat_stream.c), and a plain JSON answer, on arbitrary
 * bytes. The first byte picks the options (hold untagged reasoning, listen to pieces)
 * and a step. Invariants: the same bytes fed whole and fed in steps give the same
 * outcome and the same text; every piece passed on is whole UTF-8; on success the
 * pieces joined are exactly the text; the text is valid UTF-8. */
#include "core/utf8.h"
#include "fuzz.h"
#include "gen/chat_stream.h"

#include <string.h>

typedef struct {
    buf_t joined;
} pieces_t;

static void on_piece(void *arg, const char *s, size_t n)
{
    pieces_t *p = arg;
    FUZZ_CHECK(n > 0 && utf8_count(s, n) >= 0);
    buf_append(&p->joined, s, n);
}

static int run(const uint8_t *data, size_t size, size_t step, bool hold, bool listen,
               buf_t *text, pieces_t *pc, cs_error_t *err)
{
    chat_stream_t cs;
    chat_stream_init(&cs, text, 1 << 16, hold, listen ? on_piece : NULL, pc);
    int rc = 0;
    for (size_t i = 0; i < size && rc == 0; i += step)
        rc = chat_stream_feed(&cs, (const char *)data + i, size - i < step ? size - i : step);
    if (rc == 0)
        rc = chat_stream_end(&cs);
    *err = cs.error;
    chat_stream_free(&cs);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool hold = data[0] & 1, listen = data[0] & 2;
    size_t step = (size_t)(data[0] >> 2) + 1;
    data++, size--;

    buf_t t1, t2;
    buf_init(&t1);
    buf_init(&t2);
    pieces_t p1, p2;
    buf_init(&p1.joined);
    buf_init(&p2.joined);
    cs_error_t e1, e2;
    int rc1 = run(data, size, size ? size : 1, hold, listen, &t1, &p1, &e1);
    int rc2 = run(data, size, step, hold, listen, &t2, &p2, &e2);
    FUZZ_CHECK(rc1 == rc2 && e1 == e2);
    FUZZ_CHECK(t1.len == t2.len && (t1.len == 0 || memcmp(t1.data, t2.data, t1.len) == 0));
    FUZZ_CHECK(p1.joined.len == p2.joined.len);
    FUZZ_CHECK(utf8_count(buf_cstr(&t1), t1.len) >= 0);
    if (rc1 == 0 && listen)
        FUZZ_CHECK(p1.joined.len == t1.len && memcmp(buf_cstr(&p1.joined), buf_cstr(&t1), t1.len) == 0);

    /* the same bytes as a whole, non-streamed answer */
    chat_stream_t cs;
    buf_reset(&t1);
    buf_reset(&p1.joined);
    chat_stream_init(&cs, &t1, 1 << 16, hold, listen ? on_piece : NULL, &p1);
    if (chat_stream_body(&cs, (const char *)data, size) == 0) {
        FUZZ_CHECK(utf8_count(buf_cstr(&t1), t1.len) >= 0);
        if (listen)
            FUZZ_CHECK(p1.joined.len == t1.len);
    }
    chat_stream_free(&cs);

    buf_free(&t1);
    buf_free(&t2);
    buf_free(&p1.joined);
    buf_free(&p2.joined);
    return 0;
}
