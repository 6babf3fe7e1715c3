/* builtin_image.c — the offline picture renderer: a description becomes a layered
 * landscape (or, with no scene word, an abstract composition), drawn procedurally and
 * encoded as PNG. Not a neural model: words pick palettes and parts of a scene.
 *
 * How the parts fit:
 *   1. bi_img_parse (builtin_image_scene.c): the words of the description → scene
 *      flags and named colours;
 *   2. bi_scene_build (builtin_image_compose.c): flags + a PRNG seeded from the
 *      description's hash → palette, tone (the style), horizon, sun or moon, silhouette
 *      layers (per-column heights, builtin_image_scene.c), noise fields
 *      (builtin_image_noise.c);
 *   3. render() here draws rows top to bottom (builtin_image_draw.c): sky (gradient,
 *      glow, clouds, nebula) or water (a rippled mirror of rows already drawn), with
 *      the silhouettes composited front to back over it; each pixel is toned by the
 *      style (an affine colour map) and stored as 8 bits;
 *   4. sprites (builtin_image_sprites.c): stars before the water is drawn (so they are
 *      reflected), then rain, snowflakes and blossoms; a vignette; png_encode_rgb at
 *      zlib level 1.
 * This file holds only the entry, builtin_image(), and render(); the files share
 * builtin_image_int.h and nothing else.
 * No transcendental function runs per pixel: gradients are per row or column, noise is
 * a coarse value-noise grid interpolated per row, silhouettes are per-column heights.
 * Everything lives in a scene_t allocated by builtin_image: pure and thread-safe. */
#include "gen/builtin_image_int.h"
#include "gen/png.h"

#include <stdlib.h>
#include <string.h>

#define IMG_MAX_SIDE 4096
#define IMG_ZLIB_LEVEL 1

static void render(scene_t *sc, uint8_t *img)
{
    size_t stride = (size_t)sc->w * 3;
    row_t rw;
    memset(&rw, 0, sizeof rw);
    float *rows = xmalloc(sizeof(float) * (size_t)sc->w * 4);
    rw.cloud = rows;
    rw.tex = rows + sc->w;
    rw.w1 = rows + 2 * sc->w;
    rw.w2 = rows + 3 * sc->w;
    rgb_t *half = xmalloc(sizeof(rgb_t) * (size_t)(sc->w / 2 + 2));
    for (int y = 0; y < sc->wt; y++) {
        bi_row_prepare(sc, &rw, y);
        bi_layers_row_colours(sc, y);
        bi_draw_sky_row(sc, &rw, half, img + (size_t)y * stride);
    }
    bi_draw_stars(sc, img);
    for (int y = sc->wt; y < sc->h; y++) {
        bi_row_prepare(sc, &rw, y);
        bi_layers_row_colours(sc, y);
        bi_water_row_prepare(sc, &rw);
        bi_draw_water_row(sc, &rw, img);
    }
    free(rows);
    free(half);
    if (sc->abstract)
        bi_draw_bokeh(sc, img);
    if (sc->flags & F_FLOWERS)
        bi_draw_flowers(sc, img);
    if (sc->flags & F_RAIN)
        bi_draw_rain(sc, img);
    if (sc->flags & F_SNOW)
        bi_draw_snow(sc, img);
}

int builtin_image(const char *description, int width, int height, img_style_t style,
                  buf_t *png_out)
{
    if (!description || !png_out || width < 1 || height < 1 || width > IMG_MAX_SIDE ||
        height > IMG_MAX_SIDE)
        return -1;
    if (style != STYLE_VIVID && style != STYLE_NATURAL)
        style = STYLE_NONE;
    scene_t *sc = xmalloc(sizeof *sc);
    bi_scene_build(sc, description, width, height, style);
    uint8_t *img = xmalloc((size_t)width * (size_t)height * 3);
    render(sc, img);
    int rc = png_encode_rgb(img, width, height, IMG_ZLIB_LEVEL, png_out);
    free(img);
    bi_scene_free(sc);
    free(sc);
    return rc;
}
