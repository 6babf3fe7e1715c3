/* pg_int.h — what the files of the PostgreSQL store (postgres.c, pg_*.c) share, for
 * them only (like SQLite's btreeInt.h): the connection, the statement ids and table,
 * and the helpers. Only postgres.c and pg_*.c include it. */
#ifndef INK_STORE_PG_INT_H
#define INK_STORE_PG_INT_H

#include "store/store_int.h"

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- statements (pg_stmts.c) ---------------------------------------------------- */

/* Statement ids: the index of each fixed statement in pg_stmts[]. */
enum {
    S_PING,
    S_MIG_VERSION,
    S_MIG_RECORD,
    S_DOC_INSERT,
    S_IMG_INSERT,
    S_DOC_INSERT_DONE,
    S_JOB_INSERT,
    S_DOC_GET,
    S_IMG_GET,
    S_DOC_UPDATE,
    S_IMG_UPDATE,
    S_DOC_DELETE,
    S_IMG_DELETE,
    S_JOB_PICK,
    S_DOC_CLAIM,
    S_IMG_CLAIM,
    S_JOB_DROP,
    S_JOB_RENEW,
    S_JOB_RELEASE_DEAD,
    S_JOB_COMPLETE,
    S_ACTION_CHECK,
    S_ACTION_END,
    S_JOB_COMPLETE_IMG,
    S_JOB_FAIL,
    S_JOB_COUNT,
    S_JOB_EXISTS,
    S_JOB_COUNTS,
    S_RATE_HIT,
    S_RATE_PRUNE,
    S_IDEM_TAKE,
    S_IDEM_GET,
    S_IDEM_FINISH,
    S_IDEM_ABORT,
    S_IDEM_PRUNE,
    S_JOB_PROGRESS,
    S_JOB_PARTIAL,
    S_NOTIFY,
    S_MEDIA_KEYS,
    S_REV_SNAP_DOC,
    S_REV_SNAP_IMG,
    S_REV_TRIM_DOC,
    S_REV_TRIM_IMG,
    S_REV_LIST_DOC,
    S_REV_LIST_IMG,
    S_REV_GET_DOC,
    S_REV_GET_IMG,
    S_DOC_REGEN,
    S_DOC_REGEN_DONE,
    S_IMG_REGEN,
    S_JOB_INSERT_REGEN,
    S_DOC_RESTORE,
    S_DOC_REFOLD,
    S_IMG_RESTORE,
    S_COUNT
};

typedef struct {
    const char *name;
    int nparams;
    const char *sql;
} pg_stmt_t;

/* Prepared on first use (pg_run) under .name. */
extern const pg_stmt_t pg_stmts[S_COUNT];

/* ---- connection (postgres.c) ----------------------------------------------------- */

_Static_assert(S_COUNT <= 64, "pg_conn_t.prepared has one bit per statement");

typedef struct {
    store_conn_t base; /* first: store.c casts */
    PGconn *pg;
    bool broken;          /* a connection-level error was seen: reconnect before use */
    double last_try;      /* mono_s() of the last reconnect attempt */
    uint64_t prepared;    /* bit i: pg_stmts[i] is prepared on this connection */
    uint64_t users_prepared; /* the same for pg_users.c's statements */
    uint64_t tpl_prepared;   /* the same for pg_templates.c's statements */
    uint64_t tags_prepared;  /* the same for pg_tags.c's statements */
    uint64_t wh_prepared;    /* the same for pg_webhooks.c's statements */
    uint64_t quota_prepared; /* the same for pg_quota.c's statements */
    bool list_prepared[LQ_SLOTS]; /* by list key (store_int.h) */
    struct pg_trgm_stats *trgm;   /* trigram frequencies (pg_trgm.c); NULL until used */
    bool unnamed; /* through a transaction pooler: no named statement outlives a
                   * transaction, so each statement is sent whole (PQexecParams) */
} pg_conn_t;

/* The backend's connection behind store.c's handle. */
static inline pg_conn_t *pg_cast(store_conn_t *c)
{
    return (pg_conn_t *)c;
}

/* A number as the text of a statement parameter (pg_num_i64, pg_num_f64). */
typedef struct {
    char s[32];
} pg_num_t;

