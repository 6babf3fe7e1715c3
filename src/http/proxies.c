/* proxies.c — trusted proxies and X-Forwarded-For. See proxies.h. */
#include "http/proxies.h"

#include "core/util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t addr[16]; /* IPv6; IPv4 as ::ffff:a.b.c.d */
    int bits;         /* prefix length over the 128 bits */
} range_t;

struct proxies {
    range_t *r;
    size_t n;
};

static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* Parses one address (no prefix) into 16 bytes; *v4 says it was written as IPv4. */
static bool parse_addr(const char *s, uint8_t out[16], bool *v4)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, s, &a4) == 1) {
        memcpy(out, v4mapped, 12);
        memcpy(out + 12, &a4, 4);
        *v4 = true;
        return true;
    }
    if (inet_pton(AF_INET6, s, &a6) == 1) {
        memcpy(out, &a6, 16);
        *v4 = false;
        return true;
    }
    return false;
}

static bool in_range(const range_t *r, const uint8_t a[16])
{
    int bits = r->bits;
    for (int i = 0; i < 16 && bits > 0; i++, bits -= 8) {
        uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
        if ((a[i] & mask) != (r->addr[i] & mask))
            return false;
    }
    return true;
}

static bool trusts16(const proxies_t *p, const uint8_t a[16])
{
    if (!p)
        return false;
    for (size_t i = 0; i < p->n; i++)
        if (in_range(&p->r[i], a))
            return true;
    return false;
}

static int parse_entry(const char *tok, range_t *out, char *err, size_t errlen)
{
    char host[64];
    const char *slash = strchr(tok, '/');
    size_t hl = slash ? (size_t)(slash - tok) : strlen(tok);
    bool v4;
    if (hl == 0 || hl >= sizeof(host))
        goto bad;
    memcpy(host, tok, hl);
    host[hl] = '\0';
    if (!parse_addr(host, out->addr, &v4))
        goto bad;
    int max = v4 ? 32 : 128, bits = max;
    if (slash) {
        char *end;
        long b = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end || b < 0 || b > max)
            goto bad;
        bits = (int)b;
    }
    out->bits = v4 ? bits + 96 : bits;
    /* the address below the prefix must be zero: "10.0.0.1/8" is likely a mistake */
    range_t exact = *out;
    for (int i = 0, left = out->bits; i < 16; i++, left -= 8) {
        uint8_t keep = left >= 8 ? 0xff : left <= 0 ? 0 : (uint8_t)(0xff << (8 - left));
        exact.addr[i] &= keep;
    }
    if (memcmp(exact.addr, out->addr, 16) != 0) {
        snprintf(err, errlen, "trusted-proxies: %s has bits set beyond its /%d prefix", tok, bits);
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "trusted-proxies: \"%s\" is not an address or CIDR range", tok);
    return -1;
}

proxies_t *proxies_parse(const char *list, char *err, size_t errlen)
{
    proxies_t *p = xcalloc(1, sizeof(*p));
    const char *s = list ? list : "";
    while (*s) {
        s += strspn(s, ", \t");
        size_t n = strcspn(s, ", \t");
        if (n == 0)
            break;
        char tok[128];
        if (n >= sizeof(tok)) {
            snprintf(err, errlen, "trusted-proxies: an entry is too long");
            proxies_free(p);
            return NULL;
        }
        memcpy(tok, s, n);
        tok[n] = '\0';
        p->r = xrealloc(p->r, (p->n + 1) * sizeof(*p->r));
        if (parse_entry(tok, &p->r[p->n], err, errlen) != 0) {
            proxies_free(p);
            return NULL;
        }
        p->n++;
        s += n;
    }
    return p;
}

void proxies_free(proxies_t *p)
{
    if (!p)
        return;
    free(p->r);
    free(p);
}

size_t proxies_count(const proxies_t *p)
{
    return p ? p->n : 0;
}

static bool sockaddr16(const struct sockaddr *sa, uint8_t out[16])
{
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET) {
        memcpy(out, v4mapped, 12);
        memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

bool proxies_trusts(const proxies_t *p, const struct sockaddr *sa)
{
    uint8_t a[16];
    return sockaddr16(sa, a) && trusts16(p, a);
}

bool proxies_trusts_text(const proxies_t *p, const char *addr)
{
    uint8_t a[16];
    bool v4;
    return parse_addr(addr, a, &v4) && trusts16(p, a);
}

static void text16(const uint8_t a[16], char *out, size_t outlen)
{
    char buf[INET6_ADDRSTRLEN];
    if (memcmp(a, v4mapped, 12) == 0)
        inet_ntop(AF_INET, a + 12, buf, sizeof(buf));
    else
        inet_ntop(AF_INET6, a, buf, sizeof(buf));
    snprintf(out, outlen, "%s", buf);
}

void proxies_addr_text(const struct sockaddr *sa, char *out, size_t outlen)
{
    uint8_t a[16];
    if (sockaddr16(sa, a))
        text16(a, out, outlen);
    else
        snprintf(out, outlen, "unknown");
}

void proxies_limit_key(const char *addr, char *out, size_t outlen)
{
    uint8_t a[16];
    bool v4;
    if (!parse_addr(addr, a, &v4) || memcmp(a, v4mapped, 12) == 0) {
        snprintf(out, outlen, "%s", addr);
        return;
    }
    memset(a + 8, 0, 8); /* the /64: one subscriber's network (RFC 6177) */
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, a, buf, sizeof(buf));
    snprintf(out, outlen, "%s/64", buf);
}

/* One X-Forwarded-For element, trimmed, as an address: "1.2.3.4", "1.2.3.4:80",
 * "2001:db8::1", "[2001:db8::1]:80", "::ffff:1.2.3.4". False when it is none. */
static bool xff_entry(const char *s, size_t n, uint8_t out[16])
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *host = buf;
    if (buf[0] == '[') { /* [v6] or [v6]:port */
        char *close = strchr(buf, ']');
        if (!close || (close[1] && close[1] != ':'))
            return false;
        *close = '\0';
        host = buf + 1;
    } else {
        char *colon = strchr(buf, ':');
        if (colon && !strchr(colon + 1, ':') && strchr(buf, '.')) /* v4:port */
            *colon = '\0';
    }
    bool v4;
    return parse_addr(host, out, &v4);
}

void proxies_client(const proxies_t *p, const struct sockaddr *peer, const char *xff, char *out,
                    size_t outlen)
{
    uint8_t a[16];
    if (!sockaddr16(peer, a)) {
        snprintf(out, outlen, "unknown");
        return;
    }
    if (xff && trusts16(p, a)) {
        /* walk from the right: each trusted hop vouches for the entry before it */
        size_t end = strlen(xff);
        for (;;) {
            size_t start = end;
            while (start > 0 && xff[start - 1] != ',')
                start--;
            uint8_t e[16];
            if (!xff_entry(xff + start, end - start, e)) {
                /* blank entries (",,") are skipped; anything else stops the walk */
                size_t k = start;
                while (k < end && (xff[k] == ' ' || xff[k] == '\t'))
                    k++;
                if (k != end)
                    break;
            } else {
                memcpy(a, e, 16);
                if (!trusts16(p, a))
                    break;
            }
            if (start == 0)
                break;
            end = start - 1;
        }
    }
    text16(a, out, outlen);
}
