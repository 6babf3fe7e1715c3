/* bench_metrics.c — what counting one HTTP request costs (obs/metrics.h): the calls the
 * server makes per request (metrics_http_begin + metrics_http_done), timed on one
 * thread and on two threads at once hitting the same counters (the worst case of
 * atomics: one cache line bounced between cores), and the same with metrics off.
 * Prints nanoseconds per request; compare with a request's own cost (show: 1/req/s).
 * Usage: bench_metrics [millions of requests per thread]   (default 5) */
#include "core/util.h"
#include "obs/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < per_thread; i++) {
        metrics_http_begin();
        metrics_http_done(MR_DOCUMENT, "GET", 200, 0.0004 + (double)(i & 7) * 1e-4);
    }
    return NULL;
}

static double run(int threads)
{
    pthread_t t[2];
    double t0 = mono_s();
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return (mono_s() - t0) * 1e9 / (double)per_thread; /* wall ns per request per thread */
}

int main(int argc, char **argv)
{
    per_thread = (argc > 1 ? atol(argv[1]) : 5) * 1000000L;
    metrics_init(true, "builtin", "sqlite");
    run(1); /* warm up */
    double on1 = run(1), on2 = run(2);
    metrics_init(false, "builtin", "sqlite");
    double off1 = run(1);
    printf("counting one request (begin + done), ns: metrics on, 1 thread %.1f; "
           "2 threads on the same counters %.1f; metrics off %.1f\n", on1, on2, off1);
    return 0;
}
