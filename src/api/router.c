/* router.c — the checks every /api/v1 request passes, then the route's handler (the
 * route table, its paths, methods, handlers and metric labels, is routes.c).
 *
 * Order for /api/v1: authentication (401; bad keys are rate limited per client
 * address), the key's rate limit (429), then the route: an unknown path is 404,
 * a known path with another method 405 with Allow, an {id} that is not a positive
 * decimal integer 404; then the key's scope (403) and, for a create, the user's
 * monthly quota (403, §19). Other paths: /healthz, /readyz, /media/<key>.png, /metrics,
 * /api/v1/openapi.json and the web app (/ and its compiled-in files, api/web.c), all
 * without auth. Each request is labelled with its route's template for the metrics
 * (never its raw path; a 405 keeps its path's). */
#include "api/api_int.h"

#include "auth/keys.h"
#include "http/proxies.h"
#include "core/log.h"
#include "obs/metrics.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static void not_allowed(http_req_t *r, int allowed)
{
    char allow[64] = "";
    static const struct {
        int bit;
        const char *names;
    } m[] = {{M_GET, "GET, HEAD"}, {M_POST, "POST"}, {M_PUT, "PUT"}, {M_PATCH, "PATCH"},
             {M_DELETE, "DELETE"}};
    for (size_t i = 0; i < ARRAY_LEN(m); i++) {
        if (!(allowed & m[i].bit))
            continue;
        if (allow[0])
            strcat(allow, ", ");
        strcat(allow, m[i].names);
    }
    http_add_header(r, "Allow", allow);
    api_error(r, 405, "Method not allowed.");
}

static void client_bucket(http_req_t *r, char *out, size_t outlen)
{
    char key[64]; /* a trusted proxy's client; an IPv6 one's /64 (proxies.h) */
    proxies_limit_key(http_client_addr(r), key, sizeof(key));
    snprintf(out, outlen, "ip:%s", key);
}

bool api_rate_limit_client(app_t *app, http_req_t *r, store_conn_t *c)
{
    char bucket[80];
    client_bucket(r, bucket, sizeof(bucket));
    if (ratelimit_check(app->rl, c, r, bucket))
        return true;
    metrics_ratelimit_refused();
    return false;
}

/* The routes that generate (§19's quota: creates, regenerations §16, actions §17). */
static bool generates(route_t rt)
{
    return rt == ROUTE_STORE || rt == ROUTE_REGENERATE || rt == ROUTE_ACTIONS;
}

/* Authenticates and rate limits; false when it has answered. *k: the key, and for a
 * route that generates its user's quotas and usage this month (read with the key: no
 * second lookup; the other routes read the key alone). */
static bool admit(app_t *app, http_req_t *r, route_t rt, key_auth_t *k)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return false;
    api_state_t *st = api_state(r);
    st->quota_at = mono_s(); /* the usage read below is at least this recent */
    /* an Authorization header alone decides, valid or not; else a session cookie (§21) */
    const char *authz = http_header(r, "Authorization");
    const char *cookie = authz ? NULL : api_session_cookie(app, r);
    bool both = false;
    int rc = cookie ? api_session_authenticate(app, r, c, generates(rt), k, &both)
                    : keys_authenticate(c, authz, generates(rt), k);
    if (rc == STORE_NOTFOUND) {
        if (!api_rate_limit_client(app, r, c)) {
            api_error(r, 429, "Too Many Attempts.");
            return false;
        }
        http_add_header(r, "WWW-Authenticate", "Bearer");
        api_error(r, 401, "Unauthenticated.");
        return false;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return false;
    }
    http_set_user_id(r, k->user_id);
    st->key_id = k->key_id;
    st->scope = k->scope;
    st->key_expires_us = k->expires_us;
    char bucket[40];
    /* a session has its own bucket; one made from a key shares the key's */
    if (st->session_id && !k->key_id)
        snprintf(bucket, sizeof(bucket), "session:%lld", (long long)st->session_id);
    else
        snprintf(bucket, sizeof(bucket), "key:%lld", (long long)k->key_id);
    if (!ratelimit_check(app->rl, c, r, bucket)) {
        metrics_ratelimit_refused();
        api_error(r, 429, "Too Many Attempts.");
        return false;
    }
    /* a change authenticated by the cookie carries the session's CSRF token: 419 */
    if (cookie && api_method_bit(http_method(r)) != M_GET && !api_session_csrf_ok(r))
        return false;
    return true;
}

