/* templates_api.c — the templates routes (API.md §14, §18): GET /templates (the 52
 * builtin ones of gen/templates.h, then the user's own), POST /templates, and GET,
 * PATCH, DELETE /templates/{id}; and what the document routes need of them: checking a
 * template_id (api_template_check) and the name a document shows (api_template_name).
 *
 * A user's own template is theirs alone: another user's id answers as a missing one
 * (404 here, 422 as a template_id). Deleting one keeps its row, marked deleted, so its
 * documents keep showing its name; it is gone for everything else. */
#include "api/api_int.h"

#include "gen/templates.h"

#include <string.h>

#define NAME_MAX_CPS 100
#define DESCRIPTION_MAX_CPS 255
#define INSTRUCTION_MAX_CPS 8000
/* How many templates (not deleted) a user may keep: GET /templates lists them all. */
#define TEMPLATES_PER_USER 1000

static void builtin_json(jw_t *w, const template_t *t)
{
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, t->id);
    jw_key(w, "name");
    jw_str(w, t->name);
    jw_key(w, "description");
    jw_str(w, t->description);
    jw_key(w, "custom");
    jw_bool(w, false);
    jw_obj_end(w);
}

/* with_instruction: a template shown alone; a list shows none (API.md §24). */
static void custom_json(jw_t *w, const custom_template_t *t, bool with_instruction)
{
    char ts[32];
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, t->id);
    jw_key(w, "name");
    jw_str(w, t->name);
    jw_key(w, "description");
    jw_str(w, t->description);
    if (with_instruction) {
        jw_key(w, "instruction");
        jw_str(w, t->instruction ? t->instruction : "");
    }
    jw_key(w, "custom");
    jw_bool(w, true);
    jw_key(w, "created_at");
    fmt_timestamp(t->created_us, ts);
    jw_str(w, ts);
    jw_key(w, "updated_at");
    fmt_timestamp(t->updated_us, ts);
    jw_str(w, ts);
    jw_obj_end(w);
}

/* {"data":<one template>,"status":status} */
static void respond_one(http_req_t *r, int status, const template_t *b,
                        const custom_template_t *c)
{
    jw_t w;
    api_data_begin(r, &w);
    if (b)
        builtin_json(&w, b);
    else
        custom_json(&w, c, true);
    api_data_end(r, &w, status);
}

/* A template's text field: required on a create; on a change optional, but not empty
 * or blank when sent. */
static const char *text_field(verrs_t *v, const kvlist_t *f, const char *key, bool required,
                              long long max)
{
    if (!required && !kv_get(f, key))
        return NULL; /* a change that does not send it leaves it as it is */
    return field_text(v, f, key, key, true, max, NULL);
}

/* ---- GET and POST /templates ---- */

static void templates_list(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    custom_template_t *own;
    size_t n;
    int rc = store_template_list(c, http_user_id(r), http_arena(r), &own, &n);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    buf_reset(http_resp(r));
    jw_t w;
    jw_init(&w, http_resp(r));
    jw_obj_begin(&w);
    jw_key(&w, "data");
    jw_arr_begin(&w);
    for (int id = 1; id <= TEMPLATE_COUNT; id++)
        builtin_json(&w, template_get(id));
    for (size_t i = 0; i < n; i++)
        custom_json(&w, &own[i], false);
    jw_arr_end(&w);
    jw_key(&w, "status");
    jw_int(&w, 200);
    jw_obj_end(&w);
    http_respond(r, 200);
}

static void templates_create(app_t *app, http_req_t *r)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    const char *name = text_field(&v, &f, "name", true, NAME_MAX_CPS);
    const char *description = text_field(&v, &f, "description", true, DESCRIPTION_MAX_CPS);
    const char *instruction = text_field(&v, &f, "instruction", true, INSTRUCTION_MAX_CPS);
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    custom_template_t t;
    int rc = store_template_create(c, http_user_id(r), name, description, instruction,
                                   TEMPLATES_PER_USER, http_arena(r), &t);
    if (rc == STORE_CONFLICT) {
        verrs_add(&v, "templates", "A user may keep at most %d templates of their own.",
                  TEMPLATES_PER_USER);
        api_validation_error(r, &v);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    http_add_header(r, "Location",
                    api_url(app, http_arena(r), "/api/v1/templates/%lld", (long long)t.id));
    respond_one(r, 201, NULL, &t);
}

