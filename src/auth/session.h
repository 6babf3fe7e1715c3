/* session.h — signed-in sessions (API.md §21). A session's id is 256 random bits in
 * base64url (43 characters), given to the browser once in a cookie and stored only as
 * its SHA-256, like a key; each session has its own CSRF token (the same length, stored
 * as it is: it is no credential alone). Every lookup reads the store, so a session ended
 * by one process is refused by every other at once, as a revoked key is. */
#ifndef INK_SESSION_H
#define INK_SESSION_H

#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

#define SESSION_TOKEN_LEN 43
/* last_seen is written at most once per this (the idle expiry is exact to within it) */
#define SESSION_TOUCH_US 60000000LL

/* A new random token (base64url, 256 bits) into out. */
void session_token(char out[SESSION_TOKEN_LEN + 1]);

/* True when s has a token's shape. */
bool session_token_well_formed(const char *s);

/* Starts a session for user_id (key_id: the key it is made from, or 0) with scope:
 * id and csrf get the new session's id and CSRF token. max_us and idle_us: the
 * session's lifetime and idle limit (expired sessions are removed on the way). */
int session_start(store_conn_t *c, int64_t user_id, int64_t key_id, key_scope_t scope,
                  const char *user_agent, int64_t max_us, int64_t idle_us,
                  char id[SESSION_TOKEN_LEN + 1], char csrf[SESSION_TOKEN_LEN + 1],
                  int64_t *session_id);

/* Finds the session of a cookie's value (with its user's quotas and usage of this
 * month when with_usage): STORE_OK, or STORE_NOTFOUND when malformed, unknown, ended,
 * idle longer than idle_us, past its end, or made from a key that is revoked or expired.
 * Moves last_seen on when it is older than SESSION_TOUCH_US. */
int session_authenticate(store_conn_t *c, const char *token, bool with_usage, int64_t idle_us,
                         session_auth_t *out);

/* Ends the session of a cookie's value, if it is one (*user_id its user, or 0). */
int session_end_token(store_conn_t *c, const char *token, int64_t *user_id);

#endif
