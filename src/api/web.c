/* web.c — serves the web app (web/, compiled in by tools/embed): GET / answers
 * /index.html, any other compiled-in path its file. No auth (the app signs in with an
 * API key and calls /api/v1 itself). Every answer carries the app's security headers:
 * a strict Content-Security-Policy (only the app's own scripts, styles, images and API;
 * no inline script, no framing), nosniff and no Referer. Files are revalidated on every
 * load (no-cache + the strong ETag: a 304 costs no body), so a new binary's app is
 * picked up at once. */
#include "api/api_int.h"

#include <string.h>

#define WEB_CSP                                                                          \
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "   \
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "         \
    "form-action 'self'; frame-ancestors 'none'"

const asset_t *api_web_asset(const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    return asset_find(path);
}

void api_web(app_t *app, http_req_t *r)
{
    const asset_t *a = api_web_asset(http_path(r));
    if (!a) {
        api_not_found(r);
        return;
    }
    http_add_header(r, "Content-Security-Policy", WEB_CSP);
    http_add_header(r, "X-Frame-Options", "DENY");
    http_add_header(r, "Referrer-Policy", "no-referrer");
    http_add_header(r, "Cross-Origin-Opener-Policy", "same-origin");
    api_asset(r, a, "no-cache");
}
