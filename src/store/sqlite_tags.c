/* sqlite_tags.c — tags, bulk actions and drafts in the SQLite store (API.md §23, §24;
 * the schema: migration 23, store_int.h). Its statements are its own (sq_conn_t.tags[],
 * prepared on first use). A tag's spelling is its row's: a record stored with a tag
 * the user already carries elsewhere takes that spelling; a tag no record carries any
 * more is removed by a trigger, so the next record to carry it gives its spelling.
 * Part of the SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

#include "core/unicode.h"

#include <stdlib.h>
#include <string.h>

enum {
    G_OWNED_DOC, G_OWNED_IMG, G_UNLINK, G_UPSERT, G_LINK, G_SET_DOC, G_SET_IMG, G_OLD,
    G_LIST, G_FAV_DOC, G_FAV_IMG, D_DOC, D_PUT, D_GET, D_FLAG, D_DEL, G_COUNT
};
_Static_assert(G_COUNT <= SQ_TAG_STMTS, "sq_conn_t.tags has a slot per statement");

#define BUMP_IF(flag, now) \
    "updated_us = CASE WHEN " flag " THEN max(" now ", updated_us + 1) ELSE updated_us END"

static const char *const sql[G_COUNT] = {
    [G_OWNED_DOC] = "SELECT revision, has_draft FROM documents WHERE id = ?1 AND user_id = ?2",
    [G_OWNED_IMG] = "SELECT revision, 0 FROM images WHERE id = ?1 AND user_id = ?2",
    [G_UNLINK] = "DELETE FROM record_tags WHERE kind = ?1 AND record_id = ?2",
    [G_UPSERT] = "INSERT INTO tags (user_id, fold, name) VALUES (?1, ?2, ?3)"
                 " ON CONFLICT (user_id, fold) DO UPDATE SET name = name RETURNING id, name",
    [G_LINK] = "INSERT OR IGNORE INTO record_tags (tag_id, kind, record_id, user_id, pos)"
               " VALUES (?1, ?2, ?3, ?4, ?5)",
    [G_SET_DOC] = "UPDATE documents SET tags = ?2, " BUMP_IF("?4", "?3") " WHERE id = ?1",
    [G_SET_IMG] = "UPDATE images SET tags = ?2, " BUMP_IF("?4", "?3") " WHERE id = ?1",
    [G_OLD] = "SELECT t.name FROM record_tags r JOIN tags t ON t.id = r.tag_id"
              " WHERE r.kind = ?1 AND r.record_id = ?2 ORDER BY r.pos",
    [G_LIST] = "SELECT t.name, sum(r.kind = 0), sum(r.kind = 1) FROM tags t"
               " JOIN record_tags r ON r.tag_id = t.id WHERE t.user_id = ?1 GROUP BY t.id",
    [G_FAV_DOC] = "UPDATE documents SET favorite = ?3, " STORE_BUMP("max", "?4")
                  " WHERE id = ?1 AND user_id = ?2",
    [G_FAV_IMG] = "UPDATE images SET favorite = ?3, " STORE_BUMP("max", "?4")
                  " WHERE id = ?1 AND user_id = ?2",
    [D_DOC] = "SELECT revision, has_draft FROM documents WHERE id = ?1 AND user_id = ?2",
    [D_PUT] = "INSERT INTO drafts (document_id, user_id, result, base_revision, updated_us)"
              " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (document_id) DO UPDATE SET"
              " result = excluded.result, base_revision = excluded.base_revision,"
              " updated_us = max(excluded.updated_us, drafts.updated_us + 1)"
              " RETURNING updated_us",
    [D_GET] = "SELECT d.result, d.base_revision, d.updated_us, m.revision FROM drafts d"
              " JOIN documents m ON m.id = d.document_id WHERE d.document_id = ?1"
              " AND m.user_id = ?2",
    [D_FLAG] = "UPDATE documents SET has_draft = ?2, " BUMP_IF("?4", "?3")
               " WHERE id = ?1 AND has_draft <> ?2",
    [D_DEL] = "DELETE FROM drafts WHERE document_id = ?1",
};

static int stmt(sq_conn_t *c, int id, sqlite3_stmt **out)
{
    if (!c->tags[id]) {
        int rc = sq_prepare(c, sql[id], &c->tags[id], "tags prepare");
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->tags[id];
    return STORE_OK;
}

/* The record's revision (and has_draft) when it is the user's; NOTFOUND when not. */
static int owned(sq_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, int64_t *revision,
                 bool *has_draft)
{
    sqlite3_stmt *st;
    int rc = stmt(c, kind == KIND_IMG ? G_OWNED_IMG : G_OWNED_DOC, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    rc = sq_step_row(c, st, "tags");
    if (rc == STORE_OK) {
        if (revision)
            *revision = sqlite3_column_int64(st, 0);
        if (has_draft)
            *has_draft = sqlite3_column_int(st, 1) != 0;
        sq_stmt_done(st);
    }
    return rc;
}

int sq_tags_write(sq_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                  const char *const *tags, int n, bool bump)
{
    sqlite3_stmt *st;
    int rc = owned(c, kind, user_id, id, NULL, NULL);
    if (rc != STORE_OK)
        return rc;
    if ((rc = stmt(c, G_UNLINK, &st)) != STORE_OK)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    sqlite3_bind_int64(st, 2, id);
    if ((rc = sq_run(c, st, "tags")) != STORE_OK)
        return rc;
    arena_t a;
    arena_init(&a);
    const char **names = arena_alloc(&a, (size_t)(n + 1) * sizeof(*names));
    for (int i = 0; i < n && rc == STORE_OK; i++) {
        char *fold = uni_fold(tags[i], strlen(tags[i]), NULL);
        if (!fold) {
            rc = STORE_ERROR;
            break;
        }
        int64_t tag_id = 0;
        if ((rc = stmt(c, G_UPSERT, &st)) == STORE_OK) {
            sqlite3_bind_int64(st, 1, user_id);
            sq_bind_text(st, 2, fold);
            sq_bind_text(st, 3, tags[i]);
            rc = sq_step_row(c, st, "tags");
            if (rc == STORE_OK) {
                tag_id = sqlite3_column_int64(st, 0);
                names[i] = sq_col_text(st, 1, &a);
                sq_stmt_done(st);
            } else if (rc == STORE_NOTFOUND) {
                rc = STORE_ERROR;
            }
        }
        free(fold);
        if (rc == STORE_OK && (rc = stmt(c, G_LINK, &st)) == STORE_OK) {
            sqlite3_bind_int64(st, 1, tag_id);
            sqlite3_bind_int(st, 2, (int)kind);
            sqlite3_bind_int64(st, 3, id);
            sqlite3_bind_int64(st, 4, user_id);
            sqlite3_bind_int(st, 5, i);
            rc = sq_run(c, st, "tags");
        }
    }
    if (rc == STORE_OK && (rc = stmt(c, kind == KIND_IMG ? G_SET_IMG : G_SET_DOC, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sq_bind_text(st, 2, store_tags_json(names, n, &a));
        sqlite3_bind_int64(st, 3, now_us());
        sqlite3_bind_int(st, 4, bump);
        rc = sq_run(c, st, "tags");
    }
    arena_free(&a);
    return rc;
}

int sq_tags_list(store_conn_t *conn, int64_t user_id, arena_t *a, tag_count_t **out, size_t *n)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    size_t cap = 0;
    if ((rc = stmt(c, G_LIST, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, user_id);
        int src;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 16;
                tag_count_t *m = arena_alloc(a, cap * sizeof(*m));
                if (*n)
                    memcpy(m, *out, *n * sizeof(*m));
                *out = m;
            }
            (*out)[*n].name = sq_col_text(st, 0, a);
            (*out)[*n].documents = sqlite3_column_int64(st, 1);
            (*out)[*n].images = sqlite3_column_int64(st, 2);
            (*n)++;
        }
        rc = src == SQLITE_DONE ? STORE_OK : sq_error(c, src, "tags_list");
        sq_stmt_done(st);
    }
    return sq_tx_end(c, rc);
}

/* The record's tags, in order, in a. */
static int old_tags(sq_conn_t *c, rec_kind_t kind, int64_t id, arena_t *a, const char ***out,
                    int *n)
{
    sqlite3_stmt *st;
    int rc = stmt(c, G_OLD, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    sqlite3_bind_int64(st, 2, id);
    const char **names = arena_alloc(a, (STORE_MAX_TAGS + 1) * sizeof(*names));
    *n = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && *n < STORE_MAX_TAGS)
        names[(*n)++] = sq_col_text(st, 0, a);
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "bulk");
    sq_stmt_done(st);
    *out = names;
    return rc;
}

