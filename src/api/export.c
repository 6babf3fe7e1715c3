/* export.c — GET /documents/{id}/export?format=F (API.md §12): the document as a
 * file. The record is read through the records service, as the show route reads it
 * (by user and id: another user's document is a 404); then the format is checked (422
 * naming `format`), then the state (409 until the document is completed). The file
 * itself is made by the export module (src/export/), here only wrapped in its headers.
 *
 * Every answer names the document's version: ETag "<id>-<updated_us>-<format>", so that
 * If-None-Match answers 304 without making the file again. md and txt are the stored
 * text and are made here; html, docx and pdf (a PDF of a 1 MB text takes about a
 * second of CPU) are made on the export pool (api/export_pool.h) while the request is
 * suspended, so that no HTTP thread is held; past the pool's limits the answer is 429
 * (this user has enough exports running) or 503, both with Retry-After. Files made on
 * the pool are kept in its cache by document, version and format. */
#include "api/api_int.h"

#include "api/export_pool.h"
#include "export/export.h"
#include "core/testhooks.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    export_task_t task;
    http_req_t *r;
    export_format_t fmt;
    const char *name, *lang, *text;
    const char *key; /* in the cache */
    const char *etag;
    buf_t out;
    int rc;
    arena_t *rec_arena; /* the record (text), given back once rendered */
} export_job_t;

/* The record is read into an arena of its own, given back as soon as its text has been
 * rendered: a slow client of a long document's export holds the answer (sent from a
 * file: http.h spill_dir), not the document beside it (issue 25 item 6). */
static arena_t *rec_arena_new(void)
{
    arena_t *a = xmalloc(sizeof(*a));
    arena_init(a);
    return a;
}

static void rec_arena_free(arena_t *a)
{
    if (a) {
        arena_free(a);
        free(a);
    }
}

static void file_headers(http_req_t *r, const char *name, export_format_t fmt, const char *etag)
{
    buf_t disp;
    buf_init(&disp);
    export_disposition(&disp, name, fmt);
    http_add_header(r, "Content-Disposition", disp.data);
    buf_free(&disp);
    http_add_header(r, "ETag", etag);
    http_add_header(r, "Cache-Control", "private, no-cache");
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    http_set_content_type(r, export_content_type(fmt));
}

static void render_failed(http_req_t *r)
{
    buf_reset(http_resp(r));
    api_error(r, 500, "The document could not be exported.");
}

static void job_run(export_task_t *t)
{
    export_job_t *j = t->arg;
    test_hook_hold("INKWELL_TEST_EXPORT_HOLD");
    j->rc = export_render(j->fmt, j->name, j->lang, j->text, strlen(j->text), &j->out);
}

static void job_done(export_task_t *t)
{
    export_job_t *j = t->arg;
    http_resume(j->r);
}

static void job_suspended(http_req_t *r)
{
    app_t *app = http_app(r);
    export_job_t *j = http_wait(r);
    export_pool_submit(app->exports, &j->task);
}

static void job_resumed(void *appv, http_req_t *r)
{
    app_t *app = appv;
    export_job_t *j = http_wait(r);
    rec_arena_free(j->rec_arena);
    j->rec_arena = NULL;
    j->text = j->lang = NULL;
    if (j->task.cancelled) { /* the server is stopping */
        buf_free(&j->out);
        http_add_header(r, "Retry-After", "1");
        api_error(r, 503, "The service is temporarily unavailable; please try again.");
        return;
    }
    if (j->rc != 0) {
        buf_free(&j->out);
        render_failed(r);
        return;
    }
    export_cache_put(app->exports, j->key, j->out.data ? j->out.data : "", j->out.len);
    buf_free(http_resp(r));
    *http_resp(r) = j->out; /* the rendered file is the answer, not copied */
    file_headers(r, j->name, j->fmt, j->etag);
    http_respond(r, 200);
}

const char *api_export_lang(const char *language)
{
    return language && api_language_tag(language) ? language : NULL;
}

void api_export(app_t *app, http_req_t *r, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    record_t rec;
    arena_t *ra = rec_arena_new();
    int rc = records_get(app->records, c, KIND_DOC, http_user_id(r), id, NULL, NULL, ra, &rec);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        goto out;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        goto out;
    }
    rec.name = arena_strdup(http_arena(r), rec.name ? rec.name : ""); /* for the headers */

    kvlist_t q;
    api_query(r, &q);
    verrs_t v;
    verrs_init(&v, http_arena(r));
    export_format_t fmt = EXPORT_MD;
    const char *s = param_value(&v, &q, "format", "format");
    if (s && *s && !export_format_parse(s, &fmt))
        verrs_add(&v, "format", "The selected format is invalid.");
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        goto out;
    }
    /* during a regeneration (§16) the latest finished revision is exported */
    if (rec.state != REC_COMPLETED && !(rec.revision > 0 && rec.result)) {
        api_error(r, 409, "The document has no result yet.");
        goto out;
    }

    /* the record is copied out of the store: the GET's read session (a SQLite read
     * transaction) need not stay open while the file is made */
    store_read_end(c);
    const char *text = rec.result ? rec.result : "";
    const char *lang = api_export_lang(rec.language);
    char etag[96], key[128];
    snprintf(etag, sizeof(etag), "\"%lld-%lld-%s\"", (long long)id, (long long)rec.updated_us,
             export_format_name(fmt));
    snprintf(key, sizeof(key), "%lld/%s", (long long)http_user_id(r), etag);
    buf_reset(http_resp(r));
    /* the tag as the answer would carry it in the coding the client takes (§26) */
    if (http_if_none_match(r, etag, export_content_type(fmt))) {
        file_headers(r, rec.name, fmt, etag);
        http_set_content_type(r, NULL);
        http_respond(r, 304);
        goto out;
    }
    bool heavy = fmt == EXPORT_HTML || fmt == EXPORT_DOCX || fmt == EXPORT_PDF;
    if (!heavy || !app->exports) {
        if (export_render(fmt, rec.name, lang, text, strlen(text), http_resp(r)) != 0) {
            render_failed(r);
            goto out;
        }
        file_headers(r, rec.name, fmt, etag);
        http_respond(r, 200);
        goto out;
    }
    if (export_cache_get(app->exports, key, http_resp(r))) {
        file_headers(r, rec.name, fmt, etag);
        http_respond(r, 200);
        goto out;
    }
    int busy = export_pool_reserve(app->exports, http_user_id(r));
    if (busy) {
        http_add_header(r, "Retry-After", "1");
        api_error(r, busy, busy == 429 ? "Too Many Attempts."
                                       : "Too many exports at once; please try again.");
        goto out;
    }
    export_job_t *j = arena_alloc(http_arena(r), sizeof(*j));
    memset(j, 0, sizeof(*j));
    j->task.user = http_user_id(r);
    j->task.run = job_run;
    j->task.done = job_done;
    j->task.arg = j;
    j->r = r;
    j->fmt = fmt;
    j->name = rec.name;
    j->lang = lang; /* in rec_arena, as the text */
    j->text = text;
    j->rec_arena = ra; /* job_resumed frees it */
    j->key = arena_strdup(http_arena(r), key);
    j->etag = arena_strdup(http_arena(r), etag);
    buf_init(&j->out);
    http_suspend(r, job_suspended, job_resumed, j);
    return;
out:
    rec_arena_free(ra);
}
