/* media_dir.c — the directory store (media_int.h): pictures as files named by their keys.
 *
 * put: write <key>.tmp-<random> in the media directory, fsync, rename to <key>.png,
 * fsync the directory. A crash leaves at most a temporary file, never a half-written
 * <key>.png. Keys are checked to be exactly 32 lowercase hex digits before any path
 * is built from them, so no request can name a file outside the directory. */
#include "media/media_int.h"

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

typedef struct {
    char *dir;
    int dirfd;
} dir_t;

#define D(m) ((dir_t *)(m)->impl)

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

static const media_ops_t dir_ops;

media_t *media_dir_open(const char *dir, char *err, size_t errlen)
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
    dir_t *d = xcalloc(1, sizeof(*d));
    d->dir = xstrdup(dir);
    d->dirfd = fd;
    media_t *m = xcalloc(1, sizeof(*m));
    m->ops = &dir_ops;
    m->impl = d;
    return m;
}

static void dir_close(media_t *m)
{
    close(D(m)->dirfd);
    free(D(m)->dir);
    free(D(m));
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

static int dir_put(media_t *m, const char *k, const void *data, size_t n)
{
    char tmpname[96], name[48], salt[17];
    random_hex(salt, 8);
    snprintf(tmpname, sizeof(tmpname), ".%s.tmp-%s", k, salt);
    snprintf(name, sizeof(name), "%s.png", k);
    int fd = openat(D(m)->dirfd, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        log_error("media: cannot create a file: %s", strerror(e));
        return e == ENOSPC || e == EDQUOT ? MEDIA_FULL : -1;
    }
    if (write_all(fd, data, n) != 0 || fsync(fd) != 0) {
        int e = errno;
        log_error("media: cannot write a file: %s", strerror(e));
        close(fd);
        unlinkat(D(m)->dirfd, tmpname, 0);
        return e == ENOSPC || e == EDQUOT ? MEDIA_FULL : -1;
    }
    close(fd);
    if (renameat(D(m)->dirfd, tmpname, D(m)->dirfd, name) != 0) {
        log_error("media: cannot rename a file: %s", strerror(errno));
        unlinkat(D(m)->dirfd, tmpname, 0);
        return -1;
    }
    fsync(D(m)->dirfd);
    return 0;
}

static int dir_remove(media_t *m, const char *key)
{
    char name[48];
    snprintf(name, sizeof(name), "%s.png", key);
    if (unlinkat(D(m)->dirfd, name, 0) != 0 && errno != ENOENT)
        return -1;
    return 0;
}

static int dir_open_file(media_t *m, const char *key, int *fd, uint64_t *size)
{
    char name[48];
    snprintf(name, sizeof(name), "%s.png", key);
    int f = openat(D(m)->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (f < 0)
        return errno == ENOENT || errno == ELOOP ? MEDIA_MISSING : MEDIA_UNAVAILABLE;
    struct stat st;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(f);
        return MEDIA_MISSING;
    }
    *fd = f;
    *size = (uint64_t)st.st_size;
    return 0;
}

/* ---- full disks and interrupted writes ---------------------------------------------- */

static bool dir_space_low(media_t *m, uint64_t reserve)
{
    struct statvfs st;
    if (reserve == 0 || fstatvfs(D(m)->dirfd, &st) != 0)
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
    int fd = dup(D(m)->dirfd);
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
        if (fstatat(D(m)->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (cutoff > 0 && st.st_mtime >= cutoff)
            continue;
        if (unlinkat(D(m)->dirfd, e->d_name, 0) == 0)
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

static int dir_clean_temp(media_t *m, double min_age_s)
{
    int removed = scan(m, cutoff_of(time(NULL), min_age_s), want_temp, NULL);
    if (removed)
        log_info("media: %d temporary file(s) of interrupted writes removed", removed);
    return removed;
}

/* Each "<32 hex>.png" regular file with its last change. */
static int dir_list(media_t *m, media_each_fn fn, void *arg)
{
    int fd = dup(D(m)->dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strlen(name) != MEDIA_KEY_LEN + 4 || strcmp(name + MEDIA_KEY_LEN, ".png") != 0 ||
            !media_key_valid(name, MEDIA_KEY_LEN))
            continue;
        struct stat st;
        if (fstatat(D(m)->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        char key[MEDIA_KEY_LEN + 1];
        memcpy(key, name, MEDIA_KEY_LEN);
        key[MEDIA_KEY_LEN] = '\0';
        if (fn(arg, key, st.st_mtime) != 0)
            break;
    }
    closedir(d);
    return 0;
}

/* The whole file as an object (media_get). */
static int dir_get(media_t *m, const char *key, buf_t *out)
{
    int fd;
    uint64_t size;
    int rc = dir_open_file(m, key, &fd, &size);
    if (rc != 0)
        return rc;
    buf_reserve(out, (size_t)size);
    for (;;) {
        buf_reserve(out, 65536);
        ssize_t k = read(fd, out->data + out->len, 65536);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            close(fd);
            return MEDIA_UNAVAILABLE;
        }
        if (k == 0)
            break;
        out->len += (size_t)k;
        out->data[out->len] = '\0';
    }
    close(fd);
    return 0;
}

static const media_ops_t dir_ops = {
    .name = "directory",
    .put = dir_put,
    .get = dir_get,
    .remove = dir_remove,
    .list = dir_list,
    .close = dir_close,
    .open_file = dir_open_file,
    .space_low = dir_space_low,
    .clean_temp = dir_clean_temp,
};
