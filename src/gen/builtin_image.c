/* builtin_image.c — the offline picture renderer: a description becomes a layered
 * landscape (or, with no scene word, an abstract composition), drawn procedurally and
 * encoded as PNG. Not a neural model: words pick palettes and parts of a scene.
 *
 * How the parts fit:
 *   1. img_parse: the words of the description → scene flags and named colours;
 *   2. scene_build: flags + a PRNG seeded from the description's hash → palette, tone
 *      (the style), horizon, sun or moon, silhouette layers (per-column heights);
 *   3. rows are drawn top to bottom: sky (gradient, glow, clouds, nebula) or water (a
 *      rippled mirror of rows already drawn), with the silhouettes composited front to
 *      back over it; each pixel is toned by the style (an affine colour map) and stored
 *      as 8 bits;
 *   4. sprites: stars before the water is drawn (so they are reflected), then rain,
 *      snowflakes and blossoms; a vignette; png_encode_rgb at zlib level 1.
 * No transcendental function runs per pixel: gradients are per row or column, noise is
 * a coarse value-noise grid interpolated per row, silhouettes are per-column heights.
 * Everything lives in a scene_t on the stack of builtin_image: pure and thread-safe. */
#include "gen/builtin.h"
#include "gen/png.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IMG_MAX_SIDE 4096
#define IMG_ZLIB_LEVEL 1
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

static rgb_t rgb(float r, float g, float b)
{
    return (rgb_t){r, g, b};
}
static rgb_t mix(rgb_t a, rgb_t b, float t)
{
    return rgb(a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t);
}
static rgb_t scale(rgb_t a, float k)
{
    return rgb(a.r * k, a.g * k, a.b * k);
}
static rgb_t add(rgb_t a, rgb_t b)
{
    return rgb(a.r + b.r, a.g + b.g, a.b + b.b);
}
static rgb_t mul(rgb_t a, rgb_t b)
{
    return rgb(a.r * b.r, a.g * b.g, a.b * b.b);
}
static float luma(rgb_t c)
{
    return 0.299f * c.r + 0.587f * c.g + 0.114f * c.b;
}
static float clampf(float v, float lo, float hi)
{
    return minf(maxf(v, lo), hi);
}
static float sstep(float e0, float e1, float x)
{
    /* A product, not a quotient: with constant edges the reciprocal is folded. */
    float t = clampf((x - e0) * (1.0f / (e1 - e0)), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}
static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Hue in [0,1), saturation and value in [0,1]. */
static rgb_t hsv(float h, float s, float v)
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

static void rgb_to_hsv(rgb_t c, float *h, float *s, float *v)
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
static rgb_t tint(rgb_t c, rgb_t key, float w)
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

static uint64_t rng_u64(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static float rng_f(rng_t *r)
{
    return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f);
}
static float rng_in(rng_t *r, float lo, float hi)
{
    return lo + (hi - lo) * rng_f(r);
}
static rng_t rng_sub(uint64_t seed, uint64_t salt)
{
    rng_t r = {seed ^ (salt * 0xD6E8FEB86659FD93ull)};
    rng_u64(&r);
    return r;
}

static uint32_t hash32(uint32_t x)
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
    uint32_t h = hash32(seed + (uint32_t)ix * 0x9E3779B1U + (uint32_t)iy * 0x85EBCA77U);
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
static float vnoise1(uint32_t seed, float x)
{
    return vnoise2(seed, x, 0.5f);
}
/* Fractal sums normalised to about [0,1]; ridged makes sharp crests. */
static float fbm1(uint32_t seed, float x, int octaves, bool ridged)
{
    float sum = 0, amp = 0.5f, norm = 0;
    for (int o = 0; o < octaves; o++) {
        float n = vnoise1(seed + (uint32_t)o * 1013U, x);
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

static void field_init(field_t *fl, float uspan, float vspan, float step, uint32_t seed,
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

static void colmap_init(colmap_t *cm, const field_t *fl, int w, float stretch, float shift)
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

static void colmap_free(colmap_t *cm)
{
    free(cm->i);
    free(cm->f);
}

static void field_row(const field_t *fl, const colmap_t *cm, float v, int w, float *out)
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
static void field_row_affine(const field_t *fl, float v, float du, int w, float *out)
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
static float fold(float v, float max)
{
    if (max <= 0)
        return 0;
    v = fmodf(fabsf(v), 2 * max);
    return v > max ? 2 * max - v : v;
}

static float field_at(const field_t *fl, float u, float v)
{
    float gx = u * fl->inv_step, gy = v * fl->inv_step;
    int i = clampi((int)gx, 0, fl->gw - 2), j = clampi((int)gy, 0, fl->gh - 2);
    float fx = clampf(gx - (float)i, 0, 1), fy = clampf(gy - (float)j, 0, 1);
    const float *r0 = fl->v + (size_t)j * (size_t)fl->gw, *r1 = r0 + fl->gw;
    float a = r0[i] + (r0[i + 1] - r0[i]) * fx, b = r1[i] + (r1[i + 1] - r1[i]) * fx;
    return a + (b - a) * fy;
}

/* ---- the description ---------------------------------------------------------------- */

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
    const char *word;
    unsigned flags;
} scene_word_t;

static const scene_word_t scene_words[] = {
    {"sunset", F_SUNSET}, {"dusk", F_SUNSET}, {"evening", F_SUNSET}, {"twilight", F_SUNSET},
    {"sundown", F_SUNSET}, {"sunrise", F_SUNRISE}, {"dawn", F_SUNRISE},
    {"morning", F_SUNRISE}, {"daybreak", F_SUNRISE}, {"night", F_NIGHT},
    {"midnight", F_NIGHT}, {"nighttime", F_NIGHT}, {"dark", F_NIGHT},
    {"star", F_NIGHT | F_STARS}, {"starry", F_NIGHT | F_STARS}, {"starlit", F_NIGHT | F_STARS},
    {"moon", F_NIGHT | F_MOON}, {"moonlight", F_NIGHT | F_MOON}, {"moonlit", F_NIGHT | F_MOON},
    {"ocean", F_OCEAN}, {"sea", F_OCEAN}, {"seascape", F_OCEAN}, {"wave", F_OCEAN},
    {"beach", F_OCEAN | F_BEACH}, {"coast", F_OCEAN | F_BEACH}, {"shore", F_OCEAN | F_BEACH},
    {"island", F_OCEAN | F_BEACH}, {"tropical", F_OCEAN | F_BEACH}, {"bay", F_OCEAN},
    {"harbor", F_OCEAN | F_CITY}, {"harbour", F_OCEAN | F_CITY}, {"forest", F_FOREST},
    {"tree", F_FOREST}, {"trees", F_FOREST}, {"wood", F_FOREST}, {"woods", F_FOREST},
    {"woodland", F_FOREST}, {"pine", F_FOREST}, {"jungle", F_FOREST}, {"taiga", F_FOREST},
    {"city", F_CITY}, {"cities", F_CITY}, {"skyline", F_CITY}, {"downtown", F_CITY},
    {"building", F_CITY}, {"skyscraper", F_CITY}, {"street", F_CITY}, {"urban", F_CITY},
    {"metropolis", F_CITY}, {"cyberpunk", F_CITY | F_NEON | F_NIGHT},
    {"neon", F_NEON | F_NIGHT}, {"village", F_VILLAGE}, {"town", F_VILLAGE},
    {"house", F_VILLAGE}, {"cottage", F_VILLAGE}, {"cabin", F_VILLAGE}, {"hamlet", F_VILLAGE},
    {"mountain", F_MOUNTAIN}, {"peak", F_MOUNTAIN}, {"alps", F_MOUNTAIN},
    {"alpine", F_MOUNTAIN}, {"valley", F_MOUNTAIN}, {"cliff", F_MOUNTAIN},
    {"volcano", F_MOUNTAIN}, {"hill", F_HILLS}, {"hills", F_HILLS}, {"countryside", F_HILLS},
    {"snow", F_SNOW}, {"snowy", F_SNOW}, {"winter", F_SNOW}, {"ice", F_SNOW},
    {"icy", F_SNOW}, {"frozen", F_SNOW}, {"snowflake", F_SNOW}, {"snowfall", F_SNOW},
    {"blizzard", F_SNOW}, {"arctic", F_SNOW}, {"christmas", F_SNOW},
    {"desert", F_DESERT}, {"dune", F_DESERT}, {"dunes", F_DESERT}, {"sand", F_DESERT},
    {"sahara", F_DESERT}, {"canyon", F_DESERT | F_MOUNTAIN}, {"flower", F_FLOWERS},
    {"garden", F_FLOWERS}, {"meadow", F_FLOWERS}, {"field", F_FLOWERS},
    {"blossom", F_FLOWERS}, {"bloom", F_FLOWERS}, {"tulip", F_FLOWERS}, {"daisy", F_FLOWERS},
    {"daisies", F_FLOWERS}, {"poppy", F_FLOWERS}, {"poppies", F_FLOWERS},
    {"spring", F_FLOWERS}, {"roses", F_FLOWERS}, {"lavender", F_FLOWERS},
    {"sunflower", F_FLOWERS}, {"space", F_SPACE}, {"galaxy", F_SPACE},
    {"galaxies", F_SPACE}, {"nebula", F_SPACE}, {"nebulae", F_SPACE}, {"cosmos", F_SPACE},
    {"cosmic", F_SPACE}, {"universe", F_SPACE}, {"planet", F_SPACE}, {"astronaut", F_SPACE},
    {"interstellar", F_SPACE}, {"lake", F_LAKE}, {"pond", F_LAKE}, {"river", F_LAKE},
    {"reflection", F_LAKE}, {"rain", F_RAIN}, {"rainy", F_RAIN}, {"raining", F_RAIN},
    {"storm", F_RAIN | F_CLOUDS}, {"stormy", F_RAIN | F_CLOUDS}, {"thunderstorm", F_RAIN | F_CLOUDS},
    {"autumn", F_AUTUMN}, {"fall", F_AUTUMN}, {"autumnal", F_AUTUMN}, {"leaves", F_AUTUMN},
    {"cloud", F_CLOUDS}, {"clouds", F_CLOUDS}, {"cloudy", F_CLOUDS}, {"overcast", F_CLOUDS},
    {"day", F_DAY}, {"sunny", F_DAY}, {"noon", F_DAY}, {"summer", F_DAY}, {"sun", F_DAY},
    {"fog", F_FOG}, {"foggy", F_FOG}, {"mist", F_FOG}, {"misty", F_FOG}, {"haze", F_FOG},
    {"sky", F_SKY}, {"landscape", F_SKY}, {"horizon", F_SKY}, {"nature", F_SKY},
};

typedef struct {
    const char *word;
    float r, g, b;
} colour_word_t;

static const colour_word_t colour_words[] = {
    {"red", 0.86f, 0.12f, 0.12f},      {"crimson", 0.72f, 0.05f, 0.18f},
    {"scarlet", 0.90f, 0.14f, 0.06f},  {"maroon", 0.50f, 0.06f, 0.10f},
    {"ruby", 0.80f, 0.06f, 0.25f},     {"orange", 0.98f, 0.50f, 0.10f},
    {"amber", 1.00f, 0.70f, 0.10f},    {"copper", 0.75f, 0.42f, 0.20f},
    {"yellow", 0.98f, 0.88f, 0.20f},   {"gold", 0.95f, 0.72f, 0.20f},
    {"golden", 0.95f, 0.72f, 0.20f},   {"green", 0.20f, 0.70f, 0.25f},
    {"emerald", 0.08f, 0.65f, 0.40f},  {"lime", 0.60f, 0.90f, 0.20f},
    {"olive", 0.45f, 0.50f, 0.15f},    {"teal", 0.05f, 0.55f, 0.55f},
    {"turquoise", 0.20f, 0.80f, 0.75f}, {"cyan", 0.10f, 0.80f, 0.90f},
    {"aqua", 0.15f, 0.85f, 0.85f},     {"blue", 0.15f, 0.35f, 0.90f},
    {"azure", 0.20f, 0.55f, 0.95f},    {"sapphire", 0.10f, 0.25f, 0.75f},
    {"navy", 0.05f, 0.10f, 0.40f},     {"indigo", 0.25f, 0.12f, 0.55f},
    {"purple", 0.50f, 0.15f, 0.70f},   {"violet", 0.55f, 0.25f, 0.85f},
    {"lavender", 0.70f, 0.60f, 0.90f}, {"lilac", 0.75f, 0.60f, 0.85f},
    {"pink", 0.98f, 0.50f, 0.70f},     {"rose", 0.95f, 0.35f, 0.50f},
    {"magenta", 0.90f, 0.10f, 0.70f},  {"fuchsia", 0.95f, 0.20f, 0.75f},
    {"white", 0.97f, 0.97f, 0.97f},    {"black", 0.03f, 0.03f, 0.04f},
    {"grey", 0.50f, 0.50f, 0.52f},     {"gray", 0.50f, 0.50f, 0.52f},
    {"silver", 0.76f, 0.78f, 0.80f},   {"brown", 0.45f, 0.28f, 0.14f},
    {"beige", 0.85f, 0.78f, 0.62f},    {"bronze", 0.70f, 0.48f, 0.22f},
};

typedef struct {
    unsigned flags;
    int ncol;
    rgb_t col[MAX_COLOURS];
} words_t;

static void img_word(words_t *wd, const char *w, size_t n)
{
    char tmp[24];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* plural: try once more without a final s */
            if (n < 4 || w[n - 1] != 's')
                return;
            n--;
        }
        memcpy(tmp, w, n);
        tmp[n] = '\0';
        bool hit = false;
        for (size_t i = 0; i < ARRAY_LEN(colour_words); i++)
            if (strcmp(tmp, colour_words[i].word) == 0) {
                if (wd->ncol < MAX_COLOURS) {
                    const colour_word_t *c = &colour_words[i];
                    wd->col[wd->ncol++] = rgb(c->r, c->g, c->b);
                }
                hit = true;
            }
        for (size_t i = 0; i < ARRAY_LEN(scene_words); i++)
            if (strcmp(tmp, scene_words[i].word) == 0) {
                wd->flags |= scene_words[i].flags;
                hit = true;
            }
        if (hit)
            return;
    }
}

/* ASCII letters make words (case-folded); anything else, UTF-8 included, separates. */
static void img_parse(const char *desc, words_t *wd)
{
    memset(wd, 0, sizeof *wd);
    char word[24];
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)desc;; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            if (n < sizeof word - 1)
                word[n] = (char)(c | 0x20);
            n++;
            continue;
        }
        if (n > 0 && n < sizeof word - 1)
            img_word(wd, word, n);
        n = 0;
        if (c == '\0')
            break;
    }
}

