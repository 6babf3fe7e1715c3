/* media.c — generated files on disk, named by random keys.
 *
 * put: write <key>.tmp-<random> in the media directory, fsync, rename to <key>.png,
 * fsync the directory. A crash leaves at most a temporary file, never a half-written
 * <key>.png. Keys are checked to be exactly 32 lowercase hex digits before any path
 * is built from them, so no request can name a file outside the directory. */
#include "media/media.h"

#include "core/log.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

struct media {
    char *dir;
    int dirfd;
};

static int mkdir_p(const char *path)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(tmp))
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

media_t *media_open(const char *dir, char *err, size_t errlen)
{
    if (mkdir_p(dir) != 0) {
        snprintf(err, errlen, "cannot create media directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open media directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    media_t *m = xcalloc(1, sizeof(*m));
    m->dir = xstrdup(dir);
    m->dirfd = fd;
    return m;
}

void media_close(media_t *m)
{
    if (!m)
        return;
    close(m->dirfd);
    free(m->dir);
    free(m);
}

bool media_key_valid(const char *key, size_t n)
{
    if (n != MEDIA_KEY_LEN)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

static int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int media_put(media_t *m, const void *data, size_t n, char key[MEDIA_KEY_LEN + 1])
{
    char k[MEDIA_KEY_LEN + 1], tmpname[96], name[48], salt[17];
    random_hex(k, MEDIA_KEY_LEN / 2);
    random_hex(salt, 8);
    snprintf(tmpname, sizeof(tmpname), ".%s.tmp-%s", k, salt);
    snprintf(name, sizeof(name), "%s.png", k);
    int fd = openat(m->dirfd, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        log_error("media: cannot create a file: %s", strerror(e));
        return e == ENOSPC || e == EDQUOT ? MEDIA_FULL : -1;
    }
    if (write_all(fd, data, n) != 0 || fsync(fd) != 0) {
        int e = errno;
        log_error("media: cannot write a file: %s", strerror(e));
        close(fd);
        unlinkat(m->dirfd, tmpname, 0);
        return e == ENOSPC || e == EDQUOT ? MEDIA_FULL : -1;
    }
    close(fd);
    if (renameat(m->dirfd, tmpname, m->dirfd, name) != 0) {
        log_error("media: cannot rename a file: %s", strerror(errno));
        unlinkat(m->dirfd, tmpname, 0);
        return -1;
    }
    fsync(m->dirfd);
    memcpy(key, k, sizeof(k));
    return 0;
}

int media_remove(media_t *m, const char *key)
{
    if (!key || !media_key_valid(key, strlen(key)))
        return -1;
    char name[48];
    snprintf(name, sizeof(name), "%s.png", key);
    if (unlinkat(m->dirfd, name, 0) != 0 && errno != ENOENT)
        return -1;
    return 0;
}

int media_open_file(media_t *m, const char *key, int *fd, uint64_t *size)
{
    if (!media_key_valid(key, strlen(key)))
        return -1;
    char name[48];
    snprintf(name, sizeof(name), "%s.png", key);
    int f = openat(m->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (f < 0)
        return -1;
    struct stat st;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(f);
        return -1;
    }
    *fd = f;
    *size = (uint64_t)st.st_size;
    return 0;
}

/* ---- full disks and interrupted writes ---------------------------------------------- */

bool media_space_low(media_t *m, uint64_t reserve)
{
    struct statvfs st;
    if (reserve == 0 || fstatvfs(m->dirfd, &st) != 0)
        return false;
    return (uint64_t)st.f_bavail * st.f_frsize < reserve;
}

/* ".<32 hex>.tmp-<anything>": what media_put writes before its rename. */
static bool temp_name(const char *name)
{
    return name[0] == '.' && media_key_valid(name + 1, MEDIA_KEY_LEN) &&
           strncmp(name + 1 + MEDIA_KEY_LEN, ".tmp-", 5) == 0;
}

/* Removes every regular file of the directory last changed before cutoff (0: any)
 * whose name passes want. Returns how many. */
static int scan(media_t *m, time_t cutoff, bool (*want)(const char *name, void *arg), void *arg)
{
    int fd = dup(m->dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    rewinddir(d);
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!want(e->d_name, arg))
            continue;
        struct stat st;
        if (fstatat(m->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (cutoff > 0 && st.st_mtime >= cutoff)
            continue;
        if (unlinkat(m->dirfd, e->d_name, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

static bool want_temp(const char *name, void *arg)
{
    (void)arg;
    return strlen(name) >= 1 + MEDIA_KEY_LEN + 5 && temp_name(name);
}

static time_t cutoff_of(time_t ref, double min_age_s)
{
    return min_age_s > 0 ? ref - (time_t)min_age_s : 0;
}

int media_clean_temp(media_t *m, double min_age_s)
{
    int removed = scan(m, cutoff_of(time(NULL), min_age_s), want_temp, NULL);
    if (removed)
        log_info("media: %d temporary file(s) of interrupted writes removed", removed);
    return removed;
}

typedef struct {
    const char *const *keys;
    size_t n;
} keyset_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "<32 hex>.png" that no record refers to */
static bool want_orphan(const char *name, void *arg)
{
    keyset_t *ks = arg;
    if (strlen(name) != MEDIA_KEY_LEN + 4 || strcmp(name + MEDIA_KEY_LEN, ".png") != 0 ||
        !media_key_valid(name, MEDIA_KEY_LEN))
        return false;
    char key[MEDIA_KEY_LEN + 1];
    memcpy(key, name, MEDIA_KEY_LEN);
    key[MEDIA_KEY_LEN] = '\0';
    const char *k = key;
    return ks->n == 0 || !bsearch(&k, ks->keys, ks->n, sizeof(*ks->keys), cmp_str); /* no keys: NULL */
}

int media_sweep(media_t *m, const char *const *keys, size_t n, double min_age_s,
                time_t keys_read_at)
{
    keyset_t ks = {keys, n};
    int removed = scan(m, cutoff_of(keys_read_at, min_age_s), want_orphan, &ks);
    if (removed)
        log_info("media: %d picture(s) without a record removed", removed);
    return removed;
}
