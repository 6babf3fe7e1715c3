/* sqlite_revisions.c — revisions in the SQLite store (API.md §16): the snapshot of a
 * record's content as a revision (for job_complete, edits, restores and inline
 * creates), regenerate (record queued + a job with the new inputs), list, get,
 * restore and trim. Part of the SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

#include <string.h>

static int snapshot(sq_conn_t *c, rec_kind_t kind, int64_t id, rev_source_t source,
                    const char *action, const job_t *part, int64_t now)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_REV_SNAP_DOC + (kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sq_bind_text(st, 2, rev_source_name(source));
    sqlite3_bind_int64(st, 3, now);
    sq_bind_text(st, 4, action);
    if (part && kind == KIND_DOC) { /* (unbound: NULL) */
        sqlite3_bind_int64(st, 5, part->part_start);
        sqlite3_bind_int64(st, 6, part->part_end);
    }
    return sq_run(c, st, "revision");
}

int sq_rev_snapshot(sq_conn_t *c, rec_kind_t kind, int64_t id, rev_source_t source,
                    const char *action, int64_t now)
{
    return snapshot(c, kind, id, source, action, NULL, now);
}

int sq_rev_snapshot_job(sq_conn_t *c, rec_kind_t kind, int64_t id, const job_t *job, int64_t now)
{
    return snapshot(c, kind, id, store_job_source(job), job->action, job->part ? job : NULL, now);
}

int sq_collect_keys(sq_conn_t *c, sqlite3_stmt *st, arena_t *a, const char ***keys, size_t *n,
                    const char *what)
{
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = sq_col_text(st, 0, a);
        bool seen = !k;
        for (size_t i = 0; !seen && i < *n; i++)
            seen = strcmp((*keys)[i], k) == 0;
        if (seen)
            continue;
        const char **grown = arena_alloc(a, (*n + 1) * sizeof(*grown));
        if (*n)
            memcpy(grown, *keys, *n * sizeof(*grown));
        grown[(*n)++] = k;
        *keys = grown;
    }
    int rc = step == SQLITE_DONE ? STORE_OK : sq_error(c, step, what);
    sq_stmt_done(st);
    return rc;
}

/* Reads a row of REVDOC_COLS / REVIMG_COLS: STORE_OK, or STORE_ERROR when its stored
 * text is corrupt. */
static int read_revision(sqlite3_stmt *st, rec_kind_t kind, int64_t user_id, int64_t id,
                         arena_t *a, revision_t *r)
{
    int rc = STORE_OK;
    memset(r, 0, sizeof(*r));
    r->number = sqlite3_column_int64(st, 0);
    r->source = sq_col_text(st, 1, a);
    r->action = sq_col_text(st, 2, a);
    r->created_us = sqlite3_column_int64(st, 3);
    record_t *x = &r->rec;
    x->kind = kind;
    x->id = id;
    x->user_id = user_id;
    x->revision = r->number;
    x->state = REC_COMPLETED;
    if (kind == KIND_DOC) {
        x->prompt = sq_col_text(st, 4, a);
        x->creativity = sqlite3_column_double(st, 5);
        x->template_id = sqlite3_column_int(st, 6);
        x->tone = sq_col_text(st, 7, a);
        x->language = sq_col_text(st, 8, a);
        x->length = sq_col_text(st, 9, a);
        rc = sq_col_result(st, 10, a, &x->result);
        x->words = sqlite3_column_int64(st, 11);
        x->prompt_tokens = sqlite3_column_type(st, 12) == SQLITE_NULL ? -1
                                                                       : sqlite3_column_int64(st, 12);
        x->completion_tokens =
            sqlite3_column_type(st, 13) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 13);
        x->truncated = sqlite3_column_int(st, 14) != 0;
    } else {
        x->description = sq_col_text(st, 4, a);
        x->resolution = sq_col_text(st, 5, a);
        x->style = sq_col_text(st, 6, a);
        x->media_key = sq_col_text(st, 7, a);
        x->revised_prompt = sq_col_text(st, 8, a);
    }
    return rc;
}

