/* docx.c — the Word export: an Office Open XML package (ECMA-376) built with libzip
 * in memory. Parts:
 *   [Content_Types].xml            the content type of every part
 *   _rels/.rels                    the main document and the core properties
 *   docProps/core.xml              the title (the document's name)
 *   word/_rels/document.xml.rels   styles and numbering
 *   word/styles.xml                Normal, Heading1..6 (the name is Heading1), List Paragraph
 *   word/numbering.xml             bullets (numId 1) and one numbering per ordered list
 *   word/document.xml              the paragraphs, A4 with 2.5 cm margins
 * Markdown headings are Heading2..6 (export_heading_level), list items List Paragraph
 * with numPr (nesting = ilvl), bold and italic runs <w:b/> and <w:i/>, a line break
 * inside a block <w:br/>. An ordered list
 * gets its own w:num that starts at its first item's number, so lists do not continue
 * one another's count. */
#include "export/export_int.h"

#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define W_NS "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#define R_NS "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"

static const char content_types[] =
    XML_DECL
    "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
    "<Default Extension=\"rels\" "
    "ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
    "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
    "<Override PartName=\"/word/document.xml\" ContentType=\"application/"
    "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/>"
    "<Override PartName=\"/word/styles.xml\" ContentType=\"application/"
    "vnd.openxmlformats-officedocument.wordprocessingml.styles+xml\"/>"
    "<Override PartName=\"/word/numbering.xml\" ContentType=\"application/"
    "vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml\"/>"
    "<Override PartName=\"/docProps/core.xml\" "
    "ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>"
    "</Types>";

static const char package_rels[] =
    XML_DECL
    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" Type=\"" R_NS "/officeDocument\" Target=\"word/document.xml\"/>"
    "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/"
    "relationships/metadata/core-properties\" Target=\"docProps/core.xml\"/>"
    "</Relationships>";

static const char document_rels[] =
    XML_DECL
    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" Type=\"" R_NS "/styles\" Target=\"styles.xml\"/>"
    "<Relationship Id=\"rId2\" Type=\"" R_NS "/numbering\" Target=\"numbering.xml\"/>"
    "</Relationships>";

/* Heading n: size in half-points. */
static const int heading_size[7] = {0, 36, 30, 26, 24, 22, 22};

static void styles_xml(buf_t *o)
{
    buf_puts(o, XML_DECL "<w:styles xmlns:w=\"" W_NS "\">"
                "<w:docDefaults><w:rPrDefault><w:rPr>"
                "<w:rFonts w:ascii=\"DejaVu Sans\" w:hAnsi=\"DejaVu Sans\" "
                "w:cs=\"DejaVu Sans\" w:eastAsia=\"Noto Sans CJK SC\"/>"
                "<w:sz w:val=\"22\"/><w:szCs w:val=\"22\"/><w:lang w:val=\"en-US\"/>"
                "</w:rPr></w:rPrDefault><w:pPrDefault><w:pPr>"
                "<w:spacing w:after=\"160\" w:line=\"276\" w:lineRule=\"auto\"/>"
                "</w:pPr></w:pPrDefault></w:docDefaults>"
                "<w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\">"
                "<w:name w:val=\"Normal\"/><w:qFormat/></w:style>");
    for (int h = 1; h <= 6; h++)
        buf_printf(o,
                   "<w:style w:type=\"paragraph\" w:styleId=\"Heading%d\">"
                   "<w:name w:val=\"heading %d\"/><w:basedOn w:val=\"Normal\"/>"
                   "<w:next w:val=\"Normal\"/><w:uiPriority w:val=\"9\"/><w:qFormat/>"
                   "<w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before=\"%d\" "
                   "w:after=\"120\"/><w:outlineLvl w:val=\"%d\"/></w:pPr>"
                   "<w:rPr><w:b/><w:bCs/><w:sz w:val=\"%d\"/><w:szCs w:val=\"%d\"/></w:rPr>"
                   "</w:style>",
                   h, h, h == 1 ? 0 : 240, h - 1, heading_size[h], heading_size[h]);
    buf_puts(o, "<w:style w:type=\"paragraph\" w:styleId=\"ListParagraph\">"
                "<w:name w:val=\"List Paragraph\"/><w:basedOn w:val=\"Normal\"/>"
                "<w:uiPriority w:val=\"34\"/><w:qFormat/><w:pPr><w:spacing w:after=\"60\"/>"
                "<w:ind w:left=\"720\"/><w:contextualSpacing/></w:pPr></w:style>"
                "</w:styles>");
}

