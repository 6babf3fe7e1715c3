/* server.c — libmicrohttpd glue. See server.h.
 *
 * Poll mode with a thread pool (MHD's epoll mode can hang a thread when a multiple
 * of 128 connections are ready at once). Connections are accepted by a thread of our
 * own (acceptor_main) as fast as they come and handed over with MHD_add_connection:
 * MHD's poll loop accepts one connection per turn, and a turn over a thousand open
 * connections takes long enough that the last of a burst of clients waited seconds
 * for its first answer while the others were served (the tail under many
 * connections). The raw request URI is taken from the URI
 * log callback, so path and query are decoded by our own strict decoders, not by
 * MHD's lenient ones. Bodies are collected by hand (MHD's post processor only
 * handles forms and drops data silently) up to max_body; beyond it, 413. The structs
 * are in server_int.h; trusted proxies and the drain's connection handling in
 * server_edge.c; streamed responses in server_stream.c. */
#include "http/server.h"
#include "http/server_int.h"

#include "core/json.h"
#include "core/thread.h"
#include "http/gate.h"
#include "http/heads.h"
#include "http/limits.h"
#include "http/proxies.h"
#include "core/log.h"
#include "obs/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* A new connection, at the acceptor: counted against the caps (limits.c), or answered
 * 503 and closed. A trusted proxy (§20) carries many clients' requests: it has no
 * per-address share, only the total. */
static bool admit_connection(http_server_t *s, int fd, const struct sockaddr *addr)
{
    int per = s->o.max_per_address > 0 ? s->o.max_per_address : (s->o.max_connections + 1) / 2;
    if (proxies_trusts(s->o.proxies, addr))
        per = s->o.max_connections + 1;
    return http_admit(s->ct, s->lingerer, fd, addr, per, s->o.max_connections);
}

/* Accepts every connection the kernel has, right away, and gives it to MHD. */
static void *acceptor_main(void *arg)
{
    http_server_t *s = arg;
    for (;;) {
        struct sockaddr_storage addr;
        socklen_t len = sizeof(addr);
        int fd = accept4(s->listen_fd, (struct sockaddr *)&addr, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                sleep_ms(10); /* out of descriptors: the backlog waits */
                continue;
            }
            break; /* EINVAL: shut down by http_quiesce / http_stop */
        }
        if (!admit_connection(s, fd, (struct sockaddr *)&addr))
            continue;
        gate_add(s->gate, fd, (struct sockaddr *)&addr, len); /* then to MHD (gate.h) */
    }
    return NULL;
}

/* The listening socket, bound but not yet listening: SO_REUSEADDR; an IPv6 socket takes
 * IPv4 too (IPV6_V6ONLY off) where the system allows it: [::]:PORT is both families; a
 * system that refuses the option keeps IPv6 alone. */
static int bind_socket(const struct sockaddr_storage *sa, socklen_t salen, uint16_t *port)
{
    int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int on = 1, off = 0;
    struct sockaddr_storage bound;
    socklen_t len = sizeof(bound);
    if (sa->ss_family == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        bind(fd, (const struct sockaddr *)sa, salen) != 0 ||
        getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                              : ((struct sockaddr_in *)&bound)->sin_port);
    return fd;
}

/* Stops accepting: the acceptor's accept() fails once the socket is shut down. */
static void stop_accepting(http_server_t *s)
{
    if (!s->accepting)
        return;
    shutdown(s->listen_fd, SHUT_RDWR);
    pthread_join(s->acceptor, NULL);
    close(s->listen_fd);
    s->listen_fd = -1;
    s->accepting = false;
}

static void conn_set_receiving(http_server_t *s, http_conn_t *hc, double since)
{
    if (!hc)
        return;
    pthread_mutex_lock(&s->conns_mu);
    hc->receiving_since = since;
    pthread_mutex_unlock(&s->conns_mu);
}

