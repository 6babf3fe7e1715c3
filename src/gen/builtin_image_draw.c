/* builtin_image_draw.c — per-pixel drawing of the builtin picture generator: per row,
 * bi_row_prepare reads the noise fields and picks the layers on the row; sky pixels
 * (gradient, glow, sun or moon, clouds, nebula, planet) or abstract ones, the
 * silhouettes composited front to back, and water rows mirroring rows already drawn;
 * every pixel toned by the style (bi_tone) and stored as 8 bits. Driven row by row by
 * render() in builtin_image.c. */
#include "gen/builtin_image_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-pixel drawing --------------------------------------------------------------- */

/* The style: an affine map of premultiplied colour with coverage alpha. */
rgb_t bi_tone(const tone_t *t, rgb_t c, float alpha)
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
        uint32_t hsh = bi_hash32(B->hash ^ ((uint32_t)cx * 73856093U) ^ ((uint32_t)cy * 19349663U));
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

void bi_row_prepare(const scene_t *sc, row_t *rw, int y)
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
    bi_field_row(&sc->f1, &sc->cm_cloud, (float)y, sc->w, rw->cloud);
    bi_field_row(&sc->f2, &sc->cm_tex, (float)y, sc->w, rw->tex);
    if (sc->nebula)
        bi_field_row(&sc->f1, &sc->cm_cloud2, (float)(sc->h - 1 - y), sc->w, rw->w1);
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

void bi_layers_row_colours(scene_t *sc, int y)
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

void bi_draw_sky_row(scene_t *sc, row_t *rw, rgb_t *half, uint8_t *out)
{
    sky_row_half(sc, rw, half);
    for (int x = 0; x < sc->w; x++) {
        float a = 0;
        rgb_t c = rw->nact ? layers_px(sc, rw, x, &a) : rgb(0, 0, 0);
        if (a < 0.996f) {
            rgb_t s = (x & 1) ? scale(add(half[x / 2], half[x / 2 + 1]), 0.5f) : half[x / 2];
            c = add(c, scale(s, 1 - a));
        }
        c = scale(bi_tone(&sc->tone, c, 1.0f), rw->vig * sc->vx[x]);
        out[3 * x] = to_u8(c.r);
        out[3 * x + 1] = to_u8(c.g);
        out[3 * x + 2] = to_u8(c.b);
    }
}

void bi_water_row_prepare(const scene_t *sc, row_t *rw)
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
    rw->water_t = scale(bi_tone(&sc->tone, wc, 1.0f), rw->vig);
    rw->hl_t = bi_tone(&sc->tone, scale(sc->sky_hor, 0.5f), 0.0f);
    rw->hl_a = sc->street ? 0.1f : 0.25f + 0.25f * t;
    rw->sun_t = bi_tone(&sc->tone, sc->disc, 0.0f);
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
    bi_field_row_affine(&sc->f2, bi_fold(v, (float)sc->h - 1), du, sc->w, rw->w1);
    bi_field_row_affine(&sc->f2, bi_fold(v * 1.37f + 57.0f, (float)sc->h - 1), du * 1.6f, sc->w, rw->w2);
}

void bi_draw_water_row(scene_t *sc, row_t *rw, uint8_t *img)
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
                c = add(scale(bi_tone(&sc->tone, l, a), rw->vig * sc->vx[x]), scale(c, 1 - a));
        }
        out[3 * x] = to_u8(c.r);
        out[3 * x + 1] = to_u8(c.g);
        out[3 * x + 2] = to_u8(c.b);
    }
}
