/* media_s3.c — the S3 store (media_int.h): pictures as objects PREFIX<key>.png of a
 * bucket of any S3-compatible service.
 *
 * Requests are signed by libcurl (CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3"; the body's
 * SHA-256 goes in x-amz-content-sha256, which S3 requires and this libcurl does not
 * add). Addressing is virtual-host (https://BUCKET.host/KEY) unless path_style
 * (https://host/BUCKET/KEY). Connections: a bounded pool of S3_POOL easy handles, each
 * keeping its connection alive between requests, sharing one DNS and connection cache
 * (a request waits for a free handle: at most S3_POOL requests to S3 at once). A
 * connection error or a 5xx answer is retried with backoff (S3_TRIES attempts, 0.1,
 * 0.2, 0.4 s apart with jitter); a 4xx is not. Secrets never reach a log: errors name
 * the method, the object and the status, not the URL's query or the credentials. */
#include "media/media_int.h"
#include "media/s3sign.h"

#include "core/log.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S3_POOL 16
#define S3_TRIES 4
#define S3_CONNECT_TIMEOUT_MS 3000L
#define S3_TIMEOUT_S 60L
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct {
    char *bucket, *prefix; /* prefix: "" or ending in '/' */
    char *base;            /* scheme://host[:port] requests go to (vhost: the bucket's) */
    char *host;            /* the Host header: host[:port] of base */
    char *path0;           /* "/BUCKET" (path style) or "" */
    char *region, *access, *secret, *sigv4;
    CURL *h[S3_POOL];
    bool busy[S3_POOL];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    CURLSH *share;
    pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
} s3_t;

#define S(m) ((s3_t *)(m)->impl)

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *arg)
{
    (void)h, (void)a;
    pthread_mutex_lock(&((s3_t *)arg)->share_mu[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *arg)
{
    (void)h;
    pthread_mutex_unlock(&((s3_t *)arg)->share_mu[d]);
}

static int borrow(s3_t *s)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        for (int i = 0; i < S3_POOL; i++)
            if (!s->busy[i]) {
                s->busy[i] = true;
                if (!s->h[i])
                    s->h[i] = curl_easy_init();
                pthread_mutex_unlock(&s->mu);
                return i;
            }
        pthread_cond_wait(&s->cv, &s->mu);
    }
}

static void give_back(s3_t *s, int i)
{
    pthread_mutex_lock(&s->mu);
    s->busy[i] = false;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    buf_append(arg, p, size * n);
    return size * n;
}

static void sleep_backoff(int attempt)
{
    long ms = 100L << attempt; /* 100, 200, 400 */
    ms += rand() % (ms / 2 + 1);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One request with its retries. path: after path0 ("/<object>" or "?query"). body for
 * PUT. *status: the HTTP status, 0 when no answer came. Returns the curl result of the
 * last attempt. */
static CURLcode s3_request(s3_t *s, const char *method, const char *path, const void *body,
                           size_t n, buf_t *resp, long *status)
{
    buf_t url;
    buf_init(&url);
    buf_printf(&url, "%s%s%s", s->base, s->path0, path);
    char sha[65], hdr[100];
    if (body)
        s3_sha256_hex(body, n, sha);
    else
        strcpy(sha, EMPTY_SHA256);
    snprintf(hdr, sizeof(hdr), "x-amz-content-sha256: %s", sha);
    struct curl_slist *hl = curl_slist_append(NULL, hdr);
    hl = curl_slist_append(hl, "Expect:");
    if (body)
        hl = curl_slist_append(hl, "Content-Type: image/png");
    CURLcode rc = CURLE_OK;
    *status = 0;
    int hi = borrow(s);
    CURL *h = s->h[hi];
    for (int attempt = 0; attempt < S3_TRIES; attempt++) {
        if (attempt)
            sleep_backoff(attempt - 1);
        buf_reset(resp);
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, buf_cstr(&url));
        curl_easy_setopt(h, CURLOPT_SHARE, s->share);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, S3_CONNECT_TIMEOUT_MS);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, S3_TIMEOUT_S);
        curl_easy_setopt(h, CURLOPT_AWS_SIGV4, s->sigv4);
        curl_easy_setopt(h, CURLOPT_USERNAME, s->access);
        curl_easy_setopt(h, CURLOPT_PASSWORD, s->secret);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
        if (strcmp(method, "PUT") == 0) {
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
        } else if (strcmp(method, "DELETE") == 0) {
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
        }
        rc = curl_easy_perform(h);
        *status = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        bool retry = rc != CURLE_OK ? true : (*status >= 500 || *status == 429);
        if (!retry)
            break;
        log_debug("media: s3 %s %s: %s (attempt %d of %d)", method, path,
                  rc != CURLE_OK ? curl_easy_strerror(rc) : "server error", attempt + 1, S3_TRIES);
    }
    give_back(s, hi);
    curl_slist_free_all(hl);
    buf_free(&url);
    return rc;
}

