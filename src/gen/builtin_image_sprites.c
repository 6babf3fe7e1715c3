/* builtin_image_sprites.c — sprites of the builtin picture generator, drawn over the
 * rendered rows: stars (before the water, so they are reflected), rain, snowflakes,
 * blossoms and bokeh discs, each blended into the 8-bit image with the style's tone.
 * Called by render() in builtin_image.c. */
#include "gen/builtin_image_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- sprites ------------------------------------------------------------------------- */

static void blend_px(const scene_t *sc, uint8_t *img, int x, int y, rgb_t c, float a)
{
    if (x < 0 || y < 0 || x >= sc->w || y >= sc->h || a <= 0)
        return;
    uint8_t *p = img + ((size_t)y * (size_t)sc->w + (size_t)x) * 3;
    if (a > 1)
        a = 1;
    p[0] = to_u8(((float)p[0] / 255.0f) * (1 - a) + c.r * a);
    p[1] = to_u8(((float)p[1] / 255.0f) * (1 - a) + c.g * a);
    p[2] = to_u8(((float)p[2] / 255.0f) * (1 - a) + c.b * a);
}

static void add_px(const scene_t *sc, uint8_t *img, int x, int y, rgb_t c, float a)
{
    if (x < 0 || y < 0 || x >= sc->w || y >= sc->h)
        return;
    uint8_t *p = img + ((size_t)y * (size_t)sc->w + (size_t)x) * 3;
    p[0] = to_u8((float)p[0] / 255.0f + c.r * a);
    p[1] = to_u8((float)p[1] / 255.0f + c.g * a);
    p[2] = to_u8((float)p[2] / 255.0f + c.b * a);
}

/* A disc with a soft (soft=true: fading) or anti-aliased edge. */
static void draw_disc(const scene_t *sc, uint8_t *img, float cx, float cy, float r, rgb_t c,
                      float a, bool soft)
{
    int x0 = (int)floorf(cx - r - 1), x1 = (int)ceilf(cx + r + 1);
    int y0 = (int)floorf(cy - r - 1), y1 = (int)ceilf(cy + r + 1);
    x0 = clampi(x0, 0, sc->w - 1), x1 = clampi(x1, 0, sc->w - 1);
    y0 = clampi(y0, 0, sc->h - 1), y1 = clampi(y1, 0, sc->h - 1);
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
            float d = sqrtf(dx * dx + dy * dy);
            float cov = clampf(r + 0.5f - d, 0, 1);
            if (soft)
                cov *= clampf(1.0f - d / (r + 0.5f), 0, 1) * 1.5f;
            blend_px(sc, img, x, y, c, cov * a);
        }
}

void bi_draw_stars(const scene_t *sc, uint8_t *img)
{
    if (sc->abstract || !(sc->tod == TOD_NIGHT || sc->tod == TOD_SPACE))
        return;
    rng_t r = rng_sub(sc->seed, 7);
    double area = (double)sc->w * (double)sc->wt;
    int n = (int)(area / (sc->tod == TOD_SPACE ? 260.0 : (sc->flags & F_STARS) ? 500.0 : 1100.0));
    if (sc->flags & (F_RAIN | F_NEON))
        n /= 6;
    float unit = sc->S / 1024.0f;
    for (int i = 0; i < n; i++) {
        float x = rng_f(&r) * (float)sc->w;
        float y = powf(rng_f(&r), 1.3f) * (float)sc->wt;
        float u = rng_f(&r);
        float b = 0.12f + 0.88f * u * u * u * u;
        float tw = rng_f(&r);
        int ix = (int)x, iy = (int)y;
        if (iy >= (int)sc->land[ix] - 1)
            continue;
        float dxm = x - sc->sx, dym = y - sc->sy;
        if (sc->moon && dxm * dxm + dym * dym < sc->sr * sc->sr * 2.0f)
            continue;
        float dxp = x - sc->px, dyp = y - sc->py;
        if (sc->planet && dxp * dxp + dyp * dyp < sc->pr * sc->pr * 1.1f)
            continue;
        if (!sc->nebula) {
            float n1 = bi_field_at(&sc->f1, x * 0.5f, y);
            b *= 1.0f - sstep(sc->cloud_thr, sc->cloud_thr + 0.2f, n1) * sc->cloud_alpha;
        }
        rgb_t c = tw < 0.3f ? rgb(0.75f, 0.85f, 1.0f) : tw > 0.85f ? rgb(1.0f, 0.88f, 0.7f) : rgb(1, 1, 1);
        add_px(sc, img, ix, iy, c, b);
        if (b > 0.45f) {
            float s = b * 0.35f;
            add_px(sc, img, ix + 1, iy, c, s);
            add_px(sc, img, ix - 1, iy, c, s);
            add_px(sc, img, ix, iy + 1, c, s);
            add_px(sc, img, ix, iy - 1, c, s);
        }
        if (b > 0.8f) {
            int len = (int)(3.0f + 5.0f * unit * b);
            for (int k = 2; k <= len; k++) {
                float s = b * 0.25f * (1.0f - (float)k / (float)(len + 1));
                add_px(sc, img, ix + k, iy, c, s);
                add_px(sc, img, ix - k, iy, c, s);
                add_px(sc, img, ix, iy + k, c, s);
                add_px(sc, img, ix, iy - k, c, s);
            }
        }
    }
}