/* The numbering part: abstract 0 = bullets, 1 = decimal; num 1 = bullets; num 2.. =
 * one per ordered list, starting at (level, start) of its first item. */
typedef struct {
    int level;
    long start;
} ordered_list_t;

static void numbering_xml(buf_t *o, const ordered_list_t *ol, size_t n)
{
    static const char *const bullets[3] = {"\xE2\x80\xA2", "\xE2\x97\xA6", "\xE2\x96\xAA"};
    buf_puts(o, XML_DECL "<w:numbering xmlns:w=\"" W_NS "\">");
    for (int a = 0; a < 2; a++) {
        buf_printf(o, "<w:abstractNum w:abstractNumId=\"%d\"><w:multiLevelType "
                      "w:val=\"hybridMultilevel\"/>",
                   a);
        for (int l = 0; l < 9; l++) {
            buf_printf(o, "<w:lvl w:ilvl=\"%d\"><w:start w:val=\"1\"/>", l);
            if (a == 0)
                buf_printf(o, "<w:numFmt w:val=\"bullet\"/><w:lvlText w:val=\"%s\"/>",
                           bullets[l % 3]);
            else
                buf_printf(o, "<w:numFmt w:val=\"decimal\"/><w:lvlText w:val=\"%%%d.\"/>", l + 1);
            buf_printf(o, "<w:lvlJc w:val=\"left\"/><w:pPr><w:ind w:left=\"%d\" "
                          "w:hanging=\"360\"/></w:pPr></w:lvl>",
                       720 * (l + 1));
        }
        buf_puts(o, "</w:abstractNum>");
    }
    buf_puts(o, "<w:num w:numId=\"1\"><w:abstractNumId w:val=\"0\"/></w:num>");
    for (size_t i = 0; i < n; i++)
        buf_printf(o, "<w:num w:numId=\"%zu\"><w:abstractNumId w:val=\"1\"/>"
                      "<w:lvlOverride w:ilvl=\"%d\"><w:startOverride w:val=\"%ld\"/>"
                      "</w:lvlOverride></w:num>",
                   i + 2, ol[i].level, ol[i].start);
    buf_puts(o, "</w:numbering>");
}

static void run_xml(buf_t *o, const char *s, size_t n, uint8_t style)
{
    buf_puts(o, "<w:r>");
    if (style)
        buf_printf(o, "<w:rPr>%s%s</w:rPr>", (style & MD_BOLD) ? "<w:b/><w:bCs/>" : "",
                   (style & MD_ITALIC) ? "<w:i/><w:iCs/>" : "");
    buf_puts(o, "<w:t xml:space=\"preserve\">");
    const char *nl; /* a line break inside the block: <w:br/> between two texts */
    while ((nl = memchr(s, '\n', n)) != NULL) {
        export_xml_escape(o, s, (size_t)(nl - s));
        buf_puts(o, "</w:t><w:br/><w:t xml:space=\"preserve\">");
        n -= (size_t)(nl - s) + 1;
        s = nl + 1;
    }
    export_xml_escape(o, s, n);
    buf_puts(o, "</w:t></w:r>");
}

/* document.xml; the ordered lists met are appended to *ol (numbering_xml's input). */
static void document_xml(buf_t *o, const char *name, const md_doc_t *d, ordered_list_t **ol,
                         size_t *nol)
{
    size_t cap = 0;
    buf_reserve(o, d->text_len + d->nruns * 64 + d->nblocks * 160 + 2048);
    buf_puts(o, XML_DECL "<w:document xmlns:w=\"" W_NS "\" xmlns:r=\"" R_NS "\"><w:body>"
                "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr>");
    run_xml(o, name, strlen(name), 0);
    buf_puts(o, "</w:p>");
    size_t cur_num[MD_MAX_DEPTH] = {0}; /* the w:num of the ordered list open at a depth */
    const md_block_t *prev = NULL;
    for (size_t i = 0; i < d->nblocks; prev = &d->blocks[i], i++) {
        const md_block_t *b = &d->blocks[i];
        buf_puts(o, "<w:p><w:pPr>");
        if (b->kind == MD_HEADING)
            buf_printf(o, "<w:pStyle w:val=\"Heading%d\"/>", export_heading_level(b->level));
        else if (b->kind == MD_BULLET || b->kind == MD_ORDERED) {
            size_t num = 1;
            if (b->kind == MD_ORDERED) {
                bool prev_item = prev && (prev->kind == MD_BULLET || prev->kind == MD_ORDERED);
                bool continues = prev_item && cur_num[b->level] &&
                                 (prev->level > b->level ||
                                  (prev->level == b->level && prev->kind == MD_ORDERED));
                if (!continues) {
                    if (*nol == cap) {
                        cap = cap ? cap * 2 : 8;
                        *ol = xrealloc(*ol, cap * sizeof(**ol));
                    }
                    (*ol)[(*nol)++] = (ordered_list_t){b->level, b->number};
                    cur_num[b->level] = *nol + 1;
                }
                num = cur_num[b->level];
            }
            buf_printf(o, "<w:pStyle w:val=\"ListParagraph\"/><w:numPr><w:ilvl w:val=\"%d\"/>"
                          "<w:numId w:val=\"%zu\"/></w:numPr>",
                       b->level, num);
        }
        buf_puts(o, "</w:pPr>");
        if (b->kind != MD_BULLET && b->kind != MD_ORDERED)
            memset(cur_num, 0, sizeof(cur_num));
        for (size_t r = b->run; r < b->run + b->nruns; r++)
            run_xml(o, d->text + d->runs[r].off, d->runs[r].len, d->runs[r].style);
        buf_puts(o, "</w:p>");
    }
    /* A4 (11906 x 16838 twentieths of a point), 2.5 cm (1418) margins */
    buf_puts(o, "<w:sectPr><w:pgSz w:w=\"11906\" w:h=\"16838\"/><w:pgMar w:top=\"1418\" "
                "w:right=\"1418\" w:bottom=\"1418\" w:left=\"1418\" w:header=\"709\" "
                "w:footer=\"709\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>");
}

