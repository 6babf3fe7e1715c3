/* cli.h — the `inkwell key …`, `inkwell user …`, `inkwell usage` and `inkwell backup`
 * commands. */
#ifndef INK_CLI_H
#define INK_CLI_H

#include "core/config.h"
#include "store/store.h"

/* argv[0] is "key". Returns the process exit code. */
int cli_key(int argc, char **argv);
/* argv[0] is "user" (users_cli.c). */
int cli_user(int argc, char **argv);
/* argv[0] is "usage" (users_cli.c). */
int cli_usage(int argc, char **argv);
/* argv[0] is "backup" (backup_cli.c). Returns the process exit code. */
int cli_backup(int argc, char **argv);
/* argv[0] is "media": inkwell media copy (media_cli.c). Returns the process exit code. */
int cli_media(int argc, char **argv);
/* argv[0] is "migrate": inkwell migrate --from --to (migrate_cli.c; API.md §25). */
int cli_migrate(int argc, char **argv);

/* Loads the storage settings (--data-dir, --database, --config and INKWELL_*) from
 * argv and opens the store with its schema up to date. 0, or -1 after a message on
 * standard error (cfg is then to be freed all the same). */
int cli_open_store(cfg_t *cfg, int argc, char **argv, store_t **s, store_conn_t **c);
/* A quota argument: a whole number >= 0, or "none" / "" (-1). */
bool cli_parse_quota(const char *s, int64_t *out);
/* Takes "--name VALUE" or "--name=VALUE" at argv[*i]: true with *val set (and *i moved
 * past it). */
bool cli_take(int argc, char **argv, int *i, const char *name, const char **val);

#endif
