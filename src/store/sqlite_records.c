/* sqlite_records.c — records in the SQLite store: create (with its job), get (with a
 * probe), update, delete, and the list of media keys. Part of the SQLite backend
 * (sqlite.c). */
#include "store/sqlite_int.h"

#include <string.h>

/* ---- records --------------------------------------------------------------------------- */

/* A token count: -1 when NULL (not said). */
static int64_t col_tokens(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

void sq_bind_tokens(sqlite3_stmt *st, int i, int64_t n)
{
    if (n < 0)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, n);
}

/* Reads a row of DOC_COLS / IMG_COLS. */
int sq_read_record(sqlite3_stmt *st, rec_kind_t kind, arena_t *a, record_t *r)
{
    int rc = STORE_OK;
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->id = sqlite3_column_int64(st, 0);
    r->user_id = sqlite3_column_int64(st, 1);
    r->name = sq_col_text(st, 2, a);
    r->favorite = sqlite3_column_int(st, 3) != 0;
    r->state = rec_state_parse((const char *)sqlite3_column_text(st, 4));
    r->error = sq_col_text(st, 5, a);
    r->created_us = sqlite3_column_int64(st, 6);
    r->updated_us = sqlite3_column_int64(st, 7);
    if (kind == KIND_DOC) {
        r->prompt = sq_col_text(st, 8, a);
        r->creativity = sqlite3_column_double(st, 9);
        r->template_id = sqlite3_column_int(st, 10);
        rc = sq_col_result(st, 11, a, &r->result);
        r->words = sqlite3_column_int64(st, 12);
        r->prompt_tokens = col_tokens(st, 13);
        r->completion_tokens = col_tokens(st, 14);
        r->truncated = sqlite3_column_int(st, 15) != 0;
        r->tone = sq_col_text(st, 17, a);
        r->language = sq_col_text(st, 18, a);
        r->length = sq_col_text(st, 19, a);
    } else {
        r->description = sq_col_text(st, 8, a);
        r->resolution = sq_col_text(st, 9, a);
        r->style = sq_col_text(st, 10, a);
        r->media_key = sq_col_text(st, 11, a);
        r->revised_prompt = sq_col_text(st, 12, a);
    }
    r->revision = sqlite3_column_int64(st, 16);
    r->event_seq = sqlite3_column_int64(st, 20);
    r->tags_json = sq_col_text(st, 21, a);
    r->has_draft = sqlite3_column_int(st, 22) != 0;
    return rc;
}

/* A new record, "queued"; done: a document already "completed" with its result. */
static int insert_record(sq_conn_t *c, const record_t *rec, int64_t now, bool done, int64_t *id)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, done ? ST_INSERT_DOC_DONE : ST_INSERT_DOC + (rec->kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, rec->user_id);
    sq_bind_text(st, 2, rec->name);
    sqlite3_bind_int(st, 3, rec->favorite ? 1 : 0);
    sqlite3_bind_int64(st, 4, now);
    if (rec->kind == KIND_DOC) {
        sq_bind_text(st, 5, rec->prompt);
        sqlite3_bind_double(st, 6, rec->creativity);
        sqlite3_bind_int(st, 7, rec->template_id);
        sq_bind_text(st, 13, rec->tone ? rec->tone : "neutral");
        sq_bind_text(st, 14, rec->language ? rec->language : "en");
        sq_bind_text(st, 15, rec->length ? rec->length : "medium");
        if (done) {
            sq_bind_result(st, 8, rec->result);
            sqlite3_bind_int64(st, 9, rec->words);
            sq_bind_tokens(st, 10, rec->prompt_tokens);
            sq_bind_tokens(st, 11, rec->completion_tokens);
            sqlite3_bind_int(st, 12, rec->truncated ? 1 : 0);
        }
    } else {
        sq_bind_text(st, 5, rec->description);
        sq_bind_text(st, 6, rec->resolution);
        sq_bind_text(st, 7, rec->style);
    }
    rc = sq_run(c, st, "record_create");
    if (rc != STORE_OK)
        return rc;
    /* its row of the search index is written after the commit (sqlite_index.c) */
    *id = sqlite3_last_insert_rowid(c->db);
    sq_tail_added(c, rec, *id); /* searched there until then (sqlite_tail.c) */
    if (rec->ntags > 0 &&
        (rc = sq_tags_write(c, rec->kind, rec->user_id, *id, rec->tags, rec->ntags, false)) !=
            STORE_OK)
        return rc;
    /* a document generated in the request: its first revision */
    return done ? sq_rev_snapshot(c, KIND_DOC, *id, SRC_GENERATION, NULL, now) : STORE_OK;
}

