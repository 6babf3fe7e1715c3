/* oidc.c — see oidc.h. */
#include "auth/oidc.h"

#include "core/log.h"
#include "core/util.h"

#include <cjose/cjose.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SKEW_S 60
#define FETCH_TIMEOUT_MS 10000L
#define MAX_DOC (1024 * 1024)

struct oidc {
    char *issuer, *client_id, *secret, *redirect_uri, *name_claim, *host;
    pthread_mutex_t lock;
    /* discovered (under lock; NULL until fetched) */
    char *authz_ep, *token_ep, *jwks_uri;
    json_t *algs;  /* id_token_signing_alg_values_supported, or NULL (RS256) */
    json_t *jwks;  /* the issuer's keys, or NULL */
};

/* ---- setup ---- */

static bool loopback_http(const char *url)
{
    static const char *ok[] = {"http://127.0.0.1:", "http://127.0.0.1/", "http://localhost:",
                               "http://localhost/", "http://[::1]:", "http://[::1]/"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
        if (strncmp(url, ok[i], strlen(ok[i])) == 0)
            return true;
    return false;
}

oidc_t *oidc_new(const cfg_t *cfg, char *err, size_t errlen)
{
    err[0] = 0;
    if (!cfg->oidc_issuer[0])
        return NULL;
    const char *iss = cfg->oidc_issuer;
    if (strncmp(iss, "https://", 8) != 0 && !loopback_http(iss)) {
        snprintf(err, errlen, "oidc-issuer must be an https:// URL");
        return NULL;
    }
    if (!cfg->oidc_client_id[0]) {
        snprintf(err, errlen, "oidc-issuer needs oidc-client-id");
        return NULL;
    }
    oidc_t *o = calloc(1, sizeof(*o));
    o->issuer = strdup(iss);
    o->client_id = strdup(cfg->oidc_client_id);
    o->secret = strdup(cfg->oidc_client_secret);
    o->name_claim = strdup(cfg->oidc_name_claim[0] ? cfg->oidc_name_claim : "preferred_username");
    const char *h = strstr(iss, "://") + 3;
    size_t hl = strcspn(h, "/:");
    if (*h == '[')
        hl = strcspn(h, "]") + 1;
    o->host = strndup(h, hl);
    pthread_mutex_init(&o->lock, NULL);
    return o;
}

void oidc_set_public_url(oidc_t *o, const char *public_url)
{
    size_t n = strlen(public_url) + 32;
    free(o->redirect_uri);
    o->redirect_uri = malloc(n);
    snprintf(o->redirect_uri, n, "%s/auth/oidc/callback", public_url);
}

void oidc_free(oidc_t *o)
{
    if (!o)
        return;
    free(o->issuer);
    free(o->client_id);
    if (o->secret)
        sodium_memzero(o->secret, strlen(o->secret));
    free(o->secret);
    free(o->redirect_uri);
    free(o->name_claim);
    free(o->host);
    free(o->authz_ep);
    free(o->token_ep);
    free(o->jwks_uri);
    json_decref(o->algs);
    json_decref(o->jwks);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

const char *oidc_display_name(const oidc_t *o)
{
    return o->host;
}

const char *oidc_issuer(const oidc_t *o)
{
    return o->issuer;
}

/* ---- HTTP with the issuer ---- */

typedef struct {
    buf_t body;
    bool too_big;
} fetch_t;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    fetch_t *f = arg;
    size_t len = size * n;
    if (f->body.len + len > MAX_DOC) {
        f->too_big = true;
        return 0;
    }
    buf_append(&f->body, p, len);
    return len;
}

/* GET url (form: a POST of that body, with the client's Basic credentials), its JSON
 * answer into *out: 0, or -1 with why. status: the HTTP status. */
static int fetch_json(const oidc_t *o, const char *url, const char *form, json_t **out,
                      long *status, char *why, size_t whylen)
{
    *out = NULL;
    *status = 0;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(why, whylen, "The identity provider could not be reached.");
        return -1;
    }
    fetch_t f = {0};
    buf_init(&f.body);
    struct curl_slist *hl = curl_slist_append(NULL, "Accept: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, loopback_http(o->issuer) ? "http,https" : "https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, FETCH_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, FETCH_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &f);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    char *user = NULL, *pass = NULL;
    if (form) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, form);
        if (o->secret[0]) { /* client_secret_basic: both form-encoded first (RFC 6749 2.3.1) */
            user = curl_easy_escape(h, o->client_id, 0);
            pass = curl_easy_escape(h, o->secret, 0);
            curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
            curl_easy_setopt(h, CURLOPT_USERNAME, user);
            curl_easy_setopt(h, CURLOPT_PASSWORD, pass);
        }
    }
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hl);
    if (pass)
        sodium_memzero(pass, strlen(pass));
    curl_free(user);
    curl_free(pass);
    curl_easy_cleanup(h);
    int ret = -1;
    if (rc != CURLE_OK) {
        log_warn("oidc: %s: %s", form ? "token endpoint" : "issuer", curl_easy_strerror(rc));
        snprintf(why, whylen, "The identity provider could not be reached.");
    } else {
        *out = json_loadb(f.body.data ? f.body.data : "", f.body.len, 0, NULL);
        if (!json_is_object(*out)) {
            json_decref(*out);
            *out = NULL;
            log_warn("oidc: %s answered %ld without a JSON object", form ? "token endpoint"
                                                                          : "issuer", *status);
            snprintf(why, whylen, "The identity provider's answer was not understood.");
        } else {
            ret = 0;
        }
    }
    if (f.body.data)
        sodium_memzero(f.body.data, f.body.len); /* a token answer holds secrets */
    buf_free(&f.body);
    return ret;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Fetches the discovery document once (under o->lock): 0, or -1 with why. */
