/* oidc.h — single sign-on with OpenID Connect (API.md §21): the authorization code flow
 * with PKCE (S256), state and nonce, as a client of one issuer.
 *
 * The issuer's discovery document (/.well-known/openid-configuration) and its keys
 * (jwks_uri) are fetched with libcurl on first use and kept; the keys are fetched again
 * when an ID token names a key id they lack (the issuer rotated its keys). A sign-in's
 * state, nonce and PKCE verifier are kept in the store (oidc_flows), not in the process,
 * so any process sharing the store takes the callback; the browser that began it is
 * bound to it by a random cookie value of which only a SHA-256 is kept. The ID token's
 * signature is checked with cjose against the issuer's published key of its `kid`, with
 * the algorithm the token names only when it is an asymmetric one (RS, PS, ES) the
 * discovery document advertises (never `none`, never HS*); then iss, aud, azp, exp, iat
 * (60 s of skew) and nonce.
 *
 * Nothing secret (the client secret, a code, a token, a verifier) is logged or put in
 * a failure's text.
 *
 * The calls to the issuer (oidc_discover, oidc_finish_exchange) touch no store: the API
 * runs them on the sign-in pool while the request is suspended (api/oidc_api.c), so a
 * slow issuer holds no HTTP thread. */
#ifndef INK_OIDC_H
#define INK_OIDC_H

#include "core/config.h"
#include "store/store.h"

#include <stddef.h>

typedef struct oidc oidc_t;

/* The cookie value binding a sign-in to its browser (base64url, 256 bits). */
#define OIDC_BROWSER_LEN 43
/* How long a begun sign-in may take, seconds (the cookie's Max-Age too). */
#define OIDC_FLOW_SECONDS 600

/* The client of cfg's --oidc-* settings. NULL with *err "" when single sign-on is not
 * configured; NULL with a message in err when it is configured wrongly (an issuer that is
 * not https, but on a loopback address for tests; no client id). */
oidc_t *oidc_new(const cfg_t *cfg, char *err, size_t errlen);
/* Its redirect_uri is <public_url>/auth/oidc/callback: set once, before the server
 * serves (the public URL names the port bound). */
void oidc_set_public_url(oidc_t *o, const char *public_url);
void oidc_free(oidc_t *o);

/* The issuer's host, as the sign-in page names it ("Sign in with <host>"). */
const char *oidc_display_name(const oidc_t *o);

/* Fetches the issuer's discovery document unless it is kept already (the only call to
 * the issuer a sign-in's start makes, the first time): 0, or -1 with why. */
int oidc_discover(oidc_t *o, char *why, size_t whylen);

/* Begins a sign-in (oidc_discover first, or it is called here): keeps a new flow in the store; *url (malloc'd) is the issuer's
 * authorization address to send the browser to, browser the value of its binding
 * cookie. 0, or -1 with why (for the person) in why. */
int oidc_begin(oidc_t *o, store_conn_t *c, char **url, char browser[OIDC_BROWSER_LEN + 1],
               char *why, size_t whylen);

/* Who the issuer signed in. */
typedef struct {
    const char *iss, *sub; /* the link to a user */
    const char *name;      /* the name claim (cfg --oidc-name-claim), or NULL */
} oidc_identity_t;

/* What the callback's checks leave for the exchange (strings in the caller's arena). */
typedef struct {
    const char *code, *verifier, *nonce;
} oidc_pending_t;

/* Ends a sign-in, first part (the store, no issuer): from the callback's parameters
 * (state, code, and the issuer's error and error_description, any of them NULL) and the
 * binding cookie's value (or NULL), takes the flow away (single use) and checks it
 * belongs to this browser. 0 with p, or -1 with why (for the person; the issuer's own
 * description included as it is: the caller escapes it). */
int oidc_finish_take(oidc_t *o, store_conn_t *c, const char *state, const char *code,
                     const char *error, const char *error_description, const char *browser,
                     arena_t *a, oidc_pending_t *p, char *why, size_t whylen);

/* Second part (the issuer, no store): exchanges p's code and checks the ID token. 0 with
 * id (strings in a), or -1 with why. */
int oidc_finish_exchange(oidc_t *o, const oidc_pending_t *p, arena_t *a, oidc_identity_t *id,
                         char *why, size_t whylen);

/* The issuer the users' links name (the configured one). */
const char *oidc_issuer(const oidc_t *o);

#endif
