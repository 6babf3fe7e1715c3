/* revisions.c — the revisions of documents and images (API.md §16): the list (a page
 * envelope, per_page and page only, newest first), one revision, and restore. The
 * regenerate route is a create (records.c). */
#include "api/api_int.h"

#include "records/records.h"

#include <stdio.h>
#include <string.h>

#define PAGE_CAP 1000000000000LL

/* One revision object (see API.md §16). */
static void revision_json(app_t *app, jw_t *w, const revision_t *rv)
{
    const record_t *x = &rv->rec;
    char ts[32];
    jw_obj_begin(w);
    jw_key(w, "number");
    jw_int(w, rv->number);
    jw_key(w, "source");
    jw_str(w, rv->source);
    jw_key(w, "action");
    jw_str(w, rv->action);
    jw_key(w, "created_at");
    fmt_timestamp(rv->created_us, ts);
    jw_str(w, ts);
    if (x->kind == KIND_DOC) {
        jw_key(w, "prompt");
        jw_str(w, x->prompt);
        jw_key(w, "creativity");
        jw_num(w, x->creativity);
        jw_key(w, "template_id");
        jw_int(w, x->template_id);
        jw_key(w, "tone");
        jw_str(w, x->tone);
        jw_key(w, "language");
        jw_str(w, x->language);
        jw_key(w, "length");
        jw_str(w, x->length);
        jw_key(w, "result");
        jw_str(w, x->result);
        jw_key(w, "words");
        jw_int(w, x->words);
        jw_key(w, "usage");
        if (x->prompt_tokens >= 0 || x->completion_tokens >= 0) {
            jw_obj_begin(w);
            jw_key(w, "prompt_tokens");
            jw_int(w, x->prompt_tokens >= 0 ? x->prompt_tokens : 0);
            jw_key(w, "completion_tokens");
            jw_int(w, x->completion_tokens >= 0 ? x->completion_tokens : 0);
            jw_obj_end(w);
        } else {
            jw_null(w);
        }
        jw_key(w, "truncated");
        jw_bool(w, x->truncated);
    } else {
        jw_key(w, "description");
        jw_str(w, x->description);
        jw_key(w, "resolution");
        jw_str(w, x->resolution);
        jw_key(w, "style");
        jw_str(w, x->style);
        jw_key(w, "url");
        if (x->media_key) {
            char *u = NULL;
            buf_t b;
            buf_init(&b);
            api_media_url(&b, app, x->media_key);
            u = b.data;
            jw_str(w, u);
            buf_free(&b);
        } else {
            jw_null(w);
        }
    }
    jw_obj_end(w);
}

static void page_link(jw_t *w, const char *base, http_req_t *r, int64_t page, bool present)
{
    if (!present) {
        jw_null(w);
        return;
    }
    buf_t u;
    buf_init(&u);
    api_page_url_at(&u, base, r, page);
    jw_str(w, u.data);
    buf_free(&u);
}

void api_revisions_list(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    kvlist_t q;
    api_query(r, &q);
    verrs_t v;
    verrs_init(&v, http_arena(r));
    int per_page = 10;
    int64_t page = 1, n;
    const char *s;
    if ((s = param_value(&v, &q, "per_page", "per page")) && parse_uint(s, &n) &&
        (n == 10 || n == 25 || n == 50 || n == 100))
        per_page = (int)n;
    if ((s = param_value(&v, &q, "page", "page")) && parse_uint(s, &n) && n >= 1)
        page = n;
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    revision_t *items;
    size_t count;
    int64_t total;
    int rc = records_revisions(app->records, c, kind, http_user_id(r), id, per_page,
                               page > PAGE_CAP ? PAGE_CAP : page, http_arena(r), &items, &count,
                               &total);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    const char *base = api_url(app, http_arena(r), "/api/v1/%s/%lld/revisions",
                               api_kind_path(kind), (long long)id);
    int64_t last = total ? (total + per_page - 1) / per_page : 1;
    buf_reset(http_resp(r));
    jw_t w;
    jw_init(&w, http_resp(r));
    jw_obj_begin(&w);
    jw_key(&w, "data");
    jw_arr_begin(&w);
    for (size_t i = 0; i < count; i++)
        revision_json(app, &w, &items[i]);
    jw_arr_end(&w);
    jw_key(&w, "links");
    jw_obj_begin(&w);
    jw_key(&w, "first");
    page_link(&w, base, r, 1, true);
    jw_key(&w, "last");
    page_link(&w, base, r, last, true);
    jw_key(&w, "prev");
    page_link(&w, base, r, page - 1, page > 1);
    jw_key(&w, "next");
    page_link(&w, base, r, page + 1, page < last);
    jw_obj_end(&w);
    jw_key(&w, "meta");
    jw_obj_begin(&w);
    jw_key(&w, "current_page");
    jw_int(&w, page);
    jw_key(&w, "from");
    if (count)
        jw_int(&w, (page - 1) * per_page + 1);
    else
        jw_null(&w);
    jw_key(&w, "last_page");
    jw_int(&w, last);
    jw_key(&w, "path");
    jw_str(&w, base);
    jw_key(&w, "per_page");
    jw_int(&w, per_page);
    jw_key(&w, "to");
    if (count)
        jw_int(&w, (page - 1) * per_page + (int64_t)count);
    else
        jw_null(&w);
    jw_key(&w, "total");
    jw_int(&w, total);
    jw_obj_end(&w);
    jw_key(&w, "status");
    jw_int(&w, 200);
    jw_obj_end(&w);
    http_respond(r, 200);
}

void api_revision_show(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id, int64_t n)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    revision_t rv;
    int rc = records_revision(app->records, c, kind, http_user_id(r), id, n, http_arena(r), &rv);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    api_data_begin(r, &w);
    revision_json(app, &w, &rv);
    api_data_end(r, &w, 200);
}

void api_revision_restore(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id, int64_t n)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (kind == KIND_IMG && api_storage_full(app, r))
        return; /* the restored revision gets a copy of its picture */
    record_t rec;
    int rc = records_restore(app->records, c, kind, http_user_id(r), id, n, http_arena(r), &rec);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        api_respond_record(app, r, 200, &rec);
}
