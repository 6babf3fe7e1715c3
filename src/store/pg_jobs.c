/* pg_jobs.c — the PostgreSQL store's job queue (claim with FOR UPDATE SKIP LOCKED,
 * renew, complete, fail, counts) and the events of other processes (progress, partial
 * text, NOTIFY, media keys). */
#include "store/pg_int.h"

#include "core/log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PG_CLAIM_TRIES 8 /* orphan jobs skipped per claim at most */

/* ---- jobs ------------------------------------------------------------------------ */

/* Inside a transaction: picks and leases one job; *claimed false when there is none;
 * an orphan job (its record gone) is dropped and *claimed stays false with *again set. */
static int claim_one(pg_conn_t *c, int64_t now, const char *token, double lease_s,
                     const char *busy, arena_t *a, job_t *out, bool *claimed, bool *again)
{
    pg_num_t tnow = pg_num_i64(now), until = pg_num_i64(pg_lease_until(now, lease_s));
    const char *p[] = {tnow.s, token, until.s, busy};
    PGresult *r;
    int rc = pg_run(c, S_JOB_PICK, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return STORE_OK;
    }
    int64_t job_id = pg_col_i64(r, 0, 0), kind = pg_col_i64(r, 0, 1),
            record_id = pg_col_i64(r, 0, 2);
    int attempts = (int)pg_col_i64(r, 0, 3);
    bool regen = PQgetvalue(r, 0, 4)[0] == 't';
    record_t in = {0}; /* a regeneration's inputs */
    if (regen) {
        in.prompt = pg_col_str(r, 0, 5, a);
        in.creativity = PQgetisnull(r, 0, 6) ? 0 : strtod(PQgetvalue(r, 0, 6), NULL);
        in.template_id = (int)pg_col_i64(r, 0, 7);
        in.tone = pg_col_str(r, 0, 8, a);
        in.language = pg_col_str(r, 0, 9, a);
        in.length = pg_col_str(r, 0, 10, a);
        in.description = pg_col_str(r, 0, 11, a);
        in.resolution = pg_col_str(r, 0, 12, a);
        in.style = pg_col_str(r, 0, 13, a);
    }
    const char *action = pg_col_str(r, 0, 14, a);
    int64_t sel_start = PQgetisnull(r, 0, 15) ? -1 : pg_col_i64(r, 0, 15),
            sel_end = PQgetisnull(r, 0, 16) ? -1 : pg_col_i64(r, 0, 16),
            base_revision = PQgetisnull(r, 0, 17) ? -1 : pg_col_i64(r, 0, 17);
    PQclear(r);
    pg_num_t jid = pg_num_i64(job_id), rid = pg_num_i64(record_id);
    if (kind == KIND_DOC || kind == KIND_IMG) {
        const char *rp[] = {rid.s, tnow.s};
        record_t rec;
        rc = pg_one_record(c, kind == KIND_DOC ? S_DOC_CLAIM : S_IMG_CLAIM, rp, (rec_kind_t)kind,
                           a, &rec);
        if (rc == STORE_OK) {
            memset(out, 0, sizeof(*out));
            out->id = job_id;
            memcpy(out->token, token, sizeof(out->token));
            out->attempts = attempts;
            out->rec = rec;
            out->regen = regen;
            out->action = action;
            out->sel_start = sel_start;
            out->sel_end = sel_end;
            out->base_revision = base_revision;
            if (regen)
                store_job_inputs(out, &in);
            *claimed = true;
            return STORE_OK;
        }
        if (rc != STORE_NOTFOUND)
            return rc;
    }
    log_warn("postgres: dropping job %" PRId64 " without a record", job_id);
    const char *dp[] = {jid.s};
    if ((rc = pg_run(c, S_JOB_DROP, dp, &r)) != STORE_OK)
        return rc;
    PQclear(r);
    *again = true;
    return STORE_OK;
}

