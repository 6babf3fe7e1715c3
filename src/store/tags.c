/* tags.c — what both stores share of tags (API.md §23; store_int.h): a record's list of
 * spellings as the JSON array it shows, and a bulk action's new list. */
#include "store/store_int.h"

#include "core/json.h"
#include "core/unicode.h"

#include <stdlib.h>
#include <string.h>

const char *store_tags_json(const char *const *names, int n, arena_t *a)
{
    if (n <= 0)
        return NULL;
    buf_t b;
    buf_init(&b);
    jw_t w;
    jw_init(&w, &b);
    jw_arr_begin(&w);
    for (int i = 0; i < n; i++)
        jw_str(&w, names[i]);
    jw_arr_end(&w);
    const char *out = arena_strdup(a, buf_cstr(&b));
    buf_free(&b);
    return out;
}

/* Whether name's folding is one of set[0..n)'s. */
static bool has_fold(const char *const *set, int n, const char *name)
{
    char *f = uni_fold(name, strlen(name), NULL);
    bool found = false;
    for (int i = 0; f && i < n && !found; i++) {
        char *g = uni_fold(set[i], strlen(set[i]), NULL);
        found = g && strcmp(f, g) == 0;
        free(g);
    }
    free(f);
    return found;
}

void store_tags_merge(const char *const *old, int nold, bulk_action_t action,
                      const char *const *add, int nadd, arena_t *a, const char ***out, int *n)
{
    const char **r = arena_alloc(a, (size_t)(nold + nadd + 1) * sizeof(*r));
    int m = 0;
    for (int i = 0; i < nold; i++)
        if (action != BULK_UNTAG || !has_fold(add, nadd, old[i]))
            r[m++] = old[i];
    for (int i = 0; action == BULK_TAG && i < nadd; i++)
        if (!has_fold(r, m, add[i]))
            r[m++] = add[i];
    *out = r;
    *n = m;
}
