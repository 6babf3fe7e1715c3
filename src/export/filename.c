/* filename.c — the Content-Disposition of an export (RFC 6266 with the RFC 5987
 * filename* parameter). The document's name becomes two file names:
 *   - filename*: the name in UTF-8, percent-encoded outside RFC 5987's attr-chars,
 *     with characters that no file system or browser takes in a file name (control
 *     characters, / \ : * ? " < > |) replaced by '_', cut to NAME_MAX_UTF8 bytes on a
 *     character boundary;
 *   - filename: the ASCII fallback for old clients: the same, with every non-ASCII
 *     character as '_' and '%' (which some clients decode) too, cut to
 *     NAME_MAX_ASCII bytes; quoted, so it holds no '"' or '\'.
 * Leading dots and spaces and trailing dots and spaces go (no hidden or odd files);
 * an empty result is "document". The extension is the format's. */
#include "export/export.h"

#include <string.h>

#define NAME_MAX_UTF8 200
#define NAME_MAX_ASCII 100

static bool reserved(unsigned char c)
{
    return c < 0x20 || c == 0x7f || strchr("/\\:*?\"<>|", c) != NULL;
}

/* Length of the UTF-8 sequence that starts with c (1 for a stray byte). */
static size_t seq_len(unsigned char c)
{
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

/* The safe base name into out (NUL-terminated); ascii: the fallback form. */
static void safe_name(char *out, size_t cap, const char *name, bool ascii)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t w = 0;
    for (size_t i = 0; s[i];) {
        size_t n = seq_len(s[i]);
        for (size_t k = 1; k < n; k++)
            if (!s[i + k]) /* a cut sequence: stop */
                n = k;
        bool c1 = n == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0; /* C1 control */
        const char *put = (const char *)s + i;
        size_t plen = n;
        if ((n == 1 && reserved(s[i])) || c1 || (ascii && (n > 1 || s[i] == '%' || s[i] >= 0x80)))
            put = "_", plen = 1;
        if (w + plen >= cap)
            break;
        memcpy(out + w, put, plen);
        w += plen;
        i += n;
    }
    out[w] = '\0';
    size_t lead = strspn(out, ". ");
    memmove(out, out + lead, w - lead + 1);
    w -= lead;
    while (w > 0 && (out[w - 1] == '.' || out[w - 1] == ' '))
        out[--w] = '\0';
    if (w == 0)
        strcpy(out, "document");
}

void export_disposition(buf_t *out, const char *name, export_format_t f)
{
    char ascii[NAME_MAX_ASCII + 1], utf8[NAME_MAX_UTF8 + 1];
    safe_name(ascii, sizeof(ascii), name, true);
    safe_name(utf8, sizeof(utf8), name, false);
    const char *ext = export_format_name(f);
    buf_printf(out, "attachment; filename=\"%s.%s\"; filename*=UTF-8''", ascii, ext);
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)utf8; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("!#$&+-.^_`|~", *p))
            buf_putc(out, (char)*p);
        else {
            buf_putc(out, '%');
            buf_putc(out, hex[*p >> 4]);
            buf_putc(out, hex[*p & 15]);
        }
    }
    buf_printf(out, ".%s", ext);
}

void export_file_name(buf_t *out, const char *name, export_format_t f, int copy)
{
    char utf8[NAME_MAX_UTF8 + 1];
    safe_name(utf8, sizeof(utf8), name, false);
    if (copy > 1)
        buf_printf(out, "%s (%d).%s", utf8, copy, export_format_name(f));
    else
        buf_printf(out, "%s.%s", utf8, export_format_name(f));
}
