/* pg_revisions.c — revisions in the PostgreSQL store (API.md §16): regenerate (record
 * queued + a job with the new inputs), list, get, restore and trim. The revisions made
 * by job_complete, edits and inline creates are written by their own statements
 * (pg_stmts.c). */
#include "store/pg_int.h"

#include <stdlib.h>
#include <string.h>

void pg_collect_keys(const PGresult *r, arena_t *a, const char ***keys, size_t *n)
{
    for (int row = 0; row < PQntuples(r); row++) {
        if (PQgetisnull(r, row, 0))
            continue;
        const char *k = PQgetvalue(r, row, 0);
        bool seen = false;
        for (size_t i = 0; !seen && i < *n; i++)
            seen = strcmp((*keys)[i], k) == 0;
        if (seen)
            continue;
        const char **grown = arena_alloc(a, (*n + 1) * sizeof(*grown));
        if (*n)
            memcpy(grown, *keys, *n * sizeof(*grown));
        grown[(*n)++] = arena_strdup(a, k);
        *keys = grown;
    }
}

/* A row of REVDOC_COLS / REVIMG_COLS starting at column col. */
static void row_revision(const PGresult *r, int row, int col, rec_kind_t kind, int64_t user_id,
                         int64_t id, arena_t *a, revision_t *out)
{
    memset(out, 0, sizeof(*out));
    out->number = pg_col_i64(r, row, col);
    out->source = pg_col_str(r, row, col + 1, a);
    out->action = pg_col_str(r, row, col + 2, a);
    out->created_us = pg_col_i64(r, row, col + 3);
    record_t *x = &out->rec;
    x->kind = kind;
    x->id = id;
    x->user_id = user_id;
    x->revision = out->number;
    x->state = REC_COMPLETED;
    col += 4;
    if (kind == KIND_DOC) {
        x->prompt = pg_col_str(r, row, col, a);
        x->creativity = strtod(PQgetvalue(r, row, col + 1), NULL);
        x->template_id = (int)pg_col_i64(r, row, col + 2);
        x->tone = pg_col_str(r, row, col + 3, a);
        x->language = pg_col_str(r, row, col + 4, a);
        x->length = pg_col_str(r, row, col + 5, a);
        x->result = pg_col_str(r, row, col + 6, a);
        x->words = pg_col_i64(r, row, col + 7);
        x->prompt_tokens = PQgetisnull(r, row, col + 8) ? -1 : pg_col_i64(r, row, col + 8);
        x->completion_tokens = PQgetisnull(r, row, col + 9) ? -1 : pg_col_i64(r, row, col + 9);
        x->truncated = PQgetvalue(r, row, col + 10)[0] == 't';
    } else {
        x->description = pg_col_str(r, row, col, a);
        x->resolution = pg_col_str(r, row, col + 1, a);
        x->style = pg_col_str(r, row, col + 2, a);
        x->media_key = pg_col_str(r, row, col + 3, a);
        x->revised_prompt = pg_col_str(r, row, col + 4, a);
    }
}

