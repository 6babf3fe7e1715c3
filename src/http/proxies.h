/* proxies.h — trusted proxies (--trusted-proxies) and the client address they forward.
 *
 * A list of addresses and CIDR ranges, IPv4 and IPv6 ("10.0.0.0/8, 127.0.0.1,
 * fd00::/8"). Every address is kept as IPv6, IPv4 as its IPv4-mapped form
 * (::ffff:a.b.c.d), so that 127.0.0.1 and ::ffff:127.0.0.1 are one address whichever
 * form the list, the socket or X-Forwarded-For uses.
 *
 * The client address of a request: the peer's, unless the peer is trusted; then the
 * right-most address of X-Forwarded-For that is not itself trusted (each trusted hop
 * appended the address it saw). A malformed entry stops the walk there: the client is
 * the hop to its right (the last address a trusted proxy vouched for). Addresses are
 * written canonically (IPv4-mapped ones as plain IPv4), so one client has one
 * rate-limit bucket whatever form its proxy wrote. */
#ifndef INK_HTTP_PROXIES_H
#define INK_HTTP_PROXIES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct proxies proxies_t;

/* Parses a comma- or space-separated list; "" gives an empty list (no proxy is
 * trusted). NULL with a message in err on a bad entry. */
proxies_t *proxies_parse(const char *list, char *err, size_t errlen);
void proxies_free(proxies_t *p);
/* Entries in the list. */
size_t proxies_count(const proxies_t *p);

/* Whether a socket address / an address in text is trusted (NULL p: none is). */
bool proxies_trusts(const proxies_t *p, const struct sockaddr *sa);
bool proxies_trusts_text(const proxies_t *p, const char *addr);

/* The canonical text of a socket address ("unknown" for other families). */
void proxies_addr_text(const struct sockaddr *sa, char *out, size_t outlen);

/* The key of a client address (canonical text, as proxies_client writes it) for the
 * per-address limits: an IPv4 address as it is, an IPv6 one as its /64 network
 * ("2001:db8:1:2::/64"), since one host or home holds a whole /64 and would
 * otherwise have 2^64 buckets. */
void proxies_limit_key(const char *addr, char *out, size_t outlen);

/* The client address of a request from peer with the X-Forwarded-For value xff
 * (NULL when absent; several headers joined with ","), into out (at least 46
 * bytes, INET6_ADDRSTRLEN). */
void proxies_client(const proxies_t *p, const struct sockaddr *peer, const char *xff, char *out,
                    size_t outlen);

#endif
