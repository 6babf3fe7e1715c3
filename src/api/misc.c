/* misc.c — GET /api/v1/templates, /healthz, /readyz and the media files. */
#include "api/api.h"

#include "gen/templates.h"

#include <string.h>
#include <unistd.h>

void api_templates(app_t *app, http_req_t *r)
{
    buf_reset(&r->resp);
    jw_t w;
    jw_init(&w, &r->resp);
    jw_obj_begin(&w);
    jw_key(&w, "data");
    jw_arr_begin(&w);
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        const template_t *t = template_get(id);
        jw_obj_begin(&w);
        jw_key(&w, "id");
        jw_int(&w, id);
        jw_key(&w, "name");
        jw_str(&w, t->name);
        jw_key(&w, "description");
        jw_str(&w, t->description);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "status");
    jw_int(&w, 200);
    jw_obj_end(&w);
    http_respond(r, 200);
}

void api_healthz(app_t *app, http_req_t *r)
{
    buf_reset(&r->resp);
    buf_puts(&r->resp, "{\"message\":\"alive\",\"status\":200}");
    http_respond(r, 200);
}

void api_readyz(app_t *app, http_req_t *r)
{
    char err[256];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    int rc = c ? c->ops->ping(c) : STORE_UNAVAILABLE;
    buf_reset(&r->resp);
    /* full: below --min-free-mb, and in any case below 1 MiB (no record fits then) */
    uint64_t reserve = (uint64_t)app->cfg->min_free_mb << 20;
    bool ok = rc == STORE_OK;
    bool full = ok && media_space_low(app->media, reserve > (1u << 20) ? reserve : (1u << 20));
    bool draining = http_draining(r->srv); /* SIGTERM: the balancer moves away first */
    buf_printf(&r->resp, "{\"message\":\"%s\",\"storage\":\"%s\"",
               draining ? "Shutting down." : full ? "Storage full." : ok ? "ready" : "Storage unavailable.",
               app->store->ops->name);
    api_readyz_fields(app, ok ? c : NULL, &r->resp);
    bool ready = ok && !full && !draining;
    buf_printf(&r->resp, ",\"status\":%d}", ready ? 200 : 503);
    http_respond(r, ready ? 200 : 503);
}

/* GET /media/<key>.png — no auth: the 128-bit key is the capability. */
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
    int fd;
    uint64_t size;
    if (media_open_file(app->media, key, &fd, &size) != 0) {
        api_not_found(r);
        return;
    }
    http_add_header(r, "ETag", etag);
    http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
    const char *inm = http_header(r, "If-None-Match");
    if (inm && strstr(inm, etag)) {
        close(fd);
        buf_reset(&r->resp);
        r->content_type = "image/png";
        http_respond(r, 304);
        return;
    }
    http_respond_fd(r, 200, fd, size, "image/png");
}
