/* server.h — the HTTP server: libmicrohttpd in poll mode with a thread pool.
 *
 * A request is an http_req_t with its own arena, opaque outside src/http/ (its fields
 * are in req_int.h): the handler reads it and builds its answer through the accessors
 * below. The handler fills in a response (http_respond / http_respond_fd /
 * http_respond_stream) or suspends the request (http_suspend):
 * the connection then leaves MHD's loop, costs no thread, and comes back when some
 * other thread calls http_resume(); MHD then calls the on_resumed callback in one
 * of its threads, which must respond (or suspend again). */
#ifndef INK_HTTP_SERVER_H
#define INK_HTTP_SERVER_H

#include "core/util.h"
#include "http/compress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct http_server http_server_t;
typedef struct http_req http_req_t;

typedef void (*http_handler_fn)(void *app, http_req_t *r);
typedef void (*http_resumed_fn)(void *app, http_req_t *r);
typedef void (*http_suspended_fn)(http_req_t *r);

typedef struct {
    const char *listen; /* HOST:PORT; PORT may be 0 */
    int threads;
    int max_connections;
    int connection_timeout; /* seconds of silence before a connection is closed */
    int request_timeout;    /* seconds a client may take to send one whole request */
    size_t max_body;
    http_handler_fn handler;
    void *app;
    /* Most connections at once from one client address (0: half of max_connections), so
     * that one client cannot hold every connection; a connection beyond it, or beyond
     * max_connections, is answered 503 with Retry-After by the acceptor and closed
     * (http/limits.h). */
    int max_per_address;
    /* --trusted-proxies (http/proxies.h; NULL or empty: none). With some, a request's
     * client address comes from X-Forwarded-For when its peer is trusted, and the
     * per-address cap is the server's own, trusted proxies exempt. */
    struct proxies *proxies;
    /* A directory where answers of HTTP_SPILL_MIN bytes or more are kept, unnamed, while
     * they are sent (NULL: in memory): a slow client of a large answer (a list page of
     * long documents) then holds a file in the kernel's page cache, not the process's
     * memory (issue 25 item 6). */
    const char *spill_dir;
} http_opts_t;

#define HTTP_SPILL_MIN (256 * 1024)

/* Binds --listen's address without listening yet (a port that is taken is found before
 * the database is opened) and gives the port bound (PORT 0: the kernel's choice, which
 * the server's own links then carry). Returns the socket, or -1 with err. */
int http_bind(const char *listen, uint16_t *port, char *err, size_t errlen);
/* Listens on fd (http_bind's; taken over, closed on failure) and serves. */
http_server_t *http_start(const http_opts_t *o, int fd, char *err, size_t errlen);
uint16_t http_port(http_server_t *s);
/* SIGTERM: from now on every answer closes its connection (a proxy keeps none in its
 * pool) and http_draining is true (/readyz answers 503). */
void http_drain(http_server_t *s);
bool http_draining(http_server_t *s);
/* Stops accepting new connections (drains too) and closes the idle keep-alive ones. */
void http_quiesce(http_server_t *s);
/* Connections that have a request in progress (its head read), unread bytes (a request
 * on its way), or
 * were opened less than a second ago without a request yet: a drain waits for them. */
int http_connections_busy(http_server_t *s);
/* Requests that have started and not yet been answered (suspended ones included). */
int http_inflight(http_server_t *s);
void http_stop(http_server_t *s);

/* ---- the request (what the handler reads) ---- */

/* The request's arena: everything allocated in it is freed with the request. */
arena_t *http_arena(http_req_t *r);
/* "GET", "POST"... as the client sent it (HEAD included). */
const char *http_method(const http_req_t *r);
/* The path, raw (not percent-decoded), without the query. */
const char *http_path(const http_req_t *r);
/* The query, raw, after '?'; "" when none. */
const char *http_query(const http_req_t *r);
/* The body as received (*len bytes; NULL when there is none). */
const char *http_body(const http_req_t *r, size_t *len);
/* True when the body was over max_body (and dropped): the handler answers 413 after
 * authentication (§7). */
bool http_body_too_large(const http_req_t *r);
/* The request id for logs ("a1b2c3-17"). */
const char *http_req_id(const http_req_t *r);
/* The server that received the request (for http_draining). */
http_server_t *http_req_server(http_req_t *r);
/* http_opts_t.app, for a callback that has only the request (http_suspended_fn). */
void *http_app(http_req_t *r);
/* The user the handler authenticated (0 until then), for the access log. */
int64_t http_user_id(const http_req_t *r);
void http_set_user_id(http_req_t *r, int64_t user_id);
/* The request's route for the metrics (obs/metrics.h metrics_route_t; 0 = other). */
void http_set_metric_route(http_req_t *r, int route);
/* The wait argument of the last http_suspend (for on_suspended and on_resumed). */
void *http_wait(http_req_t *r);
/* One pointer the handler keeps with the request for its own state (NULL until set;
 * the server never reads it): e.g. allocated in http_arena, so freed with it. */