void bi_draw_rain(const scene_t *sc, uint8_t *img)
{
    rng_t r = rng_sub(sc->seed, 8);
    int n = (int)((double)sc->w * sc->h / 700.0);
    rgb_t c = bi_tone(&sc->tone, sc->tod == TOD_DAY ? rgb(0.85f, 0.88f, 0.95f) : rgb(0.6f, 0.65f, 0.78f), 1.0f);
    float slant = 0.12f;
    for (int i = 0; i < n; i++) {
        float x = rng_in(&r, -0.1f, 1.0f) * (float)sc->w, y = rng_f(&r) * (float)sc->h;
        float len = sc->S * rng_in(&r, 0.015f, 0.05f), a = rng_in(&r, 0.08f, 0.28f);
        int steps = (int)len;
        for (int k = 0; k < steps; k++) {
            float px = x + (float)k * slant, f = px - floorf(px);
            float ak = a * (float)(k + 1) / (float)steps;
            blend_px(sc, img, (int)px, (int)y + k, c, ak * (1 - f));
            blend_px(sc, img, (int)px + 1, (int)y + k, c, ak * f);
        }
    }
}

void bi_draw_snow(const scene_t *sc, uint8_t *img)
{
    rng_t r = rng_sub(sc->seed, 9);
    int n = (int)((double)sc->w * sc->h / 1400.0);
    rgb_t c = bi_tone(&sc->tone, rgb(0.95f, 0.97f, 1.0f), 1.0f);
    float unit = sc->S / 1024.0f;
    for (int i = 0; i < n; i++) {
        float u = rng_f(&r);
        float x = rng_f(&r) * (float)sc->w, y = rng_f(&r) * (float)sc->h;
        float rad = unit * (0.6f + 4.5f * u * u * u);
        draw_disc(sc, img, x, y, rad, c, rng_in(&r, 0.45f, 0.95f), true);
    }
}

void bi_draw_flowers(const scene_t *sc, uint8_t *img)
{
    const layer_t *g = NULL;
    for (int k = sc->nl - 1; k >= 0; k--)
        if (sc->layer[k].kind == LK_GROUND && sc->layer[k].ybot >= (float)sc->h) {
            g = &sc->layer[k];
            break;
        }
    if (!g)
        return;
    rng_t r = rng_sub(sc->seed, 10);
    static const rgb_t petals[] = {{0.95f, 0.35f, 0.55f}, {0.95f, 0.2f, 0.15f}, {1.0f, 0.85f, 0.2f},
                                   {0.97f, 0.95f, 0.95f}, {0.65f, 0.35f, 0.85f}};
    float y0 = g->ymin, span = (float)sc->h - y0;
    int n = (int)((double)sc->w * span / 900.0);
    float light = 0.35f + 0.65f * luma(sc->ambient);
    for (int i = 0; i < n; i++) {
        float t = ((float)i + rng_f(&r)) / (float)(n > 0 ? n : 1);
        float x = rng_f(&r) * (float)sc->w, y = y0 + span * t;
        float rad = sc->S * (0.003f + 0.022f * t * t);
        if (rng_f(&r) > 1.15f - t * 0.9f || y < g->top[clampi((int)x, 0, sc->w - 1)] + rad)
            continue;
        rgb_t pc = sc->words.ncol > 0 && rng_f(&r) < 0.75f
                       ? sc->words.col[rng_u64(&r) % (uint64_t)sc->words.ncol]
                       : petals[rng_u64(&r) % ARRAY_LEN(petals)];
        pc = bi_tone(&sc->tone, scale(pc, light * rng_in(&r, 0.8f, 1.1f)), 1.0f);
        float rot = rng_in(&r, 0, 2 * PI_F);
        for (int p = 0; p < 5; p++) {
            float ang = rot + (float)p * 2 * PI_F / 5;
            draw_disc(sc, img, x + 0.55f * rad * cosf(ang), y + 0.4f * rad * sinf(ang), rad * 0.45f,
                      scale(pc, 0.9f + 0.05f * (float)p), 0.95f, false);
        }
        draw_disc(sc, img, x, y, rad * 0.25f, bi_tone(&sc->tone, scale(rgb(0.95f, 0.75f, 0.1f), light), 1.0f), 1.0f, false);
    }
}

void bi_draw_bokeh(const scene_t *sc, uint8_t *img)
{
    rng_t r = rng_sub(sc->seed, 11);
    int n = 6 + (int)(rng_u64(&r) % 10);
    for (int i = 0; i < n; i++) {
        float x = rng_f(&r) * (float)sc->w, y = rng_f(&r) * (float)sc->h;
        rgb_t c = bi_tone(&sc->tone, mix(sc->blob[i % (sc->nblob ? sc->nblob : 1)].c, rgb(1, 1, 1), 0.5f), 1.0f);
        draw_disc(sc, img, x, y, sc->S * rng_in(&r, 0.01f, 0.05f), c, rng_in(&r, 0.15f, 0.35f), true);
    }
}