/* A request's own memory, and its count in flight. */
static void req_free(http_server_t *s, http_req_t *r)
{
    if (r->hc) {
        pthread_mutex_lock(&s->conns_mu);
        if (r->hc->req == r) {
            r->hc->req = NULL;
            r->hc->req_seen = false;
        }
        pthread_mutex_unlock(&s->conns_mu);
    }
    if (r->counted) {
        atomic_fetch_sub(&s->inflight, 1);
        metrics_http_done((metrics_route_t)r->metric_route, r->method, r->status,
                          mono_s() - r->started);
    }
    if (r->resp_fd >= 0)
        close(r->resp_fd);
    buf_free(&r->body);
    buf_free(&r->resp);
    arena_free(&r->arena);
    if (r->spilled || r->released) /* the watchdog gives what a large answer freed back */
        atomic_fetch_add(&s->streams_closed, 1);
    free(r);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    http_server_t *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        http_conn_t *hc = xcalloc(1, sizeof(*hc));
        hc->fd = ci ? ci->connect_fd : -1;
        heads_forget(hc->fd); /* (its first head was the gate's) */
        hc->receiving_since = mono_s();
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (ai && ai->client_addr) {
            size_t alen = ai->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                                 : sizeof(struct sockaddr_in);
            memcpy(&hc->addr, ai->client_addr, alen);
            hc->counted = true; /* admit_connection took its slot */
        }
        pthread_mutex_lock(&s->conns_mu);
        hc->next = s->conns;
        if (s->conns)
            s->conns->prev = hc;
        s->conns = hc;
        pthread_mutex_unlock(&s->conns_mu);
        *socket_context = hc;
    } else if (*socket_context) {
        http_conn_t *hc = *socket_context;
        heads_forget(hc->fd);
        if (hc->req && !hc->req->seen) /* seen by on_access: MHD completes it itself */
            req_free(s, hc->req);
        if (hc->counted)
            conn_table_release(s->ct, (struct sockaddr *)&hc->addr);
        pthread_mutex_lock(&s->conns_mu);
        if (hc->prev)
            hc->prev->next = hc->next;
        else
            s->conns = hc->next;
        if (hc->next)
            hc->next->prev = hc->prev;
        pthread_mutex_unlock(&s->conns_mu);
        free(hc);
        *socket_context = NULL;
    }
}

static void *watchdog_main(void *arg)
{
    http_server_t *s = arg;
    int trim_seen = 0;
    double trim_last = 0;
    while (!atomic_load(&s->stopping)) {
        sleep_ms(200);
        lingerer_tick(s->lingerer);
        double now = mono_s();
        http_streams_trim(s, now, &trim_seen, &trim_last);
        pthread_mutex_lock(&s->conns_mu);
        for (http_conn_t *hc = s->conns; hc; hc = hc->next) {
            if (hc->shut || hc->fd < 0 || hc->receiving_since == 0 ||
                now - hc->receiving_since < s->o.request_timeout)
                continue;
            /* MHD sees the end of the stream and closes the connection itself */
            shutdown(hc->fd, SHUT_RDWR);
            hc->shut = true;
            log_info("http: a client took over %d s to send its request; connection closed",
                     s->o.request_timeout);
        }
        pthread_mutex_unlock(&s->conns_mu);
    }
    return NULL;
}

/* ---- safety: request-line forms ---------------------------------------------------- */

/* An absolute-form request target (RFC 9112 §3.2.2, "GET http://host/path?q"): the
 * server answers it as its origin form ("/path?q"), ignoring the authority as the RFC
 * lets an origin server do. Other targets are returned as they are. */
