/* events.c — lifecycle events of records (see records.h): the subscribers of each
 * record, the process-wide observers, the text so far of the generations this
 * process runs, and the ticker that gives subscribers their REV_TICK.
 *
 * One mutex guards a small hash table of records that have subscribers or a
 * generation running here. Subscribers are called under it, so after
 * records_unsubscribe returns no callback can run; observers are called outside it. */
#include "records/records_int.h"

#include "core/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 1024

struct records_sub {
    records_sub_t *next;
    hub_entry_t *entry; /* NULL once released */
    records_event_fn fn;
    void *arg;
};

struct hub_entry {
    hub_entry_t *next;
    rec_kind_t kind;
    int64_t id, user_id;
    records_sub_t *subs;
    bool live;   /* this process generates it now: text holds what was written so far */
    buf_t text;
};

struct hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hub_entry_t *buckets[NBUCKETS];
    bool closing, stopping;
    struct {
        records_event_fn fn;
        void *arg;
    } observers[8];
    int nobservers;
    double tick_s;
    pthread_t ticker;
    bool ticker_started;
};

static size_t bucket_of(rec_kind_t kind, int64_t id)
{
    uint64_t h = (uint64_t)id * 2654435761u + (uint64_t)kind;
    return (size_t)(h % NBUCKETS);
}

static hub_entry_t *entry_find(hub_t *h, rec_kind_t kind, int64_t id, bool create)
{
    hub_entry_t **pp = &h->buckets[bucket_of(kind, id)];
    for (hub_entry_t *e = *pp; e; e = e->next)
        if (e->kind == kind && e->id == id)
            return e;
    if (!create)
        return NULL;
    hub_entry_t *e = xcalloc(1, sizeof(*e));
    e->kind = kind;
    e->id = id;
    buf_init(&e->text);
    e->next = *pp;
    *pp = e;
    return e;
}

/* Frees the entry when nothing needs it any more (under the lock). */
static void entry_maybe_free(hub_t *h, hub_entry_t *e)
{
    if (e->subs || e->live)
        return;
    hub_entry_t **pp = &h->buckets[bucket_of(e->kind, e->id)];
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp)
        *pp = e->next;
    buf_free(&e->text);
    free(e);
}

