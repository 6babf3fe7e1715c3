/* builtin_image_scene.c — the description and the silhouettes of the builtin picture
 * generator: the scene words and colour words, bi_img_parse (description → flags and
 * named colours) and bi_img_hash (the seed), then the layers a scene is built from
 * (ridges, dunes, trees, city, houses, ground) as per-column heights. Called by
 * builtin_image_compose.c, which decides which layers a scene gets. See builtin_image.c. */
#include "gen/builtin_image_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the description ---------------------------------------------------------------- */

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
void bi_img_parse(const char *desc, words_t *wd)
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

uint64_t bi_img_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- the scene ----------------------------------------------------------------------- */

float *bi_col_alloc(const scene_t *sc, float fill)
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
    L->top = bi_col_alloc(sc, ybot);
    L->light = bi_col_alloc(sc, 1.0f);
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

void bi_add_ridge(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze,
                  bool caps)
{
    layer_t *L = layer_add(sc, LK_RIDGE, base + 2.0f);
    uint32_t s = (uint32_t)rng_u64(r);
    float freq = rng_in(r, 2.0f, 3.5f) / sc->S;
    float off = rng_in(r, 0, 100);
    for (int x = 0; x < sc->w; x++) {
        float u = (float)x * freq + off;
        float n = 0.45f * bi_fbm1(s, u, 3, false) + 0.55f * bi_fbm1(s + 17, u * 0.8f, 6, true);
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
        L->cap = bi_col_alloc(sc, 0.0f);
        float snowline = L->ymin + (base - L->ymin) * 0.45f;
        for (int x = 0; x < sc->w; x++) {
            float above = snowline - L->top[x];
            float jag = 0.6f + 0.8f * bi_vnoise1(s + 99, (float)x * 40.0f / sc->S);
            L->cap[x] = above > 0 ? above * 0.8f * jag : 0.0f;
        }
        L->c_snow = mix(mul(rgb(0.93f, 0.95f, 1.0f), sc->snow_light), sc->haze, haze * 0.8f);
    }
}

void bi_add_dunes(scene_t *sc, rng_t *r, float base, float amp, float haze, float ybot)
{
    layer_t *L = layer_add(sc, LK_DUNE, ybot);
    uint32_t s = (uint32_t)rng_u64(r);
    float freq = rng_in(r, 1.2f, 2.2f) / sc->S, off = rng_in(r, 0, 50);
    for (int x = 0; x < sc->w; x++) {
        float u = (float)x * freq + off;
        float n = 0.7f * bi_fbm1(s, u, 2, true) + 0.3f * bi_fbm1(s + 5, u * 2.5f, 2, false);
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
void bi_add_trees(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze)
{
    layer_t *L = layer_add(sc, LK_TREES, base + 2.0f);
    if (sc->flags & F_AUTUMN) {
        L->tint = xmalloc(sizeof(rgb_t) * (size_t)sc->w);
        for (int x = 0; x < sc->w; x++)
            L->tint[x] = rgb(0.5f, 0.35f, 0.2f);
    }
    uint32_t s = (uint32_t)rng_u64(r);
    for (int x = 0; x < sc->w; x++)
        L->top[x] = base - (0.2f * hmin + 0.3f * hmin * bi_vnoise1(s, (float)x * 4.0f / sc->S)) *
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
void bi_add_frame_trees(scene_t *sc, rng_t *r)
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

void bi_add_city(scene_t *sc, rng_t *r, float base, float hmin, float hmax, float haze)
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
void bi_add_houses(scene_t *sc, rng_t *r, const layer_t *ground)
{
    layer_t *L = layer_add(sc, LK_HOUSES, (float)sc->h);
    int cap = 48;
    L->b = xmalloc(sizeof(bldg_t) * (size_t)cap);
    L->bid = xmalloc(sizeof(int16_t) * (size_t)sc->w);
    L->bot = bi_col_alloc(sc, 0.0f);
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

layer_t *bi_add_ground(scene_t *sc, rng_t *r, float top, float amp, rgb_t far, rgb_t near,
                       float haze)
{
    layer_t *L = layer_add(sc, LK_GROUND, (float)sc->h);
    uint32_t s = (uint32_t)rng_u64(r);
    for (int x = 0; x < sc->w; x++)
        L->top[x] = top - amp * (float)sc->h * bi_fbm1(s, (float)x * 2.0f / sc->S, 3, false);
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
