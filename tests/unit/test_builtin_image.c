/* test_builtin_image.c — the offline renderer: deterministic bytes, exact sizes with
 * well-formed chunks, styles that change saturation, pictures that are not flat fills,
 * descriptions and named colours that change the result, tiny and odd sizes, UTF-8,
 * bad arguments, and identical output from several threads at once. */
#include "gen/builtin.h"
#include "gen/png.h"
#include "test.h"

#include <png.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    int w, h;
    uint8_t *px; /* RGB */
} pic_t;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* CRC-32 of PNG chunks: zlib's crc32 is the PNG specification's. */
static uint32_t png_crc(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}

static bool render(const char *desc, int w, int h, img_style_t style, buf_t *out)
{
    buf_init(out);
    return builtin_image(desc, w, h, style, out) == 0 && out->len > 0;
}

static bool decode(const buf_t *png, pic_t *p)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, png->data, png->len))
        return false;
    im.format = PNG_FORMAT_RGB;
    p->px = malloc(PNG_IMAGE_SIZE(im));
    p->w = (int)im.width;
    p->h = (int)im.height;
    if (!png_image_finish_read(&im, NULL, p->px, 0, NULL)) {
        free(p->px);
        p->px = NULL;
        return false;
    }
    return true;
}

static bool render_pic(const char *desc, int w, int h, img_style_t style, pic_t *p)
{
    buf_t b;
    bool ok = render(desc, w, h, style, &b) && decode(&b, p);
    buf_free(&b);
    return ok;
}

/* Walks the chunks by hand: signature, IHDR first with the given size, 8-bit RGB,
 * every CRC right, IEND last and nothing after it. */
static bool chunks_ok(const buf_t *b, int w, int h)
{
    const uint8_t *d = (const uint8_t *)b->data;
    if (b->len < 8 + 25 + 12 || memcmp(d, "\x89PNG\r\n\x1a\n", 8) != 0)
        return false;
    if (be32(d + 8) != 13 || memcmp(d + 12, "IHDR", 4) != 0)
        return false;
    if (be32(d + 16) != (uint32_t)w || be32(d + 20) != (uint32_t)h || d[24] != 8 || d[25] != 2)
        return false;
    size_t p = 8;
    bool iend = false;
    int idat = 0;
    while (p + 12 <= b->len) {
        uint32_t len = be32(d + p);
        if (len > b->len - p - 12)
            return false;
        if (png_crc(d + p + 4, (size_t)len + 4) != be32(d + p + 8 + len))
            return false;
        idat += memcmp(d + p + 4, "IDAT", 4) == 0;
        iend = memcmp(d + p + 4, "IEND", 4) == 0;
        p += 12 + len;
        if (iend)
            break;
    }
    return iend && idat > 0 && p == b->len;
}

static double mean_saturation(const pic_t *p)
{
    double sum = 0;
    size_t n = (size_t)p->w * (size_t)p->h;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *c = p->px + 3 * i;
        int mx = c[0] > c[1] ? c[0] : c[1], mn = c[0] < c[1] ? c[0] : c[1];
        mx = mx > c[2] ? mx : c[2];
        mn = mn < c[2] ? mn : c[2];
        sum += mx ? (double)(mx - mn) / mx : 0.0;
    }
    return sum / (double)n;
}

static double red_share(const pic_t *p)
{
    double sum = 0;
    size_t n = (size_t)p->w * (size_t)p->h;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *c = p->px + 3 * i;
        sum += (c[0] + 1.0) / (c[0] + c[1] + c[2] + 3.0);
    }
    return sum / (double)n;
}

static double luma_variance(const pic_t *p)
{
    double s = 0, s2 = 0;
    size_t n = (size_t)p->w * (size_t)p->h;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *c = p->px + 3 * i;
        double l = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
        s += l;
        s2 += l * l;
    }
    double m = s / (double)n;
    return s2 / (double)n - m * m;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static size_t distinct_colours(const pic_t *p)
{
    size_t n = (size_t)p->w * (size_t)p->h, k = 0;
    uint32_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)p->px[3 * i] << 16 | (uint32_t)p->px[3 * i + 1] << 8 | p->px[3 * i + 2];
    qsort(v, n, sizeof *v, cmp_u32);
    for (size_t i = 0; i < n; i++)
        k += i == 0 || v[i] != v[i - 1];
    free(v);
    return k;
}

