/* provider.h — the generator interface. The builtin generator (provider.c)
 * and the OpenAI-compatible client (openai.c) implement provider_t; the job workers
 * (jobs.c) call it and never know which one runs.
 *
 * Each worker thread owns one worker state (worker_new), e.g. a libcurl handle, so
 * connections are reused. A call returns 0 with its result, or -1 with a short
 * message fit for the user in res->error (never a provider body, key or path). */
#ifndef INK_PROVIDER_H
#define INK_PROVIDER_H

#include "core/config.h"
#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct gen_ctx gen_ctx_t;
struct gen_ctx {
    int64_t job_id;      /* for log lines */
    void *worker_state;  /* from provider->worker_new */
    /* Long calls call this at least every few seconds: it renews the job's lease.
     * Returns false when the job is no longer ours (deleted, or taken over) or the
     * server is stopping: the provider should give up at once. */
    bool (*heartbeat)(gen_ctx_t *ctx);
    void *heartbeat_arg;
    /* Optional (NULL = nobody listens): a text generator calls it with each next
     * piece of the text as it is written, in order, from the generating thread
     * (for the openai provider, from inside its HTTP transfer: keep it short). A
     * piece is never empty and never splits a UTF-8 character, and on success the
     * pieces joined are exactly the final res->text. Once a piece has been passed
     * on, the provider never takes it back: a failure after that fails the
     * generation (no retry that could write different text). Reasoning a model
     * writes is never passed on. With on_text NULL nothing counts as passed on, so
     * a provider may retry from scratch at any point. */
    void (*on_text)(gen_ctx_t *ctx, const char *piece, size_t len);
    void *on_text_arg;
};

typedef struct {
    int template_id;
    const char *prompt;
    double creativity;
    /* A user's own template (API.md §18; template_id 1001 and up): its instruction, what
     * the model is told instead of a builtin template's, and its name (the builtin
     * generator writes freestyle text under it). NULL for the 52 (gen/templates.h). */
    const char *instruction;
    const char *template_name;
} gen_text_req_t;

typedef struct {
    const char *description;
    int width, height;
    const char *style; /* "vivid" | "natural" | NULL */
} gen_image_req_t;

typedef struct {
    buf_t text;           /* text: the generated text */
    buf_t png;            /* image: a whole PNG file */
    char *revised_prompt; /* image: malloc'd, or NULL */
    /* text: the provider's token usage (-1 when it did not say, and always for the
     * builtin generator) and whether the model stopped at its output limit
     * (finish_reason "length": the text is kept, but ends mid-way). */
    int64_t prompt_tokens, completion_tokens;
    bool truncated;
    char error[256];      /* on failure: why, in words for the user */
} gen_result_t;

void gen_result_init(gen_result_t *r);
void gen_result_free(gen_result_t *r);

typedef struct provider provider_t;
struct provider {
    const char *name;
    /* text() is local, takes well under a millisecond, never blocks and needs no
     * worker state: a creating request that waits may call it itself (ctx with no
     * worker state and no heartbeat) and store the finished document in one
     * transaction, instead of queueing a job for a worker. */
    bool text_inline;
    void *(*worker_new)(const provider_t *p);
    void (*worker_free)(const provider_t *p, void *state);
    int (*text)(const provider_t *p, gen_ctx_t *ctx, const gen_text_req_t *req,
                gen_result_t *res);
    int (*image)(const provider_t *p, gen_ctx_t *ctx, const gen_image_req_t *req,
                 gen_result_t *res);
    void (*destroy)(provider_t *p);
    void *priv;
};

provider_t *provider_builtin_new(const cfg_t *cfg);
/* NULL with err set when the settings are unusable (e.g. no base URL). err never
 * contains the API key. */
provider_t *provider_openai_new(const cfg_t *cfg, char *err, size_t errlen);
/* By cfg->provider. */
provider_t *provider_new(const cfg_t *cfg, char *err, size_t errlen);

#endif
