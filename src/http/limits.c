/* limits.c — the HTTP server's own refusals (see limits.h): checks of the request
 * target and header fields, connection counts per client address, and the lingerer
 * that closes answered connections without resetting them. */
#include "http/limits.h"

#include "core/log.h"
#include "core/util.h"
#include "http/req_int.h"

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdarg.h>

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool http_target_bad(const char *uri)
{
    for (const unsigned char *p = (const unsigned char *)uri; *p; p++)
        if (*p <= 0x20 || *p == 0x7f)
            return true;
    return false;
}

bool http_field_bad(const char *name, size_t name_len, const char *value, size_t value_len)
{
    for (size_t i = 0; i < name_len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= 0x20 || c == 0x7f)
            return true;
    }
    for (size_t i = 0; i < value_len; i++) {
        char c = value ? value[i] : 0;
        if (c == '\r' || c == '\n' || c == '\0')
            return true;
    }
    return false;
}

size_t http_query_pieces(const char *q)
{
    size_t n = 0;
    bool in_piece = false;
    for (const char *p = q; *p; p++) {
        if (*p == '&') {
            in_piece = false;
        } else if (!in_piece) {
            in_piece = true;
            n++;
        }
    }
    return n;
}

/* ---- connections per client address ---------------------------------------------- */

#define CT_BUCKETS 1024

typedef struct ct_entry {
    struct ct_entry *next;
    unsigned char addr[16];
    int count;
} ct_entry_t;

struct conn_table {
    pthread_mutex_t mu;
    int total;
    ct_entry_t *b[CT_BUCKETS];
};

/* The address as 16 bytes (IPv4 mapped), or false for another family. */
static bool addr_bytes(const struct sockaddr *sa, unsigned char out[16])
{
    memset(out, 0, 16);
    if (sa->sa_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

static size_t addr_hash(const unsigned char a[16])
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 16; i++)
        h = (h ^ a[i]) * 1099511628211ull;
    return (size_t)(h % CT_BUCKETS);
}

