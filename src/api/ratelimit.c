/* ratelimit.c — fixed one-minute windows per bucket ("key:<id>", "ip:<addr>").
 *
 * With SQLite there is one server process, so the counters live in memory (a hash
 * table under a mutex). With PostgreSQL several processes share the limit, so each
 * hit is counted in the database (store.rate_hit, one upsert). */
#include "api/api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RL_BUCKETS 4096

typedef struct rl_entry {
    struct rl_entry *next;
    int64_t window, count;
    char name[];
} rl_entry_t;

struct ratelimit {
    long limit;
    bool shared;
    pthread_mutex_t mu;
    rl_entry_t *table[RL_BUCKETS];
    size_t entries;
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

/* Drops entries of past windows (under the lock). */
static void prune(ratelimit_t *rl, int64_t window)
{
    for (size_t i = 0; i < RL_BUCKETS; i++) {
        rl_entry_t **pp = &rl->table[i];
        while (*pp) {
            if ((*pp)->window < window) {
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

static int64_t mem_hit(ratelimit_t *rl, const char *bucket, int64_t window)
{
    uint32_t h = hash(bucket) % RL_BUCKETS;
    pthread_mutex_lock(&rl->mu);
    rl_entry_t *e = rl->table[h];
    while (e && strcmp(e->name, bucket) != 0)
        e = e->next;
    if (!e) {
        if (rl->entries > 100000)
            prune(rl, window);
        size_t n = strlen(bucket);
        e = xcalloc(1, sizeof(*e) + n + 1);
        memcpy(e->name, bucket, n + 1);
        e->window = window;
        e->next = rl->table[h];
        rl->table[h] = e;
        rl->entries++;
    }
    if (e->window != window) {
        e->window = window;
        e->count = 0;
    }
    int64_t count = ++e->count;
    pthread_mutex_unlock(&rl->mu);
    return count;
}

bool ratelimit_check(ratelimit_t *rl, store_conn_t *c, http_req_t *r, const char *bucket)
{
    if (rl->limit <= 0)
        return true;
    time_t now = time(NULL);
    int64_t window = (int64_t)now / 60, count;
    if (rl->shared) {
        if (c->ops->rate_hit(c, bucket, window, &count) != STORE_OK)
            return true; /* the database answers for itself on the next call */
    } else {
        count = mem_hit(rl, bucket, window);
    }
    char v[32];
    snprintf(v, sizeof(v), "%ld", rl->limit);
    http_add_header(r, "X-RateLimit-Limit", v);
    snprintf(v, sizeof(v), "%lld", (long long)(count >= rl->limit ? 0 : rl->limit - count));
    http_add_header(r, "X-RateLimit-Remaining", v);
    if (count <= rl->limit)
        return true;
    snprintf(v, sizeof(v), "%d", (int)(60 - now % 60));
    http_add_header(r, "Retry-After", v);
    return false;
}
