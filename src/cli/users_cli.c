/* users_cli.c — inkwell user create|list|show|set-quota|set-password|delete and inkwell usage
 * (API.md §19, what the /admin routes do, on the command line). Each takes the storage
 * settings of `serve` (--data-dir, --database, --config and INKWELL_*). */
#include "cli/cli.h"

#include "auth/password.h"
#include "auth/users.h"
#include "records/records.h"
#include "core/log.h"
#include "core/utf8.h"
#include "http/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    fputs("usage: inkwell user create NAME [--quota-words N|none] [--quota-images N|none]\n"
          "                                [--role admin|member]\n"
          "       inkwell user list\n"
          "       inkwell user show NAME\n"
          "       inkwell user set-quota NAME [--words N|none] [--images N|none]\n"
          "       inkwell user set-password NAME   (the password on standard input)\n"
          "       inkwell user delete NAME\n"
          "       inkwell usage [--period YYYY-MM]\n"
          "each with [--data-dir DIR | --database URL | --config FILE]\n",
          stderr);
}

/* A command's own options taken out of argv; the rest is for cli_open_store. */
typedef struct {
    const char *name; /* the first argument not an option */
    const char *opt[3];
    char **rest;
    int nrest;
} args_t;

static void take_args(int argc, char **argv, const char *o1, const char *o2, const char *o3,
                      bool want_name, args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->rest = calloc((size_t)argc + 1, sizeof(char *));
    for (int i = 0; i < argc; i++) {
        if (o1 && cli_take(argc, argv, &i, o1, &a->opt[0]))
            continue;
        if (o2 && cli_take(argc, argv, &i, o2, &a->opt[1]))
            continue;
        if (o3 && cli_take(argc, argv, &i, o3, &a->opt[2]))
            continue;
        if (want_name && !a->name && argv[i][0] != '-') {
            a->name = argv[i];
            continue;
        }
        a->rest[a->nrest++] = argv[i];
    }
}

static void print_quota(int64_t q)
{
    if (q < 0)
        printf("%-12s", "none");
    else
        printf("%-12lld", (long long)q);
}

static void print_user(const user_info_t *u)
{
    char ts[32];
    fmt_timestamp(u->created_us, ts);
    printf("%-6lld %-24s ", (long long)u->id, u->name);
    print_quota(u->quota_words);
    print_quota(u->quota_images);
    printf("%s\n", ts);
}

static const char *user_header = "ID     NAME                     QUOTA_WORDS QUOTA_IMAGES CREATED\n";

static bool name_ok(const char *name)
{
    long long cps = name ? utf8_count(name, strlen(name)) : -1;
    if (cps >= 1 && cps <= 255)
        return true;
    usage();
    fputs("inkwell: a user name has 1 to 255 UTF-8 characters\n", stderr);
    return false;
}

/* inkwell user set-password NAME: the password from standard input (one line: a final
 * newline is not part of it), hashed (Argon2id); every session of the user ends. */
static int set_password(store_conn_t *c, const char *name, int64_t user_id)
{
    char buf[4 * PASSWORD_MAX + 4];
    size_t n = fread(buf, 1, sizeof(buf) - 1, stdin);
    buf[n] = 0;
    if (n && buf[n - 1] == '\n')
        buf[--n] = 0;
    if (n && buf[n - 1] == '\r')
        buf[--n] = 0;
    char *nfc = NULL;
    pw_status_t st = strlen(buf) == n ? password_normalize(buf, &nfc) : PW_NOT_UTF8;
    memset(buf, 0, sizeof(buf));
    if (st != PW_OK) {
        fprintf(stderr, "inkwell: a password has %d to %d bytes of UTF-8 (after NFC)\n",
                PASSWORD_MIN, PASSWORD_MAX);
        return 2;
    }
    char hash[PASSWORD_HASH_MAX];
    int hrc = password_hash(nfc, hash);
    password_free(nfc);
    if (hrc != 0) {
        fputs("inkwell: the password could not be hashed\n", stderr);
        return 1;
    }
    int64_t ended = 0;
    int src = store_user_password(c, user_id, hash, 0, &ended);
    memset(hash, 0, sizeof(hash));
    if (src != STORE_OK) {
        fprintf(stderr, "inkwell: %s\n", store_rc_name(src));
        return 1;
    }
    fprintf(stderr, "inkwell: password of '%s' set; %lld session(s) ended\n", name,
            (long long)ended);
    return 0;
}

