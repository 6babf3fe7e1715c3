/* test_s3sign.c — SigV4 (media/s3sign.h) against AWS's published examples: the
 * presigned GET of "Authenticating Requests: Using Query Parameters" (examplebucket,
 * test.txt, 2013-05-24, 86400 s), the header-signed GET with a Range of "Signature
 * Calculations for the Authorization Header" (its canonical request's hash and its
 * signature), and the signing key of "Examples of how to derive a signing key". */
#include "media/s3sign.h"
#include "test.h"

#include <time.h>

#define AK "AKIAIOSFODNN7EXAMPLE"
#define SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

static void test_presign(void)
{
    struct tm tm = {.tm_year = 113, .tm_mon = 4, .tm_mday = 24};
    time_t t = timegm(&tm);
    buf_t u;
    buf_init(&u);
    s3_presign(&u, "https://examplebucket.s3.amazonaws.com", "examplebucket.s3.amazonaws.com",
               "/test.txt", "us-east-1", AK, SK, t, 86400);
    CHECK_STR(buf_cstr(&u),
              "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
              "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
              "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
              "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
    buf_free(&u);
}

static void test_header_get(void)
{
    const char *canon = "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                        "x-amz-content-sha256:"
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                        "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    char h[65], sig[65];
    s3_sha256_hex(canon, strlen(canon), h);
    CHECK_STR(h, "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
    s3_signature(SK, "20130524T000000Z", "us-east-1", "s3", canon, sig);
    CHECK_STR(sig, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    s3_sha256_hex("", 0, h);
    CHECK_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_signing_key(void)
{
    unsigned char k[32];
    s3_signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam", k);
    char h[65];
    for (int i = 0; i < 32; i++)
        snprintf(h + 2 * i, 3, "%02x", k[i]);
    CHECK_STR(h, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

static void test_encode(void)
{
    buf_t b;
    buf_init(&b);
    s3_uri_encode(&b, "a/b c~d*e+f", true);
    CHECK_STR(buf_cstr(&b), "a/b%20c~d%2Ae%2Bf");
    buf_reset(&b);
    s3_uri_encode(&b, "a/b", false);
    CHECK_STR(buf_cstr(&b), "a%2Fb");
    buf_free(&b);
}

int main(void)
{
    test_presign();
    test_header_get();
    test_signing_key();
    test_encode();
    TEST_DONE();
}
