/* password.c — see password.h. Argon2id with libsodium's "interactive" costs (2 passes
 * over 64 MiB): about 0.1 s of a CPU per check. */
#include "auth/password.h"

#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

_Static_assert(crypto_pwhash_STRBYTES <= PASSWORD_HASH_MAX, "room for a hash");

#define OPS crypto_pwhash_OPSLIMIT_INTERACTIVE
#define MEM crypto_pwhash_MEMLIMIT_INTERACTIVE

static char dummy[crypto_pwhash_STRBYTES];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc = -1;

static void init_once(void)
{
    if (sodium_init() < 0)
        return;
    unsigned char pw[32];
    randombytes_buf(pw, sizeof(pw));
    if (crypto_pwhash_str(dummy, (const char *)pw, sizeof(pw), OPS, MEM) == 0)
        init_rc = 0;
    sodium_memzero(pw, sizeof(pw));
}

int password_init(void)
{
    pthread_once(&once, init_once);
    return init_rc;
}

pw_status_t password_normalize(const char *s, char **nfc)
{
    *nfc = NULL;
    UErrorCode e = U_ZERO_ERROR;
    const UNormalizer2 *n2 = unorm2_getNFCInstance(&e);
    if (U_FAILURE(e))
        return PW_NOT_UTF8;
    size_t len = strlen(s);
    if (len > 4 * PASSWORD_MAX)
        return PW_LONG; /* NFC of it would be longer than the limit too */
    int32_t ulen = 0;
    u_strFromUTF8(NULL, 0, &ulen, s, (int32_t)len, &e);
    if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e))
        return PW_NOT_UTF8;
    e = U_ZERO_ERROR;
    UChar *u = calloc((size_t)ulen + 1, sizeof(UChar));
    int32_t cap = ulen * 3 + 16;
    UChar *v = calloc((size_t)cap, sizeof(UChar));
    char *out = NULL;
    pw_status_t st = PW_NOT_UTF8;
    if (!u || !v)
        goto done;
    u_strFromUTF8(u, ulen + 1, NULL, s, (int32_t)len, &e);
    if (U_FAILURE(e))
        goto done;
    int32_t vlen = unorm2_normalize(n2, u, ulen, v, cap, &e);
    if (U_FAILURE(e))
        goto done;
    int32_t blen = 0;
    u_strToUTF8(NULL, 0, &blen, v, vlen, &e);
    if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e))
        goto done;
    e = U_ZERO_ERROR;
    out = malloc((size_t)blen + 1);
    if (!out)
        goto done;
    u_strToUTF8(out, blen + 1, NULL, v, vlen, &e);
    if (U_FAILURE(e))
        goto done;
    st = blen < PASSWORD_MIN ? PW_SHORT : blen > PASSWORD_MAX ? PW_LONG : PW_OK;
done:
    if (u) {
        sodium_memzero(u, ((size_t)ulen + 1) * sizeof(UChar));
        free(u);
    }
    if (v) {
        sodium_memzero(v, (size_t)cap * sizeof(UChar));
        free(v);
    }
    if (st == PW_OK)
        *nfc = out;
    else
        password_free(out);
    return st;
}

int password_hash(const char *nfc, char out[PASSWORD_HASH_MAX])
{
    if (password_init() != 0)
        return -1;
    return crypto_pwhash_str(out, nfc, strlen(nfc), OPS, MEM) == 0 ? 0 : -1;
}

bool password_verify(const char *hash, const char *nfc)
{
    if (password_init() != 0)
        return false;
    bool real = hash && strlen(hash) < crypto_pwhash_STRBYTES;
    bool ok = crypto_pwhash_str_verify(real ? hash : dummy, nfc, strlen(nfc)) == 0;
    return real && ok;
}

void password_free(char *p)
{
    if (!p)
        return;
    sodium_memzero(p, strlen(p));
    free(p);
}
