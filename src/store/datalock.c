/* datalock.c — the data-directory lock of datalock.h. */
#include "store/datalock.h"

#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int datalock_take(const char *data_dir, char *err, size_t errlen)
{
    buf_t path;
    buf_init(&path);
    buf_printf(&path, "%s/%s", data_dir, DATALOCK_FILE);
    int fd = open(buf_cstr(&path), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open the lock file of data directory %s: %s", data_dir,
                 strerror(errno));
        buf_free(&path);
        return -1;
    }
    buf_free(&path);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            snprintf(err, errlen,
                     "another inkwell server is already running on data directory %s "
                     "(it holds %s/%s); stop it first, or give this one its own --data-dir",
                     data_dir, data_dir, DATALOCK_FILE);
        else
            snprintf(err, errlen, "cannot lock data directory %s: %s", data_dir, strerror(e));
        return -1;
    }
    /* the holder's pid, for people; the lock itself is the flock */
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0) {
        /* a full disk: the lock still holds */
    }
    return fd;
}

void datalock_release(int fd)
{
    if (fd >= 0)
        close(fd);
}
