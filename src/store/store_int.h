/* store_int.h — what the SQLite (sqlite.c) and PostgreSQL (postgres.c) stores share,
 * for the backends only (in the spirit of curl's vtls_int.h): nothing above store.h
 * includes it. The record columns and their order, the updated_us bump, the list
 * statement keys, the search text as a LIKE pattern, when a search can use the
 * trigram index, the cache of list totals (lists.c), and the ops both backends have.
 *
 * Lists: a list query maps to a key of LQ_* bits (store_list_key); each backend builds
 * the SQL of a key from fixed fragments only (never from user text, which is bound)
 * and prepares it once per connection under that key. */
#ifndef INK_STORE_INT_H
#define INK_STORE_INT_H

#include "store/store.h"

typedef struct store_ops {
    const char *name; /* "sqlite" | "postgres" */
    unsigned caps;    /* store_cap_t bits: what the backend can do */
    bool list_probes; /* record_list calls list_query_t.probe */
    /* Optional: the backend's own per-store state (store_t.backend), made by
     * store_open and freed by store_close, after every other thread's connection. */
    void (*open)(store_t *s);
    void (*close)(store_t *s);
    /* Opens a connection for the calling thread. */
    store_conn_t *(*connect)(store_t *s, char *err, size_t errlen);
    void (*disconnect)(store_conn_t *c);
    /* Creates or upgrades the schema; safe when several processes start at once. */
    int (*migrate)(store_conn_t *c);
    /* STORE_OK when the database answers a trivial query. */
    int (*ping)(store_conn_t *c);

    /* Optional (NULL when a backend has none): a read session. Every operation
     * between the two reads one snapshot; a write ends the session first. For the
     * reads of one GET request: its key, then its records. */
    void (*read_begin)(store_conn_t *c);
    void (*read_end)(store_conn_t *c);

    /* Users, keys and usage (API.md §19; sqlite_users.c, pg_users.c). */
    int (*user_ensure)(store_conn_t *c, const char *name, int64_t *user_id);
    /* A new user; STORE_CONFLICT when the name is taken. */
    int (*user_create)(store_conn_t *c, const char *name, int64_t quota_words,
                       int64_t quota_images, arena_t *a, user_info_t *out);
    /* By id (name NULL) or by name (id 0). */
    int (*user_get)(store_conn_t *c, int64_t id, const char *name, arena_t *a,
                    user_info_t *out);
    /* By id ascending; limit < 0 = all. *total: every user. */
    int (*user_list)(store_conn_t *c, int64_t limit, int64_t offset, arena_t *a,
                     user_info_t **out, size_t *n, int64_t *total);
    /* NOTFOUND, or CONFLICT when the new name is taken. */
    int (*user_update)(store_conn_t *c, int64_t id, const user_patch_t *p, arena_t *a,
                       user_info_t *out);
    /* Removes the user and every row it owns, in every table (the backend's one list:
     * sqlite_users.c, pg_users.c), in one transaction; out gets the records removed and
     * every media key of them and their revisions (the caller removes the files and
     * tells of the deletions after: records_delete_user). */
    int (*user_delete)(store_conn_t *c, int64_t id, arena_t *a, user_removed_t *out);
    /* name: NULL or empty for none (stored in the key's own row: one statement) */
    int (*key_insert)(store_conn_t *c, int64_t user_id, const char *hash_hex, const char *prefix,
                      key_scope_t scope, int64_t expires_us, const char *name, int64_t *key_id);
    /* By SHA-256 hex of the key; NOTFOUND when unknown or revoked (expiry is the
     * caller's to check); with the user's quotas and its usage of period, or, period
     * NULL, without them (quotas -1, usage 0: one index lookup, for requests that do
     * not generate). */
    int (*key_auth)(store_conn_t *c, const char *hash_hex, const char *period, key_auth_t *out);
    /* By id ascending, of one user (user_id > 0) or all; limit < 0 = all. */
    int (*key_list)(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                    key_info_t **out, size_t *n, int64_t *total);
    int (*key_get)(store_conn_t *c, int64_t key_id, arena_t *a, key_info_t *out);
    int (*key_revoke)(store_conn_t *c, int64_t key_id); /* NOTFOUND when no such key */
    /* Adds to user's usage of period: one atomic upsert (exact across processes), in
     * the caller's transaction when one is open. */
    int (*usage_add)(store_conn_t *c, int64_t user_id, const char *period,
                     const usage_counts_t *add);
    /* True in *held when the user's Idempotency-Key is taken and would not be given to a
     * new request (idem_begin would replay it, or answer 409 or 422): not expired, and
     * done, or holding a kept answer, or in progress with a live lease. A create over
     * its quota with such a key goes on to get its replay (§11) instead of the 403. */
    int (*idem_held)(store_conn_t *c, int64_t user_id, const char *key, int64_t now_us,
                     bool *held);
    /* Every user (user_id 0) or one, by id ascending, with its usage of period (zeros
     * when none). */
    int (*usage_list)(store_conn_t *c, const char *period, int64_t user_id, int64_t limit,
                      int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total);
    /* Quota holds (store.h store_quota_hold; sqlite_quota.c, pg_quota.c). */
    int (*quota_hold)(store_conn_t *c, const quota_hold_t *h, int64_t *hold_id, int64_t *used);
    int (*quota_hold_end)(store_conn_t *c, int64_t hold_id, int64_t record_id);

    /* Users' own templates (API.md §18; sqlite_templates.c, pg_templates.c).
     * create: STORE_CONFLICT when the user already has `max` templates (not deleted).
     * get: the user's template id (a deleted one only with with_deleted); it may run
     * inside the caller's open transaction (an idem_keep_t's render names a document's
     * template: api/templates_api.c), as a read of it.
     * list: the user's templates, not deleted, by id ascending.
     * update: NOTFOUND when missing or deleted; when p->name is given, every document
     * of the user with this template moves its updated_us forward in the same
     * transaction (its rendering shows the name: api/rcache.h).
     * delete: marks it deleted (NOTFOUND when missing or already deleted). */
    int (*template_create)(store_conn_t *c, int64_t user_id, const char *name,
                           const char *description, const char *instruction, int max,
                           arena_t *a, custom_template_t *out);
    int (*template_get)(store_conn_t *c, int64_t user_id, int64_t id, bool with_deleted,
                        arena_t *a, custom_template_t *out);
    int (*template_list)(store_conn_t *c, int64_t user_id, arena_t *a, custom_template_t **out,
                         size_t *n);
    int (*template_update)(store_conn_t *c, int64_t user_id, int64_t id,
                           const template_patch_t *p, arena_t *a, custom_template_t *out);
    int (*template_delete)(store_conn_t *c, int64_t user_id, int64_t id);

    /* Webhooks (API.md §22): store_webhooks_int.h (sqlite_webhooks.c, pg_webhooks.c). */
    const struct store_webhook_ops *webhooks;
    /* inkwell migrate (store_copy_int.h: sqlite_copy.c, pg_copy.c) */
    const struct store_copy_ops *copy;

    /* Records. create: in one transaction inserts the record (state "queued",
     * created = updated = now) and its job; sets rec->id, timestamps and *job_id.
     * keep (or NULL): its key's answer, kept in the same transaction
     * (store_keep_answer). */
    int (*record_create)(store_conn_t *c, record_t *rec, idem_keep_t *keep, int64_t *job_id);
    /* Documents only: inserts n documents whose text is already generated (state
     * "completed", result and words as given), with no job, all in one transaction
     * (all or none); sets each one's id, state and timestamps. For generators fast
     * enough to run inside the creating request (provider_t.text_inline), through
     * the group commit of writer.h. keeps (or NULL; each may be NULL): recs[i]'s
     * key answer, kept in the same transaction (store_keep_answer). */
    int (*docs_create_completed)(store_conn_t *c, record_t *const *recs,
                                 idem_keep_t *const *keeps, size_t n);
    int (*record_get)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, arena_t *a,
                      record_t *out);
    /* Optional (NULL when a backend has none): record_get, but probe is asked first
     * with the row's updated_us; when it answers true only kind, id, updated_us and
     * probed are set. */
    int (*record_get_probed)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                             record_probe_fn probe, void *probe_arg, arena_t *a,
                             record_t *out);
    /* Applies the patch (updated = now) and returns the record as it now is. */
    int (*record_update)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                         const record_patch_t *p, arena_t *a, record_t *out);
    /* Deletes the record, its revisions and any job of it, in one transaction.
     * *keys and *n get every media key the image and its revisions referred to (each once)
     * so the caller can remove the files. */
    int (*record_delete)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                         arena_t *a, const char ***keys, size_t *n);
    /* Deletes the user's records among ids[0..n) (ascending, distinct) as record_delete
     * does each, all in one transaction (API.md §23: all or nothing). *done gets the ids
     * deleted (ascending), *keys every media key removed (each once). */
    int (*record_delete_many)(store_conn_t *c, rec_kind_t kind, int64_t user_id,
                              const int64_t *ids, size_t n, arena_t *a, const char ***keys,
                              size_t *nkeys, int64_t **done, size_t *ndone);
    /* Tags, bulk actions and drafts (API.md §23, §24): as their wrappers in store.h. */
    int (*tags_list)(store_conn_t *c, int64_t user_id, arena_t *a, tag_count_t **out,
                     size_t *n);
    int (*record_bulk)(store_conn_t *c, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                       size_t n, bulk_action_t action, const char *const *tags, int ntags,
                       arena_t *a, int64_t **done, size_t *ndone);
    int (*draft_put)(store_conn_t *c, int64_t user_id, int64_t id, const char *result,
                     int64_t base, arena_t *a, draft_t *out);
    int (*draft_get)(store_conn_t *c, int64_t user_id, int64_t id, arena_t *a, draft_t *out);
    int (*draft_delete)(store_conn_t *c, int64_t user_id, int64_t id);
    int (*record_list)(store_conn_t *c, rec_kind_t kind, const list_query_t *q, arena_t *a,
                       record_list_t *out);

    /* Jobs. claim: takes the oldest job that is unclaimed or whose lease has run out
     * (PostgreSQL: FOR UPDATE SKIP LOCKED), gives it a new random token, lease_until =
     * now + lease_s, attempts + 1, and moves its record to "generating"; NOTFOUND when
     * there is none. renew/complete/fail only act while the token still matches
     * (else STALE); complete and fail remove the job. renew with lease_s <= 0 releases
     * the job unfinished (a shutdown): claimable at once, and the attempt it used is
     * given back, so only takeovers of a dead owner's job count as attempts. */
    /* busy: a JSON array of the ids of the jobs this process runs now, or NULL: never
     * claimed, whatever their lease (a live job is never taken over by its own
     * process: its lease may run out while the store refuses every write, a full disk). */
    int (*job_claim)(store_conn_t *c, double lease_s, const char *busy, arena_t *a, job_t *out);
    int (*job_renew)(store_conn_t *c, int64_t job_id, const char *token, double lease_s);
    /* Documents: result + words. Images: media_key (+ revised_prompt, may be NULL).
     * The record becomes "completed"; *out (unless NULL) gets it as stored, strings in
     * a, so nobody reads it again. */
    int (*job_complete)(store_conn_t *c, const job_t *job, const char *result, int64_t words,
                        const char *media_key, const char *revised_prompt, arena_t *a,
                        record_t *out);
    /* Revisions (API.md §16): job_complete makes the next revision (source generation,
     * or regeneration for a job->regen, whose inputs become the record's) and sets the
     * record's revision; a record_update of a document's result makes one (source
     * edit; usage and truncation cleared). */
    /* The record becomes "failed" with error set — or, when it has a revision (a
     * regeneration failed), "completed" again with its latest revision and error set. */
    int (*job_fail)(store_conn_t *c, const job_t *job, const char *error);
    /* Regeneration: in one transaction, while the record (user_id, in->id) is
     * completed or failed (else STORE_BUSY; NOTFOUND when missing), moves it to
     * "queued" and queues a job (regen) with in's input fields; keep as in
     * record_create (its render gets the record as it now stands). *out: the record.
     * act (or NULL): the job is that action's (§17); its revision's source is
     * "action" with the action's name. */
    int (*record_regenerate)(store_conn_t *c, const record_t *in, const rec_action_t *act,
                             idem_keep_t *keep, arena_t *a, record_t *out, int64_t *job_id);
    /* A document regenerated already (generated in the request, no job): in holds the
     * new inputs and result (words, usage); in one transaction, as record_regenerate and
     * job_complete would (BUSY, NOTFOUND alike; the event sequence +2: queued and
     * completed), the next revision ("regeneration"), the usage (§19) and keep, and with
     * cap > 0 the removal of the revisions past the newest cap (records' revision cap,
     * API.md §16: a document's revisions have no picture, so nothing is left to do after
     * the commit). *out is the record as stored. */
    int (*record_regenerated)(store_conn_t *c, const record_t *in, int cap, idem_keep_t *keep,
                              arena_t *a, record_t *out);
    /* Newest first, per_page from page (1-based); *total all of them. NOTFOUND when the
     * record is not the user's. */
    int (*revision_list)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                         int per_page, int64_t page, arena_t *a, revision_t **items,
                         size_t *n, int64_t *total);
    int (*revision_get)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        int64_t number, arena_t *a, revision_t *out);
    /* Makes a new revision (source restore) with revision number's content (images:
     * with media_key, the copy of its picture made by the caller) and shows it on the
     * record; *out the record. NOTFOUND when the record or the revision is missing. */
    int (*revision_restore)(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                            int64_t number, const char *media_key, arena_t *a,
                            record_t *out);
    /* Removes the revisions of record id older than its newest `keep`; *keys and *n the
     * media keys they referred to (the caller removes the files). */
    int (*revision_trim)(store_conn_t *c, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                         const char ***keys, size_t *n);
    /* Number of jobs not yet finished (for /readyz figures and tests). */
    int (*job_count)(store_conn_t *c, int64_t *n);
    /* The queue as /readyz and /metrics show it: jobs waiting for a worker (never
     * claimed, or their lease ran out) and jobs a worker holds now. */
    int (*job_counts)(store_conn_t *c, int64_t *queued, int64_t *running);
    /* Whether a job is still there (not yet completed or failed): *exists. */
    int (*job_exists)(store_conn_t *c, int64_t job_id, bool *exists);
    /* Optional (NULL when a backend is shared by several processes): drops every job
     * lease, so each job is claimable at once; *n gets how many were held. Only for a
     * server that knows no other process can hold one (SQLite, with the data-directory
     * lock of main.c): leases left by a dead predecessor need not run out first. */
    int (*job_release_all)(store_conn_t *c, int64_t *n);

    /* Sign-in (API.md §21; sqlite_users.c, pg_users.c).
     * user_secret: by name, the user's id and password hash (*hash NULL: none);
     * NOTFOUND when no such user. user_password: sets the hash (NULL: none) and ends
     * every session of the user but keep (0: all) in one transaction; *ended how many.
     * session_insert: a new session (removing the expired and idle ones first).
     * session_auth: by the SHA-256 hex of its id, with the user's quotas and usage of
     * period (NULL: none read), NOTFOUND when unknown or made from a key revoked since
     * (expiry, idle and absolute, is the caller's to check). session_touch: last seen.
     * session_end: id > 0 ends that session (of user_id when > 0), else every session of
     * user_id but keep; *ended how many. session_list: the user's sessions by id.
     * signin_failures: the failures counted for bucket in minute (add: one more first,
     * removing minutes before it). */
    int (*user_secret)(store_conn_t *c, const char *name, arena_t *a, int64_t *user_id,
                       const char **hash);
    int (*user_password)(store_conn_t *c, int64_t user_id, const char *hash, int64_t keep,
                         int64_t *ended);
    int (*session_insert)(store_conn_t *c, const session_new_t *s, int64_t *id);
    int (*session_auth)(store_conn_t *c, const char *hash_hex, const char *period,
                        session_auth_t *out);
    int (*session_touch)(store_conn_t *c, int64_t id, int64_t now_us);
    int (*session_end)(store_conn_t *c, int64_t user_id, int64_t id, int64_t keep,
                       int64_t *ended);
    int (*session_list)(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset,
                        arena_t *a, session_info_t **out, size_t *n, int64_t *total);
    int (*signin_failures)(store_conn_t *c, const char *bucket, int64_t minute, bool add,
                           int64_t *count);
    /* Single sign-on (API.md §21): store.h store_oidc_* and store_user_oidc_*. */
    int (*oidc_flow_put)(store_conn_t *c, const oidc_flow_t *f);
    int (*oidc_flow_take)(store_conn_t *c, const char *state_hash, int64_t now_us, arena_t *a,
                          oidc_flow_t *out);
    int (*user_oidc_find)(store_conn_t *c, const char *iss, const char *sub, int64_t *user_id);
    int (*user_oidc_link)(store_conn_t *c, int64_t id, const char *iss, const char *sub);

    /* Rate limiting, GCRA (api/ratelimit.c): one atomic step on the bucket's theoretical
     * arrival time (TAT; an absent bucket has TAT = now). With t = max(TAT, now): when
     * t + interval - now <= period the hit is allowed and TAT becomes t + interval;
     * else it is refused and TAT stays. *tat_us gets the TAT after the step, *allowed
     * the outcome. With prune, buckets whose TAT has passed (the same as absent) are
     * deleted first. */
    int (*rate_gcra)(store_conn_t *c, const char *bucket, int64_t now_us, int64_t interval_us,
                     int64_t period_us, bool prune, int64_t *tat_us, bool *allowed);

    /* Idempotency keys (API.md §11), one row per (user, key), atomic across processes.
     * begin: takes the key when it is free — absent, expired (expires_us < now), or in
     * progress with its lease (lease_until_us) run out — as in progress with a new
     * token, the digest, lease now + lease_us and expiry now + ttl_us: IDEM_NEW.
     * Otherwise tells what holds it (IDEM_BUSY, IDEM_MISMATCH when the digest differs,
     * IDEM_REPLAY with the kept answer, strings in a). With prune, every expired row is
     * deleted first. finish keeps the answer (state done, expiry now + ttl) and abort
     * forgets the key, both only while the token still holds it in progress (else
     * STORE_STALE). A key in progress with a kept answer (idem_keep_t, not final)
     * whose lease ran out is IDEM_REPLAY with that answer, not free. A SQLite server
     * at start (job_release_all) finishes every in-progress key with a kept answer
     * and drops the others: their requests died with the previous process.
     * keep: what finish does, inside the caller's open transaction, with k's token,
     * status and expiry, done when k->final (else the key stays in progress). */
    int (*idem_begin)(store_conn_t *c, int64_t user_id, const char *key, const char *digest,
                      int64_t now_us, int64_t lease_us, int64_t ttl_us, bool prune, arena_t *a,
                      idem_t *out);
    int (*idem_finish)(store_conn_t *c, int64_t user_id, const char *key, const char *token,
                       int status, const char *location, const char *body, int64_t expires_us);
    int (*idem_abort)(store_conn_t *c, int64_t user_id, const char *key, const char *token);
    int (*idem_keep)(store_conn_t *c, const idem_keep_t *k, const char *location,
                     const char *body);

    /* Every media key an image or one of its revisions refers to (any user), sorted by strcmp, strings in a:
     * what a starting server checks the media directory against (main.c). */
    int (*media_keys)(store_conn_t *c, arena_t *a, const char ***keys, size_t *n);

    /* Optional (NULL when one process owns the store): events between processes.
     * job_progress appends pieces to the text so far of a running job when that text
     * is start bytes long (so the row only ever holds the generation's first bytes:
     * pieces that follow a gap, after a send that failed, are not kept), keeps seq (the
     * number of the last of them, records.h) with it (while the token matches, else
     * STALE) and sends payload to the listeners, in one statement; a claim empties
     * both. record_partial reads them back (*text NULL and *seq 0 when none yet;
     * NOTFOUND when the record has no job). notify sends payload to every listener (of every process).
     * listen_start runs a thread with a connection of its own that calls fn with each
     * payload, and connected after each (re)connection (notifications may have been
     * missed before it). */
    int (*job_progress)(store_conn_t *c, int64_t job_id, const char *token, int64_t start,
                        const char *pieces, int64_t seq, const char *payload);
    int (*record_partial)(store_conn_t *c, rec_kind_t kind, int64_t id, arena_t *a,
                          const char **text, int64_t *seq);
    int (*notify)(store_conn_t *c, const char *payload);
    struct store_listener *(*listen_start)(store_t *s, void (*fn)(void *arg, const char *payload),
                                           void (*connected)(void *arg), void *arg);
    void (*listen_stop)(struct store_listener *l);
} store_ops_t;