int sq_record_bulk(store_conn_t *conn, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                   size_t n, bulk_action_t action, const char *const *tags, int ntags,
                   arena_t *a, int64_t **done, size_t *ndone)
{
    sq_conn_t *c = sq(conn);
    int64_t *d = arena_alloc(a, (n ? n : 1) * sizeof(*d));
    size_t m = 0;
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    int64_t now = now_us();
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        rc = owned(c, kind, user_id, ids[i], NULL, NULL);
        if (rc == STORE_NOTFOUND) {
            rc = STORE_OK;
            continue;
        }
        if (rc != STORE_OK)
            break;
        d[m++] = ids[i];
        if (action == BULK_FAVORITE || action == BULK_UNFAVORITE) {
            sqlite3_stmt *st;
            if ((rc = stmt(c, kind == KIND_IMG ? G_FAV_IMG : G_FAV_DOC, &st)) != STORE_OK)
                break;
            sqlite3_bind_int64(st, 1, ids[i]);
            sqlite3_bind_int64(st, 2, user_id);
            sqlite3_bind_int(st, 3, action == BULK_FAVORITE);
            sqlite3_bind_int64(st, 4, now);
            rc = sq_run(c, st, "bulk");
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
            rc = sq_tags_write(c, kind, user_id, ids[i], merged, nm, true);
    }
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK) {
        *done = d;
        *ndone = m;
    }
    return rc;
}

