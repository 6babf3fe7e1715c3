/* store.h — the storage interface. SQLite (sqlite.c) and PostgreSQL (postgres.c)
 * implement store_ops_t; nothing above this header knows which one runs.
 *
 * Every behaviour here is identical on both backends:
 *  - timestamps are integer microseconds since the epoch (UTC);
 *  - ids are positive, never reused after a delete;
 *  - every query for a record is by (user_id, id): another user's record is
 *    STORE_NOTFOUND, exactly like a missing one;
 *  - search is a substring match under Unicode default case folding (API.md §15,
 *    core/unicode.h); '%', '_' and '\' in the search text are literal; name order is
 *    the CLDR root collation; ties, and sort by id, break by id in the same direction;
 *  - strings handed in are valid UTF-8 without NUL (the HTTP layer checks);
 *  - every change to a record moves its updated_us strictly forward (it becomes
 *    max(now, updated_us + 1)), so (id, updated_us) names one version of a record.
 *
 * Connections: one store_conn_t per thread (store_conn() caches it in thread-local
 * storage). A backend that loses its server reconnects on the next call and answers
 * STORE_UNAVAILABLE meanwhile.
 *
 * Memory: every string or array returned is allocated from the caller's arena. */
#ifndef INK_STORE_H
#define INK_STORE_H

#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    STORE_OK = 0,
    STORE_NOTFOUND = 1,  /* no such row (or not this user's) */
    STORE_STALE = 2,     /* a job lease token no longer matches: the effect was not applied */
    STORE_CONFLICT = 3,  /* a unique value already exists */
    STORE_BUSY = 4,      /* the record is being generated (a regenerate must wait) */
    STORE_CHANGED = 5,   /* an action's outcome: another revision was stored since it was
                          * asked (API.md §24); the job ended, its record's error is
                          * STORE_CHANGED_ERROR, nothing of it stored or counted */
    STORE_UNAVAILABLE = -1, /* the database cannot be reached now: 503 */
    STORE_ERROR = -2,       /* anything else: logged, 500 */
} store_rc_t;

/* The error an action that lost the race to another revision leaves (API.md §24). */
#define STORE_CHANGED_ERROR "The document changed while it was being rewritten."

typedef enum { KIND_DOC = 0, KIND_IMG = 1 } rec_kind_t;

/* A record's generation state; stored as its name. */
typedef enum { REC_QUEUED = 0, REC_GENERATING, REC_COMPLETED, REC_FAILED } rec_state_t;

/* "queued", "generating", "completed", "failed". */
const char *rec_state_name(rec_state_t s);
/* The state a stored name stands for (REC_FAILED for anything unknown). */
rec_state_t rec_state_parse(const char *name);

/* A document or an image. Fields of the other kind are zero/NULL. */
typedef struct {
    rec_kind_t kind;
    int64_t id, user_id;
    const char *name;
    bool favorite;
    rec_state_t state;
    const char *error; /* NULL unless failed */
    int64_t created_us, updated_us;
    /* documents */
    const char *prompt;
    double creativity;
    int template_id;
    const char *result; /* NULL until generated */
    int64_t words;
    /* The provider's token usage (-1 when it did not say) and whether the model stopped
     * at its output limit. A document's job_complete stores job->rec's three;
     * docs_create_completed stores each record's. */
    int64_t prompt_tokens, completion_tokens;
    bool truncated;
    /* images */
    const char *description;
    const char *resolution;     /* "1024x1024" ... */
    const char *style;          /* "vivid" | "natural" | NULL */
    const char *media_key;      /* NULL until generated; the media store's key */
    const char *revised_prompt; /* NULL unless the provider revised the description */
    /* documents: the writing options of API.md §17 (NULL on input = the default:
     * "neutral", "en", "medium") */
    const char *tone, *language, *length;
    /* documents with a custom template (API.md §18): its name, when the caller knows it
     * (not a column: api/templates_api.c resolves it for rendering); else NULL */
    const char *template_name;
    /* The number of the latest revision (API.md §16); 0 while there is none. */
    int64_t revision;
    /* The number of the record's latest event (records.h: its event sequence), moved
     * on by the store with each change of its life; 1 once created. */
    int64_t event_seq;
    /* From a list with a probe (list_query_t.probe): the caller already has this
     * version of the record; only kind, id and updated_us are set. */
    bool probed;
    /* Tags (API.md §23). Out: the record's tags as stored, a JSON array of their
     * spellings in the order given, or NULL for none. In (record_create and
     * docs_create_completed): tags[0..ntags), normalised and distinct under the
     * folding (api/tags.c); the store gives each the spelling the user already has. */
    const char *tags_json;
    const char *const *tags;
    int ntags;
    /* documents: whether a draft is kept beside it (API.md §24) */
    bool has_draft;
} record_t;

