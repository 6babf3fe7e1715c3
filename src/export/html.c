/* html.c — the HTML export: a standalone HTML5 page (UTF-8, the document's language as
 * <html lang>, a small inline style sheet, no script, nothing fetched) with the name as <title> and <h1>, the blocks as
 * <h2>..<h6>, <p> and nested <ul>/<ol> lists, a line break inside a block as <br>. Every piece of text goes through
 * export_xml_escape, so no character of the name or the text is markup. */
#include "export/export_int.h"

#include <stdio.h>
#include <string.h>

static const char style_sheet[] =
    "body{font-family:'DejaVu Sans',system-ui,sans-serif;line-height:1.5;max-width:44em;"
    "margin:2em auto;padding:0 1em;color:#222}h1,h2,h3{line-height:1.2}";

/* s[0..n) escaped, each line break inside a block as <br> (as GitHub shows one). */
static void text_br(buf_t *out, const char *s, size_t n)
{
    const char *nl;
    while ((nl = memchr(s, '\n', n)) != NULL) {
        export_xml_escape(out, s, (size_t)(nl - s));
        buf_puts(out, "<br>\n");
        n -= (size_t)(nl - s) + 1;
        s = nl + 1;
    }
    export_xml_escape(out, s, n);
}

static void runs(buf_t *out, const md_doc_t *d, const md_block_t *b)
{
    for (size_t i = b->run; i < b->run + b->nruns; i++) {
        const md_run_t *r = &d->runs[i];
        if (r->style & MD_BOLD)
            buf_puts(out, "<strong>");
        if (r->style & MD_ITALIC)
            buf_puts(out, "<em>");
        text_br(out, d->text + r->off, r->len);
        if (r->style & MD_ITALIC)
            buf_puts(out, "</em>");
        if (r->style & MD_BOLD)
            buf_puts(out, "</strong>");
    }
}

/* The open lists: depth i holds a list of kind[i] whose last <li> is still open. */
typedef struct {
    int n;
    md_kind_t kind[MD_MAX_DEPTH];
} lists_t;

static void close_lists(buf_t *out, lists_t *l, int keep)
{
    while (l->n > keep) {
        l->n--;
        buf_puts(out, l->kind[l->n] == MD_ORDERED ? "</li></ol>\n" : "</li></ul>\n");
    }
}

static void list_item(buf_t *out, lists_t *l, const md_doc_t *d, const md_block_t *b)
{
    int depth = b->level < l->n ? b->level : l->n; /* at most one level deeper */
    close_lists(out, l, depth + 1);
    if (l->n == depth + 1 && l->kind[depth] != b->kind)
        close_lists(out, l, depth);
    if (l->n == depth + 1) {
        buf_puts(out, "</li>\n<li>");
    } else {
        if (b->kind == MD_ORDERED && b->number != 1)
            buf_printf(out, "<ol start=\"%ld\">\n<li>", b->number);
        else
            buf_puts(out, b->kind == MD_ORDERED ? "<ol>\n<li>" : "<ul>\n<li>");
        l->kind[l->n++] = b->kind;
    }
    runs(out, d, b);
}

int export_html(const char *name, const char *lang, const md_doc_t *d, buf_t *out)
{
    buf_reserve(out, d->text_len + d->text_len / 4 + 1024);
    size_t name_len = strlen(name);
    buf_puts(out, "<!DOCTYPE html>\n<html lang=\"");
    export_xml_escape(out, lang, strlen(lang));
    buf_puts(out, "\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>");
    export_xml_escape(out, name, name_len);
    buf_printf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<article>\n<h1>",
               style_sheet);
    export_xml_escape(out, name, name_len);
    buf_puts(out, "</h1>\n");
    lists_t l = {0};
    for (size_t i = 0; i < d->nblocks; i++) {
        const md_block_t *b = &d->blocks[i];
        if (b->kind == MD_BULLET || b->kind == MD_ORDERED) {
            list_item(out, &l, d, b);
            continue;
        }
        close_lists(out, &l, 0);
        if (b->kind == MD_HEADING) {
            int h = export_heading_level(b->level);
            buf_printf(out, "<h%d>", h);
            runs(out, d, b);
            buf_printf(out, "</h%d>\n", h);
        } else {
            buf_puts(out, "<p>");
            runs(out, d, b);
            buf_puts(out, "</p>\n");
        }
    }
    close_lists(out, &l, 0);
    buf_puts(out, "</article>\n</body>\n</html>\n");
    return 0;
}