/* Mean absolute difference per channel between two pictures of one size. */
static double mean_diff(const pic_t *a, const pic_t *b)
{
    double s = 0;
    size_t n = (size_t)a->w * (size_t)a->h * 3;
    for (size_t i = 0; i < n; i++)
        s += abs((int)a->px[i] - (int)b->px[i]);
    return s / (double)n;
}

static const char *const descriptions[] = {
    "a red sunset over the ocean",
    "a snowy mountain village at night",
    "a neon city skyline in the rain",
    "a calm forest lake at sunrise",
    "golden desert dunes",
    "a purple nebula in deep space",
    "spring flowers in a meadow",
    "an autumn forest",
    "a tropical beach",
    "a portrait of a cat wearing a hat", /* no scene word: abstract */
    "x",
};

/* ---- tests --------------------------------------------------------------------------- */

static void test_deterministic(void)
{
    for (size_t i = 0; i < ARRAY_LEN(descriptions); i++)
        for (int st = 0; st < 3; st++) {
            buf_t a, b;
            CHECK(render(descriptions[i], 200, 120, (img_style_t)st, &a));
            CHECK(render(descriptions[i], 200, 120, (img_style_t)st, &b));
            CHECK_MSG(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
                      "\"%s\" style %d differs between runs", descriptions[i], st);
            buf_free(&a);
            buf_free(&b);
        }
}

static void test_api_resolutions(void)
{
    static const int res[][2] = {{1024, 1024}, {1792, 1024}, {1024, 1792}};
    for (size_t r = 0; r < ARRAY_LEN(res); r++)
        for (int st = 0; st < 3; st++) {
            const char *desc = descriptions[(r * 3 + (size_t)st) % ARRAY_LEN(descriptions)];
            buf_t b;
            CHECK(render(desc, res[r][0], res[r][1], (img_style_t)st, &b));
            CHECK_MSG(chunks_ok(&b, res[r][0], res[r][1]), "chunks of %dx%d \"%s\"", res[r][0],
                      res[r][1], desc);
            int w = 0, h = 0;
            CHECK(png_inspect(b.data, b.len, &w, &h));
            CHECK_INT(w, res[r][0]);
            CHECK_INT(h, res[r][1]);
            /* Compressed, but not suspiciously small. */
            CHECK(b.len > 10000);
            CHECK(b.len < (size_t)res[r][0] * (size_t)res[r][1] * 3);
            buf_free(&b);
        }
}

static void test_styles_change_saturation(void)
{
    static const char *const descs[] = {"a red sunset over the ocean", "a calm forest lake at sunrise",
                                        "golden desert dunes", "spring flowers in a meadow",
                                        "a portrait of a cat wearing a hat"};
    for (size_t i = 0; i < ARRAY_LEN(descs); i++) {
        pic_t none, vivid, natural;
        CHECK(render_pic(descs[i], 240, 150, STYLE_NONE, &none));
        CHECK(render_pic(descs[i], 240, 150, STYLE_VIVID, &vivid));
        CHECK(render_pic(descs[i], 240, 150, STYLE_NATURAL, &natural));
        double sn = mean_saturation(&none), sv = mean_saturation(&vivid), sa = mean_saturation(&natural);
        CHECK_MSG(sv > sn + 0.02 && sn > sa + 0.02, "\"%s\": vivid %.3f none %.3f natural %.3f",
                  descs[i], sv, sn, sa);
        /* Same composition: the style changes colours, not the scene. */
        CHECK_MSG(mean_diff(&none, &natural) < 40.0, "\"%s\" natural moved too much", descs[i]);
        free(none.px);
        free(vivid.px);
        free(natural.px);
    }
    /* An unknown style value acts as none. */
    buf_t a, b;
    CHECK(render("golden desert dunes", 64, 48, STYLE_NONE, &a));
    CHECK(render("golden desert dunes", 64, 48, (img_style_t)7, &b));
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    buf_free(&a);
    buf_free(&b);
}