/* ---- connection, errors, retries and values (postgres.c) */
int pg_ready(pg_conn_t *c);
int pg_command(pg_conn_t *c, const char *sql, const char *what);
/* COMMIT of a transaction that inserted the record (kind, id) first; when the
 * connection breaks after COMMIT was sent, finds out whether it was applied
 * (pg_commit.c): STORE_OK if it was. */
int pg_commit_record(pg_conn_t *c, const char *what, rec_kind_t kind, int64_t id);
void pg_rollback(pg_conn_t *c);
int pg_run_named(pg_conn_t *c, const char *name, const char *sql, int nparams,
                 bool *prepared, const char *const *params, PGresult **out);
int pg_run(pg_conn_t *c, int id, const char *const *params, PGresult **out);
int64_t pg_affected(PGresult *r);
pg_num_t pg_num_i64(int64_t v);
pg_num_t pg_num_f64(double v);
int64_t pg_lease_until(int64_t now, double lease_s);
int64_t pg_col_i64(const PGresult *r, int row, int col);
const char *pg_col_str(const PGresult *r, int row, int col, arena_t *a);
void pg_row_record(const PGresult *r, int row, rec_kind_t kind, arena_t *a, record_t *out);

/* ---- the rare pieces of a search for the trigram index (pg_trgm.c) */
enum { PG_TRGM_DOC_NAME, PG_TRGM_DOC_RESULT, PG_TRGM_IMG_NAME, PG_TRGM_COLS };
typedef struct pg_trgm_stats pg_trgm_stats_t;
/* The two LIKE patterns the index is asked for instead of whole (the search's own
 * pattern, which the caller checks on every candidate): at most two rare pieces of
 * search, or whole itself (twice) when no piece is rare or there are no statistics. */
void pg_trgm_pieces(pg_conn_t *c, int col, const char *search, const char *whole, arena_t *a,
                    const char *out[2]);
void pg_trgm_free(pg_trgm_stats_t *st);

/* ---- schema and health (pg_schema.c) */
int pg_migrate(store_conn_t *sc);
int pg_ping(store_conn_t *sc);

/* ---- users, keys and usage (pg_users.c) */
int pg_user_ensure(store_conn_t *sc, const char *name, int64_t *user_id);
int pg_user_create(store_conn_t *sc, const char *name, int64_t quota_words,
                   int64_t quota_images, arena_t *a, user_info_t *out);
int pg_user_get(store_conn_t *sc, int64_t id, const char *name, arena_t *a, user_info_t *out);
int pg_user_list(store_conn_t *sc, int64_t limit, int64_t offset, arena_t *a,
                 user_info_t **out, size_t *n, int64_t *total);
int pg_user_secret(store_conn_t *conn, const char *name, arena_t *a, int64_t *user_id,
                   const char **hash);
int pg_user_password(store_conn_t *conn, int64_t user_id, const char *hash, int64_t keep,
                     int64_t *ended);
int pg_session_insert(store_conn_t *conn, const session_new_t *s, int64_t *id);
int pg_session_auth(store_conn_t *conn, const char *hash_hex, const char *period,
                    session_auth_t *out);
int pg_session_touch(store_conn_t *conn, int64_t id, int64_t now_us);
int pg_session_end(store_conn_t *conn, int64_t user_id, int64_t id, int64_t keep,
                   int64_t *ended);
int pg_session_list(store_conn_t *conn, int64_t user_id, int64_t limit, int64_t offset,
                    arena_t *a, session_info_t **out, size_t *n, int64_t *total);
/* single sign-on (API.md §21; pg_oidc.c) */
int pg_oidc_flow_put(store_conn_t *conn, const oidc_flow_t *f);
int pg_oidc_flow_take(store_conn_t *conn, const char *state_hash, int64_t now_us, arena_t *a,
                      oidc_flow_t *out);
int pg_user_oidc_find(store_conn_t *conn, const char *iss, const char *sub, int64_t *user_id);
int pg_user_oidc_link(store_conn_t *conn, int64_t id, const char *iss, const char *sub);
int pg_signin_failures(store_conn_t *conn, const char *bucket, int64_t minute, bool add,
                       int64_t *count);
int pg_user_update(store_conn_t *sc, int64_t id, const user_patch_t *p, arena_t *a,
                   user_info_t *out);
