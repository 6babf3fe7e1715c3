/* builtin_image_compose.c — palette and composition of the builtin picture generator:
 * from the description's flags and a seeded PRNG, the time of day, weather, named
 * colours, tone (the style), water, silhouette layers (builtin_image_scene.c), space,
 * or an abstract composition; bi_scene_build fills a scene_t with all of it and the
 * noise fields, bi_scene_free releases it. See builtin_image.c for how the parts fit. */
#include "gen/builtin_image_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
        bi_add_ridge(sc, r, hy, 0.16f * k, 0.40f * k, 0.62f, caps);
        bi_add_ridge(sc, r, hy, 0.08f * k, 0.26f * k, 0.40f, caps);
        if (!busy)
            bi_add_ridge(sc, r, hy, 0.03f, 0.13f, 0.18f, caps && rng_f(r) < 0.5f);
    }
    if (f & F_HILLS && !(f & F_DESERT)) {
        layer_t *L = bi_add_ground(sc, r, hy, 0.08f, rgb(0.40f, 0.58f, 0.30f), rgb(0.25f, 0.45f, 0.2f), 0.5f);
        L->ybot = hy + 2.0f;
    }
    if (f & F_DESERT) {
        float yb = water ? hy + 2.0f : H;
        bi_add_dunes(sc, r, hy, 0.06f, 0.45f, yb);
        if (!water) {
            bi_add_dunes(sc, r, hy + (H - hy) * 0.25f, 0.10f, 0.25f, H);
            bi_add_dunes(sc, r, hy + (H - hy) * 0.6f, 0.14f, 0.08f, H);
            bi_add_dunes(sc, r, H + (H - hy) * 0.1f, 0.18f, 0.0f, H);
        }
    }
    if (f & F_CITY) {
        float base = water ? hy : hy + H * 0.02f;
        if (sc->h >= 64)
            bi_add_city(sc, r, base, 0.12f, 0.42f, sc->tod == TOD_DAY ? 0.55f : 0.35f);
        bi_add_city(sc, r, base, 0.05f, 0.26f, sc->tod == TOD_DAY ? 0.25f : 0.08f);
    }
    if (f & F_FOREST) {
        bi_add_trees(sc, r, hy, 0.05f, 0.10f, water ? 0.3f : 0.45f);
        if (!water)
            bi_add_trees(sc, r, hy + H * 0.03f, 0.08f, 0.16f, 0.12f);
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
        ground = bi_add_ground(sc, r, hy + H * 0.02f, 0.025f, far, near, 0.35f);
    } else if (f & F_BEACH) {
        ground = bi_add_ground(sc, r, H * rng_in(r, 0.80f, 0.86f), 0.03f, far, near, 0.0f);
        ground->foam = sc->S * 0.012f;
    } else if (f & F_FLOWERS && !(f & F_CITY)) {
        ground = bi_add_ground(sc, r, H * rng_in(r, 0.84f, 0.9f), 0.03f, scale(near, 0.8f),
                            scale(near, 0.5f), 0.0f);
    }
    if (water && (f & F_FOREST) && !sc->street)
        bi_add_frame_trees(sc, r);
    if (f & F_VILLAGE)
        bi_add_houses(sc, r, ground);
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

void bi_scene_build(scene_t *sc, const char *desc, int w, int h, img_style_t style)
{
    memset(sc, 0, sizeof *sc);
    sc->w = w;
    sc->h = h;
    sc->S = (float)(w < h ? w : h);
    sc->wt = h; /* no water unless scene_water says so */
    sc->seed = bi_img_hash(desc);
    bi_img_parse(desc, &sc->words);
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
    sc->land = bi_col_alloc(sc, (float)sc->wt);
    for (int k = 0; k < sc->nl; k++)
        for (int x = 0; x < w; x++)
            if (sc->layer[k].top[x] < sc->land[x])
                sc->land[x] = sc->layer[k].top[x];
    sc->skyend = bi_col_alloc(sc, 0.0f);
    for (int x = 0; x < w; x += 2) {
        float m = sc->land[x];
        for (int k = x - 2; k <= x + 2; k++)
            m = maxf(m, sc->land[clampi(k, 0, w - 1)]);
        sc->skyend[x] = m + 2.0f;
    }
    /* Noise: big soft shapes (clouds, nebulae) and a finer texture. */
    float step = maxf(2.0f, sc->S / 128.0f);
    bi_field_init(&sc->f1, (float)w, (float)h, step, (uint32_t)sc->seed ^ 0xA5A5U, sc->S * 0.45f, 5);
    bi_field_init(&sc->f2, (float)w, (float)h, maxf(2.0f, sc->S / 160.0f), (uint32_t)(sc->seed >> 32),
               sc->S * 0.06f, 3);
    bi_colmap_init(&sc->cm_cloud, &sc->f1, w, sc->tod == TOD_SPACE || sc->abstract ? 1.0f : 0.5f, 0);
    bi_colmap_init(&sc->cm_cloud2, &sc->f1, w, 0.7f, (float)w * 0.2f);
    bi_colmap_init(&sc->cm_tex, &sc->f2, w, 1.0f, 0);
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

void bi_scene_free(scene_t *sc)
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
    bi_colmap_free(&sc->cm_cloud);
    bi_colmap_free(&sc->cm_cloud2);
    bi_colmap_free(&sc->cm_tex);
    free(sc->skyrow);
    free(sc->vx);
    free(sc->vy);
}