/* The shared handle; backends put their settings behind it. */
struct store {
    const store_ops_t *ops;
    char *url;       /* postgres://... or the sqlite file path */
    /* PostgreSQL: the statements' URL when it differs from url (a transaction-pooling
     * PgBouncer, --database-pooled); url keeps LISTEN and the owner lock. NULL: url.
     * Set before the first store_conn; freed by the backend's close. */
    char *pooled_url;
    void *priv;
    void *backend; /* ops->open's state, or NULL */
};

extern const store_ops_t store_sqlite_ops;
extern const store_ops_t store_postgres_ops;

/* The columns of a record row, in the order both backends read them. */
#define DOC_COLS                                                                           \
    "id, user_id, name, favorite, state, error, created_us, updated_us, prompt, "         \
    "creativity, template_id, result, words, prompt_tokens, completion_tokens, truncated, " \
    "revision, tone, language, length, event_seq, tags, has_draft"
#define IMG_COLS                                                                           \
    "id, user_id, name, favorite, state, error, created_us, updated_us, description, "    \
    "resolution, style, media_key, revised_prompt, NULL, NULL, false, revision, NULL, NULL, " \
    "NULL, event_seq, tags, false"
#define REC_NCOLS 23
/* The columns of a revision row (revision_t), in the order both backends read them. A
 * document's latest revision keeps no copy of its text (result NULL: SQLite migration
 * 16, PostgreSQL 14): it is read from the document. */
