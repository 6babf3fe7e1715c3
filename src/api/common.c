/* common.c — what every API handler shares: errors in the contract's shape (§6),
 * body and query decoding (§1), field validation, and the JSON of a record (§3). */
#include "api/api_int.h"

#include "core/log.h"
#include "gen/templates.h"
#include "obs/metrics.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define KV_NOT_SCALAR 100 /* a JSON field that is an array or an object */

void api_error(http_req_t *r, int status, const char *msg)
{
    buf_reset(http_resp(r));
    buf_puts(http_resp(r), "{\"message\":");
    json_escape(http_resp(r), msg, strlen(msg));
    buf_printf(http_resp(r), ",\"status\":%d}", status);
    http_respond(r, status);
}

void api_not_found(http_req_t *r)
{
    api_error(r, 404, "Resource not found.");
}

void api_data_begin(http_req_t *r, jw_t *w)
{
    buf_reset(http_resp(r));
    jw_init(w, http_resp(r));
    jw_obj_begin(w);
    jw_key(w, "data");
}

void api_data_end(http_req_t *r, jw_t *w, int status)
{
    jw_key(w, "status");
    jw_int(w, status);
    jw_obj_end(w);
    http_respond(r, status);
}

void api_store_error(http_req_t *r, int rc)
{
    metrics_store_error(rc == STORE_UNAVAILABLE);
    if (rc == STORE_UNAVAILABLE) {
        http_add_header(r, "Retry-After", "1");
        api_error(r, 503, "The service is temporarily unavailable; please try again.");
    } else {
        log_error("req=%s: store: %s", http_req_id(r), store_rc_name(rc));
        api_error(r, 500, "Server error.");
    }
}

int api_failure_status(rec_failure_t failure, const char *error, const char **message)
{
    if (failure == RF_STORAGE_FULL || failure == RF_UNSTORED) {
        *message = "Storage is full; please try again later.";
        return 503;
    }
    if (failure == RF_CHANGED) { /* API.md §24 */
        *message = STORE_CHANGED_ERROR;
        return 409;
    }
    *message = error ? error : "Generation failed.";
    return 502;
}

bool api_storage_full(app_t *app, http_req_t *r)
{
    if (!media_space_low(app->media, (uint64_t)app->cfg->min_free_mb << 20))
        return false;
    log_warn("req=%s: the data directory has less than %ld MiB free: create refused",
             http_req_id(r), app->cfg->min_free_mb);
    http_add_header(r, "Retry-After", "60");
    api_error(r, 503, "Storage is full; please try again later.");
    return true;
}

api_state_t *api_state(http_req_t *r)
{
    api_state_t *st = http_app_state(r);
    if (!st) {
        st = arena_alloc(http_arena(r), sizeof(*st));
        memset(st, 0, sizeof(*st));
        http_set_app_state(r, st);
    }
    return st;
}

store_conn_t *api_conn(app_t *app, http_req_t *r)
{
    char err[256];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    if (!c) {
        log_error("req=%s: no database connection", http_req_id(r));
        api_store_error(r, STORE_UNAVAILABLE);
    }
    return c;
}

void verrs_init(verrs_t *v, arena_t *a)
{
    v->head = v->tail = NULL;
    v->a = a;
}

void verrs_add(verrs_t *v, const char *field, const char *fmt, ...)
{
    verr_t *e = arena_alloc(v->a, sizeof(*e));
    e->field = field;
    va_list ap;
    va_start(ap, fmt);
    buf_t b;
    buf_init(&b);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    e->msg = arena_strdup(v->a, buf_cstr(&b));
    buf_free(&b);
    if (v->tail)
        v->tail->next = e;
    else
        v->head = e;
    v->tail = e;
}

bool verrs_any(const verrs_t *v)
{
    return v->head != NULL;
}