/* True when the record's generation has ended (completed or failed). */
static inline bool record_finished(const record_t *rec)
{
    return rec->state == REC_COMPLETED || rec->state == REC_FAILED;
}

/* A copy of src whose strings are copied into a (so it outlives src's arena). */
void record_copy(arena_t *a, record_t *dst, const record_t *src);

/* A partial update: NULL / -1 means "leave as is". */
typedef struct {
    const char *name;
    const char *result; /* documents only; words is set with it */
    int64_t words;
    int favorite; /* -1, 0, 1 */
    /* set_tags: the record's tags become tags[0..ntags) (normalised and distinct, as
     * record_t.tags); else they stay */
    bool set_tags;
    const char *const *tags;
    int ntags;
} record_patch_t;

/* A user's tag in use (API.md §23: GET /tags): its spelling and how many documents and
 * images carry it. */
typedef struct {
    const char *name;
    int64_t documents, images;
} tag_count_t;

/* Bulk actions other than delete and export (API.md §23). */
typedef enum { BULK_FAVORITE = 0, BULK_UNFAVORITE, BULK_TAG, BULK_UNTAG } bulk_action_t;
#define STORE_MAX_TAGS 20

/* A document's draft (API.md §24). */
typedef struct {
    const char *result;
    int64_t base_revision;
    int64_t updated_us;
    int64_t revision; /* the document's current revision (stale: revision > base) */
} draft_t;

/* Asked for each row of a list page, in page order, with the row's updated_us: true
 * when the caller already holds that exact version (e.g. rendered), so the row's other
 * columns need not be read. */
typedef bool (*record_probe_fn)(void *arg, rec_kind_t kind, int64_t id, int64_t updated_us);

typedef struct {
    int64_t user_id;
    const char *search;    /* NULL or "" = no search */
    bool search_result;    /* documents: search `result` instead of `name` */
    int template_id;       /* documents: 0 = any */
    const char *resolution; /* images: NULL = any */
    const char *style;      /* images: NULL = any ("vivid" | "natural") */
    int favorite;          /* -1 any, 0, 1 */
    const char *tag;       /* the folded tag the rows carry (API.md §23); NULL = any */
    bool sort_by_name;     /* else by id */
    bool asc;              /* else desc */
    int per_page;          /* 10, 25, 50, 100 */
    int64_t page;          /* >= 1 */
    /* Optional. A backend that uses it says so (store_ops_t.list_probes); one that
     * does not returns whole rows and never calls it. */
    record_probe_fn probe;
    void *probe_arg;
} list_query_t;

typedef struct {
    record_t *items;
    size_t n;
    int64_t total; /* all matching rows of this user, across pages */
} record_list_t;

/* What a key may do (API.md §19): write (everything a user does), read (GET only),
 * admin (the /admin routes only). Stored as its name. */
typedef enum { SCOPE_WRITE = 0, SCOPE_READ = 1, SCOPE_ADMIN = 2 } key_scope_t;
const char *key_scope_name(key_scope_t s);
/* False when name is not a scope. */
bool key_scope_parse(const char *name, key_scope_t *out);

typedef struct {
    int64_t id, user_id;
    const char *user_name;
    const char *prefix; /* the key's first characters, e.g. "ink_3fa9c2" */
    key_scope_t scope;
    int64_t created_us;
    int64_t revoked_us; /* 0 = active */
    int64_t expires_us; /* 0 = never */
    const char *name;   /* NULL = none given (POST /keys) */
} key_info_t;

/* A user and its monthly quotas (-1 = none). */
typedef struct {
    int64_t id;
    const char *name;
    int64_t quota_words, quota_images;
    int64_t created_us;
    bool admin; /* role admin (API.md §21); else member */
} user_info_t;

/* A partial change of a user: NULL name / false set_* leave it as it is. */
typedef struct {
    const char *name;
    bool set_words, set_images;
    int64_t quota_words, quota_images; /* -1 = none */
    const char *role; /* "admin" or "member"; NULL leaves it (API.md §21) */
} user_patch_t;

