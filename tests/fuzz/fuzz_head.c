/* fuzz_head.c — request lines and header splitting (issue 17 item 1): the gate's check
 * of a connection's first head (http/gate.h), the server's checks of a target and of a
 * header field (http/limits.h), and the log's escaping (core/log.h), on arbitrary bytes.
 * Invariants: a head the gate lets through has a request line "METHOD SP TARGET SP
 * HTTP/D.D" whose target the server's check accepts, and no CR or NUL inside a header
 * line; a head that waits is shorter than the limit; a field the server accepts has no
 * CR, LF or NUL; a log line holds no control byte and nothing of an "ink_" key. */
#include "core/log.h"
#include "fuzz.h"
#include "http/gate.h"
#include "http/limits.h"

#include <string.h>

static void check_gate(const char *d, size_t n)
{
    int v = gate_check(d, n, true);
    FUZZ_CHECK(v == 0 || v == 1 || v == 400 || v == 431 || v == 505); /* 505: another HTTP version */
    FUZZ_CHECK(gate_check(d, n, false) != 0); /* a closed client is always answered */
    if (v == 0)
        FUZZ_CHECK(n <= HTTP_MAX_HEAD + 8);
    if (v != 1)
        return;
    size_t p = 0;
    while (p < n && (d[p] == '\r' || d[p] == '\n'))
        p++;
    const char *lf = memchr(d + p, '\n', n - p);
    FUZZ_CHECK(lf != NULL);
    size_t len = (size_t)(lf - (d + p));
    if (len && d[p + len - 1] == '\r')
        len--;
    const char *sp1 = memchr(d + p, ' ', len);
    FUZZ_CHECK(sp1 != NULL);
    const char *sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - (d + p)));
    FUZZ_CHECK(sp2 != NULL && sp2 > sp1 + 1);
    char target[HTTP_MAX_HEAD + 16];
    size_t tl = (size_t)(sp2 - sp1 - 1);
    memcpy(target, sp1 + 1, tl);
    target[tl] = '\0';
    FUZZ_CHECK(strlen(target) == tl && !http_target_bad(target));
    FUZZ_CHECK(memcmp(sp2 + 1, "HTTP/", 5) == 0);
    for (size_t i = p; i < p + len; i++)
        FUZZ_CHECK((unsigned char)d[i] >= 0x20 && d[i] != 0x7f);
}

static void check_field(const char *d, size_t n)
{
    const char *colon = memchr(d, ':', n);
    if (!colon)
        return;
    size_t kl = (size_t)(colon - d);
    if (http_field_bad(d, kl, colon + 1, n - kl - 1))
        return;
    for (size_t i = kl + 1; i < n; i++)
        FUZZ_CHECK(d[i] != '\r' && d[i] != '\n' && d[i] != '\0');
}

static void check_log(const char *d, size_t n)
{
    buf_t b;
    buf_init(&b);
    log_escape(&b, d, n);
    for (size_t i = 0; i < b.len; i++)
        FUZZ_CHECK((unsigned char)b.data[i] >= 0x20 && b.data[i] != 0x7f);
    for (const char *k = b.data; b.len && (k = strcasestr(k, "ink_")) != NULL; k += 4)
        FUZZ_CHECK(strncmp(k + 4, "[redacted]", 10) == 0);
    buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *d = (const char *)data;
    check_gate(d, size);
    check_field(d, size);
    check_log(d, size);
    return 0;
}
