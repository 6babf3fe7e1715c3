/* quota.c — the generations in flight of users with a quota, seen by every process
 * (API.md §19: a quota used up → 403 before anything is generated).
 *
 * The API's check (used >= limit → 403) reads the usage with the key (api/router.c).
 * What that usage cannot show is the generations that have started and are not counted
 * yet: twenty creates at once for a user one word below the limit would all pass it, on
 * one process or on several. So every generation of a user with a limit
 * (records_req_t.quota_limit >= 0) holds its units in the database
 * (store_quota_hold: the quota_holds table) from before anything is generated until
 * its generation is counted or has failed, and starts only when, in the transaction
 * that inserts its hold (serialised per user across processes), the usage read there
 * is under the limit and either
 *   - used + the units of the user's holds + this generation's <= limit, or
 *   - no generation of the user of that kind holds anything (near the limit, one at a
 *     time: in N processes as in one).
 * A hold's units:
 *   - images: the pictures a generation makes (1): exact;
 *   - words: the most words one generation has produced in this process so far (at
 *     least 1): an estimate, exact as long as generations are no longer than that.
 * So a user's generations go past the limit by at most one generation, whatever the
 * number of processes. A create that passes the API's check but not this one — its
 * quota is not used up, but its generations running now may use it up — is refused
 * with CREATE_QUOTA_BUSY (429 Retry-After: try again when they have finished); when
 * the fresh usage is used up, CREATE_QUOTA_USED.
 *
 * How a hold ends: a generation that takes the job path binds its hold to its record
 * once stored (quota_bind), and the hold then counts while the record has a job: the
 * transaction that counts a generation's usage removes its job (job_complete), so the
 * hold stops counting in the same commit; a failed or deleted one removes the job too.
 * A generation in the request (the builtin generator's inline path) removes its hold
 * once its outcome is stored (quota_release: the usage counted it just before). A hold
 * of a process killed before either: unbound, it expires after QUOTA_HOLD_S; bound, its
 * job is taken over and ends. Ended holds are removed by the user's next admission.
 *
 * Cost: nothing for users without a limit; for the others one transaction per create
 * (and one statement to bind or release). */
#include "records/records_int.h"

#include "core/log.h"
#include "core/util.h"

#include <stdatomic.h>
#include <stdlib.h>

/* How long an unbound hold counts (a generation in the request, or one not stored yet,
 * of a process that died: the builtin generator's inline path takes milliseconds). */
#define QUOTA_HOLD_S 120.0

struct quota {
    store_t *store;
    _Atomic int64_t most_words; /* the most words one generation produced here */
};

quota_t *quota_new(store_t *store)
{
    quota_t *q = xcalloc(1, sizeof(*q));
    q->store = store;
    return q;
}

void quota_free(quota_t *q)
{
    free(q);
}

create_outcome_t quota_admit(records_t *s, quota_t *q, store_conn_t *c,
                             const records_req_t *req, int64_t *ticket)
{
    (void)s;
    *ticket = 0;
    if (req->quota_limit < 0)
        return CREATED_DONE; /* no limit: nothing to hold */
    if (req->quota_used >= req->quota_limit)
        return CREATE_QUOTA_USED;
    if (!c)
        return CREATE_QUOTA_BUSY; /* the store cannot say: try again */
    int64_t words = atomic_load(&q->most_words);
    char period[8];
    store_period(store_clock_us(), period);
    int64_t now = now_us();
    quota_hold_t h = {.user_id = req->rec.user_id, .kind = req->rec.kind, .period = period,
                      .units = req->rec.kind == KIND_IMG ? 1 : (words > 0 ? words : 1),
                      .limit = req->quota_limit, .now_us = now,
                      .expires_us = now + (int64_t)(QUOTA_HOLD_S * 1e6)};
    int64_t used = 0;
    int rc = store_quota_hold(c, &h, ticket, &used);
    if (rc != STORE_OK) {
        *ticket = 0;
        if (rc != STORE_NOTFOUND)
            log_warn("quota: user %lld: no hold: %s", (long long)h.user_id, store_rc_name(rc));
        return CREATE_QUOTA_BUSY;
    }
    if (*ticket > 0)
        return CREATED_DONE;
    return used >= req->quota_limit ? CREATE_QUOTA_USED : CREATE_QUOTA_BUSY;
}

/* The calling thread's connection, or NULL (logged). */
static store_conn_t *conn(quota_t *q)
{
    char err[256];
    store_conn_t *c = q->store ? store_conn(q->store, err, sizeof(err)) : NULL;
    if (!c && q->store)
        log_warn("quota: cannot connect: %s", err);
    return c;
}

void quota_bind(quota_t *q, int64_t ticket, int64_t id)
{
    store_conn_t *c;
    if (ticket > 0 && id > 0 && (c = conn(q)))
        store_quota_hold_end(c, ticket, id); /* (failed: it expires, stricter meanwhile) */
}

void quota_release(quota_t *q, int64_t ticket)
{
    store_conn_t *c;
    if (ticket > 0 && (c = conn(q)))
        store_quota_hold_end(c, ticket, 0);
}

void quota_end(quota_t *q, rec_kind_t kind, int64_t id, const record_t *rec)
{
    (void)id; /* (its hold ends with its job: the store's) */
    if (rec && kind == KIND_DOC) { /* the longest generation so far */
        int64_t w = rec->words, cur = atomic_load(&q->most_words);
        while (w > cur && !atomic_compare_exchange_weak(&q->most_words, &cur, w))
            ;
    }
}

void quota_event(quota_t *q, const rev_t *ev)
{
    if (ev->type == REV_COMPLETED)
        quota_end(q, ev->kind, ev->id, ev->rec);
}