/* Runs one user command with the store open. */
static int run(const char *cmd, args_t *a, cfg_t *cfg, store_conn_t *c)
{
    arena_t ar;
    arena_init(&ar);
    int rc = 1, src = STORE_OK;
    user_info_t u;
    if (strcmp(cmd, "list") == 0) {
        user_info_t *v;
        size_t n;
        int64_t total;
        if ((src = store_user_list(c, -1, 0, &ar, &v, &n, &total)) == STORE_OK) {
            fputs(user_header, stdout);
            for (size_t i = 0; i < n; i++)
                print_user(&v[i]);
            rc = 0;
        }
        goto out;
    }
    if (strcmp(cmd, "create") == 0) {
        int64_t qw = cfg->quota_words, qi = cfg->quota_images;
        if ((a->opt[0] && !cli_parse_quota(a->opt[0], &qw)) ||
            (a->opt[1] && !cli_parse_quota(a->opt[1], &qi))) {
            fputs("inkwell: a quota is a whole number >= 0, or none\n", stderr);
            rc = 2;
            goto out;
        }
        const char *role = a->opt[2];
        if (role && strcmp(role, "admin") != 0 && strcmp(role, "member") != 0) {
            fputs("inkwell: --role is admin or member\n", stderr);
            rc = 2;
            goto out;
        }
        src = store_user_create(c, a->name, qw, qi, &ar, &u);
        if (src == STORE_OK && role && strcmp(role, "admin") == 0) {
            user_patch_t rp = {.role = role};
            src = store_user_update(c, u.id, &rp, &ar, &u);
        }
        if (src == STORE_CONFLICT) {
            fprintf(stderr, "inkwell: there is already a user named '%s'\n", a->name);
            goto out;
        }
        if (src == STORE_OK) {
            fputs(user_header, stdout);
            print_user(&u);
            rc = 0;
        }
        goto out;
    }
    src = store_user_get(c, 0, a->name, &ar, &u);
    if (src == STORE_NOTFOUND) {
        fprintf(stderr, "inkwell: no user named '%s'\n", a->name);
        goto out;
    }
    if (src != STORE_OK)
        goto out;
    if (strcmp(cmd, "show") == 0) {
        char period[8];
        store_period(store_clock_us(), period);
        usage_row_t *row;
        size_t n;
        int64_t total;
        if ((src = store_usage_list(c, period, u.id, 1, 0, &ar, &row, &n, &total)) != STORE_OK)
            goto out;
        fputs(user_header, stdout);
        print_user(&u);
        if (n == 1)
            printf("usage %s: %lld words, %lld images, %lld prompt tokens, %lld completion "
                   "tokens\n",
                   period, (long long)row->used.words, (long long)row->used.images,
                   (long long)row->used.prompt_tokens, (long long)row->used.completion_tokens);
        rc = 0;
    } else if (strcmp(cmd, "set-quota") == 0) {
        user_patch_t p = {0};
        if ((a->opt[0] && !cli_parse_quota(a->opt[0], &p.quota_words)) ||
            (a->opt[1] && !cli_parse_quota(a->opt[1], &p.quota_images))) {
            fputs("inkwell: a quota is a whole number >= 0, or none\n", stderr);
            rc = 2;
            goto out;
        }
        p.set_words = a->opt[0] != NULL;
        p.set_images = a->opt[1] != NULL;
        if ((src = store_user_update(c, u.id, &p, &ar, &u)) == STORE_OK) {
            fputs(user_header, stdout);
            print_user(&u);
            rc = 0;
        }
    } else if (strcmp(cmd, "set-password") == 0) {
        rc = set_password(c, a->name, u.id);
    } else if (strcmp(cmd, "delete") == 0) {
        char err[256];
        media_t *m = media_open_cfg(cfg, err, sizeof(err));
        if (!m) {
            fprintf(stderr, "inkwell: %s\n", err);
            goto out;
        }
        size_t left;
        src = records_delete_user(NULL, c, m, u.id, &left);
        media_close(m);
        if (src == STORE_OK) {
            fprintf(stderr, "inkwell: user '%s' deleted with its keys, records and pictures\n",
                    a->name);
            rc = left ? 1 : 0;
        }
    }
out:
    if (src != STORE_OK && src != STORE_NOTFOUND && src != STORE_CONFLICT)
        fprintf(stderr, "inkwell: %s\n", store_rc_name(src));
    arena_free(&ar);
    return rc;
}

