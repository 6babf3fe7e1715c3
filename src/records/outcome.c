/* outcome.c — a generation's outcome stored by the records service, each concern in
 * one place: the picture's media file first (an image), then the store (job_complete or
 * job_fail, retried while the database is briefly unreachable), the revision cap, and
 * the event that tells everyone (COMPLETED with the row as stored — nobody reads it
 * again —, FAILED with its code, or UNSTORED). A picture no record came to refer to is
 * removed here, so no file outlives a failed store. The job runner (records/jobs.c)
 * only runs the provider and hands the outcome over. */
#include "records/records_int.h"
#include "core/unicode.h"

#include "core/log.h"
#include "gen/templates.h"

#include <stdatomic.h>
#include <string.h>

#define STORE_TRIES 20      /* about 10 s of a store that takes no writes */
#define STORE_RETRY_MS 500

/* job_fail (error set) or job_complete, retried while the store is unavailable. */
static int store_retrying(store_conn_t *c, const job_t *job, const char *text, int64_t words,
                          const char *key, const char *revised, const char *error,
                          const _Atomic bool *stopping, arena_t *a, record_t *out)
{
    int rc = STORE_ERROR;
    for (int tries = 0; tries < STORE_TRIES; tries++) {
        rc = error ? store_job_fail(c, job, error)
                   : store_job_complete(c, job, text, words, key, revised, a, out);
        if (rc != STORE_UNAVAILABLE || (stopping && atomic_load(stopping)))
            break;
        sleep_ms(STORE_RETRY_MS);
    }
    return rc;
}

static void publish_job(records_t *s, const job_t *job, rev_type_t type, const record_t *rec,
                        const char *error, rec_failure_t failure, const records_outcome_t *o)
{
    rev_t ev = {.type = type, .kind = job->rec.kind, .id = job->rec.id,
                .user_id = job->rec.user_id, .rec = rec, .error = error, .failure = failure,
                .provider = s->d.prov->name, .duration_s = mono_s() - o->t0, .job_id = job->id};
    /* the number the store gave it: after the claim's G and the pieces (UNSTORED: none) */
    if (type == REV_COMPLETED || type == REV_FAILED)
        ev.seq = rec ? rec->event_seq : job->rec.event_seq + o->pieces + 1;
    if (type == REV_COMPLETED && o->part) {
        ev.part = true;
        ev.part_start = o->part_start;
        ev.part_after = o->part_after;
    }
    records_publish(s, &ev);
}

int records_store_outcome(records_t *s, store_conn_t *c, const job_t *claimed,
                          const records_outcome_t *o, const _Atomic bool *stopping)
{
    job_t counted = *claimed; /* with the pieces published, which the store counts */
    counted.pieces = o->pieces;
    counted.part = o->ok && o->part && o->text; /* an action's part, kept with its revision */
    if (counted.part)
        records_part_cps(o->text, o->part_start, o->part_after, &counted.part_start,
                         &counted.part_end);
    const job_t *job = &counted;
    const record_t *rec = &job->rec;
    arena_t a;
    arena_init(&a);
    record_t stored;
    const char *why = o->ok ? NULL : (o->error && *o->error ? o->error : "Generation failed.");
    rec_failure_t failure = o->failure ? o->failure : RF_GENERATION;
    int rc;
    if (!o->ok) {
        rc = store_retrying(c, job, NULL, 0, NULL, NULL, why, stopping, &a, NULL);
    } else if (rec->kind == KIND_DOC) {
        job_t done = *job; /* with the usage, which job_complete stores */
        done.rec.prompt_tokens = o->prompt_tokens;
        done.rec.completion_tokens = o->completion_tokens;
        done.rec.truncated = o->truncated;
        const char *text = o->text ? o->text : "";
        rc = store_retrying(c, &done, text, uni_count_words(text, text ? strlen(text) : 0), NULL, NULL, NULL, stopping, &a,
                            &stored);
    } else {
        char key[MEDIA_KEY_LEN + 1];
        int mrc = media_put(s->d.media, o->png, o->png_len, key);
        if (mrc != 0) {
            why = mrc == MEDIA_FULL ? MEDIA_FULL_ERROR : "The picture could not be stored.";
            failure = mrc == MEDIA_FULL ? RF_STORAGE_FULL : RF_GENERATION;
            rc = store_retrying(c, job, NULL, 0, NULL, NULL, why, stopping, &a, NULL);
        } else {
            rc = store_retrying(c, job, NULL, 0, key, o->revised_prompt, NULL, stopping, &a,
                                &stored);
            if (rc != STORE_OK)
                media_remove(s->d.media, key); /* no record points at it: no orphan */
        }
    }
    if (why && rc == STORE_OK)
        log_info("job=%lld: failed (%s)", (long long)job->id, why);
    if (rc == STORE_CHANGED) {
        /* an action that lost the race to another revision (API.md §24): the job ended,
         * the record keeps the newer revision; its waiter or stream gets the 409 */
        log_info("job=%lld: not stored (%s)", (long long)job->id, STORE_CHANGED_ERROR);
        publish_job(s, job, REV_FAILED, &stored, STORE_CHANGED_ERROR, RF_CHANGED, o);
        arena_free(&a);
        return STORE_OK;
    }
    if (rc == STORE_STALE)
        log_warn("job=%lld: result discarded (lease lost or record deleted)", (long long)job->id);
    else if (rc != STORE_OK)
        log_error("job=%lld: cannot store the outcome: %s", (long long)job->id, store_rc_name(rc));
    if (rc != STORE_OK && rc != STORE_STALE && !(stopping && atomic_load(stopping))) {
        /* streams and waiters stop waiting (whatever the store said: none waits for
         * ever); the job runs again once writes work. A lost lease (STALE) is told by
         * the job's new owner. */
        publish_job(s, job, REV_UNSTORED, NULL, RECORDS_UNSTORED_ERROR, RF_UNSTORED, o);
    } else if (rc == STORE_OK && why) {
        publish_job(s, job, REV_FAILED, NULL, why, failure, o);
    } else if (rc == STORE_OK) {
        log_info("job=%lld record=%s/%lld: completed in %.1f ms", (long long)job->id,
                 rec->kind == KIND_DOC ? "document" : "image", (long long)rec->id,
                 (mono_s() - o->t0) * 1000);
        records_revision_made(s, c, &stored); /* the cap holds before anyone hears of it */
        publish_job(s, job, REV_COMPLETED, &stored, NULL, RF_NONE, o);
    }
    arena_free(&a);
    return rc;
}
