/* tags.c — tags (API.md §23): the `tags` field of a store, update and bulk action, the
 * `tag` filter of lists, the spellings a new record's tags take, and GET /tags. */
#include "api/api_int.h"

#include "core/unicode.h"
#include "core/utf8.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define TAG_MAX_CHARS 50

/* One tag as stored: s[0..n) trimmed of Unicode white space and NFC-normalised, in a;
 * NULL when it is not a tag (empty, over TAG_MAX_CHARS code points, a comma, a NUL,
 * not UTF-8). */
static const char *tag_norm(const char *s, size_t n, arena_t *a)
{
    if (utf8_count(s, n) < 0 || memchr(s, '\0', n))
        return NULL;
    size_t b = 0, e = n;
    while (b < e) {
        uint32_t cp;
        size_t k = utf8_next(s + b, e - b, &cp);
        if (!k || !utf8_is_space(cp))
            break;
        b += k;
    }
    while (e > b) { /* back to the last character's first byte */
        size_t p = e - 1;
        while (p > b && ((unsigned char)s[p] & 0xC0) == 0x80)
            p--;
        uint32_t cp;
        utf8_next(s + p, e - p, &cp);
        if (!utf8_is_space(cp))
            break;
        e = p;
    }
    if (b == e)
        return NULL;
    size_t len = 0;
    char *nfc = uni_nfc(s + b, e - b, &len);
    if (!nfc)
        return NULL;
    const char *out = NULL;
    long long cps = utf8_count(nfc, len);
    if (cps >= 1 && cps <= TAG_MAX_CHARS && !memchr(nfc, ',', len))
        out = arena_strndup(a, nfc, len);
    free(nfc);
    return out;
}

static char *tag_fold(const char *t, arena_t *a)
{
    char *f = uni_fold(t, strlen(t), NULL);
    char *out = f ? arena_strdup(a, f) : NULL;
    free(f);
    return out;
}

const char *api_tag_filter(const char *raw, arena_t *a)
{
    const char *t = tag_norm(raw, strlen(raw), a);
    const char *f = t ? tag_fold(t, a) : NULL;
    return f ? f : ","; /* no tag has a comma: matches nothing */
}

/* True when s[0..n) is only Unicode white space (a blank piece of a comma list). */
static bool tag_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next(s + i, n - i, &cp);
        if (!k || !utf8_is_space(cp))
            return false;
        i += k;
    }
    return true;
}

/* Appends t unless a tag of the same folding is there already. */
static void add_unique(const char **tags, const char **folds, int *n, const char *t, arena_t *a)
{
    const char *f = tag_fold(t, a);
    if (!f)
        return;
    for (int i = 0; i < *n; i++)
        if (strcmp(folds[i], f) == 0)
            return;
    if (*n <= STORE_MAX_TAGS) { /* one over: the caller refuses it */
        tags[*n] = t;
        folds[*n] = f;
        (*n)++;
    }
}

bool api_tags_field(verrs_t *v, const kvlist_t *f, const char *key, arena_t *a,
                    const char ***out, int *n)
{
    const kv_t *kv = kv_get(f, key);
    *out = NULL;
    *n = 0;
    if (!kv)
        return false;
    const char **tags = arena_alloc(a, (STORE_MAX_TAGS + 2) * sizeof(*tags));
    const char **folds = arena_alloc(a, (STORE_MAX_TAGS + 2) * sizeof(*folds));
    int m = 0;
    bool bad = false;
    if ((int)kv->status == KV_ARRAY) {
        json_t *arr = json_loads(kv->val, JSON_ALLOW_NUL, NULL);
        size_t i;
        json_t *el;
        json_array_foreach(arr, i, el)
        {
            const char *t = json_is_string(el)
                                ? tag_norm(json_string_value(el), json_string_length(el), a)
                                : NULL;
            if (!t)
                bad = true;
            else
                add_unique(tags, folds, &m, t, a);
        }
        json_decref(arr);
    } else if (kv->status != KV_OK) {
        verrs_add(v, key, "The %s field must be valid UTF-8 text.", key);
        return true;
    } else {
        /* comma-separated; empty pieces (a trailing comma) are passed over */
        const char *s = kv->val, *end = kv->val + kv->val_len;
        while (s <= end && !bad) {
            const char *c = memchr(s, ',', (size_t)(end - s));
            if (!c)
                c = end;
            size_t len = (size_t)(c - s);
            const char *t = tag_norm(s, len, a);
            if (t)
                add_unique(tags, folds, &m, t, a);
            else {
                /* blank pieces (any Unicode white space) are fine; anything else
                 * that is not a tag is not */
                bad = !tag_blank(s, len);
            }
            s = c + 1;
        }
    }
    if (bad)
        verrs_add(v, key, "Each tag must be 1 to %d characters, without commas.", TAG_MAX_CHARS);
    else if (m > STORE_MAX_TAGS)
        verrs_add(v, key, "The %s field must not have more than %d tags.", key, STORE_MAX_TAGS);
    *out = tags;
    *n = bad || m > STORE_MAX_TAGS ? 0 : m;
    return true;
}

void api_tags_json(jw_t *w, const char *const *tags, int n)
{
    jw_arr_begin(w);
    for (int i = 0; i < n; i++)
        jw_str(w, tags[i]);
    jw_arr_end(w);
}

int api_tags_spell(store_conn_t *c, int64_t user_id, const char **tags, int n, arena_t *a)
{
    if (n <= 0)
        return STORE_OK;
    tag_count_t *have;
    size_t nh;
    int rc = store_tags_list(c, user_id, a, &have, &nh);
    if (rc != STORE_OK)
        return rc;
    for (size_t i = 0; i < nh; i++) {
        const char *hf = tag_fold(have[i].name, a);
        for (int j = 0; hf && j < n; j++) {
            const char *tf = tag_fold(tags[j], a);
            if (tf && strcmp(hf, tf) == 0)
                tags[j] = have[i].name;
        }
    }
    return STORE_OK;
}

/* ---- GET /tags ---- */

static int by_name(const void *x, const void *y)
{
    return uni_name_cmp(((const tag_count_t *)x)->name, ((const tag_count_t *)y)->name);
}

void api_tags_index(app_t *app, http_req_t *r)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    tag_count_t *tags;
    size_t n;
    int rc = store_tags_list(c, http_user_id(r), http_arena(r), &tags, &n);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    if (n > 1)
        qsort(tags, n, sizeof(*tags), by_name);
    jw_t w;
    api_data_begin(r, &w);
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, tags[i].name);
        jw_key(&w, "documents");
        jw_int(&w, tags[i].documents);
        jw_key(&w, "images");
        jw_int(&w, tags[i].images);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    api_data_end(r, &w, 200);
}
