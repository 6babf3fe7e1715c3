/* log.h — levelled log lines on standard error.
 * The macros test the level before evaluating their arguments. Never log a key,
 * an Authorization header or a provider secret. */
#ifndef INK_LOG_H
#define INK_LOG_H

#include "core/util.h"

#include <stddef.h>

enum { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

extern int log_level;

/* Parses "error", "warn", "info", "debug"; returns -1 when unknown. */
int log_level_parse(const char *s);
/* Writes one line; the message is passed through log_escape. */
void log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) made safe for a log line: control bytes as \xHH, anything
 * shaped like an API key as "[redacted]". */
void log_escape(buf_t *out, const char *s, size_t n);

#define LOG_AT(lvl, ...)                                                                           \
    do {                                                                                           \
        if ((lvl) <= log_level)                                                                    \
            log_write((lvl), __VA_ARGS__);                                                         \
    } while (0)
#define log_error(...) LOG_AT(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) LOG_AT(LOG_WARN, __VA_ARGS__)
#define log_info(...) LOG_AT(LOG_INFO, __VA_ARGS__)
#define log_debug(...) LOG_AT(LOG_DEBUG, __VA_ARGS__)

#endif
