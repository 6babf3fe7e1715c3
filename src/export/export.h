/* export.h — a document as a file: Markdown, plain text, HTML, Word (DOCX) or PDF
 * (API.md §12). The one entry point the HTTP route (api/export.c) and the benchmark
 * use; the formats live in one file each behind export_int.h.
 *
 * md and txt are the stored text as it is; html, docx and pdf read the text's
 * structure through markdown.h. The name of the document is the file's title and
 * first heading. Everything is built in memory, bounded by a small multiple of the
 * text's size (the PDF writer keeps one paragraph's layout at a time). */
#ifndef INK_EXPORT_H
#define INK_EXPORT_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum { EXPORT_MD, EXPORT_TXT, EXPORT_HTML, EXPORT_DOCX, EXPORT_PDF } export_format_t;

#define EXPORT_FORMATS 5

/* "md", "txt", ... → its format; false for anything else. */
bool export_format_parse(const char *s, export_format_t *out);
const char *export_format_name(export_format_t f);   /* "md" */
const char *export_content_type(export_format_t f);  /* "text/markdown; charset=utf-8" */

/* Writes the file into out (appended). lang: the document's language, a BCP 47 tag
 * the caller has checked (API.md §17 `language`), or NULL for EXPORT_DEFAULT_LANG; the
 * HTML page's <html lang>. Returns 0, or -1 when a library failed (then out holds
 * nothing useful and the failure is logged). */
int export_render(export_format_t f, const char *name, const char *lang, const char *text,
                  size_t text_len, buf_t *out);

/* The language of a document whose own is missing or not a BCP 47 tag: §17's default. */
#define EXPORT_DEFAULT_LANG "en"

/* The Content-Disposition value for a document called name (UTF-8) exported as f:
 * attachment; filename="<ASCII fallback>.<ext>"; filename*=UTF-8''<name>.<ext>
 * (RFC 6266, RFC 5987). Both names are safe as file names: no path separators,
 * quotes, control characters or leading dots, and bounded in length. */
void export_disposition(buf_t *out, const char *name, export_format_t f);

/* A document's file name inside a ZIP of exports (API.md §23): its name made safe as
 * the filename* of export_disposition is, then " (copy)" when copy > 1, then the
 * extension. */
void export_file_name(buf_t *out, const char *name, export_format_t f, int copy);

/* A ZIP archive (API.md §23: POST /documents/bulk action=export) of n documents, each
 * rendered as f and named by export_file_name in the order given (a second of the same
 * name "name (2).ext", and so on), UTF-8 names; langs[i] as export_render's lang (langs
 * may be NULL). 0, or -1 (logged). */
int export_zip(export_format_t f, const char *const *names, const char *const *langs,
               const char *const *texts, size_t n, buf_t *out);

/* Releases the process-wide font and library caches of the PDF writer (at exit,
 * after the last export; exports must not run meanwhile). */
void export_shutdown(void);

#endif