/* --help or -h anywhere: the usage, exit 0. */
static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return true;
        }
    return false;
}

int cli_user(int argc, char **argv)
{
    log_level = LOG_WARN;
    if (wants_help(argc, argv))
        return 0;
    static const struct {
        const char *cmd, *o1, *o2, *o3;
        bool name;
    } cmds[] = {{"create", "--quota-words", "--quota-images", "--role", true},
                {"list", NULL, NULL, NULL, false},
                {"show", NULL, NULL, NULL, true},
                {"set-quota", "--words", "--images", NULL, true},
                {"set-password", NULL, NULL, NULL, true},
                {"delete", NULL, NULL, NULL, true}};
    size_t i = 0;
    while (argc >= 2 && i < ARRAY_LEN(cmds) && strcmp(argv[1], cmds[i].cmd) != 0)
        i++;
    if (argc < 2 || i == ARRAY_LEN(cmds)) {
        usage();
        return 2;
    }
    args_t a;
    take_args(argc - 2, argv + 2, cmds[i].o1, cmds[i].o2, cmds[i].o3, cmds[i].name, &a);
    if (cmds[i].name && !name_ok(a.name)) {
        free(a.rest);
        return 2;
    }
    cfg_t cfg;
    store_t *s = NULL;
    store_conn_t *c = NULL;
    int rc = 1;
    if (cli_open_store(&cfg, a.nrest, a.rest, &s, &c) == 0)
        rc = run(cmds[i].cmd, &a, &cfg, c);
    free(a.rest);
    store_close(s);
    cfg_free(&cfg);
    return rc;
}

int cli_usage(int argc, char **argv)
{
    log_level = LOG_WARN;
    if (wants_help(argc, argv))
        return 0;
    args_t a;
    take_args(argc - 1, argv + 1, "--period", NULL, NULL, false, &a);
    char period[8];
    if (a.opt[0] ? !users_period_parse(a.opt[0], period) : false) {
        usage();
        fputs("inkwell: --period is YYYY-MM\n", stderr);
        free(a.rest);
        return 2;
    }
    if (!a.opt[0])
        store_period(store_clock_us(), period);
    cfg_t cfg;
    store_t *s = NULL;
    store_conn_t *c = NULL;
    int rc = 1;
    if (cli_open_store(&cfg, a.nrest, a.rest, &s, &c) == 0) {
        arena_t ar;
        arena_init(&ar);
        usage_row_t *v;
        size_t n;
        int64_t total;
        if (store_usage_list(c, period, 0, -1, 0, &ar, &v, &n, &total) == STORE_OK) {
            printf("%-7s %-6s %-24s %-12s %-12s %-10s %-12s %-14s %s\n", "PERIOD", "ID", "NAME",
                   "WORDS", "QUOTA_WORDS", "IMAGES", "QUOTA_IMAGES", "PROMPT_TOKENS",
                   "COMPLETION_TOKENS");
            for (size_t i = 0; i < n; i++) {
                printf("%-7s %-6lld %-24s %-12lld ", period, (long long)v[i].user.id,
                       v[i].user.name, (long long)v[i].used.words);
                print_quota(v[i].user.quota_words);
                printf(" %-10lld ", (long long)v[i].used.images);
                print_quota(v[i].user.quota_images);
                printf(" %-14lld %lld\n", (long long)v[i].used.prompt_tokens,
                       (long long)v[i].used.completion_tokens);
            }
            rc = 0;
        } else {
            fputs("inkwell: cannot read the usage\n", stderr);
        }
        arena_free(&ar);
    }
    free(a.rest);
    store_close(s);
    cfg_free(&cfg);
    return rc;
}