static uint64_t img_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- the scene ----------------------------------------------------------------------- */

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

static float *col_alloc(const scene_t *sc, float fill)
{
    float *a = xmalloc(sizeof(float) * (size_t)sc->w);
    for (int x = 0; x < sc->w; x++)
        a[x] = fill;
    return a;
}

static layer_t *layer_add(scene_t *sc, int kind, float ybot)
{
    layer_t *L = &sc->layer[sc->nl++];
    memset(L, 0, sizeof *L);
    L->kind = kind;
    L->ybot = ybot;
    L->top = col_alloc(sc, ybot);
    L->light = col_alloc(sc, 1.0f);
    L->texamp = 0.1f;
    return L;
}

/* Fog toward the sky near the horizon for far layers: haze in [0,1]. */
static rgb_t hazed(const scene_t *sc, rgb_t c, float haze)
{
    return mix(mul(c, sc->ambient), sc->haze, haze);
}

/* Slope shading: faces turned toward the light source are brighter. */
static void layer_shade_slopes(scene_t *sc, layer_t *L, float strength, float sharp)
{
    int w = sc->w, d = (int)maxf(1.0f, sc->S / 150.0f);
    float dir = sc->sx >= (float)w * 0.5f ? 1.0f : -1.0f;
    for (int x = 0; x < w; x++) {
        float s = (L->top[clampi(x + d, 0, w - 1)] - L->top[clampi(x - d, 0, w - 1)]) /
                  (float)(2 * d);
        float k = clampf(s * dir * sharp, -1.0f, 1.0f);
        L->light[x] = 1.0f + strength * k;
    }
    /* A box blur across columns: light changes along the ridge, not in stripes. */
    int rad = (int)maxf(1.0f, sc->S / 90.0f);
    double *sum = xmalloc(sizeof(double) * (size_t)(w + 1));
    sum[0] = 0;
    for (int x = 0; x < w; x++)
        sum[x + 1] = sum[x] + L->light[x];
    for (int x = 0; x < w; x++) {
        int a = clampi(x - rad, 0, w), b = clampi(x + rad + 1, 0, w);
        L->light[x] = (float)((sum[b] - sum[a]) / (double)(b - a));
    }
    free(sum);
}

static void layer_extent(layer_t *L, int w)
{
    L->ymin = L->ybot;
    for (int x = 0; x < w; x++)
        if (L->top[x] < L->ymin)
            L->ymin = L->top[x];
}

static void add_ridge(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze,
                      bool caps)
{
    layer_t *L = layer_add(sc, LK_RIDGE, base + 2.0f);
    uint32_t s = (uint32_t)rng_u64(r);
    float freq = rng_in(r, 2.0f, 3.5f) / sc->S;
    float off = rng_in(r, 0, 100);
    for (int x = 0; x < sc->w; x++) {
        float u = (float)x * freq + off;
        float n = 0.45f * fbm1(s, u, 3, false) + 0.55f * fbm1(s + 17, u * 0.8f, 6, true);
        L->top[x] = base - (hmin + (hmax - hmin) * n) * (float)sc->h;
    }
    layer_extent(L, sc->w);
    layer_shade_slopes(sc, L, 0.45f * (1.0f - haze), 1.6f);
    L->inv_fall = 1.0f / (sc->S * 0.12f);
    rgb_t rock = sc->flags & F_DESERT ? rgb(0.62f, 0.36f, 0.24f) : rgb(0.30f, 0.33f, 0.40f);
    if (sc->flags & F_AUTUMN)
        rock = rgb(0.40f, 0.30f, 0.28f);
    if (sc->words.ncol > 0)
        rock = tint(rock, sc->words.col[0], 0.25f);
    L->c_top = hazed(sc, rock, haze);
    L->c_bot = hazed(sc, rock, minf(1.0f, haze + 0.35f)); /* valley mist */
    L->texamp = 0.12f;
    if (caps) {
        L->cap = col_alloc(sc, 0.0f);
        float snowline = L->ymin + (base - L->ymin) * 0.45f;
        for (int x = 0; x < sc->w; x++) {
            float above = snowline - L->top[x];
            float jag = 0.6f + 0.8f * vnoise1(s + 99, (float)x * 40.0f / sc->S);
            L->cap[x] = above > 0 ? above * 0.8f * jag : 0.0f;
        }
        L->c_snow = mix(mul(rgb(0.93f, 0.95f, 1.0f), sc->snow_light), sc->haze, haze * 0.8f);
    }
}

static void add_dunes(scene_t *sc, rng_t *r, float base, float amp, float haze, float ybot)
{
    layer_t *L = layer_add(sc, LK_DUNE, ybot);
    uint32_t s = (uint32_t)rng_u64(r);
    float freq = rng_in(r, 1.2f, 2.2f) / sc->S, off = rng_in(r, 0, 50);
    for (int x = 0; x < sc->w; x++) {
        float u = (float)x * freq + off;
        float n = 0.7f * fbm1(s, u, 2, true) + 0.3f * fbm1(s + 5, u * 2.5f, 2, false);
        L->top[x] = base - amp * n * (float)sc->h;
    }
    layer_extent(L, sc->w);
    layer_shade_slopes(sc, L, 0.30f, 3.0f);
    L->inv_fall = 1.0f / (sc->S * 0.09f);
    rgb_t sand = rgb(0.92f, 0.66f, 0.38f);
    if (sc->words.ncol > 0)
        sand = tint(sand, sc->words.col[0], 0.4f);
    L->c_top = hazed(sc, sand, haze);
    L->c_bot = hazed(sc, mul(sand, rgb(0.72f, 0.62f, 0.58f)), haze * 0.6f);
    L->texamp = 0.06f;
}