static int discover(oidc_t *o, char *why, size_t whylen)
{
    if (o->token_ep)
        return 0;
    char url[2048];
    size_t il = strlen(o->issuer);
    snprintf(url, sizeof(url), "%.*s/.well-known/openid-configuration",
             (int)(il && o->issuer[il - 1] == '/' ? il - 1 : il), o->issuer);
    json_t *d;
    long st;
    if (fetch_json(o, url, NULL, &d, &st, why, whylen) != 0)
        return -1;
    const char *iss = jstr(d, "issuer"), *a = jstr(d, "authorization_endpoint"),
               *t = jstr(d, "token_endpoint"), *j = jstr(d, "jwks_uri");
    int rc = -1;
    if (st != 200 || !iss || !a || !t || !j) {
        log_warn("oidc: the discovery document (status %ld) lacks issuer or an endpoint", st);
        snprintf(why, whylen, "The identity provider's configuration could not be read.");
    } else if (strcmp(iss, o->issuer) != 0) {
        log_warn("oidc: the discovery document names another issuer than --oidc-issuer");
        snprintf(why, whylen, "The identity provider names itself differently than configured.");
    } else {
        o->authz_ep = strdup(a);
        o->token_ep = strdup(t);
        o->jwks_uri = strdup(j);
        json_t *algs = json_object_get(d, "id_token_signing_alg_values_supported");
        o->algs = json_is_array(algs) ? json_incref(algs) : NULL;
        rc = 0;
    }
    json_decref(d);
    return rc;
}

/* The issuer's keys, fetched again (under o->lock): 0, or -1 with why. */
static int fetch_keys(oidc_t *o, char *why, size_t whylen)
{
    json_t *k;
    long st;
    if (fetch_json(o, o->jwks_uri, NULL, &k, &st, why, whylen) != 0)
        return -1;
    if (st != 200 || !json_is_array(json_object_get(k, "keys"))) {
        json_decref(k);
        log_warn("oidc: the issuer's keys (status %ld) are not a JWK set", st);
        snprintf(why, whylen, "The identity provider's keys could not be read.");
        return -1;
    }
    json_decref(o->jwks);
    o->jwks = k;
    return 0;
}

/* ---- beginning ---- */

