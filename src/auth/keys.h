/* keys.h — API keys: made at random, shown once, stored only as SHA-256.
 * A key is "ink_" + 64 hex digits (256 random bits). */
#ifndef INK_KEYS_H
#define INK_KEYS_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_PREFIX "ink_"
#define KEY_LEN (4 + 64)

/* Makes a key for the user (created if new). key gets KEY_LEN chars + NUL. */
int keys_create(store_conn_t *c, const char *user, char key[KEY_LEN + 1], int64_t *key_id);

/* Checks an Authorization header value ("Bearer <key>"). Returns STORE_OK with the
 * user, STORE_NOTFOUND for anything malformed, unknown or revoked, or a store error. */
int keys_authenticate(store_conn_t *c, const char *authorization, int64_t *user_id,
                      int64_t *key_id);

#endif
