/* pg_tags.c — tags, bulk actions and drafts in the PostgreSQL store (API.md §23, §24;
 * the schema: migration 17, store_int.h). Its statements are its own (stmts[], one bit
 * each in pg_conn_t.tags_prepared).
 *
 * Every change of a user's tags runs under that user's transaction-level advisory lock
 * (taken first, before any row lock), so two of them never interleave: the spelling a
 * tag keeps (the one of its row while some record carries it; else the one a record
 * now gives it) and the removal of tags no record carries any more (at the end of each
 * change) see each other whole. A record's delete removes its links and the tags it
 * leaves uncarried by a trigger (migration 17) that takes the same lock, after the
 * deleted row's lock where a change here takes the user's lock first: a delete and a
 * tag change of the same record at once may deadlock, and PostgreSQL then undoes one
 * of them (a lone DELETE statement is run again: pg_run_named). A bulk delete
 * (pg_records.c) takes the user's lock first, so it waits instead. */
#include "store/pg_int.h"

#include "core/unicode.h"

#include <stdlib.h>
#include <string.h>

#define PG_TAGS_LOCK "727370514152314" /* pg_advisory_xact_lock class of a user's tags */

enum {
    G_LOCK, G_OWNED_DOC, G_OWNED_IMG, G_UNLINK, G_UPSERT, G_LINK, G_SET_DOC, G_SET_IMG, G_GC,
    G_OLD, G_LIST, G_FAV_DOC, G_FAV_IMG, D_PUT, D_GET, D_FLAG, D_DEL, G_COUNT
};
_Static_assert(G_COUNT <= 64, "pg_conn_t.tags_prepared has one bit per statement");

#define BUMP_IF(flag, now)                                                                 \
    "updated_us = CASE WHEN " flag " THEN greatest(" now ", updated_us + 1)"               \
    " ELSE updated_us END"

