/* builtin_image_int.h — what the files of the builtin picture generator share, and
 * nothing else includes: the limits, the colour and number helpers and the PRNG
 * (static inline: they run per pixel), the noise field, the description's flags and
 * words, the scene (scene_t, its layers) and the row being drawn (row_t), and the
 * bi_ functions each file gives the others. See builtin_image.c for how the parts fit. */
#ifndef INK_BUILTIN_IMAGE_INT_H
#define INK_BUILTIN_IMAGE_INT_H

#include "gen/builtin.h"

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>


#define MAX_LAYERS 12
#define MAX_COLOURS 4
#define MAX_BLOBS 8
#define MAX_RIBBONS 3
#define PI_F 3.14159265f

/* ---- small colour and number helpers ---------------------------------------------- */

typedef struct {
    float r, g, b;
} rgb_t;

/* Ternaries, not fminf/fmaxf: without -ffast-math those are library calls. */
static inline float minf(float a, float b)
{
    return a < b ? a : b;
}
static inline float maxf(float a, float b)
{
    return a > b ? a : b;
}

static inline rgb_t rgb(float r, float g, float b)
{
    return (rgb_t){r, g, b};
}
static inline rgb_t mix(rgb_t a, rgb_t b, float t)
{
    return rgb(a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t);
}
static inline rgb_t scale(rgb_t a, float k)
{
    return rgb(a.r * k, a.g * k, a.b * k);
}
static inline rgb_t add(rgb_t a, rgb_t b)
{
    return rgb(a.r + b.r, a.g + b.g, a.b + b.b);
}
static inline rgb_t mul(rgb_t a, rgb_t b)
{
    return rgb(a.r * b.r, a.g * b.g, a.b * b.b);
}
static inline float luma(rgb_t c)
{
    return 0.299f * c.r + 0.587f * c.g + 0.114f * c.b;
}
static inline float clampf(float v, float lo, float hi)
{
    return minf(maxf(v, lo), hi);
}
static inline float sstep(float e0, float e1, float x)
{
    /* A product, not a quotient: with constant edges the reciprocal is folded. */
    float t = clampf((x - e0) * (1.0f / (e1 - e0)), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}
static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Hue in [0,1), saturation and value in [0,1]. */
static inline rgb_t hsv(float h, float s, float v)
{
    h = (h - floorf(h)) * 6.0f;
    int i = (int)h;
    float f = h - (float)i, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    switch (i % 6) {
    case 0: return rgb(v, t, p);
    case 1: return rgb(q, v, p);
    case 2: return rgb(p, v, t);
    case 3: return rgb(p, q, v);
    case 4: return rgb(t, p, v);
    default: return rgb(v, p, q);
    }
}

static inline void rgb_to_hsv(rgb_t c, float *h, float *s, float *v)
{
    float mx = maxf(c.r, maxf(c.g, c.b)), mn = minf(c.r, minf(c.g, c.b)), d = mx - mn;
    *v = mx;
    *s = mx > 0 ? d / mx : 0;
    if (d <= 0) {
        *h = 0;
        return;
    }
    float hh = mx == c.r ? (c.g - c.b) / d : mx == c.g ? 2.0f + (c.b - c.r) / d : 4.0f + (c.r - c.g) / d;
    hh /= 6.0f;
    *h = hh - floorf(hh);
}

/* Moves c toward the hue of key by w, keeping c's brightness; achromatic keys
 * lighten (white), darken (black) or desaturate (grey, silver) instead. */
static inline rgb_t tint(rgb_t c, rgb_t key, float w)
{
    float kl = luma(key), cl = luma(c);
    float kmax = maxf(key.r, maxf(key.g, key.b)), kmin = minf(key.r, minf(key.g, key.b));
    if (kmax - kmin < 0.08f) {
        rgb_t grey = rgb(cl, cl, cl);
        if (kl > 0.85f)
            return mix(c, add(scale(c, 0.55f), rgb(0.45f, 0.45f, 0.47f)), w);
        if (kl < 0.1f)
            return mix(c, scale(c, 0.35f), w);
        return mix(c, mix(grey, rgb(kl, kl, kl * 1.04f), 0.3f), w);
    }
    rgb_t target = scale(key, cl / maxf(kl, 0.05f));
    float m = maxf(target.r, maxf(target.g, target.b));
    if (m > 1.0f)
        target = scale(target, 1.0f / m);
    return mix(c, target, w);
}

/* ---- deterministic randomness and value noise -------------------------------------- */

typedef struct {
    uint64_t s;
} rng_t;

static inline uint64_t rng_u64(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline float rng_f(rng_t *r)
{
    return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f);
}
static inline float rng_in(rng_t *r, float lo, float hi)
{
    return lo + (hi - lo) * rng_f(r);
}
static inline rng_t rng_sub(uint64_t seed, uint64_t salt)
{
    rng_t r = {seed ^ (salt * 0xD6E8FEB86659FD93ull)};
    rng_u64(&r);
    return r;
}

/* ---- value noise (builtin_image_noise.c) ---- */

/* A noise field: fbm sampled on a coarse grid, read back one row at a time with
 * bilinear interpolation. A column map gives the grid column of every pixel column,
 * so one field serves several horizontal stretches. */
typedef struct {
    int gw, gh;
    float inv_step;
    float *v;
} field_t;

typedef struct {
    int *i;
    float *f;
} colmap_t;

uint32_t bi_hash32(uint32_t x);
float bi_vnoise1(uint32_t seed, float x);
float bi_fbm1(uint32_t seed, float x, int octaves, bool ridged);
void bi_field_init(field_t *fl, float uspan, float vspan, float step, uint32_t seed,
                   float feature, int octaves);
void bi_colmap_init(colmap_t *cm, const field_t *fl, int w, float stretch, float shift);
void bi_colmap_free(colmap_t *cm);
void bi_field_row(const field_t *fl, const colmap_t *cm, float v, int w, float *out);
void bi_field_row_affine(const field_t *fl, float v, float du, int w, float *out);
float bi_fold(float v, float max);
float bi_field_at(const field_t *fl, float u, float v);

/* ---- the description (builtin_image_scene.c) ---- */

enum {
    F_SUNSET = 1u << 0, F_SUNRISE = 1u << 1, F_NIGHT = 1u << 2, F_STARS = 1u << 3,
    F_MOON = 1u << 4, F_OCEAN = 1u << 5, F_BEACH = 1u << 6, F_FOREST = 1u << 7,
    F_CITY = 1u << 8, F_VILLAGE = 1u << 9, F_MOUNTAIN = 1u << 10, F_SNOW = 1u << 11,
    F_DESERT = 1u << 12, F_FLOWERS = 1u << 13, F_SPACE = 1u << 14, F_LAKE = 1u << 15,
    F_RAIN = 1u << 16, F_AUTUMN = 1u << 17, F_NEON = 1u << 18, F_CLOUDS = 1u << 19,
    F_HILLS = 1u << 20, F_DAY = 1u << 21, F_FOG = 1u << 22, F_SKY = 1u << 23,
};
/* Flags that call for a landscape; without any of them the picture is abstract. */
#define F_SCENE                                                                            \
    (F_SUNSET | F_SUNRISE | F_NIGHT | F_STARS | F_MOON | F_OCEAN | F_BEACH | F_FOREST |   \
     F_CITY | F_VILLAGE | F_MOUNTAIN | F_SNOW | F_DESERT | F_FLOWERS | F_SPACE | F_LAKE |   \
     F_RAIN | F_AUTUMN | F_CLOUDS | F_HILLS | F_DAY | F_FOG | F_SKY)


typedef struct {
    unsigned flags;
    int ncol;
    rgb_t col[MAX_COLOURS];
} words_t;

void bi_img_parse(const char *desc, words_t *wd);
uint64_t bi_img_hash(const char *s);

/* ---- the scene ---- */

enum layer_kind { LK_RIDGE, LK_DUNE, LK_TREES, LK_CITY, LK_HOUSES, LK_GROUND };

typedef struct {
    int x0, x1;        /* columns [x0, x1) */
    float top;         /* top of the wall (for houses: the eave) */
    int px, py, ww, wh; /* window pitch and size */
    int mx, my;        /* margins before the first window */
    uint32_t hash;
    float shade;
} bldg_t;

typedef struct {
    int kind;
    float ymin, ybot; /* highest point and the row below the last one covered */
    float *top;       /* per column: first row covered */
    float *light;     /* per column: brightness factor (slope shading, variation) */
    float *cap;       /* per column snow-cap depth, or NULL */
    rgb_t *tint;      /* per column colour factor, or NULL */
    int16_t *bid;     /* per column building, -1 for none; NULL if no buildings */
    float *bot;       /* per column: first row no longer covered, or NULL (ybot) */
    bldg_t *b;
    int nb;
    rgb_t c_top, c_bot; /* vertical gradient from ymin to ybot */
    rgb_t c_snow, c_roof, c_win_dark;
    rgb_t c_win[3];
    float lit_p, texamp, foam;
    float inv_fall; /* ridges and dunes: slope shading fades over 1/inv_fall rows */
    rgb_t row; /* c_top..c_bot at the current row */
} layer_t;

typedef struct {
    float x, y, r, inv_r2, a;
    rgb_t c;
} blob_t;

typedef struct {
    float *cy;
    float th, a;
    rgb_t c;
} ribbon_t;

typedef struct {
    float ks, kl, o; /* out = ks*c + kl*luma(c) + o: saturation, contrast, lift */
} tone_t;

typedef struct {
    int w, h;
    float S; /* min(w, h): the unit for sizes */
    uint64_t seed;
    unsigned flags;
    words_t words;
    bool abstract;
    int tod; /* time of day */
    tone_t tone;
    float vignette;
    rgb_t ambient, haze, snow_light;
    /* sky */
    rgb_t sky_top, sky_mid, sky_hor;
    float hy; /* where the land meets the sky */
    bool sun, moon, glow;
    float sx, sy, sr;
    rgb_t disc, glow_col;
    float glow_a, glow_k, halo_a, halo_k;
    float cloud_thr, cloud_alpha;
    rgb_t cloud_lit, cloud_dark;
    bool nebula, planet;
    rgb_t neb_a, neb_b, planet_col;
    float px, py, pr, plx, ply; /* planet centre, radius, direction of its light */
    /* water */
    int wt; /* first water row (h when none) */
    bool street;
    rgb_t water_far, water_near;
    float refl_far, refl_near, wave;
    /* silhouettes, far to near */
    layer_t layer[MAX_LAYERS];
    int nl;
    float *land;   /* per column: highest silhouette row */
    float *skyend; /* per even column: the sky is needed above this row */
    /* abstract */
    rgb_t ga, gb;
    float *gx, *gy;
    blob_t blob[MAX_BLOBS];
    int nblob;
    ribbon_t rib[MAX_RIBBONS];
    int nrib;
    /* noise */
    field_t f1, f2;
    colmap_t cm_cloud, cm_cloud2, cm_tex;
    rgb_t *skyrow;
    float *vx, *vy; /* vignette factors per column and per row */
} scene_t;

enum { TOD_DAY, TOD_SUNSET, TOD_SUNRISE, TOD_NIGHT, TOD_SPACE };

/* layers (builtin_image_scene.c) */
float *bi_col_alloc(const scene_t *sc, float fill);
void bi_add_ridge(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze,
                  bool caps);
void bi_add_dunes(scene_t *sc, rng_t *r, float base, float amp, float haze, float ybot);
void bi_add_trees(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze);
void bi_add_frame_trees(scene_t *sc, rng_t *r);
void bi_add_city(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze);
void bi_add_houses(scene_t *sc, rng_t *r, const layer_t *ground);
layer_t *bi_add_ground(scene_t *sc, rng_t *r, float top, float amp, rgb_t far, rgb_t near,
                       float haze);

/* palette and composition (builtin_image_compose.c) */
void bi_scene_build(scene_t *sc, const char *desc, int w, int h, img_style_t style);
void bi_scene_free(scene_t *sc);

/* ---- per-pixel drawing (builtin_image_draw.c) ---- */

typedef struct {
    int y;
    float vig;
    rgb_t sky;
    float dy2, pdy, cloudv;
    float pdys; /* signed distance of the row to the planet's centre */
    float *cloud, *tex, *w1, *w2;
    int act[MAX_LAYERS], nact; /* layers touching this row, near to far */
    /* water row */
    float refl, amp_x, amp_y, shift, glit_inv, glit_a, hl_a;
    rgb_t water_t, hl_t, sun_t;
    /* abstract row */
    int ablob[MAX_BLOBS], nablob;
} row_t;


static inline uint8_t to_u8(float v)
{
    return (uint8_t)minf(maxf(v * 255.0f + 0.5f, 0.0f), 255.0f);
}

rgb_t bi_tone(const tone_t *t, rgb_t c, float alpha);
void bi_row_prepare(const scene_t *sc, row_t *rw, int y);
void bi_layers_row_colours(scene_t *sc, int y);
void bi_draw_sky_row(scene_t *sc, row_t *rw, rgb_t *half, uint8_t *out);
void bi_water_row_prepare(const scene_t *sc, row_t *rw);
void bi_draw_water_row(scene_t *sc, row_t *rw, uint8_t *img);

void bi_draw_stars(const scene_t *sc, uint8_t *img);
void bi_draw_rain(const scene_t *sc, uint8_t *img);
void bi_draw_snow(const scene_t *sc, uint8_t *img);
void bi_draw_flowers(const scene_t *sc, uint8_t *img);
void bi_draw_bokeh(const scene_t *sc, uint8_t *img);

#endif
