/* jobs.h — generation jobs: a pool of workers and the requests waiting on them.
 *
 * A record and its job are written together (store->record_create). Workers claim
 * jobs from the store with a lease (a random token and an expiry); one lease thread
 * renews the lease of every running job each quarter of --job-lease, on its own timer
 * and connection, whatever the provider does (gen_ctx.heartbeat only asks whether to go
 * on), and a worker applies the result only while the token still matches, so a stale
 * worker can never overwrite a newer result. Jobs interrupted by a shutdown are
 * released for the next worker without counting an attempt; jobs of a killed process
 * are taken over when their lease runs out (PostgreSQL: at once, pg_owner.c), and only
 * such takeovers count towards the 3 attempts a job has.
 *
 * Workers publish each step as a lifecycle event of the records service
 * (records/records.h): generating, every piece of text, completed, failed. */
#ifndef INK_RECORDS_JOBS_H
#define INK_RECORDS_JOBS_H

#include "core/config.h"
#include "gen/provider.h"
#include "media/media.h"
#include "records/records.h"
#include "store/store.h"

#include <stdbool.h>

typedef struct jobs jobs_t;
/* records: where the workers publish their events. */
jobs_t *jobs_start(const cfg_t *cfg, store_t *store, media_t *media, const provider_t *prov,
                   records_t *records);
/* A job was just queued: wake an idle worker. */
void jobs_notify(jobs_t *j);
/* Shutting down (SIGTERM): the workers claim no new job (other processes, or the next
 * start, take the queue) and finish the ones they run; jobs_running counts those. */
void jobs_drain(jobs_t *j);
int jobs_running(jobs_t *j);
/* Stops the workers: a running job gives up and is released for resumption. */
void jobs_stop(jobs_t *j);

#endif