static const rgb_t autumn_leaves[] = {{1.0f, 0.45f, 0.1f}, {0.9f, 0.2f, 0.08f},
                                     {1.0f, 0.72f, 0.15f}, {0.6f, 0.35f, 0.1f}};

/* One tree into the layer's columns: a conifer (a tiered triangle) or a round crown. */
static void tree_put(const scene_t *sc, layer_t *L, float x, float base, float th, float hw,
                     float shade, rgb_t c)
{
    bool round = L->tint != NULL;
    int a = clampi((int)(x - hw), 0, sc->w), b = clampi((int)(x + hw) + 1, 0, sc->w);
    for (int i = a; i < b; i++) {
        float u = fabsf(((float)i - x) / hw);
        if (u >= 1.0f)
            continue;
        float t;
        if (round) {
            /* A crown of a few lobes, not a single dome. */
            float lobe = 0.08f * (1.0f - u) * (1.0f - fabsf(2.0f * (u * 2.5f - floorf(u * 2.5f)) - 1.0f));
            t = base - th * (0.35f + 0.6f * sqrtf(1.0f - u * u) + lobe);
        } else {
            /* Three tiers: a sawtooth on the slope makes branches. */
            float tier = u * 3.0f - floorf(u * 3.0f);
            t = base - th * (1.0f - u) + th * 0.06f * tier;
        }
        if (t < L->top[i]) {
            L->top[i] = t;
            L->light[i] = shade * (1.0f + (((float)i > x) == (sc->sx > x) ? 0.15f : -0.1f));
            if (round)
                L->tint[i] = c;
        }
    }
}

static void trees_colour(scene_t *sc, layer_t *L, float haze, float dark)
{
    rgb_t leaf = rgb(0.08f, 0.25f, 0.14f);
    if (L->tint)
        leaf = rgb(0.85f, 0.85f, 0.85f);
    if (sc->flags & F_SNOW)
        leaf = rgb(0.16f, 0.26f, 0.24f);
    if (sc->words.ncol > 0)
        leaf = tint(leaf, sc->words.col[0], 0.15f);
    leaf = scale(leaf, dark);
    L->inv_fall = 1.0f / (sc->S * (L->tint ? 0.09f : 0.2f));
    L->c_top = hazed(sc, leaf, haze);
    L->c_bot = hazed(sc, scale(leaf, 0.7f), minf(1.0f, haze + 0.25f));
    L->texamp = 0.15f;
}

/* A tree line along base: conifers or, in autumn, round crowns in warm colours. */
static void add_trees(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze)
{
    layer_t *L = layer_add(sc, LK_TREES, base + 2.0f);
    if (sc->flags & F_AUTUMN) {
        L->tint = xmalloc(sizeof(rgb_t) * (size_t)sc->w);
        for (int x = 0; x < sc->w; x++)
            L->tint[x] = rgb(0.5f, 0.35f, 0.2f);
    }
    uint32_t s = (uint32_t)rng_u64(r);
    for (int x = 0; x < sc->w; x++)
        L->top[x] = base - (0.2f * hmin + 0.3f * hmin * vnoise1(s, (float)x * 4.0f / sc->S)) *
                               (float)sc->h;
    float x = -rng_in(r, 0, 0.02f) * sc->S;
    while (x < (float)sc->w + 0.05f * sc->S) {
        float th = rng_in(r, hmin, hmax) * (float)sc->h;
        float hw = th * (L->tint ? rng_in(r, 0.3f, 0.45f) : rng_in(r, 0.2f, 0.3f));
        rgb_t c = autumn_leaves[rng_u64(r) % ARRAY_LEN(autumn_leaves)];
        tree_put(sc, L, x, base, th, hw, rng_in(r, 0.8f, 1.15f), c);
        x += hw * (L->tint ? rng_in(r, 0.45f, 0.9f) : rng_in(r, 0.7f, 1.3f));
    }
    layer_extent(L, sc->w);
    trees_colour(sc, L, haze, 1.0f);
}

/* Tall dark trees at the left and right edges, framing a view over water. */
static void add_frame_trees(scene_t *sc, rng_t *r)
{
    float H = (float)sc->h;
    layer_t *L = layer_add(sc, LK_TREES, H);
    if (sc->flags & F_AUTUMN) {
        L->tint = xmalloc(sizeof(rgb_t) * (size_t)sc->w);
        for (int x = 0; x < sc->w; x++)
            L->tint[x] = rgb(0.5f, 0.35f, 0.2f);
    }
    for (int side = 0; side < 2; side++) {
        int n = 2 + (int)(rng_u64(r) % 3);
        for (int i = 0; i < n; i++) {
            float u = rng_in(r, -0.04f, 0.13f);
            float x = (float)sc->w * (side ? 1.0f - u : u);
            float th = H * rng_in(r, 0.45f, 0.9f);
            float hw = th * (L->tint ? rng_in(r, 0.25f, 0.35f) : rng_in(r, 0.13f, 0.18f));
            rgb_t c = autumn_leaves[rng_u64(r) % ARRAY_LEN(autumn_leaves)];
            tree_put(sc, L, x, H + H * 0.05f, th, hw, rng_in(r, 0.85f, 1.1f), c);
        }
    }
    layer_extent(L, sc->w);
    trees_colour(sc, L, 0.0f, 0.55f);
}

static void win_colours(scene_t *sc, layer_t *L)
{
    bool night = sc->tod == TOD_NIGHT || sc->tod == TOD_SPACE;
    L->c_win[0] = rgb(1.0f, 0.80f, 0.45f);
    L->c_win[1] = rgb(1.0f, 0.92f, 0.70f);
    L->c_win[2] = rgb(0.95f, 0.65f, 0.35f);
    if (sc->flags & F_NEON) {
        L->c_win[1] = rgb(1.0f, 0.25f, 0.8f);
        L->c_win[2] = rgb(0.2f, 0.9f, 1.0f);
    }
    for (int i = 0; i < sc->words.ncol && i < 2; i++)
        L->c_win[i + 1] = tint(L->c_win[i + 1], sc->words.col[i], 0.6f);
    L->c_win_dark = night ? rgb(0.04f, 0.05f, 0.08f) : mul(rgb(0.55f, 0.65f, 0.8f), sc->ambient);
    L->lit_p = night ? 0.45f : sc->tod == TOD_DAY ? 0.0f : 0.25f;
}

static void add_city(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze)
{
    layer_t *L = layer_add(sc, LK_CITY, base + 1.0f);
    int cap = sc->w / 4 + 8;
    L->b = xmalloc(sizeof(bldg_t) * (size_t)cap);
    L->bid = xmalloc(sizeof(int16_t) * (size_t)sc->w);
    for (int x = 0; x < sc->w; x++)
        L->bid[x] = -1;
    float x = -rng_in(r, 0, 0.03f) * sc->S;
    while (x < (float)sc->w && L->nb < cap && L->nb < 32000) {
        float bw = rng_in(r, 0.035f, 0.09f) * sc->S;
        float t = rng_f(r);
        float bh = (hmin + (hmax - hmin) * t * t) * (float)sc->h;
        bldg_t *B = &L->b[L->nb];
        B->x0 = clampi((int)x, 0, sc->w);
        B->x1 = clampi((int)(x + bw), 0, sc->w);
        B->top = base - bh;
        B->px = (int)maxf(2.0f, sc->S * rng_in(r, 0.009f, 0.014f));
        B->py = (int)maxf(2.0f, sc->S * rng_in(r, 0.012f, 0.018f));
        B->ww = (int)maxf(1.0f, (float)B->px * 0.55f);
        B->wh = (int)maxf(1.0f, (float)B->py * 0.55f);
        B->mx = (int)maxf(1.0f, (float)B->px * 0.6f);
        B->my = B->mx;
        B->hash = (uint32_t)rng_u64(r);
        B->shade = rng_in(r, 0.75f, 1.2f);
        for (int i = B->x0; i < B->x1; i++) {
            L->top[i] = B->top;
            L->bid[i] = (int16_t)L->nb;
            L->light[i] = (float)(i - B->x0) < (float)(B->x1 - B->x0) * 0.2f ? 0.72f : 1.0f;
        }
        if (bh > 0.2f * (float)sc->h && rng_f(r) < 0.4f) { /* an antenna */
            int ax = (B->x0 + B->x1) / 2, aw = (int)maxf(1.0f, sc->S * 0.003f);
            for (int i = ax; i < ax + aw && i < sc->w; i++)
                L->top[i] = B->top - bh * 0.18f;
        }
        L->nb++;
        x += bw + (rng_f(r) < 0.3f ? rng_in(r, 0.0f, 0.02f) * sc->S : 0.0f);
    }
    layer_extent(L, sc->w);
    rgb_t facade = sc->tod == TOD_DAY ? rgb(0.45f, 0.48f, 0.55f) : rgb(0.10f, 0.11f, 0.16f);
    if (sc->words.ncol > 0)
        facade = tint(facade, sc->words.col[0], 0.2f);
    L->c_top = hazed(sc, facade, haze);
    L->c_bot = hazed(sc, facade, minf(1.0f, haze + 0.25f));
    win_colours(sc, L);
    L->texamp = 0.05f;
}

