/* idempotency.c — Idempotency-Key on POST /documents and /images (API.md §11), as the
 * records service's create hook (records.h records_set_create_hook), so the inline,
 * job and streamed creates all honour it.
 *
 * begin (before anything is stored): without the header it does nothing; with it, the
 * key is checked (1..255 printable ASCII) and taken in the store (store.h idem_begin:
 * one row per user and key, atomic across processes). A key held by a finished request
 * answers its kept status and body again with Idempotent-Replayed: true (and its
 * Location); one held by a request still running answers 409; one used with another
 * request answers 422 naming idempotency_key. end (once the outcome is known): a 201
 * or 202 (a regenerate's 200 or 202, §16) is kept for 24 hours, rendered exactly as the client gets it; anything else
 * (502, 503...) frees the key, so a retry is processed anew, unless the record was
 * stored (a 503 from a waiting create's last read): then its kept 202 stands.
 *
 * A streamed create (SSE) keeps the JSON answer {"data":<the record as stored, queued>,
 * "status":201} with its Location: a replay answers that JSON (not a stream); the
 * client follows the record with GET (or a streamed GET) as after any create.
 *
 * The request's digest: SHA-256 of the route ("POST /documents") and its decoded
 * fields, each distinct name once with the value the API uses (the last one), sorted
 * by name; names and values length-prefixed. So a form or a JSON body, the fields'
 * order and their percent-encoding do not matter; values are compared as the API reads
 * them (JSON 0.5 and form "0.5" are the same; JSON 1 and form "1.0" are not).
 *
 * In progress, a key is leased for --wait-limit + 10 s (a waiting create answers
 * within its wait limit; a stream's answer is known once the record is stored); a key
 * whose holder died is free again once that lease runs out, or at once when a SQLite
 * server starts (store.h job_release_all).
 *
 * No crash can leave a stored create with its key unkept: the answer is rendered and
 * kept in the transaction that stores the record (store.h idem_keep_t, through
 * records_create_t.hook.keep). Final there for the inline, async and streamed paths; a
 * waiting create keeps its 202 (the record queued) as the answer for a retry after a
 * crash, and finishes the key here with what the wait gave (docs/design.md,
 * "Idempotency"). */
#include "api/api_int.h"

#include "core/log.h"
#include "records/records.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IDEM_TTL_US (24LL * 3600 * 1000000)
#define IDEM_LEASE_MARGIN_US (10LL * 1000000)
#define IDEM_KEY_MAX 255
#define IDEM_PRUNE_EVERY 256 /* begins between two deletions of expired keys */
#define BUSY_BODY "{\"message\":\"A request with this idempotency key is in progress.\",\"status\":409}"
#define UNAVAILABLE_BODY                                                                      \
    "{\"message\":\"The service is temporarily unavailable; please try again.\",\"status\":503}"
#define ERROR_BODY "{\"message\":\"Server error.\",\"status\":500}"

/* The hook's state (records_create_t.hook.state): the key taken, or the hook's own
 * answer (CREATE_HOOK), sent as it is by api_idem_respond. */
typedef struct {
    const char *key; /* NULL: begin answered */
    char token[33];
    int64_t user_id;
    idem_keep_t keep; /* what the records service keeps with the record */
    int status;       /* begin's answer: a JSON body, its Location (a replay's) and */
    const char *body; /* whether it is a replay (Idempotent-Replayed: true) */
    const char *location;
    bool replayed;
} idem_req_t;

/* The answer exactly as the client gets it (api_create_answer; a stream: see above),
 * and its Location. Also called by the store inside the creating transaction. */
static void render_answer(void *appv, const record_t *rec, int status, buf_t *body,
                          buf_t *location)
{
    app_t *app = appv;
    api_render_record(app, body, status, rec);
    api_url_append(location, app, "/api/v1/%s/%lld", api_kind_path(rec->kind),
                   (long long)rec->id);
}

static bool key_valid(const char *k)
{
    size_t n = strlen(k);
    if (n < 1 || n > IDEM_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)k[i] < 0x20 || (unsigned char)k[i] > 0x7e)
            return false;
    return true;
}

static int cmp_kv(const void *a, const void *b)
{
    const kv_t *x = *(const kv_t *const *)a, *y = *(const kv_t *const *)b;
    return strcmp(x->key, y->key);
}

/* The digest of the canonical request (see above), as 64 hex digits. */
static void request_digest(arena_t *a, const records_create_t *cr, char out[65])
{
    rec_kind_t kind = cr->req.rec.kind;
    const kvlist_t *f = cr->req.fields;
    const kv_t **v = arena_alloc(a, (f->n ? f->n : 1) * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        if (kv_get(f, f->items[i].key) == &f->items[i]) /* the value the API uses */
            v[n++] = &f->items[i];
    qsort(v, n, sizeof(*v), cmp_kv);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "POST /%s", kind == KIND_DOC ? "documents" : "images");
    if (cr->req.regenerate) /* the route is part of the fingerprint (§16, §17) */
        buf_printf(&b, "/%lld/%s", (long long)cr->req.rec.id, cr->req.action ? "actions" : "regenerate");
    buf_puts(&b, "\n");
    for (size_t i = 0; i < n; i++) {
        buf_printf(&b, "%zu:%s=", strlen(v[i]->key), v[i]->key);
        if (v[i]->status == KV_OK && v[i]->val) {
            buf_printf(&b, "%zu:", v[i]->val_len);
            buf_append(&b, v[i]->val, v[i]->val_len);
        } else {
            buf_printf(&b, "!%d", (int)v[i]->status); /* undecodable: never valid anyway */
        }
        buf_puts(&b, "\n");
    }
    sha256_hex(b.data ? b.data : "", b.len, out);
    buf_free(&b);
}

