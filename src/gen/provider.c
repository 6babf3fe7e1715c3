/* provider.c — result helpers, the builtin provider, and the choice by name.
 *
 * The builtin provider wraps builtin_text/builtin_image. Its text goes to on_text in
 * pieces of a sentence or a few words (builtin_piece_end), the way a real model's
 * stream arrives, so streaming clients see the same shape whichever provider runs.
 * Two settings exist only for tests and demos: builtin_delay_ms makes every
 * generation take that long (heartbeating, so leases hold; for a text, half of it
 * comes before the first piece and half is spread over the pieces, so a client can
 * watch the text grow), and
 * builtin_fail_pattern makes a generation whose prompt or description contains that
 * text fail. A third, builtin_busy_ms, only for tests, keeps the CPU busy that long
 * before each generation without calling the heartbeat: a worker that is alive but
 * reports no progress (a long picture on a slow machine). */
#include "gen/provider.h"

#include "gen/builtin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gen_result_init(gen_result_t *r)
{
    buf_init(&r->text);
    buf_init(&r->png);
    r->revised_prompt = NULL;
    r->prompt_tokens = r->completion_tokens = -1;
    r->truncated = false;
    r->error[0] = '\0';
}

void gen_result_free(gen_result_t *r)
{
    buf_free(&r->text);
    buf_free(&r->png);
    free(r->revised_prompt);
    r->revised_prompt = NULL;
}

typedef struct {
    long delay_ms;
    long busy_ms;
    char *fail_pattern;
} builtin_priv_t;

#define PIECE_WORDS 6 /* a piece ends after a sentence, a line, or this many words */
#define BEAT_EVERY_MS 100

/* Sleeps ms in slices of at most BEAT_EVERY_MS, heartbeating after each slice (and at
 * most once per BEAT_EVERY_MS across calls: *last_beat is mono_s() of the last one),
 * so the lease is renewed and a lost job stops early. False: the job is not ours. */
static bool test_sleep(gen_ctx_t *ctx, long ms, double *last_beat)
{
    for (long left = ms; left > 0; left -= BEAT_EVERY_MS) {
        sleep_ms(left < BEAT_EVERY_MS ? (int)left : BEAT_EVERY_MS);
        double now = mono_s();
        if (ctx->heartbeat && now - *last_beat >= BEAT_EVERY_MS / 1000.0) {
            *last_beat = now;
            if (!ctx->heartbeat(ctx))
                return false;
        }
    }
    return true;
}

/* Spins for bp->busy_ms of wall-clock time, asking nobody anything. */
static void test_busy(const builtin_priv_t *bp)
{
    volatile uint64_t x = 0;
    for (double end = mono_s() + bp->busy_ms / 1000.0; mono_s() < end;)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ULL + 1;
}

static bool test_delay(const builtin_priv_t *bp, gen_ctx_t *ctx)
{
    test_busy(bp);
    double last_beat = 0;
    return test_sleep(ctx, bp->delay_ms, &last_beat);
}

/* Where the piece of text s[start..n) that starts at start ends: after the spaces
 * that follow a sentence's end, a line, or PIECE_WORDS words (or at n). Pieces end
 * only after ASCII spaces, so they never split a UTF-8 character. */
size_t builtin_piece_end(const char *s, size_t n, size_t start)
{
    int words = 0;
    size_t i = start;
    while (i < n) {
        while (i < n && s[i] != ' ' && s[i] != '\n') /* a word */
            i++;
        if (i == n)
            break;
        char last = i > start ? s[i - 1] : ' ';
        bool line = false;
        while (i < n && (s[i] == ' ' || s[i] == '\n')) /* the spaces after it */
            line |= s[i++] == '\n';
        words++;
        if (line || words >= PIECE_WORDS || last == '.' || last == '!' || last == '?' ||
            last == ':')
            return i;
    }
    return n;
}

/* Passes res->text to on_text in pieces, with the test delay before and between them. */
static bool emit_pieces(const builtin_priv_t *bp, gen_ctx_t *ctx, const buf_t *text)
{
    if (!ctx->on_text && bp->delay_ms <= 0)
        return true; /* nobody takes the pieces, nothing waits between them (inline) */
    size_t pieces = 0;
    for (size_t at = 0; at < text->len; at = builtin_piece_end(text->data, text->len, at))
        pieces++;
    /* half of the delay before the first piece (a model's time to its first token),
     * the other half spread over the pieces */
    long lead = bp->delay_ms / 2;
    long each = pieces ? (bp->delay_ms - lead) / (long)pieces : 0;
    long first = bp->delay_ms - each * (long)(pieces ? pieces - 1 : 0);
    double last_beat = 0;
    if (pieces == 0)
        return test_sleep(ctx, bp->delay_ms, &last_beat);
    size_t at = 0;
    for (size_t k = 0; k < pieces; k++) {
        if (!test_sleep(ctx, k == 0 ? first : each, &last_beat))
            return false;
        size_t end = builtin_piece_end(text->data, text->len, at);
        if (ctx->on_text)
            ctx->on_text(ctx, text->data + at, end - at);
        at = end;
    }
    return true;
}

