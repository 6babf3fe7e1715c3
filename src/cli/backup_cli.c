/* backup_cli.c — inkwell backup --to FILE [--data-dir DIR | --database URL].
 *
 * SQLite: FILE gets a consistent copy of the database (store_sqlite_backup: the online
 * backup API, safe while the server runs), then FILE.media/ gets every picture that
 * copy refers to (hard links when on the same file system, else copies; pictures are
 * never rewritten, so a link is a copy). With an s3:// media store (--media-store) the
 * pictures the copy refers to are downloaded from the bucket into FILE.media/ instead,
 * so a backup holds its pictures whichever the store. Restoring is copying both back
 * with the server stopped (docs/deployment.md; `inkwell media copy` puts a directory
 * back into a bucket). PostgreSQL: pg_dump does this job; the command
 * says so and exits 2. */
#include "cli/cli.h"

#include "core/config.h"
#include "core/util.h"
#include "media/media.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(void)
{
    fputs("usage: inkwell backup --to FILE [--data-dir DIR | --database URL]\n"
          "  writes a consistent copy of the SQLite database to FILE and the pictures it\n"
          "  refers to to FILE.media/ (safe while the server runs; with an s3:// --media-store\n"
          "  they are downloaded from the bucket)\n",
          stderr);
}

typedef struct {
    const char *from, *to; /* media directories */
    long copied, missing, failed;
    media_t *remote;       /* an s3:// store: from is unused */
} media_copy_t;

/* A picture of an object store into to/<key>.png (written whole, then renamed). */
static int fetch_remote(media_copy_t *m, const char *key, const char *to)
{
    buf_t b;
    buf_init(&b);
    int rc = media_get(m->remote, key, &b);
    if (rc != 0) {
        buf_free(&b);
        return rc;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", to);
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    ok = f && fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
    if (f && fclose(f) != 0)
        ok = false;
    ok = ok && rename(tmp, to) == 0;
    if (!ok)
        unlink(tmp);
    buf_free(&b);
    return ok ? 0 : -1;
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                rc = -1;
                break;
            }
            off += w;
        }
        if (rc)
            break;
    }
    if (n < 0 || fsync(out) != 0)
        rc = -1;
    close(in);
    if (close(out) != 0)
        rc = -1;
    return rc;
}

static void each_key(void *arg, const char *key)
{
    media_copy_t *m = arg;
    if (!key || !media_key_valid(key, strlen(key)))
        return;
    char from[4096], to[4096];
    snprintf(from, sizeof(from), "%s/%s.png", m->from, key);
    snprintf(to, sizeof(to), "%s/%s.png", m->to, key);
    struct stat st;
    if (stat(to, &st) == 0) {
        m->copied++; /* already there from an earlier backup to the same place */
        return;
    }
    if (m->remote) {
        int rc = fetch_remote(m, key, to);
        if (rc == 0)
            m->copied++;
        else if (rc == MEDIA_MISSING)
            m->missing++; /* deleted after the snapshot (as below) */
        else {
            m->failed++;
            fprintf(stderr, "inkwell: cannot download picture %s\n", key);
        }
        return;
    }
    if (link(from, to) == 0 || (errno != ENOENT && copy_file(from, to) == 0)) {
        m->copied++;
    } else if (errno == ENOENT || access(from, F_OK) != 0) {
        /* deleted by the server after the snapshot was taken: its record is in the
         * backup, its picture is not (the record was deleted right after too) */
        m->missing++;
    } else {
        unlink(to);
        m->failed++;
        fprintf(stderr, "inkwell: cannot copy picture %s: %s\n", key, strerror(errno));
    }
}

int cli_backup(int argc, char **argv)
{
    const char *to = NULL;
    char **rest = xcalloc((size_t)argc + 1, sizeof(char *));
    int nrest = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--to") == 0 && i + 1 < argc)
            to = argv[++i];
        else if (strncmp(argv[i], "--to=", 5) == 0)
            to = argv[i] + 5;
        else
            rest[nrest++] = argv[i];
    }
    cfg_t cfg;
    char err[512];
    bool help = false;
    int rc = 2;
    char *url = NULL;
    if (cfg_load(&cfg, nrest, rest, &help, err, sizeof(err)) != 0) {
        fprintf(stderr, "inkwell: %s\n", err);
        goto out;
    }
    if (help || !to || !*to) {
        usage();
        rc = help ? 0 : 2;
        goto out;
    }
    url = cfg_database_url(&cfg);
    if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
        fputs("inkwell: backup copies SQLite databases; for PostgreSQL use pg_dump, and copy the\n"
              "media directory (<data-dir>/media) after it (see docs/deployment.md, Backups)\n",
              stderr);
        goto out;
    }
    const char *path = strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url;
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "inkwell: no database at %s\n", path);
        rc = 1;
        goto out;
    }
    buf_t from, dir;
    buf_init(&from);
    buf_init(&dir);
    buf_printf(&from, "%s/media", cfg.data_dir);
    buf_printf(&dir, "%s.media", to);
    if (mkdir(buf_cstr(&dir), 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "inkwell: cannot create %s: %s\n", buf_cstr(&dir), strerror(errno));
        buf_free(&from);
        buf_free(&dir);
        rc = 1;
        goto out;
    }
    media_copy_t m = {buf_cstr(&from), buf_cstr(&dir), 0, 0, 0, NULL};
    if (media_cfg_remote(&cfg) && !(m.remote = media_open_cfg(&cfg, err, sizeof(err)))) {
        fprintf(stderr, "inkwell: %s\n", err);
        buf_free(&from);
        buf_free(&dir);
        rc = 1;
        goto out;
    }
    if (store_sqlite_backup(path, to, each_key, &m, err, sizeof(err)) != 0) {
        fprintf(stderr, "inkwell: %s\n", err);
        rc = 1;
    } else if (m.failed) {
        rc = 1;
    } else {
        printf("backup: %s (database) and %s/ (%ld pictures%s)\n", to, buf_cstr(&dir), m.copied,
               m.missing ? ", some deleted meanwhile" : "");
        rc = 0;
    }
    media_close(m.remote);
    buf_free(&from);
    buf_free(&dir);
out:
    free(url);
    free(rest);
    cfg_free(&cfg);
    return rc;
}