void api_validation_error(http_req_t *r, const verrs_t *v)
{
    buf_reset(http_resp(r));
    jw_t w;
    jw_init(&w, http_resp(r));
    jw_obj_begin(&w);
    jw_key(&w, "message");
    jw_obj_begin(&w);
    /* group messages by field, fields in the order of their first error */
    for (const verr_t *e = v->head; e; e = e->next) {
        bool seen = false;
        for (const verr_t *p = v->head; p != e; p = p->next)
            if (strcmp(p->field, e->field) == 0)
                seen = true;
        if (seen)
            continue;
        jw_key(&w, e->field);
        jw_arr_begin(&w);
        for (const verr_t *q = e; q; q = q->next)
            if (strcmp(q->field, e->field) == 0)
                jw_str(&w, q->msg);
        jw_arr_end(&w);
    }
    jw_obj_end(&w);
    jw_key(&w, "status");
    jw_int(&w, 422);
    jw_obj_end(&w);
    http_respond(r, 422);
}

/* The media type of a Content-Type value, without parameters, lower case. */
static void media_type(const char *ct, char *out, size_t outlen)
{
    size_t o = 0;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    for (; *ct && *ct != ';' && o + 1 < outlen; ct++)
        out[o++] = (char)((*ct >= 'A' && *ct <= 'Z') ? *ct + 32 : *ct);
    while (o && (out[o - 1] == ' ' || out[o - 1] == '\t'))
        o--;
    out[o] = '\0';
}

static int json_fields(http_req_t *r, kvlist_t *out)
{
    json_error_t jerr;
    size_t len;
    const char *body = http_body(r, &len);
    json_t *root = json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
    verrs_t v;
    verrs_init(&v, http_arena(r));
    if (!root || !json_is_object(root)) {
        verrs_add(&v, "body", root ? "The body must be a JSON object." : "The body is not valid JSON.");
        json_decref(root);
        api_validation_error(r, &v);
        return -1;
    }
    size_t n = json_object_size(root), i = 0;
    out->items = arena_alloc(http_arena(r), (n ? n : 1) * sizeof(kv_t));
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        kv_t *kv = &out->items[i];
        kv->key = arena_strdup(http_arena(r), key);
        kv->status = KV_OK;
        switch (json_typeof(val)) {
        case JSON_STRING:
            kv->val = arena_strndup(http_arena(r), json_string_value(val), json_string_length(val));
            kv->val_len = json_string_length(val);
            break;
        case JSON_INTEGER:
            kv->val = arena_printf(http_arena(r), "%lld", (long long)json_integer_value(val));
            break;
        case JSON_REAL:
            kv->val = arena_printf(http_arena(r), "%.17g", json_real_value(val));
            /* prefer the shortest form that reads back the same (0.25, not 0.2500...) */
            for (int prec = 1; prec <= 17; prec++) {
                char tmp[40];
                snprintf(tmp, sizeof(tmp), "%.*g", prec, json_real_value(val));
                if (strtod(tmp, NULL) == json_real_value(val)) {
                    kv->val = arena_strdup(http_arena(r), tmp);
                    break;
                }
            }
            break;
        case JSON_TRUE: kv->val = "true"; break;
        case JSON_FALSE: kv->val = "false"; break;
        case JSON_NULL: continue; /* null is the same as absent */
        case JSON_ARRAY: { /* the fields that take a list read it (tags, ids: §23) */
            char *d = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
            kv->val = d ? arena_strdup(http_arena(r), d) : NULL;
            free(d);
            kv->status = d ? (kv_status_t)KV_ARRAY : (kv_status_t)KV_NOT_SCALAR;
            break;
        }
        default:
            kv->val = NULL;
            kv->status = (kv_status_t)KV_NOT_SCALAR;
        }
        if (kv->val && !json_is_string(val))
            kv->val_len = strlen(kv->val);
        i++;
    }
    out->n = i;
    json_decref(root);
    return 0;
}

int api_body_fields(http_req_t *r, kvlist_t *out)
{
    return api_decode_body(r, http_header(r, "Content-Type"), out);
}

