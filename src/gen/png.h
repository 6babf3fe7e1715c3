/* png.h — PNG encoding and checking, on libpng. */
#ifndef INK_PNG_H
#define INK_PNG_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Encodes 8-bit RGB pixels (row-major, 3 bytes a pixel, no padding) as a PNG
 * appended to out. level: zlib level 0..9 (use a fast one, e.g. 1..3). 0 or -1. */
int png_encode_rgb(const uint8_t *rgb, int width, int height, int level, buf_t *out);

/* True when data is a whole, valid PNG: signature, chunk CRCs, IHDR, and the image
 * data decodes. Sets *width and *height. Never crashes on hostile input. */
bool png_inspect(const void *data, size_t n, int *width, int *height);

#endif
