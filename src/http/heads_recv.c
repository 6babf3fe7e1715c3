/* heads_recv.c — the program's recv(), through which libmicrohttpd reads its
 * connections (heads.h). Its own file: <sys/socket.h> may declare recv as an inline
 * (_FORTIFY_SOURCE), which a definition beside it would clash with. The next recv (the
 * C library's, or a sanitizer's in front of it) is found once with dlsym(RTLD_NEXT). */
#undef _FORTIFY_SOURCE
#include "http/heads.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*recv_fn)(int, void *, size_t, int);

ssize_t recv(int fd, void *buf, size_t len, int flags);

static ssize_t recv_syscall(int fd, void *buf, size_t len, int flags)
{
    return syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

static recv_fn next_recv(void)
{
    static _Atomic(recv_fn) fn;
    recv_fn f = atomic_load_explicit(&fn, memory_order_acquire);
    if (!f) {
        void *p = dlsym(RTLD_NEXT, "recv");
        f = p ? (recv_fn)p : recv_syscall;
        atomic_store_explicit(&fn, f, memory_order_release);
    }
    return f;
}

void heads_recv_linked(void)
{
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    ssize_t n = next_recv()(fd, buf, len, flags);
    if (n > 0 && flags == 0 && heads_read(fd, buf, (size_t)n))
        return 0; /* answered: to the reader, the client closed */
    return n;
}
