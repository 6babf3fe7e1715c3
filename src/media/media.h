/* media.h — where generated pictures live. Files under <data-dir>/media, each
 * named by a random key of 128 bits (32 hex digits). Written atomically: temporary
 * file, fsync, rename, fsync of the directory. Several server processes may share
 * one media directory (a shared file system). */
#ifndef INK_MEDIA_H
#define INK_MEDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MEDIA_KEY_LEN 32

typedef struct media media_t;

media_t *media_open(const char *dir, char *err, size_t errlen);
void media_close(media_t *m);
/* Stores data under a new key (key gets MEDIA_KEY_LEN hex digits + NUL). 0, or
 * MEDIA_FULL when the file system has no room (nothing is left behind), or -1. */
#define MEDIA_FULL (-2)
int media_put(media_t *m, const void *data, size_t n, char key[MEDIA_KEY_LEN + 1]);
/* The error a generation ends with when its picture found no room (jobs.c writes it,
 * records.c answers a waiting client 503 rather than 502 for it). */
#define MEDIA_FULL_ERROR "The picture could not be stored: the server's storage is full."
/* True when the media directory's file system has less than reserve bytes free for
 * this process (statvfs f_bavail). */
bool media_space_low(media_t *m, uint64_t reserve);
/* Removes the temporary files (".<key>.tmp-<salt>") that writes interrupted by a
 * crash left behind, when older than min_age_s seconds (0 = all: only one process
 * uses the directory; with a shared directory another process may be writing one).
 * Returns how many were removed. */
int media_clean_temp(media_t *m, double min_age_s);
/* Removes the pictures (<key>.png) no record refers to — a crash between a picture's
 * write and its record's commit leaves one — when older than min_age_s (as above)
 * counted back from keys_read_at: when the keys were read (taken before the read
 * began), so that a picture whose record committed after that read is never taken
 * for an orphan unless it was written min_age_s before the read.
 * keys: every media key records refer to, sorted by strcmp. Returns how many. */
int media_sweep(media_t *m, const char *const *keys, size_t n, double min_age_s,
                time_t keys_read_at);
/* Removes the file; 0 when removed or already gone. */
int media_remove(media_t *m, const char *key);
/* True when key has the exact form of a media key (so it cannot name a path). */
bool media_key_valid(const char *key, size_t n);
/* Opens the file for reading: 0 with *fd and *size, -1 when missing or key invalid. */
int media_open_file(media_t *m, const char *key, int *fd, uint64_t *size);

#endif