int api_decode_body(http_req_t *r, const char *ct, kvlist_t *out)
{
    out->items = NULL;
    out->n = 0;
    size_t len;
    const char *body = http_body(r, &len);
    if (!ct || !*ct) {
        if (len == 0)
            return 0;
        api_error(r, 415, "Unsupported media type.");
        return -1;
    }
    char mt[128];
    media_type(ct, mt, sizeof(mt));
    if (strcmp(mt, "application/x-www-form-urlencoded") == 0) {
        form_parse(http_arena(r), body ? body : "", len, out);
        return 0;
    }
    if (strcmp(mt, "application/json") == 0) {
        if (len == 0)
            return 0;
        return json_fields(r, out);
    }
    api_error(r, 415, "Unsupported media type.");
    return -1;
}

void api_query(http_req_t *r, kvlist_t *out)
{
    form_parse(http_arena(r), http_query(r), strlen(http_query(r)), out);
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f' && *s != '\v')
            return false;
    return true;
}

static void bad_value(verrs_t *v, const kv_t *kv, const char *key, const char *label)
{
    switch ((int)kv->status) {
    case KV_BAD_ESCAPE:
        verrs_add(v, key, "The %s field contains a malformed percent escape.", label);
        break;
    case KV_BAD_UTF8: verrs_add(v, key, "The %s field must be valid UTF-8 text.", label); break;
    case KV_HAS_NUL: verrs_add(v, key, "The %s field must not contain NUL characters.", label); break;
    default: verrs_add(v, key, "The %s field must be a string.", label);
    }
}

const char *field_text(verrs_t *v, const kvlist_t *f, const char *key, const char *label,
                       bool required, long long max, bool *present)
{
    const kv_t *kv = kv_get(f, key);
    if (present)
        *present = kv != NULL;
    if (!kv) {
        if (required)
            verrs_add(v, key, "The %s field is required.", label);
        return NULL;
    }
    if (kv->status != KV_OK) {
        bad_value(v, kv, key, label);
        return NULL;
    }
    if (memchr(kv->val, '\0', kv->val_len)) {
        verrs_add(v, key, "The %s field must not contain NUL characters.", label);
        return NULL;
    }
    long long cps = utf8_count(kv->val, kv->val_len);
    if (cps < 0) {
        verrs_add(v, key, "The %s field must be valid UTF-8 text.", label);
        return NULL;
    }
    if (required && blank(kv->val)) {
        verrs_add(v, key, "The %s field is required.", label);
        return NULL;
    }
    if (max > 0 && cps > max) {
        verrs_add(v, key, "The %s field must not be greater than %lld characters.", label, max);
        return NULL;
    }
    return kv->val;
}

const char *param_value(verrs_t *v, const kvlist_t *f, const char *key, const char *label)
{
    const kv_t *kv = kv_get(f, key);
    if (!kv)
        return NULL;
    if (kv->status != KV_OK || memchr(kv->val, '\0', kv->val_len)) {
        bad_value(v, kv, key, label);
        return NULL;
    }
    return kv->val;
}