static void b64url(const unsigned char *b, size_t n, char *out, size_t outlen)
{
    sodium_bin2base64(out, outlen, b, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static void random_token(char out[OIDC_BROWSER_LEN + 1])
{
    unsigned char b[32];
    random_bytes(b, sizeof(b));
    b64url(b, sizeof(b), out, OIDC_BROWSER_LEN + 1);
    sodium_memzero(b, sizeof(b));
}

int oidc_discover(oidc_t *o, char *why, size_t whylen)
{
    pthread_mutex_lock(&o->lock);
    int rc = discover(o, why, whylen);
    pthread_mutex_unlock(&o->lock);
    return rc;
}

int oidc_begin(oidc_t *o, store_conn_t *c, char **url, char browser[OIDC_BROWSER_LEN + 1],
               char *why, size_t whylen)
{
    *url = NULL;
    pthread_mutex_lock(&o->lock);
    int rc = discover(o, why, whylen);
    char *ep = rc == 0 ? strdup(o->authz_ep) : NULL;
    pthread_mutex_unlock(&o->lock);
    if (rc != 0)
        return -1;
    char state[OIDC_BROWSER_LEN + 1], nonce[OIDC_BROWSER_LEN + 1],
        verifier[OIDC_BROWSER_LEN + 1], challenge[OIDC_BROWSER_LEN + 1];
    random_token(state);
    random_token(nonce);
    random_token(verifier);
    random_token(browser);
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(d, (const unsigned char *)verifier, strlen(verifier));
    b64url(d, sizeof(d), challenge, sizeof(challenge));
    char sh[65], bh[65];
    sha256_hex(state, strlen(state), sh);
    sha256_hex(browser, strlen(browser), bh);
    int64_t now = store_clock_us();
    oidc_flow_t f = {.state_hash = sh, .browser_hash = bh, .nonce = nonce,
                     .verifier = verifier, .created_us = now,
                     .expires_us = now + (int64_t)OIDC_FLOW_SECONDS * 1000000};
    if (store_oidc_flow_put(c, &f) != STORE_OK) {
        free(ep);
        snprintf(why, whylen, "The sign-in could not be started; please try again.");
        return -1;
    }
    char *cid = curl_escape(o->client_id, 0), *ru = curl_escape(o->redirect_uri, 0);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "%s%cresponse_type=code&client_id=%s&redirect_uri=%s"
                   "&scope=openid%%20profile&state=%s&nonce=%s&code_challenge=%s"
                   "&code_challenge_method=S256",
               ep, strchr(ep, '?') ? '&' : '?', cid, ru, state, nonce, challenge);
    curl_free(cid);
    curl_free(ru);
    free(ep);
    sodium_memzero(verifier, sizeof(verifier));
    *url = buf_steal(&b);
    return 0;
}

/* ---- the ID token ---- */

/* True when alg is one checked here (asymmetric) and the issuer advertises it. */
static bool alg_allowed(const oidc_t *o, const char *alg)
{
    static const char *ok[] = {"RS256", "RS384", "RS512", "PS256", "PS384",
                               "PS512", "ES256", "ES384", "ES512"};
    bool known = false;
    for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
        known |= strcmp(alg, ok[i]) == 0;
    if (!known)
        return false;
    if (!o->algs)
        return strcmp(alg, "RS256") == 0; /* the default of OpenID Connect Discovery */
    size_t i;
    json_t *v;
    json_array_foreach(o->algs, i, v) if (json_is_string(v) && strcmp(json_string_value(v), alg) == 0)
        return true;
    return false;
}

/* The issuer's key for kid and alg (from o->jwks, under o->lock), or NULL. */
static cjose_jwk_t *find_key(const oidc_t *o, const char *kid, const char *alg)
{
    if (!o->jwks)
        return NULL;
    const char *kty = alg[0] == 'E' ? "EC" : "RSA";
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(o->jwks, "keys"), i, k)
    {
        const char *kk = jstr(k, "kid"), *use = jstr(k, "use"), *ka = jstr(k, "alg");
        if (!jstr(k, "kty") || strcmp(jstr(k, "kty"), kty) != 0 || (use && strcmp(use, "sig")) ||
            (ka && strcmp(ka, alg)) || (kid && (!kk || strcmp(kk, kid))))
            continue;
        cjose_err err;
        cjose_jwk_t *jwk = cjose_jwk_import_json((cjose_header_t *)k, &err);
        if (jwk)
            return jwk;
    }
    return NULL;
}

