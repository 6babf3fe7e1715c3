/* assets.h — static files compiled into the binary (the web app under web/, the
 * OpenAPI document). The table is generated at build time by tools/embed.c from the
 * Makefile's ASSETS list; api/static.c serves them (ETag, gzip, caching). */
#ifndef INK_ASSETS_H
#define INK_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *path;          /* the URL path it is served at, e.g. "/app.js" */
    const char *content_type;
    const unsigned char *data; /* the file's bytes */
    size_t len;
    const unsigned char *gz;   /* a gzip copy, or NULL when it would not be smaller */
    size_t gz_len;
    const char *etag;          /* strong ETag, quoted */
} asset_t;

/* The table, ending with an entry whose path is NULL. */
extern const asset_t assets[];
extern const unsigned assets_count;

/* The asset served at path, or NULL. */
const asset_t *asset_find(const char *path);

#endif
