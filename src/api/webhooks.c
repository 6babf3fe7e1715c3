/* webhooks.c — the webhook routes (API.md §22): POST and GET /webhooks, GET, PATCH and
 * DELETE /webhooks/{id}, POST /webhooks/{id}/rotate and /ping, GET
 * /webhooks/{id}/deliveries and POST /webhooks/{id}/deliveries/{d}/retry; and the
 * rendering of a record for a delivery's body (api_webhook_render, for the workers of
 * src/webhooks/ through main.c).
 *
 * A user's own endpoints only: another user's id answers as a missing one (404). The
 * secret is in the answers of a create and a rotation only, never stored by a cache
 * (Cache-Control: no-store), never logged. */
#include "api/api_int.h"

#include "webhooks/webhooks.h"

#include <jansson.h>
#include <string.h>

#define WEBHOOKS_PER_USER 20
#define DESCRIPTION_MAX_CPS 255
#define ROTATION_OVERLAP_US (24LL * 3600 * 1000000)

static void webhook_json(jw_t *w, const webhook_t *h, const char *secret)
{
    char ts[32];
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, h->id);
    jw_key(w, "url");
    jw_str(w, h->url);
    jw_key(w, "events");
    jw_arr_begin(w);
    if (h->events == WH_ALL)
        jw_str(w, "*");
    else
        for (int i = 0; i < WH_TYPE_COUNT; i++)
            if (h->events & (1 << i))
                jw_str(w, wh_type_names[i]);
    jw_arr_end(w);
    jw_key(w, "description");
    jw_str(w, h->description);
    jw_key(w, "enabled");
    jw_bool(w, h->enabled);
    jw_key(w, "created_at");
    fmt_timestamp(h->created_us, ts);
    jw_str(w, ts);
    if (secret) {
        jw_key(w, "secret");
        jw_str(w, secret);
    }
    jw_obj_end(w);
}

static void respond_one(http_req_t *r, int status, const webhook_t *h, const char *secret)
{
    if (secret) { /* the secret: not kept by a cache, never compressed (§26) */
        http_add_header(r, "Cache-Control", "no-store");
        http_set_no_compress(r);
    }
    jw_t w;
    api_data_begin(r, &w);
    webhook_json(&w, h, secret);
    api_data_end(r, &w, status);
}

/* One event type's bit, 0 when unknown. */
static int64_t type_bit(const char *s, size_t n)
{
    for (int i = 0; i < WH_TYPE_COUNT; i++)
        if (strlen(wh_type_names[i]) == n && memcmp(wh_type_names[i], s, n) == 0)
            return (int64_t)1 << i;
    return 0;
}

/* Adds one item of the list to *mask; false when it is not a type or "*". */
static bool add_type(const char *s, size_t n, int64_t *mask, bool *star)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 1 && *s == '*') {
        *star = true;
        return true;
    }
    int64_t b = type_bit(s, n);
    *mask |= b;
    return b != 0;
}

/* `events`: a comma list or a JSON array of types, or "*". -1 when absent (or after
 * recording an error); the mask (WH_ALL for "*"). */
static int64_t events_field(http_req_t *r, verrs_t *v, const kvlist_t *f, bool required)
{
    const kv_t *kv = kv_get(f, "events");
    int64_t mask = 0;
    bool star = false, ok = true;
    size_t items = 0;
    if (!kv) {
        if (required)
            verrs_add(v, "events", "The events field is required.");
        return -1;
    }
    if (kv->status == KV_OK) {
        const char *s = kv->val;
        for (;;) {
            const char *comma = strchr(s, ',');
            size_t n = comma ? (size_t)(comma - s) : strlen(s);
            ok = add_type(s, n, &mask, &star) && ok;
            items++;
            if (!comma)
                break;
            s = comma + 1;
        }
    } else { /* a JSON array: read from the body again */
        size_t len;
        const char *body = http_body(r, &len);
        json_t *root = json_loadb(body, len, 0, NULL);
        json_t *arr = root ? json_object_get(root, "events") : NULL;
        if (!json_is_array(arr)) {
            ok = false;
        } else {
            size_t i;
            json_t *it;
            json_array_foreach(arr, i, it)
            {
                if (!json_is_string(it) ||
                    !add_type(json_string_value(it), json_string_length(it), &mask, &star))
                    ok = false;
                items++;
            }
        }
        json_decref(root);
    }
    if (!ok || items == 0) {
        verrs_add(v, "events",
                  "The events field must list event types (document.completed, "
                  "document.failed, document.revised, document.deleted, image.completed, "
                  "image.failed, image.revised, image.deleted) or be *.");
        return -1;
    }
    return star ? WH_ALL : mask;
}

