/* pdf.c — the PDF export: cairo's PDF surface with text laid out by pango
 * (pangocairo). A4 pages, 2.5 cm margins, the name as the first heading, paragraphs
 * wrapped at word (else character) boundaries, headings that keep with what follows,
 * lists indented per level with their bullet or number hanging, a page number at the
 * foot of every page, and the title in the document information.
 *
 * Fonts come from fontconfig: "DejaVu Sans" first, "Noto Sans CJK SC" next, "Symbola"
 * (emoji and symbols, monochrome) third, then whatever fontconfig falls back to, colour
 * fonts excepted (font_map_new), so Latin, Greek, Cyrillic, CJK text and emoji all find a
 * glyph. cairo embeds the subset of each font that is used.
 *
 * Pagination is line by line: a block is laid out in slices of at most SLICE bytes (one
 * PangoLayout at a time; see draw_text), and each line goes where the cursor is, or on
 * a new page when it would cross the bottom margin; memory is one slice's layout plus
 * the PDF written so far, and time is linear in the text. One font map serves every export (fontconfig's font list is read once); pango
 * objects are not shared between threads, so exports take a lock around their use. */
#include "export/export_int.h"

#include "core/log.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PAGE_W 595.2756 /* A4 in points */
#define PAGE_H 841.8898
#define MARGIN 70.8661 /* 2.5 cm */
#define BODY_SIZE 11.0
#define LIST_INDENT 18.0 /* per nesting level, and the bullet's hanging width */
#define FAMILIES "DejaVu Sans, Noto Sans CJK SC, Symbola"

static const double heading_size[7] = {0, 20, 16, 14, 12.5, 11.5, 11};

/* fontconfig rules added to the system's for the PDF's fonts only: colour fonts (Noto
 * Color Emoji) are rejected, because cairo 1.16 draws their glyphs as 72 dpi bitmaps
 * (blurred when zoomed, and not text: a search or a copy skips them), so emoji come from
 * Symbola, a monochrome outline font embedded like the others. */
static const char no_colour_fonts[] =
    "<?xml version=\"1.0\"?><!DOCTYPE fontconfig SYSTEM \"fonts.dtd\"><fontconfig>"
    "<selectfont><rejectfont><pattern><patelt name=\"color\"><bool>true</bool></patelt>"
    "</pattern></rejectfont></selectfont></fontconfig>";

/* The font map of every export. fontconfig's configuration, before pango reads it: the
 * system's plus the rules above, made the process's current one (only the PDF export
 * uses fonts); if they do not load, the system's as it is. The current configuration
 * stays reachable from fontconfig (a configuration given to the font map alone would
 * never be freed: pango keeps its reference). */
static PangoFontMap *font_map_new(void)
{
    FcConfig *c = FcInitLoadConfig();
    if (!(c && FcConfigParseAndLoadFromMemory(c, (const FcChar8 *)no_colour_fonts, FcTrue) &&
          FcConfigBuildFonts(c) && FcConfigSetCurrent(c)))
        log_warn("export: pdf: the fontconfig rules did not load; colour emoji fonts stay");
    if (c)
        FcConfigDestroy(c); /* the current configuration's reference remains */
    return pango_cairo_font_map_new();
}

static pthread_mutex_t pdf_lock = PTHREAD_MUTEX_INITIALIZER;
static PangoFontMap *font_map; /* under pdf_lock */

typedef struct {
    cairo_t *cr;
    PangoContext *ctx;
    PangoFontDescription *body, *heading[7], *footer;
    PangoLayout *text; /* reused for every slice of text (draw_text) */
    double y;  /* the cursor: top of the next line */
    int page;  /* 1-based */
    bool page_has_text;
} pdf_t;

static cairo_status_t write_out(void *closure, const unsigned char *data, unsigned int len)
{
    buf_append(closure, data, len);
    return CAIRO_STATUS_SUCCESS;
}

