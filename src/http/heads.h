/* heads.h — the request line of a kept-alive connection's later requests, checked as
 * libmicrohttpd reads it.
 *
 * The gate (gate.h) checks the first head of each connection before libmicrohttpd takes
 * it; libmicrohttpd 0.9.75 parses the later ones itself and answers a request line of
 * another HTTP version (HTTP/0.x, 2.0, 9.1…) with its own HTML 505, before any callback
 * of inkwell's. So heads_recv.c defines recv(): the library's reads of a connection's
 * socket come through it (libmicrohttpd reads with recv(fd, buf, len, 0); the dynamic
 * linker binds its recv to the program's own), and pass on untouched except the first
 * read after a request of that connection was answered (heads_expect): when those bytes
 * hold a whole request line of another version, they are answered here — inkwell's JSON
 * 505 written to a duplicate of the socket, which the lingerer closes gracefully (as
 * the gate's answers) — and libmicrohttpd is told the client closed (0), so it closes
 * its end without an answer of its own. Any other bytes are the library's to parse, as
 * before. Costs a byte's load per read and one line's scan per request.
 *
 * Not covered (libmicrohttpd answers as before): a later request line that arrives
 * split over two reads (the first of them without its line end), one read together
 * with the request before it (pipelined: parsed from the library's buffer), and a
 * socket numbered HEADS_FDS or more. (No <sys/socket.h> here: heads_recv.c.) */
#ifndef INK_HTTP_HEADS_H
#define INK_HTTP_HEADS_H

#include <stdbool.h>
#include <stddef.h>

#define HEADS_FDS 65536

/* The lingerer that closes the sockets answered here (none: the library answers). One
 * per process: the last server started. */
struct lingerer;
void heads_start(struct lingerer *l);
/* Forgets l if it is the one heads_start was given (before it is freed). */
void heads_stop(struct lingerer *l);
/* The next bytes libmicrohttpd reads from fd begin a request (a request on the
 * connection was answered, and it stays open). */
void heads_expect(int fd);
/* fd is no longer expected to begin a request (its request line was parsed: on_uri; or
 * the connection is new or closed). */
void heads_forget(int fd);

/* Defined beside recv() in heads_recv.c, called by heads_start: the reference that
 * brings that file out of the library archive into every program that serves, even
 * when the link has met a recv already (a sanitizer's runtime, the C library). */
void heads_recv_linked(void);

/* For heads_recv.c: the bytes buf[0..n) just read from fd (flags 0). True when they
 * were answered here: the caller tells the reader the connection was closed. */
bool heads_read(int fd, const void *buf, size_t n);

#endif
