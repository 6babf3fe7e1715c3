/* export_int.h — what the format writers share, for src/export/ only: one writer per
 * format, each reading the blocks of markdown.h, and the XML text escaping that HTML
 * and DOCX both use. */
#ifndef INK_EXPORT_INT_H
#define INK_EXPORT_INT_H

#include "export/export.h"
#include "export/markdown.h"

/* The heading level a Markdown heading gets in a file whose first heading (level 1) is
 * the document's name: one level down, at most 6. */
static inline int export_heading_level(int md_level)
{
    return md_level >= 6 ? 6 : md_level + 1;
}

/* Appends s[0..n) with & < > " ' as character references (text and attribute safe)
 * and, as export_plain does, control characters replaced. */
void export_xml_escape(buf_t *out, const char *s, size_t n);
/* Appends s[0..n) with tabs, line breaks and other control characters (C0, DEL, C1)
 * as U+FFFD, except that tab, CR and LF become a space: text fit for one line of any
 * format (the document's name). */
void export_plain(buf_t *out, const char *s, size_t n);

int export_html(const char *name, const char *lang, const md_doc_t *d, buf_t *out);
int export_docx(const char *name, const md_doc_t *d, buf_t *out);
int export_pdf(const char *name, const md_doc_t *d, buf_t *out);
void export_pdf_shutdown(void);

#endif