static void object_path(s3_t *s, buf_t *p, const char *key)
{
    buf_putc(p, '/');
    s3_uri_encode(p, s->prefix, true);
    buf_printf(p, "%s.png", key);
}

static void log_failure(const char *what, const char *key, CURLcode rc, long status)
{
    if (rc != CURLE_OK)
        log_error("media: s3 %s of %s failed: %s", what, key, curl_easy_strerror(rc));
    else
        log_error("media: s3 %s of %s failed: HTTP %ld", what, key, status);
}

static int s3_put(media_t *m, const char *key, const void *data, size_t n)
{
    s3_t *s = S(m);
    buf_t p, resp;
    buf_init(&p);
    buf_init(&resp);
    object_path(s, &p, key);
    long status;
    CURLcode rc = s3_request(s, "PUT", buf_cstr(&p), data ? data : "", n, &resp, &status);
    int out = rc == CURLE_OK && status >= 200 && status < 300 ? 0 : -1;
    if (out != 0)
        log_failure("upload", key, rc, status);
    buf_free(&p);
    buf_free(&resp);
    return out;
}

static int s3_get(media_t *m, const char *key, buf_t *out)
{
    s3_t *s = S(m);
    buf_t p;
    buf_init(&p);
    object_path(s, &p, key);
    long status;
    size_t was = out->len;
    buf_t resp;
    buf_init(&resp);
    CURLcode rc = s3_request(s, "GET", buf_cstr(&p), NULL, 0, &resp, &status);
    buf_free(&p);
    int res;
    if (rc == CURLE_OK && status == 200) {
        buf_append(out, resp.data, resp.len);
        res = 0;
    } else if (rc == CURLE_OK && status == 404) {
        res = MEDIA_MISSING;
    } else {
        log_failure("download", key, rc, status);
        out->len = was;
        res = MEDIA_UNAVAILABLE;
    }
    buf_free(&resp);
    return res;
}

static int s3_remove(media_t *m, const char *key)
{
    s3_t *s = S(m);
    buf_t p, resp;
    buf_init(&p);
    buf_init(&resp);
    object_path(s, &p, key);
    long status;
    CURLcode rc = s3_request(s, "DELETE", buf_cstr(&p), NULL, 0, &resp, &status);
    int out = rc == CURLE_OK && ((status >= 200 && status < 300) || status == 404) ? 0 : -1;
    if (out != 0)
        log_failure("delete", key, rc, status);
    buf_free(&p);
    buf_free(&resp);
    return out;
}

/* ---- listing (ListObjectsV2) ------------------------------------------------------ */

/* The text of the first <tag>…</tag> in [p, end), XML entities undone, into out. */
static bool xml_text(const char *p, const char *end, const char *tag, buf_t *out)
{
    char open[64], close[64];
    snprintf(open, sizeof(open), "<%s>", tag);
    snprintf(close, sizeof(close), "</%s>", tag);
    const char *a = memmem(p, (size_t)(end - p), open, strlen(open));
    if (!a)
        return false;
    a += strlen(open);
    const char *b = memmem(a, (size_t)(end - a), close, strlen(close));
    if (!b)
        return false;
    buf_reset(out);
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    while (a < b) {
        bool done = false;
        if (*a == '&')
            for (size_t i = 0; i < sizeof(ents) / sizeof(*ents); i++) {
                size_t l = strlen(ents[i].ent);
                if ((size_t)(b - a) >= l && memcmp(a, ents[i].ent, l) == 0) {
                    buf_putc(out, ents[i].c);
                    a += l;
                    done = true;
                    break;
                }
            }
        if (!done)
            buf_putc(out, *a++);
    }
    return true;
}

/* "2026-11-29T03:18:10.000Z" → time_t; 0 when unreadable. */
static time_t iso_time(const char *s)
{
    struct tm tm = {0};
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec) != 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return timegm(&tm);
}

