/* idempotency.c — Idempotency-Key on POST /documents and /images (API.md §11).
 *
 * api_idem_begin runs once the create's fields are decoded and valid: without the
 * header it does nothing; with it, the key is checked (1..255 printable ASCII) and
 * taken in the store (store.h idem_begin: one row per user and key, atomic across
 * processes). A key held by a finished request answers its kept status and body again
 * with Idempotent-Replayed: true (and its Location); one held by a request still
 * running answers 409; one used with another request answers 422 naming
 * idempotency_key. A key taken here is finished by api_on_answer, the server's hook
 * just before the answer leaves: a 201 or 202 is kept for 24 hours (the key is then
 * replayed), anything else — and a request that never got an answer — frees the key,
 * so a retry is processed anew.
 *
 * The request's digest: SHA-256 of the route ("POST /documents") and its decoded
 * fields, each distinct name once with the value the API uses (the last one), sorted
 * by name; names and values length-prefixed. So a form or a JSON body, the fields'
 * order and their percent-encoding do not matter; values are compared as the API reads
 * them (JSON 0.5 and form "0.5" are the same; JSON 1 and form "1.0" are not).
 *
 * In progress, a key is leased for --wait-limit + 10 s (a waiting create answers
 * within its wait limit); a key whose holder died is free again once that lease runs
 * out, or at once when a SQLite server starts (store.h job_release_all).
 *
 * One window stays: a create committed whose answer (and the finish) is lost to a
 * crash of the server or the database between the two writes is not kept, so its
 * retry creates again (docs/design.md, "Idempotency"). */
#include "api/api.h"

#include "core/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IDEM_TTL_US (24LL * 3600 * 1000000)
#define IDEM_LEASE_MARGIN_US (10LL * 1000000)
#define IDEM_KEY_MAX 255
#define IDEM_PRUNE_EVERY 256 /* begins between two deletions of expired keys */

typedef struct {
    const char *key;
    char token[33];
    int64_t user_id;
} idem_req_t;

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
static void request_digest(http_req_t *r, rec_kind_t kind, const kvlist_t *f, char out[65])
{
    const kv_t **v = arena_alloc(&r->arena, (f->n ? f->n : 1) * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        if (kv_get(f, f->items[i].key) == &f->items[i]) /* the value the API uses */
            v[n++] = &f->items[i];
    qsort(v, n, sizeof(*v), cmp_kv);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "POST /%s\n", kind == KIND_DOC ? "documents" : "images");
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

static void replay(http_req_t *r, const idem_t *k)
{
    buf_reset(&r->resp);
    buf_puts(&r->resp, k->body);
    if (k->location)
        http_add_header(r, "Location", k->location);
    http_add_header(r, "Idempotent-Replayed", "true");
    http_respond(r, k->status);
}

static void key_error(http_req_t *r, const char *msg)
{
    verrs_t v;
    verrs_init(&v, &r->arena);
    verrs_add(&v, "idempotency_key", "%s", msg);
    api_validation_error(r, &v);
}

bool api_idem_begin(app_t *app, http_req_t *r, rec_kind_t kind, const kvlist_t *fields)
{
    const char *key = http_header(r, "Idempotency-Key");
    if (!key)
        return false;
    if (!key_valid(key)) {
        key_error(r, "The idempotency key must be 1 to 255 printable ASCII characters.");
        return true;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return true;
    char digest[65];
    request_digest(r, kind, fields, digest);
    static atomic_uint begins;
    bool prune = atomic_fetch_add(&begins, 1) % IDEM_PRUNE_EVERY == 0;
    int64_t lease = (int64_t)(app->cfg->wait_limit * 1e6) + IDEM_LEASE_MARGIN_US;
    idem_t k;
    int rc = c->ops->idem_begin(c, r->user_id, key, digest, now_us(), lease, IDEM_TTL_US, prune,
                                &r->arena, &k);
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return true;
    }
    switch (k.state) {
    case IDEM_NEW: {
        idem_req_t *ir = arena_alloc(&r->arena, sizeof(*ir));
        ir->key = arena_strdup(&r->arena, key);
        memcpy(ir->token, k.token, sizeof(ir->token));
        ir->user_id = r->user_id;
        r->ext = ir;
        return false;
    }
    case IDEM_BUSY:
        api_error(r, 409, "A request with this idempotency key is in progress.");
        return true;
    case IDEM_MISMATCH:
        key_error(r, "The key was already used with other parameters.");
        return true;
    case IDEM_REPLAY:
        replay(r, &k);
        return true;
    }
    return true;
}

void api_on_answer(void *appv, http_req_t *r)
{
    app_t *app = appv;
    idem_req_t *ir = r->ext;
    if (!ir)
        return;
    r->ext = NULL;
    char err[128];
    store_conn_t *c = store_conn(app->store, err, sizeof(err));
    int rc = STORE_UNAVAILABLE;
    bool keep = r->responded && (r->status == 201 || r->status == 202) && r->resp_fd < 0;
    if (c && keep) {
        const char *location = NULL;
        for (int i = 0; i < r->nhdr; i++)
            if (strcasecmp(r->hdr_name[i], "Location") == 0)
                location = r->hdr_value[i];
        rc = c->ops->idem_finish(c, ir->user_id, ir->key, ir->token, r->status, location,
                                 buf_cstr(&r->resp), now_us() + IDEM_TTL_US);
    } else if (c) {
        rc = c->ops->idem_abort(c, ir->user_id, ir->key, ir->token);
    }
    if (rc != STORE_OK)
        log_warn("req=%s: idempotency key not %s: %s", r->id, keep ? "kept" : "freed",
                 store_rc_name(rc));
}
