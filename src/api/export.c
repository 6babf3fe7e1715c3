/* export.c — GET /documents/{id}/export?format=F (API.md §12): the document as a
 * file. The record is read through the records service, as the show route reads it
 * (by user and id: another user's document is a 404); then the format is checked (422 naming `format`), then
 * the state (409 until the document is completed). The file itself is made by the
 * export module (src/export/), here only wrapped in its headers. */
#include "api/api.h"

#include "export/export.h"

#include <string.h>

void api_export(app_t *app, http_req_t *r, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    record_t rec;
    int rc = records_get(app->records, c, KIND_DOC, r->user_id, id, NULL, NULL, &r->arena, &rec);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }

    kvlist_t q;
    api_query(r, &q);
    verrs_t v;
    verrs_init(&v, &r->arena);
    export_format_t fmt = EXPORT_MD;
    const char *s = param_value(&v, &q, "format", "format");
    if (s && *s && !export_format_parse(s, &fmt))
        verrs_add(&v, "format", "The selected format is invalid.");
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    /* during a regeneration (§16) the latest finished revision is exported */
    if (rec.state != REC_COMPLETED && !(rec.revision > 0 && rec.result)) {
        api_error(r, 409, "The document has no result yet.");
        return;
    }

    /* the record is copied into the request's arena: the GET's read session (a SQLite
     * read transaction) need not stay open while the file is made */
    store_read_end(c);
    const char *text = rec.result ? rec.result : "";
    buf_reset(&r->resp);
    if (export_render(fmt, rec.name, text, strlen(text), &r->resp) != 0) {
        buf_reset(&r->resp);
        api_error(r, 500, "The document could not be exported.");
        return;
    }
    buf_t disp;
    buf_init(&disp);
    export_disposition(&disp, rec.name, fmt);
    http_add_header(r, "Content-Disposition", disp.data);
    buf_free(&disp);
    http_add_header(r, "Cache-Control", "private, no-cache");
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    r->content_type = export_content_type(fmt);
    http_respond(r, 200);
}
