/* log.c — one line per call: "time level message". */
#include "core/log.h"

#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int log_level = LOG_INFO;

static const char *const names[] = {"error", "warn", "info", "debug"};

int log_level_parse(const char *s)
{
    for (int i = 0; i < (int)ARRAY_LEN(names); i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

void log_write(int level, const char *fmt, ...)
{
    char ts[32];
    fmt_timestamp(now_us(), ts);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "%s %s ", ts, names[level]);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    buf_putc(&b, '\n');
    fwrite(b.data, 1, b.len, stderr); /* one write per line: lines from threads don't mix */
    buf_free(&b);
}
