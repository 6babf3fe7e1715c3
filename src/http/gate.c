/* gate.c — new connections wait here for their first request line (see gate.h). */
#include "http/gate.h"

#include "core/log.h"
#include "core/thread.h"
#include "core/util.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

typedef struct gate_conn {
    struct gate_conn *prev, *next;
    int fd;
    struct sockaddr_storage addr;
    socklen_t len;
    double until;
} gate_conn_t;

struct gate {
    struct MHD_Daemon *d;
    conn_table_t *ct;
    lingerer_t *l;
    double timeout_s;
    int ep;
    pthread_t thread;
    atomic_bool stopping;
    pthread_mutex_t mu; /* the list: gate_add runs in the acceptor */
    gate_conn_t *conns;
};

static bool tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* "METHOD SP TARGET SP HTTP/D.D" exactly (RFC 9112 §3). */
static bool line_ok(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && tchar((unsigned char)s[i]))
        i++;
    if (i == 0 || i >= n || s[i] != ' ')
        return false;
    size_t t = ++i;
    while (i < n && (unsigned char)s[i] > 0x20 && s[i] != 0x7f)
        i++;
    if (i == t || i >= n || s[i] != ' ')
        return false;
    i++;
    return n - i == 8 && memcmp(s + i, "HTTP/", 5) == 0 && s[i + 5] >= '0' && s[i + 5] <= '9' &&
           s[i + 6] == '.' && s[i + 7] >= '0' && s[i + 7] <= '9';
}

int gate_check(const char *data, size_t n, bool more_possible)
{
    size_t p = 0;
    for (int blank = 0; blank < 4 && p < n; blank++) { /* empty lines before it (§2.2) */
        if (data[p] == '\n')
            p++;
        else if (data[p] == '\r' && p + 1 < n && data[p + 1] == '\n')
            p += 2;
        else
            break;
    }
    const char *lf = p < n ? memchr(data + p, '\n', n - p) : NULL;
    if (!lf) {
        if (n - p > HTTP_MAX_HEAD)
            return 431;
        return more_possible ? 0 : 400;
    }
    size_t len = (size_t)(lf - (data + p));
    if (len > HTTP_MAX_HEAD)
        return 431;
    size_t l = len && data[p + len - 1] == '\r' ? len - 1 : len;
    if (!line_ok(data + p, l))
        return 400;
    if (data[p + l - 3] != '1') /* HTTP/0.9, 2.0, 9.1…: not this server's (RFC 9110 §15.6.6) */
        return 505;
    /* the header lines: no CR or NUL inside a line, the whole head within the limit */
    for (const char *s = lf + 1, *end = data + n; s < end;) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e)
            break;
        size_t hl = (size_t)(e - s);
        if (hl && s[hl - 1] == '\r')
            hl--;
        if (hl == 0)
            return (size_t)(e + 1 - data) - p > HTTP_MAX_HEAD ? 431 : 1; /* its end */
        if (memchr(s, '\r', hl) || memchr(s, '\0', hl))
            return 400;
        s = e + 1;
    }
    if (n - p > HTTP_MAX_HEAD)
        return 431;
    return more_possible ? 0 : 400;
}

static void unlink_conn(gate_t *g, gate_conn_t *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        g->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

/* Done with c: handed to libmicrohttpd, answered, or closed. */
static void finish(gate_t *g, gate_conn_t *c, int verdict)
{
    pthread_mutex_lock(&g->mu);
    unlink_conn(g, c);
    pthread_mutex_unlock(&g->mu);
    epoll_ctl(g->ep, EPOLL_CTL_DEL, c->fd, NULL);
    if (verdict == 1) {
        if (MHD_add_connection(g->d, c->fd, (struct sockaddr *)&c->addr, c->len) != MHD_YES)
            conn_table_release(g->ct, (struct sockaddr *)&c->addr);
    } else {
        if (verdict == 400 || verdict == 431 || verdict == 505) {
            log_info("http: a malformed request line or head: answered %d and closed", verdict);
            lingerer_refuse(g->l, c->fd, verdict,
                            verdict == 400   ? "Bad request."
                            : verdict == 505 ? "HTTP version not supported."
                                             : "Request header fields too large.");
        } else {
            close(c->fd);
        }
        conn_table_release(g->ct, (struct sockaddr *)&c->addr);
    }
    free(c);
}

static void examine(gate_t *g, gate_conn_t *c)
{
    char buf[HTTP_MAX_HEAD + 8]; /* a few blank lines before the head, and one byte more */
    ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        finish(g, c, -1);
        return;
    }
    if (n == 0) { /* closed before a whole line: nothing to answer */
        finish(g, c, -1);
        return;
    }
    int v = gate_check(buf, (size_t)n, true);
    if (v != 0)
        finish(g, c, v);
}

static void *gate_main(void *arg)
{
    gate_t *g = arg;
    struct epoll_event ev[64];
    double next_sweep = 0;
    while (!atomic_load(&g->stopping)) {
        int n = epoll_wait(g->ep, ev, 64, 200);
        for (int i = 0; i < n; i++)
            examine(g, ev[i].data.ptr);
        double now = mono_s();
        if (now < next_sweep)
            continue;
        next_sweep = now + 0.2;
        for (;;) { /* no whole line within the request timeout: closed */
            pthread_mutex_lock(&g->mu);
            gate_conn_t *c = g->conns;
            while (c && c->until > now)
                c = c->next;
            pthread_mutex_unlock(&g->mu);
            if (!c)
                break;
            finish(g, c, -1);
        }
    }
    return NULL;
}

gate_t *gate_start(struct MHD_Daemon *d, conn_table_t *ct, lingerer_t *l, double timeout_s)
{
    gate_t *g = xcalloc(1, sizeof(*g));
    g->d = d;
    g->ct = ct;
    g->l = l;
    g->timeout_s = timeout_s;
    g->ep = epoll_create1(EPOLL_CLOEXEC);
    pthread_mutex_init(&g->mu, NULL);
    if (g->ep < 0 || !thread_start(&g->thread, "ink-gate", gate_main, g)) {
        if (g->ep >= 0)
            close(g->ep);
        pthread_mutex_destroy(&g->mu);
        free(g);
        return NULL;
    }
    return g;
}

void gate_add(gate_t *g, int fd, const struct sockaddr *addr, socklen_t len)
{
    gate_conn_t *c = xcalloc(1, sizeof(*c));
    c->fd = fd;
    memcpy(&c->addr, addr, len <= sizeof(c->addr) ? len : sizeof(c->addr));
    c->len = len;
    c->until = mono_s() + g->timeout_s;
    pthread_mutex_lock(&g->mu);
    c->next = g->conns;
    if (g->conns)
        g->conns->prev = c;
    g->conns = c;
    pthread_mutex_unlock(&g->mu);
    /* edge-triggered: a peek leaves the bytes there, only new ones wake the gate again */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c};
    if (epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        pthread_mutex_lock(&g->mu);
        unlink_conn(g, c);
        pthread_mutex_unlock(&g->mu);
        close(fd);
        conn_table_release(g->ct, (struct sockaddr *)&c->addr);
        free(c);
    }
}

void gate_stop(gate_t *g)
{
    if (!g)
        return;
    atomic_store(&g->stopping, true);
    pthread_join(g->thread, NULL);
    for (gate_conn_t *c = g->conns, *n; c; c = n) {
        n = c->next;
        close(c->fd);
        conn_table_release(g->ct, (struct sockaddr *)&c->addr);
        free(c);
    }
    close(g->ep);
    pthread_mutex_destroy(&g->mu);
    free(g);
}