#define REVDOC_COLS                                                                        \
    "number, source, action, created_us, prompt, creativity, template_id, tone, language, " \
    "length, COALESCE(result, (SELECT d0.result FROM documents d0 WHERE d0.id = document_id)), " \
    "words, prompt_tokens, completion_tokens, truncated"
#define REVIMG_COLS                                                                        \
    "number, source, action, created_us, description, resolution, style, media_key, "      \
    "revised_prompt"

/* Every change to a record moves updated_us strictly forward, so (id, updated_us) names
 * one version of it (api/rcache.h relies on this). greatest: the SQL dialect's
 * two-argument maximum; now: the parameter holding now_us(). */
#define STORE_BUMP(greatest, now) "updated_us = " greatest "(" now ", updated_us + 1)"
/* The record's event sequence (records.h) moved on by n (an SQL expression), in the
 * statement of the change the events describe: claim 1, complete and fail 1 + the text
 * pieces the generation published (job_t.pieces), regenerate 1, restore 1, an edit of
 * the result 1; a create stores 1 (the column's default). */
#define STORE_SEQ(n) "event_seq = event_seq + " n

/* List statement keys. */
enum {
    LQ_IMG = 1 << 0,
    LQ_SEARCH_NAME = 1 << 1,
    LQ_SEARCH_RESULT = 1 << 2,
    LQ_FILTER = 1 << 3, /* documents: template_id; images: resolution */
    LQ_STYLE = 1 << 4,
    LQ_FAVORITE = 1 << 5,
    LQ_BY_NAME = 1 << 6,
    LQ_ASC = 1 << 7,
    LQ_INDEXED = 1 << 8, /* the search has three characters or more: trigrams serve it */
    /* backend variants of a key, not set by store_list_key */
    LQ_COUNT = 1 << 9,   /* the count of the key's rows, no order, no page */
    LQ_KEYS = 1 << 10,   /* only id and updated_us (a list with a probe) */
    LQ_WINDOW = 1 << 11, /* the page looked for among the first rows of the order only */
    LQ_SEEK = 1 << 12,   /* only the rows after a page boundary's key (lists.c) */
    LQ_BOUNDS = 1 << 13, /* only the order's keys (id, and name when by name) */
    LQ_TAG = 1 << 14, /* only the records carrying list_query_t.tag (API.md §23) */
    LQ_SLOTS = 1 << 15
};
#define LQ_SEARCH (LQ_SEARCH_NAME | LQ_SEARCH_RESULT)
#define LQ_FILTERED (LQ_SEARCH | LQ_FILTER | LQ_STYLE | LQ_FAVORITE | LQ_TAG)

