/* api_int.h — the API's own header, for src/api/ (and its unit tests) only: the route
 * table, the handlers (one per route: documents and images in records.c, a document's
 * export in export.c, health and media in misc.c...) and their shared pieces — errors in
 * the contract's shape, body decoding, field validation, record JSON (common.c).
 * Outside src/api/, api.h is the API (scripts/include-graph.py refuses an _int.h
 * included from another folder). */
#ifndef INK_API_INT_H
#define INK_API_INT_H

#include "api/api.h"
#include "core/assets.h"
#include "core/json.h"
#include "http/decode.h"
#include "obs/metrics.h"

typedef enum {
    ROUTE_NOT_FOUND,
    ROUTE_NOT_ALLOWED,
    ROUTE_LIST,
    ROUTE_STORE,
    ROUTE_SHOW,
    ROUTE_UPDATE,
    ROUTE_DELETE,
    ROUTE_EXPORT, /* GET /documents/{id}/export */
    ROUTE_TEMPLATES, /* GET and POST /templates (§14, §18) */
    ROUTE_TEMPLATE,  /* GET, PATCH, DELETE /templates/{id} (§18) */
    ROUTE_HEALTHZ,
    ROUTE_READYZ,
    ROUTE_MEDIA,
    ROUTE_METRICS,
    ROUTE_OPENAPI,
    ROUTE_WEB, /* the web app: / and its compiled-in files */
    ROUTE_REGENERATE, /* POST /{kind}/{id}/regenerate (§16) */
    ROUTE_REVISIONS,  /* GET /{kind}/{id}/revisions */
    ROUTE_REVISION,   /* GET /{kind}/{id}/revisions/{n} */
    ROUTE_RESTORE,    /* POST /{kind}/{id}/revisions/{n}/restore */
    ROUTE_ACTIONS,    /* POST /documents/{id}/actions (§17) */
    ROUTE_USAGE, /* GET /usage (§19) */
    ROUTE_ME,    /* GET /me: who the key is (any scope; docs/design.md) */
    ROUTE_TAGS,  /* GET /tags (§23) */
    ROUTE_BULK,  /* POST /{kind}/bulk (§23) */
    ROUTE_DRAFT, /* GET, PUT, DELETE /documents/{id}/draft (§24) */
    /* /admin/… (§19), for admin keys only; the handler (admin.c) tells methods apart */
    ROUTE_ADMIN_USERS,     /* /admin/users */
    ROUTE_ADMIN_USER,      /* /admin/users/{id} */
    ROUTE_ADMIN_USER_KEYS, /* /admin/users/{id}/keys */
    ROUTE_ADMIN_KEY,       /* /admin/keys/{id} */
    ROUTE_ADMIN_USAGE,     /* /admin/usage */
    /* API.md §21: signing in (no key: the router leaves them to their handlers) */
    ROUTE_SESSION_CSRF, /* GET /session/csrf */
    ROUTE_SESSION,      /* POST and DELETE /session */
    /* the user's own (any scope; a read scope only GETs) */
    ROUTE_ME_SESSIONS, /* GET and DELETE /me/sessions */
    ROUTE_ME_PASSWORD, /* PUT /me/password */
    /* the user's own keys (a record route: not for admin keys) */
    ROUTE_KEYS, /* GET and POST /keys */
    ROUTE_KEY,  /* DELETE /keys/{id} */
    /* webhooks (§22) */
    ROUTE_WEBHOOKS,          /* GET and POST /webhooks */
    ROUTE_WEBHOOK,           /* GET, PATCH, DELETE /webhooks/{id} */
    ROUTE_WEBHOOK_ROTATE,    /* POST /webhooks/{id}/rotate */
    ROUTE_WEBHOOK_PING,      /* POST /webhooks/{id}/ping */
    ROUTE_WEBHOOK_DELIVERIES, /* GET /webhooks/{id}/deliveries */
    ROUTE_WEBHOOK_RETRY,     /* POST /webhooks/{id}/deliveries/{n}/retry */
    ROUTE_OIDC,              /* GET /auth/oidc, /auth/oidc/login, /auth/oidc/callback (§21) */
} route_t;

