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
#include <sys/stat.h>
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
        log_error("media: cannot create a file: %s", strerror(errno));
        return -1;
    }
    if (write_all(fd, data, n) != 0 || fsync(fd) != 0) {
        log_error("media: cannot write a file: %s", strerror(errno));
        close(fd);
        unlinkat(m->dirfd, tmpname, 0);
        return -1;
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
