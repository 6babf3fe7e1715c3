/* misc.c — /healthz, /readyz and the media files. */
#include "api/api_int.h"

#include "media/thumb.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void api_healthz(app_t *app, http_req_t *r)
{
    buf_reset(http_resp(r));
    buf_puts(http_resp(r), "{\"message\":\"alive\",\"status\":200}");
    http_respond(r, 200);
}

void api_readyz(app_t *app, http_req_t *r)
{
    char err[256];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    int rc = c ? store_ping(c) : STORE_UNAVAILABLE;
    buf_reset(http_resp(r));
    /* full: below --min-free-mb, and in any case below 1 MiB (no record fits then) */
    uint64_t reserve = (uint64_t)app->cfg->min_free_mb << 20;
    bool ok = rc == STORE_OK;
    bool full = ok && media_space_low(app->media, reserve > (1u << 20) ? reserve : (1u << 20));
    bool draining = http_draining(http_req_server(r)); /* SIGTERM: the balancer moves away first */
    buf_printf(http_resp(r), "{\"message\":\"%s\",\"storage\":\"%s\"",
               draining ? "Shutting down." : full ? "Storage full." : ok ? "ready" : "Storage unavailable.",
               store_backend_name(app->store));
    api_readyz_fields(app, ok ? c : NULL, http_resp(r));
    bool ready = ok && !full && !draining;
    buf_printf(http_resp(r), ",\"status\":%d}", ready ? 200 : 503);
    http_respond(r, ready ? 200 : 503);
}

/* The whole file behind fd (closed) into out: 0, or -1. */
static int read_all(int fd, uint64_t size, buf_t *out)
{
    buf_reserve(out, (size_t)size);
    for (;;) {
        buf_reserve(out, 65536);
        ssize_t k = read(fd, out->data + out->len, 65536);
        if (k < 0) {
            close(fd);
            return -1;
        }
        if (k == 0)
            break;
        out->len += (size_t)k;
    }
    close(fd);
    return 0;
}

/* ?w=N: the thumbnail (media/thumb.h), from the cache or made now; the caller checked
 * that the picture exists (fd), so a deleted picture's thumbnail is never served. */
static void media_thumb(http_req_t *r, const char *key, int w, int fd, uint64_t size,
                        const char *etag)
{
    buf_reset(http_resp(r));
    const char *inm = http_header(r, "If-None-Match");
    bool hit = !(inm && strstr(inm, etag)) && thumb_cache_get(key, w, http_resp(r));
    if (hit || (inm && strstr(inm, etag))) {
        close(fd);
        http_set_content_type(r, "image/png");
        http_add_header(r, "ETag", etag);
        http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
        http_respond(r, hit ? 200 : 304);
        return;
    }
    buf_t png;
    buf_init(&png);
    int rc = read_all(fd, size, &png);
    if (rc == 0)
        rc = thumb_make(png.data, png.len, w, http_resp(r));
    buf_free(&png);
    if (rc != 0) {
        buf_reset(http_resp(r));
        api_error(r, 500, "The thumbnail could not be made.");
        return;
    }
    thumb_cache_put(key, w, http_resp(r)->data, http_resp(r)->len);
    http_set_content_type(r, "image/png");
    http_add_header(r, "ETag", etag);
    http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
    http_respond(r, 200);
}

/* GET /media/<key>.png — no auth: the 128-bit key is the capability. With ?w=N
 * (THUMB_MIN..THUMB_MAX) a square thumbnail N pixels a side; any other w is a 422. */
void api_media(app_t *app, http_req_t *r, const char *file)
{
    size_t n = strlen(file);
    if (n != MEDIA_KEY_LEN + 4 || strcmp(file + MEDIA_KEY_LEN, ".png") != 0 ||
        !media_key_valid(file, MEDIA_KEY_LEN)) {
        api_not_found(r);
        return;
    }
    char key[MEDIA_KEY_LEN + 1];
    memcpy(key, file, MEDIA_KEY_LEN);
    key[MEDIA_KEY_LEN] = '\0';
    char etag[MEDIA_KEY_LEN + 3];
    etag[0] = '"';
    memcpy(etag + 1, key, MEDIA_KEY_LEN);
    etag[MEDIA_KEY_LEN + 1] = '"';
    etag[MEDIA_KEY_LEN + 2] = '\0';
    kvlist_t q;
    api_query(r, &q);
    const kv_t *wq = kv_get(&q, "w");
    int w = 0;
    if (wq && (wq->status != KV_OK || !thumb_parse_width(wq->val, &w))) {
        verrs_t v;
        verrs_init(&v, http_arena(r));
        verrs_add(&v, "w", "The w must be a whole number of pixels from %d to %d.", THUMB_MIN,
                  THUMB_MAX);
        api_validation_error(r, &v);
        return;
    }
    if (!w && cfg_switch_value(app->cfg->media_redirect) == 1 && media_can_presign(app->media)) {
        /* §25: straight from the store, for a short while; the object's absence is the
         * store's 404 (a deleted record's picture is removed with it) */
        buf_t url;
        buf_init(&url);
        if (media_presign(app->media, key, 900, &url) == 0) {
            http_add_header(r, "Location", buf_cstr(&url));
            http_add_header(r, "Cache-Control", "private, max-age=60");
            buf_free(&url);
            http_respond(r, 302);
            return;
        }
        buf_free(&url);
    }
    int fd;
    uint64_t size;
    int mrc = media_open_file(app->media, key, &fd, &size);
    if (mrc == MEDIA_UNAVAILABLE) {
        http_add_header(r, "Retry-After", "1");
        api_error(r, 503, "The picture store is unavailable.");
        return;
    }
    if (mrc != 0) {
        api_not_found(r);
        return;
    }
    if (w) {
        char tetag[MEDIA_KEY_LEN + 16];
        snprintf(tetag, sizeof(tetag), "\"%s-w%d\"", key, w);
        media_thumb(r, key, w, fd, size, tetag);
        return;
    }
    http_add_header(r, "ETag", etag);
    http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
    const char *inm = http_header(r, "If-None-Match");
    if (inm && strstr(inm, etag)) {
        close(fd);
        buf_reset(http_resp(r));
        http_set_content_type(r, "image/png");
        http_respond(r, 304);
        return;
    }
    http_respond_fd(r, 200, fd, size, "image/png");
}
