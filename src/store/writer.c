/* writer.c — see writer.h. */
#include "store/writer.h"
#include "store/store_int.h"

#include "core/log.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdlib.h>

struct writer {
    store_t *store;
    int max_batch;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    writer_item_t *head, *tail; /* FIFO */
    bool stopping;
    pthread_t thread;
};

void writer_submit(writer_t *w, writer_item_t *it)
{
    it->next = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = it;
    else
        w->head = it;
    w->tail = it;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Stores one batch in one transaction and wakes its requests. */
static void commit_batch(writer_t *w, writer_item_t *batch, record_t **recs,
                         idem_keep_t **keeps, bool any_keep, size_t n)
{
    char err[256];
    store_conn_t *c = store_conn(w->store, err, sizeof(err));
    int rc = STORE_UNAVAILABLE;
    if (!c)
        log_error("writer: cannot connect: %s", err);
    else
        rc = store_docs_create_completed(c, recs, any_keep ? keeps : NULL, n);
    if (rc != STORE_OK && rc != STORE_UNAVAILABLE)
        log_error("writer: %zu documents not stored: %s", n, store_rc_name(rc));
    while (batch) {
        writer_item_t *next = batch->next; /* the item may be gone once woken */
        batch->rc = rc;
        batch->wake(batch->arg);
        batch = next;
    }
}

static void *writer_main(void *arg)
{
    writer_t *w = arg;
    record_t **recs = xcalloc((size_t)w->max_batch, sizeof(*recs));
    idem_keep_t **keeps = xcalloc((size_t)w->max_batch, sizeof(*keeps));
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->head)
            break; /* stopping, and nothing left */
        writer_item_t *batch = w->head, *last = w->head;
        size_t n = 1;
        recs[0] = batch->rec;
        keeps[0] = batch->keep;
        bool any_keep = batch->keep != NULL;
        while (last->next && n < (size_t)w->max_batch) {
            last = last->next;
            any_keep |= last->keep != NULL;
            keeps[n] = last->keep;
            recs[n++] = last->rec;
        }
        w->head = last->next;
        if (!w->head)
            w->tail = NULL;
        last->next = NULL;
        pthread_mutex_unlock(&w->mu);
        commit_batch(w, batch, recs, keeps, any_keep, n);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    free(recs);
    free(keeps);
    return NULL;
}

writer_t *writer_start(store_t *store, int max_batch)
{
    writer_t *w = xcalloc(1, sizeof(*w));
    w->store = store;
    w->max_batch = max_batch > 0 ? max_batch : 1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (!thread_start(&w->thread, "ink-writer", writer_main, w)) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void writer_stop(writer_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
