/* test_proxies.c — src/http/proxies.c: the --trusted-proxies list (addresses, CIDR
 * ranges, IPv4, IPv6, IPv4-mapped forms) and the client address taken from
 * X-Forwarded-For. */
#include "http/proxies.h"
#include "test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>

static struct sockaddr_storage ss;

static const struct sockaddr *sa4(const char *s)
{
    struct sockaddr_in *a = (struct sockaddr_in *)&ss;
    memset(&ss, 0, sizeof(ss));
    a->sin_family = AF_INET;
    inet_pton(AF_INET, s, &a->sin_addr);
    return (const struct sockaddr *)&ss;
}

static const struct sockaddr *sa6(const char *s)
{
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
    memset(&ss, 0, sizeof(ss));
    a->sin6_family = AF_INET6;
    inet_pton(AF_INET6, s, &a->sin6_addr);
    return (const struct sockaddr *)&ss;
}

static void test_parse(void)
{
    char err[200];
    static const char *good[] = {"", "127.0.0.1", "10.0.0.0/8", "10.0.0.0/8, 192.168.1.7",
                                 "::1", "fd00::/8", "::ffff:127.0.0.1", "::ffff:10.0.0.0/104",
                                 "0.0.0.0/0", "::/0", " 1.2.3.4 ,, 5.6.7.8 "};
    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
        proxies_t *p = proxies_parse(good[i], err, sizeof(err));
        CHECK_MSG(p != NULL, "parse \"%s\": %s", good[i], p ? "" : err);
        proxies_free(p);
    }
    static const char *bad[] = {"localhost", "10.0.0.0/33", "::/129", "10.0.0.1/8", "1.2.3",
                                "10.0.0.0/", "10.0.0.0/x", "/8", "1.2.3.4/-1", "fe80::1%eth0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        err[0] = '\0';
        proxies_t *p = proxies_parse(bad[i], err, sizeof(err));
        CHECK_MSG(p == NULL && strstr(err, "trusted-proxies"), "parse \"%s\" must fail", bad[i]);
        proxies_free(p);
    }
    proxies_t *p = proxies_parse("1.2.3.4 , 10.0.0.0/8,::1", err, sizeof(err));
    CHECK_INT(proxies_count(p), 3);
    proxies_free(p);
}

static void test_match(void)
{
    char err[200];
    proxies_t *p = proxies_parse("10.0.0.0/8, 192.168.1.7, fd00::/8, ::ffff:172.16.0.0/108", err,
                                 sizeof(err));
    CHECK(p != NULL);
    CHECK(proxies_trusts(p, sa4("10.1.2.3")));
    CHECK(!proxies_trusts(p, sa4("11.0.0.1")));
    CHECK(proxies_trusts(p, sa4("192.168.1.7")));
    CHECK(!proxies_trusts(p, sa4("192.168.1.8")));
    CHECK(proxies_trusts(p, sa6("::ffff:10.9.9.9"))); /* mapped socket address */
    CHECK(proxies_trusts(p, sa6("fd12::1")));
    CHECK(!proxies_trusts(p, sa6("fe80::1")));
    CHECK(proxies_trusts(p, sa4("172.16.200.1"))); /* the mapped range, /12 in IPv4 */
    CHECK(!proxies_trusts(p, sa4("172.32.0.1")));
    CHECK(proxies_trusts_text(p, "::ffff:192.168.1.7"));
    CHECK(!proxies_trusts_text(p, "garbage"));
    CHECK(!proxies_trusts(NULL, sa4("10.1.2.3")));
    proxies_free(p);
    /* a zero-length prefix matches everything of its family... and IPv4 /0 only IPv4 */
    p = proxies_parse("0.0.0.0/0", err, sizeof(err));
    CHECK(proxies_trusts(p, sa4("8.8.8.8")));
    CHECK(!proxies_trusts(p, sa6("2001:db8::1")));
    proxies_free(p);
}