static void test_not_flat(void)
{
    for (size_t i = 0; i < ARRAY_LEN(descriptions); i++)
        for (int st = 0; st < 3; st++) {
            pic_t p;
            CHECK(render_pic(descriptions[i], 320, 200, (img_style_t)st, &p));
            double var = luma_variance(&p);
            size_t k = distinct_colours(&p);
            CHECK_MSG(var > 60.0, "\"%s\" style %d: luma variance %.1f", descriptions[i], st, var);
            CHECK_MSG(k > 800, "\"%s\" style %d: %zu colours", descriptions[i], st, k);
            /* No big band of one colour: the most common row hash is not everything. */
            int same_rows = 0;
            for (int y = 1; y < p.h; y++)
                same_rows += memcmp(p.px + (size_t)y * 320 * 3, p.px + (size_t)(y - 1) * 320 * 3, 320 * 3) == 0;
            CHECK_MSG(same_rows < p.h / 4, "\"%s\": %d identical rows", descriptions[i], same_rows);
            free(p.px);
        }
}

static void test_descriptions_differ(void)
{
    pic_t p[ARRAY_LEN(descriptions)];
    for (size_t i = 0; i < ARRAY_LEN(descriptions); i++)
        CHECK(render_pic(descriptions[i], 160, 100, STYLE_NONE, &p[i]));
    for (size_t i = 0; i < ARRAY_LEN(descriptions); i++)
        for (size_t j = i + 1; j < ARRAY_LEN(descriptions); j++) {
            double d = mean_diff(&p[i], &p[j]);
            CHECK_MSG(d > 8.0, "\"%s\" vs \"%s\": mean difference %.1f", descriptions[i],
                      descriptions[j], d);
        }
    for (size_t i = 0; i < ARRAY_LEN(descriptions); i++)
        free(p[i].px);
    /* Even two abstract descriptions differ. */
    pic_t a, b;
    CHECK(render_pic("a cat", 160, 100, STYLE_NONE, &a));
    CHECK(render_pic("a dog", 160, 100, STYLE_NONE, &b));
    CHECK(mean_diff(&a, &b) > 8.0);
    free(a.px);
    free(b.px);
}

static void test_named_colours(void)
{
    static const char *const subjects[] = {"sunset over the sea", "mountains", "car",
                                           "flowers in a garden", "city at night", "nebula"};
    for (size_t i = 0; i < ARRAY_LEN(subjects); i++) {
        char red[128], blue[128];
        snprintf(red, sizeof red, "a red %s", subjects[i]);
        snprintf(blue, sizeof blue, "a blue %s", subjects[i]);
        pic_t r, b;
        CHECK(render_pic(red, 200, 120, STYLE_NONE, &r));
        CHECK(render_pic(blue, 200, 120, STYLE_NONE, &b));
        double rr = red_share(&r), rb = red_share(&b);
        CHECK_MSG(rr > rb + 0.03, "\"%s\" %.3f vs \"%s\" %.3f", red, rr, blue, rb);
        free(r.px);
        free(b.px);
    }
    /* Case does not matter for the words. */
    buf_t a, b;
    CHECK(render("A RED SUNSET", 64, 40, STYLE_NONE, &a));
    CHECK(render("a red sunset", 64, 40, STYLE_NONE, &b));
    pic_t pa, pb;
    CHECK(decode(&a, &pa) && decode(&b, &pb));
    CHECK(mean_diff(&pa, &pb) < 30.0); /* same scene, only the seed differs */
    CHECK(red_share(&pa) > 0.4);
    free(pa.px);
    free(pb.px);
    buf_free(&a);
    buf_free(&b);
}

static void test_sizes(void)
{
    static const int sizes[][2] = {{1, 1}, {3, 2}, {2, 3}, {1, 50}, {50, 1}, {7, 7},
                                   {4096, 2}, {2, 4096}, {640, 480}, {97, 1023}};
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++)
        for (size_t d = 0; d < ARRAY_LEN(descriptions); d += 2) {
            int w = sizes[i][0], h = sizes[i][1];
            buf_t b;
            CHECK_MSG(render(descriptions[d], w, h, (img_style_t)(d % 3), &b), "%dx%d", w, h);
            CHECK_MSG(chunks_ok(&b, w, h), "chunks %dx%d \"%s\"", w, h, descriptions[d]);
            pic_t p;
            CHECK(decode(&b, &p));
            CHECK_INT(p.w, w);
            CHECK_INT(p.h, h);
            free(p.px);
            buf_free(&b);
        }
}

