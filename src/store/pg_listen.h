/* pg_listen.h — for postgres.c: the LISTEN side of record events (pg_listen.c). */
#ifndef INK_STORE_PG_LISTEN_H
#define INK_STORE_PG_LISTEN_H

#include "store/store.h"

#define PG_CHANNEL "inkwell_records" /* NOTIFY channel of record events */

struct store_listener *pg_listen_start(store_t *s, void (*fn)(void *arg, const char *payload),
                                       void (*connected)(void *arg), void *arg);
void pg_listen_stop(struct store_listener *l);

#endif
