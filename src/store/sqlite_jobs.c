/* sqlite_jobs.c — the job queue in the SQLite store: claim under a lease, renew,
 * complete, fail, count, and release every lease. Part of the SQLite backend
 * (sqlite.c). */
#include "store/sqlite_int.h"

#include <string.h>

/* ---- jobs ------------------------------------------------------------------------------ */

static int64_t lease_end(double lease_s)
{
    return now_us() + (int64_t)(lease_s * 1e6);
}

/* Takes the oldest claimable job: STORE_OK with *kind and *record_id set. */
static int claim_next(sq_conn_t *c, double lease_s, const char *busy, job_t *job,
                      rec_kind_t *kind, int64_t *record_id, arena_t *a, record_t *in)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_CLAIM, &st);
    if (rc != STORE_OK)
        return rc;
    random_hex(job->token, 16);
    sq_bind_text(st, 1, job->token);
    sqlite3_bind_int64(st, 2, lease_end(lease_s));
    sqlite3_bind_int64(st, 3, now_us());
    sq_bind_text(st, 4, busy);
    rc = sq_step_row(c, st, "job_claim");
    if (rc == STORE_OK) {
        job->id = sqlite3_column_int64(st, 0);
        *kind = sqlite3_column_int(st, 1) == KIND_IMG ? KIND_IMG : KIND_DOC;
        *record_id = sqlite3_column_int64(st, 2);
        job->attempts = sqlite3_column_int(st, 3);
        job->regen = sqlite3_column_int(st, 4) != 0;
        /* a regeneration's inputs */
        in->prompt = sq_col_text(st, 5, a);
        in->creativity = sqlite3_column_double(st, 6);
        in->template_id = sqlite3_column_int(st, 7);
        in->tone = sq_col_text(st, 8, a);
        in->language = sq_col_text(st, 9, a);
        in->length = sq_col_text(st, 10, a);
        in->description = sq_col_text(st, 11, a);
        in->resolution = sq_col_text(st, 12, a);
        in->style = sq_col_text(st, 13, a);
        job->action = sq_col_text(st, 14, a);
        job->sel_start = sqlite3_column_type(st, 15) == SQLITE_NULL ? -1
                                                                     : sqlite3_column_int64(st, 15);
        job->sel_end = sqlite3_column_type(st, 16) == SQLITE_NULL ? -1
                                                                   : sqlite3_column_int64(st, 16);
        job->base_revision = sqlite3_column_type(st, 17) == SQLITE_NULL
                                 ? -1
                                 : sqlite3_column_int64(st, 17);
        sq_stmt_done(st);
    }
    return rc;
}

/* Moves the claimed record to "generating" and reads its inputs; NOTFOUND if the record
 * is gone (the job is then dropped). */
static int start_record(sq_conn_t *c, rec_kind_t kind, int64_t record_id, job_t *job,
                        arena_t *a)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_START_DOC + (kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, record_id);
    sqlite3_bind_int64(st, 2, now_us());
    rc = sq_step_row(c, st, "job_claim");
    if (rc == STORE_OK) {
        rc = sq_read_record(st, kind, a, &job->rec);
        sq_stmt_done(st);
        return rc;
    }
    if (rc != STORE_NOTFOUND)
        return rc;
    if ((rc = sq_stmt(c, ST_JOB_DELETE, &st)) != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, job->id);
    rc = sq_run(c, st, "job_claim");
    return rc == STORE_OK ? STORE_NOTFOUND : rc;
}

int sq_job_claim(store_conn_t *conn, double lease_s, const char *busy, arena_t *a, job_t *out)
{
    sq_conn_t *c = sq(conn);
    for (;;) {
        job_t job;
        memset(&job, 0, sizeof(job));
        rec_kind_t kind = KIND_DOC;
        int64_t record_id = 0;
        int rc = sq_tx_begin(c);
        if (rc != STORE_OK)
            return rc;
        record_t in = {0};
        rc = claim_next(c, lease_s, busy, &job, &kind, &record_id, a, &in);
        bool orphan = false;
        if (rc == STORE_OK) {
            rc = start_record(c, kind, record_id, &job, a);
            orphan = rc == STORE_NOTFOUND;
        }
        if (rc == STORE_OK && job.regen)
            store_job_inputs(&job, &in);
        /* An orphan job was deleted: commit that and look again. */
        rc = sq_tx_end(c, orphan ? STORE_OK : rc);
        if (rc != STORE_OK)
            return rc;
        if (orphan)
            continue;
        *out = job;
        return STORE_OK;
    }
}

