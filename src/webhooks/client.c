/* client.c — the careful HTTP client of webhooks (API.md §22), on libcurl: the host is
 * resolved once here, every address checked, and the connection pinned to the checked
 * address (CURLOPT_RESOLVE); the open-socket callback checks the address curl really
 * connects to as well. No proxy (none from the environment either), no redirect,
 * certificates verified, one timeout for the whole attempt, at most WH_READ_MAX bytes
 * of the answer read. Each thread keeps its handle, so its connections are used again
 * (keep-alive): a connection is only ever opened to a checked address. */
#include "webhooks/webhooks.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define WH_READ_MAX 4096

static _Thread_local CURL *kept; /* the thread's handle: wh_send, wh_send_end */

typedef struct {
    size_t got;
    double retry_after;
    bool allow_private;
    bool refused; /* the open-socket check refused the address */
} call_t;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    call_t *c = arg;
    c->got += size * n;
    return c->got > WH_READ_MAX ? 0 : size * n; /* enough: the rest is not read */
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    call_t *c = arg;
    size_t len = size * n;
    if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
        char v[64];
        size_t vl = len - 12 < sizeof(v) - 1 ? len - 12 : sizeof(v) - 1;
        memcpy(v, p + 12, vl);
        v[vl] = '\0';
        char *end;
        double s = strtod(v, &end);
        if (end != v && s > 0)
            c->retry_after = s; /* seconds (an HTTP date is not read) */
    }
    return len;
}

static curl_socket_t on_open(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    call_t *c = arg;
    if (!c->allow_private && !wh_addr_public(&a->addr)) {
        c->refused = true;
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype, a->protocol);
}

void wh_send(const char *url, const char *const *headers, const char *body, size_t len,
             bool allow_private, double timeout_s, wh_send_result_t *out)
{
    memset(out, 0, sizeof(*out));
    wh_url_t u;
    char addr[64];
    wh_url_rc_t urc = wh_url_check(url, allow_private, &u, addr, sizeof(addr));
    if (urc != WH_URL_OK) {
        snprintf(out->error, sizeof(out->error), "%s", wh_url_reason(urc));
        return;
    }
    /* the thread's handle, reset: its connections (and TLS sessions) are kept, so
     * the next delivery to the same host and port goes over the same connection; each
     * was opened to an address checked here and in on_open */
    if (kept)
        curl_easy_reset(kept);
    else if (!(kept = curl_easy_init())) {
        snprintf(out->error, sizeof(out->error), "out of memory");
        return;
    }
    CURL *h = kept;
    call_t c = {.allow_private = allow_private};
    struct curl_slist *hl = NULL, *pin = NULL;
    for (const char *const *p = headers; p && *p; p++)
        hl = curl_slist_append(hl, *p);
    hl = curl_slist_append(hl, "Expect:");
    char pinned[400];
    bool v6 = strchr(addr, ':') != NULL;
    snprintf(pinned, sizeof(pinned), "%s%s%s:%d:%s%s%s", strchr(u.host, ':') ? "[" : "",
             u.host, strchr(u.host, ':') ? "]" : "", u.port, v6 ? "[" : "", addr, v6 ? "]" : "");
    pin = curl_slist_append(pin, pinned);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_RESOLVE, pin);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &c);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &c);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    out->status = (int)status;
    out->retry_after = c.retry_after;
    if (c.refused)
        snprintf(out->error, sizeof(out->error), "%s", wh_url_reason(WH_URL_PRIVATE));
    else if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && status > 0))
        snprintf(out->error, sizeof(out->error), "%s", curl_easy_strerror(rc));
    else if (status < 200 || status > 299)
        snprintf(out->error, sizeof(out->error), "HTTP %ld", status);
    if (c.refused || (rc != CURLE_OK && rc != CURLE_WRITE_ERROR))
        out->status = status > 0 ? (int)status : 0;
    curl_slist_free_all(hl);
    curl_slist_free_all(pin);
}

void wh_send_end(void)
{
    if (kept)
        curl_easy_cleanup(kept);
    kept = NULL;
}
