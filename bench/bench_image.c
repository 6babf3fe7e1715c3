/* bench_image.c — times builtin_image (render + PNG encoding) on one core: every API
 * resolution × style, N pictures each over a rotating set of descriptions; prints the
 * median and 90th percentile in milliseconds and the median PNG size.
 *
 *   gcc -std=c17 -O2 -D_GNU_SOURCE -Isrc -o /tmp/bench_image bench/bench_image.c \
 *       src/gen/builtin_image.c src/gen/png.c src/core/util.c \
 *       $(pkg-config --cflags --libs libpng zlib openssl) -lm
 *   /tmp/bench_image [N]          (default N = 15) */
#include "gen/builtin.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *const descriptions[] = {
    "a red sunset over the ocean",      "a snowy mountain village at night",
    "a neon city skyline in the rain",  "a calm forest lake at sunrise",
    "golden desert dunes",              "a purple nebula in deep space",
    "spring flowers in a meadow",       "a portrait of a cat wearing a hat",
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 15;
    if (n < 1 || n > 1000)
        n = 15;
    static const int res[][2] = {{1024, 1024}, {1792, 1024}, {1024, 1792}};
    static const char *const style_names[] = {"none", "vivid", "natural"};
    double *ms = malloc(sizeof(double) * (size_t)n);
    double *kb = malloc(sizeof(double) * (size_t)n);
    printf("%-10s %-8s %8s %8s %9s\n", "size", "style", "median", "p90", "png KiB");
    for (size_t r = 0; r < sizeof res / sizeof res[0]; r++)
        for (int st = 0; st < 3; st++) {
            for (int i = 0; i < n; i++) {
                buf_t b;
                buf_init(&b);
                const char *d = descriptions[(size_t)i % (sizeof descriptions / sizeof *descriptions)];
                double t = now_ms();
                if (builtin_image(d, res[r][0], res[r][1], (img_style_t)st, &b) != 0) {
                    fprintf(stderr, "builtin_image failed for \"%s\"\n", d);
                    return 1;
                }
                ms[i] = now_ms() - t;
                kb[i] = (double)b.len / 1024.0;
                buf_free(&b);
            }
            qsort(ms, (size_t)n, sizeof *ms, cmp_double);
            qsort(kb, (size_t)n, sizeof *kb, cmp_double);
            char size[16];
            snprintf(size, sizeof size, "%dx%d", res[r][0], res[r][1]);
            printf("%-10s %-8s %8.1f %8.1f %9.0f\n", size, style_names[st], ms[n / 2],
                   ms[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1], kb[n / 2]);
            fflush(stdout);
        }
    free(ms);
    free(kb);
    return 0;
}