int sq_job_renew(store_conn_t *conn, int64_t job_id, const char *token, double lease_s)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_JOB_RENEW, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, job_id);
        sq_bind_text(st, 2, token);
        sqlite3_bind_int64(st, 3, lease_end(lease_s > 0 ? lease_s : 0));
        sqlite3_bind_int(st, 4, lease_s > 0 ? 0 : 1);
        rc = sq_run(c, st, "job_renew");
        if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
            rc = STORE_STALE;
    }
    return sq_tx_end(c, rc);
}

/* An action's job (API.md §24): whether the document is still at the revision the
 * action was asked on, and whether its text is the action's (result). NOTFOUND: the job
 * (with this token) or its record is gone. */
static int action_check(sq_conn_t *c, const job_t *job, const char *result, int *same_rev,
                        int *same_text)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_ACTION_CHECK, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, job->id);
    sq_bind_text(st, 2, job->token);
    sq_bind_result(st, 3, result ? result : "");
    rc = sq_step_row(c, st, "job_complete");
    if (rc == STORE_OK) {
        *same_rev = sqlite3_column_int(st, 0);
        *same_text = sqlite3_column_int(st, 1);
        sq_stmt_done(st);
    }
    return rc;
}

/* Deletes the job while its token matches: STORE_STALE when it no longer does. */
static int finish_job(sq_conn_t *c, const job_t *job, rec_kind_t *kind, int64_t *record_id)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_FINISH, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, job->id);
    sq_bind_text(st, 2, job->token);
    rc = sq_step_row(c, st, "job_finish");
    if (rc == STORE_OK) {
        *kind = sqlite3_column_int(st, 0) == KIND_IMG ? KIND_IMG : KIND_DOC;
        *record_id = sqlite3_column_int64(st, 1);
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_STALE : rc;
}