/* Houses standing on the ground layer, in front of it, lit windows after dark. */
static void add_houses(scene_t *sc, rng_t *r, const layer_t *ground)
{
    layer_t *L = layer_add(sc, LK_HOUSES, (float)sc->h);
    int cap = 48;
    L->b = xmalloc(sizeof(bldg_t) * (size_t)cap);
    L->bid = xmalloc(sizeof(int16_t) * (size_t)sc->w);
    L->bot = col_alloc(sc, 0.0f);
    for (int x = 0; x < sc->w; x++)
        L->bid[x] = -1;
    float x = rng_in(r, 0.03f, 0.2f) * (float)sc->w;
    float end = (float)sc->w * rng_in(r, 0.8f, 0.98f);
    while (L->nb < cap) {
        float depth = rng_f(r); /* 0 far, 1 near */
        float hw = rng_in(r, 0.04f, 0.06f) * sc->S * (1.0f + 0.8f * depth);
        if (x + hw > end)
            break;
        float cx = x + hw * 0.5f, half = hw * 0.58f;
        float gtop = ground ? ground->top[clampi((int)cx, 0, sc->w - 1)] : sc->hy;
        float base = gtop + (0.01f + 0.05f * depth) * (float)sc->h;
        float wall = hw * rng_in(r, 0.5f, 0.75f), roof = hw * rng_in(r, 0.35f, 0.55f);
        bldg_t *B = &L->b[L->nb];
        B->x0 = clampi((int)x, 0, sc->w);
        B->x1 = clampi((int)(x + hw), 0, sc->w);
        B->top = base - wall;
        B->px = (int)maxf(2.0f, hw * 0.36f);
        B->py = (int)maxf(2.0f, wall + 4.0f);
        B->ww = (int)maxf(1.0f, hw * 0.16f);
        B->wh = (int)maxf(1.0f, wall * 0.32f);
        B->mx = (int)maxf(1.0f, hw * 0.2f);
        B->my = (int)maxf(1.0f, wall * 0.28f);
        B->hash = (uint32_t)rng_u64(r);
        B->shade = rng_in(r, 0.7f, 1.1f);
        for (int i = clampi((int)(cx - half), 0, sc->w); i < clampi((int)(cx + half) + 1, 0, sc->w); i++) {
            float u = fabsf(((float)i - cx) / half);
            L->top[i] = B->top - roof * (1.0f - u);
            L->bot[i] = (float)i >= x && (float)i < x + hw ? base : B->top + 1.0f;
            L->bid[i] = (int16_t)L->nb;
            L->light[i] = ((float)i < cx) == (sc->sx < cx) ? 1.1f : 0.8f;
        }
        L->nb++;
        x += hw * rng_in(r, 1.25f, 2.4f);
    }
    layer_extent(L, sc->w);
    L->c_top = hazed(sc, rgb(0.55f, 0.38f, 0.25f), 0.05f);
    L->c_bot = L->c_top;
    L->c_roof = hazed(sc, sc->flags & F_SNOW ? rgb(0.92f, 0.94f, 1.0f) : rgb(0.45f, 0.15f, 0.12f), 0.05f);
    win_colours(sc, L);
    L->lit_p = sc->tod == TOD_DAY ? 0.0f : 0.85f;
    L->texamp = 0.05f;
}

static layer_t *add_ground(scene_t *sc, rng_t *r, float top, float amp, rgb_t far, rgb_t near,
                           float haze)
{
    layer_t *L = layer_add(sc, LK_GROUND, (float)sc->h);
    uint32_t s = (uint32_t)rng_u64(r);
    for (int x = 0; x < sc->w; x++)
        L->top[x] = top - amp * (float)sc->h * fbm1(s, (float)x * 2.0f / sc->S, 3, false);
    layer_extent(L, sc->w);
    rgb_t amb = sc->ambient;
    if (sc->flags & F_SNOW)
        sc->ambient = sc->snow_light;
    L->c_top = hazed(sc, far, haze);
    L->c_bot = hazed(sc, near, 0.0f);
    sc->ambient = amb;
    L->texamp = 0.1f;
    return L;
}

/* ---- palette and composition --------------------------------------------------------- */

static void scene_time(scene_t *sc, rng_t *r)
{
    unsigned f = sc->flags;
    if (f & F_SPACE)
        sc->tod = TOD_SPACE;
    else if (f & F_NIGHT)
        sc->tod = TOD_NIGHT;
    else if (f & F_SUNSET)
        sc->tod = TOD_SUNSET;
    else if (f & F_SUNRISE)
        sc->tod = TOD_SUNRISE;
    else
        sc->tod = TOD_DAY;
    float H = (float)sc->h, W = (float)sc->w;
    sc->sx = W * rng_in(r, 0.25f, 0.75f);
    switch (sc->tod) {
    case TOD_DAY:
        sc->sky_top = rgb(0.16f, 0.38f, 0.76f);
        sc->sky_mid = rgb(0.40f, 0.62f, 0.90f);
        sc->sky_hor = rgb(0.80f, 0.87f, 0.93f);
        sc->disc = rgb(1.0f, 0.98f, 0.90f);
        sc->glow_col = rgb(1.0f, 0.94f, 0.80f);
        sc->glow_a = 0.35f, sc->halo_a = 0.22f;
        sc->sy = sc->hy * rng_in(r, 0.25f, 0.45f);
        sc->ambient = rgb(1.0f, 1.0f, 1.0f);
        sc->cloud_lit = rgb(1.0f, 1.0f, 1.0f);
        sc->cloud_dark = rgb(0.70f, 0.74f, 0.82f);
        break;
    case TOD_SUNSET:
        sc->sky_top = rgb(0.13f, 0.13f, 0.36f);
        sc->sky_mid = rgb(0.66f, 0.30f, 0.40f);
        sc->sky_hor = rgb(1.0f, 0.58f, 0.26f);
        sc->disc = rgb(1.0f, 0.90f, 0.62f);
        sc->glow_col = rgb(1.0f, 0.55f, 0.20f);
        sc->glow_a = 0.85f, sc->halo_a = 0.45f;
        sc->sy = sc->hy - H * rng_in(r, 0.06f, 0.12f);
        sc->ambient = rgb(0.80f, 0.52f, 0.45f);
        sc->cloud_lit = rgb(1.0f, 0.60f, 0.45f);
        sc->cloud_dark = rgb(0.38f, 0.20f, 0.34f);
        break;
    case TOD_SUNRISE:
        sc->sky_top = rgb(0.24f, 0.34f, 0.64f);
        sc->sky_mid = rgb(0.86f, 0.60f, 0.62f);
        sc->sky_hor = rgb(1.0f, 0.82f, 0.56f);
        sc->disc = rgb(1.0f, 0.95f, 0.78f);
        sc->glow_col = rgb(1.0f, 0.74f, 0.42f);
        sc->glow_a = 0.75f, sc->halo_a = 0.40f;
        sc->sy = sc->hy - H * rng_in(r, 0.05f, 0.11f);
        sc->ambient = rgb(0.86f, 0.72f, 0.70f);
        sc->cloud_lit = rgb(1.0f, 0.80f, 0.70f);
        sc->cloud_dark = rgb(0.55f, 0.45f, 0.58f);
        break;
    case TOD_NIGHT:
        sc->sky_top = rgb(0.01f, 0.02f, 0.06f);
        sc->sky_mid = rgb(0.03f, 0.06f, 0.16f);
        sc->sky_hor = rgb(0.10f, 0.15f, 0.30f);
        sc->disc = rgb(0.96f, 0.95f, 0.88f);
        sc->glow_col = rgb(0.50f, 0.62f, 0.85f);
        sc->glow_a = 0.28f, sc->halo_a = 0.10f;
        sc->sy = sc->hy * rng_in(r, 0.2f, 0.4f);
        sc->ambient = rgb(0.20f, 0.25f, 0.40f);
        sc->cloud_lit = rgb(0.30f, 0.33f, 0.45f);
        sc->cloud_dark = rgb(0.06f, 0.07f, 0.12f);
        break;
    default: /* space */
        sc->sky_top = rgb(0.0f, 0.0f, 0.02f);
        sc->sky_mid = rgb(0.01f, 0.01f, 0.04f);
        sc->sky_hor = rgb(0.03f, 0.02f, 0.07f);
        sc->glow_col = rgb(0.9f, 0.6f, 0.9f);
        sc->glow_a = 0.25f, sc->halo_a = 0.12f;
        sc->sy = H * rng_in(r, 0.3f, 0.6f);
        sc->ambient = rgb(0.30f, 0.25f, 0.40f);
        sc->cloud_lit = rgb(0.3f, 0.3f, 0.3f);
        sc->cloud_dark = rgb(0.1f, 0.1f, 0.1f);
        break;
    }
    sc->sun = sc->tod == TOD_DAY || sc->tod == TOD_SUNSET || sc->tod == TOD_SUNRISE;
    sc->moon = sc->tod == TOD_NIGHT;
    sc->glow = true;
    sc->sr = sc->S * (sc->moon ? rng_in(r, 0.035f, 0.055f) : rng_in(r, 0.035f, 0.05f));
    sc->glow_k = 1.0f / (sc->S * sc->S * 0.004f);
    sc->halo_k = 1.0f / (sc->S * sc->S * 0.06f);
    sc->cloud_thr = (sc->flags & (F_CLOUDS | F_RAIN)) ? 0.38f : sc->tod == TOD_DAY ? 0.56f : 0.62f;
    sc->cloud_alpha = (sc->flags & F_RAIN) ? 0.95f : 0.8f;
}