/* What a user generated in one period (a calendar month, "YYYY-MM", UTC). */
typedef struct {
    int64_t words, images, prompt_tokens, completion_tokens;
} usage_counts_t;

/* One user's usage of a period, with its quotas (store.h usage_list). */
typedef struct {
    user_info_t user;
    usage_counts_t used;
} usage_row_t;

/* A key as authentication finds it, with its user's quotas and usage of the period
 * asked for, in the same lookup (no second round trip before a create); without a
 * period, quotas -1 and usage 0. */
typedef struct {
    int64_t user_id, key_id;
    key_scope_t scope;
    int64_t expires_us; /* 0 = never */
    int64_t quota_words, quota_images; /* -1 = none */
    usage_counts_t used;
} key_auth_t;

/* ---- sessions (API.md §21; auth/session.c) ---- */

/* A new session: its id's SHA-256 (hex), its CSRF token, scope, the key it was made
 * from (0: a password or OIDC sign-in), times. idle_before: sessions last seen before it
 * (and those past their expiry) are removed on the way. */
typedef struct {
    int64_t user_id, key_id;
    const char *hash_hex, *csrf, *user_agent;
    key_scope_t scope;
    int64_t now_us, expires_us, idle_before_us;
} session_new_t;

/* A session as a request's cookie finds it: k as a key's lookup would give it (key_id:
 * the key the session was made from, 0 for none; expires_us: that key's expiry, 0 for
 * none), with the session's own fields. The key, when there is one, is not revoked. */
typedef struct {
    key_auth_t k;
    int64_t session_id, created_us, last_seen_us, expires_us;
    char csrf[64];
    bool admin; /* the user's role */
} session_auth_t;

typedef struct {
    int64_t id, created_us, last_seen_us;
    const char *user_agent; /* may be NULL */
} session_info_t;

/* A claimed generation job, with the inputs of its record. */
typedef struct {
    int64_t id;
    char token[33];   /* the lease token this claim holds */
    int attempts;     /* claims so far, this one included */
    /* A regeneration (API.md §16): rec's input fields are the job's own (the record
     * keeps showing its latest revision until this one is complete). */
    bool regen;
    /* An action (API.md §17; a regeneration too): its name, NULL for none, and the
     * selection in code points of the record's result (-1 and -1: the whole text). */
    const char *action;
    int64_t sel_start, sel_end;
    /* An action: the record's revision it was asked on (API.md §24: job_complete stores
     * its outcome only on that revision); -1 (or 0) for none. */
    int64_t base_revision;
    record_t rec;     /* kind, id, user_id and the input fields */
    /* Set by the worker before job_complete / job_fail: the text pieces its generation
     * published (each one an event of the record's sequence, records.h). */
    int64_t pieces;
    /* Set before job_complete of an action (API.md §17): the part of the new text it
     * rewrote, [part_start, part_end) in code points, kept with its revision (a stream
     * of the action resumed after it completed starts from them: api/stream.c). */
    bool part;
    int64_t part_start, part_end;
} job_t;

/* What a regeneration's job carries for an action (API.md §17), or NULL for none. */
typedef struct {
    const char *name;          /* "improve", "shorten" ... */
    int64_t sel_start, sel_end; /* code points; -1 and -1 = the whole text */
} rec_action_t;

/* Where a revision came from (API.md §16), stored as its name. */
typedef enum { SRC_GENERATION = 0, SRC_REGENERATION, SRC_ACTION, SRC_EDIT, SRC_RESTORE } rev_source_t;
const char *rev_source_name(rev_source_t s);

/* One revision of a record: its number, source, action (NULL) and time, and its
 * content in rec (documents: prompt, creativity, template_id, tone, language, length,
 * result, words, tokens, truncated; images: description, resolution, style,
 * media_key, revised_prompt; kind, id and user_id are the record's). */
typedef struct {
    int64_t number;
    const char *source;
    const char *action;
    int64_t created_us;
    record_t rec;
    /* revision_get of a document's action: the part it rewrote (job_t's) */
    bool part;
    int64_t part_start, part_end;
} revision_t;

/* A user's own template (API.md §18). Ids are 1001 and up (one sequence for every
 * user); a deleted one stays as a row (deleted) so that its documents keep its name,
 * but it is no longer listed, shown, changed or usable as a template_id. */
