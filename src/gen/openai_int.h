/* openai_int.h — what the two files of the OpenAI-compatible provider share, and
 * nothing else includes: its settings (openai_priv_t), the state of one logical call
 * (call_t), the messages for users, and the call machinery of openai_call.c (one POST
 * with its retries) that openai.c's text and image calls use. */
#ifndef INK_OPENAI_INT_H
#define INK_OPENAI_INT_H

#include "gen/chat_stream.h"
#include "gen/provider.h"

#include <curl/curl.h>
#include <stdbool.h>

#define CONNECT_TIMEOUT_CAP_MS 10000L
#define CHAT_BODY_CAP ((size_t)4 << 20)   /* a plain answer, and the text itself */
#define CHAT_STREAM_CAP ((size_t)64 << 20) /* a streamed answer on the wire */
#define IDLE_TIMEOUT_S 30.0 /* silence allowed between two stream chunks, by default */
#define IMAGE_BODY_CAP ((size_t)32 << 20)

#define MSG_INTERRUPTED "Generation was interrupted."
#define MSG_BUSY "The AI provider is busy (rate limited); please try again later."
#define MSG_QUOTA "The AI provider account has no quota left."
#define MSG_TIMEOUT "The AI provider did not answer in time."
#define MSG_UNREACHABLE "The AI provider could not be reached."
#define MSG_INVALID "The AI provider returned an invalid response."
#define MSG_TOO_LARGE "The AI provider returned an answer that is too large."
#define MSG_TLS "The AI provider's TLS certificate could not be verified."
#define MSG_REDIRECT "The AI provider answered with a redirect; check the base URL."
#define MSG_KEY "The AI provider rejected the API key."
#define MSG_POLICY "The AI provider refused this request under its content policy."
#define MSG_NO_TEXT "The AI provider returned no text."
#define MSG_URL_ONLY                                                                           \
    "The AI provider returned a link instead of the picture; it must support base64 images."
#define MSG_BAD_PNG "The AI provider returned a picture that is not a valid PNG."
#define MSG_ENCODE "The request could not be encoded for the AI provider."
#define MSG_STREAM_ERROR "The AI provider reported an error while writing the text."
#define MSG_CUT "The AI provider stopped before the text was finished."
#define MSG_REASONING "The AI model mixed its reasoning into the text; please try again."

typedef struct {
    char *chat_url;
    char *images_url;
    char *auth_header; /* "Authorization: Bearer KEY", or NULL when there is no key */
    char *text_model;
    char *image_model;
    long timeout_ms;
    long connect_timeout_ms;
    long max_tokens; /* <= 0: not sent */
    double idle_s;   /* a stream silent this long after its first byte is dropped */
    /* Learnt from answers, for the life of the process (any worker thread): */
    bool no_stream_options; /* the server refused stream_options */
    bool hold_untagged;     /* the model opens its reasoning without <think> */
} openai_priv_t;

typedef struct {
    CURL *curl;
} openai_worker_t;

/* The state of one logical call, shared with the libcurl callbacks. */
typedef enum { OUT_DONE, OUT_RETRY, OUT_FAIL, OUT_RESEND } outcome_t;

typedef struct call call_t;
struct call {
    gen_ctx_t *ctx;
    CURL *curl;
    const char *what; /* "chat" or "images", for log lines */
    buf_t body;       /* a plain (not streamed) answer */
    size_t cap;       /* ... at most this long */
    size_t wire_cap;  /* any answer, streamed or not */
    bool too_large;
    bool stopped;       /* the heartbeat said stop */
    double last_beat;   /* mono_s() of the last heartbeat (or of the start) */
    double retry_after; /* seconds the server asked for, < 0 when it did not */
    /* text calls: the stream, and what happened to it in this attempt */
    chat_stream_t *cs;
    bool ct_sse;        /* the answer's Content-Type is text/event-stream */
    bool mode_known;    /* whether it streams was decided at its first byte */
    bool sse;           /* it streams: bytes go to cs */
    bool stream_failed; /* cs refused what came (cs->error says why) */
    bool idle;          /* the stream fell silent for idle_s */
    bool over;          /* [DONE] came and the body did not end: stopped, whole */
    double idle_s;
    double last_data;   /* mono_s() of the last bytes of the answer */
    bool sent_stream_options;
    size_t passed;      /* bytes passed to ctx->on_text: once > 0, no retry */
    /* 2xx answers of text calls: done, retry or fail (NULL for images) */
    outcome_t (*finish)(call_t *c, char *msg, size_t msglen);
};

void openai_call_init(call_t *c, gen_ctx_t *ctx, const char *what, size_t cap);
/* POSTs json to url. On success returns 0 with the 2xx body in c->body (or, for a
 * streamed text, its text in the stream's buffer); 1 when the server refused
 * stream_options (send again without); otherwise -1 with res->error set. */
int openai_post_json(const openai_priv_t *op, gen_ctx_t *ctx, const char *url,
                     const char *json, call_t *c, gen_result_t *res);
/* Why a stream failed (chat_stream refused what came): the message and the outcome. */
outcome_t openai_stream_outcome(call_t *c, char *msg, size_t msglen);

#endif