static const char *origin_form(const char *uri)
{
    const char *p = uri;
    if (strncasecmp(p, "http://", 7) == 0)
        p += 7;
    else if (strncasecmp(p, "https://", 8) == 0)
        p += 8;
    else
        return uri;
    p += strcspn(p, "/?#");
    return *p == '/' || *p == '?' ? p : "/"; /* "http://host?q": the empty path, "/" */
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    http_server_t *s = cls;
    http_req_t *r = xcalloc(1, sizeof(*r));
    arena_init(&r->arena);
    buf_init(&r->body);
    buf_init(&r->resp);
    r->srv = s;
    r->app = s->o.app;
    r->conn = conn;
    r->resp_fd = -1;
    r->started = mono_s();
    r->target_at = uri;
    r->target_len = strlen(uri);
    if (http_target_bad(uri)) {
        /* nothing of it is kept: it is not logged and no handler sees it */
        r->bad_target = true;
        uri = "";
    }
    uri = origin_form(uri);
    const char *q = strchr(uri, '?');
    if (q) {
        r->path = q == uri ? "/" : arena_strndup(&r->arena, uri, (size_t)(q - uri));
        r->query = arena_strdup(&r->arena, q + 1);
        r->too_many_params = http_query_pieces(r->query) > HTTP_MAX_QUERY_PARAMS;
        /* libmicrohttpd would now split the query into its connection's memory pool
         * (a few hundred parameters exhaust it, and the connection was closed without
         * an answer); inkwell decodes r->query itself, so the library is given an empty
         * query: the byte after '?' in its own buffer becomes the end of the string. */
        ((char *)q)[1] = '\0';
    } else {
        r->path = arena_strdup(&r->arena, uri);
        r->query = "";
    }
    snprintf(r->id, sizeof(r->id), "%s-%llu", s->id_prefix,
             (unsigned long long)atomic_fetch_add(&s->seq, 1) + 1);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->hc = ci ? ci->socket_context : NULL;
    if (r->hc) {
        heads_forget(r->hc->fd); /* (a request read from the library's buffer) */
        pthread_mutex_lock(&s->conns_mu);
        r->hc->req = r;
        r->hc->req_seen = false;
        pthread_mutex_unlock(&s->conns_mu);
    }
    return r;
}

const char *http_header(http_req_t *r, const char *name)
{
    return r->conn ? MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name) : NULL;
}

void http_add_header(http_req_t *r, const char *name, const char *value)
{
    if (r->nhdr >= HTTP_MAX_HEADERS)
        return;
    r->hdr_name[r->nhdr] = arena_strdup(&r->arena, name);
    r->hdr_value[r->nhdr] = arena_strdup(&r->arena, value);
    r->nhdr++;
}

void http_respond(http_req_t *r, int status)
{
    r->status = status;
    r->responded = true;
}

void http_respond_fd(http_req_t *r, int status, int fd, uint64_t size, const char *ctype)
{
    r->status = status;
    r->resp_fd = fd;
    r->resp_fd_size = size;
    r->content_type = ctype;
    r->responded = true;
}

void http_suspend(http_req_t *r, http_suspended_fn on_suspended, http_resumed_fn on_resumed,
                  void *wait)
{
    r->suspend_requested = true;
    r->on_suspended = on_suspended;
    r->on_resumed = on_resumed;
    r->wait = wait;
}

void http_resume(http_req_t *r)
{
    r->resumed = true;
    MHD_resume_connection(r->conn);
}

static void plain_error(http_req_t *r, int status, const char *msg)
{
    buf_reset(&r->resp);
    buf_puts(&r->resp, "{\"message\":");
    json_escape(&r->resp, msg, strlen(msg));
    buf_printf(&r->resp, ",\"status\":%d}", status);
    http_respond(r, status);
}

static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/* A large answer moved from memory to an unnamed file in the spill directory (gone
 * when closed: nothing to sweep after a crash); the descriptor, or -1 to keep it in
 * memory (no directory, or no room: the answer is the same). */