#define CUSTOM_TEMPLATE_MIN_ID 1001
typedef struct {
    int64_t id, user_id;
    const char *name, *description, *instruction;
    int64_t created_us, updated_us;
    bool deleted;
} custom_template_t;

/* A partial change of a custom template: NULL leaves a field as it is. */
typedef struct {
    const char *name, *description, *instruction;
} template_patch_t;

/* An idempotency key's row (API.md §11; api/idempotency.c). */
typedef enum {
    IDEM_NEW = 0,      /* first use (or the old use expired, or its owner's lease ran out):
                        * the caller processes the request and holds the token */
    IDEM_BUSY = 1,     /* the first request is still being processed */
    IDEM_MISMATCH = 2, /* the key was used with another request digest */
    IDEM_REPLAY = 3,   /* done: status, location and body are the kept answer */
} idem_state_t;

typedef struct {
    idem_state_t state;
    char token[33];       /* IDEM_NEW: the token finish/abort need */
    int status;           /* IDEM_REPLAY */
    const char *location; /* IDEM_REPLAY: may be NULL */
    const char *body;     /* IDEM_REPLAY */
} idem_t;

/* The answer of an Idempotency-Key that a create keeps in the very transaction that
 * stores its record (record_create, docs_create_completed; api/idempotency.c makes
 * it), so no crash can fall between the record's commit and its key's answer. */
typedef struct idem_keep {
    int64_t user_id;
    const char *key;
    const char *token; /* idem_begin's, while the key is in progress */
    int status;        /* 201 or 202 */
    /* final: the key is done with this answer. Not final: the key stays in progress
     * and this is the answer a retry gets should the request die before finishing
     * it (its lease runs out, or a SQLite server starts: job_release_all). */
    bool final;
    int64_t expires_us;
    /* Renders the answer for rec as it is stored (id, state and times set). Called
     * inside the transaction, in the calling thread. */
    void (*render)(void *arg, const record_t *rec, int status, buf_t *body, buf_t *location);
    void *arg;
    bool stored; /* out, when the create returned STORE_OK: the answer was kept */
} idem_keep_t;

/* What a user's removal took (store_user_delete): every record of the user, and every
 * media key of those records and of their revisions (each key once). */
typedef struct {
    struct removed_record {
        rec_kind_t kind;
        int64_t id;
    } *records;
    size_t n_records;
    const char **media_keys;
    size_t n_keys;
} user_removed_t;

typedef struct store store_t;
typedef struct store_conn store_conn_t;
struct store_ops;

/* What every backend's connection starts with (backends embed it as their first
 * member and cast). */
struct store_conn {
    const struct store_ops *ops;
    store_t *store;
};

/* The ops table every backend implements (store_ops_t) and the store handle are in
 * store_int.h, for the backends only; the rest of the program calls the wrappers
 * below. */
void store_set_pooled_url(store_t *s, const char *url);

/* store.c: picks the backend by URL ("postgres://", "postgresql://" → PostgreSQL; a
 * path or "sqlite:PATH" → SQLite). */
store_t *store_open(const char *url, char *err, size_t errlen);
void store_close(store_t *s);
/* The calling thread's connection, opened on first use; NULL (err set) when it
 * cannot be opened. Closed when the thread exits or by store_close for this thread. */
store_conn_t *store_conn(store_t *s, char *err, size_t errlen);
const char *store_rc_name(int rc);

/* SQLite's WAL checkpoints run in a background thread of the store, so no commit
 * waits for one (sqlite.c). A commit that leaves the WAL at or above `pages` pages
 * wakes that thread; one at four times that (the thread falling behind) checkpoints
 * itself. Default 8192 pages (32 MiB at 4 KiB a page); for tests and tuning. */
typedef struct {
    unsigned long background; /* checkpoints run by the background thread */
    unsigned long finish;     /* its last small parts, copied by a committing thread */
    unsigned long self;       /* whole checkpoints run by a committing thread (fallback) */
} store_checkpoint_stats_t;
void store_sqlite_checkpoint_pages(store_t *s, int pages);
bool store_sqlite_checkpoint_stats(store_t *s, store_checkpoint_stats_t *out);
/* SQLite indexes new records for search in a background thread after their commit;
 * searches scan what it has not reached yet, so results never depend on it
 * (sqlite_index.c). hold stops that thread (tests); index_now indexes up to max new
 * records of each kind on c (tests, bench-seed): how many, or a negative STORE_* code.
 * On PostgreSQL (indexed in the writing transaction) they do nothing and return 0. */
