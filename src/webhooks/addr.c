/* addr.c — which addresses a webhook may be sent to (API.md §22): the IANA
 * special-purpose registries of IPv4 and IPv6, and an endpoint URL's check (parsed by
 * libcurl's own URL parser, the host resolved once, every address checked). */
#include "webhooks/webhooks.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    uint32_t net;
    int bits;
} v4_range_t;

/* IANA IPv4 Special-Purpose Address Registry (and multicast, reserved, broadcast) */
static const v4_range_t v4_special[] = {
    {0x00000000, 8},  /* 0.0.0.0/8 "this network" */
    {0x0A000000, 8},  /* 10/8 private */
    {0x64400000, 10}, /* 100.64/10 shared (CGNAT) */
    {0x7F000000, 8},  /* 127/8 loopback */
    {0xA9FE0000, 16}, /* 169.254/16 link-local (cloud metadata 169.254.169.254) */
    {0xAC100000, 12}, /* 172.16/12 private */
    {0xC0000000, 24}, /* 192.0.0/24 IETF protocol assignments */
    {0xC0000200, 24}, /* 192.0.2/24 documentation */
    {0xC01FC400, 24}, /* 192.31.196/24 AS112 */
    {0xC034C100, 24}, /* 192.52.193/24 AMT */
    {0xC0586300, 24}, /* 192.88.99/24 6to4 relay anycast */
    {0xC0A80000, 16}, /* 192.168/16 private */
    {0xC0AFB000, 24}, /* 192.175.48/24 direct delegation AS112 */
    {0xC6120000, 15}, /* 198.18/15 benchmarking */
    {0xC6336400, 24}, /* 198.51.100/24 documentation */
    {0xCB007100, 24}, /* 203.0.113/24 documentation */
    {0xE0000000, 4},  /* 224/4 multicast */
    {0xF0000000, 4},  /* 240/4 reserved, 255.255.255.255 broadcast */
};

static bool v4_public(uint32_t a)
{
    for (size_t i = 0; i < ARRAY_LEN(v4_special); i++) {
        uint32_t mask = v4_special[i].bits ? ~0u << (32 - v4_special[i].bits) : 0;
        if ((a & mask) == v4_special[i].net)
            return false;
    }
    return true;
}

static bool prefix(const uint8_t *a, const uint8_t *p, int bits)
{
    int bytes = bits / 8, rest = bits % 8;
    if (memcmp(a, p, (size_t)bytes) != 0)
        return false;
    return !rest || ((a[bytes] ^ p[bytes]) & (0xFF << (8 - rest))) == 0;
}

static bool v6_public(const uint8_t *a)
{
    /* only global unicast 2000::/3 is public: this leaves out ::/128, ::1, the
     * IPv4-mapped ::ffff:0:0/96 and -compatible ::/96, 64:ff9b::/96 and 64:ff9b:1::/48
     * (NAT64), 100::/64 (discard), fc00::/7 (unique-local), fe80::/10 (link-local),
     * fec0::/10, ff00::/8 (multicast) */
    if ((a[0] & 0xE0) != 0x20)
        return false;
    static const struct {
        uint8_t p[16];
        int bits;
    } special[] = {
        {{0x20, 0x01, 0x00, 0x00}, 23}, /* 2001::/23 IETF protocol assignments (Teredo
                                         * 2001::/32, ORCHID, benchmarking 2001:2::/48) */
        {{0x20, 0x01, 0x0d, 0xb8}, 32}, /* 2001:db8::/32 documentation */
        {{0x20, 0x02}, 16},             /* 2002::/16 6to4 */
        {{0x3f, 0xff}, 20},             /* 3fff::/20 documentation */
    };
    for (size_t i = 0; i < ARRAY_LEN(special); i++)
        if (prefix(a, special[i].p, special[i].bits))
            return false;
    return true;
}

bool wh_addr_public(const struct sockaddr *sa)
{
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return v4_public(ntohl(in->sin_addr.s_addr));
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        return v6_public(in6->sin6_addr.s6_addr);
    }
    return false;
}

bool wh_addr_text_public(const char *s)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, s, &in.sin_addr) == 1)
        return wh_addr_public((const struct sockaddr *)&in);
    if (inet_pton(AF_INET6, s, &in6.sin6_addr) == 1)
        return wh_addr_public((const struct sockaddr *)&in6);
    return false;
}

const char *wh_url_reason(wh_url_rc_t rc)
{
    switch (rc) {
    case WH_URL_OK: return "ok";
    case WH_URL_BAD: return "The url must be an http or https URL with a host and no user name or password.";
    case WH_URL_UNRESOLVED: return "The url's host does not resolve.";
    case WH_URL_PRIVATE: return "The url's host is not a public address.";
    }
    return "The url is not valid.";
}

wh_url_rc_t wh_url_parse(const char *url, wh_url_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!url || strlen(url) > 2048)
        return WH_URL_BAD;
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return WH_URL_BAD; /* no spaces or controls anywhere */
    CURLU *u = curl_url();
    if (!u)
        return WH_URL_BAD;
    wh_url_rc_t rc = WH_URL_BAD;
    char *scheme = NULL, *host = NULL, *user = NULL, *pass = NULL, *port = NULL;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
        goto out;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
        goto out;
    /* the scheme must be written: curl would guess one for "example.com/x" */
    if (strncasecmp(url, scheme, strlen(scheme)) != 0 || strncmp(url + strlen(scheme), "://", 3) != 0 ||
        url[strlen(scheme) + 3] == '/' || url[strlen(scheme) + 3] == '\0')
        goto out;
    if (curl_url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER ||
        curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) != CURLUE_NO_PASSWORD)
        goto out;
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0])
        goto out;
    if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
        goto out;
    size_t hl = strlen(host);
    const char *h = host;
    if (h[0] == '[' && hl > 2 && h[hl - 1] == ']') { /* IPv6 literal */
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof(out->host))
        goto out;
    memcpy(out->host, h, hl);
    out->host[hl] = '\0';
    char *zone = NULL;
    bool has_zone = curl_url_get(u, CURLUPART_ZONEID, &zone, 0) == CURLUE_OK;
    curl_free(zone);
    if (has_zone || strchr(out->host, '%'))
        goto out; /* an IPv6 zone: a local interface */
    out->port = atoi(port);
    out->https = strcmp(scheme, "https") == 0;
    if (out->port <= 0 || out->port > 65535)
        goto out;
    rc = WH_URL_OK;
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(user);
    curl_free(pass);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

wh_url_rc_t wh_url_check(const char *url, bool allow_private, wh_url_t *out, char *addr,
                         size_t addrlen)
{
    wh_url_t tmp;
    if (!out)
        out = &tmp;
    wh_url_rc_t rc = wh_url_parse(url, out);
    if (rc != WH_URL_OK)
        return rc;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    /* getaddrinfo reads numeric forms (2130706433, 0x7f.1, 0177.1) as the addresses they
     * are, as inet_aton does */
    if (getaddrinfo(out->host, NULL, &hints, &res) != 0 || !res)
        return WH_URL_UNRESOLVED;
    rc = WH_URL_OK;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (!allow_private && !wh_addr_public(ai->ai_addr))
            rc = WH_URL_PRIVATE;
    if (rc == WH_URL_OK && addr && addrlen) {
        addr[0] = '\0';
        if (res->ai_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, addr,
                      (socklen_t)addrlen);
        else if (res->ai_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr, addr,
                      (socklen_t)addrlen);
    }
    freeaddrinfo(res);
    return rc;
}
