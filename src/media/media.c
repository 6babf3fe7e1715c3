/* media.c — the one owner of the media store (media.h): checks keys before any store
 * sees them, makes new keys, sweeps through a store's listing; the stores themselves
 * are media_dir.c and media_s3.c behind the ops table (media_int.h). */
#include "media/media_int.h"

#include "core/config.h"
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

media_t *media_open(const char *dir, char *err, size_t errlen)
{
    return media_dir_open(dir, err, errlen);
}

media_t *media_open_conf(const media_conf_t *c, char *err, size_t errlen)
{
    if (strncmp(c->store, "s3://", 5) == 0)
        return media_s3_open(c, err, errlen);
    if (!c->store[0]) {
        snprintf(err, errlen, "no media store given");
        return NULL;
    }
    if (strstr(c->store, "://")) {
        snprintf(err, errlen, "media store must be a directory or s3://BUCKET/PREFIX");
        return NULL;
    }
    return media_dir_open(c->store, err, errlen);
}

bool media_cfg_remote(const cfg_t *cfg)
{
    return strncmp(cfg->media_store, "s3://", 5) == 0;
}

media_t *media_open_cfg(const cfg_t *cfg, char *err, size_t errlen)
{
    buf_t dir;
    buf_init(&dir);
    if (!cfg->media_store[0])
        buf_printf(&dir, "%s/media", cfg->data_dir);
    else
        buf_puts(&dir, cfg->media_store);
    media_conf_t c = {buf_cstr(&dir), cfg->s3_endpoint, cfg->s3_region,
                      cfg_switch_value(cfg->s3_path_style) == 1, cfg->s3_access_key,
                      cfg->s3_secret_key};
    media_t *m = media_open_conf(&c, err, errlen);
    if (m && !m->ops->space_low)
        m->space_dir = xstrdup(cfg->data_dir); /* the database's disk still fills */
    buf_free(&dir);
    return m;
}

void media_close(media_t *m)
{
    if (!m)
        return;
    m->ops->close(m);
    free(m->space_dir);
    free(m);
}

const char *media_kind(const media_t *m)
{
    return m->ops->name;
}

bool media_key_valid(const char *key, size_t n)
{
    if (!key || n != MEDIA_KEY_LEN)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

static bool valid(const char *key)
{
    return key && media_key_valid(key, strlen(key));
}

int media_put(media_t *m, const void *data, size_t n, char key[MEDIA_KEY_LEN + 1])
{
    char k[MEDIA_KEY_LEN + 1];
    random_hex(k, MEDIA_KEY_LEN / 2);
    int rc = m->ops->put(m, k, data, n);
    if (rc == 0)
        memcpy(key, k, sizeof(k));
    return rc;
}

int media_put_key(media_t *m, const char *key, const void *data, size_t n)
{
    if (!valid(key))
        return -1;
    return m->ops->put(m, key, data, n);
}

int media_get(media_t *m, const char *key, buf_t *out)
{
    if (!valid(key))
        return MEDIA_MISSING;
    return m->ops->get(m, key, out);
}

int media_remove(media_t *m, const char *key)
{
    if (!valid(key))
        return -1;
    return m->ops->remove(m, key);
}

int media_open_file(media_t *m, const char *key, int *fd, uint64_t *size)
{
    if (!valid(key))
        return MEDIA_MISSING;
    if (m->ops->open_file)
        return m->ops->open_file(m, key, fd, size);
    buf_t b;
    buf_init(&b);
    int rc = m->ops->get(m, key, &b);
    if (rc != 0) {
        buf_free(&b);
        return rc;
    }
    int f = memfd_create("inkwell-media", MFD_CLOEXEC);
    size_t off = 0;
    while (f >= 0 && off < b.len) {
        ssize_t w = write(f, b.data + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(f);
            f = -1;
            break;
        }
        off += (size_t)w;
    }
    if (f < 0 || lseek(f, 0, SEEK_SET) != 0) {
        if (f >= 0)
            close(f);
        buf_free(&b);
        return MEDIA_UNAVAILABLE;
    }
    *fd = f;
    *size = b.len;
    buf_free(&b);
    return 0;
}

bool media_space_low(media_t *m, uint64_t reserve)
{
    if (m->ops->space_low)
        return m->ops->space_low(m, reserve);
    struct statvfs st;
    if (reserve == 0 || !m->space_dir || statvfs(m->space_dir, &st) != 0)
        return false;
    return (uint64_t)st.f_bavail * st.f_frsize < reserve;
}

int media_clean_temp(media_t *m, double min_age_s)
{
    return m->ops->clean_temp ? m->ops->clean_temp(m, min_age_s) : 0;
}

int media_list(media_t *m, media_each_fn fn, void *arg)
{
    return m->ops->list(m, fn, arg);
}

bool media_can_presign(const media_t *m)
{
    return m->ops->presign != NULL;
}

int media_presign(media_t *m, const char *key, int ttl_s, buf_t *url)
{
    if (!m->ops->presign || !valid(key))
        return -1;
    if (ttl_s <= 0 || ttl_s > 900)
        ttl_s = 900;
    return m->ops->presign(m, key, ttl_s, time(NULL), url);
}

/* ---- the sweep: every picture no record names, older than the age ---------------- */

typedef struct {
    const char *const *keys;
    size_t n;
    time_t cutoff; /* 0: any age */
    char (*orphans)[MEDIA_KEY_LEN + 1];
    size_t norphans, cap;
} sweep_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int sweep_one(void *arg, const char *key, time_t mtime)
{
    sweep_t *s = arg;
    if (s->cutoff > 0 && (mtime >= s->cutoff || mtime <= 0))
        return 0; /* young, or of an unknown age (an unreadable LastModified): kept */
    if (s->n && bsearch(&key, s->keys, s->n, sizeof(*s->keys), cmp_str))
        return 0;
    if (s->norphans == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->orphans = xrealloc(s->orphans, s->cap * sizeof(*s->orphans));
    }
    memcpy(s->orphans[s->norphans++], key, MEDIA_KEY_LEN + 1);
    return 0;
}

int media_sweep(media_t *m, const char *const *keys, size_t n, double min_age_s,
                time_t keys_read_at)
{
    sweep_t s = {keys, n, min_age_s > 0 ? keys_read_at - (time_t)min_age_s : 0, NULL, 0, 0};
    if (m->ops->list(m, sweep_one, &s) != 0)
        log_warn("media: the %s store could not be listed whole: swept in part", m->ops->name);
    int removed = 0;
    for (size_t i = 0; i < s.norphans; i++)
        if (m->ops->remove(m, s.orphans[i]) == 0)
            removed++;
    free(s.orphans);
    if (removed)
        log_info("media: %d picture(s) without a record removed", removed);
    return removed;
}
