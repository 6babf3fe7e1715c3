/* usage.c — GET /usage (API.md §19): the key's user's usage of this month (calendar
 * months, UTC; the store's clock, settable for tests), and the usage object the admin
 * list (admin.c) writes too. */
#include "api/api_int.h"

static void used_limit(jw_t *w, const char *key, int64_t used, int64_t limit)
{
    jw_key(w, key);
    jw_obj_begin(w);
    jw_key(w, "used");
    jw_int(w, used);
    jw_key(w, "limit");
    if (limit < 0)
        jw_null(w);
    else
        jw_int(w, limit);
    jw_obj_end(w);
}

void api_usage_json(jw_t *w, const usage_row_t *u, const char *period, bool with_user)
{
    jw_obj_begin(w);
    if (with_user) {
        jw_key(w, "user_id");
        jw_int(w, u->user.id);
        jw_key(w, "name");
        jw_str(w, u->user.name);
    }
    jw_key(w, "period");
    jw_str(w, period);
    used_limit(w, "words", u->used.words, u->user.quota_words);
    used_limit(w, "images", u->used.images, u->user.quota_images);
    jw_key(w, "tokens");
    jw_obj_begin(w);
    jw_key(w, "prompt");
    jw_int(w, u->used.prompt_tokens);
    jw_key(w, "completion");
    jw_int(w, u->used.completion_tokens);
    jw_obj_end(w);
    jw_obj_end(w);
}

void api_usage(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    char period[8];
    store_period(store_clock_us(), period);
    usage_row_t *row;
    size_t n;
    int64_t total;
    int rc = store_usage_list(c, period, http_user_id(r), 1, 0, http_arena(r), &row, &n, &total);
    if (rc == STORE_OK && n != 1)
        rc = STORE_NOTFOUND; /* the key's user went in between */
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
    api_usage_json(&w, row, period, false);
    api_data_end(r, &w, 200);
}