/* true when aud (a string or an array of them) names the client. */
static bool aud_has(const json_t *aud, const char *client, size_t *count)
{
    *count = 0;
    if (json_is_string(aud)) {
        *count = 1;
        return strcmp(json_string_value(aud), client) == 0;
    }
    bool has = false;
    size_t i;
    json_t *v;
    json_array_foreach(aud, i, v)
    {
        (*count)++;
        has |= json_is_string(v) && strcmp(json_string_value(v), client) == 0;
    }
    return has;
}

static bool equal_str(const char *a, const char *b)
{
    return a && b && strlen(a) == strlen(b) && ct_equal(a, b, strlen(a));
}

/* Checks the ID token: its claims into *claims (a new reference), or -1 with why. */
static int check_token(oidc_t *o, const char *token, const char *nonce, json_t **claims,
                       char *why, size_t whylen)
{
    *claims = NULL;
    cjose_err err;
    cjose_jws_t *jws = cjose_jws_import(token, strlen(token), &err);
    if (!jws) {
        snprintf(why, whylen, "The identity provider's ID token is malformed.");
        return -1;
    }
    cjose_header_t *hdr = cjose_jws_get_protected(jws);
    /* the header names as strings, not cjose's CJOSE_HDR_ALG and CJOSE_HDR_KID: those are
     * variables of libcjose, which is loaded at its first call (auth/cjose_lazy.c) */
    const char *alg = hdr ? cjose_header_get(hdr, "alg", &err) : NULL;
    const char *kid = hdr ? cjose_header_get(hdr, "kid", &err) : NULL;
    int rc = -1;
    pthread_mutex_lock(&o->lock);
    if (!alg || !alg_allowed(o, alg)) {
        snprintf(why, whylen, "The ID token is signed with an algorithm that is not accepted (%s).",
                 alg ? alg : "none");
        pthread_mutex_unlock(&o->lock);
        cjose_jws_release(jws);
        return -1;
    }
    cjose_jwk_t *jwk = find_key(o, kid, alg);
    if (!jwk && fetch_keys(o, why, whylen) == 0) /* first use, or the keys were rotated */
        jwk = find_key(o, kid, alg);
    pthread_mutex_unlock(&o->lock);
    uint8_t *plain = NULL;
    size_t plen = 0;
    if (!jwk) {
        snprintf(why, whylen, "The ID token is signed by a key the identity provider does not publish.");
    } else if (!cjose_jws_verify(jws, jwk, &err)) {
        snprintf(why, whylen, "The ID token's signature does not verify with the identity provider's keys.");
    } else if (!cjose_jws_get_plaintext(jws, &plain, &plen, &err) ||
               !(*claims = json_loadb((const char *)plain, plen, 0, NULL)) ||
               !json_is_object(*claims)) {
        snprintf(why, whylen, "The ID token's claims are not readable.");
    } else {
        rc = 0;
    }
    if (jwk)
        cjose_jwk_release(jwk);
    cjose_jws_release(jws);
    if (rc != 0) {
        json_decref(*claims);
        *claims = NULL;
        return -1;
    }
    json_t *cl = *claims;
    double now = (double)time(NULL);
    json_t *exp = json_object_get(cl, "exp"), *iat = json_object_get(cl, "iat");
    const char *azp = jstr(cl, "azp"), *sub = jstr(cl, "sub");
    size_t auds;
    bool aud_ok = aud_has(json_object_get(cl, "aud"), o->client_id, &auds);
    if (!equal_str(jstr(cl, "iss"), o->issuer))
        snprintf(why, whylen, "The ID token was issued by another issuer than the one configured.");
    else if (!aud_ok)
        snprintf(why, whylen, "The ID token was issued for another client (audience).");
    else if ((azp && strcmp(azp, o->client_id) != 0) || (auds > 1 && !azp))
        snprintf(why, whylen, "The ID token was issued for another client (azp).");
    else if (!json_is_number(exp) || json_number_value(exp) + SKEW_S <= now)
        snprintf(why, whylen, "The ID token has expired.");
    else if (!json_is_number(iat) || json_number_value(iat) - SKEW_S > now)
        snprintf(why, whylen, "The ID token was issued in the future (iat).");
    else if (!equal_str(jstr(cl, "nonce"), nonce))
        snprintf(why, whylen, "The ID token's nonce is not this sign-in's.");
    else if (!sub || !sub[0] || strlen(sub) > 255)
        snprintf(why, whylen, "The ID token names no subject.");
    else
        return 0;
    json_decref(cl);
    *claims = NULL;
    return -1;
}

