/* keys_cli.c — inkwell key create --user NAME [--scope S] [--expires TIME] | key list |
 * key revoke ID, and what the commands share (cli.h): opening the store, options.
 * Each also takes the storage settings of `serve` (--data-dir, --database, --config
 * and their INKWELL_* variables) to find the database. */
#include "cli/cli.h"

#include "auth/keys.h"
#include "core/log.h"
#include "http/decode.h"
#include "media/media.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(void)
{
    fputs("usage: inkwell key create --user NAME [--scope write|read|admin] [--expires TIME]\n"
          "                          [--data-dir DIR | --database URL]\n"
          "       inkwell key list [--data-dir DIR | --database URL]\n"
          "       inkwell key revoke ID [--data-dir DIR | --database URL]\n"
          "TIME: a date (2027-01-01, midnight UTC) or an RFC 3339 time\n",
          stderr);
}

int cli_open_store(cfg_t *cfg, int argc, char **argv, store_t **s, store_conn_t **c)
{
    char err[512];
    bool help;
    *s = NULL;
    if (cfg_load(cfg, argc, argv, &help, err, sizeof(err)) != 0) {
        fprintf(stderr, "inkwell: %s\n", err);
        return -1;
    }
    if (help)
        return -1;
    if (!cfg->database[0])
        mkdir(cfg->data_dir, 0755);
    char *url = cfg_database_url(cfg);
    *s = store_open(url, err, sizeof(err));
    free(url);
    if (!*s || !(*c = store_conn(*s, err, sizeof(err)))) {
        fprintf(stderr, "inkwell: cannot open the database: %s\n", err);
        return -1;
    }
    if (store_migrate(*c) != STORE_OK) {
        fprintf(stderr, "inkwell: cannot prepare the database schema\n");
        return -1;
    }
    return 0;
}

bool cli_parse_quota(const char *s, int64_t *out)
{
    if (!s || !*s || strcmp(s, "none") == 0) {
        *out = -1;
        return true;
    }
    int64_t v;
    if (!parse_uint(s, &v) || v > 1000000000000000LL)
        return false;
    *out = v;
    return true;
}

bool cli_take(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strcmp(argv[*i], name) == 0 && *i + 1 < argc) {
        *val = argv[++*i];
        return true;
    }
    if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=') {
        *val = argv[*i] + n + 1;
        return true;
    }
    return false;
}

static int key_create(int argc, char **argv)
{
    const char *user = NULL, *scope_s = "write", *expires_s = NULL;
    char **rest = calloc((size_t)argc + 1, sizeof(char *));
    int nrest = 0;
    for (int i = 0; i < argc; i++) {
        if (!cli_take(argc, argv, &i, "--user", &user) &&
            !cli_take(argc, argv, &i, "--scope", &scope_s) &&
            !cli_take(argc, argv, &i, "--expires", &expires_s))
            rest[nrest++] = argv[i];
    }
    int rc = 1;
    cfg_t cfg;
    store_t *s = NULL;
    store_conn_t *c = NULL;
    key_scope_t scope;
    int64_t expires = 0;
    long long cps = user ? utf8_count(user, strlen(user)) : -1;
    if (!user || !*user || cps < 1 || cps > 255) {
        usage();
        fputs("inkwell: --user needs a name of 1 to 255 UTF-8 characters\n", stderr);
        free(rest);
        return 2;
    }
    if (!key_scope_parse(scope_s, &scope)) {
        fputs("inkwell: --scope is write, read or admin\n", stderr);
        free(rest);
        return 2;
    }
    if (expires_s && *expires_s &&
        (!keys_parse_time(expires_s, &expires) || expires <= store_clock_us())) {
        fputs("inkwell: --expires needs a date or an RFC 3339 time after now\n", stderr);
        free(rest);
        return 2;
    }
    if (cli_open_store(&cfg, nrest, rest, &s, &c) != 0)
        goto out;
    char key[KEY_LEN + 1];
    int64_t kid;
    if (keys_create(c, user, cfg.quota_words, cfg.quota_images, scope, expires, key, &kid) !=
        STORE_OK) {
        fputs("inkwell: cannot create the key\n", stderr);
        goto out;
    }
    printf("%s\n", key);
    fprintf(stderr, "inkwell: %s key %lld made for user '%s'; it is shown only this once\n",
            key_scope_name(scope), (long long)kid, user);
    rc = 0;
out:
    free(rest);
    store_close(s);
    cfg_free(&cfg);
    return rc;
}

static int key_list(int argc, char **argv)
{
    cfg_t cfg;
    store_t *s = NULL;
    store_conn_t *c = NULL;
    int rc = 1;
    if (cli_open_store(&cfg, argc, argv, &s, &c) != 0)
        goto out;
    arena_t a;
    arena_init(&a);
    key_info_t *keys;
    size_t n;
    int64_t total;
    if (store_key_list(c, 0, -1, 0, &a, &keys, &n, &total) != STORE_OK) {
        fputs("inkwell: cannot list keys\n", stderr);
        arena_free(&a);
        goto out;
    }
    printf("%-6s %-20s %-14s %-6s %-28s %-28s %s\n", "ID", "USER", "PREFIX", "SCOPE", "CREATED",
           "EXPIRES", "STATUS");
    int64_t now = store_clock_us();
    for (size_t i = 0; i < n; i++) {
        char ts[32], ex[32] = "never";
        fmt_timestamp(keys[i].created_us, ts);
        if (keys[i].expires_us)
            fmt_timestamp(keys[i].expires_us, ex);
        const char *status = keys[i].revoked_us                                ? "revoked"
                             : keys[i].expires_us && keys[i].expires_us <= now ? "expired"
                                                                               : "active";
        printf("%-6lld %-20s %-14s %-6s %-28s %-28s %s\n", (long long)keys[i].id,
               keys[i].user_name, keys[i].prefix, key_scope_name(keys[i].scope), ts, ex, status);
    }
    arena_free(&a);
    rc = 0;
out:
    store_close(s);
    cfg_free(&cfg);
    return rc;
}

static int key_revoke(int argc, char **argv)
{
    int64_t id;
    if (argc < 1 || !parse_id(argv[0], strlen(argv[0]), &id)) {
        usage();
        return 2;
    }
    cfg_t cfg;
    store_t *s = NULL;
    store_conn_t *c = NULL;
    int rc = 1;
    if (cli_open_store(&cfg, argc - 1, argv + 1, &s, &c) != 0)
        goto out;
    int src = store_key_revoke(c, id);
    if (src == STORE_NOTFOUND) {
        fprintf(stderr, "inkwell: no key with id %lld\n", (long long)id);
        goto out;
    }
    if (src != STORE_OK) {
        fputs("inkwell: cannot revoke the key\n", stderr);
        goto out;
    }
    fprintf(stderr, "inkwell: key %lld revoked\n", (long long)id);
    rc = 0;
out:
    store_close(s);
    cfg_free(&cfg);
    return rc;
}

int cli_key(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        }
    log_level = LOG_WARN;
    if (strcmp(argv[1], "create") == 0)
        return key_create(argc - 2, argv + 2);
    if (strcmp(argv[1], "list") == 0)
        return key_list(argc - 2, argv + 2);
    if (strcmp(argv[1], "revoke") == 0)
        return key_revoke(argc - 2, argv + 2);
    usage();
    return 2;
}