int pg_job_claim(store_conn_t *sc, double lease_s, const char *busy, arena_t *a, job_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    char prefix[9];
    if ((rc = pg_owner_prepare(c, prefix, lease_s)) != STORE_OK)
        return rc;
    for (int tries = 0; tries < PG_CLAIM_TRIES; tries++) {
        char token[33]; /* the owner's 8 hex digits, then 24 random ones (pg_owner.c) */
        memcpy(token, prefix, 8);
        random_hex(token + 8, 12);
        bool claimed = false, again = false;
        if ((rc = pg_command(c, "BEGIN", "job claim begin")) != STORE_OK)
            return rc;
        rc = claim_one(c, now_us(), token, lease_s, busy, a, out, &claimed, &again);
        if (rc == STORE_OK)
            rc = pg_command(c, "COMMIT", "job claim commit");
        if (rc != STORE_OK) {
            pg_rollback(c);
            return rc;
        }
        if (claimed)
            return STORE_OK;
        if (!again)
            return STORE_NOTFOUND;
    }
    return STORE_NOTFOUND;
}

int pg_job_renew(store_conn_t *sc, int64_t job_id, const char *token, double lease_s)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(job_id);
    pg_num_t until = pg_num_i64(pg_lease_until(now_us(), lease_s > 0 ? lease_s : 0));
    const char *p[] = {id.s, token, until.s, lease_s > 0 ? "0" : "1"};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_RENEW, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

/* Runs a JOB_FINISH statement: STALE when the job (with this token) is gone. */
static int job_finish(pg_conn_t *c, int id, const char *const *p)
{
    PGresult *r;
    int rc = pg_run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    rc = pg_col_i64(r, 0, 0) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

int pg_job_complete(store_conn_t *sc, const job_t *job, const char *result, int64_t words,
                    const char *media_key, const char *revised_prompt, arena_t *a,
                    record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const record_t *in = &job->rec;
    pg_num_t id = pg_num_i64(job->id), w = pg_num_i64(words), now = pg_num_i64(now_us()),
          pt = pg_num_i64(in->prompt_tokens), ct = pg_num_i64(in->completion_tokens),
          cr = pg_num_f64(in->creativity), tpl = pg_num_i64(in->template_id),
          pieces = pg_num_i64(job->pieces), ps = pg_num_i64(job->part_start),
          pe = pg_num_i64(job->part_end);
    const char *regen = job->regen ? "t" : "f";
    const char *source = rev_source_name(store_job_source(job));
    bool is_img = in->kind == KIND_IMG;
    char *rf = is_img ? NULL : pg_fold(result); /* API.md §15: the folded result */
    const char *doc[] = {id.s, job->token, result, w.s, now.s,
                         in->prompt_tokens < 0 ? NULL : pt.s,
                         in->completion_tokens < 0 ? NULL : ct.s, in->truncated ? "t" : "f",
                         regen, in->prompt, cr.s, tpl.s, in->tone, in->language, in->length,
                         source, rf, job->action, pieces.s, job->part ? ps.s : NULL,
                         job->part ? pe.s : NULL};
    const char *img[] = {id.s, job->token, media_key, revised_prompt, now.s, regen,
                         in->description, in->resolution, in->style, source, pieces.s};
    /* the record as stored, or no row: the job (with this token) is gone; with its
     * usage (§19), in one transaction */
    record_t r;
    arena_t scratch;
    arena_init(&scratch);
    if ((rc = pg_command(c, "BEGIN", "job complete begin")) == STORE_OK) {
        /* an action (API.md §24): stored only on the revision it was asked on; the same
         * text makes no revision */
        bool same_rev = true, same_text = false;
        if (job->action && job->base_revision > 0 && !is_img) {
            const char *q[] = {id.s, job->token, result ? result : ""};
            PGresult *res;
            if ((rc = pg_run(c, S_ACTION_CHECK, q, &res)) == STORE_OK) {
                if (PQntuples(res) == 0)
                    rc = STORE_NOTFOUND;
                else {
                    same_rev = PQgetvalue(res, 0, 0)[0] == 't';
                    same_text = PQgetvalue(res, 0, 1)[0] == 't';
                }
                PQclear(res);
            }
        }
        if (rc == STORE_OK && (!same_rev || same_text)) {
            const char *e[] = {id.s, job->token, same_rev ? NULL : STORE_CHANGED_ERROR, now.s,
                               pieces.s};
            rc = pg_one_record(c, S_ACTION_END, e, in->kind, a && out ? a : &scratch, &r);
        } else if (rc == STORE_OK) {
            rc = pg_one_record(c, is_img ? S_JOB_COMPLETE_IMG : S_JOB_COMPLETE,
                               is_img ? img : doc, in->kind, a && out ? a : &scratch, &r);
        }
        if (rc == STORE_OK && same_rev) /* a lost race counts nothing (§24) */
            rc = store_usage_add_job(sc, job, words, media_key);
        if (rc == STORE_OK)
            rc = pg_command(c, "COMMIT", "job complete commit");
        else
            pg_rollback(c);
        if (rc == STORE_OK && !same_rev)
            rc = STORE_CHANGED;
    }
    arena_free(&scratch);
    free(rf);
    if ((rc == STORE_OK || rc == STORE_CHANGED) && out)
        *out = r;
    return rc == STORE_NOTFOUND ? STORE_STALE : rc;
}

int pg_job_fail(store_conn_t *sc, const job_t *job, const char *error)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(job->id), now = pg_num_i64(now_us()),
             pieces = pg_num_i64(job->pieces);
    const char *p[] = {id.s, job->token, error, now.s, pieces.s};
    return job_finish(c, S_JOB_FAIL, p);
}