/* ---- the callback ---- */

int oidc_finish_take(oidc_t *o, store_conn_t *c, const char *state, const char *code,
                     const char *error, const char *error_description, const char *browser,
                     arena_t *a, oidc_pending_t *p, char *why, size_t whylen)
{
    oidc_flow_t f;
    int rc = STORE_NOTFOUND;
    if (state && *state) {
        char sh[65];
        sha256_hex(state, strlen(state), sh);
        rc = store_oidc_flow_take(c, sh, store_clock_us(), a, &f); /* single use */
    }
    if (rc != STORE_OK && rc != STORE_NOTFOUND) {
        snprintf(why, whylen, "The sign-in could not be finished; please try again.");
        return -1;
    }
    if (error && *error) {
        snprintf(why, whylen, "The identity provider refused the sign-in: %s%s%s", error,
                 error_description && *error_description ? ": " : ".",
                 error_description && *error_description ? error_description : "");
        return -1;
    }
    if (rc == STORE_NOTFOUND) {
        snprintf(why, whylen, "This sign-in is unknown, used already or expired (state "
                              "mismatch). Please start again.");
        return -1;
    }
    char bh[65];
    if (browser)
        sha256_hex(browser, strlen(browser), bh);
    if (!browser || !equal_str(bh, f.browser_hash)) {
        snprintf(why, whylen, "This sign-in was started in another browser (state mismatch). "
                              "Please start again.");
        return -1;
    }
    if (!code || !*code) {
        snprintf(why, whylen, "The identity provider sent no code.");
        return -1;
    }
    p->code = arena_strdup(a, code);
    p->verifier = f.verifier;
    p->nonce = f.nonce;
    return 0;
}

int oidc_finish_exchange(oidc_t *o, const oidc_pending_t *p, arena_t *a, oidc_identity_t *id,
                         char *why, size_t whylen)
{
    int rc;
    pthread_mutex_lock(&o->lock);
    rc = discover(o, why, whylen);
    char *ep = rc == 0 ? strdup(o->token_ep) : NULL;
    pthread_mutex_unlock(&o->lock);
    if (rc != 0)
        return -1;
    char *ec = curl_escape(p->code, 0), *ev = curl_escape(p->verifier, 0),
         *er = curl_escape(o->redirect_uri, 0), *ei = curl_escape(o->client_id, 0);
    buf_t form;
    buf_init(&form);
    buf_printf(&form, "grant_type=authorization_code&code=%s&redirect_uri=%s&code_verifier=%s",
               ec, er, ev);
    if (!o->secret[0]) /* a public client names itself */
        buf_printf(&form, "&client_id=%s", ei);
    sodium_memzero(ec, strlen(ec));
    curl_free(ec);
    curl_free(ev);
    curl_free(er);
    curl_free(ei);
    json_t *ans;
    long st;
    rc = fetch_json(o, ep, form.data, &ans, &st, why, whylen);
    sodium_memzero(form.data, form.len);
    buf_free(&form);
    free(ep);
    if (rc != 0)
        return -1;
    const char *idt = jstr(ans, "id_token");
    if (st != 200 || !idt) {
        const char *e = jstr(ans, "error"), *ed = jstr(ans, "error_description");
        snprintf(why, whylen, "The identity provider refused the code: %s%s%s",
                 e ? e : "no ID token", ed ? ": " : ".", ed ? ed : "");
        json_decref(ans);
        return -1;
    }
    json_t *cl;
    rc = check_token(o, idt, p->nonce, &cl, why, whylen);
    json_decref(ans);
    if (rc != 0)
        return -1;
    id->iss = arena_strdup(a, o->issuer);
    id->sub = arena_strdup(a, jstr(cl, "sub"));
    const char *nm = jstr(cl, o->name_claim);
    id->name = nm ? arena_strdup(a, nm) : NULL;
    json_decref(cl);
    return 0;
}