static void test_client(void)
{
    char err[200], out[64];
    proxies_t *p = proxies_parse("127.0.0.1, 10.0.0.0/8, fd00::/8", err, sizeof(err));
    static const struct {
        int v6;
        const char *peer, *xff, *want;
    } cases[] = {
        {0, "127.0.0.1", NULL, "127.0.0.1"},                    /* no header */
        {0, "127.0.0.1", "203.0.113.9", "203.0.113.9"},         /* one trusted hop */
        {0, "198.51.100.1", "203.0.113.9", "198.51.100.1"},     /* untrusted peer: ignored */
        {0, "127.0.0.1", "203.0.113.9, 10.0.0.2", "203.0.113.9"}, /* two trusted hops */
        {0, "127.0.0.1", "1.1.1.1, 203.0.113.9, 10.0.0.2", "203.0.113.9"}, /* spoofed left part */
        {0, "127.0.0.1", "10.0.0.5, 10.0.0.2", "10.0.0.5"},      /* all trusted: the left-most */
        {0, "127.0.0.1", "::ffff:203.0.113.9", "203.0.113.9"},   /* mapped form, canonical */
        {0, "127.0.0.1", "203.0.113.9, ::ffff:10.0.0.2", "203.0.113.9"}, /* mapped trusted hop */
        {0, "127.0.0.1", "2001:db8::7", "2001:db8::7"},
        {0, "127.0.0.1", "[2001:db8::7]:4711", "2001:db8::7"},
        {0, "127.0.0.1", "203.0.113.9:4711", "203.0.113.9"},
        {0, "127.0.0.1", "2001:db8::7, fd00::3", "2001:db8::7"},
        {0, "127.0.0.1", "unknown", "127.0.0.1"},                /* malformed: the hop */
        {0, "127.0.0.1", "203.0.113.9, unknown, 10.0.0.2", "10.0.0.2"},
        {0, "127.0.0.1", "", "127.0.0.1"},
        {0, "127.0.0.1", " 203.0.113.9 ,, ", "203.0.113.9"},     /* blanks skipped */
        {1, "::ffff:127.0.0.1", "203.0.113.9", "203.0.113.9"},   /* mapped peer */
        {1, "fd00::1", "198.51.100.4", "198.51.100.4"},
        {1, "2001:db8::1", "198.51.100.4", "2001:db8::1"},
        {1, "::ffff:198.51.100.1", "203.0.113.9", "198.51.100.1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        const struct sockaddr *peer = cases[i].v6 ? sa6(cases[i].peer) : sa4(cases[i].peer);
        proxies_client(p, peer, cases[i].xff, out, sizeof(out));
        CHECK_MSG(strcmp(out, cases[i].want) == 0, "peer %s xff \"%s\": got %s, want %s",
                  cases[i].peer, cases[i].xff ? cases[i].xff : "(none)", out, cases[i].want);
    }
    /* no list: the header never counts */
    proxies_client(NULL, sa4("127.0.0.1"), "203.0.113.9", out, sizeof(out));
    CHECK_STR(out, "127.0.0.1");
    proxies_free(p);
}

/* The per-address limits' key: IPv4 as it is, IPv6 as its /64. */
static void test_limit_key(void)
{
    static const char *cases[][2] = {
        {"192.0.2.1", "192.0.2.1"},
        {"::1", "::/64"},
        {"2001:db8:1:2::5", "2001:db8:1:2::/64"},
        {"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
        {"fe80::1:2:3:4", "fe80::/64"},
        {"unknown", "unknown"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        proxies_limit_key(cases[i][0], out, sizeof(out));
        CHECK_MSG(strcmp(out, cases[i][1]) == 0, "%s: got %s, want %s", cases[i][0], out,
                  cases[i][1]);
    }
}

int main(void)
{
    test_parse();
    test_match();
    test_client();
    test_limit_key();
    TEST_DONE();
}