static void scene_weather(scene_t *sc)
{
    unsigned f = sc->flags;
    if (f & F_RAIN) {
        sc->sky_top = mix(sc->sky_top, rgb(0.30f, 0.32f, 0.36f), sc->tod == TOD_NIGHT ? 0.2f : 0.6f);
        sc->sky_mid = mix(sc->sky_mid, scale(rgb(0.45f, 0.47f, 0.52f), luma(sc->sky_mid) * 1.6f + 0.1f), 0.6f);
        sc->sky_hor = mix(sc->sky_hor, rgb(0.6f, 0.62f, 0.66f), sc->tod == TOD_NIGHT ? 0.15f : 0.5f);
        sc->ambient = scale(sc->ambient, 0.75f);
        sc->cloud_lit = scale(sc->cloud_lit, 0.75f);
        sc->cloud_dark = scale(sc->cloud_dark, 0.7f);
        sc->glow_a *= 0.4f;
        sc->sun = false;
        sc->moon = false;
    }
    if ((f & F_SNOW) && sc->tod == TOD_DAY) {
        sc->sky_top = mix(sc->sky_top, rgb(0.55f, 0.65f, 0.80f), 0.4f);
        sc->sky_hor = mix(sc->sky_hor, rgb(0.90f, 0.92f, 0.96f), 0.5f);
    }
    if (f & F_NEON) {
        sc->sky_mid = mix(sc->sky_mid, rgb(0.22f, 0.05f, 0.30f), 0.7f);
        sc->sky_hor = mix(sc->sky_hor, rgb(0.60f, 0.12f, 0.50f), 0.7f);
        sc->glow_col = rgb(0.9f, 0.3f, 0.8f);
        sc->moon = false;
    }
    if (f & F_AUTUMN)
        sc->ambient = mul(sc->ambient, rgb(1.05f, 0.95f, 0.85f));
    if (f & F_FOG)
        sc->cloud_thr = 0.9f;
    if ((f & F_DESERT) && !(f & (F_CLOUDS | F_RAIN)))
        sc->cloud_thr = 0.72f;
}

static void scene_named_colours(scene_t *sc)
{
    const words_t *wd = &sc->words;
    if (wd->ncol == 0)
        return;
    rgb_t k = wd->col[0];
    float w = sc->tod == TOD_SPACE ? 0.2f : 0.45f;
    sc->sky_top = tint(sc->sky_top, k, w * 0.7f);
    sc->sky_mid = tint(sc->sky_mid, k, w);
    sc->sky_hor = tint(sc->sky_hor, k, w * 1.1f);
    sc->glow_col = tint(sc->glow_col, k, 0.6f);
    sc->disc = tint(sc->disc, k, 0.2f);
    sc->cloud_lit = tint(sc->cloud_lit, k, 0.35f);
    sc->cloud_dark = tint(sc->cloud_dark, k, 0.25f);
    sc->ambient = tint(sc->ambient, k, 0.2f);
}

static void scene_tone(scene_t *sc, img_style_t style)
{
    float sat = 1.12f, con = 1.05f, lift = 0.0f;
    sc->vignette = 0.22f;
    if (style == STYLE_VIVID)
        sat = 1.55f, con = 1.18f, lift = -0.01f, sc->vignette = 0.30f;
    else if (style == STYLE_NATURAL)
        sat = 0.68f, con = 0.86f, lift = 0.03f, sc->vignette = 0.14f;
    /* out = con*(l + sat*(c - l)) + 0.5*(1 - con) + lift */
    sc->tone.ks = con * sat;
    sc->tone.kl = con * (1.0f - sat);
    sc->tone.o = 0.5f * (1.0f - con) + lift;
}

static void scene_water(scene_t *sc, rng_t *r)
{
    unsigned f = sc->flags;
    bool water = (f & (F_OCEAN | F_LAKE)) || ((f & F_CITY) && (f & (F_RAIN | F_NEON)));
    sc->wt = sc->h;
    if (!water || (f & F_DESERT && !(f & (F_OCEAN | F_LAKE))))
        return;
    float H = (float)sc->h;
    sc->street = !(f & (F_OCEAN | F_LAKE));
    float frac = sc->street ? rng_in(r, 0.70f, 0.76f) : (f & F_LAKE) ? rng_in(r, 0.52f, 0.6f)
                                                                    : rng_in(r, 0.55f, 0.62f);
    sc->wt = clampi((int)(H * frac), 1, sc->h);
    sc->hy = (float)sc->wt;
    rgb_t deep = (f & F_LAKE) ? rgb(0.06f, 0.16f, 0.20f) : rgb(0.03f, 0.14f, 0.30f);
    if (sc->street)
        deep = rgb(0.05f, 0.05f, 0.07f);
    deep = mul(deep, add(scale(sc->ambient, 0.8f), rgb(0.1f, 0.1f, 0.1f)));
    if (sc->words.ncol > 0)
        deep = tint(deep, sc->words.col[0], 0.3f);
    sc->water_far = mix(deep, sc->sky_hor, 0.35f);
    sc->water_near = deep;
    sc->refl_far = sc->street ? 0.55f : 0.82f;
    sc->refl_near = sc->street ? 0.35f : (f & F_LAKE) ? 0.6f : 0.45f;
    sc->wave = (f & F_LAKE) ? 0.4f : sc->street ? 1.6f : 1.0f;
}

/* Picks silhouettes for the scene words, far to near. */
static void scene_layers(scene_t *sc, rng_t *r)
{
    unsigned f = sc->flags;
    float H = (float)sc->h, hy = sc->hy;
    bool water = sc->wt < sc->h;
    bool lone = !(f & (F_FOREST | F_CITY | F_VILLAGE | F_DESERT | F_OCEAN | F_LAKE | F_FLOWERS | F_HILLS));
    bool mountains = (f & F_MOUNTAIN) || ((f & F_SNOW) && !(f & F_CITY)) ||
                     ((f & F_LAKE) && !(f & F_CITY)) || (lone && !(f & F_SPACE));
    bool caps = (f & F_SNOW) || ((f & F_MOUNTAIN) && rng_f(r) < 0.5f);
    if (f & F_SPACE && !(f & (F_MOUNTAIN | F_DESERT | F_OCEAN | F_LAKE | F_FOREST | F_CITY)))
        return;
    if (mountains) {
        bool busy = (f & (F_CITY | F_FOREST)) != 0;
        float k = busy ? 0.7f : 1.0f;
        add_ridge(sc, r, hy, 0.16f * k, 0.40f * k, 0.62f, caps);
        add_ridge(sc, r, hy, 0.08f * k, 0.26f * k, 0.40f, caps);
        if (!busy)
            add_ridge(sc, r, hy, 0.03f, 0.13f, 0.18f, caps && rng_f(r) < 0.5f);
    }
    if (f & F_HILLS && !(f & F_DESERT)) {
        layer_t *L = add_ground(sc, r, hy, 0.08f, rgb(0.40f, 0.58f, 0.30f), rgb(0.25f, 0.45f, 0.2f), 0.5f);
        L->ybot = hy + 2.0f;
    }
    if (f & F_DESERT) {
        float yb = water ? hy + 2.0f : H;
        add_dunes(sc, r, hy, 0.06f, 0.45f, yb);
        if (!water) {
            add_dunes(sc, r, hy + (H - hy) * 0.25f, 0.10f, 0.25f, H);
            add_dunes(sc, r, hy + (H - hy) * 0.6f, 0.14f, 0.08f, H);
            add_dunes(sc, r, H + (H - hy) * 0.1f, 0.18f, 0.0f, H);
        }
    }
    if (f & F_CITY) {
        float base = water ? hy : hy + H * 0.02f;
        if (sc->h >= 64)
            add_city(sc, r, base, 0.12f, 0.42f, sc->tod == TOD_DAY ? 0.55f : 0.35f);
        add_city(sc, r, base, 0.05f, 0.26f, sc->tod == TOD_DAY ? 0.25f : 0.08f);
    }
    if (f & F_FOREST) {
        add_trees(sc, r, hy, 0.05f, 0.10f, water ? 0.3f : 0.45f);
        if (!water)
            add_trees(sc, r, hy + H * 0.03f, 0.08f, 0.16f, 0.12f);
    }
    if (f & F_DESERT && !water)
        return;
    /* The ground, or a foreground shore before the water. */
    rgb_t far = rgb(0.36f, 0.55f, 0.24f), near = rgb(0.14f, 0.34f, 0.10f);
    if (f & F_AUTUMN)
        far = rgb(0.62f, 0.45f, 0.18f), near = rgb(0.40f, 0.22f, 0.08f);
    if (f & F_SNOW)
        far = rgb(0.88f, 0.92f, 0.98f), near = rgb(0.72f, 0.80f, 0.94f);
    if (f & F_BEACH)
        far = rgb(0.93f, 0.82f, 0.62f), near = rgb(0.80f, 0.66f, 0.45f);
    if (f & F_CITY && !water)
        far = rgb(0.25f, 0.25f, 0.28f), near = rgb(0.12f, 0.12f, 0.14f);
    if (sc->words.ncol > 1) {
        far = tint(far, sc->words.col[1], 0.3f);
        near = tint(near, sc->words.col[1], 0.3f);
    }
    layer_t *ground = NULL;
    if (!water) {
        ground = add_ground(sc, r, hy + H * 0.02f, 0.025f, far, near, 0.35f);
    } else if (f & F_BEACH) {
        ground = add_ground(sc, r, H * rng_in(r, 0.80f, 0.86f), 0.03f, far, near, 0.0f);
        ground->foam = sc->S * 0.012f;
    } else if (f & F_FLOWERS && !(f & F_CITY)) {
        ground = add_ground(sc, r, H * rng_in(r, 0.84f, 0.9f), 0.03f, scale(near, 0.8f),
                            scale(near, 0.5f), 0.0f);
    }
    if (water && (f & F_FOREST) && !sc->street)
        add_frame_trees(sc, r);
    if (f & F_VILLAGE)
        add_houses(sc, r, ground);
}

