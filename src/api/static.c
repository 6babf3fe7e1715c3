/* static.c — answers a compiled-in static file (core/assets.h): a strong ETag with
 * If-None-Match (304), the gzip copy when the client accepts gzip, and the caller's
 * Cache-Control. HEAD is answered like GET by the server (no body). */
#include "api/api_int.h"

#include <string.h>
#include <strings.h>

/* True when Accept-Encoding names gzip with a non-zero quality. */
static bool accepts_gzip(const char *ae)
{
    for (const char *s = ae; s && (s = strcasestr(s, "gzip")) != NULL; s += 4) {
        bool start = s == ae || s[-1] == ',' || s[-1] == ' ' || s[-1] == '\t';
        const char *t = s + 4;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!start || (*t && *t != ',' && *t != ';'))
            continue;
        if (*t != ';')
            return true;
        const char *q = strcasestr(t, "q=");
        const char *comma = strchr(t, ',');
        if (!q || (comma && q > comma))
            return true;
        q += 2;
        while (*q == '0' || *q == '.')
            q++;
        return *q >= '1' && *q <= '9'; /* "q=0", "q=0.0", "q=0.000" refuse it */
    }
    return false;
}

void api_asset(http_req_t *r, const asset_t *a, const char *cache_control)
{
    http_add_header(r, "ETag", a->etag);
    http_add_header(r, "Cache-Control", cache_control);
    http_add_header(r, "Vary", "Accept-Encoding");
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    http_set_content_type(r, a->content_type);
    buf_reset(http_resp(r));
    const char *inm = http_header(r, "If-None-Match");
    if (inm && (strstr(inm, a->etag) || strcmp(inm, "*") == 0)) {
        http_respond(r, 304);
        return;
    }
    if (a->gz && accepts_gzip(http_header(r, "Accept-Encoding"))) {
        http_add_header(r, "Content-Encoding", "gzip");
        buf_append(http_resp(r), a->gz, a->gz_len);
    } else {
        buf_append(http_resp(r), a->data, a->len);
    }
    http_respond(r, 200);
}
