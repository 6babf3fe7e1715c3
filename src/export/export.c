/* export.c — the format table of export.h, the two formats that are the text as it
 * is (md, txt), and the character cleaning the writers share. */
#include "export/export_int.h"

#include <string.h>

static const struct {
    const char *name, *ctype;
} formats[EXPORT_FORMATS] = {
    [EXPORT_MD] = {"md", "text/markdown; charset=utf-8"},
    [EXPORT_TXT] = {"txt", "text/plain; charset=utf-8"},
    [EXPORT_HTML] = {"html", "text/html; charset=utf-8"},
    [EXPORT_DOCX] = {"docx",
                     "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    [EXPORT_PDF] = {"pdf", "application/pdf"},
};

bool export_format_parse(const char *s, export_format_t *out)
{
    for (int i = 0; i < EXPORT_FORMATS; i++)
        if (strcmp(s, formats[i].name) == 0) {
            *out = (export_format_t)i;
            return true;
        }
    return false;
}

const char *export_format_name(export_format_t f) { return formats[f].name; }
const char *export_content_type(export_format_t f) { return formats[f].ctype; }

/* Length of the control character at s (C0, DEL, or C1 as UTF-8), 0 when none. */
static size_t control_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x20 || s[0] == 0x7f)
        return 1;
    if (s[0] == 0xC2 && n > 1 && s[1] >= 0x80 && s[1] <= 0x9f)
        return 2;
    return 0;
}

static void clean(buf_t *out, const char *s, size_t n, bool xml)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        size_t cl = control_len(u + i, n - i);
        const char *rep = NULL;
        if (cl)
            rep = (u[i] == '\t' || u[i] == '\n' || u[i] == '\r') ? " " : "\xEF\xBF\xBD";
        else if (xml) {
            switch (u[i]) {
            case '&': rep = "&amp;"; break;
            case '<': rep = "&lt;"; break;
            case '>': rep = "&gt;"; break;
            case '"': rep = "&quot;"; break;
            case '\'': rep = "&#39;"; break;
            }
            if (rep)
                cl = 1;
        }
        if (!rep) {
            i++;
            continue;
        }
        buf_append(out, s + start, i - start);
        buf_puts(out, rep);
        i += cl;
        start = i;
    }
    buf_append(out, s + start, n - start);
}

void export_xml_escape(buf_t *out, const char *s, size_t n) { clean(out, s, n, true); }
void export_plain(buf_t *out, const char *s, size_t n) { clean(out, s, n, false); }

int export_render(export_format_t f, const char *name, const char *lang, const char *text,
                  size_t text_len, buf_t *out)
{
    switch (f) {
    case EXPORT_MD:
        buf_puts(out, "# ");
        buf_puts(out, name);
        buf_puts(out, "\n\n");
        buf_append(out, text, text_len);
        return 0;
    case EXPORT_TXT:
        buf_append(out, text, text_len);
        return 0;
    default: break;
    }
    md_doc_t d;
    md_parse(&d, text, text_len);
    int rc = f == EXPORT_HTML ? export_html(name, lang ? lang : EXPORT_DEFAULT_LANG, &d, out)
             : f == EXPORT_DOCX ? export_docx(name, &d, out)
                                : export_pdf(name, &d, out);
    md_free(&d);
    return rc;
}

void export_shutdown(void) { export_pdf_shutdown(); }
