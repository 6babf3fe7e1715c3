/* static.c — answers a compiled-in static file (core/assets.h): a strong ETag with
 * If-None-Match (304), the caller's Cache-Control, and a copy in the coding the client
 * prefers (§26: gzip, br, zstd). The gzip copies are made at build (tools/embed); the br
 * and zstd ones once, at the codings' highest levels (about a second of one core for
 * the whole app), by a thread started by the first static answer; until they are
 * there, a client is sent the gzip copy or the file as it is (a copy that is not smaller
 * is not kept). HEAD is answered like GET by the server (no body). */
#include "api/api_int.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const unsigned char *data; /* NULL: none (the file is sent as it is) */
    size_t len;
} copy_t;

static copy_t *copies; /* assets_count x HTTP_CODING_COUNT */
static pthread_once_t copies_once = PTHREAD_ONCE_INIT;
static atomic_bool copies_ready; /* br and zstd made */

static void *copies_main(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < assets_count; i++) {
        const asset_t *a = &assets[i];
        if (a->len < HTTP_COMPRESS_MIN)
            continue;
        copy_t *c = copies + (size_t)i * HTTP_CODING_COUNT;
        static const http_coding_t made[] = {HTTP_CODING_BR, HTTP_CODING_ZSTD};
        for (size_t k = 0; k < sizeof(made) / sizeof(made[0]); k++) {
            buf_t b;
            buf_init(&b);
            if (http_compress_best(made[k], a->data, a->len, &b) && b.len < a->len) {
                size_t n = b.len;
                c[made[k]] = (copy_t){(const unsigned char *)buf_steal(&b), n};
            } else {
                buf_free(&b);
            }
        }
    }
    atomic_store(&copies_ready, true);
    return NULL;
}

static void copies_make(void)
{
    copies = xcalloc(assets_count * HTTP_CODING_COUNT + 1, sizeof(*copies));
    for (unsigned i = 0; i < assets_count; i++) {
        const asset_t *a = &assets[i];
        if (a->len >= HTTP_COMPRESS_MIN && a->gz && a->gz_len < a->len)
            copies[(size_t)i * HTTP_CODING_COUNT + HTTP_CODING_GZIP] = (copy_t){a->gz, a->gz_len};
    }
    if (!thread_start_detached("ink-copies", copies_main, NULL))
        copies_main(NULL); /* (logged) made here, once */
}

void api_asset(http_req_t *r, const asset_t *a, const char *cache_control)
{
    pthread_once(&copies_once, copies_make);
    http_coding_t want = http_req_coding(r);
    const copy_t *copy = NULL;
    if (want != HTTP_CODING_IDENTITY && a >= assets && a < assets + assets_count &&
        (want == HTTP_CODING_GZIP || atomic_load(&copies_ready))) {
        copy = copies + (size_t)(a - assets) * HTTP_CODING_COUNT + want;
        if (!copy->data)
            copy = NULL;
    }
    if (!copy) /* the file as it is: one body per tag, so not compressed on the way */
        http_set_no_compress(r);
    http_add_header(r, "ETag", a->etag);
    http_add_header(r, "Cache-Control", cache_control);
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    http_set_content_type(r, a->content_type);
    buf_reset(http_resp(r));
    char tag[160];
    http_etag_coded(a->etag, copy ? want : HTTP_CODING_IDENTITY, tag, sizeof(tag));
    if (http_etag_listed(http_header(r, "If-None-Match"), tag)) {
        http_respond(r, 304); /* the server writes the coded ETag (server_coding.c) */
        return;
    }
    if (copy) {
        buf_append(http_resp(r), copy->data, copy->len);
        http_set_content_coding(r, want);
    } else {
        buf_append(http_resp(r), a->data, a->len);
    }
    http_respond(r, 200);
}
