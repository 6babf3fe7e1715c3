/* media.h — where generated pictures live. Files under <data-dir>/media, each
 * named by a random key of 128 bits (32 hex digits). Written atomically: temporary
 * file, fsync, rename, fsync of the directory. Several server processes may share
 * one media directory (a shared file system). */
#ifndef INK_MEDIA_H
#define INK_MEDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEDIA_KEY_LEN 32

typedef struct media media_t;

media_t *media_open(const char *dir, char *err, size_t errlen);
void media_close(media_t *m);
/* Stores data under a new key (key gets MEDIA_KEY_LEN hex digits + NUL). 0 or -1. */
int media_put(media_t *m, const void *data, size_t n, char key[MEDIA_KEY_LEN + 1]);
/* Removes the file; 0 when removed or already gone. */
int media_remove(media_t *m, const char *key);
/* True when key has the exact form of a media key (so it cannot name a path). */
bool media_key_valid(const char *key, size_t n);
/* Opens the file for reading: 0 with *fd and *size, -1 when missing or key invalid. */
int media_open_file(media_t *m, const char *key, int *fd, uint64_t *size);

#endif
