/* webhooks.h — webhooks (API.md §22) outside the store: the check of an endpoint's URL
 * and of the addresses its host resolves to (addr.c, pure but for the resolver), the
 * secrets and Standard Webhooks 1.0 signatures (sign.c, OpenSSL), the careful HTTP
 * client (client.c, libcurl) and the delivery workers (worker.c).
 *
 * The events are written by the store in the transaction of each change
 * (store/store_webhooks.h); the workers claim due deliveries, render an event's body the
 * first time any endpoint's attempt needs it (through the render function main.c gives:
 * the API's record JSON, so nothing here knows HTTP answers), sign, send, and store the
 * outcome with the next attempt's time. docs/design.md "Webhooks". */
#ifndef INK_WEBHOOKS_H
#define INK_WEBHOOKS_H

#include "core/util.h"
#include "store/store.h"
#include "store/store_webhooks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* ---- addr.c ---- */

/* True when the address is public: not in any IANA special-purpose range of IPv4 or
 * IPv6 (loopback, private, link-local with the cloud metadata addresses, shared
 * 100.64.0.0/10, 0.0.0.0/8, unique-local, IPv4-mapped and -translated, 6to4, Teredo,
 * multicast, documentation, benchmarking, reserved, unspecified). IPv6 is public only
 * inside 2000::/3. Pure. */
bool wh_addr_public(const struct sockaddr *sa);
/* The same for an address in text ("127.0.0.1", "::1"); false when it is not one. */
bool wh_addr_text_public(const char *s);

typedef enum {
    WH_URL_OK = 0,
    WH_URL_BAD,        /* not an http(s) URL with a host, or with a user-info part */
    WH_URL_UNRESOLVED, /* the host does not resolve */
    WH_URL_PRIVATE,    /* the host has an address that is not public */
} wh_url_rc_t;

/* The URL's parts as libcurl reads them (the host as it connects to it: numeric
 * forms such as 2130706433 or 0x7f.1 normalised, IPv6 without brackets). Pure. */
typedef struct {
    char host[256];
    int port;
    bool https;
} wh_url_t;
wh_url_rc_t wh_url_parse(const char *url, wh_url_t *out);
/* Parses, resolves the host once and checks every address (unless allow_private);
 * addr (may be NULL) gets the first address, in text, for the connection. */
wh_url_rc_t wh_url_check(const char *url, bool allow_private, wh_url_t *out, char *addr,
                         size_t addrlen);
/* Words for a refusal, for the 422 and a delivery's last_error. */
const char *wh_url_reason(wh_url_rc_t rc);

/* ---- sign.c ---- */

/* A new secret: "whsec_" + base64 of 24 random bytes (NUL-terminated). */
#define WH_SECRET_LEN 38
void wh_secret_new(char out[WH_SECRET_LEN + 1]);
/* "v1,<base64 HMAC-SHA256 of msg_id.timestamp.body keyed with the base64-decoded
 * secret (after its whsec_)>" appended to out; false when the secret is malformed. */
bool wh_sign(const char *secret, const char *msg_id, int64_t timestamp, const char *body,
             size_t len, buf_t *out);

/* ---- client.c ---- */

typedef struct {
    int status;          /* 0: no answer */
    char error[160];     /* why, when not 2xx (never a secret) */
    double retry_after;  /* seconds the answer asked for (Retry-After), 0 when none */
} wh_send_result_t;
/* POSTs body to url with the headers given ("Name: value" lines, NULL-terminated):
 * the host resolved once and each address checked (unless allow_private), the
 * connection made to that address only, no proxy, no redirect, certificates verified,
 * timeout_s in all, at most a few KB of the answer read. */
void wh_send(const char *url, const char *const *headers, const char *body, size_t len,
             bool allow_private, double timeout_s, wh_send_result_t *out);
/* The calling thread's kept connections closed (wh_send keeps one libcurl handle per
 * thread, so a receiver's connection is used again: HTTP keep-alive). */
void wh_send_end(void);

/* ---- worker.c ---- */

/* Writes the record's JSON (as GET shows it: the value of "data") into out. */
typedef void (*wh_render_fn)(void *arg, const record_t *rec, buf_t *out);

typedef struct {
    store_t *store;
    int workers;          /* threads sending at once in all (>= 1) */
    int per_endpoint;     /* sends in flight at once per endpoint */
    double retry_scale;   /* multiplies every delay of the schedule (tests) */
    bool allow_private;   /* --webhook-allow-private */
    double timeout_s;     /* one attempt (10) */
    const char *user_agent;
    wh_render_fn render;
    void *render_arg;
} wh_opts_t;

typedef struct wh_service wh_service_t;
wh_service_t *wh_start(const wh_opts_t *o);
/* Wakes the workers (a ping, a retry, an endpoint enabled). NULL-safe. */
void wh_kick(wh_service_t *s);
void wh_stop(wh_service_t *s);

/* The delay before attempt n+1 after n failed ones (n >= 1), seconds, before scale and
 * spread: 5, 30, 120, 600, 3600, 10800, 21600, 43200; -1 after the last (failed). */
double wh_retry_delay(int64_t failed_attempts);

#endif
