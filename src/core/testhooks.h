/* testhooks.h — controls that only the tests use, compiled only into test builds, as
 * SQLite's SQLITE_TEST: with -DINK_TEST_HOOKS (the Makefile's TEST_HOOKS=1, the default
 * of `make`, `make check` and the sanitizer builds), never into a release build
 * (`make release`, and so `make run`, `make install` and `make deb`). In a release build
 * test_hook_env() is NULL, so every hook is dead code the compiler drops: the variables
 * below are not read, and their names are not in the binary.
 *
 *   INKWELL_TEST_NOW=YYYY-MM-DDTHH:MM:SSZ  the test clock (store_clock_us, store.h: the
 *                                          clock of quotas, key and session expiry and
 *                                          anything a test must move) starts at that time
 *                                          and stands there
 *   INKWELL_TEST_CLOCK_FILE=PATH           seconds added to the test clock, read from
 *                                          PATH at every call: a test moves time on by
 *                                          rewriting it (no file: nothing added)
 *   INKWELL_TEST_EXIT_AFTER_KEPT_COMMIT=1  records/service.c: SIGKILL right after a
 *                                          create's Idempotency-Key answer is committed
 *   INKWELL_TEST_EXPORT_HOLD=PATH          api/export.c: an export job waits for PATH
 *   INKWELL_TEST_SIGNIN_HOLD=PATH          api/session_api.c: a password check waits for PATH
 *
 * A new hook reads its variable with test_hook_env and is listed here and in
 * docs/testing.md ("Test controls"). */
#ifndef INKWELL_CORE_TESTHOOKS_H
#define INKWELL_CORE_TESTHOOKS_H

#include "core/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef INK_TEST_HOOKS
#define TEST_HOOKS 1
static inline const char *test_hook_env(const char *name)
{
    return getenv(name);
}
#else
#define TEST_HOOKS 0
static inline const char *test_hook_env(const char *name)
{
    (void)name;
    return NULL;
}
#endif

/* A hold hook (INKWELL_TEST_EXPORT_HOLD, INKWELL_TEST_SIGNIN_HOLD): when the variable
 * names PATH, appends a line "held" to PATH.log and waits until PATH exists, so that a
 * test fills a pool without depending on how long its work takes. Nothing in a release
 * build. */
static inline void test_hook_hold(const char *var)
{
    const char *hold = test_hook_env(var);
    if (!hold || !*hold)
        return;
    char log[4096];
    snprintf(log, sizeof(log), "%s.log", hold);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (write(fd, "held\n", 5) < 0) {
            /* the test sees no line and fails */
        }
        close(fd);
    }
    while (access(hold, F_OK) != 0)
        sleep_ms(10);
}

#endif
