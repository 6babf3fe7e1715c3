/* provider.c — result helpers, the builtin provider, and the choice by name.
 *
 * The builtin provider wraps builtin_text/builtin_image. Two settings exist only
 * for tests and demos: builtin_delay_ms makes every generation take that long
 * (heartbeating, so leases hold), and builtin_fail_pattern makes a generation whose
 * prompt or description contains that text fail. */
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
    char *fail_pattern;
} builtin_priv_t;

/* The test delay, in slices so the lease is renewed and a lost job stops early.
 * Returns false when the job is no longer ours. */
static bool test_delay(const builtin_priv_t *bp, gen_ctx_t *ctx)
{
    for (long left = bp->delay_ms; left > 0; left -= 100) {
        sleep_ms(left < 100 ? (int)left : 100);
        if (ctx->heartbeat && !ctx->heartbeat(ctx))
            return false;
    }
    return true;
}

static bool should_fail(const builtin_priv_t *bp, const char *input)
{
    return bp->fail_pattern && bp->fail_pattern[0] && strstr(input, bp->fail_pattern);
}

static int builtin_text_call(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                             gen_result_t *res)
{
    const builtin_priv_t *bp = p->priv;
    if (!test_delay(bp, ctx)) {
        snprintf(res->error, sizeof(res->error), "Generation was interrupted.");
        return -1;
    }
    if (should_fail(bp, req->prompt)) {
        snprintf(res->error, sizeof(res->error), "The generator could not write this document.");
        return -1;
    }
    builtin_text(req->template_id, req->prompt, req->creativity, random_u64(), &res->text);
    if (ctx->on_text && res->text.len) /* TODO(issue 11): pieces as they are written */
        ctx->on_text(ctx, res->text.data, res->text.len);
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
