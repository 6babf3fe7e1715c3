/* media.h — where generated pictures live: one owner over two stores (API.md §25).
 *
 * Pictures are objects named "<key>.png", key a random 128 bits (32 hex digits). The
 * store is a directory (<data-dir>/media, or any path: files written atomically —
 * temporary file, fsync, rename, fsync of the directory; several processes may share
 * it over a shared file system) or an S3-compatible bucket under a prefix
 * (--media-store s3://BUCKET/PREFIX: media_s3.c, requests signed by libcurl). The store
 * only puts, gets, removes and lists; the records service decides what exists (a
 * picture is put before its record names it, and removed after its record no longer
 * does). The implementations sit behind an ops table (media_int.h). */
#ifndef INK_MEDIA_H
#define INK_MEDIA_H

#include "core/config.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MEDIA_KEY_LEN 32

typedef struct media media_t;

/* What a store is opened from. store: "" or a directory path, or "s3://BUCKET[/PREFIX]".
 * The S3 fields matter for s3:// alone: endpoint "" is AWS's for the region
 * (https://s3.REGION.amazonaws.com); region "" is us-east-1; path_style: BUCKET in the
 * path (http://host/BUCKET/KEY) instead of the host name (http://BUCKET.host/KEY). */
typedef struct {
    const char *store;
    const char *endpoint, *region;
    bool path_style;
    const char *access_key, *secret_key; /* never logged */
} media_conf_t;

/* The store the settings name: --media-store, or <data-dir>/media (API.md §25). */
media_t *media_open_cfg(const cfg_t *cfg, char *err, size_t errlen);
/* Whether --media-store names an object store (s3://). */
bool media_cfg_remote(const cfg_t *cfg);

/* A directory store (created if missing). */
media_t *media_open(const char *dir, char *err, size_t errlen);
/* The store c names; NULL with a message (no secret in it) in err. */
media_t *media_open_conf(const media_conf_t *c, char *err, size_t errlen);
void media_close(media_t *m);
/* "directory" or "s3". */
const char *media_kind(const media_t *m);

/* Stores data under a new key (key gets MEDIA_KEY_LEN hex digits + NUL). 0, or
 * MEDIA_FULL when the file system has no room (nothing is left behind), or -1 (an S3
 * store that failed after its retries: nothing is left behind either). */
#define MEDIA_FULL (-2)
int media_put(media_t *m, const void *data, size_t n, char key[MEDIA_KEY_LEN + 1]);
/* Stores data under the given key (media copy). 0, MEDIA_FULL or -1. */
int media_put_key(media_t *m, const char *key, const void *data, size_t n);
/* The error a generation ends with when its picture found no room (jobs.c writes it,
 * records.c answers a waiting client 503 rather than 502 for it). */
#define MEDIA_FULL_ERROR "The picture could not be stored: the server's storage is full."
/* Appends the picture of key to out: 0, MEDIA_MISSING (or an invalid key), or
 * MEDIA_UNAVAILABLE (the store could not be asked). */
#define MEDIA_MISSING (-3)
#define MEDIA_UNAVAILABLE (-4)
int media_get(media_t *m, const char *key, buf_t *out);
/* True when the media directory's file system has less than reserve bytes free for
 * this process (statvfs f_bavail); for an object store opened by media_open_cfg, the
 * data directory's (the database still fills its disk); otherwise false. */
bool media_space_low(media_t *m, uint64_t reserve);
/* Removes the temporary files (".<key>.tmp-<salt>") that writes interrupted by a
 * crash left behind, when older than min_age_s seconds (0 = all: only one process
 * uses the directory; with a shared directory another process may be writing one).
 * Returns how many were removed (an object store has none: an upload is whole or
 * absent). */
int media_clean_temp(media_t *m, double min_age_s);
/* Removes the pictures no record refers to — a crash between a picture's write and
 * its record's commit leaves one — when last changed min_age_s (as above) before
 * keys_read_at: when the keys were read (taken before the read began), so that a
 * picture whose record committed after that read is never taken for an orphan unless
 * it was written min_age_s before the read. Only objects named as pictures are looked
 * at (a bucket's other objects under the prefix are left alone).
 * keys: every media key records refer to, sorted by strcmp. Returns how many. */
int media_sweep(media_t *m, const char *const *keys, size_t n, double min_age_s,
                time_t keys_read_at);
/* Removes the picture; 0 when removed or already gone, -1 otherwise. */
int media_remove(media_t *m, const char *key);
/* True when key has the exact form of a media key (so it cannot name a path). */
bool media_key_valid(const char *key, size_t n);
/* Opens the picture for reading: 0 with *fd and *size; MEDIA_MISSING when missing or
 * the key invalid, MEDIA_UNAVAILABLE when the store could not be asked. An object
 * store's picture is fetched whole into an anonymous memory file. */
int media_open_file(media_t *m, const char *key, int *fd, uint64_t *size);

/* Each picture of the store: fn(arg, key, last change); nonzero from fn stops. 0, or
 * -1 when the listing failed. */
typedef int (*media_each_fn)(void *arg, const char *key, time_t mtime);
int media_list(media_t *m, media_each_fn fn, void *arg);

/* A URL that gets the picture straight from the store for ttl_s seconds (at most
 * 900), signed now: 0 with the URL appended to url, or -1 when the store has no such
 * thing (a directory). The URL carries the access key's id, never the secret. */
int media_presign(media_t *m, const char *key, int ttl_s, buf_t *url);
bool media_can_presign(const media_t *m);

#endif