void store_sqlite_index_hold(store_t *s, bool hold);
int store_sqlite_index_now(store_conn_t *c, int max);
/* One compaction step of the index (what the thread does when the store is quiet):
 * 1 when there was something to merge, 0 when not, or a negative STORE_* code. */
int store_sqlite_index_merge(store_conn_t *c);
/* How many records (documents and images) the SQLite index has not reached yet, or a
 * negative STORE_* code; 0 on PostgreSQL. For /metrics. */
int64_t store_sqlite_index_pending(store_conn_t *c);

/* `inkwell backup` (sqlite_backup.c): a consistent copy of the SQLite database at
 * db_path, taken with SQLite's online backup API while servers may write, written to
 * dest atomically (temporary file, fsync, rename; journal mode DELETE, no WAL beside
 * it). Then each_key (if not NULL) is called with every media key the copy refers to.
 * 0, or -1 with err set. */
int store_sqlite_backup(const char *db_path, const char *dest,
                        void (*each_key)(void *, const char *), void *arg, char *err,
                        size_t errlen);
/* Wrappers: what the rest of the program calls instead of the ops table, so the
 * checks of what a backend can do live here (in the spirit of Redis's connWrite). */
/* probe may be NULL; it is used only when the backend has probed reads. */
int store_record_get(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                     record_probe_fn probe, void *probe_arg, arena_t *a, record_t *out);
/* q->probe is dropped when the backend does not take list probes. */
int store_record_list(store_conn_t *c, rec_kind_t kind, list_query_t *q, arena_t *a,
                      record_list_t *out);
int store_record_create(store_conn_t *c, record_t *rec, idem_keep_t *keep, int64_t *job_id);
/* For the backends' creates, inside their transaction once the record is inserted
 * (its id known): renders k's answer for rec as it will be stored (id, state, created =
 * updated = now) and keeps it (ops->idem_keep). A key no longer held by k's token is
 * logged and left (the record is stored all the same). STORE_OK when k is NULL. */
int store_keep_answer(store_conn_t *c, idem_keep_t *k, const record_t *rec, int64_t id,
                      rec_state_t state, int64_t now);
int store_record_update(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        const record_patch_t *p, arena_t *a, record_t *out);
int store_record_delete(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        arena_t *a, const char ***keys, size_t *n);
/* The bulk delete (API.md §23): the user's records among ids[0..n) (ascending, distinct),
 * each as store_record_delete, in one transaction (nothing deleted on an error). *done
 * gets the ids deleted (ascending), *keys every media key removed (each once). */
int store_record_delete_many(store_conn_t *c, rec_kind_t kind, int64_t user_id,
                             const int64_t *ids, size_t n, arena_t *a, const char ***keys,
                             size_t *nkeys, int64_t **done, size_t *ndone);
/* Tags, bulk actions and drafts (API.md §23, §24; sqlite_tags.c, pg_tags.c).
 * tags_list: the user's tags in use, each with its counts (any order).
 * record_bulk: in one transaction, over the user's records among ids[0..n) (ascending,
 * distinct): favorite, unfavorite, or tags[0..ntags) added (BULK_TAG: after the tags a
 * record has, those it has not) or taken away (BULK_UNTAG); *done gets the ids acted on
 * (ascending). STORE_CONFLICT when a record would pass STORE_MAX_TAGS: nothing changed.
 * draft_put: base < 0 = the document's current revision; NOTFOUND when the document is
 * not the user's, STORE_STALE when base is not one of its revisions (0 when it has
 * none; 1 to its current revision otherwise). draft_get/draft_delete: NOTFOUND when the
 * document is not the user's or keeps no draft. */
int store_tags_list(store_conn_t *c, int64_t user_id, arena_t *a, tag_count_t **out, size_t *n);
int store_record_bulk(store_conn_t *c, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                      size_t n, bulk_action_t action, const char *const *tags, int ntags,
                      arena_t *a, int64_t **done, size_t *ndone);
int store_draft_put(store_conn_t *c, int64_t user_id, int64_t id, const char *result,
                    int64_t base, arena_t *a, draft_t *out);
int store_draft_get(store_conn_t *c, int64_t user_id, int64_t id, arena_t *a, draft_t *out);
int store_draft_delete(store_conn_t *c, int64_t user_id, int64_t id);
/* One wrapper per op the rest of the program calls (store.c): each does what the op of
 * the same name in store_ops_t says. Nothing outside src/store/ calls through the ops
 * table. */