static void scene_space(scene_t *sc, rng_t *r)
{
    const words_t *wd = &sc->words;
    sc->nebula = true;
    sc->neb_a = wd->ncol > 0 ? wd->col[0] : hsv(rng_in(r, 0.55f, 0.95f), 0.75f, 0.9f);
    sc->neb_b = wd->ncol > 1 ? wd->col[1] : hsv(rng_in(r, 0.0f, 1.0f), 0.7f, 0.9f);
    if (wd->ncol == 1) {
        /* A neighbouring hue of the named one, for depth. */
        float hh, ss, vv;
        rgb_to_hsv(sc->neb_a, &hh, &ss, &vv);
        sc->neb_b = hsv(hh + (rng_f(r) < 0.5f ? -0.13f : 0.13f), ss * 0.8f, minf(1.0f, vv * 1.1f));
    }
    sc->glow_col = mix(sc->neb_a, rgb(1, 1, 1), 0.4f);
    sc->sx = (float)sc->w * rng_in(r, 0.3f, 0.7f);
    sc->sy = (float)sc->h * rng_in(r, 0.3f, 0.6f);
    sc->glow_a = 0.45f;
    sc->halo_a = 0.25f;
    sc->planet = (sc->flags & F_SPACE) && rng_f(r) < 0.7f && sc->nl == 0;
    if (sc->planet) {
        sc->pr = sc->S * rng_in(r, 0.10f, 0.2f);
        sc->px = (float)sc->w * (rng_f(r) < 0.5f ? rng_in(r, 0.12f, 0.3f) : rng_in(r, 0.7f, 0.88f));
        sc->py = (float)sc->h * rng_in(r, 0.62f, 0.8f);
        sc->planet_col = mix(sc->neb_b, rgb(0.6f, 0.55f, 0.5f), 0.5f);
        float lx = sc->sx - sc->px, ly = sc->sy - sc->py, ln = sqrtf(lx * lx + ly * ly) + 1e-3f;
        sc->plx = 0.9f * lx / ln;
        sc->ply = 0.9f * ly / ln;
    }
}

/* ---- abstract composition ------------------------------------------------------------ */

static void scene_abstract(scene_t *sc, rng_t *r)
{
    const words_t *wd = &sc->words;
    float h0 = rng_f(r);
    rgb_t pal[5];
    for (int i = 0; i < 5; i++) {
        static const float dh[5] = {0.0f, 0.07f, 0.5f, 0.12f, 0.55f};
        pal[i] = hsv(h0 + dh[i], rng_in(r, 0.45f, 0.8f), rng_in(r, 0.55f, 0.95f));
        if (i < wd->ncol)
            pal[i] = wd->col[i];
        else if (wd->ncol > 0)
            pal[i] = tint(pal[i], wd->col[i % wd->ncol], 0.6f);
    }
    sc->ga = scale(pal[0], 0.55f);
    sc->gb = mix(pal[1], rgb(0.05f, 0.05f, 0.1f), 0.45f);
    sc->gx = xmalloc(sizeof(float) * (size_t)sc->w);
    sc->gy = xmalloc(sizeof(float) * (size_t)sc->h);
    float ang = rng_in(r, 0, 2 * PI_F), ax = cosf(ang), ay = sinf(ang);
    float span = fabsf(ax) * (float)sc->w + fabsf(ay) * (float)sc->h + 1.0f;
    float o = (ax < 0 ? -ax * (float)sc->w : 0) + (ay < 0 ? -ay * (float)sc->h : 0);
    for (int x = 0; x < sc->w; x++)
        sc->gx[x] = ((float)x * ax + o) / span;
    for (int y = 0; y < sc->h; y++)
        sc->gy[y] = (float)y * ay / span;
    sc->nblob = 4 + (int)(rng_u64(r) % 4);
    for (int i = 0; i < sc->nblob; i++) {
        blob_t *b = &sc->blob[i];
        b->x = rng_in(r, -0.1f, 1.1f) * (float)sc->w;
        b->y = rng_in(r, -0.1f, 1.1f) * (float)sc->h;
        b->r = sc->S * rng_in(r, 0.2f, 0.6f);
        b->inv_r2 = 1.0f / (b->r * b->r);
        b->a = rng_in(r, 0.45f, 0.85f);
        b->c = pal[(i + 1) % 5];
    }
    sc->nrib = 2 + (int)(rng_u64(r) % 2);
    for (int k = 0; k < sc->nrib; k++) {
        ribbon_t *rb = &sc->rib[k];
        rb->cy = xmalloc(sizeof(float) * (size_t)sc->w);
        float base = (float)sc->h * rng_in(r, 0.25f, 0.8f), amp = (float)sc->h * rng_in(r, 0.05f, 0.18f);
        float fr = rng_in(r, 1.0f, 3.0f) * 2 * PI_F / (float)sc->w, ph = rng_in(r, 0, 6.28f);
        float fr2 = fr * rng_in(r, 1.8f, 2.6f), ph2 = rng_in(r, 0, 6.28f);
        for (int x = 0; x < sc->w; x++)
            rb->cy[x] = base + amp * sinf((float)x * fr + ph) + amp * 0.3f * sinf((float)x * fr2 + ph2);
        rb->th = sc->S * rng_in(r, 0.03f, 0.09f);
        rb->a = rng_in(r, 0.35f, 0.6f);
        rb->c = mix(pal[(k + 2) % 5], rgb(1, 1, 1), 0.3f);
    }
}

/* ---- building and freeing the scene -------------------------------------------------- */

static void scene_build(scene_t *sc, const char *desc, int w, int h, img_style_t style)
{
    memset(sc, 0, sizeof *sc);
    sc->w = w;
    sc->h = h;
    sc->S = (float)(w < h ? w : h);
    sc->wt = h; /* no water unless scene_water says so */
    sc->seed = img_hash(desc);
    img_parse(desc, &sc->words);
    sc->flags = sc->words.flags;
    sc->abstract = (sc->flags & F_SCENE) == 0;
    rng_t r = rng_sub(sc->seed, 1);
    sc->hy = (float)h * rng_in(&r, 0.60f, 0.68f);
    scene_tone(sc, style);
    if (sc->abstract) {
        scene_abstract(sc, &r);
    } else {
        scene_time(sc, &r);
        scene_weather(sc);
        scene_named_colours(sc);
        scene_water(sc, &r);
        sc->haze = scale(mix(sc->sky_mid, sc->sky_hor, 0.55f), 0.92f);
        sc->snow_light = mix(sc->ambient, rgb(0.85f, 0.9f, 1.0f), 0.35f);
        rng_t lr = rng_sub(sc->seed, 2);
        scene_layers(sc, &lr);
        for (int k = 0; k < sc->nl; k++)
            if (sc->layer[k].ymin < (float)sc->wt && sc->layer[k].ybot > (float)sc->wt)
                sc->layer[k].ybot = (float)sc->wt;
        if (sc->tod == TOD_SPACE) {
            rng_t sr = rng_sub(sc->seed, 3);
            scene_space(sc, &sr);
        }
    }
    sc->land = col_alloc(sc, (float)sc->wt);
    for (int k = 0; k < sc->nl; k++)
        for (int x = 0; x < w; x++)
            if (sc->layer[k].top[x] < sc->land[x])
                sc->land[x] = sc->layer[k].top[x];
    sc->skyend = col_alloc(sc, 0.0f);
    for (int x = 0; x < w; x += 2) {
        float m = sc->land[x];
        for (int k = x - 2; k <= x + 2; k++)
            m = maxf(m, sc->land[clampi(k, 0, w - 1)]);
        sc->skyend[x] = m + 2.0f;
    }
    /* Noise: big soft shapes (clouds, nebulae) and a finer texture. */
    float step = maxf(2.0f, sc->S / 128.0f);
    field_init(&sc->f1, (float)w, (float)h, step, (uint32_t)sc->seed ^ 0xA5A5U, sc->S * 0.45f, 5);
    field_init(&sc->f2, (float)w, (float)h, maxf(2.0f, sc->S / 160.0f), (uint32_t)(sc->seed >> 32),
               sc->S * 0.06f, 3);
    colmap_init(&sc->cm_cloud, &sc->f1, w, sc->tod == TOD_SPACE || sc->abstract ? 1.0f : 0.5f, 0);
    colmap_init(&sc->cm_cloud2, &sc->f1, w, 0.7f, (float)w * 0.2f);
    colmap_init(&sc->cm_tex, &sc->f2, w, 1.0f, 0);
    sc->vx = xmalloc(sizeof(float) * (size_t)w);
    sc->vy = xmalloc(sizeof(float) * (size_t)h);
    for (int x = 0; x < w; x++) {
        float u = ((float)x + 0.5f) / (float)w * 2 - 1;
        sc->vx[x] = 1.0f - sc->vignette * u * u * 0.6f;
    }
    for (int y = 0; y < h; y++) {
        float v = ((float)y + 0.5f) / (float)h * 2 - 1;
        sc->vy[y] = 1.0f - sc->vignette * v * v * 0.7f;
    }
    sc->skyrow = xmalloc(sizeof(rgb_t) * (size_t)h);
    float hy = maxf(1.0f, sc->hy);
    for (int y = 0; y < h; y++) {
        float t = clampf((float)y / hy, 0, 1);
        sc->skyrow[y] = t < 0.55f ? mix(sc->sky_top, sc->sky_mid, sstep(0, 0.55f, t))
                                  : mix(sc->sky_mid, sc->sky_hor, sstep(0.55f, 1.0f, t));
    }
}

static void scene_free(scene_t *sc)
{
    for (int k = 0; k < sc->nl; k++) {
        layer_t *L = &sc->layer[k];
        free(L->top);
        free(L->light);
        free(L->cap);
        free(L->tint);
        free(L->bid);
        free(L->bot);
        free(L->b);
    }
    for (int k = 0; k < sc->nrib; k++)
        free(sc->rib[k].cy);
    free(sc->gx);
    free(sc->gy);
    free(sc->land);
    free(sc->skyend);
    free(sc->f1.v);
    free(sc->f2.v);
    colmap_free(&sc->cm_cloud);
    colmap_free(&sc->cm_cloud2);
    colmap_free(&sc->cm_tex);
    free(sc->skyrow);
    free(sc->vx);
    free(sc->vy);
}

