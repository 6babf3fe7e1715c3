/* remote.c — events of other processes sharing a PostgreSQL database. The records
 * that have subscribers in this process are read again every REMOTE_POLL_S; a
 * finished one is published to them (REV_COMPLETED with the record, or REV_FAILED). */
#include "records/records_int.h"

#include "core/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define REMOTE_POLL_S 0.25
#define MAX_WATCHED 4096

struct remote {
    records_t *s;
    atomic_bool stopping;
    pthread_t thread;
};

static void poll_once(remote_t *r, store_conn_t *c, rec_kind_t *kinds, int64_t *users,
                      int64_t *ids)
{
    size_t n = hub_watched(r->s->hub, kinds, users, ids, MAX_WATCHED);
    for (size_t i = 0; i < n; i++) {
        arena_t a;
        arena_init(&a);
        record_t rec;
        int rc = store_record_get(c, kinds[i], users[i], ids[i], NULL, NULL, &a, &rec);
        if (rc == STORE_OK && record_finished(&rec)) {
            bool ok = strcmp(rec.state, "completed") == 0;
            rev_t ev = {.type = ok ? REV_COMPLETED : REV_FAILED, .kind = kinds[i], .id = ids[i],
                        .user_id = rec.user_id, .rec = &rec, .error = rec.error};
            hub_publish(r->s->hub, &ev, false);
        } else if (rc == STORE_NOTFOUND) {
            rev_t ev = {.type = REV_FAILED, .kind = kinds[i], .id = ids[i],
                        .error = "The record was deleted before its generation finished."};
            hub_publish(r->s->hub, &ev, false);
        }
        arena_free(&a);
    }
}

static void *remote_main(void *arg)
{
    remote_t *r = arg;
    rec_kind_t *kinds = xcalloc(MAX_WATCHED, sizeof(*kinds));
    int64_t *ids = xcalloc(MAX_WATCHED, sizeof(*ids));
    int64_t *users = xcalloc(MAX_WATCHED, sizeof(*users));
    store_conn_t *c = NULL;
    while (!atomic_load(&r->stopping)) {
        sleep_ms((int)(REMOTE_POLL_S * 1000));
        char err[256];
        if (!c)
            c = store_conn(r->s->d.store, err, sizeof(err));
        if (c)
            poll_once(r, c, kinds, users, ids);
    }
    free(kinds);
    free(ids);
    free(users);
    return NULL;
}

remote_t *remote_start(records_t *s)
{
    remote_t *r = xcalloc(1, sizeof(*r));
    r->s = s;
    if (pthread_create(&r->thread, NULL, remote_main, r) != 0) {
        log_error("records: cannot start the thread that follows other processes");
        free(r);
        return NULL;
    }
    return r;
}

void remote_stop(remote_t *r)
{
    if (!r)
        return;
    atomic_store(&r->stopping, true);
    pthread_join(r->thread, NULL);
    free(r);
}