static PangoFontDescription *font(double size, bool bold)
{
    PangoFontDescription *f = pango_font_description_from_string(FAMILIES);
    pango_font_description_set_absolute_size(f, size * PANGO_SCALE);
    if (bold)
        pango_font_description_set_weight(f, PANGO_WEIGHT_BOLD);
    return f;
}

static PangoLayout *layout_new(pdf_t *p, const PangoFontDescription *f, double width)
{
    PangoLayout *l = pango_layout_new(p->ctx);
    pango_layout_set_font_description(l, f);
    pango_layout_set_width(l, (int)(width * PANGO_SCALE));
    pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
    return l;
}

static void page_footer(pdf_t *p)
{
    char num[24];
    snprintf(num, sizeof(num), "%d", p->page);
    PangoLayout *l = layout_new(p, p->footer, PAGE_W - 2 * MARGIN);
    pango_layout_set_alignment(l, PANGO_ALIGN_CENTER);
    pango_layout_set_text(l, num, -1);
    cairo_set_source_rgb(p->cr, 0.4, 0.4, 0.4);
    cairo_move_to(p->cr, MARGIN, PAGE_H - MARGIN / 2 - 6);
    pango_cairo_show_layout(p->cr, l);
    cairo_set_source_rgb(p->cr, 0, 0, 0);
    g_object_unref(l);
}

static void new_page(pdf_t *p)
{
    page_footer(p);
    cairo_show_page(p->cr);
    p->page++;
    p->y = MARGIN;
    p->page_has_text = false;
}

/* Draws the first nlines lines of a laid-out slice at x from the cursor, breaking
 * pages between lines. marker (or NULL) is drawn beside the first line, at marker_x. */
static void draw_lines(pdf_t *p, PangoLayout *l, int nlines, double x, PangoLayout *marker,
                       double marker_x)
{
    PangoLayoutIter *it = pango_layout_get_iter(l);
    double origin = p->y; /* where the layout's top sits on this page */
    for (int i = 0; i < nlines; i++) {
        PangoRectangle logical;
        pango_layout_iter_get_line_extents(it, NULL, &logical);
        double top = (double)logical.y / PANGO_SCALE;
        double bottom = (double)(logical.y + logical.height) / PANGO_SCALE;
        if (origin + bottom > PAGE_H - MARGIN && p->page_has_text) {
            new_page(p);
            origin = p->y - top;
        }
        double baseline = origin + (double)pango_layout_iter_get_baseline(it) / PANGO_SCALE;
        cairo_move_to(p->cr, x, baseline);
        pango_cairo_show_layout_line(p->cr, pango_layout_iter_get_line_readonly(it));
        if (i == 0 && marker) {
            cairo_move_to(p->cr, marker_x, baseline);
            pango_cairo_show_layout_line(p->cr, pango_layout_get_line_readonly(marker, 0));
        }
        p->page_has_text = true;
        p->y = origin + bottom;
        if (!pango_layout_iter_next_line(it))
            break;
    }
    pango_layout_iter_free(it);
}

/* text[start..end) as the layout's text; with a block, its runs' bold and italic as
 * attributes (text is then the block's text, which starts at its first run). */
static void set_slice(PangoLayout *l, const char *text, size_t start, size_t end,
                      const md_doc_t *d, const md_block_t *b)
{
    pango_layout_set_text(l, text + start, (int)(end - start));
    if (!b || b->nruns == 0)
        return;
    PangoAttrList *attrs = pango_attr_list_new();
    uint32_t base = d->runs[b->run].off;
    for (size_t i = b->run; i < b->run + b->nruns; i++) {
        const md_run_t *r = &d->runs[i];
        size_t rs = r->off - base, re = rs + r->len;
        if (!r->style || re <= start || rs >= end)
            continue;
        guint from = (guint)((rs > start ? rs : start) - start);
        guint to = (guint)((re < end ? re : end) - start);
        if (r->style & MD_BOLD) {
            PangoAttribute *a = pango_attr_weight_new(PANGO_WEIGHT_BOLD);
            a->start_index = from;
            a->end_index = to;
            pango_attr_list_insert(attrs, a);
        }
        if (r->style & MD_ITALIC) {
            PangoAttribute *a = pango_attr_style_new(PANGO_STYLE_ITALIC);
            a->start_index = from;
            a->end_index = to;
            pango_attr_list_insert(attrs, a);
        }
    }
    pango_layout_set_attributes(l, attrs);
    pango_attr_list_unref(attrs);
}

