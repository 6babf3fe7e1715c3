/* sweeper.c — the media sweeper thread (see sweeper.h). */
#include "media/sweeper.h"

#include "core/log.h"
#include "core/thread.h"
#include "core/util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct media_sweeper {
    media_t *m;
    store_t *store;
    double age_s, interval_s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
};

int media_sweep_once(media_t *m, store_t *store, double age_s)
{
    int removed = media_clean_temp(m, age_s);
    char err[256];
    store_conn_t *c = store_conn(store, err, sizeof(err));
    if (!c) {
        log_warn("media: sweep skipped: storage: %s", err);
        return removed;
    }
    time_t at = time(NULL); /* before the keys are read (media_sweep) */
    arena_t a;
    arena_init(&a);
    const char **keys;
    size_t n;
    int rc = store_media_keys(c, &a, &keys, &n);
    if (rc == STORE_OK)
        removed += media_sweep(m, keys, n, age_s, at);
    else
        log_warn("media: sweep skipped: cannot read the media keys: %s", store_rc_name(rc));
    arena_free(&a);
    return removed;
}

static void *sweeper_main(void *arg)
{
    media_sweeper_t *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop && s->interval_s > 0) {
        double until = mono_s() + s->interval_s;
        while (!s->stop && thread_cond_wait_until(&s->cv, &s->mu, until)) {
        }
        if (s->stop)
            break;
        pthread_mutex_unlock(&s->mu);
        media_sweep_once(s->m, s->store, s->age_s);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

media_sweeper_t *media_sweeper_start(media_t *m, store_t *store, double age_s, double interval_s)
{
    media_sweeper_t *s = xcalloc(1, sizeof(*s));
    s->m = m;
    s->store = store;
    s->age_s = age_s;
    s->interval_s = interval_s;
    pthread_mutex_init(&s->mu, NULL);
    thread_cond_init(&s->cv);
    if (!thread_start(&s->thread, "ink-sweeper", sweeper_main, s)) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        free(s);
        return NULL;
    }
    return s;
}

void media_sweeper_stop(media_sweeper_t *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
