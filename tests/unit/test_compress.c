/* test_compress.c — §26: the negotiation of Accept-Encoding (http_coding_pick: q-values,
 * ties, "*", identity, bad entries), the compressible types, ETags per coding and their
 * matching, and round trips of each coding through zlib and libzstd's decoders. */
#include "http/compress.h"
#include "test.h"

#include <zlib.h>
#include <zstd.h>

#define I HTTP_CODING_IDENTITY
#define G HTTP_CODING_GZIP
#define B HTTP_CODING_BR
#define Z HTTP_CODING_ZSTD

static void test_pick(void)
{
    static const struct {
        const char *ae;
        http_coding_t want;
    } cases[] = {
        {NULL, I},
        {"", I},
        {"gzip", G},
        {"br", B},
        {"zstd", Z},
        {"GZIP", G},
        {"x-gzip", G},
        {"gzip, deflate, br", B},              /* a tie: br before gzip */
        {"gzip, deflate, br, zstd", Z},        /* a tie: zstd first */
        {"zstd;q=0.5, br;q=0.8, gzip;q=0.9", G}, /* q-values decide */
        {"zstd;q=0.9, br;q=0.9, gzip;q=1", G},
        {"gzip;q=0.5, br;q=0.5", B},
        {"gzip;q=0, br;q=0", I},
        {"gzip;q=0", I},
        {"*", Z},
        {"*;q=0.5, gzip", G},
        {"*, zstd;q=0", B},
        {"*;q=0", I},
        {"identity", I},
        {"identity;q=0", I},            /* nothing acceptable: uncompressed */
        {"identity;q=0, *;q=0", I},
        {"gzip, identity;q=0", G},
        {"gzip;q=0.5, identity", I},    /* identity (1) beats gzip (0.5) */
        {"gzip;q=0.5, identity;q=0.5", G}, /* a tie with identity goes to the coding */
        {"gzip;q=0.5, *;q=0.1", G},     /* identity from "*": 0.1 */
        {"deflate", I},
        {"compress, deflate", I},
        {"gzip;q=1.0", G},
        {"gzip;q=1.000", G},
        {"gzip;q=1.001", I},            /* not a qvalue: the entry is void */
        {"gzip;q=2", I},
        {"gzip;q=abc", I},
        {"gzip;q=", I},
        {"gzip;q=0.", I},                /* "0." is q=0 by the grammar */
        {"gzip;q=0.0001", I},
        {"gzip ; q=0.3 , br ; q=0.2", G},
        {"gzip;level=9", G},             /* other parameters are ignored */
        {"gzip;q=0, gzip", I},           /* the first entry of a coding counts */
        {"gzip, gzip;q=0", G},
        {" , ,gzip,, ", G},
        {"zstdx, gzipp, brr", I},
        {"br;q=0.001", B},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        http_coding_t got = http_coding_pick(cases[i].ae);
        http_coding_t want = cases[i].want;
        CHECK_MSG(got == want, "\"%s\": %s, want %s", cases[i].ae ? cases[i].ae : "(none)",
                  http_coding_name(got), http_coding_name(want));
    }
}

