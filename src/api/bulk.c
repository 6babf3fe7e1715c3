/* bulk.c — POST /documents/bulk and /images/bulk (API.md §23): one action over up to
 * 100 of the user's records. favorite, unfavorite, tag and untag run in one store
 * transaction (all or nothing); so does delete, through the records service (the one
 * owner of removal: pictures and events follow the commit). An id that is not
 * the user's is `missing` and untouched. */
#include "api/api_int.h"

#include "api/export_pool.h"
#include "export/export.h"
#include "records/records.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define BULK_MAX 100
#define BULK_RAW_MAX 1000 /* ids given, duplicates included */

static int by_id(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* One id: a positive decimal integer. */
static bool parse_one(const char *s, size_t n, int64_t *out)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0 || n > 18)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return v > 0;
}

/* The `ids` field, ascending and distinct; false with a 422 message added to v. */
static bool ids_field(verrs_t *v, const kvlist_t *f, arena_t *a, int64_t **out, size_t *n)
{
    const kv_t *kv = kv_get(f, "ids");
    int64_t *ids = arena_alloc(a, (BULK_RAW_MAX + 1) * sizeof(*ids));
    size_t m = 0;
    bool bad = false;
    if (!kv) {
        verrs_add(v, "ids", "The ids field is required.");
        return false;
    }
    if ((int)kv->status == KV_ARRAY) {
        json_t *arr = json_loads(kv->val, 0, NULL);
        size_t i;
        json_t *el;
        json_array_foreach(arr, i, el)
        {
            int64_t id = 0;
            if (json_is_integer(el) && json_integer_value(el) > 0)
                id = json_integer_value(el);
            else if (!json_is_string(el) ||
                     !parse_one(json_string_value(el), json_string_length(el), &id))
                bad = true;
            if (!bad && m <= BULK_RAW_MAX)
                ids[m++] = id;
        }
        json_decref(arr);
    } else if (kv->status != KV_OK) {
        bad = true;
    } else {
        const char *s = kv->val, *end = kv->val + kv->val_len;
        while (s <= end && !bad) {
            const char *c = memchr(s, ',', (size_t)(end - s));
            if (!c)
                c = end;
            int64_t id;
            if (!parse_one(s, (size_t)(c - s), &id))
                bad = true;
            else if (m <= BULK_RAW_MAX)
                ids[m++] = id;
            s = c + 1;
        }
    }
    if (bad) {
        verrs_add(v, "ids", "The ids field must be a list of record ids.");
        return false;
    }
    qsort(ids, m, sizeof(*ids), by_id);
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (k == 0 || ids[k - 1] != ids[i])
            ids[k++] = ids[i];
    if (k == 0 || k > BULK_MAX || m > BULK_RAW_MAX) {
        verrs_add(v, "ids", "The ids field must have 1 to %d ids.", BULK_MAX);
        return false;
    }
    *out = ids;
    *n = k;
    return true;
}

bool api_bulk_read_allowed(http_req_t *r, rec_kind_t kind)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return false;
    const kv_t *kv = kv_get(&f, "action");
    if (kind == KIND_DOC && kv && kv->status == KV_OK && strcmp(kv->val, "export") == 0)
        return true;
    api_error(r, 403, "This key may only read.");
    return false;
}

