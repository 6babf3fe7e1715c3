/* export_pool.h — CPU-heavy answers (document exports) off the HTTP threads.
 *
 * A bounded pool of threads, run at a lower scheduling priority than the HTTP threads,
 * renders what an export needs while its request is suspended (http_suspend: the
 * connection costs no HTTP thread meanwhile) and resumes the request when done. A
 * request first reserves a place (export_pool_reserve): at most per_user places per
 * user and total places in all (running and waiting); past them the caller answers
 * 429 or 503 with Retry-After at once, so that no client ever waits behind a queue
 * it cannot see, and no HTTP thread is held.
 *
 * The pool also keeps rendered files by key (the document's id, version and format)
 * in a bounded LRU cache, so that the same version is rendered once. */
#ifndef INK_API_EXPORT_POOL_H
#define INK_API_EXPORT_POOL_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct export_pool export_pool_t;

typedef struct export_task {
    struct export_task *next; /* the pool's */
    int64_t user;
    /* run on a pool thread; then done (on the same thread) with cancelled = true when
     * the pool stopped before running it */
    void (*run)(struct export_task *t);
    void (*done)(struct export_task *t);
    bool cancelled;
    void *arg;
} export_task_t;

export_pool_t *export_pool_start(int threads, int total, int per_user, size_t cache_bytes);
/* Runs what waits as cancelled, waits for what runs; every task's done is called.
 * Then every reservation is refused (503) until export_pool_free. */
void export_pool_stop(export_pool_t *p);
void export_pool_free(export_pool_t *p);

/* Takes a place for user: 0, or 429 (the user has per_user), or 503 (the pool is full). */
int export_pool_reserve(export_pool_t *p, int64_t user);
/* Gives back a place taken by export_pool_reserve that will not be used. */
void export_pool_unreserve(export_pool_t *p, int64_t user);
/* Queues t on a reserved place; the place is given back after t->run, before t->done. */
void export_pool_submit(export_pool_t *p, export_task_t *t);

/* The cache: a copy of the bytes kept under key, with its content type. */
bool export_cache_get(export_pool_t *p, const char *key, buf_t *out);
void export_cache_put(export_pool_t *p, const char *key, const char *data, size_t len);

#endif
