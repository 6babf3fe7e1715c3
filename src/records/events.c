/* events.c — lifecycle events of records (see records.h): the subscribers of each
 * record, the process-wide observers, the text so far of the generations this
 * process runs (or follows for subscribers here), piece by piece with their numbers
 * for replays, the last number each record's subscribers got (older ones and repeats
 * are dropped), and the ticker that gives subscribers their REV_TICK.
 *
 * One mutex guards a small hash table of records that have subscribers or a
 * generation running here. Subscribers are called under it, so after
 * records_unsubscribe returns no callback can run; observers are called outside it.
 * The entries that have subscribers are also on one list (watched), which the ticker
 * walks: a tick costs one call per subscriber, and with none the ticker sleeps until
 * one subscribes. */
#include "records/records_int.h"

#include "core/log.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 1024

struct records_sub {
    records_sub_t *next;
    hub_entry_t *entry; /* NULL once released */
    records_event_fn fn;
    void *arg;
    int64_t job_id; /* the client of one generation (hub_subscribe_job), else 0 */
};

/* A piece of the text held: it ends at byte end and its number is seq. */
typedef struct {
    int64_t end, seq;
} piece_t;

struct hub_entry {
    hub_entry_t *next;
    hub_entry_t *wprev, *wnext; /* on the watched list while it has subscribers */
    rec_kind_t kind;
    int64_t id, user_id;
    records_sub_t *subs;
    bool live;     /* this process generates it now */
    bool followed; /* another process does, and subscribers here follow it */
    int64_t gen_seq; /* live or followed: the generation's GENERATING number */
    buf_t text;    /* live or followed: the text so far, */
    piece_t *pieces; /* cut in its pieces */
    size_t npieces, cap;
    int64_t seq;   /* the last number the subscribers got */
    unsigned seq_types; /* which of TEXT and REVISION they got with it (shared_bit) */
};

struct hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hub_entry_t *buckets[NBUCKETS];
    hub_entry_t *watched; /* the entries that have subscribers */
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

/* An entry's first subscriber puts it on the watched list, its last one takes it off
 * (under the lock); the ticker is woken when the list was empty. */
static void watch(hub_t *h, hub_entry_t *e)
{
    e->wprev = NULL;
    e->wnext = h->watched;
    if (h->watched)
        h->watched->wprev = e;
    else
        pthread_cond_broadcast(&h->cv);
    h->watched = e;
}

static void unwatch(hub_t *h, hub_entry_t *e)
{
    if (e->wprev)
        e->wprev->wnext = e->wnext;
    else if (h->watched == e)
        h->watched = e->wnext;
    if (e->wnext)
        e->wnext->wprev = e->wprev;
    e->wprev = e->wnext = NULL;
}

/* Frees the entry when nothing needs it any more (under the lock). */
static void entry_maybe_free(hub_t *h, hub_entry_t *e)
{
    if (e->subs || e->live)
        return; /* (another process's text is held for subscribers only) */
    hub_entry_t **pp = &h->buckets[bucket_of(e->kind, e->id)];
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp)
        *pp = e->next;
    buf_free(&e->text);
    free(e->pieces);
    free(e);
}

/* Forgets the text held (under the lock). */
static void text_drop(hub_entry_t *e)
{
    e->live = e->followed = false;
    buf_free(&e->text);
    buf_init(&e->text);
    free(e->pieces);
    e->pieces = NULL;
    e->npieces = e->cap = 0;
}

/* Holds a TEXT event's piece when it continues the text held (under the lock). */
static void text_add(hub_entry_t *e, const rev_t *ev)
{
    if (ev->offset - (int64_t)ev->len != (int64_t)e->text.len)
        return;
    buf_append(&e->text, ev->text, ev->len);
    if (e->npieces == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 64;
        e->pieces = xrealloc(e->pieces, e->cap * sizeof(*e->pieces));
    }
    e->pieces[e->npieces++] = (piece_t){ev->offset, ev->seq};
}