int store_idem_abort(store_conn_t *c, int64_t user_id, const char *key, const char *token);
int store_idem_begin(store_conn_t *c, int64_t user_id, const char *key, const char *digest,
                     int64_t now_us, int64_t lease_us, int64_t ttl_us, bool prune, arena_t *a,
                     idem_t *out);
int store_idem_finish(store_conn_t *c, int64_t user_id, const char *key, const char *token,
                      int status, const char *location, const char *body, int64_t expires_us);
int store_idem_held(store_conn_t *c, int64_t user_id, const char *key, int64_t now_us,
                    bool *held);
/* busy[0..nbusy): the jobs this process runs now, which it never claims again */
int store_job_claim(store_conn_t *c, double lease_s, const int64_t *busy, size_t nbusy,
                    arena_t *a, job_t *out);
int store_job_complete(store_conn_t *c, const job_t *job, const char *result, int64_t words,
                       const char *media_key, const char *revised_prompt, arena_t *a,
                       record_t *out);
int store_job_fail(store_conn_t *c, const job_t *job, const char *error);
int store_key_auth(store_conn_t *c, const char *hash_hex, const char *period, key_auth_t *out);
int store_key_get(store_conn_t *c, int64_t key_id, arena_t *a, key_info_t *out);
int store_key_insert(store_conn_t *c, int64_t user_id, const char *hash_hex, const char *prefix,
                     key_scope_t scope, int64_t expires_us, const char *name, int64_t *key_id);
int store_key_list(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                   key_info_t **out, size_t *n, int64_t *total);
int store_key_revoke(store_conn_t *c, int64_t key_id);
int store_media_keys(store_conn_t *c, arena_t *a, const char ***keys, size_t *n);
int store_migrate(store_conn_t *c);
int store_ping(store_conn_t *c);
int store_rate_gcra(store_conn_t *c, const char *bucket, int64_t now_us, int64_t interval_us,
                    int64_t period_us, bool prune, int64_t *tat_us, bool *allowed);
int store_usage_list(store_conn_t *c, const char *period, int64_t user_id, int64_t limit,
                     int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total);
/* ---- quota holds (API.md §19; sqlite_quota.c, pg_quota.c) ----
 * A generation in flight of a user with a limit holds `units` of the month's quota in
 * the database, so every process's check sees every process's generations. */
typedef struct {
    int64_t user_id;
    rec_kind_t kind;
    const char *period; /* "YYYY-MM": the usage it is checked against */
    int64_t units;      /* what the generation may use (1 picture; a words estimate) */
    int64_t limit;      /* the user's quota of the kind */
    int64_t now_us;     /* wall clock: unbound holds expire */
    int64_t expires_us; /* an unbound hold counts until then (a process killed) */
} quota_hold_t;
/* Admits a generation, serialised per user across processes (one transaction): first
 * removes the user's holds that ended (unbound and expired, or bound to a record with no
 * job left: its generation ended and, in the same transaction, was counted), then
 * admits when used < limit and either used + held + units <= limit or nothing of the
 * kind is held (near the limit one at a time): *hold_id > 0, the new hold. Refused:
 * *hold_id 0. *used: the usage it was checked against. */
int store_quota_hold(store_conn_t *c, const quota_hold_t *h, int64_t *hold_id, int64_t *used);
/* record_id > 0: binds the hold to its record (it then counts while the record has a
 * job: no expiry); 0: removes it (its generation was counted, failed or never began). */
int store_quota_hold_end(store_conn_t *c, int64_t hold_id, int64_t record_id);
int store_user_create(store_conn_t *c, const char *name, int64_t quota_words,
                      int64_t quota_images, arena_t *a, user_info_t *out);
int store_user_delete(store_conn_t *c, int64_t id, arena_t *a, user_removed_t *out);
int store_user_get(store_conn_t *c, int64_t id, const char *name, arena_t *a, user_info_t *out);
int store_user_list(store_conn_t *c, int64_t limit, int64_t offset, arena_t *a,
                    user_info_t **out, size_t *n, int64_t *total);
int store_user_update(store_conn_t *c, int64_t id, const user_patch_t *p, arena_t *a,
                      user_info_t *out);
int store_user_ensure(store_conn_t *c, const char *name, int64_t *user_id);
/* ---- sign-in (API.md §21; wrappers of the ops of store_int.h) ---- */
int store_user_secret(store_conn_t *c, const char *name, arena_t *a, int64_t *user_id,
                      const char **hash);
