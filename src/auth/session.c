/* session.c — see session.h. */
#include "auth/session.h"

#include <sodium.h>
#include <string.h>

void session_token(char out[SESSION_TOKEN_LEN + 1])
{
    unsigned char b[32];
    random_bytes(b, sizeof(b));
    sodium_bin2base64(out, SESSION_TOKEN_LEN + 1, b, sizeof(b),
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(b, sizeof(b));
}

bool session_token_well_formed(const char *s)
{
    if (!s || strlen(s) != SESSION_TOKEN_LEN)
        return false;
    for (const char *p = s; *p; p++) {
        char ch = *p;
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_'))
            return false;
    }
    return true;
}

int session_start(store_conn_t *c, int64_t user_id, int64_t key_id, key_scope_t scope,
                  const char *user_agent, int64_t max_us, int64_t idle_us,
                  char id[SESSION_TOKEN_LEN + 1], char csrf[SESSION_TOKEN_LEN + 1],
                  int64_t *session_id)
{
    session_token(id);
    session_token(csrf);
    char hash[65];
    sha256_hex(id, SESSION_TOKEN_LEN, hash);
    int64_t now = store_clock_us();
    char ua[256];
    /* the user agent as a list shows it: printable ASCII, bounded */
    size_t n = 0;
    for (const char *p = user_agent ? user_agent : ""; *p && n + 1 < sizeof(ua); p++)
        ua[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    ua[n] = 0;
    session_new_t s = {.user_id = user_id, .key_id = key_id, .hash_hex = hash, .csrf = csrf,
                       .user_agent = n ? ua : NULL, .scope = scope, .now_us = now,
                       .expires_us = now + max_us, .idle_before_us = now - idle_us};
    return store_session_insert(c, &s, session_id);
}

int session_authenticate(store_conn_t *c, const char *token, bool with_usage, int64_t idle_us,
                         session_auth_t *out)
{
    if (!session_token_well_formed(token))
        return STORE_NOTFOUND;
    char hash[65], period[8];
    sha256_hex(token, SESSION_TOKEN_LEN, hash);
    int64_t now = store_clock_us();
    if (with_usage)
        store_period(now, period);
    int rc = store_session_auth(c, hash, with_usage ? period : NULL, out);
    if (rc != STORE_OK)
        return rc;
    if (out->expires_us <= now || out->last_seen_us + idle_us <= now ||
        (out->k.expires_us > 0 && out->k.expires_us <= now)) {
        store_session_end(c, 0, out->session_id, 0, NULL); /* gone: forget it now */
        return STORE_NOTFOUND;
    }
    if (now - out->last_seen_us >= SESSION_TOUCH_US)
        store_session_touch(c, out->session_id, now); /* best effort: a failure only ages it */
    return STORE_OK;
}

int session_end_token(store_conn_t *c, const char *token, int64_t *user_id)
{
    *user_id = 0;
    session_auth_t s;
    int rc = session_authenticate(c, token, false, INT64_MAX / 2, &s);
    if (rc != STORE_OK)
        return rc;
    *user_id = s.k.user_id;
    return store_session_end(c, 0, s.session_id, 0, NULL);
}
