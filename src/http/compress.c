/* compress.c — §26 content codings. See compress.h.
 *
 * gzip with zlib, br with libbrotlienc, zstd with libzstd, each one-shot into a buffer
 * sized by the library's bound. zlib's and zstd's contexts are kept per thread (a
 * deflate state is ~270 KB to set up: kept, a page costs its compression alone) and
 * freed when the thread ends. */
#include "http/compress.h"

#include <brotli/encode.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

/* ---- negotiation ---------------------------------------------------------------- */

static const char *const coding_names[HTTP_CODING_COUNT] = {"identity", "gzip", "br", "zstd"};

const char *http_coding_name(http_coding_t c)
{
    return (unsigned)c < HTTP_CODING_COUNT ? coding_names[c] : "identity";
}

/* A qvalue (RFC 9110 §12.4.2) as thousandths, or -1 when it is not one. */
static int parse_q(const char *s, size_t n)
{
    if (n == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int v = (s[0] - '0') * 1000;
    if (n == 1)
        return v;
    if (s[1] != '.' || n > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v += (s[i] - '0') * scale;
    }
    return v > 1000 ? -1 : v;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Index: 0..HTTP_CODING_COUNT-1 for the codings, HTTP_CODING_COUNT for "*", -1 other. */
static int coding_of(const char *s, size_t n)
{
    if (n == 1 && s[0] == '*')
        return HTTP_CODING_COUNT;
    if (n == 6 && strncasecmp(s, "x-gzip", 6) == 0)
        return HTTP_CODING_GZIP;
    for (int c = 0; c < HTTP_CODING_COUNT; c++)
        if (strlen(coding_names[c]) == n && strncasecmp(s, coding_names[c], n) == 0)
            return c;
    return -1;
}

http_coding_t http_coding_pick(const char *ae)
{
    if (!ae)
        return HTTP_CODING_IDENTITY;
    int q[HTTP_CODING_COUNT + 1];
    for (int i = 0; i <= HTTP_CODING_COUNT; i++)
        q[i] = -1; /* not named */
    for (const char *p = ae; *p;) {
        const char *end = p + strcspn(p, ",");
        while (p < end && is_ows(*p))
            p++;
        const char *tok = p;
        while (p < end && *p != ';' && !is_ows(*p))
            p++;
        int c = coding_of(tok, (size_t)(p - tok));
        int qv = 1000;
        /* parameters: only q counts; a bad one makes the entry void */
        while (p < end) {
            while (p < end && (is_ows(*p) || *p == ';'))
                p++;
            if (p >= end)
                break;
            const char *pn = p;
            while (p < end && *p != ';')
                p++;
            const char *pe = p;
            while (pe > pn && is_ows(pe[-1]))
                pe--;
            if ((pe - pn) >= 2 && (pn[0] == 'q' || pn[0] == 'Q')) {
                const char *v = pn + 1;
                while (v < pe && is_ows(*v))
                    v++;
                if (v < pe && *v == '=') {
                    v++;
                    while (v < pe && is_ows(*v))
                        v++;
                    qv = parse_q(v, (size_t)(pe - v));
                } else {
                    qv = -1;
                }
            }
        }
        if (c >= 0 && qv >= 0 && q[c] < 0)
            q[c] = qv;
        p = *end ? end + 1 : end;
    }
    int star = q[HTTP_CODING_COUNT];
    int best = HTTP_CODING_IDENTITY, bestq = 0;
    static const http_coding_t order[] = {HTTP_CODING_ZSTD, HTTP_CODING_BR, HTTP_CODING_GZIP};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        int c = order[i];
        int qc = q[c] >= 0 ? q[c] : star >= 0 ? star : 0;
        if (qc > bestq) {
            best = c;
            bestq = qc;
        }
    }
    if (best == HTTP_CODING_IDENTITY)
        return HTTP_CODING_IDENTITY;
    /* identity competes only when named (or by "*"); otherwise it is the fallback */
    int qid = q[HTTP_CODING_IDENTITY] >= 0 ? q[HTTP_CODING_IDENTITY] : star;
    return qid > bestq ? HTTP_CODING_IDENTITY : (http_coding_t)best;
}

bool http_type_compressible(const char *ct)
{
    if (!ct)
        return true; /* the server's default: application/json */
    size_t n = strcspn(ct, ";");
    while (n && is_ows(ct[n - 1]))
        n--;
    if (n >= 5 && strncasecmp(ct, "text/", 5) == 0)
        return true;
    static const char *const exact[] = {"application/json", "application/javascript",
                                        "application/xml", "image/svg+xml"};
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
        if (strlen(exact[i]) == n && strncasecmp(ct, exact[i], n) == 0)
            return true;
    return (n > 5 && strncasecmp(ct + n - 5, "+json", 5) == 0) ||
           (n > 4 && strncasecmp(ct + n - 4, "+xml", 4) == 0);
}

/* ---- ETags ----------------------------------------------------------------------- */

void http_etag_coded(const char *etag, http_coding_t c, char *out, size_t n)
{
    size_t len = strlen(etag);
    if (c == HTTP_CODING_IDENTITY || len < 2 || etag[len - 1] != '"' ||
        !(etag[0] == '"' || strncmp(etag, "W/\"", 3) == 0)) {
        snprintf(out, n, "%s", etag);
        return;
    }
    snprintf(out, n, "%.*s-%s\"", (int)(len - 1), etag, http_coding_name(c));
}

bool http_etag_listed(const char *list, const char *etag)
{
    if (!list || !etag)
        return false;
    if (strncmp(etag, "W/", 2) == 0)
        etag += 2;
    size_t elen = strlen(etag);
    for (const char *p = list; *p;) {
        while (is_ows(*p) || *p == ',')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, ",");
        while (n && is_ows(p[n - 1]))
            n--;
        if (n == 1 && *p == '*')
            return true;
        const char *t = p;
        size_t tn = n;
        if (tn >= 2 && strncmp(t, "W/", 2) == 0)
            t += 2, tn -= 2;
        if (tn == elen && memcmp(t, etag, tn) == 0)
            return true;
        p += strcspn(p, ",");
    }
    return false;
}