static void test_types(void)
{
    CHECK(http_type_compressible(NULL));
    CHECK(http_type_compressible("application/json"));
    CHECK(http_type_compressible("application/json; charset=utf-8"));
    CHECK(http_type_compressible("text/html; charset=utf-8"));
    CHECK(http_type_compressible("text/markdown; charset=utf-8"));
    CHECK(http_type_compressible("text/plain; version=0.0.4"));
    CHECK(http_type_compressible("text/css"));
    CHECK(http_type_compressible("application/javascript"));
    CHECK(http_type_compressible("image/svg+xml"));
    CHECK(http_type_compressible("application/manifest+json"));
    CHECK(!http_type_compressible("application/pdf"));
    CHECK(!http_type_compressible(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"));
    CHECK(!http_type_compressible("application/zip"));
    CHECK(!http_type_compressible("image/png"));
    CHECK(!http_type_compressible("application/octet-stream"));
}

static void test_etags(void)
{
    char out[64];
    http_etag_coded("\"abc\"", G, out, sizeof(out));
    CHECK_STR(out, "\"abc-gzip\"");
    http_etag_coded("W/\"abc\"", B, out, sizeof(out));
    CHECK_STR(out, "W/\"abc-br\"");
    http_etag_coded("\"abc\"", Z, out, sizeof(out));
    CHECK_STR(out, "\"abc-zstd\"");
    http_etag_coded("\"abc\"", I, out, sizeof(out));
    CHECK_STR(out, "\"abc\"");
    http_etag_coded("abc", G, out, sizeof(out)); /* not a quoted tag: as it is */
    CHECK_STR(out, "abc");

    CHECK(http_etag_listed("\"abc-gzip\"", "\"abc-gzip\""));
    CHECK(!http_etag_listed("\"abc\"", "\"abc-gzip\""));
    CHECK(!http_etag_listed("\"abc-gzip\"", "\"abc\""));
    CHECK(!http_etag_listed("\"abc-br\"", "\"abc-gzip\""));
    CHECK(http_etag_listed("\"x\", \"abc-br\" ,\"y\"", "\"abc-br\""));
    CHECK(http_etag_listed("W/\"abc-br\"", "\"abc-br\"")); /* weak comparison */
    CHECK(http_etag_listed("\"abc-br\"", "W/\"abc-br\""));
    CHECK(http_etag_listed("*", "\"abc\""));
    CHECK(!http_etag_listed(NULL, "\"abc\""));
    CHECK(!http_etag_listed("", "\"abc\""));
    CHECK(!http_etag_listed("\"abc-gzip-x\"", "\"abc-gzip\""));
}

static void test_round_trips(void)
{
    buf_t in;
    buf_init(&in);
    for (int i = 0; i < 400; i++)
        buf_printf(&in, "{\"id\":%d,\"name\":\"Document %d\",\"result\":\"garden words\"},", i, i);
    for (int best = 0; best < 2; best++) {
        for (http_coding_t c = G; c <= Z; c++) {
            buf_t out;
            buf_init(&out);
            bool ok = best ? http_compress_best(c, in.data, in.len, &out)
                           : http_compress(c, in.data, in.len, &out);
            CHECK_MSG(ok, "%s compressed", http_coding_name(c));
            CHECK_MSG(out.len > 0 && out.len < in.len / 4, "%s: %zu of %zu", http_coding_name(c),
                      out.len, in.len);
            char *back = malloc(in.len + 16);
            size_t n = 0;
            if (c == G) {
                z_stream z;
                memset(&z, 0, sizeof(z));
                inflateInit2(&z, 15 + 16);
                z.next_in = (Bytef *)out.data;
                z.avail_in = (uInt)out.len;
                z.next_out = (Bytef *)back;
                z.avail_out = (uInt)(in.len + 16);
                CHECK_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
                n = in.len + 16 - z.avail_out;
                inflateEnd(&z);
            } else if (c == Z) {
                n = ZSTD_decompress(back, in.len + 16, out.data, out.len);
            } else {
                n = in.len; /* br: decoded by the brotli command in test_compression.py */
                memcpy(back, in.data, in.len);
            }
            CHECK_INT(n, in.len);
            CHECK(n == in.len && memcmp(back, in.data, n) == 0);
            free(back);
            buf_free(&out);
        }
    }
    buf_t empty;
    buf_init(&empty);
    CHECK(!http_compress(I, in.data, in.len, &empty)); /* identity is no compression */
    CHECK_INT(empty.len, 0);
    buf_free(&in);
}

int main(void)
{
    test_pick();
    test_types();
    test_etags();
    test_round_trips();
    TEST_DONE();
}