void api_templates(app_t *app, http_req_t *r)
{
    if (strcmp(http_method(r), "POST") == 0)
        templates_create(app, r);
    else
        templates_list(app, r);
}

/* ---- GET, PATCH, DELETE /templates/{id} ---- */

static void template_update(app_t *app, http_req_t *r, int64_t id)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    template_patch_t p = {
        .name = text_field(&v, &f, "name", false, NAME_MAX_CPS),
        .description = text_field(&v, &f, "description", false, DESCRIPTION_MAX_CPS),
        .instruction = text_field(&v, &f, "instruction", false, INSTRUCTION_MAX_CPS),
    };
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    /* another user's or a missing template is a 404 before any 422 about its fields */
    custom_template_t t;
    int rc = verrs_any(&v) ? store_template_get(c, http_user_id(r), id, false, http_arena(r), &t)
                           : store_template_update(c, http_user_id(r), id, &p, http_arena(r), &t);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else if (verrs_any(&v))
        api_validation_error(r, &v);
    else
        respond_one(r, 200, NULL, &t);
}

void api_template(app_t *app, http_req_t *r, int64_t id)
{
    if (id <= TEMPLATE_COUNT) { /* the router lets only GET through for the 52 */
        respond_one(r, 200, template_get((int)id), NULL);
        return;
    }
    if (strcmp(http_method(r), "PATCH") == 0) {
        template_update(app, r, id);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    bool del = strcmp(http_method(r), "DELETE") == 0;
    custom_template_t t;
    int rc = del ? store_template_delete(c, http_user_id(r), id)
                 : store_template_get(c, http_user_id(r), id, false, http_arena(r), &t);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else if (!del)
        respond_one(r, 200, NULL, &t);
    else {
        buf_reset(http_resp(r));
        buf_printf(http_resp(r),
                   "{\"id\":%lld,\"object\":\"template\",\"deleted\":true,\"status\":200}",
                   (long long)id);
        http_respond(r, 200);
    }
}

/* ---- what the document routes need ---- */

int api_template_check(app_t *app, http_req_t *r, verrs_t *v, record_t *rec)
{
    if (rec->template_id >= 1 && rec->template_id <= TEMPLATE_COUNT)
        return STORE_OK;
    custom_template_t t;
    int rc = STORE_NOTFOUND;
    if (rec->template_id >= CUSTOM_TEMPLATE_MIN_ID) {
        char err[256];
        store_conn_t *c = store_conn(app->store, err, sizeof(err));
        rc = c ? store_template_get(c, http_user_id(r), rec->template_id, false, http_arena(r), &t)
               : STORE_UNAVAILABLE;
    }
    if (rc == STORE_NOTFOUND) {
        verrs_add(v, "template_id", "The selected template id is invalid.");
        return STORE_OK;
    }
    if (rc == STORE_OK)
        rec->template_name = t.name;
    return rc;
}

const char *api_template_name(app_t *app, const record_t *rec, arena_t *a)
{
    const template_t *b = template_get(rec->template_id);
    if (b)
        return b->name;
    if (rec->template_name)
        return rec->template_name;
    char err[256];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    custom_template_t t;
    if (!c || store_template_get(c, rec->user_id, rec->template_id, true, a, &t) != STORE_OK)
        return NULL;
    return t.name;
}

void api_template_names(app_t *app, record_t *items, size_t n, arena_t *a)
{
    /* a page holds at most 100 records: a linear memo of the ids seen is enough */
    int ids[100];
    const char *names[100];
    size_t known = 0;
    for (size_t i = 0; i < n; i++) {
        record_t *rec = &items[i];
        if (rec->kind != KIND_DOC || rec->probed || rec->template_id <= TEMPLATE_COUNT ||
            rec->template_name)
            continue;
        size_t k = 0;
        while (k < known && ids[k] != rec->template_id)
            k++;
        if (k == known) {
            const char *name = api_template_name(app, rec, a);
            if (!name || known == ARRAY_LEN(ids))
                continue;
            ids[known] = rec->template_id;
            names[known++] = name;
        }
        rec->template_name = names[k];
    }
}
