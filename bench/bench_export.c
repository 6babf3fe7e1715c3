/* bench_export.c — time to export a long document in each format, calling the export
 * module directly (no HTTP). The document is the size of the longest result a
 * 16,384-character prompt gives (the rewrite templates return the prompt transformed:
 * 16,384 characters; here about 64 KiB of UTF-8, a quarter of it Cyrillic, Greek and
 * CJK), shaped as a model writes: headings, paragraphs with bold and italic, bullet
 * and numbered lists; then one of 1 MiB (the longest result PUT can store). Prints the
 * best and median of several runs and the file size. The first PDF export of the
 * process also reads fontconfig's font list: that one-time cost is in the first run
 * (see the median and best).
 *   bench-export            the figures
 *   bench-export DIR        also writes DIR/sample.{md,txt,html,docx,pdf} (a short
 *                           sample document: what docs/export.md shows) */
#include "export/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char sample[] =
    "A short tour of what an export keeps: headings, paragraphs, lists, **bold** and "
    "*italic* text, in any script.\n\n"
    "## Why export\n\n"
    "Writers move text to the tool they use next: a *Word* file for an editor, a PDF for "
    "a client, Markdown for a static site.\n\n"
    "## Three steps\n\n"
    "1. Generate the document.\n"
    "2. Pick a format.\n"
    "3. Download the file.\n\n"
    "## Languages\n\n"
    "- English: the quick brown fox jumps over the lazy dog.\n"
    "- Русский: Съешь же ещё этих мягких французских булок.\n"
    "- Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.\n"
    "- 中文：敏捷的棕色狐狸跳过了懒狗。\n"
    "- 日本語：いろはにほへと ちりぬるを\n"
    "  - nested item, *indented* one level\n\n"
    "### Notes\n\n"
    "Text is wrapped to the page, long documents continue on new pages, and every "
    "page is numbered at its foot.\n";

static void long_document(buf_t *out, size_t target)
{
    static const char *const para[] = {
        "The garden plan starts with the soil: test it in spring, add **compost** where "
        "it is thin, and keep *paths* narrow so that beds stay wide. ",
        "Весной почву проверяют, добавляют **компост** и оставляют дорожки узкими. ",
        "Ο κήπος ξεκινά από το έδαφος: ελέγξτε το την άνοιξη. ",
        "花园的规划从土壤开始：春天检测土壤，在贫瘠处添加堆肥。",
    };
    int section = 0;
    while (out->len < target) {
        buf_printf(out, "## Section %d: planning the beds\n\n", ++section);
        for (int p = 0; p < 3; p++) {
            for (int s = 0; s < 4; s++)
                buf_puts(out, para[(p + s) % 4]);
            buf_puts(out, "\n\n");
        }
        for (int i = 1; i <= 4; i++)
            buf_printf(out, "%d. Step %d: water the *seedlings* before noon.\n", i, i);
        buf_puts(out, "\n- Tools: spade, rake, hose\n- Колья и шпагат\n  - 竹竿\n\n");
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    static const export_format_t fmts[] = {EXPORT_MD, EXPORT_TXT, EXPORT_HTML, EXPORT_DOCX,
                                           EXPORT_PDF};
    if (argc > 1) {
        for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
            buf_t b;
            buf_init(&b);
            if (export_render(fmts[i], "Export sample — образец — 样本", "en", sample,
                              strlen(sample), &b) != 0)
                return 1;
            char path[4096];
            snprintf(path, sizeof(path), "%s/sample.%s", argv[1], export_format_name(fmts[i]));
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0)
                return 1;
            buf_free(&b);
        }
    }
    /* 64 KiB: the longest result of a 16,384-character prompt (4-byte characters);
     * 1 MiB: the longest result a client can store with PUT (the body limit) */
    static const size_t sizes[] = {64 * 1024, 1024 * 1024};
    printf("%-6s %9s %10s %10s %10s %5s\n", "format", "doc bytes", "best ms", "median ms",
           "file bytes", "runs");
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
        buf_t doc;
        buf_init(&doc);
        long_document(&doc, sizes[z]);
        for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
            enum { MAX_RUNS = 9 };
            int runs = z == 0 ? MAX_RUNS : 3;
            double t[MAX_RUNS];
            size_t size = 0;
            for (int r = 0; r < runs; r++) {
                buf_t b;
                buf_init(&b);
                double t0 = now_s();
                if (export_render(fmts[i], "A long document", NULL, doc.data, doc.len, &b) != 0)
                    return 1;
                t[r] = (now_s() - t0) * 1000;
                size = b.len;
                buf_free(&b);
            }
            qsort(t, (size_t)runs, sizeof(t[0]), cmp);
            printf("%-6s %9zu %10.2f %10.2f %10zu %5d\n", export_format_name(fmts[i]), doc.len,
                   t[0], t[runs / 2], size, runs);
        }
        buf_free(&doc);
    }
    export_shutdown();
    return 0;
}