static const pg_stmt_t stmts[G_COUNT] = {
    [G_LOCK] = {"ink_g_lock", 1,
                "SELECT pg_advisory_xact_lock(" PG_TAGS_LOCK " # $1::bigint)"},
    [G_OWNED_DOC] = {"ink_g_owned_doc", 2,
                     "SELECT revision, has_draft FROM documents WHERE id = $1::bigint"
                     " AND user_id = $2::bigint FOR UPDATE"},
    [G_OWNED_IMG] = {"ink_g_owned_img", 2,
                     "SELECT revision, false FROM images WHERE id = $1::bigint"
                     " AND user_id = $2::bigint FOR UPDATE"},
    [G_UNLINK] = {"ink_g_unlink", 2,
                  "DELETE FROM record_tags WHERE kind = $1::smallint AND record_id = $2::bigint"},
    [G_UPSERT] = {"ink_g_upsert", 3,
                  "INSERT INTO tags (user_id, fold, name) VALUES ($1::bigint, $2::text, $3::text)"
                  " ON CONFLICT (user_id, fold) DO UPDATE SET name = CASE WHEN EXISTS"
                  " (SELECT 1 FROM record_tags r WHERE r.tag_id = tags.id) THEN tags.name"
                  " ELSE excluded.name END RETURNING id, name"},
    [G_LINK] = {"ink_g_link", 5,
                "INSERT INTO record_tags (tag_id, kind, record_id, user_id, pos) VALUES"
                " ($1::bigint, $2::smallint, $3::bigint, $4::bigint, $5::int)"
                " ON CONFLICT DO NOTHING"},
    [G_SET_DOC] = {"ink_g_set_doc", 4,
                   "UPDATE documents SET tags = $2::text, " BUMP_IF("$4::boolean", "$3::bigint")
                   " WHERE id = $1::bigint"},
    [G_SET_IMG] = {"ink_g_set_img", 4,
                   "UPDATE images SET tags = $2::text, " BUMP_IF("$4::boolean", "$3::bigint")
                   " WHERE id = $1::bigint"},
    [G_GC] = {"ink_g_gc", 1,
              "DELETE FROM tags t WHERE t.user_id = $1::bigint AND NOT EXISTS"
              " (SELECT 1 FROM record_tags r WHERE r.tag_id = t.id)"},
    [G_OLD] = {"ink_g_old", 2,
               "SELECT t.name FROM record_tags r JOIN tags t ON t.id = r.tag_id"
               " WHERE r.kind = $1::smallint AND r.record_id = $2::bigint ORDER BY r.pos"},
    [G_LIST] = {"ink_g_list", 1,
                "SELECT t.name, count(*) FILTER (WHERE r.kind = 0),"
                " count(*) FILTER (WHERE r.kind = 1) FROM tags t"
                " JOIN record_tags r ON r.tag_id = t.id WHERE t.user_id = $1::bigint"
                " GROUP BY t.id, t.name"},
    [G_FAV_DOC] = {"ink_g_fav_doc", 4,
                   "UPDATE documents SET favorite = $3::boolean, "
                   STORE_BUMP("greatest", "$4::bigint")
                   " WHERE id = $1::bigint AND user_id = $2::bigint"},
    [G_FAV_IMG] = {"ink_g_fav_img", 4,
                   "UPDATE images SET favorite = $3::boolean, "
                   STORE_BUMP("greatest", "$4::bigint")
                   " WHERE id = $1::bigint AND user_id = $2::bigint"},
    [D_PUT] = {"ink_d_put", 5,
               "INSERT INTO drafts (document_id, user_id, result, base_revision, updated_us)"
               " VALUES ($1::bigint, $2::bigint, $3::text, $4::bigint, $5::bigint)"
               " ON CONFLICT (document_id) DO UPDATE SET result = excluded.result,"
               " base_revision = excluded.base_revision,"
               " updated_us = greatest(excluded.updated_us, drafts.updated_us + 1)"
               " RETURNING updated_us"},
    [D_GET] = {"ink_d_get", 2,
               "SELECT d.result, d.base_revision, d.updated_us, m.revision FROM drafts d"
               " JOIN documents m ON m.id = d.document_id WHERE d.document_id = $1::bigint"
               " AND m.user_id = $2::bigint"},
    [D_FLAG] = {"ink_d_flag", 3,
                "UPDATE documents SET has_draft = $2::boolean, "
                STORE_BUMP("greatest", "$3::bigint")
                " WHERE id = $1::bigint AND has_draft <> $2::boolean"},
    [D_DEL] = {"ink_d_del", 1, "DELETE FROM drafts WHERE document_id = $1::bigint"},
};

static int run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->tags_prepared >> id) & 1;
    int rc = pg_run_named(c, stmts[id].name, stmts[id].sql, stmts[id].nparams, &prepared,
                          params, out);
    if (prepared)
        c->tags_prepared |= (uint64_t)1 << id;
    return rc;
}

static int exec(pg_conn_t *c, int id, const char *const *params)
{
    PGresult *r;
    int rc = run(c, id, params, &r);
    if (rc == STORE_OK)
        PQclear(r);
    return rc;
}

/* The record's revision and has_draft, locked, when it is the user's; else NOTFOUND. */
static int owned(pg_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, int64_t *revision,
                 bool *has_draft)
{
    pg_num_t rid = pg_num_i64(id), uid = pg_num_i64(user_id);
    const char *p[] = {rid.s, uid.s};
    PGresult *r;
    int rc = run(c, kind == KIND_IMG ? G_OWNED_IMG : G_OWNED_DOC, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = STORE_NOTFOUND;
    } else {
        if (revision)
            *revision = pg_col_i64(r, 0, 0);
        if (has_draft)
            *has_draft = PQgetvalue(r, 0, 1)[0] == 't';
    }
    PQclear(r);
    return rc;
}

static int lock_user(pg_conn_t *c, int64_t user_id)
{
    return pg_tags_lock_user(c, user_id);
}

int pg_tags_lock_user(pg_conn_t *c, int64_t user_id)
{
    pg_num_t uid = pg_num_i64(user_id);
    const char *p[] = {uid.s};
    return exec(c, G_LOCK, p);
}

