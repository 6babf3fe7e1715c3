/* store_webhooks_int.h — the webhook ops of a backend (store_webhooks.h says what each
 * does), for the backends and store/webhooks.c only. */
#ifndef INK_STORE_WEBHOOKS_INT_H
#define INK_STORE_WEBHOOKS_INT_H

#include "store/store_webhooks.h"

typedef struct store_webhook_ops {
    int (*create)(store_conn_t *c, const webhook_t *in, int max, arena_t *a, webhook_t *out);
    int (*get)(store_conn_t *c, int64_t user_id, int64_t id, arena_t *a, webhook_t *out);
    int (*list)(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                webhook_t **out, size_t *n, int64_t *total);
    int (*update)(store_conn_t *c, int64_t user_id, int64_t id, const webhook_patch_t *p,
                  arena_t *a, webhook_t *out);
    int (*del)(store_conn_t *c, int64_t user_id, int64_t id);
    int (*rotate)(store_conn_t *c, int64_t user_id, int64_t id, const char *secret,
                  int64_t prev_until_us, arena_t *a, webhook_t *out);
    int (*ping)(store_conn_t *c, int64_t user_id, int64_t id, int64_t now);
    int (*deliveries)(store_conn_t *c, int64_t user_id, int64_t webhook_id, int64_t limit,
                      int64_t offset, arena_t *a, webhook_delivery_t **out, size_t *n,
                      int64_t *total);
    int (*retry)(store_conn_t *c, int64_t user_id, int64_t webhook_id, int64_t id, int64_t now);
    int (*claim)(store_conn_t *c, int64_t now, int64_t lease_until, int per_endpoint,
                 size_t max, arena_t *a, webhook_job_t *out, size_t *n);
    int (*body)(store_conn_t *c, webhook_job_t *jobs, const char *const *bodies, size_t n,
                arena_t *a);
    int (*snapshot)(store_conn_t *c, const webhook_job_t *j, arena_t *a, record_t *out);
    int (*done)(store_conn_t *c, const webhook_job_t *j, const webhook_result_t *r, size_t n);
    int (*sweep)(store_conn_t *c, int64_t before);
    int (*stats)(store_conn_t *c, int64_t *pending, int64_t *oldest_us);
} store_webhook_ops_t;

extern const store_webhook_ops_t sq_webhook_ops, pg_webhook_ops;

#endif
