/* test_thumb.c — thumbnails (media/thumb.h): the w parameter's bounds; a landscape,
 * a portrait and a small picture each give a square of the right side cut from their
 * middle (checked by colour: the left/right or top/bottom bands are cut away); area
 * averaging (a fine checkerboard becomes an even grey, not aliased stripes); anything
 * that is not a decodable PNG is refused; the cache returns what was put, evicts the
 * least recently used past its bound and refuses nothing it cannot hold. */
#include "gen/png.h"
#include "media/thumb.h"
#include "test.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>

/* A picture w×h: green in its centre square (the side of its shorter side), red
 * before it and blue after it along the longer side; or a 1-pixel checkerboard. */
static void make(int w, int h, bool checker, buf_t *out)
{
    uint8_t *p = malloc((size_t)w * (size_t)h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *px = p + ((size_t)y * (size_t)w + (size_t)x) * 3;
            int s = w < h ? w : h, off = ((w > h ? w : h) - s) / 2, at = w >= h ? x : y;
            int along = at < off ? 0 : at >= off + s ? 3 : 1;
            if (checker) {
                uint8_t v = (x + y) % 2 ? 255 : 0;
                px[0] = px[1] = px[2] = v;
            } else {
                px[0] = along == 0 ? 255 : 0;
                px[1] = along == 1 || along == 2 ? 255 : 0;
                px[2] = along == 3 ? 255 : 0;
            }
        }
    buf_init(out);
    png_encode_rgb(p, w, h, 1, out);
    free(p);
}

static uint8_t *decode(const buf_t *png, int *w, int *h)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, png->data, png->len))
        return NULL;
    im.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(im));
    if (!png_image_finish_read(&im, NULL, px, 0, NULL)) {
        free(px);
        return NULL;
    }
    *w = (int)im.width;
    *h = (int)im.height;
    return px;
}

/* every pixel of the thumbnail is green: the red and blue bands were cut away */
static void check_middle(int w, int h, int want, int side)
{
    buf_t src, out;
    make(w, h, false, &src);
    buf_init(&out);
    CHECK_INT(thumb_make(src.data, src.len, want, &out), 0);
    int tw = 0, th = 0;
    uint8_t *px = decode(&out, &tw, &th);
    CHECK(px != NULL);
    CHECK_INT(tw, side);
    CHECK_INT(th, side);
    int off = 0;
    for (int i = 0; px && i < tw * th; i++)
        if (px[i * 3] > 8 || px[i * 3 + 1] < 247 || px[i * 3 + 2] > 8)
            off++;
    CHECK_MSG(off == 0, "%dx%d -> %d: %d pixels not green", w, h, want, off);
    free(px);
    buf_free(&src);
    buf_free(&out);
}

int main(void)
{
    int w = 0;
    CHECK(thumb_parse_width("256", &w) && w == 256);
    CHECK(thumb_parse_width("16", &w) && w == 16);
    CHECK(thumb_parse_width("1024", &w) && w == 1024);
    const char *bad[] = {"", "15", "1025", "0", "-5", "25.6", "256px", " 256", "99999999", "1e3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(!thumb_parse_width(bad[i], &w), "w=\"%s\" accepted", bad[i]);
    CHECK(!thumb_parse_width(NULL, &w));

    /* landscape and portrait: the middle half is green, so a square of the shorter side
     * cut from the middle is all green (a 1792x1024 picture keeps x 384..1407) */
    check_middle(448, 256, 128, 128);
    check_middle(256, 448, 128, 128);
    check_middle(1792, 1024, 256, 256);
    /* never scaled up: a 100x60 picture's thumbnail at 256 is 60x60 */
    check_middle(100, 60, 256, 60);

    /* area averaging: a 1-pixel checkerboard halved becomes mid grey everywhere */
    buf_t src, out;
    make(512, 512, true, &src);
    buf_init(&out);
    CHECK_INT(thumb_make(src.data, src.len, 64, &out), 0);
    int tw = 0, th = 0;
    uint8_t *px = decode(&out, &tw, &th);
    CHECK_INT(tw, 64);
    int far = 0;
    for (int i = 0; px && i < tw * th * 3; i++)
        if (px[i] < 120 || px[i] > 136)
            far++;
    CHECK_MSG(far == 0, "%d channels far from grey", far);
    free(px);
    /* smaller than the picture it came from */
    CHECK(out.len < src.len);

    /* not a PNG, a cut PNG, empty input */
    buf_t junk;
    buf_init(&junk);
    CHECK_INT(thumb_make("not a png at all", 16, 64, &junk), -1);
    CHECK_INT(thumb_make(src.data, src.len / 2, 64, &junk), -1);
    CHECK_INT(thumb_make(src.data, 0, 64, &junk), -1);
    CHECK_INT(thumb_make(NULL, 10, 64, &junk), -1);

    /* the cache: get what was put, per key and width */
    thumb_cache_clear();
    buf_t got;
    buf_init(&got);
    CHECK(!thumb_cache_get("aaaa", 256, &got));
    thumb_cache_put("aaaa", 256, out.data, out.len);
    CHECK(thumb_cache_get("aaaa", 256, &got));
    CHECK_INT(got.len, out.len);
    CHECK(memcmp(got.data, out.data, out.len) == 0);
    buf_reset(&got);
    CHECK(!thumb_cache_get("aaaa", 128, &got));
    CHECK(!thumb_cache_get("bbbb", 256, &got));
    /* bounded: 5 entries of a third of the bound each leave the last 3 at most; the
     * one used most recently survives */
    size_t third = THUMB_CACHE_BYTES / 3;
    char *big = calloc(1, third);
    thumb_cache_clear();
    thumb_cache_put("k1", 256, big, third);
    thumb_cache_put("k2", 256, big, third);
    thumb_cache_put("k3", 256, big, third);
    buf_reset(&got);
    CHECK(thumb_cache_get("k1", 256, &got)); /* k1 is now the most recent */
    thumb_cache_put("k4", 256, big, third);  /* evicts k2 */
    buf_reset(&got);
    CHECK(!thumb_cache_get("k2", 256, &got));
    CHECK(thumb_cache_get("k1", 256, &got));
    size_t held = thumb_cache_clear();
    CHECK_MSG(held <= THUMB_CACHE_BYTES, "held %zu", held);
    CHECK_INT(held, 3 * third);
    /* one larger than the bound is not kept */
    char *huge = calloc(1, THUMB_CACHE_BYTES + 1);
    thumb_cache_put("k5", 256, huge, THUMB_CACHE_BYTES + 1);
    buf_reset(&got);
    CHECK(!thumb_cache_get("k5", 256, &got));
    free(big);
    free(huge);
    buf_free(&got);
    buf_free(&junk);
    buf_free(&src);
    buf_free(&out);
    TEST_DONE();
}