/* ---- tags (tags.c; API.md §23) ----------------------------------------------------------
 * The schema (both backends): tags (id, user_id, fold, name; one row per user and
 * folding: its spelling) and record_tags (user_id, tag_id, kind, record_id, pos: which
 * record carries which tag, pos its place in the record's list), and the record's own
 * `tags` column, the JSON array of its tags' spellings that it shows. */
/* The JSON array of names[0..n) (NULL when n is 0), in a. */
const char *store_tags_json(const char *const *names, int n, arena_t *a);
/* A record's tags old[0..nold) after a bulk BULK_TAG (add[0..nadd) appended unless
 * already there under the folding) or BULK_UNTAG (those taken away), in a. */
void store_tags_merge(const char *const *old, int nold, bulk_action_t action,
                      const char *const *add, int nadd, arena_t *a, const char ***out, int *n);

/* The key of a list query (order, filters, search field, LQ_INDEXED). */
unsigned store_list_key(rec_kind_t kind, const list_query_t *q);

/* '%' + search with '%', '_' and '\' escaped by '\' + '%' (ESCAPE '\'); with
 * fold_ascii, A-Z lowered (for a LIKE against lower(column)). */
char *store_like_pattern(const char *search, bool fold_ascii, arena_t *a);

/* ---- totals of filtered lists (lists.c) ------------------------------------------------
 * A filtered list's total (search, template, favorite, ...) costs a count over every
 * matching row. Both schemas keep, beside each user's record count, a version that
 * every insert, delete and change of a listed or searched column moves forward (by
 * triggers, in the writing transaction). A total counted at version v is kept here and
 * answered again while the user's version is still v. The version is read in the same
 * snapshot as the rows it describes. Thread-safe; bounded (a fixed number of slots,
 * the newest entry wins a slot). */