/* ---- per-pixel drawing --------------------------------------------------------------- */

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

static uint8_t to_u8(float v)
{
    return (uint8_t)minf(maxf(v * 255.0f + 0.5f, 0.0f), 255.0f);
}

/* The style: an affine map of premultiplied colour with coverage alpha. */
static rgb_t tone(const tone_t *t, rgb_t c, float alpha)
{
    float m = t->kl * luma(c) + t->o * alpha;
    return rgb(t->ks * c.r + m, t->ks * c.g + m, t->ks * c.b + m);
}

static rgb_t sky_px(const scene_t *sc, const row_t *rw, int x)
{
    rgb_t c = rw->sky;
    float glowsum = 0;
    if (sc->glow) {
        float dx = (float)x - sc->sx, d2 = dx * dx + rw->dy2;
        float g = 1.0f + d2 * sc->glow_k, hl = 1.0f + d2 * sc->halo_k;
        glowsum = (sc->glow_a * hl + sc->halo_a * g) / (g * hl); /* one division */
        c = add(c, scale(sc->glow_col, glowsum));
        float r2 = sc->sr * sc->sr;
        if ((sc->sun || sc->moon) && d2 < r2 * 1.2f) {
            float t = clampf((r2 * 1.1f - d2) / (r2 * 0.2f), 0, 1);
            rgb_t disc = sc->moon ? scale(sc->disc, 0.82f + 0.3f * rw->tex[x]) : sc->disc;
            c = mix(c, disc, t);
        }
    }
    if (sc->nebula) {
        float n = rw->cloud[x], m = rw->tex[x], q = rw->w1[x];
        float dens = sstep(0.22f, 0.95f, n);
        float fil = maxf(0.0f, 1.0f - fabsf(n - 0.62f) * 9.0f) * (0.6f + 0.6f * m);
        rgb_t nc = mix(sc->neb_a, sc->neb_b, sstep(0.3f, 0.7f, q));
        float dust = dens * sstep(0.62f, 0.85f, m) * 0.45f;
        c = add(scale(c, 1.0f - dust), scale(nc, dens * (0.65f + 0.1f * m) * (1.0f - dust)));
        c = add(c, scale(mix(nc, rgb(1, 1, 1), 0.35f), fil * 0.35f));
    } else if (rw->cloudv > 0) {
        float n = rw->cloud[x];
        if (n > sc->cloud_thr) {
            float t = minf((n - sc->cloud_thr) * (1.0f / 0.28f), 1.0f);
            float dens = t * t * (3.0f - 2.0f * t) * rw->cloudv;
            rgb_t cc = mix(sc->cloud_lit, sc->cloud_dark, sstep(0.1f, 0.55f, n - sc->cloud_thr));
            cc = add(cc, scale(sc->glow_col, glowsum * 0.9f));
            c = mix(c, cc, dens);
        }
    }
    if (sc->planet) {
        float dx = (float)x - sc->px, d2 = dx * dx + rw->pdy;
        float pr2 = sc->pr * sc->pr;
        if (d2 < pr2 * 1.02f) {
            float z = maxf(0.0f, 1.0f - d2 / pr2);
            float nx = dx / sc->pr, ny = rw->pdys / sc->pr, nz = sqrtf(z);
            float light = clampf(0.04f + nx * sc->plx + ny * sc->ply + nz * 0.45f, 0, 1.2f);
            float band = rw->cloud[clampi((int)(sc->px + dx * 0.15f), 0, sc->w - 1)];
            rgb_t pc = scale(sc->planet_col, light * (0.75f + 0.5f * band));
            c = mix(c, pc, clampf(z * 40.0f, 0, 1));
        } else if (d2 < pr2 * 1.3f) {
            c = add(c, scale(sc->glow_col, 0.25f * (1.0f - (d2 - pr2 * 1.02f) / (pr2 * 0.28f))));
        }
    }
    return c;
}

static rgb_t abstract_px(const scene_t *sc, const row_t *rw, int x)
{
    rgb_t c = mix(sc->ga, sc->gb, clampf(sc->gx[x] + sc->gy[rw->y], 0, 1));
    c = scale(c, 0.8f + 0.4f * rw->cloud[x]);
    for (int i = 0; i < rw->nablob; i++) {
        const blob_t *b = &sc->blob[rw->ablob[i]];
        float dx = (float)x - b->x, dy = (float)rw->y - b->y, d2 = dx * dx + dy * dy;
        float f = 1.0f - d2 * b->inv_r2;
        if (f > 0)
            c = mix(c, b->c, f * f * b->a);
    }
    for (int k = 0; k < sc->nrib; k++) {
        const ribbon_t *rb = &sc->rib[k];
        float d = fabsf((float)rw->y - rb->cy[x]);
        if (d < rb->th) {
            float f = 1.0f - d / rb->th;
            c = mix(c, rb->c, f * f * (3 - 2 * f) * rb->a * (0.7f + 0.6f * rw->tex[x]));
        }
    }
    return c;
}

static rgb_t layer_px(const scene_t *sc, const layer_t *L, int x, int y, float tex)
{
    float k = L->light[x] * (1.0f + L->texamp * (tex - 0.5f));
    rgb_t c = L->row;
    switch (L->kind) {
    case LK_RIDGE: {
        float below = (float)y - L->top[x];
        float f = maxf(0.0f, 1.0f - below * L->inv_fall);
        k = (1.0f + (L->light[x] - 1.0f) * f) * (1.0f + L->texamp * (tex - 0.5f));
        if (L->cap && below < L->cap[x])
            c = L->c_snow;
        return scale(c, k);
    }
    case LK_TREES: {
        /* Lit crowns, shadowed below: the masses read as foliage, not as planks. */
        float f = maxf(0.0f, 1.0f - ((float)y - L->top[x]) * L->inv_fall);
        k *= 0.5f + 0.6f * f;
        return L->tint ? mul(scale(c, k), L->tint[x]) : scale(c, k);
    }
    case LK_GROUND:
        if (L->foam > 0 && (float)y - L->top[x] < L->foam) {
            float t = ((float)y - L->top[x]) / L->foam;
            return mix(scale(rgb(0.95f, 0.97f, 1.0f), luma(sc->ambient) * 0.6f + 0.4f), scale(c, k), t * t);
        }
        return scale(c, k);
    case LK_CITY:
    case LK_HOUSES: {
        int b = L->bid[x];
        if (b < 0)
            return scale(c, k);
        const bldg_t *B = &L->b[b];
        float yy = (float)y - B->top;
        if (yy < 0)
            return L->kind == LK_HOUSES ? scale(L->c_roof, k) : scale(c, k * B->shade);
        c = scale(c, k * B->shade);
        int lx = x - B->x0 - B->mx, ly = (int)yy - B->my;
        if (lx < 0 || ly < 0 || x >= B->x1 - B->mx / 2)
            return c;
        int cx = lx / B->px, cy = ly / B->py;
        if (lx - cx * B->px >= B->ww || ly - cy * B->py >= B->wh)
            return c;
        if (L->kind == LK_HOUSES && (cy > 0 || cx > 1))
            return c;
        uint32_t hsh = hash32(B->hash ^ ((uint32_t)cx * 73856093U) ^ ((uint32_t)cy * 19349663U));
        if ((float)(hsh & 0xffff) < L->lit_p * 65536.0f)
            return scale(L->c_win[(hsh >> 16) % 3], 0.75f + (float)((hsh >> 20) & 15) / 40.0f);
        return L->c_win_dark;
    }
    default: { /* LK_DUNE */
        /* Bright at the crest, shading into the trough below it. */
        float f = maxf(0.0f, 1.0f - ((float)y - L->top[x]) * L->inv_fall);
        c = mix(L->c_bot, L->c_top, f);
        k = (1.0f + (L->light[x] - 1.0f) * (0.3f + 0.7f * f)) * (1.0f + L->texamp * (tex - 0.5f));
        return scale(c, k);
    }
    }
}

/* Front-to-back compositing of the silhouettes on this row: *alpha gets their
 * coverage and the premultiplied colour is returned. */
static rgb_t layers_px(const scene_t *sc, const row_t *rw, int x, float *alpha)
{
    rgb_t acc = {0, 0, 0};
    float a = 0;
    float fy = (float)rw->y + 1.0f;
    for (int i = 0; i < rw->nact; i++) {
        const layer_t *L = &sc->layer[rw->act[i]];
        float cov = fy - L->top[x];
        if (cov <= 0 || (L->bot && fy > L->bot[x]))
            continue;
        if (cov > 1)
            cov = 1;
        float wgt = (1 - a) * cov;
        acc = add(acc, scale(layer_px(sc, L, x, rw->y, rw->tex[x]), wgt));
        a += wgt;
        if (a > 0.996f)
            break;
    }
    *alpha = a;
    return acc;
}

static void row_prepare(const scene_t *sc, row_t *rw, int y)
{
    rw->y = y;
    rw->vig = sc->vy[y];
    rw->sky = sc->skyrow[y];
    float dy = (float)y - sc->sy;
    rw->dy2 = dy * dy;
    rw->pdys = (float)y - sc->py;
    rw->pdy = rw->pdys * rw->pdys;
    float hy = maxf(1.0f, sc->hy);
    rw->cloudv = sc->cloud_alpha * (1.0f - sstep(0.55f, 0.98f, (float)y / hy));
    field_row(&sc->f1, &sc->cm_cloud, (float)y, sc->w, rw->cloud);
    field_row(&sc->f2, &sc->cm_tex, (float)y, sc->w, rw->tex);
    if (sc->nebula)
        field_row(&sc->f1, &sc->cm_cloud2, (float)(sc->h - 1 - y), sc->w, rw->w1);
    rw->nact = 0;
    for (int k = sc->nl - 1; k >= 0; k--) {
        const layer_t *L = &sc->layer[k];
        if ((float)y + 1.0f > L->ymin && (float)y < L->ybot)
            rw->act[rw->nact++] = k;
    }
    rw->nablob = 0;
    for (int i = 0; i < sc->nblob; i++)
        if (fabsf((float)y - sc->blob[i].y) < sc->blob[i].r)
            rw->ablob[rw->nablob++] = i;
}