/* True for the /admin routes. */
static inline bool api_route_admin(route_t rt)
{
    return rt >= ROUTE_ADMIN_USERS && rt <= ROUTE_ADMIN_USAGE;
}

/* ---- routes.c: the route table ---- */

/* Methods as bits (HEAD is GET's): a row's methods, a path's Allow set. */
enum { M_GET = 1, M_POST = 2, M_PUT = 4, M_PATCH = 8, M_DELETE = 16 };

typedef struct route_row route_row_t;

/* What api_route found for a request: the row that answers its method, or none (404 when
 * no row has its path, 405 when rows have it for other methods). */
typedef struct {
    const route_row_t *row; /* NULL for a 404 or a 405 */
    route_t route;          /* the row's, ROUTE_NOT_FOUND or ROUTE_NOT_ALLOWED */
    rec_kind_t kind;        /* the path's {kind} (documents, images); KIND_DOC when none */
    int64_t id, n;          /* the path's {id} and a revision's {n}; 0 when none, or 404 */
    int allowed;            /* for a 405: the methods the path takes (its Allow) */
    metrics_route_t metric; /* the path's template (a 405 keeps it); MR_OTHER for a 404 */
    const char *rest;       /* what a trailing "*" matched, in the path given */
} route_match_t;

/* The route of a request: pure, no I/O. One trailing slash is ignored under /api/v1/. */
route_t api_route(const char *method, const char *raw_path, route_match_t *m);
/* Calls the handler of a matched row (m->row not NULL). */
void api_route_call(app_t *app, http_req_t *r, const route_match_t *m);
/* The method bit of a method name (0 for one inkwell does not take). */
int api_method_bit(const char *method);

/* ---- common.c ---- */

/* A JSON body's field that is an array (its JSON text in val): only the fields that take
 * a list read it (tags, ids: API.md §23); others refuse it as not a string. */
#define KV_ARRAY 101

/* The API's own state of a request, kept with it (http_app_state) in its arena, made
 * (zeroed) on first use: what one step of the API leaves for a later one. */
typedef struct {
    /* the user's quota of the kind a create makes and its usage this month, as the
     * key's lookup read them (API.md §19; set by the router's quota check on the routes
     * that generate, for the records service's reservation; quota_limit < 0: none) */
    int64_t quota_limit, quota_used;
    double quota_at; /* mono_s() just before the lookup */
    int64_t key_id;  /* the key that authenticated the request (GET /me); with a
                      * session, the key it was made from (0: none) */
    /* API.md §21: a request authenticated by a session cookie */
    int64_t session_id;  /* 0: by a key */
    key_scope_t scope;   /* the key's or the session's */
    int64_t key_expires_us; /* the key's expiry (0: never), for the keys it makes */
    const char *csrf;    /* the session's CSRF token */
    bool admin_both;     /* an admin's own session: records and admin routes */
} api_state_t;
api_state_t *api_state(http_req_t *r);

/* {"data": <one value>, "status": status}: api_data_begin starts the answer and leaves w
 * where the caller writes the value; api_data_end adds the status and answers. */
void api_data_begin(http_req_t *r, jw_t *w);
void api_data_end(http_req_t *r, jw_t *w, int status);

/* {"message": msg, "status": status} */
void api_error(http_req_t *r, int status, const char *msg);
void api_not_found(http_req_t *r);
/* 503 or 500 for a store failure (never the details). */
void api_store_error(http_req_t *r, int rc);
/* A failed generation's status and message (*message: for the client): 503 "Storage is
 * full" when storage refused it (RF_STORAGE_FULL, RF_UNSTORED), else 502 with error as
 * it is. For JSON answers and SSE. */
