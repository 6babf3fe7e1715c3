/* gate.h — the first request line of each new connection, checked before libmicrohttpd
 * takes the connection.
 *
 * libmicrohttpd 0.9.75 closes a connection without an answer when its request line
 * is not "METHOD SP TARGET SP VERSION" (e.g. `GARBAGE`), and answers others, and heads
 * larger than its memory pool, with an HTML page. The acceptor gives each new
 * connection to the gate; the gate waits (epoll, one thread) until the head of its
 * first request has arrived, reads it without consuming it (MSG_PEEK), and either
 * hands the connection to libmicrohttpd or answers it itself — 400 for a malformed
 * request line or a control byte in it, or CR or NUL inside a header line; 431 for a
 * head longer than HTTP_MAX_HEAD, whatever its size — in JSON, then closes it
 * gracefully (limits.h, the lingerer). A connection that sends no whole head within
 * the request timeout is closed. Later requests of a kept-alive connection are checked
 * by server.c and limits.c only (docs/status.md). */
#ifndef INK_HTTP_GATE_H
#define INK_HTTP_GATE_H

#include "http/limits.h"

#include <stdbool.h>
#include <sys/socket.h>

struct MHD_Daemon;
typedef struct gate gate_t;

gate_t *gate_start(struct MHD_Daemon *d, conn_table_t *ct, lingerer_t *l, double timeout_s);
/* Takes fd (non-blocking, its slot already taken in ct). */
void gate_add(gate_t *g, int fd, const struct sockaddr *addr, socklen_t len);
/* Stops the thread and closes the connections still waiting. */
void gate_stop(gate_t *g);

/* The verdict on the bytes a connection has sent so far (pure; for tests and fuzzing):
 * 0 = wait for more, 1 = good (hand over), or an HTTP status (400, 431, 505: a version
 * other than 1.x) to refuse. */
int gate_check(const char *data, size_t n, bool more_possible);

#endif