static void layers_row_colours(scene_t *sc, int y)
{
    for (int k = 0; k < sc->nl; k++) {
        layer_t *L = &sc->layer[k];
        float t = clampf(((float)y - L->ymin) / maxf(1.0f, L->ybot - L->ymin), 0, 1);
        L->row = mix(L->c_top, L->c_bot, t);
    }
}

/* The sky is smooth at the scale of two pixels (disc edges included), so it is
 * computed at even columns, where silhouettes leave it visible, and interpolated. */
static void sky_row_half(const scene_t *sc, const row_t *rw, rgb_t *half)
{
    for (int x = 0; x < sc->w; x += 2)
        if ((float)rw->y < sc->skyend[x])
            half[x / 2] = sc->abstract ? abstract_px(sc, rw, x) : sky_px(sc, rw, x);
    if ((sc->w & 1) == 0) /* the last odd column needs a right neighbour */
        half[sc->w / 2] = half[sc->w / 2 - 1];
}

static void draw_sky_row(scene_t *sc, row_t *rw, rgb_t *half, uint8_t *out)
{
    sky_row_half(sc, rw, half);
    for (int x = 0; x < sc->w; x++) {
        float a = 0;
        rgb_t c = rw->nact ? layers_px(sc, rw, x, &a) : rgb(0, 0, 0);
        if (a < 0.996f) {
            rgb_t s = (x & 1) ? scale(add(half[x / 2], half[x / 2 + 1]), 0.5f) : half[x / 2];
            c = add(c, scale(s, 1 - a));
        }
        c = scale(tone(&sc->tone, c, 1.0f), rw->vig * sc->vx[x]);
        out[3 * x] = to_u8(c.r);
        out[3 * x + 1] = to_u8(c.g);
        out[3 * x + 2] = to_u8(c.b);
    }
}

static void water_row_prepare(const scene_t *sc, row_t *rw)
{
    float span = maxf(1.0f, (float)(sc->h - sc->wt));
    float t = ((float)(rw->y - sc->wt) + 0.5f) / span; /* 0 at the horizon, 1 nearest */
    rw->refl = sc->refl_far + (sc->refl_near - sc->refl_far) * sqrtf(t);
    float near = sc->S * (0.002f + 0.03f * t) * sc->wave;
    rw->amp_x = near * 1.5f;
    rw->amp_y = sc->street ? sc->S * (0.01f + 0.05f * t) : near * 0.8f;
    if (sc->street)
        rw->amp_x = sc->S * 0.004f;
    rw->shift = near * 0.6f * sinf((float)rw->y * 0.9f * 1024.0f / sc->S / (0.3f + 2.0f * t));
    rgb_t wc = mix(sc->water_far, sc->water_near, sstep(0, 0.6f, t));
    rw->water_t = scale(tone(&sc->tone, wc, 1.0f), rw->vig);
    rw->hl_t = tone(&sc->tone, scale(sc->sky_hor, 0.5f), 0.0f);
    rw->hl_a = sc->street ? 0.1f : 0.25f + 0.25f * t;
    rw->sun_t = tone(&sc->tone, sc->disc, 0.0f);
    float gw = sc->sr * (1.2f + 8.0f * t);
    rw->glit_inv = 1.0f / gw;
    rw->glit_a = sc->sun ? 0.9f : sc->moon ? 0.5f : 0.0f;
    /* Perspective: ripples shrink toward the horizon, both ways. */
    float d = (float)(rw->y - sc->wt) + sc->S * 0.02f;
    float v = 0.336f * sc->S * logf(d / (sc->S * 0.02f));
    float du = clampf(0.9f * sc->S * 0.03f / d, 0.06f, 0.9f);
    if (sc->street) { /* wet tarmac: long vertical streaks */
        v = (float)(rw->y - sc->wt) * 0.08f;
        du = 1.0f;
    }
    field_row_affine(&sc->f2, fold(v, (float)sc->h - 1), du, sc->w, rw->w1);
    field_row_affine(&sc->f2, fold(v * 1.37f + 57.0f, (float)sc->h - 1), du * 1.6f, sc->w, rw->w2);
}

static void draw_water_row(scene_t *sc, row_t *rw, uint8_t *img)
{
    size_t stride = (size_t)sc->w * 3;
    uint8_t *out = img + (size_t)rw->y * stride;
    int mirror = 2 * sc->wt - 1 - rw->y;
    for (int x = 0; x < sc->w; x++) {
        float w1 = rw->w1[x] - 0.5f, w2 = rw->w2[x];
        int sx = clampi(x + (int)(rw->shift + w1 * rw->amp_x), 0, sc->w - 1);
        int sy = clampi(mirror + (int)(w1 * rw->amp_y), 0, sc->wt - 1);
        const uint8_t *src = img + (size_t)sy * stride + (size_t)sx * 3;
        float k = rw->refl * (1.0f / 255.0f);
        rgb_t c = rgb((float)src[0] * k, (float)src[1] * k, (float)src[2] * k);
        c = add(c, scale(rw->water_t, 1 - rw->refl));
        c = add(c, scale(rw->hl_t, sstep(0.6f, 0.85f, w2) * rw->hl_a));
        if (rw->glit_a > 0) {
            float g = 1.0f - fabsf((float)x - sc->sx) * rw->glit_inv;
            if (g > 0)
                c = add(c, scale(rw->sun_t, g * g * rw->glit_a * sstep(0.45f, 0.75f, w2)));
        }
        if (rw->nact) {
            float a = 0;
            rgb_t l = layers_px(sc, rw, x, &a);
            if (a > 0)
                c = add(scale(tone(&sc->tone, l, a), rw->vig * sc->vx[x]), scale(c, 1 - a));
        }
        out[3 * x] = to_u8(c.r);
        out[3 * x + 1] = to_u8(c.g);
        out[3 * x + 2] = to_u8(c.b);
    }
}

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

static void draw_stars(const scene_t *sc, uint8_t *img)
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
            float n1 = field_at(&sc->f1, x * 0.5f, y);
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

static void draw_rain(const scene_t *sc, uint8_t *img)
{
    rng_t r = rng_sub(sc->seed, 8);
    int n = (int)((double)sc->w * sc->h / 700.0);
    rgb_t c = tone(&sc->tone, sc->tod == TOD_DAY ? rgb(0.85f, 0.88f, 0.95f) : rgb(0.6f, 0.65f, 0.78f), 1.0f);
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

static void draw_snow(const scene_t *sc, uint8_t *img)
{
    rng_t r = rng_sub(sc->seed, 9);
    int n = (int)((double)sc->w * sc->h / 1400.0);
    rgb_t c = tone(&sc->tone, rgb(0.95f, 0.97f, 1.0f), 1.0f);
    float unit = sc->S / 1024.0f;
    for (int i = 0; i < n; i++) {
        float u = rng_f(&r);
        float x = rng_f(&r) * (float)sc->w, y = rng_f(&r) * (float)sc->h;
        float rad = unit * (0.6f + 4.5f * u * u * u);
        draw_disc(sc, img, x, y, rad, c, rng_in(&r, 0.45f, 0.95f), true);
    }
}

static void draw_flowers(const scene_t *sc, uint8_t *img)
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
        pc = tone(&sc->tone, scale(pc, light * rng_in(&r, 0.8f, 1.1f)), 1.0f);
        float rot = rng_in(&r, 0, 2 * PI_F);
        for (int p = 0; p < 5; p++) {
            float ang = rot + (float)p * 2 * PI_F / 5;
            draw_disc(sc, img, x + 0.55f * rad * cosf(ang), y + 0.4f * rad * sinf(ang), rad * 0.45f,
                      scale(pc, 0.9f + 0.05f * (float)p), 0.95f, false);
        }
        draw_disc(sc, img, x, y, rad * 0.25f, tone(&sc->tone, scale(rgb(0.95f, 0.75f, 0.1f), light), 1.0f), 1.0f, false);
    }
}

static void draw_bokeh(const scene_t *sc, uint8_t *img)
{
    rng_t r = rng_sub(sc->seed, 11);
    int n = 6 + (int)(rng_u64(&r) % 10);
    for (int i = 0; i < n; i++) {
        float x = rng_f(&r) * (float)sc->w, y = rng_f(&r) * (float)sc->h;
        rgb_t c = tone(&sc->tone, mix(sc->blob[i % (sc->nblob ? sc->nblob : 1)].c, rgb(1, 1, 1), 0.5f), 1.0f);
        draw_disc(sc, img, x, y, sc->S * rng_in(&r, 0.01f, 0.05f), c, rng_in(&r, 0.15f, 0.35f), true);
    }
}

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
        row_prepare(sc, &rw, y);
        layers_row_colours(sc, y);
        draw_sky_row(sc, &rw, half, img + (size_t)y * stride);
    }
    draw_stars(sc, img);
    for (int y = sc->wt; y < sc->h; y++) {
        row_prepare(sc, &rw, y);
        layers_row_colours(sc, y);
        water_row_prepare(sc, &rw);
        draw_water_row(sc, &rw, img);
    }
    free(rows);
    free(half);
    if (sc->abstract)
        draw_bokeh(sc, img);
    if (sc->flags & F_FLOWERS)
        draw_flowers(sc, img);
    if (sc->flags & F_RAIN)
        draw_rain(sc, img);
    if (sc->flags & F_SNOW)
        draw_snow(sc, img);
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
    scene_build(sc, description, width, height, style);
    uint8_t *img = xmalloc((size_t)width * (size_t)height * 3);
    render(sc, img);
    int rc = png_encode_rgb(img, width, height, IMG_ZLIB_LEVEL, png_out);
    free(img);
    scene_free(sc);
    free(sc);
    return rc;
}
