/* builtin_image_noise.c — value noise for the builtin picture generator: a 32-bit
 * hash, 1-D and 2-D value noise, fractal sums, and the noise field (fbm on a coarse
 * grid read back a row at a time through a column map). Deterministic: a seed gives
 * the same numbers everywhere. Used by the scene (ridges, trees, ground), the drawing
 * (clouds, texture, water) and the sprites (stars). See builtin_image.c. */
#include "gen/builtin_image_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t bi_hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
static float lattice2(uint32_t seed, int ix, int iy)
{
    uint32_t h = bi_hash32(seed + (uint32_t)ix * 0x9E3779B1U + (uint32_t)iy * 0x85EBCA77U);
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}
static float smooth01(float t)
{
    return t * t * (3.0f - 2.0f * t);
}
static float vnoise2(uint32_t seed, float x, float y)
{
    float fx = floorf(x), fy = floorf(y);
    int ix = (int)fx, iy = (int)fy;
    float tx = smooth01(x - fx), ty = smooth01(y - fy);
    float a = lattice2(seed, ix, iy), b = lattice2(seed, ix + 1, iy);
    float c = lattice2(seed, ix, iy + 1), d = lattice2(seed, ix + 1, iy + 1);
    float ab = a + (b - a) * tx, cd = c + (d - c) * tx;
    return ab + (cd - ab) * ty;
}
float bi_vnoise1(uint32_t seed, float x)
{
    return vnoise2(seed, x, 0.5f);
}
/* Fractal sums normalised to about [0,1]; ridged makes sharp crests. */
float bi_fbm1(uint32_t seed, float x, int octaves, bool ridged)
{
    float sum = 0, amp = 0.5f, norm = 0;
    for (int o = 0; o < octaves; o++) {
        float n = bi_vnoise1(seed + (uint32_t)o * 1013U, x);
        if (ridged) {
            n = 1.0f - fabsf(2.0f * n - 1.0f);
            n *= n;
        }
        sum += amp * n;
        norm += amp;
        amp *= 0.5f;
        x *= 2.03f;
    }
    return sum / norm;
}
static float fbm2(uint32_t seed, float x, float y, int octaves)
{
    float sum = 0, amp = 0.5f, norm = 0;
    for (int o = 0; o < octaves; o++) {
        sum += amp * vnoise2(seed + (uint32_t)o * 7919U, x, y);
        norm += amp;
        amp *= 0.5f;
        x *= 2.01f;
        y *= 2.01f;
    }
    /* Value-noise sums cluster around 0.5: stretch them to use the range. */
    return clampf((sum / norm - 0.5f) * 2.2f + 0.5f, 0.0f, 1.0f);
}


void bi_field_init(field_t *fl, float uspan, float vspan, float step, uint32_t seed,
                   float feature, int octaves)
{
    fl->gw = (int)(uspan / step) + 3;
    fl->gh = (int)(vspan / step) + 3;
    fl->inv_step = 1.0f / step;
    fl->v = xmalloc(sizeof(float) * (size_t)fl->gw * (size_t)fl->gh);
    float k = step / feature;
    for (int j = 0; j < fl->gh; j++)
        for (int i = 0; i < fl->gw; i++)
            fl->v[(size_t)j * (size_t)fl->gw + (size_t)i] =
                fbm2(seed, (float)i * k, (float)j * k, octaves);
}

void bi_colmap_init(colmap_t *cm, const field_t *fl, int w, float stretch, float shift)
{
    cm->i = xmalloc(sizeof(int) * (size_t)w);
    cm->f = xmalloc(sizeof(float) * (size_t)w);
    for (int x = 0; x < w; x++) {
        float g = ((float)x * stretch + shift) * fl->inv_step;
        int i = clampi((int)g, 0, fl->gw - 2);
        cm->i[x] = i;
        cm->f[x] = clampf(g - (float)i, 0.0f, 1.0f);
    }
}

void bi_colmap_free(colmap_t *cm)
{
    free(cm->i);
    free(cm->f);
}

void bi_field_row(const field_t *fl, const colmap_t *cm, float v, int w, float *out)
{
    float g = v * fl->inv_step;
    int j = clampi((int)g, 0, fl->gh - 2);
    float fy = clampf(g - (float)j, 0.0f, 1.0f);
    const float *r0 = fl->v + (size_t)j * (size_t)fl->gw, *r1 = r0 + fl->gw;
    for (int x = 0; x < w; x++) {
        int i = cm->i[x];
        float fx = cm->f[x];
        float a = r0[i] + (r0[i + 1] - r0[i]) * fx;
        float b = r1[i] + (r1[i + 1] - r1[i]) * fx;
        out[x] = a + (b - a) * fy;
    }
}

/* Row v of the field with columns u = w/2 + (x - w/2)*du: stretched about the middle. */
void bi_field_row_affine(const field_t *fl, float v, float du, int w, float *out)
{
    float g = v * fl->inv_step;
    int j = clampi((int)g, 0, fl->gh - 2);
    float fy = clampf(g - (float)j, 0.0f, 1.0f);
    const float *r0 = fl->v + (size_t)j * (size_t)fl->gw, *r1 = r0 + fl->gw;
    float half = (float)w * 0.5f, gdu = du * fl->inv_step;
    float gx = (half - half * du) * fl->inv_step;
    for (int x = 0; x < w; x++, gx += gdu) {
        int i = clampi((int)gx, 0, fl->gw - 2);
        float fx = clampf(gx - (float)i, 0.0f, 1.0f);
        float a = r0[i] + (r0[i + 1] - r0[i]) * fx;
        float b = r1[i] + (r1[i + 1] - r1[i]) * fx;
        out[x] = a + (b - a) * fy;
    }
}

/* Folds v into [0, max] like a triangle wave, so long ranges reuse the field. */
float bi_fold(float v, float max)
{
    if (max <= 0)
        return 0;
    v = fmodf(fabsf(v), 2 * max);
    return v > max ? 2 * max - v : v;
}

float bi_field_at(const field_t *fl, float u, float v)
{
    float gx = u * fl->inv_step, gy = v * fl->inv_step;
    int i = clampi((int)gx, 0, fl->gw - 2), j = clampi((int)gy, 0, fl->gh - 2);
    float fx = clampf(gx - (float)i, 0, 1), fy = clampf(gy - (float)j, 0, 1);
    const float *r0 = fl->v + (size_t)j * (size_t)fl->gw, *r1 = r0 + fl->gw;
    float a = r0[i] + (r0[i + 1] - r0[i]) * fx, b = r1[i] + (r1[i + 1] - r1[i]) * fx;
    return a + (b - a) * fy;
}
