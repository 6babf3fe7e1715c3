/* migrate_cli.c — inkwell migrate --from SOURCE --to TARGET (API.md §25): a whole
 * deployment copied between a SQLite data directory and a PostgreSQL database, either
 * way, with the servers stopped (store/store_copy.h does the copy). A data directory's
 * lock (store/datalock.h) is taken for the run: a server still running on it is
 * refused. Pictures are not in the database: `inkwell media copy` moves them when the
 * media store changes too (docs/deployment.md, "From one machine to several"). */
#include "cli/cli.h"

#include "core/util.h"
#include "store/datalock.h"
#include "store/store.h"
#include "store/store_copy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
    fputs("usage: inkwell migrate --from SOURCE --to TARGET\n"
          "  copies every user, key, session, record, revision, template, tag, draft, usage,\n"
          "  webhook and idempotency answer from SOURCE into TARGET, an empty database, with\n"
          "  the servers stopped; each is a SQLite data directory or a postgres:// URL:\n"
          "    inkwell migrate --from /var/lib/inkwell --to postgres://user@host/inkwell\n"
          "    inkwell migrate --from postgres://user@host/inkwell --to /srv/inkwell-data\n"
          "  ids, timestamps, key and session hashes are kept; each table's count and checksum\n"
          "  are verified before the commit. Pictures: inkwell media copy.\n",
          f);
}

static bool is_pg(const char *s)
{
    return strncmp(s, "postgres://", 11) == 0 || strncmp(s, "postgresql://", 13) == 0;
}

/* One side: its store, open with its schema up to date. dir: a data directory (created
 * when `create`), whose lock is taken into *lock. */
static store_t *open_side(const char *where, bool create, int *lock, store_conn_t **c,
                          const char *role)
{
    char err[512];
    char *url = NULL;
    *lock = -1;
    if (is_pg(where)) {
        url = xstrdup(where);
    } else if (strstr(where, "://")) {
        fprintf(stderr, "inkwell: migrate: %s '%s' is neither a data directory nor a"
                " postgres:// URL\n", role, where);
        return NULL;
    } else {
        struct stat st;
        if (create && stat(where, &st) != 0 && mkdir(where, 0755) != 0) {
            fprintf(stderr, "inkwell: migrate: cannot create %s: %s\n", where, strerror(errno));
            return NULL;
        }
        if (stat(where, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "inkwell: migrate: %s '%s' is not a data directory\n", role, where);
            return NULL;
        }
        buf_t b;
        buf_init(&b);
        buf_printf(&b, "%s/inkwell.db", where);
        if (!create && stat(buf_cstr(&b), &st) != 0) {
            fprintf(stderr, "inkwell: migrate: no database in %s (%s)\n", where, buf_cstr(&b));
            buf_free(&b);
            return NULL;
        }
        if ((*lock = datalock_take(where, err, sizeof(err))) < 0) {
            fprintf(stderr, "inkwell: migrate: %s (stop the server first)\n", err);
            buf_free(&b);
            return NULL;
        }
        url = buf_steal(&b);
    }
    store_t *s = store_open(url, err, sizeof(err));
    free(url);
    if (!s || !(*c = store_conn(s, err, sizeof(err)))) {
        fprintf(stderr, "inkwell: migrate: cannot open the %s database: %s\n", role, err);
        store_close(s);
        return NULL;
    }
    if (store_migrate(*c) != STORE_OK) {
        fprintf(stderr, "inkwell: migrate: cannot open the %s database (see above)\n", role);
        store_close(s);
        return NULL;
    }
    return s;
}

int cli_migrate(int argc, char **argv)
{
    const char *from = NULL, *to = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (cli_take(argc, argv, &i, "--from", &v)) {
            from = v;
        } else if (cli_take(argc, argv, &i, "--to", &v)) {
            to = v;
        } else {
            fprintf(stderr, "inkwell: migrate: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!from || !*from || !to || !*to) {
        usage(stderr);
        return 2;
    }
    if (is_pg(from) == is_pg(to)) {
        fputs("inkwell: migrate: one side must be a SQLite data directory and the other a"
              " postgres:// URL\n", stderr);
        return 2;
    }
    int lf = -1, lt = -1, rc = 1;
    store_conn_t *cf = NULL, *ct = NULL;
    store_t *sf = open_side(from, false, &lf, &cf, "source");
    store_t *st = sf ? open_side(to, true, &lt, &ct, "target") : NULL;
    if (sf && st) {
        char err[512];
        fprintf(stderr, "inkwell: migrate: %s database -> %s database\n",
                is_pg(from) ? "postgres" : "sqlite", is_pg(to) ? "postgres" : "sqlite");
        if (store_copy(cf, ct, stderr, err, sizeof(err)) == 0)
            rc = 0;
        else
            fprintf(stderr, "inkwell: migrate: %s\n", err);
    }
    store_close(st);
    store_close(sf);
    datalock_release(lt);
    datalock_release(lf);
    return rc;
}
