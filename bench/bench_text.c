/* bench_text.c — times builtin_text over all 52 templates with a short prompt and a
 * 16384-character one, and prints microseconds per document (median and max).
 * Usage: bench_text [rounds]   (default 20 rounds of 52 documents per prompt) */
#include "core/util.h"
#include "gen/builtin.h"
#include "gen/templates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(const char *label, const char *prompt, int rounds)
{
    size_t n = (size_t)rounds * TEMPLATE_COUNT;
    double *us = xmalloc(n * sizeof *us);
    buf_t out;
    buf_init(&out);
    size_t k = 0, bytes = 0;
    for (int r = 0; r < rounds; r++) {
        for (int id = 1; id <= TEMPLATE_COUNT; id++) {
            double creativity = (r % 5) * 0.25;
            buf_reset(&out);
            double t0 = mono_s();
            builtin_text(id, prompt, creativity, (uint64_t)r * 7919 + (uint64_t)id, &out);
            us[k++] = (mono_s() - t0) * 1e6;
            bytes += out.len;
        }
    }
    qsort(us, n, sizeof *us, cmp_double);
    printf("%-6s prompt (%5zu chars): %zu documents, median %.1f us, p99 %.1f us, max %.1f us, "
           "avg output %zu bytes\n",
           label, strlen(prompt), n, us[n / 2], us[n * 99 / 100], us[n - 1], bytes / n);
    buf_free(&out);
    free(us);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    if (rounds < 1)
        rounds = 1;
    static const char *const sentences[] = {
        "The lighthouse keeper climbs the tower every evening before dusk. ",
        "Storms on the northern coast can last for days and test every lighthouse. ",
        "Old logbooks describe ships, weather and the slow turning of the great lens. ",
        "Modern automation changed lighthouse keeping, but the romance remains. ",
    };
    char *big = xmalloc(16384 + 1);
    size_t n = 0;
    for (int i = 0; n < 16384; i++) {
        const char *s = sentences[i % 4];
        size_t k = strlen(s);
        if (k > 16384 - n)
            k = 16384 - n;
        memcpy(big + n, s, k);
        n += k;
    }
    big[n] = '\0';
    bench("short", "Write a blog post about sustainable urban gardening for beginners.", rounds);
    bench("16k", big, rounds);
    free(big);
    return 0;
}
