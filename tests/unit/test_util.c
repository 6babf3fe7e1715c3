/* test_util.c — timestamps (against gmtime_r), buffers and the arena. */
#include "core/util.h"
#include "test.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static void check_ts(int64_t us)
{
    char got[32], want[96];
    fmt_timestamp(us, got);
    time_t secs = (time_t)(us >= 0 ? us / 1000000 : (us - 999999) / 1000000);
    long frac = (long)(us - (int64_t)secs * 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
    CHECK_STR(got, want);
}

/* SHA-256 known answers (FIPS 180-2 examples), from several threads at once: each
 * thread has its own digest context. */
static const struct {
    const char *in, *hex;
} sha_cases[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
};

static void *sha_thread(void *p)
{
    int *bad = p;
    for (int i = 0; i < 3000; i++) {
        char out[65];
        size_t k = (size_t)i % ARRAY_LEN(sha_cases);
        sha256_hex(sha_cases[k].in, strlen(sha_cases[k].in), out);
        *bad += strcmp(out, sha_cases[k].hex) != 0;
    }
    return NULL;
}

static void test_sha256(void)
{
    for (size_t k = 0; k < ARRAY_LEN(sha_cases); k++) {
        char out[65];
        sha256_hex(sha_cases[k].in, strlen(sha_cases[k].in), out);
        CHECK_STR(out, sha_cases[k].hex);
    }
    pthread_t th[4];
    int bad[4] = {0};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, sha_thread, &bad[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(bad[i], 0);
    }
}

int main(void)
{
    test_sha256();
    static const int64_t fixed[] = {0, 1, 999999, 1000000, 951782400000000LL /* 2000-02-29 */,
                                    1795262400123456LL, 4102444799999999LL /* 2099-12-31 */,
                                    -1, -1000001, 253402300799999999LL /* 9999-12-31 */};
    for (size_t i = 0; i < ARRAY_LEN(fixed); i++)
        check_ts(fixed[i]);
    char ts[32];
    fmt_timestamp(1795262400123456LL, ts);
    CHECK_STR(ts, "2026-11-21T12:00:00.123456Z");
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 20000; i++) { /* random instants over 1900..2300 */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t us = (int64_t)(x % 12623040000000000ULL) - 2208988800000000LL;
        check_ts(us);
    }
    buf_t b;
    buf_init(&b);
    CHECK_STR(buf_cstr(&b), "");
    for (int i = 0; i < 1000; i++)
        buf_putc(&b, (char)('a' + i % 26));
    CHECK_INT(b.len, 1000);
    CHECK_INT(b.data[1000], 0);
    buf_printf(&b, "%d-%s", 42, "x");
    CHECK_STR(b.data + 1000, "42-x");
    buf_free(&b);
    arena_t a;
    arena_init(&a);
    char *big = arena_alloc(&a, 100000);
    char *small = arena_strdup(&a, "hello");
    CHECK(big && small && ((uintptr_t)big % 16) == 0);
    CHECK_STR(arena_printf(&a, "%s %d", small, 7), "hello 7");
    arena_free(&a);
    TEST_DONE();
}
