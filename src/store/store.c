/* store.c — backend choice by URL and one connection per thread. */
#include "store/store_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pthread_key_t key;
    store_counts_t *counts; /* totals of filtered lists (store_int.h) */
} store_priv_t;

static void conn_destroy(void *p)
{
    store_conn_t *c = p;
    if (c)
        c->ops->disconnect(c);
}

store_t *store_open(const char *url, char *err, size_t errlen)
{
    store_t *s = xcalloc(1, sizeof(*s));
    if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
        s->ops = &store_postgres_ops;
        s->url = xstrdup(url);
    } else {
        s->ops = &store_sqlite_ops;
        s->url = xstrdup(strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url);
    }
    if (!s->url[0]) {
        snprintf(err, errlen, "empty database location");
        free(s->url);
        free(s);
        return NULL;
    }
    store_priv_t *p = xcalloc(1, sizeof(*p));
    if (pthread_key_create(&p->key, conn_destroy) != 0) {
        snprintf(err, errlen, "cannot create thread key");
        free(p);
        free(s->url);
        free(s);
        return NULL;
    }
    p->counts = store_counts_new();
    s->priv = p;
    if (s->ops->open)
        s->ops->open(s);
    return s;
}

store_conn_t *store_conn(store_t *s, char *err, size_t errlen)
{
    store_priv_t *p = s->priv;
    store_conn_t *c = pthread_getspecific(p->key);
    if (c)
        return c;
    c = s->ops->connect(s, err, errlen);
    if (c)
        pthread_setspecific(p->key, c);
    return c;
}

void store_close(store_t *s)
{
    if (!s)
        return;
    store_priv_t *p = s->priv;
    store_conn_t *c = pthread_getspecific(p->key);
    if (c) {
        pthread_setspecific(p->key, NULL);
        c->ops->disconnect(c);
    }
    pthread_key_delete(p->key);
    store_counts_free(p->counts);
    free(p);
    if (s->ops->close)
        s->ops->close(s);
    free(s->url);
    free(s);
}

store_counts_t *store_counts(store_t *s)
{
    return ((store_priv_t *)s->priv)->counts;
}

const char *store_rc_name(int rc)
{
    switch (rc) {
    case STORE_OK: return "ok";
    case STORE_NOTFOUND: return "not found";
    case STORE_STALE: return "stale lease";
    case STORE_CONFLICT: return "conflict";
    case STORE_UNAVAILABLE: return "database unavailable";
    default: return "database error";
    }
}

bool store_docs_finished(record_t *const *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i]->kind != KIND_DOC || !recs[i]->result)
            return false;
    return true;
}

void store_record_inserted(record_t *rec, const char *state, int64_t now)
{
    rec->state = state;
    rec->error = NULL;
    rec->created_us = rec->updated_us = now;
    if (strcmp(state, "queued") == 0) {
        rec->result = NULL;
        rec->words = 0;
        rec->media_key = NULL;
        rec->revised_prompt = NULL;
    }
}
