/* thread.h — the program's threads: starting one (checked and reported), joining it,
 * and timed waits on a condition variable against the monotonic clock.
 *
 * Every deadline of the program is monotonic (a step of the wall clock — NTP, an
 * operator's `date` — neither stalls nor hurries a tick, a lease renewal or a sweep);
 * wall time (now_us) is only for timestamps people read. A condition variable that is
 * waited on with a timeout is made with thread_cond_init, and waited on with
 * thread_cond_wait_until / thread_cond_wait_for, whose deadlines come from mono_s(). */
#ifndef INKWELL_CORE_THREAD_H
#define INKWELL_CORE_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* Starts fn(arg) on a new thread named name (at most 15 characters are shown by ps and
 * the debuggers). On failure logs "cannot start thread NAME: REASON" and returns false
 * (*t is then not a thread: never join it). */
bool thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

/* The same for a thread nobody joins (it ends on its own); false (logged) when it could
 * not start: the caller does the work itself or goes without. */
bool thread_start_detached(const char *name, void *(*fn)(void *), void *arg);

/* Joins a thread thread_start started (started false: does nothing). */
void thread_join(pthread_t t, bool started);

/* A condition variable whose timed waits use CLOCK_MONOTONIC. */
void thread_cond_init(pthread_cond_t *cv);

/* Waits on cv (mu held) until signalled or mono_s() reaches deadline (seconds of the
 * monotonic clock). Returns false when the deadline has passed, true otherwise
 * (signalled, or woken spuriously: callers loop on their own condition). */
bool thread_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, double deadline);

/* The same for at most seconds from now. */
bool thread_cond_wait_for(pthread_cond_t *cv, pthread_mutex_t *mu, double seconds);

#endif
