/* password.h — people's passwords (API.md §21): NFC-normalised, 8 to 1024 bytes, stored
 * only as Argon2id hashes in libsodium's string form (crypto_pwhash_str: the salt and
 * the costs travel with the hash). Hashing and checking are CPU- and memory-heavy: the
 * server runs them on a bounded pool off its HTTP threads (api/session_api.c). */
#ifndef INK_PASSWORD_H
#define INK_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

#define PASSWORD_MIN 8
#define PASSWORD_MAX 1024
#define PASSWORD_HASH_MAX 128 /* crypto_pwhash_STRBYTES */

/* Starts libsodium and makes the dummy hash that unknown names are checked against
 * (so they cost a check like any other). 0, or -1 when libsodium cannot start. */
int password_init(void);

typedef enum { PW_OK, PW_NOT_UTF8, PW_SHORT, PW_LONG } pw_status_t;

/* The NFC form of s (malloc'd, into *nfc) and whether it is a valid password. *nfc is
 * NULL unless PW_OK. */
pw_status_t password_normalize(const char *s, char **nfc);

/* Argon2id of a normalised password into out. 0, or -1 (out of memory). */
int password_hash(const char *nfc, char out[PASSWORD_HASH_MAX]);

/* True when nfc matches hash. hash NULL (no such user, no password): the dummy hash is
 * checked instead, and false is answered after the same work. */
bool password_verify(const char *hash, const char *nfc);

/* Wipes and frees a password. */
void password_free(char *p);

#endif
