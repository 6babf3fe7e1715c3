/* pg_listen.c — PostgreSQL LISTEN for record events of other processes.
 *
 * One thread with a libpq connection of its own runs LISTEN on PG_CHANNEL and waits on
 * the socket (poll, at most STOP_CHECK_MS so a stop is seen quickly); each
 * notification's payload goes to fn. A lost connection is made again after
 * RETRY_MS; connected() is called after each (re)connection so the caller can catch
 * up on what was sent while nobody listened. */
#include "store/pg_listen.h"
#include "store/store_int.h"

#include "core/log.h"
#include "core/thread.h"

#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define STOP_CHECK_MS 200
#define RETRY_MS 500

struct store_listener {
    char *url;
    void (*fn)(void *arg, const char *payload);
    void (*connected)(void *arg);
    void *arg;
    atomic_bool stopping;
    pthread_t thread;
};

static PGconn *listen_connect(struct store_listener *l)
{
    PGconn *pg = PQconnectdb(l->url);
    if (PQstatus(pg) != CONNECTION_OK) {
        PQfinish(pg);
        return NULL;
    }
    PGresult *r = PQexec(pg, "LISTEN " PG_CHANNEL);
    bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

static void *listen_main(void *arg)
{
    struct store_listener *l = arg;
    PGconn *pg = NULL;
    bool warned = false;
    while (!atomic_load(&l->stopping)) {
        if (!pg) {
            if (!(pg = listen_connect(l))) {
                if (!warned)
                    log_warn("postgres: the event listener cannot connect; retrying");
                warned = true;
                sleep_ms(RETRY_MS);
                continue;
            }
            warned = false;
            l->connected(l->arg);
        }
        struct pollfd p = {.fd = PQsocket(pg), .events = POLLIN};
        if (poll(&p, 1, STOP_CHECK_MS) < 0)
            continue;
        if (!PQconsumeInput(pg) || PQstatus(pg) != CONNECTION_OK) {
            log_info("postgres: the event listener lost its connection; reconnecting");
            PQfinish(pg);
            pg = NULL;
            continue;
        }
        PGnotify *n;
        while ((n = PQnotifies(pg)) != NULL) {
            l->fn(l->arg, n->extra);
            PQfreemem(n);
        }
    }
    PQfinish(pg);
    return NULL;
}

struct store_listener *pg_listen_start(store_t *s, void (*fn)(void *arg, const char *payload),
                                       void (*connected)(void *arg), void *arg)
{
    struct store_listener *l = xcalloc(1, sizeof(*l));
    l->url = xstrdup(s->url);
    l->fn = fn;
    l->connected = connected;
    l->arg = arg;
    if (!thread_start(&l->thread, "ink-listen", listen_main, l)) {
        free(l->url);
        free(l);
        return NULL;
    }
    return l;
}

void pg_listen_stop(struct store_listener *l)
{
    if (!l)
        return;
    atomic_store(&l->stopping, true);
    pthread_join(l->thread, NULL);
    free(l->url);
    free(l);
}