int sq_job_complete(store_conn_t *conn, const job_t *job, const char *result,
                    int64_t words, const char *media_key, const char *revised_prompt, arena_t *a,
                    record_t *out)
{
    record_t r;
    sq_conn_t *c = sq(conn);
    rec_kind_t kind;
    int64_t record_id;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    /* an action (API.md §24): stored only on the revision it was asked on; the same text
     * makes no revision */
    int same_rev = 1, same_text = 0;
    if (job->action && job->base_revision > 0 && job->rec.kind == KIND_DOC &&
        (rc = action_check(c, job, result, &same_rev, &same_text)) != STORE_OK)
        goto out;
    if ((rc = finish_job(c, job, &kind, &record_id)) != STORE_OK)
        goto out;
    sqlite3_stmt *st;
    if (!same_rev || same_text) {
        if ((rc = sq_stmt(c, same_rev ? ST_ACTION_SAME : ST_ACTION_CHANGED, &st)) != STORE_OK)
            goto out;
        sqlite3_bind_int64(st, 1, record_id);
        sqlite3_bind_int64(st, 2, now_us());
        if (!same_rev)
            sq_bind_text(st, 3, STORE_CHANGED_ERROR);
        sqlite3_bind_int64(st, 4, job->pieces);
        if ((rc = sq_step_row(c, st, "job_complete")) != STORE_OK)
            goto out;
        rc = out ? sq_read_record(st, kind, a, &r) : STORE_OK;
        sq_stmt_done(st);
        if (rc == STORE_OK && same_rev) /* its words count (§24); a lost race counts nothing */
            rc = store_usage_add_job(conn, job, words, NULL);
        if (rc == STORE_OK && !same_rev)
            rc = STORE_CHANGED;
        goto out;
    }
    if ((rc = sq_stmt(c, ST_COMPLETE_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, record_id);
    sqlite3_bind_int64(st, 2, now_us());
    if (kind == KIND_DOC) {
        sq_bind_result(st, 3, result);
        sqlite3_bind_int64(st, 4, words);
        sq_bind_tokens(st, 5, job->rec.prompt_tokens);
        sq_bind_tokens(st, 6, job->rec.completion_tokens);
        sqlite3_bind_int(st, 7, job->rec.truncated ? 1 : 0);
        sqlite3_bind_int(st, 8, job->regen);
        sq_bind_text(st, 9, job->rec.prompt);
        sqlite3_bind_double(st, 10, job->rec.creativity);
        sqlite3_bind_int(st, 11, job->rec.template_id);
        sq_bind_text(st, 12, job->rec.tone);
        sq_bind_text(st, 13, job->rec.language);
        sq_bind_text(st, 14, job->rec.length);
    } else {
        sq_bind_text(st, 3, media_key);
        sq_bind_text(st, 4, revised_prompt);
        sqlite3_bind_int(st, 8, job->regen);
        sq_bind_text(st, 9, job->rec.description);
        sq_bind_text(st, 10, job->rec.resolution);
        sq_bind_text(st, 11, job->rec.style);
    }
    sqlite3_bind_int64(st, 15, job->pieces);
    int64_t now = now_us();
    sqlite3_bind_int64(st, 2, now);
    if ((rc = sq_step_row(c, st, "job_complete")) != STORE_OK)
        goto out;
    rc = out ? sq_read_record(st, kind, a, &r) : STORE_OK;
    sq_stmt_done(st);
    if (rc == STORE_OK)
        rc = sq_rev_snapshot_job(c, kind, record_id, job, now);
    if (rc == STORE_OK) /* usage (§19), in the same transaction */
        rc = store_usage_add_job(conn, job, words, media_key);
out:
    if (rc == STORE_CHANGED) { /* committed: the job ended, the record as it stands */
        rc = sq_tx_end(c, STORE_OK);
        if (rc == STORE_OK && out)
            *out = r;
        return rc == STORE_OK ? STORE_CHANGED : rc;
    }
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK && out)
        *out = r;
    return rc == STORE_NOTFOUND ? STORE_STALE : rc;
}

int sq_job_fail(store_conn_t *conn, const job_t *job, const char *error)
{
    sq_conn_t *c = sq(conn);
    rec_kind_t kind;
    int64_t record_id;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = finish_job(c, job, &kind, &record_id)) != STORE_OK)
        goto out;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_FAIL_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, record_id);
    sqlite3_bind_int64(st, 2, now_us());
    sq_bind_text(st, 3, error);
    sqlite3_bind_int64(st, 4, job->pieces);
    rc = sq_run(c, st, "job_fail");
out:
    return sq_tx_end(c, rc);
}

int sq_job_count(store_conn_t *conn, int64_t *n)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_COUNT, &st);
    if (rc != STORE_OK)
        return rc;
    rc = sq_step_row(c, st, "job_count");
    if (rc == STORE_OK) {
        *n = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

int sq_job_exists(store_conn_t *conn, int64_t job_id, bool *exists)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_EXISTS, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, job_id);
    rc = sq_step_row(c, st, "job_exists");
    if (rc == STORE_OK) {
        *exists = sqlite3_column_int(st, 0) != 0;
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

int sq_job_counts(store_conn_t *conn, int64_t *queued, int64_t *running)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_COUNTS, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, now_us());
    rc = sq_step_row(c, st, "job_counts");
    if (rc == STORE_OK) {
        *queued = sqlite3_column_int64(st, 0);
        *running = sqlite3_column_int64(st, 1);
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* Every lease held is dropped (one statement, autocommit). */
int sq_job_release_all(store_conn_t *conn, int64_t *n)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = sq_exec_sql(c,
                     "UPDATE jobs SET token = NULL, lease_until_us = NULL WHERE token IS NOT NULL",
                     "job_release_all");
    *n = rc == STORE_OK ? sqlite3_changes(c->db) : 0;
    /* requests in progress died with the previous process: their keys are free again,
     * or done with the answer kept when their record was stored (store.h idem_keep_t) */
    if (rc == STORE_OK)
        rc = sq_exec_sql(c,
                         "DELETE FROM idempotency_keys WHERE state = 0 AND status IS NULL;"
                         "UPDATE idempotency_keys SET state = 1 WHERE state = 0",
                         "job_release_all");
    return sq_tx_end(c, rc);
}