/* `url`: checked for its form, then resolved (422 naming url when the host does not
 * resolve or is not public, unless --webhook-allow-private). */
static const char *url_field(app_t *app, verrs_t *v, const kvlist_t *f, bool required)
{
    bool present = false;
    const char *url = field_text(v, f, "url", "url", required, 2048, &present);
    if (!url)
        return NULL;
    wh_url_rc_t rc = wh_url_check(url, cfg_switch_value(app->cfg->webhook_allow_private) == 1, NULL, NULL, 0);
    if (rc != WH_URL_OK) {
        verrs_add(v, "url", "%s", wh_url_reason(rc));
        return NULL;
    }
    return url;
}

/* ---- GET and POST /webhooks ---- */

static void webhooks_list(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    api_page_t p;
    api_page_params(app, r, "/api/v1/webhooks", &p);
    webhook_t *v;
    size_t n;
    int64_t total;
    int rc = store_webhook_list(c, http_user_id(r), p.per_page, (p.page - 1) * p.per_page,
                                http_arena(r), &v, &n, &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    api_page_begin(r, &w);
    for (size_t i = 0; i < n; i++)
        webhook_json(&w, &v[i], NULL);
    api_page_end(r, &w, &p, total, n);
}

static void webhooks_create(app_t *app, http_req_t *r)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    webhook_t in = {.user_id = http_user_id(r)};
    in.url = url_field(app, &v, &f, true);
    in.events = events_field(r, &v, &f, true);
    in.description = field_text(&v, &f, "description", "description", false,
                                 DESCRIPTION_MAX_CPS, NULL);
    if (!in.description)
        in.description = "";
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    char secret[WH_SECRET_LEN + 1];
    wh_secret_new(secret);
    in.secret = secret;
    webhook_t h;
    int rc = store_webhook_create(c, &in, WEBHOOKS_PER_USER, http_arena(r), &h);
    if (rc == STORE_CONFLICT) {
        verrs_add(&v, "url", "A user may have at most %d webhook endpoints.", WEBHOOKS_PER_USER);
        api_validation_error(r, &v);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    http_add_header(r, "Location",
                    api_url(app, http_arena(r), "/api/v1/webhooks/%lld", (long long)h.id));
    respond_one(r, 201, &h, secret);
}

void api_webhooks(app_t *app, http_req_t *r)
{
    if (strcmp(http_method(r), "POST") == 0)
        webhooks_create(app, r);
    else
        webhooks_list(app, r);
}

/* ---- GET, PATCH, DELETE /webhooks/{id} ---- */

static void webhook_update(app_t *app, http_req_t *r, int64_t id)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    webhook_t h;
    /* another user's or a missing endpoint is a 404 before any 422 about its fields */
    int rc = store_webhook_get(c, http_user_id(r), id, http_arena(r), &h);
    if (rc != STORE_OK) {
        if (rc == STORE_NOTFOUND)
            api_not_found(r);
        else
            api_store_error(r, rc);
        return;
    }
    verrs_t v;
    verrs_init(&v, http_arena(r));
    webhook_patch_t p = {.events = -1, .enabled = -1};
    p.url = url_field(app, &v, &f, false);
    if (kv_get(&f, "events"))
        p.events = events_field(r, &v, &f, false);
    p.description = field_text(&v, &f, "description", "description", false,
                               DESCRIPTION_MAX_CPS, NULL);
    const char *en = field_text(&v, &f, "enabled", "enabled", false, 16, NULL);
    if (en && (p.enabled = parse_bool(en)) < 0)
        verrs_add(&v, "enabled", "The enabled field must be true or false.");
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    rc = store_webhook_update(c, http_user_id(r), id, &p, http_arena(r), &h);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    if (p.enabled == 1)
        wh_kick(app->webhooks); /* its deliveries that waited go now */
    respond_one(r, 200, &h, NULL);
}

