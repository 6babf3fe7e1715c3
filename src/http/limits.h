/* limits.h — what the HTTP server refuses on its own, before a request reaches the API
 * (server.c calls these): request targets with control characters, header fields with
 * CR/LF/NUL, heads and query strings over their limits, and connections over the
 * per-address or total cap (answered 503 by inkwell's acceptor instead of a silent
 * close). Each refusal is an answer in the contract's JSON shape (API.md §6). */
#ifndef INK_HTTP_LIMITS_H
#define INK_HTTP_LIMITS_H

#include "http/server.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Request line and header fields together (more: 431). */
#define HTTP_MAX_HEAD 16384
/* '&'-separated pieces of a query string (more: 431). */
#define HTTP_MAX_QUERY_PARAMS 1000

/* True when a request target (as libmicrohttpd passes it, NUL-terminated) holds a
 * byte RFC 9112 does not allow there and that could split or forge a line: any C0
 * control (CR, LF, TAB...), SP or DEL. */
bool http_target_bad(const char *uri);
/* True when a header field's name or value (with their lengths, so that a NUL shows)
 * holds CR, LF or NUL, or its name any control character or SP (RFC 9110 §5.5). */
bool http_field_bad(const char *name, size_t name_len, const char *value, size_t value_len);
/* Pieces of a query string, as form_parse counts them (empty pieces not counted). */
size_t http_query_pieces(const char *q);

/* ---- connections per client address ---- */
typedef struct conn_table conn_table_t;
conn_table_t *conn_table_new(void);
void conn_table_free(conn_table_t *t);
/* Takes a slot for addr: 0, or 1 when addr has per_addr connections already, 2 when
 * the server has total. */
int conn_table_take(conn_table_t *t, const struct sockaddr *addr, int per_addr, int total);
void conn_table_release(conn_table_t *t, const struct sockaddr *addr);

/* ---- answering refused connections ---- */
/* Connections answered and waiting to be closed gracefully (their requests are read
 * and dropped so that the close sends no RST that would destroy the answer). */
typedef struct lingerer lingerer_t;
lingerer_t *lingerer_new(void);
/* Writes an answer of status 400, 431 or 503 (with Retry-After) with a JSON body
 * {"message":message,"status":status} and Connection: close to fd (non-blocking), and
 * hands it to the lingerer, which closes it. message: plain text, no quotes. */
void lingerer_refuse(lingerer_t *l, int fd, int status, const char *message);
/* Reads what waits on each socket; closes those whose client is done or whose time
 * is up. Called from the server's watchdog thread a few times a second. */
void lingerer_tick(lingerer_t *l);
void lingerer_free(lingerer_t *l);

/* ---- what server.c calls ---- */
/* The status (400 or 431) and message of a request head refused before any handler
 * sees it (on_access's url and version), or 0: a bad target (any control byte, SP or
 * DEL, a NUL included), a header field with CR/LF/NUL, a head over HTTP_MAX_HEAD, a
 * query of more than HTTP_MAX_QUERY_PARAMS pieces. */
int http_refused_head(http_req_t *r, const char *url, const char *version, const char **msg);
/* Takes a slot for a new connection, or answers it 503 (lingerer_refuse) and logs it
 * (a few lines a second at most). True when admitted. */
bool http_admit(conn_table_t *t, lingerer_t *l, int fd, const struct sockaddr *addr,
                int per_addr, int total);
/* A request path for the access log: bytes outside printable ASCII, '"' and '\\' as
 * \xHH (log_write then redacts anything shaped like a key). */
void http_log_path(const char *in, char *out, size_t outlen);
/* libmicrohttpd's error log (MHD_OPTION_EXTERNAL_LOGGER), rate limited. */
void http_mhd_log(void *cls, const char *fmt, va_list ap);

#endif
