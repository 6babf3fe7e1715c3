/* jobs.h — generation jobs: a pool of workers and the requests waiting on them.
 *
 * A record and its job are written together (store->record_create). Workers claim
 * jobs from the store with a lease (a random token and an expiry), renew the lease
 * while the provider works (gen_ctx.heartbeat), and apply the result only while the
 * token still matches, so a stale worker can never overwrite a newer result. Jobs
 * interrupted by a shutdown are released for the next worker; jobs of a killed
 * process are taken over when their lease runs out.
 *
 * Waiters: a creating request registers (kind, record id, deadline, wake callback);
 * wake is called exactly once, from a jobs thread: when a worker of this process
 * finishes the job, when polling sees the record finished by another process, when
 * the deadline passes, or at shutdown. */
#ifndef INK_JOBS_H
#define INK_JOBS_H

#include "core/config.h"
#include "gen/provider.h"
#include "media/media.h"
#include "store/store.h"

#include <stdbool.h>

typedef struct jobs jobs_t;
typedef void (*jobs_wake_fn)(void *arg);

/* poll_remote: also poll the store for records finished by other processes
 * (needed with PostgreSQL, where several processes share the queue). */
jobs_t *jobs_start(const cfg_t *cfg, store_t *store, media_t *media, const provider_t *prov,
                   bool poll_remote);
/* A job was just queued: wake an idle worker. */
void jobs_notify(jobs_t *j);
void jobs_wait(jobs_t *j, rec_kind_t kind, int64_t user_id, int64_t record_id,
               double deadline_mono, jobs_wake_fn wake, void *arg);
/* Wakes the waiters of a record whose generation has ended. A creating request
 * calls it after registering, if the record is already finished (the worker may
 * have been faster than the registration). */
void jobs_finished(jobs_t *j, rec_kind_t kind, int64_t id);
/* Wakes every waiter now (shutdown). */
void jobs_release_waiters(jobs_t *j);
/* Stops the workers: a running job gives up and is released for resumption. */
void jobs_stop(jobs_t *j);

#endif