void http_set_app_state(http_req_t *r, void *state);
void *http_app_state(http_req_t *r);

/* ---- the answer ---- */

/* The response body being built; http_respond sends it. */
buf_t *http_resp(http_req_t *r);
/* The response's Content-Type (NULL: application/json); the string is not copied. */
void http_set_content_type(http_req_t *r, const char *content_type);
/* The status answered so far (0 = none) and whether the handler has answered. */
int http_status(const http_req_t *r);
bool http_responded(const http_req_t *r);

/* A request no connection carries, for unit tests and fuzzers of handlers' pieces:
 * method, path, query and body as given (copied), no headers (http_header answers
 * NULL); it is answered like any other (http_status, http_resp) and must not be
 * suspended or streamed. Freed with http_req_free_detached. */
http_req_t *http_req_detached(const char *method, const char *path, const char *query,
                              const void *body, size_t len);
void http_req_free_detached(http_req_t *r);

/* The client's address as text: the peer's, or the one a trusted proxy forwarded
 * (http/proxies.h). For the access log and the per-address limits. */
const char *http_client_addr(http_req_t *r);
/* Request header value or NULL (case-insensitive name). */
const char *http_header(http_req_t *r, const char *name);
/* Adds a response header; both strings are copied. */
void http_add_header(http_req_t *r, const char *name, const char *value);
/* Responds with http_resp(r) as the body (application/json unless a content type is set). */
void http_respond(http_req_t *r, int status);
/* §26 compression (http/compress.h). The server compresses a buffered answer of a
 * compressible type of HTTP_COMPRESS_MIN bytes or more with the coding the client's
 * Accept-Encoding picks, adds `Vary: Accept-Encoding` to every answer of a compressible
 * type, adds the coding to the answer's ETag ("<tag>-gzip") and answers 304 for a 200
 * whose coded ETag If-None-Match lists.
 * http_set_no_compress: this answer is never compressed — every handler whose answer
 * carries a key, a session id or a secret calls it (key creation, sessions, webhook
 * secrets). */
void http_set_no_compress(http_req_t *r);
/* The coding this request's Accept-Encoding picks (http_coding_pick). */
http_coding_t http_req_coding(http_req_t *r);
/* The handler put a body already coded with c in http_resp (a copy compressed once):
 * the server sends it as it is, with Content-Encoding and the coded ETag. */
void http_set_content_coding(http_req_t *r, http_coding_t c);
/* True when If-None-Match lists etag as an answer of this request of that type (NULL:
 * JSON) would carry it when compressed (a handler's early 304, before it makes the body; the server checks the
 * answer's final ETag again). */
bool http_if_none_match(http_req_t *r, const char *etag, const char *content_type);
/* Responds with a file; the server closes fd. */
void http_respond_fd(http_req_t *r, int status, int fd, uint64_t size, const char *ctype);
/* Suspends after the handler returns; on_suspended runs right after the connection
 * is suspended (register with whatever will resume it there). */
void http_suspend(http_req_t *r, http_suspended_fn on_suspended, http_resumed_fn on_resumed,
                  void *wait);
/* From any thread, once per suspension. */
void http_resume(http_req_t *r);

/* Streamed responses (e.g. Server-Sent Events): the status and headers go out at
 * once, the body as it is produced, with no thread held while there is nothing to
 * send (the connection is suspended and woken by http_stream_wake).
 *
 * on_work runs in an HTTP thread: first when the response starts, then after each
 * http_stream_wake, and it is the only place to call http_stream_write and
 * http_stream_end. on_close runs once, in an HTTP thread, when the response is over
 * (ended, the client went away, or the server stops); after it nothing of the
 * stream is called again and the stream is gone.
 *
 * on_work is only called once what it wrote before has all been read by the client
 * (or taken by the kernel): a producer with much to send (a long text) writes a window
 * of it, calls http_stream_wake, and is called again for the next window when the
 * client has read this one, so a slow client holds a window, not the whole answer. */
typedef struct http_stream http_stream_t;
typedef struct {
    void (*on_work)(void *arg, http_stream_t *st);
    void (*on_close)(void *arg);
    void *arg;
} http_stream_cb_t;
/* Responds with a stream (chunked, Content-Type ctype, the headers added so far). */
http_stream_t *http_respond_stream(http_req_t *r, int status, const char *ctype,
                                   const http_stream_cb_t *cb);
void http_stream_write(http_stream_t *st, const char *data, size_t len);
void http_stream_end(http_stream_t *st);
/* From any thread: on_work will be called soon. */
void http_stream_wake(http_stream_t *st);
/* Streamed responses open now (for figures and tests). */
int http_streams_open(http_server_t *s);

#endif
