/* bench_compress.c — §26: bytes on the wire and CPU per compressed page, for gzip, br
 * and zstd at a few levels, and at the levels the server uses (http/compress.h).
 * The page is a list page of 100 documents as the API writes it (the record's fields,
 * builtin texts of the 52 templates at medium length), about 80-90 KB of JSON.
 * Usage: bench_compress [rounds]   (default 200 compressions per line; one core) */
#include "core/json.h"
#include "core/util.h"
#include "gen/builtin.h"
#include "http/compress.h"

#include <brotli/encode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static void page(buf_t *b)
{
    static const char *const prompts[] = {"a post about growing tomatoes on a balcony",
                                          "coffee roasting at home", "remote work for small teams",
                                          "how to train for a first marathon"};
    buf_puts(b, "{\"data\":[");
    buf_t text;
    buf_init(&text);
    for (int i = 0; i < 100; i++) {
        int tpl = i % 52 + 1;
        buf_reset(&text);
        builtin_text(tpl, prompts[i % 4], 0, 0, &text);
        if (i)
            buf_putc(b, ',');
        buf_printf(b, "{\"id\":%d,\"name\":\"Document %d\",\"prompt\":", 1000 + i, i);
        json_escape(b, prompts[i % 4], strlen(prompts[i % 4]));
        buf_printf(b, ",\"creativity\":0.5,\"template_id\":%d,\"template\":\"Template %d\","
                      "\"tone\":\"neutral\",\"language\":\"en\",\"length\":\"medium\",\"result\":",
                   tpl, tpl);
        json_escape(b, text.data, text.len);
        buf_printf(b, ",\"words\":%d,\"usage\":null,\"truncated\":false,\"state\":\"completed\","
                      "\"error\":null,\"favorite\":false,\"revision\":1,\"has_draft\":false,"
                      "\"created_at\":\"2026-11-29T03:00:%02d.000000Z\","
                      "\"updated_at\":\"2026-11-29T03:00:%02d.000000Z\"}",
                   (int)(text.len / 6), i % 60, i % 60);
    }
    buf_free(&text);
    buf_puts(b, "],\"links\":{\"first\":\"http://127.0.0.1:8080/api/v1/documents?page=1\","
                "\"last\":\"http://127.0.0.1:8080/api/v1/documents?page=10\",\"prev\":null,"
                "\"next\":\"http://127.0.0.1:8080/api/v1/documents?page=2\"},\"meta\":{"
                "\"current_page\":1,\"per_page\":100,\"total\":1000,\"last_page\":10},"
                "\"status\":200}");
}

static size_t one(const char *coding, int level, const buf_t *in, buf_t *out)
{
    out->len = 0;
    if (strcmp(coding, "gzip") == 0) {
        z_stream z;
        memset(&z, 0, sizeof(z));
        deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
        size_t bound = deflateBound(&z, (uLong)in->len);
        buf_reserve(out, bound);
        z.next_in = (Bytef *)in->data;
        z.avail_in = (uInt)in->len;
        z.next_out = (Bytef *)out->data;
        z.avail_out = (uInt)bound;
        deflate(&z, Z_FINISH);
        out->len = bound - z.avail_out;
        deflateEnd(&z);
    } else if (strcmp(coding, "br") == 0) {
        size_t n = BrotliEncoderMaxCompressedSize(in->len);
        buf_reserve(out, n);
        BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, in->len,
                              (const uint8_t *)in->data, &n, (uint8_t *)out->data);
        out->len = n;
    } else {
        size_t n = ZSTD_compressBound(in->len);
        buf_reserve(out, n);
        out->len = ZSTD_compress(out->data, n, in->data, in->len, level);
    }
    return out->len;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 1)
        rounds = 1;
    buf_t in, out;
    buf_init(&in);
    buf_init(&out);
    page(&in);
    printf("compress: a list page of 100 documents, %zu bytes of JSON; median of %d runs\n",
           in.len, rounds);
    static const struct {
        const char *coding;
        int level;
    } lines[] = {{"gzip", 1}, {"gzip", 3}, {"gzip", 4}, {"gzip", 5}, {"gzip", 6}, {"gzip", 9}, {"br", 1},  {"br", 4},
                 {"br", 5},   {"br", 6},   {"br", 11},  {"zstd", 1}, {"zstd", 3}, {"zstd", 6},
                 {"zstd", 19}};
    double *us = xmalloc((size_t)rounds * sizeof(*us));
    for (size_t l = 0; l < sizeof(lines) / sizeof(lines[0]); l++) {
        int n = strcmp(lines[l].coding, "br") == 0 && lines[l].level == 11 ? (rounds + 9) / 10
              : strcmp(lines[l].coding, "zstd") == 0 && lines[l].level == 19 ? (rounds + 9) / 10
                                                                              : rounds;
        size_t bytes = 0;
        for (int r = 0; r < n; r++) {
            double t0 = mono_s();
            bytes = one(lines[l].coding, lines[l].level, &in, &out);
            us[r] = (mono_s() - t0) * 1e6;
        }
        qsort(us, (size_t)n, sizeof(*us), cmp_double);
        printf("compress  %-4s level %2d  %7zu bytes (%5.1f %%)  %8.0f us a page\n", lines[l].coding,
               lines[l].level, bytes, 100.0 * (double)bytes / (double)in.len, us[n / 2]);
    }
    /* what the server does (its levels, per-thread contexts kept) */
    for (http_coding_t c = HTTP_CODING_GZIP; c <= HTTP_CODING_ZSTD; c++) {
        for (int r = 0; r < rounds; r++) {
            out.len = 0;
            double t0 = mono_s();
            http_compress(c, in.data, in.len, &out);
            us[r] = (mono_s() - t0) * 1e6;
        }
        qsort(us, (size_t)rounds, sizeof(*us), cmp_double);
        printf("compress  server %-4s    %7zu bytes (%5.1f %%)  %8.0f us a page\n",
               http_coding_name(c), out.len, 100.0 * (double)out.len / (double)in.len,
               us[rounds / 2]);
    }
    free(us);
    buf_free(&in);
    buf_free(&out);
    return 0;
}
