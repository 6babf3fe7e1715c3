/* server_int.h — what server.c, server_stream.c and server_edge.c share (for them only): the server,
 * its connections and its streams. */
#ifndef INK_HTTP_SERVER_INT_H
#define INK_HTTP_SERVER_INT_H

#include "http/gate.h"
#include "http/limits.h"
#include "http/req_int.h"
#include "http/server.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* One per TCP connection, for the request deadline: receiving_since is when the
 * connection began (or its previous request ended) and is cleared once a whole
 * request has arrived. The watchdog shuts down the socket of a connection that has
 * been receiving one request for longer than request_timeout — a client trickling a
 * byte at a time keeps MHD's idle timeout from firing, but not this. */
typedef struct http_conn {
    struct http_conn *prev, *next;
    int fd;
    double receiving_since; /* 0 = not receiving */
    bool shut;
    /* the request whose URI arrived and that has not completed yet: libmicrohttpd
     * calls no completion for a request it refuses before the handler ever saw it (e.g.
     * its headers overflow the connection's memory), so the close frees it */
    struct http_req *req;
    bool req_seen; /* req reached the handler (on_access) */
    struct sockaddr_storage addr; /* counted in the server's conn_table until the close */
    bool counted;
    bool served; /* a request was answered on it (a keep-alive connection, idle between) */
    /* req, req_seen, served, shut and receiving_since are read by other threads (the
     * watchdog, a drain): they change under the server's conns_mu only */
} http_conn_t;

struct http_stream {
    struct http_stream *prev, *next; /* the server's open streams */
    http_server_t *srv;
    struct MHD_Connection *conn;
    http_stream_cb_t cb;
    pthread_mutex_t mu;
    buf_t out;
    size_t out_off;
    bool woken, suspended, ended;
};

struct http_server {
    struct MHD_Daemon *d;
    http_stream_t *streams;
    atomic_int nstreams;
    atomic_int streams_closed; /* ever (streams closed, large answers spilled): the
                                * watchdog trims the heap after some */
    http_opts_t o;
    atomic_int inflight;
    atomic_ullong seq;
    char id_prefix[8];
    pthread_mutex_t conns_mu;
    http_conn_t *conns;
    pthread_t watchdog;
    atomic_bool stopping;
    atomic_bool draining; /* SIGTERM: answers close their connection, /readyz is 503 */
    int listen_fd;
    uint16_t port;
    pthread_t acceptor;
    bool accepting; /* the acceptor thread runs (until http_quiesce or http_stop) */
    conn_table_t *ct;     /* connections per client address (limits.c) */
    lingerer_t *lingerer; /* connections answered 503 by the acceptor, being closed */
    gate_t *gate;         /* new connections until their first request line is here */
};

/* server_stream.c: the response of a streamed request (NULL on failure; the stream is
 * then closed); ends every open stream (the server is stopping); and, in the watchdog,
 * gives back what closed streams freed (seen and last: the watchdog's own state). */
struct MHD_Response *http_stream_response(http_req_t *r);
void http_streams_end_all(http_server_t *s);
void http_streams_trim(http_server_t *s, double now, int *seen, double *last);

/* server_coding.c (§26): before a buffered answer is made into a response — compresses
 * its body when it should (or takes the handler's coded body), codes its ETag, turns a
 * 200 whose final ETag If-None-Match lists into a 304. Returns the Content-Encoding to
 * send (NULL: none) and sets *vary when the answer's type is compressible. */
const char *http_code_answer(http_req_t *r, bool *vary);

/* server_edge.c: the client address behind trusted proxies and the drain's connection
 * handling. */
/* Shuts down the keep-alive connections idle between two requests. */
void http_close_idle(http_server_t *s);

#endif