static int insert_job(sq_conn_t *c, rec_kind_t kind, int64_t record_id, int64_t now,
                      int64_t *job_id)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_INSERT, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    sqlite3_bind_int64(st, 2, record_id);
    sqlite3_bind_int64(st, 3, now);
    rc = sq_run(c, st, "record_create");
    if (rc == STORE_OK)
        *job_id = sqlite3_last_insert_rowid(c->db);
    return rc;
}

int sq_record_create(store_conn_t *conn, record_t *rec, idem_keep_t *keep, int64_t *job_id)
{
    sq_conn_t *c = sq(conn);
    int64_t now = now_us(), id = 0, jid = 0;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = insert_record(c, rec, now, false, &id);
    if (rc == STORE_OK)
        rc = insert_job(c, rec->kind, id, now, &jid);
    if (rc == STORE_OK)
        rc = store_keep_answer(conn, keep, rec, id, REC_QUEUED, now);
    if ((rc = sq_tx_end(c, rc)) != STORE_OK)
        return rc;
    rec->id = id;
    store_record_inserted(rec, REC_QUEUED, now);
    *job_id = jid;
    return STORE_OK;
}

int sq_docs_create_completed(store_conn_t *conn, record_t *const *recs,
                             idem_keep_t *const *keeps, size_t n)
{
    sq_conn_t *c = sq(conn);
    if (!store_docs_finished(recs, n))
        return STORE_ERROR;
    int64_t now = now_us();
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        rc = insert_record(c, recs[i], now, true, &recs[i]->id);
        if (rc == STORE_OK && keeps)
            rc = store_keep_answer(conn, keeps[i], recs[i], recs[i]->id, REC_COMPLETED, now);
    }
    if (rc == STORE_OK) /* the words generated, counted in the same transaction */
        rc = store_usage_add_docs(conn, recs, n);
    if ((rc = sq_tx_end(c, rc)) != STORE_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        store_record_inserted(recs[i], REC_COMPLETED, now);
    return STORE_OK;
}

/* With a probe that answers true, only kind, id, updated_us and probed are set. */
int sq_record_get_probed(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                         record_probe_fn probe, void *probe_arg, arena_t *a,
                         record_t *out)
{
    sq_conn_t *c = sq(conn);
    sqlite3_stmt *st;
    int rc;
    /* with a probe, its version first: the caller mostly holds it (its rendering) */
    for (int full = !probe; full < 2; full++) {
        int id_st = (full ? ST_GET_DOC : ST_STAMP_DOC) + (kind == KIND_IMG);
        if ((rc = sq_stmt(c, id_st, &st)) != STORE_OK)
            return rc;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        if ((rc = sq_step_row(c, st, "record_get")) != STORE_OK)
            return rc;
        if (full)
            break;
        int64_t updated = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
        if (probe(probe_arg, kind, id, updated)) {
            memset(out, 0, sizeof(*out));
            out->kind = kind;
            out->id = id;
            out->updated_us = updated;
            out->probed = true;
            return STORE_OK;
        }
    }
    rc = sq_read_record(st, kind, a, out);
    sq_stmt_done(st);
    return rc;
}

int sq_record_get(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                  arena_t *a, record_t *out)
{
    return sq_record_get_probed(conn, kind, user_id, id, NULL, NULL, a, out);
}