/* Under the user's lock, the record locked: its links and `tags` column. */
static int write_locked(pg_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        const char *const *tags, int n, bool bump)
{
    pg_num_t k = pg_num_i64(kind), rid = pg_num_i64(id), uid = pg_num_i64(user_id);
    const char *pu[] = {k.s, rid.s};
    int rc = exec(c, G_UNLINK, pu);
    arena_t a;
    arena_init(&a);
    const char **names = arena_alloc(&a, (size_t)(n + 1) * sizeof(*names));
    for (int i = 0; i < n && rc == STORE_OK; i++) {
        char *fold = uni_fold(tags[i], strlen(tags[i]), NULL);
        if (!fold) {
            rc = STORE_ERROR;
            break;
        }
        const char *pt[] = {uid.s, fold, tags[i]};
        PGresult *r;
        rc = run(c, G_UPSERT, pt, &r);
        free(fold);
        if (rc != STORE_OK)
            break;
        if (PQntuples(r) != 1) {
            PQclear(r);
            rc = STORE_ERROR;
            break;
        }
        pg_num_t tid = pg_num_i64(pg_col_i64(r, 0, 0)), pos = pg_num_i64(i);
        names[i] = pg_col_str(r, 0, 1, &a);
        PQclear(r);
        const char *pl[] = {tid.s, k.s, rid.s, uid.s, pos.s};
        rc = exec(c, G_LINK, pl);
    }
    if (rc == STORE_OK) {
        pg_num_t now = pg_num_i64(now_us());
        const char *ps[] = {rid.s, store_tags_json(names, n, &a), now.s, bump ? "t" : "f"};
        rc = exec(c, kind == KIND_IMG ? G_SET_IMG : G_SET_DOC, ps);
    }
    if (rc == STORE_OK) {
        const char *pg[] = {uid.s};
        rc = exec(c, G_GC, pg);
    }
    arena_free(&a);
    return rc;
}

int pg_tags_write(pg_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                  const char *const *tags, int n, bool bump)
{
    int rc = lock_user(c, user_id);
    if (rc == STORE_OK)
        rc = owned(c, kind, user_id, id, NULL, NULL);
    if (rc == STORE_OK)
        rc = write_locked(c, kind, user_id, id, tags, n, bump);
    return rc;
}