static int spill(http_req_t *r)
{
    const char *dir = r->srv->o.spill_dir;
    if (!dir || r->resp.len < HTTP_SPILL_MIN)
        return -1;
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* a file system without O_TMPFILE: a named file, unlinked at once */
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/.spill-XXXXXX", dir) >= (int)sizeof(path))
            return -1;
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
            return -1;
        unlink(path);
    }
    size_t off = 0;
    while (off < r->resp.len) {
        ssize_t n = write(fd, r->resp.data + off, r->resp.len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    return fd;
}

/* After a large answer is queued, what the handler read to make it (rows in the
 * request's arena) is not kept while a slow client reads: the arena is replaced by one
 * holding only what the completion still reads (method and path, for the access log).
 * The handler is done with the request by then (it answered and will not be called
 * again); the headers were copied into libmicrohttpd's response. GET and HEAD only. */
#define HTTP_RELEASE_MIN (64 * 1024)

static void release_arena(http_req_t *r)
{
    arena_t keep;
    arena_init(&keep);
    r->method = r->method ? arena_strdup(&keep, r->method) : NULL;
    r->path = r->path ? arena_strdup(&keep, r->path) : NULL;
    r->query = "";
    r->nhdr = 0;
    r->app_state = NULL;
    r->wait = NULL;
    r->content_type = NULL;
    arena_free(&r->arena);
    r->arena = keep;
    r->released = true;
}

static enum MHD_Result send_response(http_req_t *r)
{
    struct MHD_Response *resp;
    bool vary = false;
    /* reads only: a create's state may still be another thread's until completion */
    bool large = !r->stream && r->resp_fd < 0 && r->resp.len >= HTTP_RELEASE_MIN && r->method &&
                 (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0);
    const char *coding = NULL;
    if (!r->stream && r->resp_fd < 0)
        coding = http_code_answer(r, &vary); /* §26: server_coding.c */
    if (r->stream) {
        resp = http_stream_response(r);
    } else if (r->resp_fd >= 0) {
        resp = MHD_create_response_from_fd64(r->resp_fd_size, r->resp_fd);
        r->bytes_out = r->resp_fd_size;
        r->resp_fd = -1; /* MHD owns it now */
    } else if (r->status == 304) {
        /* no Content-Length (RFC 9110 §8.6; libmicrohttpd would add 0, or chunked unless
         * HTTP/1.0-compatible, which closes the connection after it): design.md */
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64, no_body, NULL, NULL);
        if (resp)
            MHD_set_response_options(resp, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END);
    } else {
        size_t len = r->resp.len;
        r->bytes_out = len;
        int fd = spill(r);
        if (fd >= 0) {
            resp = MHD_create_response_from_fd64(len, fd);
            if (resp) {
                buf_free(&r->resp);
                r->spilled = true;
            } else
                close(fd);
        } else {
            resp = MHD_create_response_from_buffer(len, buf_steal(&r->resp), MHD_RESPMEM_MUST_FREE);
        }
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "application/json");
    for (int i = 0; i < r->nhdr; i++)
        MHD_add_response_header(resp, r->hdr_name[i], r->hdr_value[i]);
    if (vary)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
    if (coding)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, coding);
    if (r->close_after || atomic_load(&r->srv->draining))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    if (large && ret == MHD_YES)
        release_arena(r);
    return ret;
}

static bool declared_too_large(http_req_t *r, size_t max)
{
    const char *cl = http_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!cl)
        return false;
    char *end;
    unsigned long long n = strtoull(cl, &end, 10);
    return *end == '\0' && n > max;
}

typedef struct {
    int count;
    const char *first;
    bool differ;
} cl_scan_t;

static enum MHD_Result scan_cl(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    cl_scan_t *sc = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0)
        return MHD_YES;
    if (sc->count++ == 0)
        sc->first = value;
    else if (strcmp(sc->first, value) != 0)
        sc->differ = true;
    return MHD_YES;
}

/* Framing MHD lets through but a careful server refuses (request smuggling):
 * Content-Length with Transfer-Encoding, Content-Lengths that disagree, and
 * transfer codings other than chunked. True when the request is ambiguous. */
static bool ambiguous_framing(http_req_t *r)
{
    cl_scan_t sc = {0, NULL, false};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, scan_cl, &sc);
    const char *te = http_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (sc.differ)
        return true;
    if (te && (sc.count > 0 || strcasecmp(te, "chunked") != 0))
        return true;
    return false;
}

