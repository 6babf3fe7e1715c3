/* pg_records.c — the PostgreSQL store's records (create, get,
 * update, delete; lists are in pg_lists.c). */
#include "store/pg_int.h"

#include <stdlib.h>
#include <string.h>

/* Runs a statement whose first column is an id; NOTFOUND when it gives no row. */
static int pg_find_id(pg_conn_t *c, int id, const char *const *p, int64_t *out)
{
    PGresult *r;
    int rc = pg_run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        *out = pg_col_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

/* ---- records --------------------------------------------------------------------- */

/* A new record, "queued"; done: a document already "completed" with its result. */
static int pg_insert_record(pg_conn_t *c, const record_t *rec, int64_t now, bool done,
                            int64_t *id)
{
    pg_num_t uid = pg_num_i64(rec->user_id), ts = pg_num_i64(now);
    const char *fav = rec->favorite ? "t" : "f";
    /* unicode (API.md §15): the folded name and result, stored beside them */
    char *nf = pg_fold(rec->name), *rf = done ? pg_fold(rec->result) : NULL;
    int rc;
    if (rec->kind == KIND_DOC) {
        pg_num_t cr = pg_num_f64(rec->creativity), tpl = pg_num_i64(rec->template_id),
              words = pg_num_i64(rec->words), pt = pg_num_i64(rec->prompt_tokens),
              ct = pg_num_i64(rec->completion_tokens);
        const char *tone = rec->tone ? rec->tone : "neutral";
        const char *lang = rec->language ? rec->language : "en";
        const char *len = rec->length ? rec->length : "medium";
        if (!done) {
            const char *q[] = {uid.s, rec->name, fav, ts.s, rec->prompt, cr.s, tpl.s,
                               tone, lang, len, nf};
            rc = pg_find_id(c, S_DOC_INSERT, q, id);
        } else {
            const char *p[] = {uid.s, rec->name, fav, ts.s, rec->prompt, cr.s, tpl.s,
                               rec->result, words.s, rec->prompt_tokens < 0 ? NULL : pt.s,
                               rec->completion_tokens < 0 ? NULL : ct.s,
                               rec->truncated ? "t" : "f", tone, lang, len, nf, rf};
            rc = pg_find_id(c, S_DOC_INSERT_DONE, p, id);
        }
    } else {
        const char *p[] = {uid.s, rec->name, fav, ts.s, rec->description, rec->resolution,
                           rec->style, nf};
        rc = pg_find_id(c, S_IMG_INSERT, p, id);
    }
    free(nf);
    free(rf);
    if (rc == STORE_OK && rec->ntags > 0)
        rc = pg_tags_write(c, rec->kind, rec->user_id, *id, rec->tags, rec->ntags, false);
    return rc;
}

int pg_record_create(store_conn_t *sc, record_t *rec, idem_keep_t *keep, int64_t *job_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t now = now_us(), id = 0, jid = 0;
    if ((rc = pg_command(c, "BEGIN", "record create begin")) != STORE_OK)
        return rc;
    rc = pg_insert_record(c, rec, now, false, &id);
    if (rc == STORE_OK) {
        pg_num_t kind = pg_num_i64(rec->kind), rid = pg_num_i64(id), ts = pg_num_i64(now);
        const char *p[] = {kind.s, rid.s, ts.s};
        rc = pg_find_id(c, S_JOB_INSERT, p, &jid);
    }
    if (rc == STORE_OK)
        rc = store_keep_answer(sc, keep, rec, id, REC_QUEUED, now);
    if (rc == STORE_OK)
        rc = pg_commit_record(c, "record create commit", rec->kind, id);
    if (rc != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    rec->id = id;
    store_record_inserted(rec, REC_QUEUED, now);
    *job_id = jid;
    return STORE_OK;
}

/* All in one transaction (all or none). A connection that sat idle through a database
 * restart is remade by pg_ready, as for every operation. */
int pg_docs_create_completed(store_conn_t *sc, record_t *const *recs,
                             idem_keep_t *const *keeps, size_t n)
{
    pg_conn_t *c = pg_cast(sc);
    if (!store_docs_finished(recs, n))
        return STORE_ERROR;
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = pg_command(c, "BEGIN", "docs create begin")) != STORE_OK)
        return rc;
    int64_t now = now_us();
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        rc = pg_insert_record(c, recs[i], now, true, &recs[i]->id);
        if (rc == STORE_OK && keeps)
            rc = store_keep_answer(sc, keeps[i], recs[i], recs[i]->id, REC_COMPLETED, now);
    }
    if (rc == STORE_OK) /* the words generated, counted in the same transaction */
        rc = store_usage_add_docs(sc, recs, n);
    if (rc == STORE_OK)
        rc = pg_commit_record(c, "docs create commit", KIND_DOC, recs[0]->id);
    if (rc != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        store_record_inserted(recs[i], REC_COMPLETED, now);
    return STORE_OK;
}

