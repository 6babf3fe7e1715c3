/* revisions.c — the records service's revisions (API.md §16): list, one, restore (an
 * image's picture copied so each revision keeps its own file), and the cap
 * (--max-revisions): the oldest revisions past it go with their pictures. Regeneration
 * itself is a create (create.c, records_req_t.regenerate). */
#include "records/records_int.h"

#include "core/log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int records_revisions(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                      int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                      int64_t *total)
{
    (void)s;
    return store_revision_list(c, kind, user_id, id, per_page, page, a, items, n, total);
}

int records_revision(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                     int64_t number, arena_t *a, revision_t *out)
{
    (void)s;
    return store_revision_get(c, kind, user_id, id, number, a, out);
}

bool records_latest_part(records_t *s, store_conn_t *c, const record_t *rec, int64_t *b_start,
                         int64_t *b_after)
{
    (void)s;
    if (rec->kind != KIND_DOC || rec->state != REC_COMPLETED || !rec->result || rec->revision < 1)
        return false;
    arena_t a;
    arena_init(&a);
    revision_t rv;
    bool part = store_revision_get(c, KIND_DOC, rec->user_id, rec->id, rec->revision, &a, &rv) ==
                    STORE_OK &&
                rv.part && rv.source && strcmp(rv.source, "action") == 0 &&
                records_part_bytes(rec->result, rv.part_start, rv.part_end, b_start, b_after);
    arena_free(&a);
    return part;
}

/* A copy of the picture of key as a new media file: 0 with out set, or -1. */
static int copy_picture(media_t *m, const char *key, char out[MEDIA_KEY_LEN + 1])
{
    int fd;
    uint64_t size;
    if (media_open_file(m, key, &fd, &size) != 0)
        return -1;
    char *data = xmalloc(size ? size : 1);
    uint64_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, data + got, size - got);
        if (r <= 0)
            break;
        got += (uint64_t)r;
    }
    close(fd);
    int rc = got == size ? media_put(m, data, size, out) : -1;
    free(data);
    return rc == 0 ? 0 : -1;
}

int records_restore(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                    int64_t number, arena_t *a, record_t *out)
{
    char key[MEDIA_KEY_LEN + 1] = "";
    if (kind == KIND_IMG) {
        revision_t rv;
        int rc = store_revision_get(c, kind, user_id, id, number, a, &rv);
        if (rc != STORE_OK)
            return rc;
        if (rv.rec.media_key && copy_picture(s->d.media, rv.rec.media_key, key) != 0) {
            /* the revision may have gone meanwhile (past the cap, with its picture):
             * then it is not there to restore (404, as a moment later), not a 503 */
            revision_t again;
            if (store_revision_get(c, kind, user_id, id, number, a, &again) == STORE_NOTFOUND)
                return STORE_NOTFOUND;
            log_warn("record=%lld: the picture of revision %lld could not be copied",
                     (long long)id, (long long)number);
            return STORE_UNAVAILABLE;
        }
    }
    int rc = store_revision_restore(c, kind, user_id, id, number, key[0] ? key : NULL, a, out);
    if (rc != STORE_OK) {
        if (key[0])
            media_remove(s->d.media, key); /* no revision refers to it */
        return rc;
    }
    records_changed(s, kind, id);
    records_revision_made(s, c, out);
    records_revision_event(s, out);
    return STORE_OK;
}

int records_revision_cap(const records_t *s)
{
    return s->d.cfg->max_revisions > 0 ? (int)s->d.cfg->max_revisions : 50;
}

void records_revision_made(records_t *s, store_conn_t *c, const record_t *rec)
{
    long max = records_revision_cap(s);
    if (rec->revision <= max)
        return;
    arena_t a;
    arena_init(&a);
    const char **keys;
    size_t n;
    int rc = store_revision_trim(c, rec->kind, rec->id, (int)max, &a, &keys, &n);
    if (rc != STORE_OK)
        log_warn("record=%lld: old revisions not removed: %s", (long long)rec->id,
                 store_rc_name(rc));
    if (rc == STORE_OK) /* the removal's files, as every removal's (service.c) */
        records_removed_files(s->d.media, keys, n, "record", rec->id);
    arena_free(&a);
}