/* The record exists for this user (inside a transaction): STORE_OK or NOTFOUND. */
static int owned(sq_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, arena_t *a,
                 record_t *out)
{
    record_t row;
    return sq_record_get(&c->base, kind, user_id, id, a, out ? out : &row);
}

int sq_record_regenerate(store_conn_t *conn, const record_t *in, const rec_action_t *act,
                         idem_keep_t *keep, arena_t *a, record_t *out, int64_t *job_id)
{
    sq_conn_t *c = sq(conn);
    int64_t now = now_us();
    record_t r;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_REGEN_DOC + (in->kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, in->id);
    sqlite3_bind_int64(st, 2, in->user_id);
    sqlite3_bind_int64(st, 3, now);
    rc = sq_step_row(c, st, "regenerate");
    if (rc == STORE_NOTFOUND) {
        /* missing, or being generated */
        rc = owned(c, in->kind, in->user_id, in->id, a, NULL);
        if (rc == STORE_OK)
            rc = STORE_BUSY;
        goto out;
    }
    if (rc != STORE_OK)
        goto out;
    rc = sq_read_record(st, in->kind, a, &r);
    sq_stmt_done(st);
    if (rc != STORE_OK || (rc = sq_stmt(c, ST_JOB_INSERT_REGEN, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int(st, 1, (int)in->kind);
    sqlite3_bind_int64(st, 2, in->id);
    sqlite3_bind_int64(st, 3, now);
    if (in->kind == KIND_DOC) {
        sq_bind_text(st, 4, in->prompt);
        sqlite3_bind_double(st, 5, in->creativity);
        sqlite3_bind_int(st, 6, in->template_id);
        sq_bind_text(st, 7, in->tone);
        sq_bind_text(st, 8, in->language);
        sq_bind_text(st, 9, in->length);
    } else {
        sq_bind_text(st, 10, in->description);
        sq_bind_text(st, 11, in->resolution);
        sq_bind_text(st, 12, in->style);
    }
    sq_bind_text(st, 13, act ? act->name : NULL);
    sqlite3_bind_int64(st, 14, act ? act->sel_start : -1);
    sqlite3_bind_int64(st, 15, act ? act->sel_end : -1);
    if (act) /* the revision it is asked on (API.md §24) */
        sqlite3_bind_int64(st, 16, r.revision);
    if ((rc = sq_run(c, st, "regenerate")) != STORE_OK)
        goto out;
    *job_id = sqlite3_last_insert_rowid(c->db);
    rc = store_keep_record(conn, keep, &r);
out:
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

int sq_record_regenerated(store_conn_t *conn, const record_t *in, int cap, idem_keep_t *keep,
                          arena_t *a, record_t *out)
{
    sq_conn_t *c = sq(conn);
    int64_t now = now_us();
    record_t r;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    /* queued and completed with the new inputs in one statement, as job_complete stores
     * a regeneration */
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_REGENERATED_DOC, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, in->id);
    sqlite3_bind_int64(st, 2, now);
    sq_bind_result(st, 3, in->result);
    sqlite3_bind_int64(st, 4, in->words);
    sq_bind_tokens(st, 5, in->prompt_tokens);
    sq_bind_tokens(st, 6, in->completion_tokens);
    sqlite3_bind_int(st, 7, in->truncated ? 1 : 0);
    sqlite3_bind_int(st, 8, 1);
    sq_bind_text(st, 9, in->prompt);
    sqlite3_bind_double(st, 10, in->creativity);
    sqlite3_bind_int(st, 11, in->template_id);
    sq_bind_text(st, 12, in->tone);
    sq_bind_text(st, 13, in->language);
    sq_bind_text(st, 14, in->length);
    sqlite3_bind_int64(st, 15, 1); /* the sequence: queued, then completed */
    sqlite3_bind_int64(st, 16, in->user_id);
    rc = sq_step_row(c, st, "regenerated");
    if (rc == STORE_NOTFOUND) {
        rc = owned(c, KIND_DOC, in->user_id, in->id, a, NULL); /* missing, or being generated */
        if (rc == STORE_OK)
            rc = STORE_BUSY;
        goto out;
    }
    if (rc != STORE_OK)
        goto out;
    rc = sq_read_record(st, KIND_DOC, a, &r);
    sq_stmt_done(st);
    if (rc == STORE_OK)
        rc = sq_rev_snapshot(c, KIND_DOC, in->id, SRC_REGENERATION, NULL, now);
    job_t used = {.rec = *in}; /* usage (§19), in the same transaction */
    if (rc == STORE_OK)
        rc = store_usage_add_job(conn, &used, in->words, NULL);
    if (rc == STORE_OK)
        rc = store_keep_record(conn, keep, &r);
    if (rc == STORE_OK && cap > 0 && r.revision > cap &&
        (rc = sq_stmt(c, ST_REV_TRIM_DOC, &st)) == STORE_OK) {
        const char **none = NULL; /* (a document's revisions have no picture) */
        size_t n = 0;
        sqlite3_bind_int64(st, 1, in->id);
        sqlite3_bind_int(st, 2, cap);
        rc = sq_collect_keys(c, st, a, &none, &n, "revision_trim");
    }
out:
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

int sq_revision_list(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                     int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                     int64_t *total)
{
    sq_conn_t *c = sq(conn);
    *n = 0;
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = owned(c, kind, user_id, id, a, NULL)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_REV_COUNT_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, id);
    if ((rc = sq_step_row(c, st, "revision_list")) != STORE_OK)
        return sq_tx_end(c, rc == STORE_NOTFOUND ? STORE_ERROR : rc);
    *total = sqlite3_column_int64(st, 0);
    sq_stmt_done(st);
    if ((rc = sq_stmt(c, ST_REV_LIST_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, per_page);
    sqlite3_bind_int64(st, 3, (page - 1) * per_page);
    revision_t *v = arena_alloc(a, (size_t)per_page * sizeof(*v));
    int step = SQLITE_DONE;
    rc = STORE_OK;
    while (rc == STORE_OK && (step = sqlite3_step(st)) == SQLITE_ROW && *n < (size_t)per_page)
        rc = read_revision(st, kind, user_id, id, a, &v[(*n)++]);
    if (rc == STORE_OK && step != SQLITE_DONE && step != SQLITE_ROW)
        rc = sq_error(c, step, "revision_list");
    sq_stmt_done(st);
    *items = v;
    return sq_tx_end(c, rc);
}

int sq_revision_get(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                    int64_t number, arena_t *a, revision_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = owned(c, kind, user_id, id, a, NULL)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_REV_GET_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, number);
    if ((rc = sq_step_row(c, st, "revision_get")) == STORE_OK) {
        rc = read_revision(st, kind, user_id, id, a, out);
        if (kind == KIND_DOC && sqlite3_column_type(st, 15) != SQLITE_NULL &&
            sqlite3_column_type(st, 16) != SQLITE_NULL) { /* an action's part */
            out->part = true;
            out->part_start = sqlite3_column_int64(st, 15);
            out->part_end = sqlite3_column_int64(st, 16);
        }
        sq_stmt_done(st);
    }
    return sq_tx_end(c, rc);
}

int sq_revision_restore(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                        int64_t number, const char *media_key, arena_t *a, record_t *out)
{
    sq_conn_t *c = sq(conn);
    int64_t now = now_us();
    record_t r;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_RESTORE_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    sqlite3_bind_int64(st, 3, number);
    sqlite3_bind_int64(st, 4, now);
    if (kind == KIND_IMG)
        sq_bind_text(st, 5, media_key);
    if ((rc = sq_step_row(c, st, "restore")) != STORE_OK)
        goto out;
    rc = sq_read_record(st, kind, a, &r);
    sq_stmt_done(st);
    if (rc == STORE_OK)
        rc = sq_rev_snapshot(c, kind, id, SRC_RESTORE, NULL, now);
out:
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

int sq_revision_trim(store_conn_t *conn, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                     const char ***keys, size_t *n)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_REV_TRIM_DOC + (kind == KIND_IMG), &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int(st, 2, keep);
        rc = sq_collect_keys(c, st, a, keys, n, "revision_trim");
    }
    rc = sq_tx_end(c, rc);
    if (rc != STORE_OK)
        *n = 0;
    return rc;
}