int store_user_password(store_conn_t *c, int64_t user_id, const char *hash, int64_t keep,
                        int64_t *ended);
int store_session_insert(store_conn_t *c, const session_new_t *s, int64_t *id);
int store_session_auth(store_conn_t *c, const char *hash_hex, const char *period,
                       session_auth_t *out);
int store_session_touch(store_conn_t *c, int64_t id, int64_t now_us);
int store_session_end(store_conn_t *c, int64_t user_id, int64_t id, int64_t keep,
                      int64_t *ended);
int store_session_list(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset,
                       arena_t *a, session_info_t **out, size_t *n, int64_t *total);
int store_signin_failures(store_conn_t *c, const char *bucket, int64_t minute, bool add,
                          int64_t *count);
/* ---- single sign-on (API.md §21; auth/oidc.c; sqlite_oidc.c, pg_oidc.c) ---- */
/* A sign-in begun at the issuer, kept from GET /auth/oidc/login to its callback (any
 * process may take it): found by its state's SHA-256, bound to the browser by a cookie
 * of which only the SHA-256 is kept; the nonce and the PKCE verifier as they are (they
 * are worth nothing without the browser's code, and live minutes). */
typedef struct {
    const char *state_hash, *browser_hash, *nonce, *verifier;
    int64_t created_us, expires_us;
} oidc_flow_t;

/* Keeps f (the flows past their expiry removed first). */
int store_oidc_flow_put(store_conn_t *c, const oidc_flow_t *f);
/* Takes the flow of state_hash away (single use): STORE_NOTFOUND when unknown, taken
 * already or expired at now_us. */
int store_oidc_flow_take(store_conn_t *c, const char *state_hash, int64_t now_us, arena_t *a,
                         oidc_flow_t *out);
/* The user linked to (iss, sub): STORE_NOTFOUND when none. */
int store_user_oidc_find(store_conn_t *c, const char *iss, const char *sub, int64_t *user_id);
/* Links user id to (iss, sub) (sub NULL: unlinks): STORE_CONFLICT when another user is
 * linked to it, STORE_NOTFOUND when no such user. */
int store_user_oidc_link(store_conn_t *c, int64_t id, const char *iss, const char *sub);

/* What a backend can do, asked by name (store_ops_t.caps). */
typedef enum {
    STORE_CAP_SHARED = 1,    /* several processes share the store (PostgreSQL) */
    STORE_CAP_OWN_LEASES = 2, /* one process owns it: job_release_all at start (SQLite) */
    STORE_CAP_LAGGING_INDEX = 4 /* search is indexed after the commit, by a thread
                                   (store_sqlite_index_pending tells how far behind) */
} store_cap_t;
bool store_has(const store_t *s, store_cap_t cap);
/* "sqlite" | "postgres" */
const char *store_backend_name(const store_t *s);
/* Drops every job lease (store_ops_t.job_release_all); only with STORE_CAP_OWN_LEASES. */
int store_job_release_all(store_conn_t *c, int64_t *n);
/* n completed documents in one transaction (store_ops_t.docs_create_completed); keeps
 * may be NULL. */
int store_docs_create_completed(store_conn_t *c, record_t *const *recs,
                                idem_keep_t *const *keeps, size_t n);
/* Queued and running jobs (store_ops_t.job_counts). */
int store_job_counts(store_conn_t *c, int64_t *queued, int64_t *running);
/* Whether a job is still there: false once it completed or failed (or its record went). */
int store_job_exists(store_conn_t *c, int64_t job_id, bool *exists);
/* Revisions (see store_ops_t.record_regenerate...). */
int store_record_regenerate(store_conn_t *c, const record_t *in, const rec_action_t *act,
                            idem_keep_t *keep, arena_t *a, record_t *out, int64_t *job_id);
int store_record_regenerated(store_conn_t *c, const record_t *in, int cap, idem_keep_t *keep,
                             arena_t *a, record_t *out);
