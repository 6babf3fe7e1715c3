/* s3sign.c — SigV4 for presigned URLs (s3sign.h). */
#include "media/s3sign.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

static void hex(const unsigned char *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = '\0';
}

void s3_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(data, n, md);
    hex(md, sizeof(md), out);
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

void s3_signing_key(const char *secret, const char *date8, const char *region,
                    const char *service, unsigned char out[32])
{
    buf_t k;
    buf_init(&k);
    buf_printf(&k, "AWS4%s", secret);
    unsigned char a[32], b[32];
    hmac(k.data, k.len, date8, a);
    hmac(a, 32, region, b);
    hmac(b, 32, service, a);
    hmac(a, 32, "aws4_request", out);
    OPENSSL_cleanse(k.data, k.len);
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(b, sizeof(b));
    buf_free(&k);
}

void s3_signature(const char *secret, const char *amz_date, const char *region,
                  const char *service, const char *canonical, char out[65])
{
    char date8[9];
    snprintf(date8, sizeof(date8), "%.8s", amz_date);
    char creq[65];
    s3_sha256_hex(canonical, strlen(canonical), creq);
    buf_t sts;
    buf_init(&sts);
    buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", amz_date, date8, region,
               service, creq);
    unsigned char key[32], sig[32];
    s3_signing_key(secret, date8, region, service, key);
    hmac(key, sizeof(key), buf_cstr(&sts), sig);
    OPENSSL_cleanse(key, sizeof(key));
    hex(sig, sizeof(sig), out);
    buf_free(&sts);
}

void s3_uri_encode(buf_t *out, const char *s, bool keep_slash)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
            buf_putc(out, (char)c);
        else
            buf_printf(out, "%%%02X", c);
    }
}

void s3_presign(buf_t *out, const char *base, const char *host, const char *path,
                const char *region, const char *access_key, const char *secret, time_t now,
                int expires)
{
    struct tm tm;
    gmtime_r(&now, &tm);
    char amz_date[17];
    strftime(amz_date, sizeof(amz_date), "%Y%m%dT%H%M%SZ", &tm);
    buf_t cred, query, canon;
    buf_init(&cred);
    buf_init(&query);
    buf_init(&canon);
    buf_printf(&cred, "%s/%.8s/%s/s3/aws4_request", access_key, amz_date, region);
    /* the parameters in their sorted order (X-Amz-A… C… D… E… S…) */
    buf_puts(&query, "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=");
    s3_uri_encode(&query, buf_cstr(&cred), false);
    buf_printf(&query, "&X-Amz-Date=%s&X-Amz-Expires=%d&X-Amz-SignedHeaders=host", amz_date,
               expires);
    buf_printf(&canon, "GET\n%s\n%s\nhost:%s\n\nhost\nUNSIGNED-PAYLOAD", path, buf_cstr(&query),
               host);
    char sig[65];
    s3_signature(secret, amz_date, region, "s3", buf_cstr(&canon), sig);
    buf_printf(out, "%s%s?%s&X-Amz-Signature=%s", base, path, buf_cstr(&query), sig);
    buf_free(&cred);
    buf_free(&query);
    buf_free(&canon);
}
