/* media_cli.c — inkwell media copy --from STORE --to STORE (API.md §25).
 *
 * STORE: a directory or s3://BUCKET/PREFIX (the --s3-* flags and AWS_* credentials
 * serve whichever side is s3://). Every picture of the source (objects named as inkwell
 * names pictures) is read, its SHA-256 taken, and written to the destination unless an
 * object of that key with the same SHA-256 is there already; each one written is read
 * back and its SHA-256 compared. Writes are whole or absent on both stores (a
 * directory's temporary file and rename, an S3 PUT), so an interrupted copy is resumed
 * by running the same command again: what is there and verified is skipped. Run it
 * with the servers stopped (or again after they stop), then start them on the new
 * store. A progress line every 100 pictures and at the end on standard error. */
#include "cli/cli.h"

#include "core/config.h"
#include "core/util.h"
#include "media/media.h"
#include "media/s3sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    fputs("usage: inkwell media copy --from STORE --to STORE [--s3-endpoint URL] [--s3-region R]\n"
          "                          [--s3-path-style] [--s3-access-key ID --s3-secret-key S]\n"
          "  STORE: a directory (e.g. DATA_DIR/media) or s3://BUCKET/PREFIX; copies every\n"
          "  picture, skips those already there with the same SHA-256, verifies each copy;\n"
          "  run again to resume\n",
          stderr);
}

typedef struct {
    char (*keys)[MEDIA_KEY_LEN + 1];
    size_t n, cap;
} keylist_t;

static int collect(void *arg, const char *key, time_t mtime)
{
    (void)mtime;
    keylist_t *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->keys = xrealloc(l->keys, l->cap * sizeof(*l->keys));
    }
    memcpy(l->keys[l->n++], key, MEDIA_KEY_LEN + 1);
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(a, b);
}

static media_t *open_side(const cfg_t *cfg, const char *store, char *err, size_t errlen)
{
    media_conf_t c = {store, cfg->s3_endpoint, cfg->s3_region,
                      cfg_switch_value(cfg->s3_path_style) == 1, cfg->s3_access_key,
                      cfg->s3_secret_key};
    return media_open_conf(&c, err, errlen);
}

/* The SHA-256 of the destination's object of key, or "" when it has none. -1 when the
 * destination could not be read. */
static int dest_sum(media_t *to, const char *key, char sum[65])
{
    buf_t b;
    buf_init(&b);
    int rc = media_get(to, key, &b);
    sum[0] = '\0';
    if (rc == 0)
        s3_sha256_hex(b.data, b.len, sum);
    buf_free(&b);
    return rc == 0 || rc == MEDIA_MISSING ? 0 : -1;
}

static int copy_all(media_t *from, media_t *to)
{
    keylist_t src = {0}, dst = {0};
    if (media_list(from, collect, &src) != 0) {
        fprintf(stderr, "inkwell: the source could not be listed\n");
        free(src.keys);
        return 1;
    }
    if (media_list(to, collect, &dst) != 0) {
        fprintf(stderr, "inkwell: the destination could not be listed\n");
        free(src.keys);
        free(dst.keys);
        return 1;
    }
    if (dst.n)
        qsort(dst.keys, dst.n, sizeof(*dst.keys), cmp_key);
    long copied = 0, present = 0, failed = 0, gone = 0;
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < src.n; i++) {
        const char *key = src.keys[i];
        buf_reset(&b);
        int rc = media_get(from, key, &b);
        if (rc == MEDIA_MISSING) {
            gone++; /* removed since the listing (a server still running) */
            continue;
        }
        char sum[65], got[65];
        if (rc != 0) {
            fprintf(stderr, "inkwell: %s: cannot be read from the source\n", key);
            failed++;
            continue;
        }
        s3_sha256_hex(b.data, b.len, sum);
        bool there = dst.n && bsearch(key, dst.keys, dst.n, sizeof(*dst.keys), cmp_key);
        if (there && dest_sum(to, key, got) == 0 && strcmp(got, sum) == 0) {
            present++;
        } else if (media_put_key(to, key, b.data, b.len) != 0) {
            fprintf(stderr, "inkwell: %s: cannot be written to the destination\n", key);
            failed++;
        } else if (dest_sum(to, key, got) != 0 || strcmp(got, sum) != 0) {
            fprintf(stderr, "inkwell: %s: the copy's SHA-256 differs from the source's\n", key);
            failed++;
        } else {
            copied++;
        }
        if ((i + 1) % 100 == 0)
            fprintf(stderr, "media copy: %zu/%zu: %ld copied, %ld already there, %ld failed\n",
                    i + 1, src.n, copied, present, failed);
    }
    buf_free(&b);
    fprintf(stderr,
            "media copy: %zu/%zu: %ld copied, %ld already there, %ld failed%s; every copy "
            "verified by SHA-256\n",
            src.n, src.n, copied, present, failed,
            gone ? " (some removed from the source meanwhile)" : "");
    printf("copied %ld, already there %ld, failed %ld\n", copied, present, failed);
    free(src.keys);
    free(dst.keys);
    return failed ? 1 : 0;
}

int cli_media(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "copy") != 0) {
        usage();
        return 2;
    }
    const char *from = NULL, *to = NULL;
    char **rest = xcalloc((size_t)argc + 1, sizeof(char *));
    int nrest = 0;
    for (int i = 2; i < argc; i++) {
        const char *v;
        if (cli_take(argc, argv, &i, "--from", &v))
            from = v;
        else if (cli_take(argc, argv, &i, "--to", &v))
            to = v;
        else
            rest[nrest++] = argv[i];
    }
    cfg_t cfg;
    char err[512];
    bool help = false;
    int rc = 2;
    media_t *mf = NULL, *mt = NULL;
    if (cfg_load(&cfg, nrest, rest, &help, err, sizeof(err)) != 0) {
        fprintf(stderr, "inkwell: %s\n", err);
        goto out;
    }
    if (help || !from || !*from || !to || !*to) {
        usage();
        rc = help ? 0 : 2;
        goto out;
    }
    if (strcmp(from, to) == 0) {
        fprintf(stderr, "inkwell: --from and --to name the same store\n");
        goto out;
    }
    rc = 1;
    if (!(mf = open_side(&cfg, from, err, sizeof(err))) ||
        !(mt = open_side(&cfg, to, err, sizeof(err)))) {
        fprintf(stderr, "inkwell: %s\n", err);
        goto out;
    }
    rc = copy_all(mf, mt);
out:
    media_close(mf);
    media_close(mt);
    free(rest);
    cfg_free(&cfg);
    return rc;
}
