/* drafts.c — PUT, GET and DELETE /documents/{id}/draft (API.md §24): one draft of a
 * document's text kept beside it, without a revision. `base_revision` (default: the
 * document's current revision) must be one of its revisions (1 to the current one; 0
 * for a document that has none yet), else 422 naming it. `stale`: the document's
 * revision is past the draft's base. */
#include "api/api_int.h"

#include <string.h>

static void answer(http_req_t *r, const draft_t *d)
{
    char ts[32];
    jw_t w;
    api_data_begin(r, &w);
    jw_obj_begin(&w);
    jw_key(&w, "result");
    jw_str(&w, d->result);
    jw_key(&w, "base_revision");
    jw_int(&w, d->base_revision);
    jw_key(&w, "updated_at");
    fmt_timestamp(d->updated_us, ts);
    jw_str(&w, ts);
    jw_key(&w, "stale");
    jw_bool(&w, d->revision > d->base_revision);
    jw_obj_end(&w);
    api_data_end(r, &w, 200);
}

static void put(app_t *app, http_req_t *r, int64_t id)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    const char *result = field_text(&v, &f, "result", "result", false, 0, NULL);
    if (!result && !verrs_any(&v))
        verrs_add(&v, "result", "The result field is required.");
    int64_t base = -1;
    bool present;
    const char *b = field_text(&v, &f, "base_revision", "base revision", false, 20, &present);
    if (b && !(parse_uint(b, &base) && base >= 0)) {
        verrs_add(&v, "base_revision", "The base revision field must be a revision number.");
        base = -1;
    }
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    draft_t d = {0};
    int rc = store_draft_put(c, http_user_id(r), id, result, base, http_arena(r), &d);
    if (rc == STORE_STALE) {
        verrs_add(&v, "base_revision", "The base revision must be a revision of the document.");
        api_validation_error(r, &v);
    } else if (rc == STORE_NOTFOUND) {
        api_not_found(r);
    } else if (rc != STORE_OK) {
        api_store_error(r, rc);
    } else {
        answer(r, &d);
    }
}

void api_draft(app_t *app, http_req_t *r, int64_t id)
{
    const char *m = http_method(r);
    if (strcmp(m, "PUT") == 0) {
        put(app, r, id);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (strcmp(m, "DELETE") == 0) {
        int rc = store_draft_delete(c, http_user_id(r), id);
        if (rc == STORE_NOTFOUND) {
            api_not_found(r);
        } else if (rc != STORE_OK) {
            api_store_error(r, rc);
        } else {
            buf_reset(http_resp(r));
            buf_printf(http_resp(r),
                       "{\"id\":%lld,\"object\":\"draft\",\"deleted\":true,\"status\":200}",
                       (long long)id);
            http_respond(r, 200);
        }
        return;
    }
    draft_t d = {0};
    int rc = store_draft_get(c, http_user_id(r), id, http_arena(r), &d);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        answer(r, &d);
}