/* ---- drafts ---- */

/* Sets the document's has_draft (its updated_us moved forward when it changes: its
 * rendering shows it). */
static int draft_flag(sq_conn_t *c, int64_t id, bool on, bool bump)
{
    sqlite3_stmt *st;
    int rc = stmt(c, D_FLAG, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, on);
    sqlite3_bind_int64(st, 3, now_us());
    sqlite3_bind_int(st, 4, bump);
    return sq_run(c, st, "draft");
}

static int draft_del(sq_conn_t *c, int64_t id)
{
    sqlite3_stmt *st;
    int rc = stmt(c, D_DEL, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    return sq_run(c, st, "draft");
}

int sq_draft_drop(sq_conn_t *c, int64_t user_id, int64_t id)
{
    bool has = false;
    int rc = owned(c, KIND_DOC, user_id, id, NULL, &has);
    if (rc != STORE_OK || !has)
        return rc;
    if ((rc = draft_del(c, id)) == STORE_OK)
        rc = draft_flag(c, id, false, false); /* the update bumps */
    return rc;
}

int sq_draft_put(store_conn_t *conn, int64_t user_id, int64_t id, const char *result,
                 int64_t base, arena_t *a, draft_t *out)
{
    (void)a;
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    int64_t revision = 0;
    bool has = false;
    sqlite3_stmt *st;
    if ((rc = owned(c, KIND_DOC, user_id, id, &revision, &has)) != STORE_OK)
        goto out;
    if (base < 0)
        base = revision;
    if (revision == 0 ? base != 0 : base < 1 || base > revision) {
        rc = STORE_STALE;
        goto out;
    }
    if ((rc = stmt(c, D_PUT, &st)) != STORE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    sq_bind_text(st, 3, result);
    sqlite3_bind_int64(st, 4, base);
    sqlite3_bind_int64(st, 5, now_us());
    if ((rc = sq_step_row(c, st, "draft")) == STORE_OK) {
        out->updated_us = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
    } else if (rc == STORE_NOTFOUND) {
        rc = STORE_ERROR;
    }
    if (rc == STORE_OK && !has)
        rc = draft_flag(c, id, true, true);
    out->result = result;
    out->base_revision = base;
    out->revision = revision;
out:
    return sq_tx_end(c, rc);
}

int sq_draft_get(store_conn_t *conn, int64_t user_id, int64_t id, arena_t *a, draft_t *out)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    sqlite3_stmt *st;
    if ((rc = stmt(c, D_GET, &st)) == STORE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, user_id);
        if ((rc = sq_step_row(c, st, "draft")) == STORE_OK) {
            out->result = sq_col_text(st, 0, a);
            out->base_revision = sqlite3_column_int64(st, 1);
            out->updated_us = sqlite3_column_int64(st, 2);
            out->revision = sqlite3_column_int64(st, 3);
            sq_stmt_done(st);
        }
    }
    return sq_tx_end(c, rc);
}

int sq_draft_delete(store_conn_t *conn, int64_t user_id, int64_t id)
{
    sq_conn_t *c = sq(conn);
    int rc = sq_tx_begin(c);
    if (rc != STORE_OK)
        return rc;
    bool has = false;
    if ((rc = owned(c, KIND_DOC, user_id, id, NULL, &has)) == STORE_OK && !has)
        rc = STORE_NOTFOUND;
    if (rc == STORE_OK && (rc = draft_del(c, id)) == STORE_OK)
        rc = draft_flag(c, id, false, true);
    return sq_tx_end(c, rc);
}
