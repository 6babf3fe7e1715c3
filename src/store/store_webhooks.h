/* store_webhooks.h — the store's part of webhooks (API.md §22): endpoints, the outbox of
 * events and their deliveries. Part of the store's contract (store.h), in a header of
 * its own; the backends' statements are in sqlite_webhooks.c and pg_webhooks.c.
 *
 * The outbox: the events are written by triggers of the schema (SQLite migration 24,
 * PostgreSQL 18) in the very transaction of the change they report — a revision
 * inserted (number 1: *.completed, later: *.revised), a record's error set by a failed
 * generation (no revision yet: *.failed, else *.revised), a record deleted (*.deleted) —
 * and only when the record's user has an enabled endpoint subscribed to the type. Each
 * event has one delivery per such endpoint. docs/design.md "Webhooks: the outbox". */
#ifndef INK_STORE_WEBHOOKS_H
#define INK_STORE_WEBHOOKS_H

#include "store/store.h"

/* Event types as bits of an endpoint's subscription (webhooks.events). */
enum {
    WH_DOC_COMPLETED = 1,
    WH_DOC_FAILED = 2,
    WH_DOC_REVISED = 4,
    WH_DOC_DELETED = 8,
    WH_IMG_COMPLETED = 16,
    WH_IMG_FAILED = 32,
    WH_IMG_REVISED = 64,
    WH_IMG_DELETED = 128,
    WH_ALL = 0x7fffffff, /* "*": every type, later ones included */
};
#define WH_TYPE_COUNT 8
/* "document.completed"... for bit i (0..7) */
extern const char *const wh_type_names[WH_TYPE_COUNT];

typedef struct {
    int64_t id, user_id;
    const char *url, *description;
    int64_t events; /* WH_* bits; WH_ALL for "*" */
    bool enabled;
    int64_t created_us, updated_us;
    /* the signing secrets ("whsec_..."): prev_secret is valid until prev_until_us */
    const char *secret, *prev_secret;
    int64_t prev_until_us;
} webhook_t;

/* A partial change: NULL / -1 leaves a field as it is. */
typedef struct {
    const char *url, *description;
    int64_t events;  /* -1: unchanged */
    int enabled;     /* -1: unchanged */
} webhook_patch_t;

typedef enum { WD_PENDING = 0, WD_DELIVERED = 1, WD_FAILED = 2 } wd_state_t;

/* One delivery as its log shows it (GET /webhooks/{id}/deliveries). */
typedef struct {
    int64_t id;
    const char *msg, *type;
    int64_t record_id; /* 0 for a ping */
    wd_state_t state;
    int64_t attempts;
    int last_status; /* 0: none yet (or no answer) */
    const char *last_error;
    int64_t next_us; /* pending only, else 0 */
    int64_t created_us;
} webhook_delivery_t;

/* A delivery claimed by a worker, with what sending it needs. */
typedef struct {
    int64_t id, event_id, webhook_id, user_id;
    int64_t attempts; /* before this one */
    const char *msg, *type;
    rec_kind_t kind;
    int64_t record_id, revision, event_us;
    const char *body; /* NULL until the first attempt of any endpoint renders it */
    const char *url, *secret, *prev_secret;
    int64_t prev_until_us;
    int64_t lease_until; /* the claim's: webhook_done acts only while it holds */
} webhook_job_t;

/* An attempt's outcome for webhook_done. */
typedef struct {
    wd_state_t state;   /* delivered, pending again (next_us) or failed */
    int status;         /* the HTTP status, 0 when none */
    const char *error;  /* NULL on success */
    int64_t next_us;
    bool disable;       /* 410: the endpoint is disabled too */
    bool release;       /* not attempted: the claim given back, the delivery unchanged */
} webhook_result_t;

/* The wrappers (store/webhooks.c); STORE_NOTFOUND for another user's or a missing id.
 * create: STORE_CONFLICT when the user has max endpoints already. */
int store_webhook_create(store_conn_t *c, const webhook_t *in, int max, arena_t *a,
                         webhook_t *out);
int store_webhook_get(store_conn_t *c, int64_t user_id, int64_t id, arena_t *a, webhook_t *out);
int store_webhook_list(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset,
                       arena_t *a, webhook_t **out, size_t *n, int64_t *total);
int store_webhook_update(store_conn_t *c, int64_t user_id, int64_t id, const webhook_patch_t *p,
                         arena_t *a, webhook_t *out);
/* Removes the endpoint with its deliveries. */
int store_webhook_delete(store_conn_t *c, int64_t user_id, int64_t id);
/* A new secret; the current one stays valid until prev_until_us. */
int store_webhook_rotate(store_conn_t *c, int64_t user_id, int64_t id, const char *secret,
                         int64_t prev_until_us, arena_t *a, webhook_t *out);
/* One event of type "ping" for this endpoint only, with its delivery. */
int store_webhook_ping(store_conn_t *c, int64_t user_id, int64_t id, int64_t now);
int store_webhook_deliveries(store_conn_t *c, int64_t user_id, int64_t webhook_id,
                             int64_t limit, int64_t offset, arena_t *a,
                             webhook_delivery_t **out, size_t *n, int64_t *total);
/* A failed delivery pending again now; STORE_CONFLICT when it is not failed. */
int store_webhook_retry(store_conn_t *c, int64_t user_id, int64_t webhook_id, int64_t id,
                        int64_t now);
/* Claims up to max due deliveries (pending, next_us <= now, the endpoint enabled, no
 * earlier pending one of the same record and endpoint, the endpoint's deliveries claimed
 * now under fewer than per_endpoint distinct leases) until lease_until, in one
 * transaction: out[0..*n). NOTFOUND when none. lease_until names the claim: give each
 * claim its own value (webhook_done acts only on rows that still hold it). */
int store_webhook_claim(store_conn_t *c, int64_t now, int64_t lease_until, int per_endpoint,
                        size_t max, arena_t *a, webhook_job_t *out, size_t *n);
/* The events' bodies, in one transaction: each job whose body is NULL gets bodies[i]
 * stored on its event unless one is there already, and jobs[i].body the one stored. */
int store_webhook_body(store_conn_t *c, webhook_job_t *jobs, const char *const *bodies,
                       size_t n, arena_t *a);
/* The record as it was when the job's event happened: the copy of its row the schema
 * took in the change's transaction (SQLite migration 29, PostgreSQL 22). NOTFOUND for an
 * event without one (a ping, a deletion, an event older than the copies). */
int store_webhook_snapshot(store_conn_t *c, const webhook_job_t *j, arena_t *a, record_t *out);
/* The outcomes of n attempts (r[i] of j[i]) in one transaction; one whose lease has
 * gone is left as it is (STORE_STALE when any was). */
int store_webhook_done(store_conn_t *c, const webhook_job_t *j, const webhook_result_t *r,
                       size_t n);
/* Removes deliveries created before `before` and events left without a delivery. */
int store_webhook_sweep(store_conn_t *c, int64_t before);
/* Pending deliveries and the creation time of the oldest (0 when none). */
int store_webhook_stats(store_conn_t *c, int64_t *pending, int64_t *oldest_us);

#endif
