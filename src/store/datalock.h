/* datalock.h — one server per SQLite data directory: `serve` holds an exclusive
 * flock(2) on <data-dir>/inkwell.lock for as long as it runs. The kernel drops the lock
 * when the process ends, however it ends (kill -9 included), so a stale lock file never
 * blocks a restart. The key CLI never takes it, so it works beside a running server. */
#ifndef INK_DATALOCK_H
#define INK_DATALOCK_H

#include <stddef.h>

#define DATALOCK_FILE "inkwell.lock"

/* Takes the lock: its file descriptor (kept open until datalock_release), or -1 with
 * err set — naming the directory — when another process holds it or it cannot be
 * taken. */
int datalock_take(const char *data_dir, char *err, size_t errlen);
void datalock_release(int fd);

#endif
