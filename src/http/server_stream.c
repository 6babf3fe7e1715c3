/* server_stream.c — streamed responses (server.h: http_respond_stream and what follows).
 *
 * A stream's body is what on_work wrote (st->out); libmicrohttpd pulls it through
 * stream_read as the socket takes it. on_work is called only when st->out has all been
 * taken, so a producer that writes a window at a time and asks to be woken again is
 * paced by its client (a slow reader holds one window); a drained buffer larger than
 * STREAM_KEEP_BUF is freed. With nothing to send the connection is suspended until
 * http_stream_wake. After streams close, the watchdog gives the freed memory back to
 * the system (http_streams_trim). */
#include "http/server.h"
#include "http/server_int.h"

#include "obs/metrics.h"

#include <malloc.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A drained stream keeps a buffer up to this size; a larger one (a window of a long
 * text) is freed. */
#define STREAM_KEEP_BUF 4096
/* Memory freed by closed streams is given back to the system (malloc_trim) at most this
 * often: glibc keeps freed chunks inside its heaps (200 slow streams of a long text
 * left ~20 MB resident after they closed: docs/benchmarks.md). */
#define STREAM_TRIM_EVERY 2.0

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    http_stream_t *st = cls;
    (void)pos;
    for (;;) {
        pthread_mutex_lock(&st->mu);
        if (st->out.len > st->out_off) {
            size_t n = st->out.len - st->out_off;
            if (n > max)
                n = max;
            memcpy(buf, st->out.data + st->out_off, n);
            st->out_off += n;
            pthread_mutex_unlock(&st->mu);
            return (ssize_t)n;
        }
        /* drained: a window's buffer is given back (an idle stream holds none) */
        if (st->out.cap > STREAM_KEEP_BUF)
            buf_free(&st->out);
        else
            buf_reset(&st->out);
        st->out_off = 0;
        if (st->ended) {
            pthread_mutex_unlock(&st->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (st->woken) {
            st->woken = false;
            pthread_mutex_unlock(&st->mu);
            st->cb.on_work(st->cb.arg, st);
            continue;
        }
        /* nothing to send: leave MHD's loop until http_stream_wake (under the lock,
         * so a wake cannot come between the check and the suspension) */
        MHD_suspend_connection(st->conn);
        st->suspended = true;
        pthread_mutex_unlock(&st->mu);
        return 0;
    }
}

static void stream_free(void *cls)
{
    http_stream_t *st = cls;
    http_server_t *s = st->srv;
    st->cb.on_close(st->cb.arg);
    pthread_mutex_lock(&s->conns_mu);
    if (st->prev)
        st->prev->next = st->next;
    else
        s->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    pthread_mutex_unlock(&s->conns_mu);
    atomic_fetch_sub(&s->nstreams, 1);
    atomic_fetch_add(&s->streams_closed, 1);
    metrics_streams_add(-1);
    buf_free(&st->out);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

http_stream_t *http_respond_stream(http_req_t *r, int status, const char *ctype,
                                   const http_stream_cb_t *cb)
{
    http_stream_t *st = xcalloc(1, sizeof(*st));
    st->srv = r->srv;
    st->conn = r->conn;
    st->cb = *cb;
    st->woken = true; /* on_work writes the first bytes */
    pthread_mutex_init(&st->mu, NULL);
    buf_init(&st->out);
    r->status = status;
    r->content_type = ctype;
    r->stream = st;
    r->responded = true;
    return st;
}

void http_stream_write(http_stream_t *st, const char *data, size_t len)
{
    pthread_mutex_lock(&st->mu);
    if (!st->ended)
        buf_append(&st->out, data, len);
    pthread_mutex_unlock(&st->mu);
}

static void stream_wake(http_stream_t *st, bool end)
{
    pthread_mutex_lock(&st->mu);
    if (end)
        st->ended = true;
    else
        st->woken = true;
    if (st->suspended) {
        st->suspended = false;
        MHD_resume_connection(st->conn);
    }
    pthread_mutex_unlock(&st->mu);
}

void http_stream_end(http_stream_t *st)
{
    stream_wake(st, true);
}

void http_stream_wake(http_stream_t *st)
{
    stream_wake(st, false);
}

int http_streams_open(http_server_t *s)
{
    return atomic_load(&s->nstreams);
}

struct MHD_Response *http_stream_response(http_req_t *r)
{
    http_stream_t *st = r->stream;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free);
    if (!resp) {
        st->cb.on_close(st->cb.arg);
        buf_free(&st->out);
        pthread_mutex_destroy(&st->mu);
        free(st);
        r->stream = NULL;
        return NULL;
    }
    http_server_t *s = r->srv;
    pthread_mutex_lock(&s->conns_mu);
    st->next = s->streams;
    if (s->streams)
        s->streams->prev = st;
    s->streams = st;
    pthread_mutex_unlock(&s->conns_mu);
    atomic_fetch_add(&s->nstreams, 1);
    metrics_streams_add(1);
    r->stream = NULL; /* MHD owns it now */
    return resp;
}

/* Ends every open stream (the server is stopping: none may stay suspended). */
void http_streams_end_all(http_server_t *s)
{
    pthread_mutex_lock(&s->conns_mu);
    for (http_stream_t *st = s->streams; st; st = st->next)
        stream_wake(st, true);
    pthread_mutex_unlock(&s->conns_mu);
}

/* In the watchdog: once streams have closed, what they freed goes back to the system
 * (at most every STREAM_TRIM_EVERY seconds). */
void http_streams_trim(http_server_t *s, double now, int *seen, double *last)
{
    int closed = atomic_load(&s->streams_closed);
    if (closed == *seen || now - *last < STREAM_TRIM_EVERY)
        return;
    *seen = closed;
    *last = now;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