static int s3_list(media_t *m, media_each_fn fn, void *arg)
{
    s3_t *s = S(m);
    buf_t q, resp, token, key, when;
    buf_init(&q);
    buf_init(&resp);
    buf_init(&token);
    buf_init(&key);
    buf_init(&when);
    int out = 0;
    bool more = true, stop = false;
    size_t plen = strlen(s->prefix);
    while (more && !stop) {
        buf_reset(&q);
        buf_puts(&q, s->path0[0] ? "?list-type=2&prefix=" : "/?list-type=2&prefix=");
        s3_uri_encode(&q, s->prefix, false);
        if (token.len) {
            buf_puts(&q, "&continuation-token=");
            s3_uri_encode(&q, buf_cstr(&token), false);
        }
        long status;
        CURLcode rc = s3_request(s, "GET", buf_cstr(&q), NULL, 0, &resp, &status);
        if (rc != CURLE_OK || status != 200) {
            log_failure("listing", s->prefix[0] ? s->prefix : "(bucket)", rc, status);
            out = -1;
            break;
        }
        const char *p = resp.data, *end = resp.data + resp.len;
        for (;;) {
            const char *c = memmem(p, (size_t)(end - p), "<Contents>", 10);
            if (!c)
                break;
            const char *ce = memmem(c, (size_t)(end - c), "</Contents>", 11);
            if (!ce)
                break;
            if (xml_text(c, ce, "Key", &key) && xml_text(c, ce, "LastModified", &when) &&
                key.len == plen + MEDIA_KEY_LEN + 4 && memcmp(key.data, s->prefix, plen) == 0 &&
                media_key_valid(key.data + plen, MEDIA_KEY_LEN) &&
                strcmp(key.data + plen + MEDIA_KEY_LEN, ".png") == 0) {
                char k[MEDIA_KEY_LEN + 1];
                memcpy(k, key.data + plen, MEDIA_KEY_LEN);
                k[MEDIA_KEY_LEN] = '\0';
                if (fn(arg, k, iso_time(buf_cstr(&when))) != 0) {
                    stop = true;
                    break;
                }
            }
            p = ce + 11;
        }
        buf_t trunc;
        buf_init(&trunc);
        more = xml_text(resp.data, end, "IsTruncated", &trunc) &&
               strcmp(buf_cstr(&trunc), "true") == 0 &&
               xml_text(resp.data, end, "NextContinuationToken", &token) && token.len;
        buf_free(&trunc);
    }
    buf_free(&q);
    buf_free(&resp);
    buf_free(&token);
    buf_free(&key);
    buf_free(&when);
    return out;
}

static int s3_presign_key(media_t *m, const char *key, int ttl_s, time_t now, buf_t *url)
{
    s3_t *s = S(m);
    buf_t p;
    buf_init(&p);
    buf_puts(&p, s->path0);
    object_path(s, &p, key);
    s3_presign(url, s->base, s->host, buf_cstr(&p), s->region, s->access, s->secret, now, ttl_s);
    buf_free(&p);
    return 0;
}

static void s3_close(media_t *m)
{
    s3_t *s = S(m);
    for (int i = 0; i < S3_POOL; i++)
        if (s->h[i])
            curl_easy_cleanup(s->h[i]);
    curl_share_cleanup(s->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&s->share_mu[i]);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->bucket);
    free(s->prefix);
    free(s->base);
    free(s->host);
    free(s->path0);
    free(s->region);
    free(s->access);
    if (s->secret) {
        memset(s->secret, 0, strlen(s->secret));
        free(s->secret);
    }
    free(s->sigv4);
    free(s);
}

static const media_ops_t s3_ops = {
    .name = "s3",
    .put = s3_put,
    .get = s3_get,
    .remove = s3_remove,
    .list = s3_list,
    .close = s3_close,
    .presign = s3_presign_key,
};

/* A bucket name as S3 allows it (3..63 of a-z 0-9 . -), so it can be a host label. */
static bool bucket_valid(const char *b, size_t n)
{
    if (n < 3 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '.' ||
              b[i] == '-'))
            return false;
    return true;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

