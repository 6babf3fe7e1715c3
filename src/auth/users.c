/* users.c — see users.h. */
#include "auth/users.h"

#include "core/log.h"

#include <ctype.h>
#include <string.h>

int users_delete(store_conn_t *c, media_t *media, int64_t user_id, size_t *files_left)
{
    arena_t a;
    arena_init(&a);
    const char **keys = NULL;
    size_t n = 0;
    *files_left = 0;
    int rc = store_user_delete(c, user_id, &a, &keys, &n);
    /* after the commit: a picture whose record is gone is only a file; one left by a
     * failure here is swept at the next start (main.c, media_sweep) */
    for (size_t i = 0; rc == STORE_OK && i < n; i++)
        if (media_remove(media, keys[i]) != 0)
            (*files_left)++;
    if (*files_left)
        log_warn("user %lld: %zu picture file(s) could not be removed", (long long)user_id,
                 *files_left);
    arena_free(&a);
    return rc;
}

bool users_period_parse(const char *s, char out[8])
{
    if (!s || strlen(s) != 7 || s[4] != '-')
        return false;
    for (int i = 0; i < 7; i++)
        if (i != 4 && !isdigit((unsigned char)s[i]))
            return false;
    int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int month = (s[5] - '0') * 10 + (s[6] - '0');
    if (year < 1970 || month < 1 || month > 12)
        return false;
    memcpy(out, s, 8);
    return true;
}