typedef struct store_counts store_counts_t;
store_counts_t *store_counts_new(void);
void store_counts_free(store_counts_t *cc);
/* True with *total set when key k of q was counted at this version. */
bool store_counts_get(store_counts_t *cc, unsigned k, const list_query_t *q, int64_t version,
                      int64_t *total);
void store_counts_put(store_counts_t *cc, unsigned k, const list_query_t *q, int64_t version,
                      int64_t total);
/* The store's cache (made by store_open). */
store_counts_t *store_counts(store_t *s);

/* ---- page boundaries of unsearched lists (lists.c) --------------------------------------
 * `?page=N` of a list without search reads no row it skips: the key (id, or name and
 * id) of every STORE_PAGE_EVERY-th row of the order is kept here per user, list key
 * (with its order and filters) and version of the user's records (as for totals), and
 * a page is read by a keyset seek past the nearest boundary at or before its offset
 * plus an OFFSET shorter than STORE_PAGE_EVERY. Boundaries are found by walking the
 * order's index once, only as deep as the pages asked for, and extended from the
 * deepest one known. Block j (j >= 1) is the key of row j * STORE_PAGE_EVERY - 1 of the
 * order (rows from 0): the rows after it start at offset j * STORE_PAGE_EVERY.
 * Thread-safe; bounded (a fixed number of entries, the newest wins a slot, and at most
 * PAGE_ENTRY_BYTES of keys per entry). Searches keep OFFSET. */
