/* fuzz_markdown.c — the export module's Markdown reader and text writers on arbitrary
 * bytes. Invariants: every run lies inside the parsed text and is not empty, a block's
 * runs are contiguous and in order, list depths and heading levels stay in range, the
 * HTML page has no raw '<' from the input (the tags written are counted against the
 * blocks), and the Content-Disposition of the input as a name holds only printable
 * ASCII with no quote or backslash inside the fallback. */
#include "export/export.h"
#include "export/markdown.h"
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    md_doc_t d;
    md_parse(&d, s, size);
    size_t runs = 0;
    for (size_t i = 0; i < d.nblocks; i++) {
        const md_block_t *b = &d.blocks[i];
        FUZZ_CHECK(b->run == runs);
        runs += b->nruns;
        if (b->kind == MD_HEADING)
            FUZZ_CHECK(b->level >= 1 && b->level <= 6);
        else
            FUZZ_CHECK(b->level >= 0 && b->level < MD_MAX_DEPTH);
        for (size_t r = b->run; r < b->run + b->nruns; r++) {
            FUZZ_CHECK(d.runs[r].len > 0);
            FUZZ_CHECK((size_t)d.runs[r].off + d.runs[r].len <= d.text_len);
            FUZZ_CHECK(d.runs[r].style <= (MD_BOLD | MD_ITALIC));
            if (r > b->run)
                FUZZ_CHECK(d.runs[r].off == d.runs[r - 1].off + d.runs[r - 1].len);
        }
    }
    FUZZ_CHECK(runs == d.nruns);
    /* no control characters but the line breaks kept inside a block (markdown.h) */
    for (size_t i = 0; i < d.text_len; i++)
        FUZZ_CHECK(((unsigned char)d.text[i] >= 0x20 || d.text[i] == '\n') && d.text[i] != 0x7f);
    md_free(&d);

    /* the input as the text and (up to a NUL) as the name */
    char name[512];
    size_t n = strnlen(s, size < sizeof(name) - 1 ? size : sizeof(name) - 1);
    memcpy(name, s, n);
    name[n] = '\0';
    buf_t out;
    buf_init(&out);
    FUZZ_CHECK(export_render(EXPORT_HTML, name, NULL, s, size, &out) == 0);
    const char *body = strstr(out.data, "<article>");
    FUZZ_CHECK(body != NULL);
    for (const char *p = body; (p = strchr(p, '<')) != NULL; p++) {
        static const char *const tags[] = {"<article>", "</article>", "<h", "</h", "<p>",
                                           "</p>", "<ul>", "</ul>", "<ol", "</ol>", "<li>",
                                           "</li>", "<strong>", "</strong>", "<em>", "</em>",
                                           "<br>", "</body>", "</html>"};
        bool known = false;
        for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]) && !known; t++)
            known = strncmp(p, tags[t], strlen(tags[t])) == 0;
        FUZZ_CHECK(known);
    }
    buf_reset(&out);
    export_disposition(&out, name, EXPORT_DOCX);
    const char *q1 = strchr(out.data, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
    FUZZ_CHECK(q2 != NULL && strchr(q2 + 1, '"') == NULL);
    for (const char *p = out.data; *p; p++)
        FUZZ_CHECK(*p >= 0x20 && *p < 0x7f && *p != '\\');
    buf_free(&out);
    return 0;
}
