/* log.c — one line per call: "time level message".
 *
 * Every line is made safe before it is written, whatever a caller passed in: control
 * bytes (CR, LF, NUL, any C0, DEL) are written as \xHH, so that no
 * client byte can end a line or forge another; and anything shaped like an API key
 * ("ink_" and what follows it, or a run of 40 or more hex digits — a key without its
 * prefix) is replaced by "[redacted]", so that a key a client put where a path or a
 * message is logged never reaches the log (API.md §2). */
#include "core/log.h"

#include "core/util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int log_level = LOG_INFO;

static const char *const names[] = {"error", "warn", "info", "debug"};

/* A run of this many hex digits is taken for a key (media keys are 32). */
#define KEY_HEX_RUN 40

int log_level_parse(const char *s)
{
    for (int i = 0; i < (int)ARRAY_LEN(names); i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static bool key_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_' || c == '-';
}

static bool hex_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void log_escape(buf_t *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (i + 4 <= n && strncasecmp(s + i, "ink_", 4) == 0) {
            size_t j = i + 4;
            while (j < n && key_char((unsigned char)s[j]))
                j++;
            buf_puts(out, "ink_[redacted]");
            i = j;
            continue;
        }
        if (hex_char(c) && (i == 0 || !hex_char((unsigned char)s[i - 1]))) {
            size_t j = i;
            while (j < n && hex_char((unsigned char)s[j]))
                j++;
            if (j - i >= KEY_HEX_RUN) {
                buf_puts(out, "[redacted]");
                i = j;
                continue;
            }
        }
        if (c < 0x20 || c == 0x7f) {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            buf_append(out, e, 4);
        } else {
            buf_putc(out, (char)c);
        }
        i++;
    }
}

void log_write(int level, const char *fmt, ...)
{
    char ts[32];
    fmt_timestamp(now_us(), ts);
    buf_t msg, b;
    buf_init(&msg);
    buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    buf_printf(&b, "%s %s ", ts, names[level]);
    log_escape(&b, msg.data ? msg.data : "", msg.len);
    buf_putc(&b, '\n');
    fwrite(b.data, 1, b.len, stderr); /* one write per line: lines from threads don't mix */
    buf_free(&msg);
    buf_free(&b);
}