static void core_xml(buf_t *o, const char *name)
{
    buf_puts(o, XML_DECL "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/"
                "package/2006/metadata/core-properties\" "
                "xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>");
    export_xml_escape(o, name, strlen(name));
    buf_puts(o, "</dc:title></cp:coreProperties>");
}

/* Adds one part whose bytes stay valid until zip_close. */
static bool add_part(zip_t *z, const char *path, const void *data, size_t len)
{
    zip_source_t *src = zip_source_buffer(z, data, len, 0);
    if (!src)
        return false;
    if (zip_file_add(z, path, src, ZIP_FL_ENC_UTF_8) < 0) {
        zip_source_free(src);
        return false;
    }
    return true;
}

int export_docx(const char *name, const md_doc_t *d, buf_t *out)
{
    int rc = -1;
    buf_t doc, styles, numbering, core;
    buf_init(&doc);
    buf_init(&styles);
    buf_init(&numbering);
    buf_init(&core);
    ordered_list_t *ol = NULL;
    size_t nol = 0;
    document_xml(&doc, name, d, &ol, &nol);
    styles_xml(&styles);
    numbering_xml(&numbering, ol, nol);
    core_xml(&core, name);

    zip_error_t err;
    zip_error_init(&err);
    zip_t *z = NULL;
    zip_source_t *archive = zip_source_buffer_create(NULL, 0, 0, &err);
    if (!archive)
        goto out;
    zip_source_keep(archive); /* it outlives the zip_t that writes into it */
    z = zip_open_from_source(archive, ZIP_TRUNCATE, &err);
    if (!z)
        goto out;
    if (!add_part(z, "[Content_Types].xml", content_types, sizeof(content_types) - 1) ||
        !add_part(z, "_rels/.rels", package_rels, sizeof(package_rels) - 1) ||
        !add_part(z, "docProps/core.xml", core.data, core.len) ||
        !add_part(z, "word/_rels/document.xml.rels", document_rels, sizeof(document_rels) - 1) ||
        !add_part(z, "word/styles.xml", styles.data, styles.len) ||
        !add_part(z, "word/numbering.xml", numbering.data, numbering.len) ||
        !add_part(z, "word/document.xml", doc.data, doc.len))
        goto out;
    if (zip_close(z) != 0)
        goto out;
    z = NULL;
    zip_stat_t st;
    if (zip_source_open(archive) != 0)
        goto out;
    if (zip_source_stat(archive, &st) == 0 && (st.valid & ZIP_STAT_SIZE))
        buf_reserve(out, (size_t)st.size);
    char chunk[16384];
    zip_int64_t n;
    while ((n = zip_source_read(archive, chunk, sizeof(chunk))) > 0)
        buf_append(out, chunk, (size_t)n);
    zip_source_close(archive);
    rc = n == 0 ? 0 : -1;
out:
    if (rc != 0)
        log_error("export: docx: %s", z ? zip_strerror(z) : zip_error_strerror(&err));
    if (z)
        zip_discard(z);
    if (archive)
        zip_source_free(archive);
    zip_error_fini(&err);
    free(ol);
    buf_free(&doc);
    buf_free(&styles);
    buf_free(&numbering);
    buf_free(&core);
    return rc;
}
