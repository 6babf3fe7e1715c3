/* webhooks.c — the store's webhook wrappers (store_webhooks.h): one per op of the
 * backend's store_webhook_ops_t, and the names of the event types. */
#include "store/store_int.h"
#include "store/store_webhooks_int.h"

const char *const wh_type_names[WH_TYPE_COUNT] = {
    "document.completed", "document.failed", "document.revised", "document.deleted",
    "image.completed",    "image.failed",    "image.revised",    "image.deleted",
};

#define OPS(c) ((c)->ops->webhooks)

int store_webhook_create(store_conn_t *c, const webhook_t *in, int max, arena_t *a,
                         webhook_t *out)
{
    return OPS(c)->create(c, in, max, a, out);
}

int store_webhook_get(store_conn_t *c, int64_t user_id, int64_t id, arena_t *a, webhook_t *out)
{
    return OPS(c)->get(c, user_id, id, a, out);
}

int store_webhook_list(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset,
                       arena_t *a, webhook_t **out, size_t *n, int64_t *total)
{
    return OPS(c)->list(c, user_id, limit, offset, a, out, n, total);
}

int store_webhook_update(store_conn_t *c, int64_t user_id, int64_t id, const webhook_patch_t *p,
                         arena_t *a, webhook_t *out)
{
    return OPS(c)->update(c, user_id, id, p, a, out);
}

int store_webhook_delete(store_conn_t *c, int64_t user_id, int64_t id)
{
    return OPS(c)->del(c, user_id, id);
}

int store_webhook_rotate(store_conn_t *c, int64_t user_id, int64_t id, const char *secret,
                         int64_t prev_until_us, arena_t *a, webhook_t *out)
{
    return OPS(c)->rotate(c, user_id, id, secret, prev_until_us, a, out);
}

int store_webhook_ping(store_conn_t *c, int64_t user_id, int64_t id, int64_t now)
{
    return OPS(c)->ping(c, user_id, id, now);
}

int store_webhook_deliveries(store_conn_t *c, int64_t user_id, int64_t webhook_id,
                             int64_t limit, int64_t offset, arena_t *a,
                             webhook_delivery_t **out, size_t *n, int64_t *total)
{
    return OPS(c)->deliveries(c, user_id, webhook_id, limit, offset, a, out, n, total);
}

int store_webhook_retry(store_conn_t *c, int64_t user_id, int64_t webhook_id, int64_t id,
                        int64_t now)
{
    return OPS(c)->retry(c, user_id, webhook_id, id, now);
}

int store_webhook_claim(store_conn_t *c, int64_t now, int64_t lease_until, int per_endpoint,
                        size_t max, arena_t *a, webhook_job_t *out, size_t *n)
{
    *n = 0;
    return OPS(c)->claim(c, now, lease_until, per_endpoint, max, a, out, n);
}

int store_webhook_body(store_conn_t *c, webhook_job_t *jobs, const char *const *bodies,
                       size_t n, arena_t *a)
{
    return n ? OPS(c)->body(c, jobs, bodies, n, a) : STORE_OK;
}

int store_webhook_snapshot(store_conn_t *c, const webhook_job_t *j, arena_t *a, record_t *out)
{
    return j->record_id > 0 ? OPS(c)->snapshot(c, j, a, out) : STORE_NOTFOUND;
}

int store_webhook_done(store_conn_t *c, const webhook_job_t *j, const webhook_result_t *r,
                       size_t n)
{
    return n ? OPS(c)->done(c, j, r, n) : STORE_OK;
}

int store_webhook_sweep(store_conn_t *c, int64_t before)
{
    return OPS(c)->sweep(c, before);
}

int store_webhook_stats(store_conn_t *c, int64_t *pending, int64_t *oldest_us)
{
    return OPS(c)->stats(c, pending, oldest_us);
}