/* The key's scope (§19): admin keys take the /admin routes only, and only they do; read
 * keys only GET (and HEAD). Unknown paths and refused methods are answered 404/405 by
 * dispatch first. False when it has answered 403. */
static bool scope_allows(http_req_t *r, const key_auth_t *k, route_t rt, rec_kind_t kind)
{
    if (rt == ROUTE_NOT_FOUND || rt == ROUTE_NOT_ALLOWED || rt == ROUTE_ME)
        return true; /* (who the key is: any key may ask) */
    /* the user's own sessions and password: any scope (a read one only reads); an
     * admin's own session: every route */
    bool own = rt == ROUTE_ME_SESSIONS || rt == ROUTE_ME_PASSWORD;
    if (!own && !api_state(r)->admin_both && api_route_admin(rt) != (k->scope == SCOPE_ADMIN)) {
        api_error(r, 403, "This action is unauthorized.");
        return false;
    }
    if (k->scope == SCOPE_READ && rt == ROUTE_BULK) /* §23: action=export only */
        return api_bulk_read_allowed(r, kind);
    if (k->scope == SCOPE_READ && api_method_bit(http_method(r)) != M_GET) {
        api_error(r, 403, "This key may only read.");
        return false;
    }
    return true;
}

/* The monthly quota of a route that generates (§19), from the usage read with the key:
 * used up (used >= limit) answers 403 before anything is stored. A generation that
 * started under the limit is never cut off, so a month may end a little over it.
 * Creates, regenerations (§16) and actions (§17) generate. */
static bool quota_allows(app_t *app, http_req_t *r, const key_auth_t *k, route_t rt,
                         rec_kind_t kind)
{
    if (!generates(rt))
        return true;
    bool img = kind == KIND_IMG;
    int64_t limit = img ? k->quota_images : k->quota_words;
    int64_t used = img ? k->used.images : k->used.words;
    api_state_t *st = api_state(r); /* for the records service's reservation (records/quota.c) */
    st->quota_limit = limit;
    st->quota_used = used;
    if (limit < 0 || used < limit)
        return true;
    /* a retry of a create already answered (Idempotency-Key, §11) gets that answer: the
     * key's hook replays it (or answers 409/422) and creates nothing */
    const char *idem = http_header(r, "Idempotency-Key");
    bool held = false;
    store_conn_t *c = idem ? api_conn(app, r) : NULL;
    if (c && store_idem_held(c, k->user_id, idem, now_us(), &held) == STORE_OK && held)
        return true;
    metrics_quota_refused(img ? MQ_IMAGES : MQ_WORDS);
    api_error(r, 403, img ? "Your monthly image quota is used up."
                          : "Your monthly word quota is used up.");
    return false;
}

/* The route's handler, or the 404 or 405 (with Allow) of a path without one. */
static void dispatch(app_t *app, http_req_t *r, const route_match_t *m)
{
    if (m->route == ROUTE_NOT_FOUND)
        api_not_found(r);
    else if (m->route == ROUTE_NOT_ALLOWED)
        not_allowed(r, m->allowed);
    else
        api_route_call(app, r, m);
}

void api_handle(void *appv, http_req_t *r)
{
    app_t *app = appv;
    route_match_t m;
    route_t rt = api_route(http_method(r), http_path(r), &m);
    rec_kind_t kind = m.kind;
    http_set_metric_route(r, (int)m.metric);
    /* the API's description is public, like /healthz */
    bool api = strncmp(http_path(r), "/api/v1/", 8) == 0 && rt != ROUTE_OPENAPI &&
               rt != ROUTE_SESSION_CSRF && rt != ROUTE_SESSION; /* §21: sign-in limits only */
    /* a GET under /api/v1 only reads: its key and its records in one read session */
    store_conn_t *session = NULL;
    if (api && strcmp(http_method(r), "GET") == 0 && (session = api_conn(app, r)) == NULL)
        return;
    if (session)
        store_read_begin(session); /* nothing on a backend without read sessions */
    /* everything under /api/v1 is authenticated and rate limited, known route or not;
     * a body over --max-body is a 413 after that (with the rate-limit headers); then the
     * key's scope and the user's quota are checked (§19) */
    key_auth_t key;
    if (!api || admit(app, r, rt, &key)) {
        if (http_body_too_large(r))
            api_error(r, 413, "Payload too large.");
        else if (!api || (scope_allows(r, &key, rt, kind) && quota_allows(app, r, &key, rt, kind)))
            dispatch(app, r, &m);
    }
    if (session)
        store_read_end(session);
}