int pg_record_regenerated(store_conn_t *sc, const record_t *in, int cap, idem_keep_t *keep,
                          arena_t *a, record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(in->user_id), rid = pg_num_i64(in->id), ts = pg_num_i64(now_us()),
             w = pg_num_i64(in->words), pt = pg_num_i64(in->prompt_tokens),
             ct = pg_num_i64(in->completion_tokens), cr = pg_num_f64(in->creativity),
             tpl = pg_num_i64(in->template_id);
    char *rf = pg_fold(in->result); /* API.md §15: the folded result */
    const char *p[] = {uid.s, rid.s, in->result, rf, w.s, in->prompt_tokens < 0 ? NULL : pt.s,
                       in->completion_tokens < 0 ? NULL : ct.s, in->truncated ? "t" : "f",
                       in->prompt, cr.s, tpl.s, in->tone, in->language, in->length, ts.s};
    record_t r;
    if ((rc = pg_command(c, "BEGIN", "regenerated begin")) == STORE_OK) {
        rc = pg_one_record(c, S_DOC_REGEN_DONE, p, KIND_DOC, a, &r);
        if (rc == STORE_NOTFOUND) { /* missing, or being generated */
            record_t now_rec;
            const char *g[] = {uid.s, rid.s};
            rc = pg_one_record(c, S_DOC_GET, g, KIND_DOC, a, &now_rec);
            if (rc == STORE_OK)
                rc = STORE_BUSY;
        }
        job_t used = {.rec = *in}; /* usage (§19), in the same transaction */
        if (rc == STORE_OK)
            rc = store_usage_add_job(sc, &used, in->words, NULL);
        if (rc == STORE_OK)
            rc = store_keep_record(sc, keep, &r);
        if (rc == STORE_OK && cap > 0 && r.revision > cap) {
            /* the revisions past the cap (a document's have no picture) */
            pg_num_t k = pg_num_i64(cap);
            const char *t[] = {rid.s, k.s};
            PGresult *tr;
            if ((rc = pg_run(c, S_REV_TRIM_DOC, t, &tr)) == STORE_OK)
                PQclear(tr);
        }
        if (rc == STORE_OK)
            rc = pg_command(c, "COMMIT", "regenerated commit");
        else
            pg_rollback(c);
    }
    free(rf);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

int pg_record_regenerate(store_conn_t *sc, const record_t *in, const rec_action_t *act,
                         idem_keep_t *keep, arena_t *a, record_t *out, int64_t *job_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t now = now_us();
    pg_num_t uid = pg_num_i64(in->user_id), rid = pg_num_i64(in->id), ts = pg_num_i64(now);
    if ((rc = pg_command(c, "BEGIN", "regenerate begin")) != STORE_OK)
        return rc;
    record_t r;
    const char *p[] = {uid.s, rid.s, ts.s};
    rc = pg_one_record(c, in->kind == KIND_DOC ? S_DOC_REGEN : S_IMG_REGEN, p, in->kind, a, &r);
    if (rc == STORE_NOTFOUND) {
        /* missing, or being generated */
        record_t now_rec;
        const char *g[] = {uid.s, rid.s};
        rc = pg_one_record(c, in->kind == KIND_DOC ? S_DOC_GET : S_IMG_GET, g, in->kind, a,
                           &now_rec);
        if (rc == STORE_OK)
            rc = STORE_BUSY;
    } else if (rc == STORE_OK) {
        pg_num_t kind = pg_num_i64(in->kind), cr = pg_num_f64(in->creativity),
                 tpl = pg_num_i64(in->template_id),
                 s0 = pg_num_i64(act ? act->sel_start : -1), s1 = pg_num_i64(act ? act->sel_end : -1),
                 base = pg_num_i64(r.revision); /* an action's (API.md §24) */
        bool doc = in->kind == KIND_DOC;
        const char *j[] = {kind.s, rid.s, ts.s, doc ? in->prompt : NULL, doc ? cr.s : NULL,
                           doc ? tpl.s : NULL, doc ? in->tone : NULL, doc ? in->language : NULL,
                           doc ? in->length : NULL, doc ? NULL : in->description,
                           doc ? NULL : in->resolution, doc ? NULL : in->style,
                           act ? act->name : NULL, s0.s, s1.s, act ? base.s : NULL};
        PGresult *res;
        if ((rc = pg_run(c, S_JOB_INSERT_REGEN, j, &res)) == STORE_OK) {
            *job_id = pg_col_i64(res, 0, 0);
            PQclear(res);
            rc = store_keep_record(sc, keep, &r);
        }
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "regenerate commit");
    else
        pg_rollback(c);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

int pg_revision_list(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                     int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                     int64_t *total)
{
    pg_conn_t *c = pg_cast(sc);
    *n = 0;
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), rid = pg_num_i64(id), lim = pg_num_i64(per_page),
             off = pg_num_i64((page - 1) * per_page);
    const char *p[] = {uid.s, rid.s, lim.s, off.s};
    PGresult *r;
    if ((rc = pg_run(c, kind == KIND_DOC ? S_REV_LIST_DOC : S_REV_LIST_IMG, p, &r)) != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    if (rows == 0) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    *total = pg_col_i64(r, 0, 0);
    revision_t *v = arena_alloc(a, (size_t)rows * sizeof(*v));
    for (int i = 0; i < rows; i++)
        if (!PQgetisnull(r, i, 1))
            row_revision(r, i, 1, kind, user_id, id, a, &v[(*n)++]);
    PQclear(r);
    *items = v;
    return STORE_OK;
}

int pg_revision_get(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                    int64_t number, arena_t *a, revision_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), rid = pg_num_i64(id), num = pg_num_i64(number);
    const char *p[] = {uid.s, rid.s, num.s};
    PGresult *r;
    if ((rc = pg_run(c, kind == KIND_DOC ? S_REV_GET_DOC : S_REV_GET_IMG, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0 || PQgetisnull(r, 0, 1))
        rc = STORE_NOTFOUND;
    else
        row_revision(r, 0, 1, kind, user_id, id, a, out);
    if (rc == STORE_OK && kind == KIND_DOC && !PQgetisnull(r, 0, 16) &&
        !PQgetisnull(r, 0, 17)) { /* an action's part (after REVDOC_COLS) */
        out->part = true;
        out->part_start = pg_col_i64(r, 0, 16);
        out->part_end = pg_col_i64(r, 0, 17);
    }
    PQclear(r);
    return rc;
}

int pg_revision_restore(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                        int64_t number, const char *media_key, arena_t *a, record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t now = now_us();
    pg_num_t uid = pg_num_i64(user_id), rid = pg_num_i64(id), num = pg_num_i64(number),
             ts = pg_num_i64(now);
    if ((rc = pg_command(c, "BEGIN", "restore begin")) != STORE_OK)
        return rc;
    record_t r;
    const char *p[] = {uid.s, rid.s, num.s, ts.s, media_key};
    rc = pg_one_record(c, kind == KIND_DOC ? S_DOC_RESTORE : S_IMG_RESTORE, p, kind, a, &r);
    if (rc == STORE_OK && kind == KIND_DOC) { /* API.md §15: the restored text, folded */
        char *rf = pg_fold(r.result);
        const char *f[] = {rid.s, rf};
        PGresult *res;
        if ((rc = pg_run(c, S_DOC_REFOLD, f, &res)) == STORE_OK)
            PQclear(res);
        free(rf);
    }
    if (rc == STORE_OK) {
        const char *s[] = {rid.s, rev_source_name(SRC_RESTORE), ts.s};
        PGresult *res;
        if ((rc = pg_run(c, kind == KIND_DOC ? S_REV_SNAP_DOC : S_REV_SNAP_IMG, s, &res)) ==
            STORE_OK)
            PQclear(res);
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "restore commit");
    else
        pg_rollback(c);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

int pg_revision_trim(store_conn_t *sc, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                     const char ***keys, size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t rid = pg_num_i64(id), k = pg_num_i64(keep);
    const char *p[] = {rid.s, k.s};
    PGresult *r;
    if ((rc = pg_run(c, kind == KIND_DOC ? S_REV_TRIM_DOC : S_REV_TRIM_IMG, p, &r)) != STORE_OK)
        return rc;
    pg_collect_keys(r, a, keys, n);
    PQclear(r);
    return STORE_OK;
}