int pg_user_delete(store_conn_t *sc, int64_t id, arena_t *a, user_removed_t *out);
int pg_key_insert(store_conn_t *sc, int64_t user_id, const char *hash_hex, const char *prefix,
                  key_scope_t scope, int64_t expires_us, const char *name,
                  int64_t *key_id);
int pg_key_auth(store_conn_t *sc, const char *hash_hex, const char *period, key_auth_t *out);
int pg_key_list(store_conn_t *sc, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                key_info_t **out, size_t *n, int64_t *total);
int pg_key_get(store_conn_t *sc, int64_t key_id, arena_t *a, key_info_t *out);
int pg_key_revoke(store_conn_t *sc, int64_t key_id);
int pg_usage_add(store_conn_t *sc, int64_t user_id, const char *period,
                 const usage_counts_t *add);
int pg_idem_held(store_conn_t *sc, int64_t user_id, const char *key, int64_t now_us,
                 bool *held);
int pg_usage_list(store_conn_t *sc, const char *period, int64_t user_id, int64_t limit,
                  int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total);
/* pg_quota.c */
int pg_quota_hold(store_conn_t *sc, const quota_hold_t *h, int64_t *hold_id, int64_t *used);
int pg_quota_hold_end(store_conn_t *sc, int64_t hold_id, int64_t record_id);

/* ---- users' own templates (pg_templates.c) */
int pg_template_create(store_conn_t *sc, int64_t user_id, const char *name,
                       const char *description, const char *instruction, int max, arena_t *a,
                       custom_template_t *out);
int pg_template_get(store_conn_t *sc, int64_t user_id, int64_t id, bool with_deleted,
                    arena_t *a, custom_template_t *out);
int pg_template_list(store_conn_t *sc, int64_t user_id, arena_t *a, custom_template_t **out,
                     size_t *n);
int pg_template_update(store_conn_t *sc, int64_t user_id, int64_t id,
                       const template_patch_t *p, arena_t *a, custom_template_t *out);
int pg_template_delete(store_conn_t *sc, int64_t user_id, int64_t id);

/* ---- records (pg_records.c) */
int pg_record_create(store_conn_t *sc, record_t *rec, idem_keep_t *keep, int64_t *job_id);
int pg_docs_create_completed(store_conn_t *sc, record_t *const *recs,
                            idem_keep_t *const *keeps, size_t n);
int pg_one_record(pg_conn_t *c, int id, const char *const *p, rec_kind_t kind, arena_t *a,
                  record_t *out);
int pg_record_get(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                  arena_t *a, record_t *out);
int pg_record_get_probed(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                         record_probe_fn probe, void *probe_arg, arena_t *a,
                         record_t *out);
int pg_record_update(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                     const record_patch_t *pt, arena_t *a, record_t *out);
int pg_record_delete(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                     arena_t *a, const char ***keys, size_t *n);
int pg_record_delete_many(store_conn_t *sc, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                          size_t n, arena_t *a, const char ***keys, size_t *nkeys,
                          int64_t **done, size_t *ndone);

/* ---- revisions (pg_revisions.c) */
int pg_record_regenerated(store_conn_t *sc, const record_t *in, int cap, idem_keep_t *keep,
                          arena_t *a, record_t *out);
int pg_record_regenerate(store_conn_t *sc, const record_t *in, const rec_action_t *act,
                         idem_keep_t *keep, arena_t *a,
                         record_t *out, int64_t *job_id);
int pg_revision_list(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                     int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                     int64_t *total);
int pg_revision_get(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                    int64_t number, arena_t *a, revision_t *out);
int pg_revision_restore(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                        int64_t number, const char *media_key, arena_t *a, record_t *out);
int pg_revision_trim(store_conn_t *sc, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                     const char ***keys, size_t *n);
/* Appends the non-NULL values of column 0 of every row of r to *keys and *n (each once). */
void pg_collect_keys(const PGresult *r, arena_t *a, const char ***keys, size_t *n);

/* ---- lists (pg_lists.c) */
/* pg_tags.c (API.md §23, §24) */
/* Inside a transaction: record id's tags become tags[0..n) (store.h record_t.tags);
 * bump: move its updated_us forward (not for a record just inserted). */
/* Takes the user's tags lock (transaction-level; pg_tags.c) in the caller's transaction:
 * a bulk delete takes it first, as a tag change does, so the two never deadlock. */