void api_record_json(app_t *app, jw_t *w, const record_t *rec)
{
    char ts[32];
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, rec->id);
    jw_key(w, "name");
    jw_str(w, rec->name);
    if (rec->kind == KIND_DOC) {
        jw_key(w, "prompt");
        jw_str(w, rec->prompt);
        jw_key(w, "creativity");
        jw_num(w, rec->creativity);
        jw_key(w, "creativity_label");
        jw_str(w, creativity_label(rec->creativity));
        jw_key(w, "template_id");
        jw_int(w, rec->template_id);
        jw_key(w, "template");
        arena_t ta; /* a user's own template's name, when it is looked up (§18) */
        arena_init(&ta);
        jw_str(w, api_template_name(app, rec, &ta));
        arena_free(&ta);
        jw_key(w, "result");
        jw_str(w, rec->result);
        jw_key(w, "words");
        jw_int(w, rec->words);
        jw_key(w, "usage");
        if (rec->prompt_tokens >= 0 || rec->completion_tokens >= 0) {
            jw_obj_begin(w);
            jw_key(w, "prompt_tokens");
            jw_int(w, rec->prompt_tokens >= 0 ? rec->prompt_tokens : 0);
            jw_key(w, "completion_tokens");
            jw_int(w, rec->completion_tokens >= 0 ? rec->completion_tokens : 0);
            jw_obj_end(w);
        } else {
            jw_null(w);
        }
        jw_key(w, "truncated");
        jw_bool(w, rec->truncated);
        jw_key(w, "tone");
        jw_str(w, rec->tone ? rec->tone : "neutral");
        jw_key(w, "language");
        jw_str(w, rec->language ? rec->language : "en");
        jw_key(w, "length");
        jw_str(w, rec->length ? rec->length : "medium");
    } else {
        jw_key(w, "description");
        jw_str(w, rec->description);
        jw_key(w, "resolution");
        jw_str(w, rec->resolution);
        jw_key(w, "style");
        jw_str(w, rec->style);
        jw_key(w, "url");
        if (rec->media_key) {
            buf_t u;
            buf_init(&u);
            api_media_url(&u, app, rec->media_key);
            jw_str(w, u.data);
            buf_free(&u);
        } else {
            jw_null(w);
        }
        jw_key(w, "revised_prompt");
        jw_str(w, rec->revised_prompt);
    }
    jw_key(w, "favorite");
    jw_bool(w, rec->favorite);
    jw_key(w, "tags"); /* §23: the JSON array the store keeps */
    jw_raw(w, rec->tags_json ? rec->tags_json : "[]");
    if (rec->kind == KIND_DOC) {
        jw_key(w, "has_draft"); /* §24 */
        jw_bool(w, rec->has_draft);
    }
    jw_key(w, "state");
    jw_str(w, rec_state_name(rec->state));
    jw_key(w, "error");
    jw_str(w, rec->error);
    jw_key(w, "revision");
    jw_int(w, rec->revision);
    jw_key(w, "created_at");
    fmt_timestamp(rec->created_us, ts);
    jw_str(w, ts);
    jw_key(w, "updated_at");
    fmt_timestamp(rec->updated_us, ts);
    jw_str(w, ts);
    jw_obj_end(w);
}

void api_url_append(buf_t *out, const app_t *app, const char *fmt, ...)
{
    buf_puts(out, app->public_url);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(out, fmt, ap);
    va_end(ap);
}

char *api_url(const app_t *app, arena_t *a, const char *fmt, ...)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, app->public_url);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *out = arena_strdup(a, buf_cstr(&b));
    buf_free(&b);
    return out;
}

const char *api_kind_path(rec_kind_t kind)
{
    return kind == KIND_IMG ? "images" : "documents";
}

char *api_collection_url(const app_t *app, arena_t *a, rec_kind_t kind)
{
    return api_url(app, a, "/api/v1/%s", api_kind_path(kind));
}

char *api_record_url(const app_t *app, arena_t *a, rec_kind_t kind, int64_t id)
{
    return api_url(app, a, "/api/v1/%s/%lld", api_kind_path(kind), (long long)id);
}

void api_media_url(buf_t *out, const app_t *app, const char *media_key)
{
    api_url_append(out, app, "/media/%s.png", media_key);
}

void api_render_record(app_t *app, buf_t *out, int status, const record_t *rec)
{
    buf_reset(out);
    jw_t w;
    jw_init(&w, out);
    jw_obj_begin(&w);
    jw_key(&w, "data");
    api_record_json(app, &w, rec);
    jw_key(&w, "status");
    jw_int(&w, status);
    jw_obj_end(&w);
}

void api_respond_record(app_t *app, http_req_t *r, int status, const record_t *rec)
{
    api_render_record(app, http_resp(r), status, rec);
    http_respond(r, status);
}