int sq_record_update(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                     const record_patch_t *p, arena_t *a, record_t *out)
{
    sq_conn_t *c = sq(conn);
    record_t r = {0};
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    /* tags (API.md §23) and the dropped draft (§24) first: the update's row shows them */
    if (p->set_tags &&
        (rc = sq_tags_write(c, kind, user_id, id, p->tags, p->ntags, true)) != STORE_OK)
        goto out;
    if (kind == KIND_DOC && p->result && (rc = sq_draft_drop(c, user_id, id)) != STORE_OK)
        goto out;
    if ((rc = sq_stmt(c, ST_UPDATE_DOC + (kind == KIND_IMG), &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    sq_bind_text(st, 3, p->name);
    if (kind == KIND_DOC) {
        sqlite3_bind_int(st, 4, p->result != NULL);
        sq_bind_result(st, 5, p->result);
        sqlite3_bind_int64(st, 6, p->words);
    }
    sqlite3_bind_int(st, 7, p->favorite < 0 ? -1 : p->favorite != 0);
    sqlite3_bind_int64(st, 8, now_us());
    rc = sq_step_row(c, st, "record_update");
    if (rc == STORE_OK) {
        rc = sq_read_record(st, kind, a, &r);
        sq_stmt_done(st);
        if (rc == STORE_OK && p->name) /* the tail's names (sqlite_tail.c) */
            sq_tail_renamed(c, kind, id);
        if (rc == STORE_OK && kind == KIND_DOC && p->result) /* a new text is a revision (API.md §16) */
            rc = sq_rev_snapshot(c, kind, id, SRC_EDIT, NULL, r.updated_us);
    }
out:
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

static int delete_jobs_of(sq_conn_t *c, rec_kind_t kind, int64_t record_id)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_JOB_DELETE_RECORD, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    sqlite3_bind_int64(st, 2, record_id);
    return sq_run(c, st, "record_delete");
}

/* One record's removal inside the caller's transaction: its row, its jobs, its
 * revisions; the media keys are added to *keys (NOTFOUND: not the user's). */
static int delete_one(sq_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, arena_t *a,
                      const char ***keys, size_t *n)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_DELETE_DOC + (kind == KIND_IMG), &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    rc = sq_collect_keys(c, st, a, keys, n, "record_delete");
    if (rc == STORE_OK && sqlite3_changes(c->db) == 0)
        rc = STORE_NOTFOUND;
    if (rc != STORE_OK)
        return rc;
    rc = delete_jobs_of(c, kind, id);
    if (rc == STORE_OK && (rc = sq_stmt(c, ST_REV_DELETE_DOC + (kind == KIND_IMG), &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        rc = sq_collect_keys(c, st, a, keys, n, "record_delete");
    }
    return rc;
}

int sq_record_delete(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                     arena_t *a, const char ***keys, size_t *n)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    rc = sq_tx_end(c, delete_one(c, kind, user_id, id, a, keys, n));
    if (rc != STORE_OK)
        *n = 0;
    return rc;
}

int sq_record_delete_many(store_conn_t *conn, rec_kind_t kind, int64_t user_id,
                          const int64_t *ids, size_t n, arena_t *a, const char ***keys,
                          size_t *nkeys, int64_t **done, size_t *ndone)
{
    sq_conn_t *c = sq(conn);
    int64_t *d = arena_alloc(a, (n ? n : 1) * sizeof(*d));
    size_t m = 0;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        rc = delete_one(c, kind, user_id, ids[i], a, keys, nkeys);
        if (rc == STORE_OK)
            d[m++] = ids[i];
        else if (rc == STORE_NOTFOUND)
            rc = STORE_OK;
    }
    rc = sq_tx_end(c, rc);
    if (rc != STORE_OK) {
        *nkeys = 0;
        return rc;
    }
    *done = d;
    *ndone = m;
    return STORE_OK;
}

/* ---- media keys ---------------------------------------------------------------------- */

int sq_media_keys(store_conn_t *conn, arena_t *a, const char ***keys, size_t *n)
{
    sq_conn_t *c = sq(conn);
    *keys = NULL;
    *n = 0;
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = sq_stmt(c, ST_MEDIA_KEYS, &st)) != STORE_OK)
        return sq_tx_end(c, rc);
    size_t cap = 0;
    const char **v = NULL;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            const char **grown = arena_alloc(a, cap * sizeof(*grown));
            if (*n)
                memcpy(grown, v, *n * sizeof(*grown));
            v = grown;
        }
        v[(*n)++] = sq_col_text(st, 0, a);
    }
    rc = step == SQLITE_DONE ? STORE_OK : sq_error(c, step, "media_keys");
    sq_stmt_done(st);
    *keys = v;
    return sq_tx_end(c, rc);
}
