/* sign.c — webhook secrets and Standard Webhooks 1.0 signatures (HMAC-SHA256 with
 * OpenSSL). A secret never leaves this file but as the answer that hands it out. */
#include "webhooks/webhooks.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wh_secret_new(char out[WH_SECRET_LEN + 1])
{
    unsigned char key[24];
    random_bytes(key, sizeof(key));
    memcpy(out, "whsec_", 6);
    EVP_EncodeBlock((unsigned char *)out + 6, key, sizeof(key)); /* 32 chars + NUL */
    OPENSSL_cleanse(key, sizeof(key));
}

bool wh_sign(const char *secret, const char *msg_id, int64_t timestamp, const char *body,
             size_t len, buf_t *out)
{
    if (!secret || strncmp(secret, "whsec_", 6) != 0)
        return false;
    const char *b64 = secret + 6;
    size_t bl = strlen(b64);
    if (bl == 0 || bl % 4 || bl > 128)
        return false;
    unsigned char key[128];
    int kl = EVP_DecodeBlock(key, (const unsigned char *)b64, (int)bl);
    if (kl < 0)
        return false;
    /* EVP_DecodeBlock counts the padding's bytes */
    for (size_t i = bl; i > 0 && b64[i - 1] == '='; i--)
        kl--;
    char head[64];
    int hl = snprintf(head, sizeof(head), "%s.%lld.", msg_id, (long long)timestamp);
    unsigned char *data = malloc((size_t)hl + len + 1);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int ml = 0;
    bool ok = data != NULL;
    if (ok) {
        memcpy(data, head, (size_t)hl);
        memcpy(data + hl, body, len);
        ok = HMAC(EVP_sha256(), key, kl, data, (size_t)hl + len, mac, &ml) != NULL;
        free(data);
    }
    OPENSSL_cleanse(key, sizeof(key));
    if (!ok)
        return false;
    char enc[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    EVP_EncodeBlock((unsigned char *)enc, mac, (int)ml);
    buf_printf(out, "v1,%s", enc);
    return true;
}
