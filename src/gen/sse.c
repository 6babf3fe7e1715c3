/* sse.c — the incremental Server-Sent Events parser (see sse.h). Bytes go into the
 * current line; each line end processes the line as a field; a blank line dispatches
 * the event. State survives between sse_feed calls, so a line, a CRLF pair or a BOM
 * may be split anywhere. */
#include "gen/sse.h"

#include <string.h>

void sse_init(sse_t *p, sse_event_fn on_event, void *arg)
{
    memset(p, 0, sizeof(*p));
    p->on_event = on_event;
    p->arg = arg;
    buf_init(&p->line);
    buf_init(&p->data);
}

void sse_free(sse_t *p)
{
    buf_free(&p->line);
    buf_free(&p->data);
}

void sse_reset(sse_t *p)
{
    buf_reset(&p->line);
    buf_reset(&p->data);
    p->event[0] = '\0';
    p->has_data = p->after_cr = p->started = p->pending = p->too_large = false;
}

/* A blank line: hands the event on (when it has data) and starts the next one. */
static int dispatch(sse_t *p)
{
    int rc = 0;
    if (p->has_data)
        rc = p->on_event(p->arg, p->event[0] ? p->event : "message", buf_cstr(&p->data),
                         p->data.len);
    buf_reset(&p->data);
    p->event[0] = '\0';
    p->has_data = p->pending = false;
    return rc;
}

/* One complete line (without its end). */
static int process_line(sse_t *p, const char *s, size_t n)
{
    if (n == 0)
        return dispatch(p);
    if (s[0] == ':')
        return 0; /* a comment */
    p->pending = true;
    const char *colon = memchr(s, ':', n);
    size_t nlen = colon ? (size_t)(colon - s) : n;
    const char *v = colon ? colon + 1 : s + n;
    size_t vlen = colon ? n - nlen - 1 : 0;
    if (vlen > 0 && *v == ' ')
        v++, vlen--;
    if (nlen == 4 && memcmp(s, "data", 4) == 0) {
        if (p->data.len + vlen + 1 > SSE_MAX_EVENT) {
            p->too_large = true;
            return -1;
        }
        if (p->has_data)
            buf_append(&p->data, "\n", 1);
        buf_append(&p->data, v, vlen);
        p->has_data = true;
    } else if (nlen == 5 && memcmp(s, "event", 5) == 0) {
        if (vlen >= sizeof(p->event))
            vlen = sizeof(p->event) - 1; /* no event type we know is that long */
        memcpy(p->event, v, vlen);
        p->event[vlen] = '\0';
    }
    return 0; /* id, retry and unknown fields: nothing to do */
}

int sse_feed(sse_t *p, const char *s, size_t n)
{
    size_t i = 0;
    if (!p->started) {
        /* a BOM may only come first, and may itself arrive in pieces */
        static const char bom[] = "\xEF\xBB\xBF";
        while (i < n && p->line.len < 3 && s[i] == bom[p->line.len])
            buf_append(&p->line, s + i++, 1);
        if (i == n && p->line.len < 3)
            return 0;
        if (p->line.len == 3)
            buf_reset(&p->line);
        else if (p->line.len > 0) {
            /* not a BOM after all: those bytes start the first line */
            buf_t head = p->line;
            buf_init(&p->line);
            p->started = true;
            int rc = sse_feed(p, head.data, head.len);
            buf_free(&head);
            if (rc != 0)
                return rc;
        }
        p->started = true;
    }
    while (i < n) {
        if (p->after_cr && s[i] == '\n') { /* the LF of a CRLF */
            p->after_cr = false;
            i++;
            continue;
        }
        p->after_cr = false;
        /* the rest of the line, up to its end */
        size_t j = i;
        while (j < n && s[j] != '\n' && s[j] != '\r')
            j++;
        if (p->line.len + (j - i) > SSE_MAX_EVENT) {
            p->too_large = true;
            return -1;
        }
        buf_append(&p->line, s + i, j - i);
        if (j == n)
            break;
        p->after_cr = s[j] == '\r';
        int rc = process_line(p, p->line.data ? p->line.data : "", p->line.len);
        buf_reset(&p->line);
        if (rc != 0)
            return rc;
        i = j + 1;
    }
    return 0;
}

bool sse_finish(const sse_t *p)
{
    return !p->pending && p->line.len == 0;
}
