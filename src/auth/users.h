/* users.h — what the admin API (api/admin.c) and the command line (cli/users_cli.c)
 * share about users (API.md §19): periods. (Removing a user is the records service's:
 * records_delete_user, records/records.h.) */
#ifndef INK_USERS_H
#define INK_USERS_H

#include <stdbool.h>

/* "YYYY-MM" (year 1970..9999, month 01..12): true with out set. */
bool users_period_parse(const char *s, char out[8]);

#endif