int store_revision_list(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                        int64_t *total);
int store_revision_get(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                       int64_t number, arena_t *a, revision_t *out);
int store_revision_restore(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                           int64_t number, const char *media_key, arena_t *a, record_t *out);
int store_revision_trim(store_conn_t *c, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                        const char ***keys, size_t *n);
/* A document's unset tone, language and length get their defaults. */
void store_doc_defaults(record_t *rec);
/* The source of the revision a job's completion makes. */
rev_source_t store_job_source(const job_t *job);
/* For the backends' claims: a regeneration job's inputs (in) replace its record's. */
void store_job_inputs(job_t *job, const record_t *in);
/* For the backends: keeps k's answer rendered for rec exactly as it stands. */
int store_keep_record(store_conn_t *c, idem_keep_t *k, const record_t *rec);
int store_job_renew(store_conn_t *c, int64_t job_id, const char *token, double lease_s);
/* Hands a claimed job back unfinished without counting its attempt (job_renew, 0). */
int store_job_release(store_conn_t *c, int64_t job_id, const char *token);
/* A read session, when the backend has them (else nothing). */
void store_read_begin(store_conn_t *c);
void store_read_end(store_conn_t *c);
/* True when several processes may share this store (PostgreSQL): jobs, rate limits and
 * events must then go through the database. */
bool store_shared(const store_t *s);
/* Events between processes (see store_ops_t.job_progress...); STORE_OK doing nothing
 * (NULL listener) when the store is not shared. */
typedef struct store_listener store_listener_t;
int store_job_progress(store_conn_t *c, int64_t job_id, const char *token, int64_t start,
                       const char *pieces, int64_t seq, const char *payload);
int store_record_partial(store_conn_t *c, rec_kind_t kind, int64_t id, arena_t *a,
                         const char **text, int64_t *seq);
int store_notify(store_conn_t *c, const char *payload);
store_listener_t *store_listen(store_t *s, void (*fn)(void *arg, const char *payload),
                               void (*connected)(void *arg), void *arg);
void store_listen_stop(store_t *s, store_listener_t *l);
/* True when the backend reads lists and shows with probes (a rendered-record cache
 * pays off). */
bool store_probes(const store_t *s);

/* ---- users' own templates (API.md §18; wrappers of the ops above) ---- */
int store_template_create(store_conn_t *c, int64_t user_id, const char *name,
                          const char *description, const char *instruction, int max,
                          arena_t *a, custom_template_t *out);
int store_template_get(store_conn_t *c, int64_t user_id, int64_t id, bool with_deleted,
                       arena_t *a, custom_template_t *out);
/* The user's templates without their instruction (NULL: the list shows none, §24). */
int store_template_list(store_conn_t *c, int64_t user_id, arena_t *a, custom_template_t **out,
                        size_t *n);
int store_template_update(store_conn_t *c, int64_t user_id, int64_t id,
                          const template_patch_t *p, arena_t *a, custom_template_t *out);
int store_template_delete(store_conn_t *c, int64_t user_id, int64_t id);

/* ---- users, keys and usage (store/users.c) ---- */
/* The clock of quotas, key and session expiry, and of anything else a test must move:
 * now_us(), or in a test build the test clock (core/testhooks.h): INKWELL_TEST_NOW (a
 * fixed RFC 3339 time) plus the seconds in the file INKWELL_TEST_CLOCK_FILE (read at
 * every call), so tests can stand on either side of a month's end or move time on. The
 * one test clock: use it rather than a new one. */
int64_t store_clock_us(void);
/* "YYYY-MM" of a time (UTC). */
void store_period(int64_t us, char out[8]);
/* Counts a finished generation (words, pictures, the provider's tokens: < 0 = not
 * said) in its user's usage of the current period: THE place usage is counted. The
 * backends call it inside the transaction that stores a generated record
 * (docs_create_completed, job_complete), through the two wrappers below. */
int store_usage_add(store_conn_t *c, int64_t user_id, int64_t words, int64_t images,
                    int64_t prompt_tokens, int64_t completion_tokens);
/* The same for a job's outcome (documents: words and tokens; images: one picture), in
 * job_complete's transaction. */
int store_usage_add_job(store_conn_t *c, const job_t *job, int64_t words,
                        const char *media_key);
/* The same for a batch of documents just inserted (docs_create_completed), inside its
 * transaction: one upsert per user of the batch. */
int store_usage_add_docs(store_conn_t *c, record_t *const *recs, size_t n);

/* For the backends (store.c). True when every record is a document with its result
 * (what docs_create_completed takes). */
bool store_docs_finished(record_t *const *recs, size_t n);
/* A record just inserted: its state, no error, created = updated = now; a queued one
 * has no result, words, media key or revised prompt yet. */
void store_record_inserted(record_t *rec, rec_state_t state, int64_t now);

#endif