/* A body over max_body: the handler answers 413 after auth and the rate limit (§7). */
static enum MHD_Result too_large(http_server_t *s, http_req_t *r)
{
    r->body_too_large = true;
    r->dispatched = true;
    s->o.handler(s->o.app, r);
    if (!r->responded)
        plain_error(r, 413, "Payload too large.");
    return send_response(r);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_size, void **con_cls)
{
    http_server_t *s = cls;
    http_req_t *r = *con_cls;
    if (!r)
        return MHD_NO;
    if (!r->seen) {
        r->seen = true;
        if (r->hc) {
            pthread_mutex_lock(&s->conns_mu);
            r->hc->req_seen = true;
            pthread_mutex_unlock(&s->conns_mu);
        }
        r->method = arena_strdup(&r->arena, method);
        r->counted = true;
        atomic_fetch_add(&s->inflight, 1);
        metrics_http_begin();
        const char *msg;
        int refused = http_refused_head(r, url, version, &msg);
        if (refused) {
            plain_error(r, refused, msg);
            r->dispatched = true;
            r->close_after = true;
            return send_response(r);
        }
        if (ambiguous_framing(r)) {
            plain_error(r, 400, "Bad request.");
            r->dispatched = true;
            r->close_after = true;
            return send_response(r);
        }
        if (declared_too_large(r, s->o.max_body))
            return too_large(s, r);
        return MHD_YES;
    }
    if (*upload_size) {
        if (!r->body_too_large) {
            if (r->body.len + *upload_size > s->o.max_body) {
                r->body_too_large = true;
                buf_free(&r->body);
            } else {
                buf_append(&r->body, upload_data, *upload_size);
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    conn_set_receiving(s, r->hc, 0); /* the whole request is here */
    if (r->resumed) {
        r->resumed = false;
        r->on_resumed(s->o.app, r);
    } else if (!r->dispatched) {
        if (r->body_too_large)
            return too_large(s, r);
        r->dispatched = true;
        s->o.handler(s->o.app, r);
    } else {
        return MHD_YES; /* answered already */
    }
    if (r->suspend_requested) {
        r->suspend_requested = false;
        MHD_suspend_connection(conn);
        r->on_suspended(r);
        return MHD_YES;
    }
    if (!r->responded) {
        log_error("req=%s: handler gave no response", r->id);
        plain_error(r, 500, "Server error.");
    }
    return send_response(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    http_server_t *s = cls;
    http_req_t *r = *con_cls;
    if (!r)
        return;
    if (log_level >= LOG_INFO && r->method) {
        char path[256];
        http_log_path(r->bad_target ? "(invalid)" : r->path, path, sizeof(path));
        log_write(LOG_INFO,
                  "access id=%s addr=%s user=%lld method=%s path=\"%s\" status=%d bytes=%llu ms=%.2f%s",
                  r->id, http_client_addr(r), (long long)r->user_id, r->method, path, r->status,
                  (unsigned long long)r->bytes_out, (mono_s() - r->started) * 1000.0,
                  toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " aborted=1");
    }
    if (r->resumed && !r->responded && r->on_resumed) {
        /* Woken, but the connection ended before its answer was made: libmicrohttpd
         * reads a resumed connection before it calls us again, and closes it on a
         * client's half-close. The answer is made all the same (no client reads it),
         * so that what ends with it ends (records_create_finish: an idempotency key
         * keeps the answer for the client's retry). on_resumed always answers: it
         * never suspends again. */
        r->resumed = false;
        r->on_resumed(s->o.app, r);
    }
    if (r->hc) { /* a keep-alive connection's next request */
        if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
            heads_expect(r->hc->fd); /* its request line: heads.h */
        pthread_mutex_lock(&s->conns_mu);
        r->hc->receiving_since = mono_s();
        r->hc->served = true;
        pthread_mutex_unlock(&s->conns_mu);
    }
    req_free(s, r);
    *con_cls = NULL;
}

/* HOST:PORT, [IPV6]:PORT or :PORT (every IPv4 address). HOST: an IPv4 address or
 * localhost (127.0.0.1). */
static int parse_listen(const char *listen, struct sockaddr_storage *sa, socklen_t *salen,
                        char *err, size_t errlen)
{
    const char *colon = strrchr(listen, ':');
    char host[64];
    bool v6 = listen[0] == '[';
    if (v6) {
        const char *close_br = strchr(listen, ']');
        if (!close_br || close_br[1] != ':' || (size_t)(close_br - listen - 1) >= sizeof(host)) {
            snprintf(err, errlen, "listen must be HOST:PORT or [IPV6]:PORT");
            return -1;
        }
        memcpy(host, listen + 1, (size_t)(close_br - listen - 1));
        host[close_br - listen - 1] = '\0';
        colon = close_br + 1;
    } else {
        if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
            snprintf(err, errlen, "listen must be HOST:PORT or [IPV6]:PORT");
            return -1;
        }
        memcpy(host, listen, (size_t)(colon - listen));
        host[colon - listen] = '\0';
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || port < 0 || port > 65535) {
        snprintf(err, errlen, "bad port in listen address");
        return -1;
    }
    memset(sa, 0, sizeof(*sa));
    if (v6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *salen = sizeof(*a6);
        if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1) {
            snprintf(err, errlen, "listen host in brackets must be an IPv6 address");
            return -1;
        }
        return 0;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *salen = sizeof(*a4);
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &a4->sin_addr) != 1) {
        snprintf(err, errlen, "listen host must be an IPv4 address or [IPV6]");
        return -1;
    }
    return 0;
}

/* Each connection's memory pool holds its request line, headers and their index, and
 * the answer's headers. The first head of a connection is checked by the gate (gate.h)
 * whatever its size, and the query is not parsed into the pool (on_uri); so the pool
 * only bounds a kept-alive connection's later heads, which must fit HTTP_MAX_HEAD with
 * room for the index of their lines and the answer. libmicrohttpd zeroes the whole
 * pool for every request of a kept-alive connection, and half of it again when the
 * read buffer shrinks: 32 KiB (its default) cost `show` ~5 % of its throughput
 * against 16 KiB (docs/benchmarks.md). 20 KiB serves a later head of 16 KiB in up to
 * ~50 lines and answers inkwell's JSON 431 above 16 KiB up to ~20 KB (docs/status.md
 * says what is beyond; tests/http/test_hostile.py). */
#define HTTP_CONN_MEMORY (20 * 1024)

int http_bind(const char *listen, uint16_t *port, char *err, size_t errlen)
{
    struct sockaddr_storage sa;
    socklen_t salen;
    if (parse_listen(listen, &sa, &salen, err, errlen) != 0)
        return -1;
    int fd = bind_socket(&sa, salen, port);
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on %s: %s", listen, strerror(errno));
    return fd;
}

http_server_t *http_start(const http_opts_t *o, int fd, char *err, size_t errlen)
{
    struct sockaddr_storage bound;
    socklen_t len = sizeof(bound);
    /* the kernel's largest backlog: connections queue from here on */
    if (listen(fd, SOMAXCONN) != 0 || getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", o->listen, strerror(errno));
        close(fd);
        return NULL;
    }
    http_server_t *s = xcalloc(1, sizeof(*s));
    s->o = *o;
    random_hex(s->id_prefix, 3);
    pthread_mutex_init(&s->conns_mu, NULL);
    s->ct = conn_table_new();
    s->lingerer = lingerer_new();
    s->listen_fd = fd;
    s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    /* one thread is no pool: the option would only make the library warn */
    struct MHD_OptionItem pool[] = {
        {o->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t)o->threads, NULL},
        {MHD_OPTION_END, 0, NULL}};
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, s, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_ARRAY, pool,
        /* the caps are inkwell's (admit_connection answers 503); the library's are a
         * backstop above them */
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)o->max_connections + 64,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->connection_timeout, MHD_OPTION_END);
    if (s->d)
        s->gate = gate_start(s->d, s->ct, s->lingerer, o->request_timeout);
    heads_start(s->lingerer);
    /* the watchdog enforces --request-timeout: no server without it */
    bool watchdog = s->d && s->gate && thread_start(&s->watchdog, "ink-watchdog", watchdog_main, s);
    if (!watchdog || !thread_start(&s->acceptor, "ink-acceptor", acceptor_main, s)) {
        if (watchdog) {
            atomic_store(&s->stopping, true);
            pthread_join(s->watchdog, NULL);
        }
        gate_stop(s->gate);
        snprintf(err, errlen, "cannot serve on %s", o->listen);
        if (s->d)
            MHD_stop_daemon(s->d);
        heads_stop(s->lingerer);
        close(s->listen_fd);
        pthread_mutex_destroy(&s->conns_mu);
        conn_table_free(s->ct);
        lingerer_free(s->lingerer);
        free(s);
        return NULL;
    }
    s->accepting = true;
    return s;
}

uint16_t http_port(http_server_t *s)
{
    return s->port;
}

void http_quiesce(http_server_t *s)
{
    stop_accepting(s);
    atomic_store(&s->draining, true);
    http_close_idle(s);
}

int http_inflight(http_server_t *s)
{
    return atomic_load(&s->inflight);
}

void http_stop(http_server_t *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    pthread_join(s->watchdog, NULL);
    stop_accepting(s);
    gate_stop(s->gate);
    http_streams_end_all(s);
    for (int i = 0; i < 200 && atomic_load(&s->nstreams) > 0; i++)
        sleep_ms(10); /* let them be written out and closed */
    MHD_stop_daemon(s->d);
    heads_stop(s->lingerer);
    pthread_mutex_destroy(&s->conns_mu);
    conn_table_free(s->ct);
    lingerer_free(s->lingerer);
    free(s);
}