#define STORE_PAGE_EVERY 256

typedef struct {
    int64_t id;
    const char *name; /* the name order only; else NULL */
} store_page_key_t;

typedef struct store_pages store_pages_t;
store_pages_t *store_pages_new(void);
void store_pages_free(store_pages_t *pc);
/* The deepest boundary known for key k of q at or before block j, copied into a:
 * returns its block number (0: none, the order's start) and sets *key and *version
 * (the version the entry was built at; the caller checks it). */
int64_t store_pages_get(store_pages_t *pc, unsigned k, const list_query_t *q, int64_t j,
                        arena_t *a, store_page_key_t *key, int64_t *version);
/* Records keys[i] as the boundary of block from + 1 + i at this version. An entry of
 * another version is replaced only from block 0; a gap is ignored. */
void store_pages_put(store_pages_t *pc, unsigned k, const list_query_t *q, int64_t version,
                     int64_t from, const store_page_key_t *keys, size_t n);
/* The store's cache (made by store_open). */
store_pages_t *store_pages(store_t *s);

/* The ops every backend has, named PREFIX_op (e.g. sq_record_get), for its ops table. */
#define STORE_OPS_COMMON(p)                                                                \
    .connect = p##_connect, .disconnect = p##_disconnect, .migrate = p##_migrate,         \
    .ping = p##_ping, .user_ensure = p##_user_ensure, .key_insert = p##_key_insert,       \
    .key_auth = p##_key_auth, .key_list = p##_key_list, .key_revoke = p##_key_revoke,     \
    .user_create = p##_user_create, .user_get = p##_user_get, .user_list = p##_user_list,  \
    .user_update = p##_user_update, .user_delete = p##_user_delete,                      \
    .key_get = p##_key_get, .usage_add = p##_usage_add, .usage_list = p##_usage_list,      \
    .idem_held = p##_idem_held,                                                            \
    .quota_hold = p##_quota_hold, .quota_hold_end = p##_quota_hold_end,                   \
    .record_create = p##_record_create, .docs_create_completed = p##_docs_create_completed, \
    .record_get = p##_record_get, .record_update = p##_record_update,                     \
    .record_delete = p##_record_delete, .record_list = p##_record_list,                   \
    .record_delete_many = p##_record_delete_many,                                          \
    .job_claim = p##_job_claim, .job_renew = p##_job_renew,                               \
    .job_complete = p##_job_complete, .job_fail = p##_job_fail,                           \
    .job_count = p##_job_count, .job_counts = p##_job_counts, .rate_gcra = p##_rate_gcra,    \
    .job_exists = p##_job_exists,                                                            \
    .idem_begin = p##_idem_begin, .idem_finish = p##_idem_finish,                         \
    .idem_abort = p##_idem_abort, .idem_keep = p##_idem_keep,                               \
    .media_keys = p##_media_keys, .record_regenerate = p##_record_regenerate,             \
    .record_regenerated = p##_record_regenerated,                                           \
    .revision_list = p##_revision_list, .revision_get = p##_revision_get,                 \
    .revision_restore = p##_revision_restore, .revision_trim = p##_revision_trim,          \
    .template_create = p##_template_create, .template_get = p##_template_get,             \
    .template_list = p##_template_list, .template_update = p##_template_update,           \
    .template_delete = p##_template_delete,                                                \
    .user_secret = p##_user_secret, .user_password = p##_user_password,                   \
    .session_insert = p##_session_insert, .session_auth = p##_session_auth,               \
    .session_touch = p##_session_touch, .session_end = p##_session_end,                   \
    .session_list = p##_session_list, .signin_failures = p##_signin_failures,             \
    .oidc_flow_put = p##_oidc_flow_put, .oidc_flow_take = p##_oidc_flow_take,             \
    .user_oidc_find = p##_user_oidc_find, .user_oidc_link = p##_user_oidc_link,           \
    .tags_list = p##_tags_list,                                                            \
    .record_bulk = p##_record_bulk, .draft_put = p##_draft_put, .draft_get = p##_draft_get, \
    .draft_delete = p##_draft_delete, .webhooks = &p##_webhook_ops, .copy = &p##_copy_ops

#include "store/store_webhooks_int.h" /* the webhook ops (API.md §22) */
#include "store/store_copy_int.h"     /* the migrate ops (API.md §25) */

#endif
