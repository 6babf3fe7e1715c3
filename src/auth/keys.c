/* keys.c — see keys.h. Only SHA-256 digests are stored and looked up (through a
 * unique index), so the time a lookup takes depends on the digest of the guess,
 * never on how many characters of a real key it shares; the backends then confirm
 * the stored digest with a constant-time comparison (CRYPTO_memcmp). The lookup also
 * reads the key's scope and expiry, and for a request that generates its user's quotas
 * and usage of this month, so a create's quota check costs no second round trip (the
 * other requests read the key alone: one index lookup). */
#include "auth/keys.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int keys_issue(store_conn_t *c, int64_t user_id, key_scope_t scope, int64_t expires_us,
               const char *name, char key[KEY_LEN + 1], int64_t *key_id)
{
    memcpy(key, KEY_PREFIX, 4);
    random_hex(key + 4, 32);
    char hash[65], prefix[16];
    sha256_hex(key, KEY_LEN, hash);
    snprintf(prefix, sizeof(prefix), "%.*s", KEY_SHOWN_PREFIX, key);
    return store_key_insert(c, user_id, hash, prefix, scope, expires_us, name, key_id);
}

int keys_create(store_conn_t *c, const char *user, int64_t quota_words, int64_t quota_images,
                key_scope_t scope, int64_t expires_us, char key[KEY_LEN + 1], int64_t *key_id)
{
    arena_t a;
    arena_init(&a);
    user_info_t u;
    int rc = store_user_get(c, 0, user, &a, &u);
    if (rc == STORE_NOTFOUND) {
        rc = store_user_create(c, user, quota_words, quota_images, &a, &u);
        if (rc == STORE_CONFLICT) /* made by another process in between */
            rc = store_user_get(c, 0, user, &a, &u);
    }
    if (rc == STORE_OK && scope == SCOPE_ADMIN && !u.admin) {
        user_patch_t p = {.role = "admin"}; /* only an admin holds an admin key (§21) */
        rc = store_user_update(c, u.id, &p, &a, &u);
    }
    if (rc == STORE_OK)
        rc = keys_issue(c, u.id, scope, expires_us, NULL, key, key_id);
    arena_free(&a);
    return rc;
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

int keys_authenticate(store_conn_t *c, const char *authorization, bool with_usage,
                      key_auth_t *out)
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
    char hash[65], period[8];
    sha256_hex(k, n, hash);
    int64_t now = store_clock_us();
    if (with_usage)
        store_period(now, period);
    int rc = store_key_auth(c, hash, with_usage ? period : NULL, out);
    if (rc == STORE_OK && out->expires_us > 0 && out->expires_us <= now)
        rc = STORE_NOTFOUND; /* expired: refused as a revoked key is */
    return rc;
}

/* n digits at *p; advances it. */
static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

bool keys_parse_time(const char *s, int64_t *us)
{
    if (!s)
        return false;
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0, off = 0;
    int64_t frac_us = 0;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d))
        return false;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1])
        return false;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return false;
    if (*p) {
        if (*p != 'T' && *p != 't' && *p != ' ')
            return false;
        p++;
        if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
            !digits(&p, 2, &sec) || h > 23 || mi > 59 || sec > 60)
            return false;
        if (sec == 60)
            sec = 59; /* a leap second: the second before it */
        if (*p == '.') {
            p++;
            int64_t scale = 100000;
            if (!isdigit((unsigned char)*p))
                return false;
            for (; isdigit((unsigned char)*p); p++, scale /= 10)
                frac_us += scale > 0 ? (*p - '0') * scale : 0;
        }
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om;
            if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59)
                return false;
            off = sign * (oh * 3600 + om * 60);
        } else {
            return false; /* a time needs its offset */
        }
        if (*p)
            return false;
    }
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_sec = sec};
    int64_t t = (int64_t)timegm(&tm) - off;
    if (t <= 0 || y > 9999)
        return false;
    *us = t * 1000000 + frac_us;
    return true;
}
