/* heads.c — later request lines of a kept-alive connection (see heads.h). */
#include "http/heads.h"

#include "core/log.h"
#include "http/gate.h"
#include "http/limits.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static _Atomic unsigned char expect[HEADS_FDS]; /* 1: the next read begins a request */
static lingerer_t *_Atomic heads_l;

void heads_start(lingerer_t *l)
{
    heads_recv_linked();
    atomic_store(&heads_l, l);
}

void heads_stop(lingerer_t *l)
{
    atomic_compare_exchange_strong(&heads_l, &l, NULL);
}

void heads_expect(int fd)
{
    if (fd >= 0 && fd < HEADS_FDS)
        atomic_store_explicit(&expect[fd], 1, memory_order_relaxed);
}

void heads_forget(int fd)
{
    if (fd >= 0 && fd < HEADS_FDS &&
        atomic_load_explicit(&expect[fd], memory_order_relaxed)) /* (no write when clear) */
        atomic_store_explicit(&expect[fd], 0, memory_order_relaxed);
}

bool heads_read(int fd, const void *buf, size_t n)
{
    if (fd < 0 || fd >= HEADS_FDS || !atomic_load_explicit(&expect[fd], memory_order_relaxed))
        return false;
    atomic_store_explicit(&expect[fd], 0, memory_order_relaxed);
    /* only a whole request line of another version: anything else (a malformed line, a
     * line not whole yet) is libmicrohttpd's, as before */
    const char *s = buf, *lf = memchr(s, '\n', n);
    if (!lf)
        return false;
    size_t len = (size_t)(lf - s);
    if (len && s[len - 1] == '\r')
        len--;
    if (len >= 9 && memcmp(s + len - 8, "HTTP/1.", 7) == 0) /* the usual line, at once */
        return false;
    if (gate_check(buf, n, true) != 505)
        return false;
    lingerer_t *l = atomic_load(&heads_l);
    int dup_fd = l ? dup(fd) : -1; /* the library closes fd; the lingerer its duplicate */
    if (dup_fd < 0)
        return false; /* (no server, or no descriptor left: the library answers) */
    log_info("http: a later request of another HTTP version: answered 505 and closed");
    lingerer_refuse(l, dup_fd, 505, "HTTP version not supported.");
    return true;
}
