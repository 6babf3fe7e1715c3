/* test_provider.c — the builtin provider's text in pieces (src/gen/provider.c): the
 * pieces joined are the text, none splits a UTF-8 character, a long text comes in
 * many pieces, the test delay is spread over them with heartbeats, and a lost job
 * stops between pieces. */
#include "core/utf8.h"
#include "core/util.h"
#include "gen/builtin.h"
#include "gen/provider.h"
#include "gen/templates.h"
#include "test.h"

#include <stdlib.h>

typedef struct {
    gen_ctx_t ctx;
    buf_t joined;
    int pieces, bad, beats, stop_at_beat;
    double first_at, last_at;
} listen_t;

static void on_text(gen_ctx_t *ctx, const char *piece, size_t len)
{
    listen_t *l = ctx->on_text_arg;
    if (len == 0 || utf8_count(piece, len) < 0)
        l->bad++;
    buf_append(&l->joined, piece, len);
    double now = mono_s();
    if (l->pieces++ == 0)
        l->first_at = now;
    l->last_at = now;
}

static bool beat(gen_ctx_t *ctx)
{
    listen_t *l = ctx->heartbeat_arg;
    l->beats++;
    return !(l->stop_at_beat && l->beats >= l->stop_at_beat);
}

static void listen_init(listen_t *l)
{
    memset(l, 0, sizeof(*l));
    l->ctx.on_text = on_text;
    l->ctx.on_text_arg = l;
    l->ctx.heartbeat = beat;
    l->ctx.heartbeat_arg = l;
    buf_init(&l->joined);
}

static provider_t *builtin(long delay_ms)
{
    cfg_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.provider = "builtin";
    cfg.builtin_delay_ms = delay_ms;
    return provider_builtin_new(&cfg);
}

static void test_pieces_every_template(void)
{
    provider_t *p = builtin(0);
    static const char *const prompts[] = {
        "Morning routines for remote teams",
        "Grüße aus Köln: café culture, naïve façades and 日本語 — with emoji 🎉 too",
        "x",
    };
    int multi = 0;
    for (int t = 1; t <= 52; t++) {
        for (size_t i = 0; i < ARRAY_LEN(prompts); i++) {
            listen_t l;
            listen_init(&l);
            gen_text_req_t req = {.template_id = t, .prompt = prompts[i], .creativity = 0.5};
            gen_result_t res;
            gen_result_init(&res);
            CHECK_INT(p->text(p, &l.ctx, &req, &res), 0);
            CHECK(res.text.len > 0);
            CHECK_MSG(l.joined.len == res.text.len &&
                          memcmp(l.joined.data, res.text.data, res.text.len) == 0,
                      "template %d: pieces joined differ from the text", t);
            CHECK_INT(l.bad, 0);
            CHECK_INT(l.beats, 0); /* no delay: no heartbeat needed */
            if (l.pieces > 3)
                multi++;
            CHECK_INT(res.prompt_tokens, -1);
            CHECK(!res.truncated);
            gen_result_free(&res);
            buf_free(&l.joined);
        }
    }
    CHECK_MSG(multi >= 52, "only %d texts came in more than 3 pieces", multi);
    p->destroy(p);
}

static void test_piece_end(void)
{
    static const struct {
        const char *s;
        const char *pieces[8];
    } cases[] = {
        {"One two. Three four!", {"One two. ", "Three four!"}},
        {"a b c d e f g h", {"a b c d e f ", "g h"}},
        {"Title\n\nBody text", {"Title\n\n", "Body text"}},
        {"日本語 テキスト。 次", {"日本語 テキスト。 次"}},
        {"end.  ", {"end.  "}},
        {"", {NULL}},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *s = cases[i].s;
        size_t n = strlen(s), at = 0, k = 0;
        while (at < n) {
            size_t end = builtin_piece_end(s, n, at);
            CHECK(end > at && end <= n);
            char got[128];
            snprintf(got, sizeof(got), "%.*s", (int)(end - at), s + at);
            CHECK_MSG(cases[i].pieces[k] && strcmp(got, cases[i].pieces[k]) == 0,
                      "case %zu piece %zu: \"%s\"", i, k, got);
            at = end;
            k++;
        }
        CHECK_MSG(cases[i].pieces[k] == NULL, "case %zu: %zu pieces, want more", i, k);
    }
}

/* Half the delay comes before the first piece, half is spread over the pieces: the
 * text grows while the delay runs. */
static void test_delay_spread(void)
{
    const long delay = 400;
    provider_t *p = builtin(delay);
    CHECK(!p->text_inline);
    listen_t l;
    listen_init(&l);
    gen_text_req_t req = {.template_id = 9, .prompt = "Slow blog post about tea", .creativity = 0};
    gen_result_t res;
    gen_result_init(&res);
    double t0 = mono_s();
    CHECK_INT(p->text(p, &l.ctx, &req, &res), 0);
    double total = mono_s() - t0;
    CHECK_MSG(l.pieces > 3, "%d pieces", l.pieces);
    CHECK_MSG(total >= delay / 1000.0, "took %.3f s, delay %ld ms", total, delay);
    /* half the delay before the first piece; between the first and the last piece,
     * pieces-1 shares of the other half */
    double spread = l.last_at - l.first_at;
    double floor_s = (double)((delay - delay / 2) / l.pieces) * (l.pieces - 1) / 1000.0;
    CHECK_MSG(l.first_at - t0 >= delay / 2 / 1000.0, "first piece after %.3f s",
              l.first_at - t0);
    CHECK_MSG(spread >= floor_s, "pieces spread over %.3f s, want >= %.3f s", spread, floor_s);
    CHECK_MSG(l.beats >= 2, "%d heartbeats over %ld ms", l.beats, delay);
    CHECK_STR(buf_cstr(&l.joined), buf_cstr(&res.text));
    gen_result_free(&res);
    buf_free(&l.joined);

    /* a lost job stops between pieces: failed, and its text is not kept */
    listen_init(&l);
    l.stop_at_beat = 2;
    gen_result_init(&res);
    CHECK_INT(p->text(p, &l.ctx, &req, &res), -1);
    CHECK_STR(res.error, "Generation was interrupted.");
    CHECK_INT(res.text.len, 0);
    CHECK_INT(l.beats, 2);
    gen_result_free(&res);
    buf_free(&l.joined);
    p->destroy(p);
}

int main(void)
{
    test_piece_end();
    test_pieces_every_template();
    test_delay_spread();
    TEST_DONE();
}