int pg_tags_lock_user(pg_conn_t *c, int64_t user_id);
int pg_tags_write(pg_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                  const char *const *tags, int n, bool bump);
int pg_tags_list(store_conn_t *sc, int64_t user_id, arena_t *a, tag_count_t **out, size_t *n);
int pg_record_bulk(store_conn_t *sc, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                   size_t n, bulk_action_t action, const char *const *tags, int ntags,
                   arena_t *a, int64_t **done, size_t *ndone);
int pg_draft_put(store_conn_t *sc, int64_t user_id, int64_t id, const char *result,
                 int64_t base, arena_t *a, draft_t *out);
int pg_draft_get(store_conn_t *sc, int64_t user_id, int64_t id, arena_t *a, draft_t *out);
int pg_draft_delete(store_conn_t *sc, int64_t user_id, int64_t id);

int pg_record_list(store_conn_t *sc, rec_kind_t kind, const list_query_t *q, arena_t *a,
                   record_list_t *out);
/* The folded form of a searched column the writes store beside it (name_fold,
 * result_fold: API.md §15, core/unicode.h), malloc'd; NULL for NULL. */
char *pg_fold(const char *s);
/* Migration PG_MIG_UNICODE's part in C, in its transaction: fills the folded columns
 * of every record in batches, then builds the indexes on them. */
#define PG_MIG_UNICODE 9
int pg_unicode_migrate(pg_conn_t *c);

/* ---- jobs and events of other processes (pg_jobs.c) */
int pg_job_claim(store_conn_t *sc, double lease_s, const char *busy, arena_t *a, job_t *out);
int pg_job_renew(store_conn_t *sc, int64_t job_id, const char *token, double lease_s);
int pg_job_complete(store_conn_t *sc, const job_t *job, const char *result, int64_t words,
                    const char *media_key, const char *revised_prompt, arena_t *a,
                    record_t *out);
int pg_job_fail(store_conn_t *sc, const job_t *job, const char *error);
int pg_job_count(store_conn_t *sc, int64_t *n);
int pg_job_counts(store_conn_t *sc, int64_t *queued, int64_t *running);
int pg_job_exists(store_conn_t *sc, int64_t job_id, bool *exists);
int pg_job_progress(store_conn_t *sc, int64_t job_id, const char *token, int64_t start,
                    const char *pieces, int64_t seq, const char *payload);
int pg_record_partial(store_conn_t *sc, rec_kind_t kind, int64_t id, arena_t *a,
                      const char **text, int64_t *seq);
int pg_notify(store_conn_t *sc, const char *payload);
int pg_media_keys(store_conn_t *sc, arena_t *a, const char ***keys, size_t *n);

/* ---- the owner lock (pg_owner.c) */
#define PG_OWNER_NS 6909547 /* the advisory locks' first key ("ink") */
void pg_open(store_t *s);
void pg_close(store_t *s);
/* Before a claim: holds this process's owner lock (taking it again if its connection
 * was lost), gives the 8 hex digits every lease token of this process starts with, and
 * at most once a second frees the leases of owners whose lock is gone. */
int pg_owner_prepare(pg_conn_t *c, char prefix[9], double lease_s);
/* From pg_ready (any operation, at most every 0.2 s): once the lock was taken, takes it
 * again at once when its connection was lost, so that a live process's leases are not
 * taken for a dead one's after a database restart or failover. */
void pg_owner_touch(pg_conn_t *c);

/* ---- rate limiting and idempotency keys (pg_limits.c) */
int pg_rate_gcra(store_conn_t *sc, const char *bucket, int64_t now_us, int64_t interval_us,
                 int64_t period_us, bool prune, int64_t *tat_us, bool *allowed);
int pg_idem_begin(store_conn_t *sc, int64_t user_id, const char *key, const char *digest,
                  int64_t now_us, int64_t lease_us, int64_t ttl_us, bool prune, arena_t *a,
                  idem_t *out);
int pg_idem_finish(store_conn_t *sc, int64_t user_id, const char *key, const char *token,
                   int status, const char *location, const char *body, int64_t expires_us);
int pg_idem_abort(store_conn_t *sc, int64_t user_id, const char *key, const char *token);
int pg_idem_keep(store_conn_t *sc, const idem_keep_t *k, const char *location,
                 const char *body);

#endif