void api_webhook(app_t *app, http_req_t *r, int64_t id)
{
    if (strcmp(http_method(r), "PATCH") == 0) {
        webhook_update(app, r, id);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (strcmp(http_method(r), "DELETE") == 0) {
        int rc = store_webhook_delete(c, http_user_id(r), id);
        if (rc == STORE_NOTFOUND) {
            api_not_found(r);
        } else if (rc != STORE_OK) {
            api_store_error(r, rc);
        } else {
            buf_reset(http_resp(r));
            buf_printf(http_resp(r), "{\"id\":%lld,\"object\":\"webhook\",\"deleted\":true,"
                                     "\"status\":200}",
                       (long long)id);
            http_respond(r, 200);
        }
        return;
    }
    webhook_t h;
    int rc = store_webhook_get(c, http_user_id(r), id, http_arena(r), &h);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        respond_one(r, 200, &h, NULL);
}

/* ---- rotate, ping ---- */

void api_webhook_rotate(app_t *app, http_req_t *r, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    char secret[WH_SECRET_LEN + 1];
    wh_secret_new(secret);
    webhook_t h;
    int rc = store_webhook_rotate(c, http_user_id(r), id, secret, now_us() + ROTATION_OVERLAP_US,
                                  http_arena(r), &h);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        respond_one(r, 200, &h, secret);
}

void api_webhook_ping(app_t *app, http_req_t *r, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    int rc = store_webhook_ping(c, http_user_id(r), id, now_us());
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    wh_kick(app->webhooks);
    buf_reset(http_resp(r));
    buf_printf(http_resp(r), "{\"message\":\"Accepted.\",\"status\":202}");
    http_respond(r, 202);
}

/* ---- the delivery log ---- */

static void delivery_json(jw_t *w, const webhook_delivery_t *d)
{
    static const char *const states[] = {"pending", "delivered", "failed"};
    char ts[32];
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, d->id);
    jw_key(w, "event");
    jw_str(w, d->msg);
    jw_key(w, "type");
    jw_str(w, d->type);
    jw_key(w, "record_id");
    if (d->record_id > 0)
        jw_int(w, d->record_id);
    else
        jw_null(w);
    jw_key(w, "state");
    jw_str(w, states[d->state <= WD_FAILED ? d->state : WD_FAILED]);
    jw_key(w, "attempts");
    jw_int(w, d->attempts);
    jw_key(w, "last_status");
    if (d->last_status > 0)
        jw_int(w, d->last_status);
    else
        jw_null(w);
    jw_key(w, "last_error");
    jw_str(w, d->last_error);
    jw_key(w, "next_attempt_at");
    if (d->state == WD_PENDING) {
        fmt_timestamp(d->next_us, ts);
        jw_str(w, ts);
    } else {
        jw_null(w);
    }
    jw_key(w, "created_at");
    fmt_timestamp(d->created_us, ts);
    jw_str(w, ts);
    jw_obj_end(w);
}

void api_webhook_deliveries(app_t *app, http_req_t *r, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    webhook_t h;
    int rc = store_webhook_get(c, http_user_id(r), id, http_arena(r), &h);
    if (rc != STORE_OK) {
        if (rc == STORE_NOTFOUND)
            api_not_found(r);
        else
            api_store_error(r, rc);
        return;
    }
    api_page_t p;
    api_page_params(app, r,
                    arena_printf(http_arena(r), "/api/v1/webhooks/%lld/deliveries", (long long)id),
                    &p);
    webhook_delivery_t *v;
    size_t n;
    int64_t total;
    rc = store_webhook_deliveries(c, http_user_id(r), id, p.per_page, (p.page - 1) * p.per_page,
                                  http_arena(r), &v, &n, &total);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    jw_t w;
    api_page_begin(r, &w);
    for (size_t i = 0; i < n; i++)
        delivery_json(&w, &v[i]);
    api_page_end(r, &w, &p, total, n);
}

void api_webhook_retry(app_t *app, http_req_t *r, int64_t id, int64_t d)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    int rc = store_webhook_retry(c, http_user_id(r), id, d, now_us());
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
    } else if (rc == STORE_CONFLICT) {
        api_error(r, 409, "Only a failed delivery can be retried.");
    } else if (rc != STORE_OK) {
        api_store_error(r, rc);
    } else {
        wh_kick(app->webhooks);
        buf_reset(http_resp(r));
        buf_printf(http_resp(r), "{\"message\":\"Accepted.\",\"status\":202}");
        http_respond(r, 202);
    }
}

void api_webhook_render(void *app, const record_t *rec, buf_t *out)
{
    jw_t w;
    jw_init(&w, out);
    api_record_json(app, &w, rec);
}