/* Replays to one subscriber what the entry holds numbered after from (under the lock). */
static void replay(hub_entry_t *e, records_sub_t *sub, int64_t from)
{
    if (!e->live && !e->followed)
        return;
    rev_t ev = {.kind = e->kind, .id = e->id, .user_id = e->user_id, .gen_seq = e->gen_seq};
    if (e->gen_seq > from) {
        ev.type = REV_GENERATING;
        ev.seq = e->gen_seq;
        sub->fn(sub->arg, &ev);
    }
    ev.type = REV_TEXT;
    int64_t start = 0, prev = e->gen_seq;
    for (size_t i = 0; i < e->npieces; i++) {
        const piece_t *p = &e->pieces[i];
        if (p->seq > from) {
            ev.text = e->text.data + start;
            ev.len = (size_t)(p->end - start);
            ev.offset = p->end;
            ev.seq = p->seq;
            ev.pieces = p->seq - prev;
            sub->fn(sub->arg, &ev);
        }
        start = p->end;
        prev = p->seq;
    }
}

/* Every tick_s (monotonic) while some record has subscribers, each subscriber gets a
 * REV_TICK; with none the ticker waits until one subscribes. */
static void *ticker_main(void *arg)
{
    hub_t *h = arg;
    pthread_mutex_lock(&h->mu);
    double next = mono_s() + h->tick_s;
    while (!h->stopping) {
        if (!h->watched) {
            pthread_cond_wait(&h->cv, &h->mu);
            next = mono_s() + h->tick_s;
            continue;
        }
        if (thread_cond_wait_until(&h->cv, &h->mu, next))
            continue; /* woken (or spuriously): the deadline stays */
        double now = mono_s();
        next = next + h->tick_s > now ? next + h->tick_s : now + h->tick_s;
        rev_t ev = {.type = REV_TICK, .now_mono = now};
        for (hub_entry_t *e = h->watched; e; e = e->wnext)
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
    thread_cond_init(&h->cv);
    h->tick_s = tick_s > 0 ? tick_s : 1;
    /* without the ticker no wait limit would ever expire: no hub */
    if (!(h->ticker_started = thread_start(&h->ticker, "ink-ticker", ticker_main, h))) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        free(h);
        return NULL;
    }
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
    thread_join(h->ticker, h->ticker_started);
    for (size_t b = 0; b < NBUCKETS; b++) {
        hub_entry_t *e = h->buckets[b];
        while (e) {
            hub_entry_t *next = e->next;
            for (records_sub_t *sub = e->subs; sub; sub = sub->next)
                sub->entry = NULL; /* their owners free them */
            buf_free(&e->text);
            free(e->pieces);
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

records_sub_t *hub_subscribe(hub_t *h, rec_kind_t kind, int64_t user_id, int64_t id,
                             int64_t from_seq, records_event_fn fn, void *arg)
{
    return hub_subscribe_job(h, kind, user_id, id, from_seq, 0, fn, arg);
}

records_sub_t *hub_subscribe_job(hub_t *h, rec_kind_t kind, int64_t user_id, int64_t id,
                                 int64_t from_seq, int64_t job_id, records_event_fn fn,
                                 void *arg)
{
    records_sub_t *sub = xcalloc(1, sizeof(*sub));
    sub->fn = fn;
    sub->arg = arg;
    sub->job_id = job_id;
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
    replay(e, sub, from_seq);
    if (!e->subs)
        watch(h, e);
    sub->next = e->subs;
    e->subs = sub;
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
        if (!e->subs)
            unwatch(h, e);
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

/* Keeps the text of the generation an event belongs to (under the lock): a local
 * one's from GENERATING to its end; another process's while subscribers follow it. */
static void hold(hub_entry_t *e, const rev_t *ev, bool local)
{
    switch (ev->type) {
    case REV_GENERATING:
        if (local || e->subs) {
            text_drop(e);
            e->live = local;
            e->followed = !local;
            e->gen_seq = ev->gen_seq ? ev->gen_seq : ev->seq;
        }
        break;
    case REV_TEXT:
        if (!local && e->subs && (!e->followed || e->gen_seq != ev->gen_seq) && !e->live) {
            text_drop(e); /* the first piece heard of another process's generation */
            e->followed = true;
            e->gen_seq = ev->gen_seq;
        }
        if ((e->live && local) || (e->followed && !local && e->gen_seq == ev->gen_seq))
            text_add(e, ev);
        break;
    case REV_COMPLETED:
    case REV_FAILED:
    case REV_DELETED:
    case REV_UNSTORED:
        text_drop(e);
        break;
    default: break;
    }
}

/* A revision made while a generation runs (an edit, a restore) takes the stored number
 * G+1, which the generation's first piece has in memory too (records.h): the two kinds
 * may share a number, each once; any other number is delivered once. */
static unsigned shared_bit(rev_type_t type)
{
    return type == REV_TEXT ? 1u : type == REV_REVISION ? 2u : 0u;
}

static bool fresh_for_subscribers(const hub_entry_t *e, const rev_t *ev)
{
    if (ev->seq <= 0 || ev->seq > e->seq)
        return true;
    unsigned bit = shared_bit(ev->type);
    return ev->seq == e->seq && bit && e->seq_types && !(e->seq_types & bit);
}

void hub_publish(hub_t *h, const rev_t *ev, bool local)
{
    pthread_mutex_lock(&h->mu);
    bool need = local && (ev->type == REV_GENERATING || ev->type == REV_TEXT);
    hub_entry_t *e = entry_find(h, ev->kind, ev->id, need && ev->id > 0);
    if (e) {
        /* a number the subscribers had already (or an older one) is not theirs again —
         * except a job's end for that job's own clients: the record's number may have
         * moved past it (the next regeneration was accepted between the end's commit
         * and this event), and the end is theirs all the same */
        bool fresh = fresh_for_subscribers(e, ev);
        bool end = ev->job_id && (ev->type == REV_COMPLETED || ev->type == REV_FAILED ||
                                  ev->type == REV_UNSTORED);
        if (fresh || (local && !end))
            hold(e, ev, local); /* (a stale end is not the text held now) */
        if (fresh && ev->seq > 0) {
            e->seq_types = (ev->seq == e->seq ? e->seq_types : 0) | shared_bit(ev->type);
            e->seq = ev->seq;
        }
        for (records_sub_t *sub = e->subs, *next; sub; sub = next) {
            next = sub->next;
            bool theirs = !ev->job_id || !sub->job_id || ev->job_id == sub->job_id;
            if (fresh ? theirs : end && sub->job_id == ev->job_id)
                sub->fn(sub->arg, ev);
        }
        entry_maybe_free(h, e);
    }
    int nobs = h->nobservers;
    pthread_mutex_unlock(&h->mu);
    if (local)
        for (int i = 0; i < nobs; i++)
            h->observers[i].fn(h->observers[i].arg, ev);
}

bool hub_text_known(hub_t *h, rec_kind_t kind, int64_t id, int64_t gen_seq, size_t *len,
                    int64_t *seq)
{
    *len = 0;
    *seq = 0;
    pthread_mutex_lock(&h->mu);
    hub_entry_t *e = entry_find(h, kind, id, false);
    bool known = e && (e->live || e->followed) && e->gen_seq == gen_seq;
    if (known) {
        *len = e->text.len;
        *seq = e->npieces ? e->pieces[e->npieces - 1].seq : gen_seq;
    }
    pthread_mutex_unlock(&h->mu);
    return known;
}

void hub_release(hub_t *h)
{
    pthread_mutex_lock(&h->mu);
    h->closing = true;
    for (hub_entry_t *e = h->watched, *wnext; e; e = wnext) {
        wnext = e->wnext;
        rev_t ev = {.type = REV_RELEASED, .kind = e->kind, .id = e->id};
        records_sub_t *sub = e->subs;
        e->subs = NULL;
        e->wprev = e->wnext = NULL;
        while (sub) {
            records_sub_t *next = sub->next;
            sub->entry = NULL;
            sub->fn(sub->arg, &ev);
            sub = next;
        }
    }
    h->watched = NULL;
    pthread_mutex_unlock(&h->mu);
}

/* The ids of records that have subscribers here (for the PostgreSQL listener, which
 * only reads what somebody waits for). Returns how many were written. */
size_t hub_watched(hub_t *h, rec_kind_t *kinds, int64_t *user_ids, int64_t *ids, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&h->mu);
    for (hub_entry_t *e = h->watched; e && n < max; e = e->wnext) {
        kinds[n] = e->kind;
        user_ids[n] = e->user_id;
        ids[n] = e->id;
        n++;
    }
    pthread_mutex_unlock(&h->mu);
    return n;
}
