/* users.h — what the admin API (api/admin.c) and the command line (cli/users_cli.c)
 * share about users (API.md §19): removing one with its pictures, and periods. */
#ifndef INK_USERS_H
#define INK_USERS_H

#include "media/media.h"
#include "store/store.h"

#include <stdbool.h>

/* Removes the user, its keys, records and usage (one transaction), then its pictures'
 * files. STORE_NOTFOUND when there is no such user. *files_left: pictures that could
 * not be removed (logged). */
int users_delete(store_conn_t *c, media_t *media, int64_t user_id, size_t *files_left);

/* "YYYY-MM" (year 1970..9999, month 01..12): true with out set. */
bool users_period_parse(const char *s, char out[8]);

#endif
