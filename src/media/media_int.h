/* media_int.h — what a media store implements (media.c owns the table; only src/media/
 * sees it). A store holds objects named "<key>.png" (media_key_valid keys): it puts,
 * gets, removes and lists them; the records service decides which exist (media.h).
 * The optional operations are NULL where a store has no such thing. */
#ifndef INK_MEDIA_INT_H
#define INK_MEDIA_INT_H

#include "media/media.h"

typedef struct media_ops {
    const char *name; /* "directory", "s3" */
    /* Writes the object of key whole, or leaves none: 0, MEDIA_FULL, or -1. */
    int (*put)(media_t *m, const char *key, const void *data, size_t n);
    /* 0 with the object appended to out, MEDIA_MISSING, or MEDIA_UNAVAILABLE. */
    int (*get)(media_t *m, const char *key, buf_t *out);
    /* 0 when removed or already gone, -1 when the store could not be asked. */
    int (*remove)(media_t *m, const char *key);
    /* Calls fn for each object whose name has the form of a picture (media_key_valid
     * key + ".png"), with its key and last change; 0, or -1 when the listing failed
     * (fn may have been called for some). fn returns nonzero to stop. */
    int (*list)(media_t *m, media_each_fn fn, void *arg);
    void (*close)(media_t *m);
    /* optional */
    int (*open_file)(media_t *m, const char *key, int *fd, uint64_t *size);
    bool (*space_low)(media_t *m, uint64_t reserve);
    int (*clean_temp)(media_t *m, double min_age_s);
    int (*presign)(media_t *m, const char *key, int ttl_s, time_t now, buf_t *url);
} media_ops_t;

struct media {
    const media_ops_t *ops;
    void *impl;
    char *space_dir; /* a store without space_low: the data directory media_space_low checks */
};

/* The implementations' openers (media_open_conf picks one). */
media_t *media_dir_open(const char *dir, char *err, size_t errlen);
media_t *media_s3_open(const media_conf_t *c, char *err, size_t errlen);

#endif