media_t *media_s3_open(const media_conf_t *c, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init_once);
    const char *spec = c->store + 5, *slash = strchr(spec, '/');
    size_t blen = slash ? (size_t)(slash - spec) : strlen(spec);
    if (!bucket_valid(spec, blen)) {
        snprintf(err, errlen, "media store: s3://BUCKET/PREFIX needs a bucket name of 3 to 63 "
                              "lowercase letters, digits, dots and dashes");
        return NULL;
    }
    if (!c->access_key || !c->access_key[0] || !c->secret_key || !c->secret_key[0]) {
        snprintf(err, errlen, "media store %s: no S3 credentials (AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY, or --s3-access-key and --s3-secret-key)",
                 c->store);
        return NULL;
    }
    const char *region = c->region && c->region[0] ? c->region : "us-east-1";
    for (const char *r = region; *r; r++)
        if (!((*r >= 'a' && *r <= 'z') || (*r >= '0' && *r <= '9') || *r == '-')) {
            snprintf(err, errlen, "s3-region must be a region name such as us-east-1");
            return NULL;
        }
    /* the endpoint: scheme://host[:port], nothing after */
    buf_t ep;
    buf_init(&ep);
    if (c->endpoint && c->endpoint[0])
        buf_puts(&ep, c->endpoint);
    else
        buf_printf(&ep, "https://s3.%s.amazonaws.com", region);
    while (ep.len && ep.data[ep.len - 1] == '/')
        ep.data[--ep.len] = '\0';
    const char *e = buf_cstr(&ep), *hostp;
    if (strncmp(e, "http://", 7) == 0)
        hostp = e + 7;
    else if (strncmp(e, "https://", 8) == 0)
        hostp = e + 8;
    else
        hostp = NULL;
    if (!hostp || !*hostp || strpbrk(hostp, "/?#@ ")) {
        snprintf(err, errlen, "s3-endpoint must be http://HOST[:PORT] or https://HOST[:PORT]");
        buf_free(&ep);
        return NULL;
    }
    s3_t *s = xcalloc(1, sizeof(*s));
    s->bucket = xstrndup(spec, blen);
    buf_t pre;
    buf_init(&pre);
    if (slash && slash[1]) {
        buf_puts(&pre, slash + 1);
        if (pre.data[pre.len - 1] != '/')
            buf_putc(&pre, '/');
    }
    s->prefix = buf_steal(&pre);
    buf_t b;
    buf_init(&b);
    if (c->path_style) {
        s->base = xstrdup(e);
        s->host = xstrdup(hostp);
        buf_printf(&b, "/%s", s->bucket);
        s->path0 = buf_steal(&b);
    } else {
        buf_printf(&b, "%.*s%s.%s", (int)(hostp - e), e, s->bucket, hostp);
        s->base = buf_steal(&b);
        buf_printf(&b, "%s.%s", s->bucket, hostp);
        s->host = buf_steal(&b);
        s->path0 = xstrdup("");
    }
    buf_free(&ep);
    s->region = xstrdup(region);
    s->access = xstrdup(c->access_key);
    s->secret = xstrdup(c->secret_key);
    buf_printf(&b, "aws:amz:%s:s3", region);
    s->sigv4 = buf_steal(&b);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&s->share_mu[i], NULL);
    s->share = curl_share_init();
    curl_share_setopt(s->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(s->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(s->share, CURLSHOPT_USERDATA, s);
    curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    media_t *m = xcalloc(1, sizeof(*m));
    m->ops = &s3_ops;
    m->impl = s;
    /* one listing of a prefix that holds nothing (so never truncated): a wrong bucket
     * or credentials stop the start; an unreachable service only warns (the pictures
     * wait for it, creates fail 502) */
    buf_t q, resp, probe;
    buf_init(&q);
    buf_init(&resp);
    buf_init(&probe);
    buf_printf(&probe, "%s.inkwell-start-probe/", s->prefix);
    buf_puts(&q, s->path0[0] ? "?list-type=2&prefix=" : "/?list-type=2&prefix=");
    s3_uri_encode(&q, buf_cstr(&probe), false);
    buf_free(&probe);
    long status;
    CURLcode rc = s3_request(s, "GET", buf_cstr(&q), NULL, 0, &resp, &status);
    buf_free(&q);
    buf_free(&resp);
    if (rc == CURLE_OK && status >= 400 && status < 500) {
        snprintf(err, errlen, "media store s3://%s/%s: the bucket answered HTTP %ld (check the "
                              "bucket, the region and the credentials)",
                 s->bucket, s->prefix, status);
        media_close(m);
        return NULL;
    }
    if (rc != CURLE_OK || status != 200)
        log_warn("media: s3://%s/%s cannot be reached yet (%s): pictures wait for it",
                 s->bucket, s->prefix,
                 rc != CURLE_OK ? curl_easy_strerror(rc) : "server error");
    log_info("media: pictures in s3://%s/%s at %s (%s addressing)", s->bucket, s->prefix, s->base,
             c->path_style ? "path-style" : "virtual-host");
    return m;
}
