/* test_webhooks.c — the pure parts of src/webhooks/: which addresses are public (every
 * IANA special-purpose range of IPv4 and IPv6 refused), the URL parse (scheme, host,
 * port, user-info, numeric forms), the retry schedule, the secrets' form and the
 * Standard Webhooks signature (the example of the specification's test vectors). */
#include "test.h"
#include "webhooks/webhooks.h"

static void test_addresses(void)
{
    static const char *const refused[] = {
        "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
        "127.0.0.1", "127.255.255.254", "169.254.0.1", "169.254.169.254", "172.16.0.1",
        "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.0.1",
        "198.18.0.1", "198.19.255.255", "198.51.100.1", "203.0.113.1", "224.0.0.1",
        "239.255.255.250", "240.0.0.1", "255.255.255.255", "::", "::1", "::ffff:127.0.0.1",
        "::ffff:8.8.8.8", "::127.0.0.1", "64:ff9b::808:808", "64:ff9b:1::1", "100::1",
        "2001::1", "2001:db8::1", "2002:c000:0204::1", "3fff::1", "fc00::1", "fd00:ec2::254",
        "fe80::1", "fec0::1", "ff02::1", "ff05::2", "not an address", ""};
    for (size_t i = 0; i < ARRAY_LEN(refused); i++)
        CHECK_MSG(!wh_addr_text_public(refused[i]), "%s taken as public", refused[i]);
    static const char *const taken[] = {"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1",
                                        "172.15.255.255", "172.32.0.1", "169.253.1.1",
                                        "2606:4700:4700::1111", "2a00:1450:4001::1",
                                        "2001:4860:4860::8888"};
    for (size_t i = 0; i < ARRAY_LEN(taken); i++)
        CHECK_MSG(wh_addr_text_public(taken[i]), "%s refused", taken[i]);
}

static void test_urls(void)
{
    wh_url_t u;
    CHECK_INT(wh_url_parse("https://example.com/hook", &u), WH_URL_OK);
    CHECK_STR(u.host, "example.com");
    CHECK_INT(u.port, 443);
    CHECK(u.https);
    CHECK_INT(wh_url_parse("http://[2606:4700::1]:8080/x?y=1", &u), WH_URL_OK);
    CHECK_STR(u.host, "2606:4700::1");
    CHECK_INT(u.port, 8080);
    static const char *const bad[] = {
        "", "example.com/hook", "ftp://example.com/", "file:///etc/passwd", "gopher://x/",
        "http://user@example.com/", "http://u:p@example.com/", "http:///x", "http://",
        "http://exa mple.com/", "http://example.com:0/", "http://example.com:65536/",
        "http://[fe80::1%25eth0]/", "https://example.com/\n", "javascript:alert(1)"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        CHECK_MSG(wh_url_parse(bad[i], &u) == WH_URL_BAD, "%s taken", bad[i]);
    /* numeric forms are read as the addresses they are */
    static const char *const loop[] = {"http://2130706433/", "http://0x7f.1/", "http://0177.1/",
                                       "http://127.1/", "http://[::ffff:7f00:1]/",
                                       "http://localhost/"};
    for (size_t i = 0; i < ARRAY_LEN(loop); i++) {
        wh_url_rc_t rc = wh_url_check(loop[i], false, &u, NULL, 0);
        CHECK_MSG(rc == WH_URL_PRIVATE, "%s: %d", loop[i], rc);
        CHECK_MSG(wh_url_check(loop[i], true, &u, NULL, 0) == WH_URL_OK, "%s allowed", loop[i]);
    }
    char addr[64];
    CHECK_INT(wh_url_check("http://134744072/", false, &u, addr, sizeof(addr)), WH_URL_OK);
    CHECK_STR(addr, "8.8.8.8");
    CHECK_INT(wh_url_check("http://no-such-host.invalid/", true, &u, NULL, 0), WH_URL_UNRESOLVED);
}

static void test_schedule_and_secrets(void)
{
    static const double want[] = {5, 30, 120, 600, 3600, 10800, 21600, 43200};
    for (int i = 0; i < 8; i++)
        CHECK(wh_retry_delay(i + 1) == want[i]);
    CHECK(wh_retry_delay(9) < 0);
    CHECK(wh_retry_delay(0) < 0);
    char a[WH_SECRET_LEN + 1], b[WH_SECRET_LEN + 1];
    wh_secret_new(a);
    wh_secret_new(b);
    CHECK_INT(strlen(a), WH_SECRET_LEN);
    CHECK(strncmp(a, "whsec_", 6) == 0);
    CHECK(strcmp(a, b) != 0);
    /* the Standard Webhooks specification's example */
    buf_t s;
    buf_init(&s);
    const char *body = "{\"test\": 2432232314}";
    CHECK(wh_sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
                  1614265330, body, strlen(body), &s));
    CHECK_STR(buf_cstr(&s), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    buf_reset(&s);
    CHECK(!wh_sign("nope", "msg_x", 1, "", 0, &s));
    CHECK(!wh_sign("whsec_!!!!", "msg_x", 1, "", 0, &s));
    buf_free(&s);
}

int main(void)
{
    test_addresses();
    test_urls();
    test_schedule_and_secrets();
    TEST_DONE();
}