/* The hook answers (CREATE_HOOK) with a JSON body of its own. */
static bool hook_answer(records_create_t *cr, int status, const char *body)
{
    idem_req_t *ir = arena_alloc(cr->arena, sizeof(*ir));
    memset(ir, 0, sizeof(*ir));
    ir->status = status;
    ir->body = body;
    cr->hook.state = ir;
    return true;
}

void api_idem_respond(http_req_t *r, const records_create_t *cr)
{
    const idem_req_t *ir = cr->hook.state;
    if (ir->replayed)
        http_add_header(r, "Idempotent-Replayed", "true");
    if (ir->location)
        http_add_header(r, "Location", ir->location);
    if (ir->status == 503)
        http_add_header(r, "Retry-After", "1"); /* as api_store_error's */
    buf_reset(http_resp(r));
    buf_puts(http_resp(r), ir->body ? ir->body : "");
    http_respond(r, ir->status);
}

static bool key_error(records_create_t *cr, const char *msg)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "{\"message\":{\"idempotency_key\":[");
    json_escape(&b, msg, strlen(msg));
    buf_puts(&b, "]},\"status\":422}");
    const char *body = arena_strdup(cr->arena, buf_cstr(&b));
    buf_free(&b);
    return hook_answer(cr, 422, body);
}

static bool idem_begin(void *appv, records_create_t *cr)
{
    app_t *app = appv;
    const char *key = cr->req.idempotency_key;
    if (!key)
        return false;
    if (!key_valid(key))
        return key_error(cr, "The idempotency key must be 1 to 255 printable ASCII characters.");
    char err[128];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    if (!c)
        return hook_answer(cr, 503, UNAVAILABLE_BODY);
    char digest[65];
    request_digest(cr->arena, cr, digest);
    static atomic_uint begins;
    bool prune = atomic_fetch_add(&begins, 1) % IDEM_PRUNE_EVERY == 0;
    int64_t lease = (int64_t)(app->cfg->wait_limit * 1e6) + IDEM_LEASE_MARGIN_US;
    idem_t k;
    int rc = store_idem_begin(c, cr->req.rec.user_id, key, digest, now_us(), lease, IDEM_TTL_US,
                                prune, cr->arena, &k);
    if (rc != STORE_OK) {
        if (rc != STORE_UNAVAILABLE)
            log_error("idempotency: %s", store_rc_name(rc));
        return rc == STORE_UNAVAILABLE ? hook_answer(cr, 503, UNAVAILABLE_BODY)
                                       : hook_answer(cr, 500, ERROR_BODY);
    }
    switch (k.state) {
    case IDEM_NEW: {
        idem_req_t *ir = arena_alloc(cr->arena, sizeof(*ir));
        memset(ir, 0, sizeof(*ir));
        ir->key = arena_strdup(cr->arena, key);
        memcpy(ir->token, k.token, sizeof(ir->token));
        ir->user_id = cr->req.rec.user_id;
        ir->keep = (idem_keep_t){.user_id = ir->user_id, .key = ir->key, .token = ir->token,
                                 .expires_us = now_us() + IDEM_TTL_US,
                                 .render = render_answer, .arg = app};
        cr->hook.state = ir;
        cr->hook.keep = &ir->keep;
        return false;
    }
    case IDEM_BUSY:
        return hook_answer(cr, 409, BUSY_BODY);
    case IDEM_MISMATCH:
        return key_error(cr, "The key was already used with other parameters.");
    case IDEM_REPLAY: {
        hook_answer(cr, k.status, k.body);
        idem_req_t *ir = cr->hook.state;
        ir->replayed = true;
        ir->location = k.location;
        return true;
    }
    }
    return false;
}

static int idem_status(void *appv, const records_create_t *cr, create_outcome_t outcome)
{
    (void)appv;
    return api_create_status(cr, outcome);
}

static void idem_end(void *appv, records_create_t *cr)
{
    app_t *app = appv;
    idem_req_t *ir = cr->hook.state;
    if (!ir || !ir->key)
        return;
    cr->hook.state = NULL;
    char err[128];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    int status = api_create_status(cr, cr->res.outcome);
    if (!status && ir->keep.stored && cr->res.outcome == CREATE_STORE_ERROR)
        status = ir->keep.status; /* the record is stored (a wait's re-read failed): its
                                   * kept answer stands, the key is not freed */
    if (status && ir->keep.stored && ir->keep.final && ir->keep.status == status)
        return; /* kept with the record, in its transaction */
    int rc = STORE_UNAVAILABLE;
    if (c && status) {
        buf_t body, location;
        buf_init(&body);
        buf_init(&location);
        render_answer(app, &cr->res.rec, status, &body, &location);
        rc = store_idem_finish(c, ir->user_id, ir->key, ir->token, status,
                                 buf_cstr(&location), buf_cstr(&body), now_us() + IDEM_TTL_US);
        buf_free(&body);
        buf_free(&location);
    } else if (c) {
        rc = store_idem_abort(c, ir->user_id, ir->key, ir->token);
    }
    if (rc != STORE_OK)
        log_warn("idempotency: key not %s: %s", status ? "kept" : "freed", store_rc_name(rc));
}

void api_idempotency_install(app_t *app)
{
    records_create_hook_t h = {idem_begin, idem_end, idem_status, app};
    records_set_create_hook(app->records, &h);
}