/* Draws text[0..len) in font f, wrapped to width, at x from the cursor. pango shapes
 * the rest of a paragraph again at each line break, so one layout of a long paragraph
 * costs the square of its length: the text is laid out SLICE bytes at a time, every
 * line of a slice but its last is drawn, and the next slice starts where that last
 * line started (so the lines are the same as one layout would make). */
#define SLICE 1024
static void draw_text(pdf_t *p, const PangoFontDescription *f, double x, double width,
                      const char *text, size_t len, const md_doc_t *d, const md_block_t *b,
                      PangoLayout *marker, double marker_x)
{
    size_t start = 0;
    bool first = true;
    do {
        size_t end = len;
        if (len - start > SLICE) {
            end = start + SLICE;
            while (end > start + 1 && ((unsigned char)text[end] & 0xC0) == 0x80)
                end--; /* a character boundary */
        }
        PangoLayout *l = p->text;
        pango_layout_set_font_description(l, f);
        pango_layout_set_width(l, (int)(width * PANGO_SCALE));
        pango_layout_set_attributes(l, NULL);
        set_slice(l, text, start, end, d, b);
        int n = pango_layout_get_line_count(l);
        int keep = end < len && n > 1 ? n - 1 : n;
        draw_lines(p, l, keep, x, first ? marker : NULL, marker_x);
        start = keep < n ? start + (size_t)pango_layout_get_line_readonly(l, keep)->start_index
                         : end;
        first = false;
    } while (start < len);
}

/* The text of a block: its runs are contiguous in d->text. */
static const char *block_text(const md_doc_t *d, const md_block_t *b, size_t *len)
{
    if (b->nruns == 0) {
        *len = 0;
        return "";
    }
    const md_run_t *first = &d->runs[b->run], *last = &d->runs[b->run + b->nruns - 1];
    *len = last->off + last->len - first->off;
    return d->text + first->off;
}

/* About one line of text in font f, in points. */
static double line_height(const PangoFontDescription *f)
{
    return pango_font_description_get_size(f) / (double)PANGO_SCALE * 1.25;
}

/* A heading: the name (text, no block) or a Markdown heading (its block). */
static void heading(pdf_t *p, int level, const char *text, size_t len, const md_doc_t *d,
                    const md_block_t *b)
{
    const PangoFontDescription *f = p->heading[level];
    if (p->page_has_text)
        p->y += level == 1 ? 6 : 10;
    /* keep the heading with at least two lines of what follows */
    if (p->page_has_text && p->y + line_height(f) + 2 * line_height(p->body) > PAGE_H - MARGIN)
        new_page(p);
    if (b)
        text = block_text(d, b, &len);
    draw_text(p, f, MARGIN, PAGE_W - 2 * MARGIN, text, len, d, b, NULL, 0);
    p->y += level == 1 ? 10 : 6;
}