/* Runs a statement returning at most one record row. */
int pg_one_record(pg_conn_t *c, int id, const char *const *p, rec_kind_t kind, arena_t *a,
                  record_t *out)
{
    PGresult *r;
    int rc = pg_run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        pg_row_record(r, 0, kind, a, out);
    PQclear(r);
    return rc;
}

int pg_record_get(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                  arena_t *a, record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id), rid = pg_num_i64(id);
    const char *p[] = {uid.s, rid.s};
    return pg_one_record(c, kind == KIND_DOC ? S_DOC_GET : S_IMG_GET, p, kind, a, out);
}

/* The record cache's probe on PostgreSQL: the row comes whole in the one round trip
 * either way; a version the caller holds is not rendered again. */
int pg_record_get_probed(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                         record_probe_fn probe, void *probe_arg, arena_t *a,
                         record_t *out)
{
    int rc = pg_record_get(sc, kind, user_id, id, a, out);
    if (rc == STORE_OK && probe(probe_arg, kind, out->id, out->updated_us))
        *out = (record_t){.kind = kind, .id = out->id, .updated_us = out->updated_us,
                          .probed = true};
    return rc;
}

int pg_record_update(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                     const record_patch_t *pt, arena_t *a, record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    /* tags (API.md §23): written first, in the update's transaction */
    bool tx = pt->set_tags;
    if (tx && (rc = pg_command(c, "BEGIN", "record update begin")) != STORE_OK)
        return rc;
    if (tx && (rc = pg_tags_write(c, kind, user_id, id, pt->tags, pt->ntags, true)) != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    pg_num_t uid = pg_num_i64(user_id), rid = pg_num_i64(id), now = pg_num_i64(now_us());
    pg_num_t fav = pg_num_i64(pt->favorite < 0 ? -1 : pt->favorite ? 1 : 0);
    /* unicode (API.md §15): the folded name and result, stored beside them */
    char *nf = pg_fold(pt->name), *rf = pg_fold(pt->result);
    if (kind == KIND_DOC) {
        pg_num_t words = pg_num_i64(pt->words);
        const char *p[] = {uid.s, rid.s, pt->name, pt->result ? "t" : "f", pt->result, words.s,
                           fav.s, now.s, nf, rf};
        rc = pg_one_record(c, S_DOC_UPDATE, p, kind, a, out);
    } else {
        const char *p[] = {uid.s, rid.s, pt->name, fav.s, now.s, nf};
        rc = pg_one_record(c, S_IMG_UPDATE, p, kind, a, out);
    }
    free(nf);
    free(rf);
    if (tx && rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "record update commit");
    if (tx && rc != STORE_OK)
        pg_rollback(c);
    return rc;
}

/* One record's removal (its row, jobs and revisions: one statement), its media keys
 * added to *keys; NOTFOUND when it is not the user's. */
static int delete_one(pg_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, arena_t *a,
                      const char ***keys, size_t *n)
{
    pg_num_t uid = pg_num_i64(user_id), rid = pg_num_i64(id);
    const char *p[] = {uid.s, rid.s};
    PGresult *r;
    int rc = pg_run(c, kind == KIND_DOC ? S_DOC_DELETE : S_IMG_DELETE, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        pg_collect_keys(r, a, keys, n);
    PQclear(r);
    return rc;
}

int pg_record_delete(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                     arena_t *a, const char ***keys, size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    return delete_one(c, kind, user_id, id, a, keys, n);
}

int pg_record_delete_many(store_conn_t *sc, rec_kind_t kind, int64_t user_id,
                          const int64_t *ids, size_t n, arena_t *a, const char ***keys,
                          size_t *nkeys, int64_t **done, size_t *ndone)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t *d = arena_alloc(a, (n ? n : 1) * sizeof(*d));
    size_t m = 0;
    if ((rc = pg_command(c, "BEGIN", "bulk delete begin")) != STORE_OK)
        return rc;
    /* the user's tags lock first, then the rows (as a tag change takes them): the
     * deletes' trigger takes it after each row's lock, where a concurrent tag change of
     * one of these records would wait for the row holding the lock — a deadlock, which
     * PostgreSQL would end by undoing the whole bulk delete (pg_tags.c) */
    rc = pg_tags_lock_user(c, user_id);
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        rc = delete_one(c, kind, user_id, ids[i], a, keys, nkeys);
        if (rc == STORE_OK)
            d[m++] = ids[i];
        else if (rc == STORE_NOTFOUND)
            rc = STORE_OK;
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "bulk delete commit");
    if (rc != STORE_OK) {
        pg_rollback(c);
        *nkeys = 0;
        return rc;
    }
    *done = d;
    *ndone = m;
    return STORE_OK;
}