static bool should_fail(const builtin_priv_t *bp, const char *input)
{
    return bp->fail_pattern && bp->fail_pattern[0] && strstr(input, bp->fail_pattern);
}

/* A user's own template (API.md §18): the builtin generator knows no instruction, so
 * it writes freestyle text under the template's name as a Markdown heading (line
 * breaks in the name become spaces, so the heading stays one line). */
static void custom_heading(const char *name, buf_t *out)
{
    buf_puts(out, "## ");
    for (const char *s = name; *s; s++)
        buf_putc(out, *s == '\n' || *s == '\r' || *s == '\t' ? ' ' : *s);
    buf_puts(out, "\n\n");
}

static int builtin_text_call(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                             gen_result_t *res)
{
    const builtin_priv_t *bp = p->priv;
    if (should_fail(bp, req->action && req->text ? req->text : req->prompt)) {
        if (!test_delay(bp, ctx)) {
            snprintf(res->error, sizeof(res->error), "Generation was interrupted.");
            return -1;
        }
        snprintf(res->error, sizeof(res->error), "The generator could not write this document.");
        return -1;
    }
    test_busy(bp);
    if (req->action && req->text) { /* API.md §17 */
        if (builtin_action(req->action, req->text + req->sel_start, req->sel_end - req->sel_start,
                           req->text, req->sel_start, req->prompt, req->tone, &res->text) != 0) {
            snprintf(res->error, sizeof(res->error), "The builtin generator cannot do this action.");
            return -1;
        }
    } else {
        if (req->template_name)
            custom_heading(req->template_name, &res->text);
        builtin_text_styled(req->template_id, req->prompt, req->creativity, random_u64(),
                            req->tone, req->length, &res->text);
    }
    if (!emit_pieces(bp, ctx, &res->text)) {
        buf_reset(&res->text);
        snprintf(res->error, sizeof(res->error), "Generation was interrupted.");
        return -1;
    }
    return 0;
}

static int builtin_image_call(const provider_t *p, gen_ctx_t *ctx, const gen_image_req_t *req,
                              gen_result_t *res)
{
    const builtin_priv_t *bp = p->priv;
    if (!test_delay(bp, ctx)) {
        snprintf(res->error, sizeof(res->error), "Generation was interrupted.");
        return -1;
    }
    if (should_fail(bp, req->description)) {
        snprintf(res->error, sizeof(res->error), "The generator could not draw this picture.");
        return -1;
    }
    img_style_t st = STYLE_NONE;
    if (req->style && strcmp(req->style, "vivid") == 0)
        st = STYLE_VIVID;
    else if (req->style && strcmp(req->style, "natural") == 0)
        st = STYLE_NATURAL;
    if (builtin_image(req->description, req->width, req->height, st, &res->png) != 0) {
        snprintf(res->error, sizeof(res->error), "The picture could not be encoded.");
        return -1;
    }
    return 0;
}

static void *builtin_worker_new(const provider_t *p)
{
    return NULL;
}

static void builtin_worker_free(const provider_t *p, void *state)
{
}

static void builtin_destroy(provider_t *p)
{
    builtin_priv_t *bp = p->priv;
    free(bp->fail_pattern);
    free(bp);
    free(p);
}

provider_t *provider_builtin_new(const cfg_t *cfg)
{
    provider_t *p = xcalloc(1, sizeof(*p));
    builtin_priv_t *bp = xcalloc(1, sizeof(*bp));
    bp->delay_ms = cfg->builtin_delay_ms > 0 ? cfg->builtin_delay_ms : 0;
    bp->busy_ms = cfg->builtin_busy_ms > 0 ? cfg->builtin_busy_ms : 0;
    bp->fail_pattern = xstrdup(cfg->builtin_fail_pattern ? cfg->builtin_fail_pattern : "");
    p->name = "builtin";
    p->text_inline = bp->delay_ms == 0; /* the test delay sleeps: it goes through jobs */
    p->worker_new = builtin_worker_new;
    p->worker_free = builtin_worker_free;
    p->text = builtin_text_call;
    p->image = builtin_image_call;
    p->destroy = builtin_destroy;
    p->priv = bp;
    return p;
}

provider_t *provider_new(const cfg_t *cfg, char *err, size_t errlen)
{
    if (strcmp(cfg->provider, "builtin") == 0)
        return provider_builtin_new(cfg);
    if (strcmp(cfg->provider, "openai") == 0)
        return provider_openai_new(cfg, err, errlen);
    snprintf(err, errlen, "unknown provider '%s' (builtin or openai)", cfg->provider);
    return NULL;
}