static void *ticker_main(void *arg)
{
    hub_t *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = (long)(h->tick_s * 1e9);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec += ns % 1000000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        if (h->stopping)
            break;
        rev_t ev = {.type = REV_TICK, .now_mono = mono_s()};
        for (size_t b = 0; b < NBUCKETS; b++)
            for (hub_entry_t *e = h->buckets[b]; e; e = e->next)
                for (records_sub_t *sub = e->subs; sub; sub = sub->next) {
                    ev.kind = e->kind;
                    ev.id = e->id;
                    sub->fn(sub->arg, &ev);
                }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

hub_t *hub_new(double tick_s)
{
    hub_t *h = xcalloc(1, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->tick_s = tick_s > 0 ? tick_s : 1;
    h->ticker_started = pthread_create(&h->ticker, NULL, ticker_main, h) == 0;
    return h;
}

void hub_free(hub_t *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    h->stopping = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    if (h->ticker_started)
        pthread_join(h->ticker, NULL);
    for (size_t b = 0; b < NBUCKETS; b++) {
        hub_entry_t *e = h->buckets[b];
        while (e) {
            hub_entry_t *next = e->next;
            for (records_sub_t *sub = e->subs; sub; sub = sub->next)
                sub->entry = NULL; /* their owners free them */
            buf_free(&e->text);
            free(e);
            e = next;
        }
    }
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

void hub_observe(hub_t *h, records_event_fn fn, void *arg)
{
    pthread_mutex_lock(&h->mu);
    if (h->nobservers < (int)ARRAY_LEN(h->observers)) {
        h->observers[h->nobservers].fn = fn;
        h->observers[h->nobservers].arg = arg;
        h->nobservers++;
    } else {
        log_error("records: too many observers; one is ignored");
    }
    pthread_mutex_unlock(&h->mu);
}

records_sub_t *hub_subscribe(hub_t *h, rec_kind_t kind, int64_t user_id, int64_t id, records_event_fn fn,
                             void *arg, char **live_text, size_t *live_len)
{
    records_sub_t *sub = xcalloc(1, sizeof(*sub));
    sub->fn = fn;
    sub->arg = arg;
    if (live_text)
        *live_text = NULL;
    if (live_len)
        *live_len = 0;
    pthread_mutex_lock(&h->mu);
    if (h->closing) {
        pthread_mutex_unlock(&h->mu);
        rev_t ev = {.type = REV_RELEASED, .kind = kind, .id = id};
        fn(arg, &ev);
        return sub; /* released: entry NULL */
    }
    hub_entry_t *e = entry_find(h, kind, id, true);
    e->user_id = user_id;
    sub->entry = e;
    sub->next = e->subs;
    e->subs = sub;
    if (e->live && live_text) {
        *live_text = xmalloc(e->text.len + 1);
        memcpy(*live_text, e->text.data ? e->text.data : "", e->text.len);
        (*live_text)[e->text.len] = '\0';
        if (live_len)
            *live_len = e->text.len;
    }
    pthread_mutex_unlock(&h->mu);
    return sub;
}

void hub_unsubscribe(hub_t *h, records_sub_t *sub)
{
    if (!sub)
        return;
    pthread_mutex_lock(&h->mu);
    hub_entry_t *e = sub->entry;
    if (e) {
        records_sub_t **pp = &e->subs;
        while (*pp && *pp != sub)
            pp = &(*pp)->next;
        if (*pp)
            *pp = sub->next;
        entry_maybe_free(h, e);
    }
    pthread_mutex_unlock(&h->mu);
    free(sub);
}

int hub_subscribers(hub_t *h, rec_kind_t kind, int64_t id)
{
    int n = 0;
    pthread_mutex_lock(&h->mu);
    hub_entry_t *e = entry_find(h, kind, id, false);
    for (records_sub_t *sub = e ? e->subs : NULL; sub; sub = sub->next)
        n++;
    pthread_mutex_unlock(&h->mu);
    return n;
}

void hub_publish(hub_t *h, const rev_t *ev, bool local)
{
    pthread_mutex_lock(&h->mu);
    bool need = local && (ev->type == REV_GENERATING || ev->type == REV_TEXT);
    hub_entry_t *e = entry_find(h, ev->kind, ev->id, need && ev->id > 0);
    if (e) {
        if (local) {
            if (ev->type == REV_GENERATING) {
                e->live = true;
                buf_reset(&e->text);
            } else if (ev->type == REV_TEXT && e->live) {
                buf_append(&e->text, ev->text, ev->len);
            } else if (ev->type == REV_COMPLETED || ev->type == REV_FAILED ||
                       ev->type == REV_DELETED) {
                e->live = false;
                buf_free(&e->text);
                buf_init(&e->text);
            }
        }
        for (records_sub_t *sub = e->subs; sub; sub = sub->next)
            sub->fn(sub->arg, ev);
        entry_maybe_free(h, e);
    }
    int nobs = h->nobservers;
    pthread_mutex_unlock(&h->mu);
    if (local)
        for (int i = 0; i < nobs; i++)
            h->observers[i].fn(h->observers[i].arg, ev);
}

void hub_release(hub_t *h)
{
    pthread_mutex_lock(&h->mu);
    h->closing = true;
    for (size_t b = 0; b < NBUCKETS; b++)
        for (hub_entry_t *e = h->buckets[b]; e; e = e->next) {
            rev_t ev = {.type = REV_RELEASED, .kind = e->kind, .id = e->id};
            records_sub_t *sub = e->subs;
            e->subs = NULL;
            while (sub) {
                records_sub_t *next = sub->next;
                sub->entry = NULL;
                sub->fn(sub->arg, &ev);
                sub = next;
            }
        }
    pthread_mutex_unlock(&h->mu);
}

/* The ids of records that have subscribers here (for the PostgreSQL listener, which
 * only reads what somebody waits for). Returns how many were written. */
size_t hub_watched(hub_t *h, rec_kind_t *kinds, int64_t *user_ids, int64_t *ids, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&h->mu);
    for (size_t b = 0; b < NBUCKETS && n < max; b++)
        for (hub_entry_t *e = h->buckets[b]; e && n < max; e = e->next)
            if (e->subs) {
                kinds[n] = e->kind;
                user_ids[n] = e->user_id;
                ids[n] = e->id;
                n++;
            }
    pthread_mutex_unlock(&h->mu);
    return n;
}
