/* test_png.c — png_encode_rgb round trips through libpng's own decoder; png_inspect
 * accepts whole, valid PNGs (any colour type, interlaced too) and rejects everything
 * else: empty input, bad signatures, every truncation, any CRC error, broken image
 * data, missing IEND, trailing bytes, oversized headers and random garbage. */
#include "gen/png.h"
#include "test.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- helpers ------------------------------------------------------------------------- */

/* CRC-32 of PNG chunks: zlib's crc32 is the PNG specification's. */
static uint32_t png_crc(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}


static uint8_t *pattern(int w, int h, uint32_t seed)
{
    uint8_t *p = malloc((size_t)w * (size_t)h * 3);
    uint32_t s = seed;
    for (size_t i = 0; i < (size_t)w * (size_t)h * 3; i++) {
        s = s * 1664525u + 1013904223u;
        /* Mostly smooth with some noise, like a real picture. */
        p[i] = (uint8_t)((i / 3 % (size_t)w) * 255 / (size_t)w + ((s >> 24) & 15));
    }
    return p;
}

/* Decodes with libpng's simplified API into 8-bit RGB; NULL on failure. */
static uint8_t *decode_rgb(const buf_t *png, int *w, int *h)
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
        png_image_free(&im);
        return NULL;
    }
    *w = (int)im.width;
    *h = (int)im.height;
    return px;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Recomputes the CRC of the chunk starting at off (its length field). */
static void fix_crc(uint8_t *d, size_t off)
{
    uint32_t len = be32(d + off);
    put_be32(d + off + 8 + len, png_crc(d + off + 4, (size_t)len + 4));
}

/* Offsets of the chunks of a PNG (their length fields); returns the count. */
static int chunks(const uint8_t *d, size_t n, size_t *off, int max)
{
    int k = 0;
    size_t p = 8;
    while (p + 12 <= n && k < max) {
        off[k++] = p;
        p += 12 + be32(d + p);
    }
    return k;
}

static bool inspect(const void *d, size_t n)
{
    int w = -1, h = -1;
    return png_inspect(d, n, &w, &h);
}

static void encode_ok(int w, int h, int level, buf_t *out)
{
    uint8_t *px = pattern(w, h, (uint32_t)(w * 31 + h));
    buf_init(out);
    CHECK_INT(png_encode_rgb(px, w, h, level, out), 0);
    free(px);
}

/* ---- encoding ------------------------------------------------------------------------ */

static void test_round_trip(void)
{
    static const struct {
        int w, h, level;
    } cases[] = {{1, 1, 1}, {3, 2, 1}, {2, 3, 0}, {17, 13, 9}, {256, 100, 1}, {1000, 3, 3}, {5, 700, 1}};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int w = cases[i].w, h = cases[i].h;
        uint8_t *px = pattern(w, h, (uint32_t)i);
        buf_t png;
        buf_init(&png);
        CHECK_INT(png_encode_rgb(px, w, h, cases[i].level, &png), 0);
        int dw = 0, dh = 0;
        uint8_t *back = decode_rgb(&png, &dw, &dh);
        CHECK_MSG(back != NULL, "decode %dx%d", w, h);
        CHECK_INT(dw, w);
        CHECK_INT(dh, h);
        if (back)
            CHECK_MSG(memcmp(back, px, (size_t)w * (size_t)h * 3) == 0, "pixels differ %dx%d", w, h);
        int iw = 0, ih = 0;
        CHECK(png_inspect(png.data, png.len, &iw, &ih));
        CHECK_INT(iw, w);
        CHECK_INT(ih, h);
        free(back);
        free(px);
        buf_free(&png);
    }
}

static void test_encode_appends_and_rejects(void)
{
    uint8_t px[3 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "prefix");
    CHECK_INT(png_encode_rgb(px, 2, 2, 1, &b), 0);
    CHECK(memcmp(b.data, "prefix", 6) == 0);
    CHECK(memcmp(b.data + 6, "\x89PNG\r\n\x1a\n", 8) == 0);
    CHECK(png_inspect(b.data + 6, b.len - 6, NULL, NULL));
    size_t len = b.len;
    CHECK_INT(png_encode_rgb(px, 0, 2, 1, &b), -1);
    CHECK_INT(png_encode_rgb(px, 2, -1, 1, &b), -1);
    CHECK_INT(png_encode_rgb(NULL, 2, 2, 1, &b), -1);
    CHECK_INT(png_encode_rgb(px, 2, 2, 1, NULL), -1);
    CHECK_INT(b.len, len); /* failures leave the buffer alone */
    /* An out-of-range level falls back to a valid one. */
    CHECK_INT(png_encode_rgb(px, 2, 2, 42, &b), 0);
    CHECK(png_inspect(b.data + len, b.len - len, NULL, NULL));
    buf_free(&b);
}

