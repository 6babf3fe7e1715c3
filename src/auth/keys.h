/* keys.h — API keys: made at random, shown once, stored only as SHA-256.
 * A key is "ink_" + 64 hex digits (256 random bits). Each has a scope (write, read,
 * admin) and may expire (API.md §19). */
#ifndef INK_KEYS_H
#define INK_KEYS_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_PREFIX "ink_"
#define KEY_LEN (4 + 64)
#define KEY_SHOWN_PREFIX 10 /* characters of a key kept and shown: "ink_3fa9c2" */

/* Makes a key for user_id. key gets KEY_LEN chars + NUL. expires_us 0 = never; name
 * NULL or empty for none. */
int keys_issue(store_conn_t *c, int64_t user_id, key_scope_t scope, int64_t expires_us,
               const char *name, char key[KEY_LEN + 1], int64_t *key_id);

/* Makes a key for the user named (created if new, with the quotas given: -1 = none). */
int keys_create(store_conn_t *c, const char *user, int64_t quota_words, int64_t quota_images,
                key_scope_t scope, int64_t expires_us, char key[KEY_LEN + 1], int64_t *key_id);

/* Checks an Authorization header value ("Bearer <key>"). Returns STORE_OK with the key
 * (and, with_usage, its user's quotas and usage of the current period, store_clock_us;
 * else quotas -1 and usage 0), STORE_NOTFOUND for anything malformed, unknown, revoked
 * or expired, or a store error. */
int keys_authenticate(store_conn_t *c, const char *authorization, bool with_usage,
                      key_auth_t *out);

/* An RFC 3339 time (2027-01-01T00:00:00Z, with a fraction or an offset; t, z and a
 * space are taken too) or a date alone (midnight UTC): true with *us set. */
bool keys_parse_time(const char *s, int64_t *us);

#endif
