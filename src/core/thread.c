/* thread.c — see thread.h. */
#include "core/thread.h"

#include "core/log.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

bool thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(t, NULL, fn, arg);
    if (rc != 0) {
        log_error("cannot start thread %s: %s", name, strerror(rc));
        return false;
    }
    char short_name[16];
    snprintf(short_name, sizeof(short_name), "%s", name);
    pthread_setname_np(*t, short_name); /* a name for ps and gdb only: a failure is harmless */
    return true;
}

bool thread_start_detached(const char *name, void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (!thread_start(&t, name, fn, arg))
        return false;
    pthread_detach(t);
    return true;
}

void thread_join(pthread_t t, bool started)
{
    if (started)
        pthread_join(t, NULL);
}

void thread_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

bool thread_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, double deadline)
{
    if (!(deadline > 0) || !isfinite(deadline))
        deadline = mono_s() + 1e6; /* not a time: a long wait, never a spin */
    struct timespec ts;
    double whole = floor(deadline);
    ts.tv_sec = (time_t)whole;
    ts.tv_nsec = (long)((deadline - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (ts.tv_nsec < 0)
        ts.tv_nsec = 0;
    return pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT;
}

bool thread_cond_wait_for(pthread_cond_t *cv, pthread_mutex_t *mu, double seconds)
{
    return thread_cond_wait_until(cv, mu, mono_s() + (seconds > 0 ? seconds : 0));
}