/* ---- inspection: valid files --------------------------------------------------------- */

static void test_inspect_other_formats(void)
{
    /* Grey, grey+alpha, RGBA, 16-bit and colour-mapped files are PNGs too. */
    static const png_uint_32 formats[] = {PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGBA,
                                          PNG_FORMAT_LINEAR_Y, PNG_FORMAT_RGB_COLORMAP};
    for (size_t i = 0; i < ARRAY_LEN(formats); i++) {
        png_image im;
        memset(&im, 0, sizeof im);
        im.version = PNG_IMAGE_VERSION;
        im.width = 37;
        im.height = 11;
        im.format = formats[i];
        size_t n = PNG_IMAGE_SIZE(im);
        uint8_t *px = calloc(1, n);
        for (size_t k = 0; k < n; k++)
            px[k] = (uint8_t)(k * 7);
        uint8_t colormap[256 * 3];
        for (size_t k = 0; k < sizeof colormap; k++)
            colormap[k] = (uint8_t)k;
        if (formats[i] & PNG_FORMAT_FLAG_COLORMAP) {
            im.colormap_entries = 256;
            for (size_t k = 0; k < n; k++)
                px[k] = (uint8_t)(k % 256);
        }
        png_alloc_size_t size = 0;
        CHECK(png_image_write_to_memory(&im, NULL, &size, 0, px, 0, colormap));
        uint8_t *mem = malloc(size);
        CHECK(png_image_write_to_memory(&im, mem, &size, 0, px, 0, colormap));
        int w = 0, h = 0;
        CHECK_MSG(png_inspect(mem, size, &w, &h), "format %zu", i);
        CHECK_INT(w, 37);
        CHECK_INT(h, 11);
        free(mem);
        free(px);
    }
}

static void write_to_buf(png_structp p, png_bytep d, size_t n)
{
    buf_append(png_get_io_ptr(p), d, n);
}

static void flush_nothing(png_structp p)
{
    (void)p;
}

static void test_inspect_interlaced(void)
{
    int w = 33, h = 17;
    uint8_t *px = pattern(w, h, 5);
    buf_t b;
    buf_init(&b);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_set_write_fn(png, &b, write_to_buf, flush_nothing);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_bytep rows[17];
    for (int y = 0; y < h; y++)
        rows[y] = px + (size_t)y * (size_t)w * 3;
    png_set_rows(png, info, rows);
    png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    png_destroy_write_struct(&png, &info);
    int iw = 0, ih = 0;
    CHECK(png_inspect(b.data, b.len, &iw, &ih));
    CHECK_INT(iw, w);
    CHECK_INT(ih, h);
    /* Interlaced data cut short is still caught. */
    size_t off[16];
    int nc = chunks((uint8_t *)b.data, b.len, off, 16);
    for (int k = 0; k < nc; k++)
        if (memcmp(b.data + off[k] + 4, "IDAT", 4) == 0) {
            uint8_t *d = (uint8_t *)b.data;
            uint32_t len = be32(d + off[k]);
            /* Rebuild the file with the IDAT payload halved (CRC valid). */
            buf_t cut;
            buf_init(&cut);
            buf_append(&cut, d, off[k]);
            uint8_t hdr[8];
            put_be32(hdr, len / 2);
            memcpy(hdr + 4, "IDAT", 4);
            buf_append(&cut, hdr, 8);
            buf_append(&cut, d + off[k] + 8, len / 2);
            uint8_t crc[4];
            put_be32(crc, png_crc((const uint8_t *)cut.data + off[k] + 4, 4 + (size_t)(len / 2)));
            buf_append(&cut, crc, 4);
            buf_append(&cut, d + off[k] + 12 + len, b.len - (off[k] + 12 + len));
            CHECK(!inspect(cut.data, cut.len));
            buf_free(&cut);
        }
    buf_free(&b);
    free(px);
}

static void test_inspect_size_limit(void)
{
    buf_t b;
    encode_ok(16384, 1, 1, &b);
    int w = 0, h = 0;
    CHECK(png_inspect(b.data, b.len, &w, &h));
    CHECK_INT(w, 16384);
    buf_free(&b);
    encode_ok(16385, 1, 1, &b);
    CHECK(!inspect(b.data, b.len));
    buf_free(&b);
    encode_ok(1, 16385, 1, &b);
    CHECK(!inspect(b.data, b.len));
    buf_free(&b);
}

/* ---- inspection: hostile input ------------------------------------------------------- */

