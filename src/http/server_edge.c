/* server_edge.c — the HTTP server's edges with the deployment around it (API.md §20):
 * the client address behind trusted proxies (http/proxies.h; the per-address connection
 * cap that exempts them is server.c's admit_connection), and the drain's handling of connections (answers
 * that close their connection, idle keep-alive connections closed, busy ones counted). */
#include "http/server_int.h"

#include "core/log.h"
#include "http/proxies.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* ---- trusted proxies: the client address ---- */

typedef struct {
    buf_t b;
    int n;
} xff_join_t;

static enum MHD_Result join_xff(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    xff_join_t *j = cls;
    if (strcasecmp(key, "X-Forwarded-For") != 0 || !value)
        return MHD_YES;
    if (j->n++ > 0)
        buf_puts(&j->b, ",");
    buf_puts(&j->b, value);
    return MHD_YES;
}

/* r->client: the peer, or the address a trusted proxy forwarded (every
 * X-Forwarded-For header, in order, as one list). Made when first asked for (the
 * access log, a per-address limit): a request that needs neither, as every request
 * with the access log off, costs no formatting (inet_ntop's printf is most of it). */
static void req_set_client(http_server_t *s, http_req_t *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *peer = ci ? ci->client_addr : NULL;
    if (!peer || !proxies_trusts(s->o.proxies, peer)) {
        proxies_addr_text(peer, r->client, sizeof(r->client));
        return;
    }
    xff_join_t j;
    buf_init(&j.b);
    j.n = 0;
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, join_xff, &j);
    proxies_client(s->o.proxies, peer, j.n ? buf_cstr(&j.b) : NULL, r->client, sizeof(r->client));
    buf_free(&j.b);
}

const char *http_client_addr(http_req_t *r)
{
    if (!r->client[0] && r->conn) /* (the connection lives until on_completed returns) */
        req_set_client(r->srv, r);
    return r->client[0] ? r->client : "unknown";
}

/* ---- draining (SIGTERM) ---- */

void http_drain(http_server_t *s)
{
    atomic_store(&s->draining, true);
}

bool http_draining(http_server_t *s)
{
    return s && atomic_load(&s->draining);
}

/* A new connection's first request is expected within this (a proxy sends it at once). */
#define HTTP_FIRST_REQUEST_S 1.0

/* Bytes the peer sent that nobody read yet: a request on its way. */
static bool input_pending(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

int http_connections_busy(http_server_t *s)
{
    int n = 0;
    double now = mono_s();
    pthread_mutex_lock(&s->conns_mu);
    for (http_conn_t *hc = s->conns; hc; hc = hc->next)
        if (!hc->shut && (hc->req_seen || input_pending(hc->fd) ||
                          (!hc->served && now - hc->receiving_since < HTTP_FIRST_REQUEST_S)))
            n++;
    pthread_mutex_unlock(&s->conns_mu);
    return n;
}

/* Shuts down the keep-alive connections that sit idle between two requests, so that a
 * proxy drops them from its pool now rather than send a request on one later as the
 * server ends. A connection that never had a request is left alone (its first request
 * may be on its way). */
void http_close_idle(http_server_t *s)
{
    int n = 0;
    pthread_mutex_lock(&s->conns_mu);
    for (http_conn_t *hc = s->conns; hc; hc = hc->next)
        if (hc->served && !hc->req && !hc->shut && hc->fd >= 0 && !input_pending(hc->fd)) {
            shutdown(hc->fd, SHUT_RDWR);
            hc->shut = true;
            n++;
        }
    pthread_mutex_unlock(&s->conns_mu);
    if (n)
        log_info("http: %d idle keep-alive connection(s) closed", n);
}