static void list_item(pdf_t *p, const md_doc_t *d, const md_block_t *b)
{
    static const char *const bullets[3] = {"\xE2\x80\xA2", "\xE2\x97\xA6", "\xE2\x96\xAA"};
    double indent = LIST_INDENT * (b->level + 1);
    if (indent > (PAGE_W - 2 * MARGIN) / 2)
        indent = (PAGE_W - 2 * MARGIN) / 2;
    char num[32];
    const char *mark = bullets[b->level % 3];
    if (b->kind == MD_ORDERED) {
        snprintf(num, sizeof(num), "%ld.", b->number);
        mark = num;
    }
    PangoLayout *m = layout_new(p, p->body, LIST_INDENT * 2);
    pango_layout_set_text(m, mark, -1);
    int mw;
    pango_layout_get_pixel_size(m, &mw, NULL);
    double text_x = MARGIN + indent + (mw > LIST_INDENT - 4 ? mw + 4 - LIST_INDENT : 0);
    size_t len;
    const char *text = block_text(d, b, &len);
    draw_text(p, p->body, text_x, PAGE_W - MARGIN - text_x, text, len, d, b, m,
              MARGIN + indent - LIST_INDENT + 2);
    g_object_unref(m);
    p->y += 3;
}

static void paragraph(pdf_t *p, const md_doc_t *d, const md_block_t *b)
{
    size_t len;
    const char *text = block_text(d, b, &len);
    draw_text(p, p->body, MARGIN, PAGE_W - 2 * MARGIN, text, len, d, b, NULL, 0);
    p->y += 8;
}

int export_pdf(const char *name, const md_doc_t *d, buf_t *out)
{
    buf_t title;
    buf_init(&title);
    export_plain(&title, name, strlen(name));
    pthread_mutex_lock(&pdf_lock);
    if (!font_map)
        font_map = font_map_new();
    cairo_surface_t *surface = cairo_pdf_surface_create_for_stream(write_out, out, PAGE_W, PAGE_H);
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, buf_cstr(&title));
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "inkwell");
    pdf_t p = {.cr = cairo_create(surface), .y = MARGIN, .page = 1};
    p.ctx = pango_font_map_create_context(font_map);
    pango_cairo_update_context(p.cr, p.ctx);
    p.body = font(BODY_SIZE, false);
    p.footer = font(9, false);
    p.text = layout_new(&p, p.body, PAGE_W - 2 * MARGIN);
    for (int h = 1; h <= 6; h++)
        p.heading[h] = font(heading_size[h], true);

    heading(&p, 1, buf_cstr(&title), title.len, NULL, NULL);
    for (size_t i = 0; i < d->nblocks; i++) {
        const md_block_t *b = &d->blocks[i];
        switch (b->kind) {
        case MD_HEADING: heading(&p, export_heading_level(b->level), NULL, 0, d, b); break;
        case MD_BULLET:
        case MD_ORDERED: list_item(&p, d, b); break;
        case MD_PARA:
            if (i > 0 && d->blocks[i - 1].kind != MD_PARA && d->blocks[i - 1].kind != MD_HEADING)
                p.y += 5; /* a paragraph after a list stands apart from it */
            paragraph(&p, d, b);
            break;
        }
    }
    page_footer(&p);
    cairo_show_page(p.cr);

    for (int h = 1; h <= 6; h++)
        pango_font_description_free(p.heading[h]);
    g_object_unref(p.text);
    pango_font_description_free(p.body);
    pango_font_description_free(p.footer);
    g_object_unref(p.ctx);
    cairo_destroy(p.cr);
    cairo_surface_finish(surface);
    cairo_status_t st = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    pthread_mutex_unlock(&pdf_lock);
    buf_free(&title);
    if (st != CAIRO_STATUS_SUCCESS) {
        log_error("export: pdf: %s", cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

void export_pdf_shutdown(void)
{
    pthread_mutex_lock(&pdf_lock);
    if (font_map) {
        /* The font map goes. cairo's and fontconfig's static caches stay (still
         * reachable): cairo_debug_reset_static_data() and FcFini() both assert, now and
         * then, that nothing refers to them any more, and pango's font loading (which
         * runs in a thread of its own) may still hold a scaled font or a pattern. */
        g_object_unref(font_map);
        font_map = NULL;
    }
    pthread_mutex_unlock(&pdf_lock);
}