static void test_bad_arguments(void)
{
    static const int bad[][2] = {{0, 10}, {10, 0}, {-1, 10}, {4097, 10}, {10, 4097}};
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "keep");
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        CHECK_INT(builtin_image("a lake", bad[i][0], bad[i][1], STYLE_NONE, &b), -1);
    CHECK_INT(builtin_image(NULL, 10, 10, STYLE_NONE, &b), -1);
    CHECK_INT(builtin_image("a lake", 10, 10, STYLE_NONE, NULL), -1);
    CHECK_STR(buf_cstr(&b), "keep");
    /* Success appends after what is there. */
    CHECK_INT(builtin_image("a lake", 10, 10, STYLE_NONE, &b), 0);
    CHECK(memcmp(b.data, "keep\x89PNG", 8) == 0);
    CHECK(png_inspect(b.data + 4, b.len - 4, NULL, NULL));
    buf_free(&b);
}

static void test_utf8_and_odd_text(void)
{
    char longdesc[4001];
    for (size_t i = 0; i < sizeof longdesc - 1; i++)
        longdesc[i] = "a forest lake with mountains and snow at night "[i % 47];
    longdesc[sizeof longdesc - 1] = '\0';
    const char *texts[] = {
        "un coucher de soleil rouge sur l'océan 🌅",
        "夕焼けの海と山",
        "Schneebedeckte Berge bei Nacht ❄️ — snow",
        "Ünïcödé 🌌 galaxy ✨",
        "",
        "\xff\xfe not valid utf-8 \xc3",
        "red red red red red red blue green yellow purple pink orange",
        "sunsetsunsetsunsetsunsetsunsetsunsetsunset",
        longdesc,
    };
    for (size_t i = 0; i < ARRAY_LEN(texts); i++) {
        buf_t a, b;
        CHECK(render(texts[i], 120, 90, STYLE_VIVID, &a));
        CHECK(render(texts[i], 120, 90, STYLE_VIVID, &b));
        CHECK(chunks_ok(&a, 120, 90));
        CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        pic_t p;
        CHECK(decode(&a, &p));
        CHECK_MSG(luma_variance(&p) > 20.0, "text %zu flat", i);
        free(p.px);
        buf_free(&a);
        buf_free(&b);
    }
    /* Accents are part of the text, so they change the picture. */
    buf_t x, y;
    CHECK(render("océan", 64, 40, STYLE_NONE, &x));
    CHECK(render("ocean", 64, 40, STYLE_NONE, &y));
    CHECK(x.len != y.len || memcmp(x.data, y.data, x.len) != 0);
    buf_free(&x);
    buf_free(&y);
}

typedef struct {
    const char *desc;
    buf_t out;
} job_t;

static void *worker(void *arg)
{
    job_t *j = arg;
    buf_init(&j->out);
    builtin_image(j->desc, 300, 200, STYLE_VIVID, &j->out);
    return NULL;
}

static void test_threads(void)
{
    enum { N = 6 };
    job_t jobs[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        jobs[i].desc = descriptions[i % 3];
        CHECK_INT(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        buf_t ref;
        CHECK(render(jobs[i].desc, 300, 200, STYLE_VIVID, &ref));
        CHECK(ref.len == jobs[i].out.len && memcmp(ref.data, jobs[i].out.data, ref.len) == 0);
        buf_free(&ref);
        buf_free(&jobs[i].out);
    }
}

int main(void)
{
    CHECK_INT(png_crc((const uint8_t *)"123456789", 9), 0xCBF43926u);
    test_deterministic();
    test_api_resolutions();
    test_styles_change_saturation();
    test_not_flat();
    test_descriptions_differ();
    test_named_colours();
    test_sizes();
    test_bad_arguments();
    test_utf8_and_odd_text();
    test_threads();
    TEST_DONE();
}
