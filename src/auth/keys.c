/* keys.c — see keys.h. Only SHA-256 digests are stored and looked up (through a
 * unique index), so the time a lookup takes depends on the digest of the guess,
 * never on how many characters of a real key it shares; the backends then confirm
 * the stored digest with a constant-time comparison (CRYPTO_memcmp). */
#include "auth/keys.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int keys_create(store_conn_t *c, const char *user, char key[KEY_LEN + 1], int64_t *key_id)
{
    int64_t uid;
    int rc = c->ops->user_ensure(c, user, &uid);
    if (rc != STORE_OK)
        return rc;
    memcpy(key, KEY_PREFIX, 4);
    random_hex(key + 4, 32);
    char hash[65], prefix[16];
    sha256_hex(key, KEY_LEN, hash);
    snprintf(prefix, sizeof(prefix), "%.10s", key);
    return c->ops->key_insert(c, uid, hash, prefix, key_id);
}

static bool key_well_formed(const char *k, size_t n)
{
    if (n != KEY_LEN || memcmp(k, KEY_PREFIX, 4) != 0)
        return false;
    for (size_t i = 4; i < n; i++) {
        char ch = k[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return false;
    }
    return true;
}

int keys_authenticate(store_conn_t *c, const char *authorization, int64_t *user_id,
                      int64_t *key_id)
{
    if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
        return STORE_NOTFOUND;
    const char *k = authorization + 7;
    while (*k == ' ')
        k++;
    size_t n = strlen(k);
    while (n && (k[n - 1] == ' ' || k[n - 1] == '\t'))
        n--;
    if (!key_well_formed(k, n))
        return STORE_NOTFOUND;
    char hash[65];
    sha256_hex(k, n, hash);
    return c->ops->key_auth(c, hash, user_id, key_id);
}