static void test_inspect_rejects_basics(void)
{
    buf_t b;
    encode_ok(5, 4, 1, &b);
    int w = 123, h = 456;
    CHECK(!png_inspect(NULL, 10, &w, &h));
    CHECK(!png_inspect(b.data, 0, &w, &h));
    CHECK(!png_inspect("", 0, &w, &h));
    CHECK(!png_inspect("\x89PNG\r\n\x1a\n", 8, &w, &h));
    CHECK_INT(w, 123); /* untouched on failure */
    CHECK_INT(h, 456);
    for (size_t i = 0; i < 8; i++) { /* each signature byte matters */
        char *d = malloc(b.len);
        memcpy(d, b.data, b.len);
        d[i] ^= 0x20;
        CHECK_MSG(!inspect(d, b.len), "signature byte %zu", i);
        free(d);
    }
    CHECK(!inspect("GIF89a\x01\x00\x01\x00\x00\x00\x00", 13));
    /* Trailing bytes after IEND. */
    buf_t t;
    buf_init(&t);
    buf_append(&t, b.data, b.len);
    buf_append(&t, "x", 1);
    CHECK(!inspect(t.data, t.len));
    buf_free(&t);
    buf_free(&b);
}

static void test_inspect_truncations(void)
{
    buf_t b;
    encode_ok(6, 5, 1, &b);
    CHECK(inspect(b.data, b.len));
    int rejected = 0;
    for (size_t n = 0; n < b.len; n++) {
        char *d = malloc(n ? n : 1); /* exact size, so ASan sees any overread */
        memcpy(d, b.data, n);
        if (!inspect(d, n))
            rejected++;
        else
            CHECK_MSG(false, "prefix of %zu/%zu bytes accepted", n, b.len);
        free(d);
    }
    CHECK_INT(rejected, b.len);
    buf_free(&b);
}

static void test_inspect_crc_errors(void)
{
    buf_t b;
    encode_ok(9, 7, 1, &b);
    /* Add an ancillary chunk so its CRC is checked too. */
    uint8_t *d0 = (uint8_t *)b.data;
    size_t off[16];
    int nc = chunks(d0, b.len, off, 16);
    CHECK(nc >= 3);
    buf_t f;
    buf_init(&f);
    buf_append(&f, d0, off[1]); /* signature + IHDR */
    uint8_t text[12 + 8] = {0, 0, 0, 8, 't', 'E', 'X', 't', 'a', 'b', 0, 'c', 'd', 'e', 'f', 'g'};
    fix_crc(text, 0);
    buf_append(&f, text, sizeof text);
    buf_append(&f, d0 + off[1], b.len - off[1]);
    CHECK(inspect(f.data, f.len));
    uint8_t *d = (uint8_t *)f.data;
    nc = chunks(d, f.len, off, 16);
    for (int k = 0; k < nc; k++) {
        uint32_t len = be32(d + off[k]);
        char type[5] = {0};
        memcpy(type, d + off[k] + 4, 4);
        /* A flipped CRC byte, and a flipped data byte under a stale CRC. */
        for (int crcbyte = 0; crcbyte < 4; crcbyte++) {
            size_t at = off[k] + 8 + len + (size_t)crcbyte;
            d[at] ^= 0x01;
            CHECK_MSG(!inspect(d, f.len), "CRC byte %d of %s", crcbyte, type);
            d[at] ^= 0x01;
        }
        if (len > 0) {
            size_t at = off[k] + 8 + len / 2;
            d[at] ^= 0x80;
            CHECK_MSG(!inspect(d, f.len), "data byte of %s under old CRC", type);
            d[at] ^= 0x80;
        }
        d[off[k] + 5] ^= 0x01; /* chunk type byte */
        CHECK_MSG(!inspect(d, f.len), "type byte of %s", type);
        d[off[k] + 5] ^= 0x01;
    }
    CHECK(inspect(d, f.len));
    buf_free(&f);
    buf_free(&b);
}

