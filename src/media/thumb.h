/* thumb.h — small square thumbnails of the pictures (GET /media/<key>.png?w=N): the
 * middle square of the picture, scaled down by area averaging to N pixels a side (never
 * up), as an RGB PNG; kept in a bounded in-memory cache, least recently used first out. */
#ifndef INK_THUMB_H
#define INK_THUMB_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

/* The sides a client may ask for: w outside [THUMB_MIN, THUMB_MAX] is a 422. */
#define THUMB_MIN 16
#define THUMB_MAX 1024
/* The cache's bound, in bytes of PNG data. */
#define THUMB_CACHE_BYTES (32u << 20)

/* Parses the w parameter: decimal digits only, THUMB_MIN..THUMB_MAX. */
bool thumb_parse_width(const char *s, int *w);

/* The thumbnail of the PNG png (n bytes): its centre square (side = the shorter side),
 * scaled to min(side, w) pixels a side, appended to out as a PNG. 0, or -1 when png is
 * not a PNG that can be decoded (or is larger than 4096 pixels a side). */
int thumb_make(const void *png, size_t n, int w, buf_t *out);

/* The cache, shared by the whole process (thread-safe). get: appends the thumbnail of
 * (key, w) to out and returns true when cached. put: keeps a copy (evicting the least
 * recently used past THUMB_CACHE_BYTES; one larger than the whole bound is not kept). */
bool thumb_cache_get(const char *key, int w, buf_t *out);
void thumb_cache_put(const char *key, int w, const void *data, size_t n);
/* Empties the cache (tests); returns how many bytes it held. */
size_t thumb_cache_clear(void);

#endif
