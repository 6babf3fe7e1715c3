/* ratelimit.c — the rate limit per bucket ("key:<id>", "ip:<addr>"): GCRA, the
 * generic cell rate algorithm (ITU-T I.371; the "leaky bucket as a meter").
 *
 * Each bucket keeps one time, its theoretical arrival time (TAT). With a limit of L
 * requests a minute, each request costs interval = 60 s / L; a request at `now` is
 * allowed when max(TAT, now) + interval - now <= 60 s, and then TAT moves on by one
 * interval. So a client that waited long enough may make L requests at once, then one
 * per interval — never a second burst of L because a clock minute turned over, as
 * fixed windows allowed (2 L across a boundary).
 *
 * Headers keep their meaning: X-RateLimit-Limit is L; X-RateLimit-Remaining is how
 * many more requests would be allowed right now; a 429's Retry-After is the exact
 * wait until the next one is allowed, rounded up to whole seconds (at least 1).
 *
 * With SQLite there is one server process (the data-directory lock), so the TATs live
 * in memory (a hash table under a mutex). With PostgreSQL several processes share the
 * limit, so each request is one atomic upsert in the database (store.rate_gcra). */
#include "api/api_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RL_BUCKETS 4096
#define RL_PERIOD_US 60000000LL     /* the limit is per minute */
#define RL_PRUNE_EVERY 1000         /* shared: expired buckets deleted every this many hits */

typedef struct rl_entry {
    struct rl_entry *next;
    int64_t tat_us;
    char name[];
} rl_entry_t;

struct ratelimit {
    long limit;
    bool shared;
    pthread_mutex_t mu;
    rl_entry_t *table[RL_BUCKETS];
    size_t entries;
    unsigned long hits;
};

ratelimit_t *ratelimit_new(long per_minute, bool shared_in_store)
{
    ratelimit_t *rl = xcalloc(1, sizeof(*rl));
    rl->limit = per_minute;
    rl->shared = shared_in_store;
    pthread_mutex_init(&rl->mu, NULL);
    return rl;
}

void ratelimit_free(ratelimit_t *rl)
{
    if (!rl)
        return;
    for (size_t i = 0; i < RL_BUCKETS; i++) {
        rl_entry_t *e = rl->table[i];
        while (e) {
            rl_entry_t *next = e->next;
            free(e);
            e = next;
        }
    }
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Drops buckets whose TAT has passed: the same as absent (under the lock). */
static void prune(ratelimit_t *rl, int64_t now)
{
    for (size_t i = 0; i < RL_BUCKETS; i++) {
        rl_entry_t **pp = &rl->table[i];
        while (*pp) {
            if ((*pp)->tat_us < now) {
                rl_entry_t *dead = *pp;
                *pp = dead->next;
                free(dead);
                rl->entries--;
            } else {
                pp = &(*pp)->next;
            }
        }
    }
}

/* The GCRA step of store.h's rate_gcra, in memory. */
static bool mem_gcra(ratelimit_t *rl, const char *bucket, int64_t now, int64_t interval,
                     int64_t *tat_out)
{
    uint32_t h = hash(bucket) % RL_BUCKETS;
    pthread_mutex_lock(&rl->mu);
    rl_entry_t *e = rl->table[h];
    while (e && strcmp(e->name, bucket) != 0)
        e = e->next;
    if (!e) {
        if (rl->entries > 100000)
            prune(rl, now);
        size_t n = strlen(bucket);
        e = xcalloc(1, sizeof(*e) + n + 1);
        memcpy(e->name, bucket, n + 1);
        e->tat_us = now;
        e->next = rl->table[h];
        rl->table[h] = e;
        rl->entries++;
    }
    int64_t t = e->tat_us > now ? e->tat_us : now;
    bool allowed = t + interval - now <= RL_PERIOD_US;
    if (allowed)
        e->tat_us = t + interval;
    *tat_out = e->tat_us;
    pthread_mutex_unlock(&rl->mu);
    return allowed;
}

bool ratelimit_check(ratelimit_t *rl, store_conn_t *c, http_req_t *r, const char *bucket)
{
    if (rl->limit <= 0)
        return true;
    int64_t now = now_us(), interval = RL_PERIOD_US / rl->limit, tat;
    if (interval < 1)
        interval = 1;
    bool allowed;
    if (rl->shared) {
        bool prune_now = __atomic_add_fetch(&rl->hits, 1, __ATOMIC_RELAXED) % RL_PRUNE_EVERY == 0;
        if (store_rate_gcra(c, bucket, now, interval, RL_PERIOD_US, prune_now, &tat,
                              &allowed) != STORE_OK)
            return true; /* the database answers for itself on the next call */
    } else {
        allowed = mem_gcra(rl, bucket, now, interval, &tat);
    }
    /* requests still allowed now: each needs one more interval below the period */
    int64_t room = RL_PERIOD_US - (tat - now);
    long remaining = room <= 0 ? 0 : (long)(room / interval);
    if (remaining > rl->limit)
        remaining = rl->limit;
    char v[32];
    snprintf(v, sizeof(v), "%ld", rl->limit);
    http_add_header(r, "X-RateLimit-Limit", v);
    snprintf(v, sizeof(v), "%ld", remaining);
    http_add_header(r, "X-RateLimit-Remaining", v);
    if (allowed)
        return true;
    /* the next request is allowed once tat + interval - now <= period */
    int64_t wait = tat + interval - RL_PERIOD_US - now;
    long secs = (long)((wait + 999999) / 1000000);
    snprintf(v, sizeof(v), "%ld", secs < 1 ? 1 : secs);
    http_add_header(r, "Retry-After", v);
    return false;
}