int pg_job_count(store_conn_t *sc, int64_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_COUNT, NULL, &r)) != STORE_OK)
        return rc;
    *n = pg_col_i64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}

int pg_job_exists(store_conn_t *sc, int64_t job_id, bool *exists)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(job_id);
    const char *p[] = {id.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_EXISTS, p, &r)) != STORE_OK)
        return rc;
    *exists = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return STORE_OK;
}

int pg_job_counts(store_conn_t *sc, int64_t *queued, int64_t *running)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t now = pg_num_i64(now_us());
    const char *p[] = {now.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_COUNTS, p, &r)) != STORE_OK)
        return rc;
    *queued = pg_col_i64(r, 0, 0);
    *running = pg_col_i64(r, 0, 1);
    PQclear(r);
    return STORE_OK;
}

/* ---- events of other processes (records/remote.c) ---- */

int pg_job_progress(store_conn_t *sc, int64_t job_id, const char *token, int64_t start,
                    const char *pieces, int64_t seq, const char *payload)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t id = pg_num_i64(job_id), sq = pg_num_i64(seq), at = pg_num_i64(start);
    const char *p[] = {id.s, token, pieces, sq.s, payload, at.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_PROGRESS, p, &r)) != STORE_OK)
        return rc;
    rc = PQntuples(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

int pg_record_partial(store_conn_t *sc, rec_kind_t kind, int64_t id, arena_t *a,
                      const char **text, int64_t *seq)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t k = pg_num_i64(kind), rid = pg_num_i64(id);
    const char *p[] = {k.s, rid.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_PARTIAL, p, &r)) != STORE_OK)
        return rc;
    *text = NULL;
    *seq = 0;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else if (!PQgetisnull(r, 0, 0)) {
        *text = arena_strdup(a, PQgetvalue(r, 0, 0));
        *seq = pg_col_i64(r, 0, 1);
    }
    PQclear(r);
    return rc;
}

int pg_notify(store_conn_t *sc, const char *payload)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *p[] = {payload};
    PGresult *r;
    if ((rc = pg_run(c, S_NOTIFY, p, &r)) != STORE_OK)
        return rc;
    PQclear(r);
    return STORE_OK;
}

int pg_media_keys(store_conn_t *sc, arena_t *a, const char ***keys, size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    *keys = NULL;
    *n = 0;
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = pg_run(c, S_MEDIA_KEYS, NULL, &r)) != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    const char **v = arena_alloc(a, (size_t)(rows ? rows : 1) * sizeof(*v));
    for (int i = 0; i < rows; i++)
        v[i] = pg_col_str(r, i, 0, a);
    PQclear(r);
    *keys = v;
    *n = (size_t)rows;
    return STORE_OK;
}