/* ---- compression ----------------------------------------------------------------- */

typedef struct {
    z_stream z;
    bool z_ready;
    ZSTD_CCtx *zc;
} coder_t;

static pthread_key_t coder_key;
static pthread_once_t coder_once = PTHREAD_ONCE_INIT;

static void coder_free(void *p)
{
    coder_t *k = p;
    if (k->z_ready)
        deflateEnd(&k->z);
    ZSTD_freeCCtx(k->zc);
    free(k);
}

static void coder_key_make(void)
{
    pthread_key_create(&coder_key, coder_free);
}

static coder_t *coder(void)
{
    pthread_once(&coder_once, coder_key_make);
    coder_t *k = pthread_getspecific(coder_key);
    if (!k) {
        k = xcalloc(1, sizeof(*k));
        pthread_setspecific(coder_key, k);
    }
    return k;
}

static bool deflate_all(z_stream *z, const void *in, size_t len, buf_t *out)
{
    if (len > UINT32_MAX)
        return false;
    size_t bound = deflateBound(z, (uLong)len);
    buf_reserve(out, bound);
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)len;
    z->next_out = (Bytef *)out->data + out->len;
    z->avail_out = (uInt)bound;
    if (deflate(z, Z_FINISH) != Z_STREAM_END)
        return false;
    out->len += bound - z->avail_out;
    return true;
}

static bool gzip_into(coder_t *k, int level, const void *in, size_t len, buf_t *out)
{
    /* 15 + 16: a gzip wrapper; memLevel 8 as zlib's default */
    if (level != HTTP_GZIP_LEVEL) { /* a one-off at another level */
        z_stream once;
        memset(&once, 0, sizeof(once));
        if (deflateInit2(&once, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
            return false;
        bool ok = deflate_all(&once, in, len, out);
        deflateEnd(&once);
        return ok;
    }
    if (!k->z_ready) {
        memset(&k->z, 0, sizeof(k->z));
        if (deflateInit2(&k->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return false;
        k->z_ready = true;
    } else if (deflateReset(&k->z) != Z_OK) {
        return false;
    }
    return deflate_all(&k->z, in, len, out);
}

static bool zstd_into(coder_t *k, int level, const void *in, size_t len, buf_t *out)
{
    if (!k->zc && !(k->zc = ZSTD_createCCtx()))
        return false;
    size_t bound = ZSTD_compressBound(len);
    buf_reserve(out, bound);
    size_t n = ZSTD_compressCCtx(k->zc, out->data + out->len, bound, in, len, level);
    if (ZSTD_isError(n))
        return false;
    out->len += n;
    return true;
}

static bool br_into(int level, const void *in, size_t len, buf_t *out)
{
    size_t n = BrotliEncoderMaxCompressedSize(len);
    if (n == 0)
        return false;
    buf_reserve(out, n);
    /* a window of 2^22 (BROTLI_DEFAULT_WINDOW): answers are far smaller */
    if (!BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, len,
                               (const uint8_t *)in, &n, (uint8_t *)out->data + out->len))
        return false;
    out->len += n;
    return true;
}

static bool compress_at(http_coding_t c, bool best, const void *in, size_t len, buf_t *out)
{
    size_t was = out->len;
    bool ok = false;
    switch (c) {
    case HTTP_CODING_GZIP: ok = gzip_into(coder(), best ? 9 : HTTP_GZIP_LEVEL, in, len, out); break;
    case HTTP_CODING_ZSTD: ok = zstd_into(coder(), best ? 19 : HTTP_ZSTD_LEVEL, in, len, out); break;
    case HTTP_CODING_BR: ok = br_into(best ? 11 : HTTP_BR_LEVEL, in, len, out); break;
    default: break;
    }
    if (!ok)
        out->len = was;
    if (out->data)
        out->data[out->len] = '\0'; /* buf_t's promise */
    return ok;
}

bool http_compress(http_coding_t c, const void *in, size_t len, buf_t *out)
{
    return compress_at(c, false, in, len, out);
}

bool http_compress_best(http_coding_t c, const void *in, size_t len, buf_t *out)
{
    return compress_at(c, true, in, len, out);
}