conn_table_t *conn_table_new(void)
{
    conn_table_t *t = xcalloc(1, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void conn_table_free(conn_table_t *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < CT_BUCKETS; i++)
        for (ct_entry_t *e = t->b[i], *n; e; e = n) {
            n = e->next;
            free(e);
        }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

int conn_table_take(conn_table_t *t, const struct sockaddr *sa, int per_addr, int total)
{
    unsigned char a[16];
    bool known = addr_bytes(sa, a);
    pthread_mutex_lock(&t->mu);
    int rc = 0;
    if (t->total >= total) {
        rc = 2;
    } else if (known) {
        ct_entry_t **head = &t->b[addr_hash(a)], *e = *head;
        while (e && memcmp(e->addr, a, 16) != 0)
            e = e->next;
        if (e && e->count >= per_addr) {
            rc = 1;
        } else {
            if (!e) {
                e = xcalloc(1, sizeof(*e));
                memcpy(e->addr, a, 16);
                e->next = *head;
                *head = e;
            }
            e->count++;
        }
    }
    if (rc == 0)
        t->total++;
    pthread_mutex_unlock(&t->mu);
    return rc;
}

void conn_table_release(conn_table_t *t, const struct sockaddr *sa)
{
    unsigned char a[16];
    bool known = addr_bytes(sa, a);
    pthread_mutex_lock(&t->mu);
    if (t->total > 0)
        t->total--;
    if (known) {
        ct_entry_t **pp = &t->b[addr_hash(a)];
        while (*pp && memcmp((*pp)->addr, a, 16) != 0)
            pp = &(*pp)->next;
        if (*pp && --(*pp)->count <= 0) {
            ct_entry_t *e = *pp;
            *pp = e->next;
            free(e);
        }
    }
    pthread_mutex_unlock(&t->mu);
}

/* ---- the lingerer ------------------------------------------------------------------ */

/* Answered connections kept at once; beyond it one is closed at once (its client may
 * then see a reset instead of the answer: only under a flood of refused connections). */
#define LINGER_MAX 4096
/* Seconds an answered connection is kept for its client to read the answer and close. */
#define LINGER_S 2.0

typedef struct {
    int fd;
    double until;
} linger_t;

struct lingerer {
    pthread_mutex_t mu;
    linger_t items[LINGER_MAX];
    int n;
};

lingerer_t *lingerer_new(void)
{
    lingerer_t *l = xcalloc(1, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

void lingerer_refuse(lingerer_t *l, int fd, int status, const char *message)
{
    char body[256], head[512];
    const char *reason = status == 400   ? "Bad Request"
                         : status == 431 ? "Request Header Fields Too Large"
                         : status == 505 ? "HTTP Version Not Supported"
                                         : "Service Unavailable";
    int bn = snprintf(body, sizeof(body), "{\"message\":\"%s\",\"status\":%d}", message, status);
    int hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%s"
                      "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
                      status, reason, status == 503 ? "Retry-After: 1\r\n" : "", bn, body);
    /* a new socket's send buffer takes a few hundred bytes at once */
    if (send(fd, head, (size_t)hn, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        close(fd);
        return;
    }
    shutdown(fd, SHUT_WR);
    pthread_mutex_lock(&l->mu);
    if (l->n < LINGER_MAX) {
        l->items[l->n].fd = fd;
        l->items[l->n].until = mono_s() + LINGER_S;
        l->n++;
        fd = -1;
    }
    pthread_mutex_unlock(&l->mu);
    if (fd >= 0)
        close(fd);
}

void lingerer_tick(lingerer_t *l)
{
    double now = mono_s();
    char sink[4096];
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < l->n;) {
        linger_t *it = &l->items[i];
        bool done = now >= it->until;
        for (int reads = 0; !done && reads < 16; reads++) {
            ssize_t got = recv(it->fd, sink, sizeof(sink), MSG_DONTWAIT);
            if (got > 0)
                continue;
            if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                break;
            done = true; /* the client closed (0) or the connection failed */
        }
        if (done) {
            close(it->fd);
            l->items[i] = l->items[--l->n];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&l->mu);
}

void lingerer_free(lingerer_t *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        close(l->items[i].fd);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* ---- refusals: request heads and connections ------------------------------------- */

typedef struct {
    bool bad;
} field_scan_t;

static enum MHD_Result scan_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  size_t key_size, const char *value, size_t value_size)
{
    field_scan_t *fs = cls;
    (void)kind;
    if (http_field_bad(key, key_size, value, value_size)) {
        fs->bad = true;
        return MHD_NO;
    }
    return MHD_YES;
}

int http_refused_head(http_req_t *r, const char *url, const char *version, const char **msg)
{
    *msg = "Bad request.";
    if (r->bad_target)
        return 400;
    /* url and version point into libmicrohttpd's buffer of the request line, where the
     * target ends one byte before the version: a target whose string is shorter than
     * that held a NUL (the URI callback saw it only up to the NUL) */
    if (url == r->target_at && version > url && (size_t)(version - url) <= (size_t)1 << 20 &&
        (size_t)(version - url) - 1 != r->target_len)
        return 400;
    field_scan_t fs = {false};
    MHD_get_connection_values_n(r->conn, MHD_HEADER_KIND, scan_field, &fs);
    if (fs.bad)
        return 400;
    *msg = "Request header fields too large.";
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (r->too_many_params || (ci && ci->header_size > HTTP_MAX_HEAD))
        return 431;
    return 0;
}

/* At most a few lines a second about refused connections (a flood must not flood the
 * log); the others are counted into the next line. */
static void log_refusal(const char *what)
{
    static atomic_llong window, in_window, suppressed;
    if (log_level < LOG_INFO)
        return;
    long long sec = (long long)mono_s();
    if (atomic_exchange(&window, sec) != sec)
        atomic_store(&in_window, 0);
    if (atomic_fetch_add(&in_window, 1) >= 5) {
        atomic_fetch_add(&suppressed, 1);
        return;
    }
    long long more = atomic_exchange(&suppressed, 0);
    log_write(LOG_INFO, "http: %s: connection answered 503 and closed (and %lld more)", what,
              more);
}

bool http_admit(conn_table_t *t, lingerer_t *l, int fd, const struct sockaddr *addr,
                int per_addr, int total)
{
    int rc = conn_table_take(t, addr, per_addr, total);
    if (rc == 0)
        return true;
    log_refusal(rc == 1 ? "per-address connection limit reached" : "connection limit reached");
    lingerer_refuse(l, fd, 503,
                    rc == 1 ? "Too many connections from this address; please try again."
                            : "Too many connections; please try again.");
    return false;
}

/* libmicrohttpd's own messages: connections it refuses or closes before a request
 * reaches on_access (malformed heads, memory pool exhausted...). Logged at info so
 * that no refusal is silent, at most MHD_LOG_PER_S lines a second (a flood of refused
 * connections must not flood the log); the rest are counted and the count reported
 * with the next line let through. */
#define MHD_LOG_PER_S 20

void http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    static atomic_llong window, in_window, suppressed;
    (void)cls;
    if (log_level < LOG_INFO)
        return;
    long long sec = (long long)mono_s();
    if (atomic_exchange(&window, sec) != sec)
        atomic_store(&in_window, 0);
    if (atomic_fetch_add(&in_window, 1) >= MHD_LOG_PER_S) {
        atomic_fetch_add(&suppressed, 1);
        return;
    }
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    long long more = atomic_exchange(&suppressed, 0);
    if (more)
        log_write(LOG_INFO, "http: %s (and %lld more such messages)", msg, more);
    else
        log_write(LOG_INFO, "http: %s", msg);
}

/* ---- the access log ---- */

void http_log_path(const char *in, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 5 < outlen; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x21 || c > 0x7e || c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = '\0';
}