int api_failure_status(rec_failure_t failure, const char *error, const char **message);
/* The status of a create's (or regenerate's) successful outcome: 201 (200 for a
 * regenerate) when done or streamed, 202 when pending. */
int api_create_status(const records_create_t *cr, create_outcome_t outcome);
/* The request's store connection, or NULL after answering 503. */
store_conn_t *api_conn(app_t *app, http_req_t *r);
/* True (503 answered, Retry-After set) when the data directory has less free space
 * than --min-free-mb: a create would leave a record whose picture or text finds no room. */
bool api_storage_full(app_t *app, http_req_t *r);


/* Validation errors, in field order: {"message":{"f":["..."]},"status":422}. */
typedef struct verr {
    struct verr *next;
    const char *field;
    const char *msg;
} verr_t;
typedef struct {
    verr_t *head, *tail;
    arena_t *a;
} verrs_t;
void verrs_init(verrs_t *v, arena_t *a);
void verrs_add(verrs_t *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool verrs_any(const verrs_t *v);
void api_validation_error(http_req_t *r, const verrs_t *v);

/* Decodes the request body (form or JSON) into fields. Returns 0, or answers
 * (415 or 422) and returns -1. */
int api_body_fields(http_req_t *r, kvlist_t *out);
/* For a route that changes record (kind, id) from a body (regenerate, an action): the
 * body's fields, the connection and the record as it is; false when an answer was sent
 * (the body's 4xx, 404, or the store's 503). */
bool api_record_to_change(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id, kvlist_t *f,
                          store_conn_t **c, record_t *rec);
/* The same with the Content-Type given (NULL = none): no connection needed. */
int api_decode_body(http_req_t *r, const char *content_type, kvlist_t *out);
/* The query string's parameters. */
void api_query(http_req_t *r, kvlist_t *out);

/* A text field: NULL when absent. Records an error (and returns NULL) when it is
 * malformed, empty when required/non-empty, or longer than max code points.
 * *present tells whether the field was sent at all. */
const char *field_text(verrs_t *v, const kvlist_t *f, const char *key, const char *label,
                       bool required, long long max, bool *present);
/* A parameter that must decode; NULL when absent or bad (error recorded). */
const char *param_value(verrs_t *v, const kvlist_t *f, const char *key, const char *label);

/* Writes one record as a JSON object. */
void api_record_json(app_t *app, jw_t *w, const record_t *rec);
/* {"data": record, "status": status} */
void api_respond_record(app_t *app, http_req_t *r, int status, const record_t *rec);
/* {"data":<record>,"status":status} into out (what api_respond_record answers). */
void api_render_record(app_t *app, buf_t *out, int status, const record_t *rec);

/* Absolute URLs: the one place they are built (common.c), from --public-url. path
 * starts with '/'. */
void api_url_append(buf_t *out, const app_t *app, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *api_url(const app_t *app, arena_t *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "documents" | "images": the path segment of a kind. */
const char *api_kind_path(rec_kind_t kind);
/* /api/v1/{kind} and /api/v1/{kind}/{id} */
char *api_collection_url(const app_t *app, arena_t *a, rec_kind_t kind);
char *api_record_url(const app_t *app, arena_t *a, rec_kind_t kind, int64_t id);
/* /media/{key}.png, appended */
void api_media_url(buf_t *out, const app_t *app, const char *media_key);

/* ---- ratelimit.c ---- */
/* Counts one request for bucket. Sets the X-RateLimit headers (and Retry-After
 * when refused). Returns true when allowed. On a store error it allows. */
bool ratelimit_check(ratelimit_t *rl, store_conn_t *c, http_req_t *r, const char *bucket);
/* The limit of requests without a key, per client address (a bad key's, a sign-in's
 * start): false when refused (the 429's headers are set; the caller answers). */
bool api_rate_limit_client(app_t *app, http_req_t *r, store_conn_t *c);

/* ---- records.c ---- */
/* List parameters from the query (fallbacks per §4); -1 after answering 422. */
int api_list_params(http_req_t *r, rec_kind_t kind, list_query_t *lq, int64_t *page_asked);
/* The list URL of the request with page set (absolute, every other parameter kept). */
void api_page_url(buf_t *out, const app_t *app, http_req_t *r, rec_kind_t kind, int64_t page);
/* The same for the list at base (an absolute URL without a query). */
void api_page_url_at(buf_t *out, const char *base, http_req_t *r, int64_t page);
void api_records_list(app_t *app, http_req_t *r, rec_kind_t kind);
void api_records_show(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id);
void api_records_store(app_t *app, http_req_t *r, rec_kind_t kind);
void api_records_update(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id);
void api_records_delete(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id);
/* POST /{kind}/{id}/regenerate (§16): answered like a create, 200 for its 201. */
void api_records_regenerate(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id);
/* The end of a create or regenerate whose cr is filled in and validated: the body's
 * fields kept for the hooks, Idempotency-Key, then streamed (Accept:
 * text/event-stream) or waited for / answered at once (Prefer: respond-async). */
void api_create_run(app_t *app, http_req_t *r, records_create_t *cr, const kvlist_t *f);
/* §17's sets: a tone, and a BCP 47 tag's shape. */
bool api_tone_valid(const char *s);
bool api_language_tag(const char *s);
/* A document's language for its exports' <html lang> (api/export.c): its `language`
 * when that is a BCP 47 tag, else NULL (the export's default, EXPORT_DEFAULT_LANG). */
const char *api_export_lang(const char *language);

/* ---- actions.c (§17) ---- */
/* POST /documents/{id}/actions: answered like a regenerate. */
void api_documents_action(app_t *app, http_req_t *r, int64_t id);

/* ---- revisions.c (§16) ---- */
void api_revisions_list(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id);
void api_revision_show(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id, int64_t n);
void api_revision_restore(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id, int64_t n);
/* The JSON answer of a create whose outcome is known (201, 202, 502, 503, a hook's). */
void api_create_answer(app_t *app, http_req_t *r, records_create_t *cr);
/* The idempotency hook's own answer (CREATE_HOOK: a replay, 409, 422, 503; idempotency.c). */
void api_idem_respond(http_req_t *r, const records_create_t *cr);
/* The http_suspend callback of a create (http_wait(r): its records_create_t), streamed or
 * not: hands it to the records service once the request is suspended. */
void api_create_suspended(http_req_t *r);

/* ---- stream.c (SSE, §10) ---- */
/* True when the client asked for text/event-stream. */
bool api_wants_stream(http_req_t *r);
/* A streamed create (cr filled in and validated) and a streamed show. */
void api_stream_create(app_t *app, http_req_t *r, records_create_t *cr);
void api_stream_show(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id);

/* ---- export.c ---- */
/* GET /documents/{id}/export?format=md|txt|html|docx|pdf (§12). */
void api_export(app_t *app, http_req_t *r, int64_t id);

/* ---- static.c ---- */
/* Answers a compiled-in file (ETag/304, gzip when accepted, the Cache-Control given). */
void api_asset(http_req_t *r, const asset_t *a, const char *cache_control);

/* ---- web.c ---- */
/* The web app's file for a path ("/" is /index.html), or NULL. */
const asset_t *api_web_asset(const char *path);
/* Answers GET / and the app's files, with the security headers (CSP...). */
void api_web(app_t *app, http_req_t *r);

/* ---- templates_api.c (§14, §18) ---- */
/* GET /templates (the 52, then the user's own) and POST /templates. */
void api_templates(app_t *app, http_req_t *r);
/* GET, PATCH and DELETE /templates/{id} (the router answers 405 for the 52's). */
void api_template(app_t *app, http_req_t *r, int64_t id);
/* A document's template_id as a store or regenerate gives it (rec->template_id): one of
 * the 52, or one of the user's own templates, not deleted (then rec->template_name is
 * set). Records a 422 naming template_id in v when it is neither. STORE_OK, or the
 * store's failure (answered by the caller). */
int api_template_check(app_t *app, http_req_t *r, verrs_t *v, record_t *rec);
/* The name a document shows as `template`: a builtin's, rec->template_name, or its
 * user's own template's looked up (deleted ones too); NULL when none is known. */
const char *api_template_name(app_t *app, const record_t *rec, arena_t *a);
/* Sets template_name on a page's documents with a user's own template (not probed
 * ones), one lookup per template: what a list renders. */
void api_template_names(app_t *app, record_t *items, size_t n, arena_t *a);

/* ---- misc.c ---- */
void api_healthz(app_t *app, http_req_t *r);
void api_readyz(app_t *app, http_req_t *r);
void api_media(app_t *app, http_req_t *r, const char *file);

/* ---- admin.c, usage.c (§19) ---- */
/* The /admin routes (rt, with the path's {id}); the method is one the route takes. */
void api_admin(app_t *app, http_req_t *r, route_t rt, int64_t id);
/* GET /usage: the key's user's usage of the current month. */
void api_usage(app_t *app, http_req_t *r);
/* A usage object of §19 ({"period","words":{"used","limit"},"images":…,"tokens":…}),
 * with "user_id" and "name" first when with_user. */
void api_usage_json(jw_t *w, const usage_row_t *u, const char *period, bool with_user);

/* ---- admin.c: the objects and pages of §19, shared with the user's own routes ---- */
typedef struct {
    int per_page;
    int64_t page;
    const char *path; /* the list's absolute URL without a query */
} api_page_t;
void api_page_params(app_t *app, http_req_t *r, const char *path, api_page_t *p);
void api_page_begin(http_req_t *r, jw_t *w);
void api_page_end(http_req_t *r, jw_t *w, const api_page_t *p, int64_t total, size_t n);
void api_user_json(jw_t *w, const user_info_t *u);
/* key: the key itself, in the answer that made it only (else NULL) */
void api_key_json(jw_t *w, const key_info_t *k, const char *key);
/* A password field when present: its NFC form (malloc'd; password_free) or NULL with
 * the error recorded (too short, too long, not UTF-8). */
char *api_password_field(verrs_t *v, const kvlist_t *f, const char *key, const char *label);
/* A timestamp as §3 writes it. */
void api_ts_json(jw_t *w, int64_t us);
/* The key fields of POST /admin/users/{id}/keys and POST /keys: scope (admin refused
 * when !admin_ok) and expires_at (no later than limit_us when > 0). False after
 * recording errors in v. */
bool api_key_fields(verrs_t *v, const kvlist_t *f, bool admin_ok, int64_t limit_us,
                    key_scope_t *scope, int64_t *expires_us);

/* ---- session_api.c (API.md §21) ---- */
/* GET /session/csrf, POST and DELETE /session. */
void api_session_csrf(app_t *app, http_req_t *r);
void api_session(app_t *app, http_req_t *r);
/* GET /me (any scope), GET and DELETE /me/sessions, PUT /me/password. */
void api_me(app_t *app, http_req_t *r);
void api_me_sessions(app_t *app, http_req_t *r);
void api_me_password(app_t *app, http_req_t *r);
/* GET and POST /keys, DELETE /keys/{id}. */
void api_keys_own(app_t *app, http_req_t *r);
void api_key_own(app_t *app, http_req_t *r, int64_t id);
/* The value of the request's session cookie (its name depends on https), or NULL. */
const char *api_session_cookie(app_t *app, http_req_t *r);
/* The value of cookie name (the first), in the request's arena; NULL when absent. */
const char *api_cookie_get(http_req_t *r, const char *name);
/* Adds a Set-Cookie (Path=/, SameSite=Lax, Secure over https). */
void api_set_cookie(app_t *app, http_req_t *r, const char *name, const char *value,
                    long max_age, bool http_only);
/* Starts a session for user_id (ending the one the request carried) and sets its two
 * cookies (Cache-Control: no-store, not compressed): a STORE_ code. */
int api_session_start(app_t *app, http_req_t *r, store_conn_t *c, int64_t user_id,
                      int64_t key_id, key_scope_t scope);

/* ---- oidc_api.c: single sign-on (API.md §21; auth/oidc.h), at the root like /healthz ---- */
/* GET /auth/oidc: the issuer's name and the login address (for the sign-in page), or
 * data null when single sign-on is not configured. */
void api_oidc_info(app_t *app, http_req_t *r);
/* GET /auth/oidc/login: 302 to the issuer. GET /auth/oidc/callback: 302 to / signed in,
 * or a 400 page saying why. */
void api_oidc_login(app_t *app, http_req_t *r);
void api_oidc_callback(app_t *app, http_req_t *r);
/* Authenticates the request by its session cookie (no Authorization header): fills k
 * like keys_authenticate and the request's state; STORE_NOTFOUND when the cookie is no
 * live session. */
int api_session_authenticate(app_t *app, http_req_t *r, store_conn_t *c, bool with_usage,
                             key_auth_t *k, bool *admin_both);
/* For an unsafe method authenticated by a cookie: true when X-XSRF-TOKEN equals the
 * session's token (constant time); else answers 419 and returns false. */
bool api_session_csrf_ok(http_req_t *r);
/* PATCH /admin/users/{id} with a password: hashes it off the HTTP thread, then sets it
 * (ending the user's sessions) and applies the patch; answers. */
void api_admin_password(app_t *app, http_req_t *r, int64_t id, const user_patch_t *p,
                        char *nfc);

/* ---- webhooks.c (§22) ---- */
void api_webhooks(app_t *app, http_req_t *r);
void api_webhook(app_t *app, http_req_t *r, int64_t id);
void api_webhook_rotate(app_t *app, http_req_t *r, int64_t id);
void api_webhook_ping(app_t *app, http_req_t *r, int64_t id);
void api_webhook_deliveries(app_t *app, http_req_t *r, int64_t id);
void api_webhook_retry(app_t *app, http_req_t *r, int64_t id, int64_t d);

/* ---- ops.c ---- */
/* GET /metrics (404 when metrics are off) and GET /api/v1/openapi.json. */
void api_metrics(app_t *app, http_req_t *r);
void api_openapi(app_t *app, http_req_t *r);
/* The provider and job-queue fields of /readyz: ,"provider":{...},"jobs":{...} */
void api_readyz_fields(app_t *app, store_conn_t *c, buf_t *out);

/* ---- tags.c, bulk.c, drafts.c (API.md §23, §24) ---- */

/* The `key` field's tags (comma-separated, or a JSON array in a JSON body): trimmed,
 * NFC, distinct under the folding, in the order given, in *out and *n (0: clear them).
 * False when the field is absent; true when present, with a 422 message added to v
 * when it is not a list of at most STORE_MAX_TAGS tags. */
bool api_tags_field(verrs_t *v, const kvlist_t *f, const char *key, arena_t *a,
                    const char ***out, int *n);
/* The folded tag a list's `tag` filter looks for; for a value that cannot be a tag, one
 * no tag has. */
const char *api_tag_filter(const char *raw, arena_t *a);
/* tags[0..n) given the spellings the user's tags in use have (a new record's answer). */
int api_tags_spell(store_conn_t *c, int64_t user_id, const char **tags, int n, arena_t *a);
void api_tags_json(jw_t *w, const char *const *tags, int n);
void api_tags_index(app_t *app, http_req_t *r);
void api_bulk(app_t *app, http_req_t *r, rec_kind_t kind);
void api_draft(app_t *app, http_req_t *r, int64_t id);
/* A read key's POST /documents/bulk with action=export (§19 amended); false when it has
 * answered (403, or the body's 4xx). */
bool api_bulk_read_allowed(http_req_t *r, rec_kind_t kind);

#endif
