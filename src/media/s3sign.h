/* s3sign.h — AWS Signature Version 4 with OpenSSL's HMAC-SHA256, for the URLs that
 * --media-redirect hands out (presigned GETs: the signature in the query string).
 * The requests inkwell itself sends are signed by libcurl (CURLOPT_AWS_SIGV4); this is
 * the one signature libcurl does not make. Checked against AWS's published examples
 * (tests/unit/test_s3sign.c). */
#ifndef INK_MEDIA_S3SIGN_H
#define INK_MEDIA_S3SIGN_H

#include "core/util.h"

#include <time.h>

/* SHA-256 of data as 64 lowercase hex digits + NUL. */
void s3_sha256_hex(const void *data, size_t n, char out[65]);
/* The signing key: HMAC chain of "AWS4"+secret over date (YYYYMMDD), region, service
 * and "aws4_request". */
void s3_signing_key(const char *secret, const char *date8, const char *region,
                    const char *service, unsigned char out[32]);
/* The signature (64 hex digits) of a canonical request made at amz_date
 * (YYYYMMDDTHHMMSSZ) in region for service: the string to sign is
 * "AWS4-HMAC-SHA256\n" amz_date "\n" scope "\n" hex(SHA-256(canonical)). */
void s3_signature(const char *secret, const char *amz_date, const char *region,
                  const char *service, const char *canonical, char out[65]);
/* RFC 3986 percent-encoding as SigV4 wants it (unreserved kept; '/' kept when
 * keep_slash). */
void s3_uri_encode(buf_t *out, const char *s, bool keep_slash);

/* A presigned GET: base is "scheme://host[:port]" as the client will reach it, host
 * the Host header it will send (host[:port]), path the object's path (already encoded,
 * starting with '/'). Appends base + path + "?X-Amz-…&X-Amz-Signature=…" to out.
 * now: the signing time; expires: seconds (1..604800). */
void s3_presign(buf_t *out, const char *base, const char *host, const char *path,
                const char *region, const char *access_key, const char *secret, time_t now,
                int expires);

#endif