static void answer(http_req_t *r, const int64_t *ids, size_t n, const int64_t *done,
                   size_t ndone)
{
    jw_t w;
    api_data_begin(r, &w);
    jw_obj_begin(&w);
    jw_key(&w, "done");
    jw_arr_begin(&w);
    for (size_t i = 0; i < ndone; i++)
        jw_int(&w, done[i]);
    jw_arr_end(&w);
    jw_key(&w, "missing");
    jw_arr_begin(&w);
    for (size_t i = 0, j = 0; i < n; i++) {
        while (j < ndone && done[j] < ids[i])
            j++;
        if (j >= ndone || done[j] != ids[i])
            jw_int(&w, ids[i]);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    api_data_end(r, &w, 200);
}

/* ---- action=export: a ZIP of the documents (made on the export pool when there is
 * one, while the request is suspended, as a single export is: api/export.c) ---- */

typedef struct {
    export_task_t task;
    http_req_t *r;
    export_format_t fmt;
    const char **names, **langs, **texts;
    size_t n;
    arena_t texts_arena; /* the documents, given back once the archive is made */
    buf_t out;
    int rc;
} zip_job_t;

static void zip_headers(http_req_t *r)
{
    http_add_header(r, "Content-Disposition", "attachment; filename=\"documents.zip\"");
    http_add_header(r, "Cache-Control", "private, no-cache");
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    http_set_content_type(r, "application/zip");
}

static void zip_run(export_task_t *t)
{
    zip_job_t *j = t->arg;
    j->rc = export_zip(j->fmt, j->names, j->langs, j->texts, j->n, &j->out);
}

static void zip_done(export_task_t *t)
{
    zip_job_t *j = t->arg;
    http_resume(j->r);
}

static void zip_suspended(http_req_t *r)
{
    app_t *app = http_app(r);
    zip_job_t *j = http_wait(r);
    export_pool_submit(app->exports, &j->task);
}

static void zip_answer(http_req_t *r, zip_job_t *j)
{
    arena_free(&j->texts_arena);
    if (j->task.cancelled) { /* the server is stopping */
        buf_free(&j->out);
        http_add_header(r, "Retry-After", "1");
        api_error(r, 503, "The service is temporarily unavailable; please try again.");
        return;
    }
    if (j->rc != 0) {
        buf_free(&j->out);
        api_error(r, 500, "The documents could not be exported.");
        return;
    }
    buf_free(http_resp(r));
    *http_resp(r) = j->out; /* the archive is the answer, not copied */
    zip_headers(r);
    http_respond(r, 200);
}

static void zip_resumed(void *appv, http_req_t *r)
{
    zip_answer(r, http_wait(r));
}

static void bulk_export(app_t *app, http_req_t *r, store_conn_t *c, const int64_t *ids, size_t n,
                        const kvlist_t *f)
{
    verrs_t v;
    verrs_init(&v, http_arena(r));
    export_format_t fmt = EXPORT_MD;
    const char *s = param_value(&v, f, "format", "format");
    if (s && *s && !export_format_parse(s, &fmt))
        verrs_add(&v, "format", "The selected format is invalid.");
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    zip_job_t *j = arena_alloc(http_arena(r), sizeof(*j));
    memset(j, 0, sizeof(*j));
    arena_init(&j->texts_arena);
    j->task.arg = j;
    j->fmt = fmt;
    j->n = n;
    j->names = arena_alloc(http_arena(r), n * sizeof(*j->names));
    j->langs = arena_alloc(http_arena(r), n * sizeof(*j->langs));
    j->texts = arena_alloc(http_arena(r), n * sizeof(*j->texts));
    for (size_t i = 0; i < n; i++) {
        record_t rec;
        int rc = records_get(app->records, c, KIND_DOC, http_user_id(r), ids[i], NULL, NULL,
                             &j->texts_arena, &rec);
        if (rc == STORE_NOTFOUND ||
            (rc == STORE_OK && rec.state != REC_COMPLETED && !(rec.revision > 0 && rec.result))) {
            verrs_add(&v, "ids", "Every id must be one of your completed documents.");
            api_validation_error(r, &v);
            arena_free(&j->texts_arena);
            return;
        }
        if (rc != STORE_OK) {
            api_store_error(r, rc);
            arena_free(&j->texts_arena);
            return;
        }
        j->names[i] = arena_strdup(http_arena(r), rec.name ? rec.name : "");
        j->langs[i] = api_export_lang(rec.language); /* in texts_arena, as the text */
        j->texts[i] = rec.result ? rec.result : "";
    }
    buf_init(&j->out);
    buf_reset(http_resp(r));
    if (!app->exports) {
        zip_run(&j->task);
        zip_answer(r, j);
        return;
    }
    int busy = export_pool_reserve(app->exports, http_user_id(r));
    if (busy) {
        arena_free(&j->texts_arena);
        http_add_header(r, "Retry-After", "1");
        api_error(r, busy, busy == 429 ? "Too Many Attempts."
                                       : "Too many exports at once; please try again.");
        return;
    }
    j->task.user = http_user_id(r);
    j->task.run = zip_run;
    j->task.done = zip_done;
    j->task.arg = j;
    j->r = r;
    http_suspend(r, zip_suspended, zip_resumed, j);
}

void api_bulk(app_t *app, http_req_t *r, rec_kind_t kind)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    int64_t *ids = NULL;
    size_t n = 0;
    ids_field(&v, &f, http_arena(r), &ids, &n);
    const char *action = field_text(&v, &f, "action", "action", true, 32, NULL);
    static const char *const names[] = {"favorite", "unfavorite", "tag", "untag", "delete",
                                        "export"};
    int act = -1;
    for (int i = 0; action && i < (int)ARRAY_LEN(names); i++)
        if (strcmp(action, names[i]) == 0)
            act = i;
    if (action && (act < 0 || (act == 5 && kind != KIND_DOC)))
        verrs_add(&v, "action", "The selected action is invalid.");
    const char **tags = NULL;
    int ntags = 0;
    if (act == BULK_TAG || act == BULK_UNTAG) {
        if (!api_tags_field(&v, &f, "tags", http_arena(r), &tags, &ntags))
            verrs_add(&v, "tags", "The tags field is required.");
        else if (ntags == 0 && !verrs_any(&v))
            verrs_add(&v, "tags", "The tags field must hold at least one tag.");
    }
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (act == 5) {
        bulk_export(app, r, c, ids, n, &f);
        return;
    }
    int64_t *done = NULL;
    size_t ndone = 0;
    int rc;
    if (act == 4) { /* delete: through the records service, in one transaction */
        rc = records_delete_many(app->records, c, kind, http_user_id(r), ids, n, http_arena(r),
                                 &done, &ndone);
    } else {
        if (ntags > 0 && (rc = api_tags_spell(c, http_user_id(r), tags, ntags,
                                              http_arena(r))) != STORE_OK) {
            api_store_error(r, rc);
            return;
        }
        rc = store_record_bulk(c, kind, http_user_id(r), ids, n, (bulk_action_t)act, tags,
                               ntags, http_arena(r), &done, &ndone);
    }
    if (rc == STORE_CONFLICT) {
        verrs_add(&v, "tags", "A record may carry at most %d tags.", STORE_MAX_TAGS);
        api_validation_error(r, &v);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    answer(r, ids, n, done, ndone);
}
