/* export_pool.c — the export pool and its cache (see export_pool.h). */
#include "api/export_pool.h"

#include "core/log.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Nice value of the pool's threads: the kernel then runs the HTTP threads first. */
#define EXPORT_NICE 10
#define USER_SLOTS 64

typedef struct cache_entry {
    struct cache_entry *prev, *next; /* most recently used first */
    char *key;
    char *data;
    size_t len;
} cache_entry_t;

typedef struct {
    int64_t user;
    int count;
} user_count_t;

struct export_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *threads;
    int nthreads;
    int total, per_user;
    int used; /* places reserved (waiting, running, or about to be submitted) */
    user_count_t users[USER_SLOTS]; /* places per user; total is at most USER_SLOTS */
    export_task_t *head, *tail;
    bool stopping;
    /* cache */
    pthread_mutex_t cmu;
    cache_entry_t *lru_head, *lru_tail;
    size_t cache_bytes, cache_max;
};

static user_count_t *user_slot(export_pool_t *p, int64_t user, bool make)
{
    user_count_t *free_slot = NULL;
    for (int i = 0; i < USER_SLOTS; i++) {
        if (p->users[i].count > 0 && p->users[i].user == user)
            return &p->users[i];
        if (p->users[i].count == 0 && !free_slot)
            free_slot = &p->users[i];
    }
    if (make && free_slot)
        free_slot->user = user;
    return make ? free_slot : NULL;
}

static void release(export_pool_t *p, int64_t user)
{
    user_count_t *u = user_slot(p, user, false);
    if (u)
        u->count--;
    p->used--;
}

int export_pool_reserve(export_pool_t *p, int64_t user)
{
    pthread_mutex_lock(&p->mu);
    int rc = 0;
    user_count_t *u = user_slot(p, user, false);
    if (u && u->count >= p->per_user)
        rc = 429; /* this user's own exports: theirs to wait for */
    else if (p->stopping || p->used >= p->total)
        rc = 503;
    else if (!(u = user_slot(p, user, true)))
        rc = 503;
    if (rc == 0) {
        u->count++;
        p->used++;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void export_pool_unreserve(export_pool_t *p, int64_t user)
{
    pthread_mutex_lock(&p->mu);
    release(p, user);
    pthread_mutex_unlock(&p->mu);
}

void export_pool_submit(export_pool_t *p, export_task_t *t)
{
    t->next = NULL;
    t->cancelled = false;
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        pthread_mutex_unlock(&p->mu);
        t->cancelled = true;
        export_pool_unreserve(p, t->user);
        t->done(t);
        return;
    }
    if (p->tail)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *pool_main(void *arg)
{
    export_pool_t *p = arg;
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), EXPORT_NICE);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->cv, &p->mu);
        export_task_t *t = p->head;
        if (!t)
            break; /* stopping, nothing left */
        p->head = t->next;
        if (!p->head)
            p->tail = NULL;
        bool cancel = p->stopping;
        pthread_mutex_unlock(&p->mu);
        t->cancelled = cancel;
        if (!cancel)
            t->run(t);
        /* the place is given back before the request is resumed: its client may ask for
         * its next export as soon as it has the answer */
        pthread_mutex_lock(&p->mu);
        release(p, t->user);
        pthread_mutex_unlock(&p->mu);
        t->done(t); /* t is the caller's from here on */
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

export_pool_t *export_pool_start(int threads, int total, int per_user, size_t cache_bytes)
{
    export_pool_t *p = xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    thread_cond_init(&p->cv);
    pthread_mutex_init(&p->cmu, NULL);
    p->total = total < USER_SLOTS ? total : USER_SLOTS;
    p->per_user = per_user;
    p->cache_max = cache_bytes;
    p->threads = xcalloc((size_t)threads, sizeof(*p->threads));
    for (int i = 0; i < threads; i++) {
        char name[16];
        snprintf(name, sizeof(name), "ink-export-%u", (unsigned)i % 1000u);
        if (!thread_start(&p->threads[i], name, pool_main, p))
            break; /* (logged) fewer threads serve the exports */
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        log_error("export: cannot start the export threads");
        export_pool_free(p);
        return NULL;
    }
    return p;
}

void export_pool_stop(export_pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    p->nthreads = 0;
}

void export_pool_free(export_pool_t *p)
{
    if (!p)
        return;
    export_pool_stop(p);
    for (cache_entry_t *e = p->lru_head, *n; e; e = n) {
        n = e->next;
        free(e->key);
        free(e->data);
        free(e);
    }
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->cmu);
    free(p);
}

/* ---- the cache ---------------------------------------------------------------------- */

static void lru_unlink(export_pool_t *p, cache_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        p->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        p->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(export_pool_t *p, cache_entry_t *e)
{
    e->prev = NULL;
    e->next = p->lru_head;
    if (p->lru_head)
        p->lru_head->prev = e;
    p->lru_head = e;
    if (!p->lru_tail)
        p->lru_tail = e;
}

/* A few hundred entries at most (bounded by the bytes): a list is enough. */
static cache_entry_t *find(export_pool_t *p, const char *key)
{
    for (cache_entry_t *e = p->lru_head; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

bool export_cache_get(export_pool_t *p, const char *key, buf_t *out)
{
    pthread_mutex_lock(&p->cmu);
    cache_entry_t *e = find(p, key);
    if (e) {
        lru_unlink(p, e);
        lru_push(p, e);
        buf_append(out, e->data, e->len);
    }
    pthread_mutex_unlock(&p->cmu);
    return e != NULL;
}

void export_cache_put(export_pool_t *p, const char *key, const char *data, size_t len)
{
    if (len > p->cache_max / 4) /* one file never takes over the cache */
        return;
    cache_entry_t *e = xcalloc(1, sizeof(*e));
    e->key = xstrdup(key);
    e->data = xmalloc(len ? len : 1);
    memcpy(e->data, data, len);
    e->len = len;
    pthread_mutex_lock(&p->cmu);
    cache_entry_t *old = find(p, key);
    if (old) {
        lru_unlink(p, old);
        p->cache_bytes -= old->len;
        free(old->key);
        free(old->data);
        free(old);
    }
    lru_push(p, e);
    p->cache_bytes += len;
    while (p->cache_bytes > p->cache_max && p->lru_tail && p->lru_tail != e) {
        cache_entry_t *v = p->lru_tail;
        lru_unlink(p, v);
        p->cache_bytes -= v->len;
        free(v->key);
        free(v->data);
        free(v);
    }
    pthread_mutex_unlock(&p->cmu);
}