static void test_inspect_bad_image_data(void)
{
    buf_t b;
    encode_ok(40, 30, 1, &b);
    uint8_t *d = (uint8_t *)b.data;
    size_t off[16];
    int nc = chunks(d, b.len, off, 16);
    int idat = -1, iend = -1;
    for (int k = 0; k < nc; k++) {
        if (memcmp(d + off[k] + 4, "IDAT", 4) == 0)
            idat = k;
        if (memcmp(d + off[k] + 4, "IEND", 4) == 0)
            iend = k;
    }
    CHECK(idat >= 0 && iend == nc - 1);
    if (idat < 0)
        return;
    uint32_t len = be32(d + off[idat]);
    /* Corrupt the zlib stream but keep a valid CRC: only decoding can tell. */
    int rejected = 0, tried = 0;
    for (uint32_t at = 0; at < len; at += 1 + len / 40) {
        uint8_t *c = malloc(b.len);
        memcpy(c, d, b.len);
        c[off[idat] + 8 + at] ^= 0xFF;
        fix_crc(c, off[idat]);
        tried++;
        rejected += !inspect(c, b.len);
        free(c);
    }
    /* Deflate may decode some corruptions to other, still valid data; most fail. */
    CHECK_MSG(rejected * 2 > tried, "%d of %d corrupted IDATs rejected", rejected, tried);
    {
        /* Zlib header damage always fails. */
        uint8_t *c = malloc(b.len);
        memcpy(c, d, b.len);
        c[off[idat] + 8] = 0x00;
        fix_crc(c, off[idat]);
        CHECK(!inspect(c, b.len));
        free(c);
    }
    {
        /* Valid zlib data but too little of it: 30 rows of data under a 31-row header. */
        uint8_t *c = malloc(b.len);
        memcpy(c, d, b.len);
        put_be32(c + 16 + 4, 31);
        fix_crc(c, 8);
        CHECK(!inspect(c, b.len));
        free(c);
    }
    {
        /* No IEND. */
        CHECK(!inspect(d, off[iend]));
    }
    {
        /* IEND without IDAT. */
        buf_t c;
        buf_init(&c);
        buf_append(&c, d, off[idat]);
        buf_append(&c, d + off[iend], 12);
        CHECK(!inspect(c.data, c.len));
        buf_free(&c);
    }
    buf_free(&b);
}

static void test_inspect_huge_header(void)
{
    static const uint32_t dims[][2] = {
        {100000, 100000}, {16385, 16}, {16, 16385}, {0x7fffffffu, 1}, {0, 5}, {5, 0}, {0xffffffffu, 1}};
    buf_t b;
    encode_ok(16, 16, 1, &b);
    for (size_t i = 0; i < ARRAY_LEN(dims); i++) {
        uint8_t *c = malloc(b.len);
        memcpy(c, b.data, b.len);
        put_be32(c + 16, dims[i][0]);
        put_be32(c + 20, dims[i][1]);
        fix_crc(c, 8);
        int w = -1, h = -1;
        CHECK_MSG(!png_inspect(c, b.len, &w, &h), "%ux%u accepted", dims[i][0], dims[i][1]);
        CHECK_INT(w, -1);
        free(c);
    }
    /* Bad bit depth / colour type combinations. */
    static const uint8_t bad[][2] = {{3, 2}, {16, 3}, {8, 1}, {8, 7}, {0, 0}};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        uint8_t *c = malloc(b.len);
        memcpy(c, b.data, b.len);
        c[24] = bad[i][0];
        c[25] = bad[i][1];
        fix_crc(c, 8);
        CHECK_MSG(!inspect(c, b.len), "depth %d type %d", bad[i][0], bad[i][1]);
        free(c);
    }
    buf_free(&b);
}

static void test_inspect_garbage(void)
{
    uint32_t s = 12345;
    buf_t b;
    encode_ok(8, 8, 1, &b);
    for (int round = 0; round < 3000; round++) {
        s = s * 1664525u + 1013904223u;
        size_t n = (s >> 8) % 600;
        uint8_t *d = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            s = s * 1664525u + 1013904223u;
            d[i] = (uint8_t)(s >> 24);
        }
        if (round % 3 == 1 && n >= 8)
            memcpy(d, b.data, 8); /* a valid signature, then garbage */
        if (round % 3 == 2 && n >= 33)
            memcpy(d, b.data, 33); /* a valid signature and IHDR, then garbage */
        CHECK_MSG(!inspect(d, n), "garbage round %d accepted", round);
        free(d);
    }
    /* Random byte flips in a valid file: never a crash, and usually a rejection. */
    for (int round = 0; round < 2000; round++) {
        uint8_t *d = malloc(b.len);
        memcpy(d, b.data, b.len);
        for (int k = 0; k < 1 + round % 4; k++) {
            s = s * 1664525u + 1013904223u;
            d[(s >> 8) % b.len] ^= (uint8_t)(1u << ((s >> 4) & 7));
        }
        if (memcmp(d, b.data, b.len) != 0) /* two flips may cancel out */
            CHECK_MSG(!inspect(d, b.len), "flipped round %d accepted", round);
        else
            CHECK(inspect(d, b.len));
        free(d);
    }
    buf_free(&b);
}

static void test_crc_known_answers(void)
{
    CHECK_INT(png_crc((const uint8_t *)"IEND", 4), 0xAE426082u);
    CHECK_INT(png_crc((const uint8_t *)"123456789", 9), 0xCBF43926u);
}

int main(void)
{
    test_crc_known_answers();
    test_round_trip();
    test_encode_appends_and_rejects();
    test_inspect_other_formats();
    test_inspect_interlaced();
    test_inspect_size_limit();
    test_inspect_rejects_basics();
    test_inspect_truncations();
    test_inspect_crc_errors();
    test_inspect_bad_image_data();
    test_inspect_huge_header();
    test_inspect_garbage();
    TEST_DONE();
}