int pg_tags_list(store_conn_t *sc, int64_t user_id, arena_t *a, tag_count_t **out, size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t uid = pg_num_i64(user_id);
    const char *p[] = {uid.s};
    PGresult *r;
    if ((rc = run(c, G_LIST, p, &r)) != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    *out = arena_alloc(a, (size_t)(rows ? rows : 1) * sizeof(**out));
    for (int i = 0; i < rows; i++)
        (*out)[i] = (tag_count_t){.name = pg_col_str(r, i, 0, a),
                                  .documents = pg_col_i64(r, i, 1),
                                  .images = pg_col_i64(r, i, 2)};
    *n = (size_t)rows;
    PQclear(r);
    return STORE_OK;
}

static int old_tags(pg_conn_t *c, rec_kind_t kind, int64_t id, arena_t *a, const char ***out,
                    int *n)
{
    pg_num_t k = pg_num_i64(kind), rid = pg_num_i64(id);
    const char *p[] = {k.s, rid.s};
    PGresult *r;
    int rc = run(c, G_OLD, p, &r);
    if (rc != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    if (rows > STORE_MAX_TAGS)
        rows = STORE_MAX_TAGS;
    const char **names = arena_alloc(a, (size_t)(rows + 1) * sizeof(*names));
    for (int i = 0; i < rows; i++)
        names[i] = pg_col_str(r, i, 0, a);
    PQclear(r);
    *out = names;
    *n = rows;
    return STORE_OK;
}

int pg_record_bulk(store_conn_t *sc, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                   size_t n, bulk_action_t action, const char *const *tags, int ntags,
                   arena_t *a, int64_t **done, size_t *ndone)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t *d = arena_alloc(a, (n ? n : 1) * sizeof(*d));
    size_t m = 0;
    bool tagging = action == BULK_TAG || action == BULK_UNTAG;
    if ((rc = pg_command(c, "BEGIN", "bulk begin")) != STORE_OK)
        return rc;
    if (tagging)
        rc = lock_user(c, user_id);
    pg_num_t uid = pg_num_i64(user_id), now = pg_num_i64(now_us());
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        rc = owned(c, kind, user_id, ids[i], NULL, NULL);
        if (rc == STORE_NOTFOUND) {
            rc = STORE_OK;
            continue;
        }
        if (rc != STORE_OK)
            break;
        d[m++] = ids[i];
        if (!tagging) {
            pg_num_t rid = pg_num_i64(ids[i]);
            const char *p[] = {rid.s, uid.s, action == BULK_FAVORITE ? "t" : "f", now.s};
            rc = exec(c, kind == KIND_IMG ? G_FAV_IMG : G_FAV_DOC, p);
            continue;
        }
        const char **old, **merged;
        int nold, nm;
        if ((rc = old_tags(c, kind, ids[i], a, &old, &nold)) != STORE_OK)
            break;
        store_tags_merge(old, nold, action, tags, ntags, a, &merged, &nm);
        if (nm > STORE_MAX_TAGS)
            rc = STORE_CONFLICT;
        else
            rc = write_locked(c, kind, user_id, ids[i], merged, nm, true);
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "bulk commit");
    if (rc != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    *done = d;
    *ndone = m;
    return STORE_OK;
}

/* ---- drafts ---- */

static int draft_flag(pg_conn_t *c, int64_t id, bool on)
{
    pg_num_t rid = pg_num_i64(id), now = pg_num_i64(now_us());
    const char *p[] = {rid.s, on ? "t" : "f", now.s};
    return exec(c, D_FLAG, p);
}

int pg_draft_put(store_conn_t *sc, int64_t user_id, int64_t id, const char *result,
                 int64_t base, arena_t *a, draft_t *out)
{
    (void)a;
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = pg_command(c, "BEGIN", "draft begin")) != STORE_OK)
        return rc;
    int64_t revision = 0;
    bool has = false;
    rc = owned(c, KIND_DOC, user_id, id, &revision, &has);
    if (rc == STORE_OK) {
        if (base < 0)
            base = revision;
        if (revision == 0 ? base != 0 : base < 1 || base > revision)
            rc = STORE_STALE;
    }
    if (rc == STORE_OK) {
        pg_num_t rid = pg_num_i64(id), uid = pg_num_i64(user_id), b = pg_num_i64(base),
                 now = pg_num_i64(now_us());
        const char *p[] = {rid.s, uid.s, result, b.s, now.s};
        PGresult *r;
        if ((rc = run(c, D_PUT, p, &r)) == STORE_OK) {
            out->updated_us = PQntuples(r) ? pg_col_i64(r, 0, 0) : 0;
            PQclear(r);
        }
    }
    if (rc == STORE_OK && !has)
        rc = draft_flag(c, id, true);
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "draft commit");
    if (rc != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    out->result = result;
    out->base_revision = base;
    out->revision = revision;
    return STORE_OK;
}

int pg_draft_get(store_conn_t *sc, int64_t user_id, int64_t id, arena_t *a, draft_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    pg_num_t rid = pg_num_i64(id), uid = pg_num_i64(user_id);
    const char *p[] = {rid.s, uid.s};
    PGresult *r;
    if ((rc = run(c, D_GET, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = STORE_NOTFOUND;
    } else {
        out->result = pg_col_str(r, 0, 0, a);
        out->base_revision = pg_col_i64(r, 0, 1);
        out->updated_us = pg_col_i64(r, 0, 2);
        out->revision = pg_col_i64(r, 0, 3);
    }
    PQclear(r);
    return rc;
}

int pg_draft_delete(store_conn_t *sc, int64_t user_id, int64_t id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = pg_command(c, "BEGIN", "draft begin")) != STORE_OK)
        return rc;
    bool has = false;
    if ((rc = owned(c, KIND_DOC, user_id, id, NULL, &has)) == STORE_OK && !has)
        rc = STORE_NOTFOUND;
    if (rc == STORE_OK) {
        pg_num_t rid = pg_num_i64(id);
        const char *p[] = {rid.s};
        rc = exec(c, D_DEL, p);
    }
    if (rc == STORE_OK)
        rc = draft_flag(c, id, false);
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "draft commit");
    if (rc != STORE_OK)
        pg_rollback(c);
    return rc;
}
