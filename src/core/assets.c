/* assets.c — finds a compiled-in static file by its URL path (assets.h). */
#include "core/assets.h"

#include <string.h>

const asset_t *asset_find(const char *path)
{
    for (unsigned i = 0; i < assets_count; i++)
        if (strcmp(assets[i].path, path) == 0)
            return &assets[i];
    return NULL;
}
