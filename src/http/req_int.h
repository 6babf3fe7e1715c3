/* req_int.h — the fields of a request (http_req_t), for src/http/ only.
 *
 * Outside src/http/ a request is opaque: the API reads and answers it through the
 * accessors of server.h (http_method, http_arena, http_resp...), so a field can change
 * here without anything above the server knowing. tests/run.sh ("layers") fails when a
 * file outside src/http/ includes this header or defines struct http_req. */
#ifndef INK_HTTP_REQ_INT_H
#define INK_HTTP_REQ_INT_H

#include "http/server.h"

struct MHD_Connection;

#define HTTP_MAX_HEADERS 12

struct http_req {
    arena_t arena;
    http_server_t *srv;
    void *app; /* http_opts_t.app */
    struct MHD_Connection *conn;
    const char *method;
    const char *path;  /* raw (not percent-decoded), without the query */
    const char *query; /* raw, after '?', "" when none */
    buf_t body;
    bool body_too_large; /* over max_body: the handler answers 413 (after auth) */
    char id[24]; /* request id for logs */
    char client[48]; /* the client's address once asked for ("" before: http_client_addr) */
    double started;
    int64_t user_id; /* 0 until authenticated */
    int metric_route; /* obs/metrics.h metrics_route_t, set by the handler (0 = other) */

    /* response */
    int status;
    buf_t resp;
    const char *content_type;
    const char *hdr_name[HTTP_MAX_HEADERS];
    const char *hdr_value[HTTP_MAX_HEADERS];
    int nhdr;
    int resp_fd;
    uint64_t resp_fd_size;
    bool responded;
    uint64_t bytes_out;
    struct http_stream *stream; /* a streamed response (http_respond_stream) */
    /* §26 (compress.h): never compress (an answer carrying a secret); the body coded
     * already by the handler (coding, when coded) */
    bool no_compress, coded;
    int coding;

    /* suspension */
    bool suspend_requested, resumed;
    http_suspended_fn on_suspended;
    http_resumed_fn on_resumed;
    void *wait;

    /* internal */
    bool seen, dispatched, counted, close_after;
    struct http_conn *hc;
    /* the request target as libmicrohttpd holds it (limits.h): where it starts in the
     * library's buffer and its length up to a NUL, to tell a NUL inside it */
    const char *target_at;
    size_t target_len;
    bool bad_target, too_many_params;
    bool spilled; /* the answer was sent from a spill file (http_opts_t.spill_dir) */
    bool released; /* a large answer's arena was given back once it was queued */

    void *app_state; /* the handler's own (http_set_app_state) */
};

#endif
