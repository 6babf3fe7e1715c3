/* test.h — a tiny table-friendly unit test kit with typed asserts that print both
 * values (in the spirit of libuv's task.h). Each test binary ends with
 * TEST_DONE(), which prints "<file>: N passed, N failed" and sets the exit code. */
#ifndef INK_TEST_H
#define INK_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_passed, t_failed;

#define T_REPORT(ok, ...)                                                                          \
    do {                                                                                           \
        if (ok) {                                                                                  \
            t_passed++;                                                                            \
        } else {                                                                                   \
            t_failed++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK(cond) T_REPORT((cond), "%s", #cond)
#define CHECK_MSG(cond, ...) T_REPORT((cond), __VA_ARGS__)
#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        T_REPORT(a_ == b_, "%s == %s: %lld != %lld", #a, #b, a_, b_);                              \
    } while (0)
#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        T_REPORT(a_ && b_ && strcmp(a_, b_) == 0, "%s == %s: \"%s\" != \"%s\"", #a, #b,            \
                 a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                          \
    } while (0)

/* Tests and time (docs/testing.md): no verdict may depend on the machine's speed. An
 * upper bound on elapsed time is the schedule the code under test must keep (its
 * timeouts, waits, backoff) plus a margin for the machine's own work, and that margin is
 * multiplied by test_slow(): 3 in an ASan/UBSan build, 5 under TSan, INKWELL_TEST_SLOW if set, else 1. */
#if defined(__SANITIZE_THREAD__)
#define T_SANITIZED 5 /* ThreadSanitizer: 5-15x slower, more than ASan */
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define T_SANITIZED 3
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_SANITIZED 5
#elif __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define T_SANITIZED 3
#endif
#endif
#ifndef T_SANITIZED
#define T_SANITIZED 1
#endif
static inline double test_slow(void)
{
    const char *s = getenv("INKWELL_TEST_SLOW");
    double v = s ? strtod(s, NULL) : 0;
    return v > 0 ? v : T_SANITIZED;
}

#define TEST_DONE()                                                                                \
    do {                                                                                           \
        printf("unit %s: %d passed, %d failed\n", __FILE__, t_passed, t_failed);                   \
        return t_failed ? 1 : 0;                                                                   \
    } while (0)

#endif
