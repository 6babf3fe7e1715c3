/* sqlite_int.h — what the files of the SQLite store share, for them only (in the spirit
 * of SQLite's own btreeInt.h): the connection, the fixed statement ids and the helpers.
 * sqlite.c: the ops table, errors, statement helpers, transactions, the connection,
 * users and keys; sqlite_schema.c: migrations and the fixed statements' SQL;
 * sqlite_records.c: records and media keys; sqlite_lists.c: record lists;
 * sqlite_jobs.c: jobs; sqlite_limits.c: rate limiting and idempotency keys;
 * sqlite_text.c: the stored form of a document's text. */
#ifndef INK_SQLITE_INT_H
#define INK_SQLITE_INT_H

#include "store/store_int.h"
#include "store/tailnames.h"

#include <sqlite3.h>

/* ---- fixed statements (SQL: sqlite_schema.c) ------------------------------------------- */

/* Pairs are laid out documents first, images second: ST_X_DOC + kind. */
enum {
    ST_BEGIN_WRITE,
    ST_BEGIN_READ,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_PING,
    ST_MIG_HAS,
    ST_MIG_ADD,
    ST_INSERT_DOC,
    ST_INSERT_IMG,
    ST_INSERT_DOC_DONE,
    ST_FTS_COMMON_DOC,
    ST_FTS_COMMON_IMG,
    ST_JOB_INSERT,
    ST_GET_DOC,
    ST_GET_IMG,
    ST_STAMP_DOC,
    ST_STAMP_IMG,
    ST_UPDATE_DOC,
    ST_UPDATE_IMG,
    ST_DELETE_DOC,
    ST_DELETE_IMG,
    ST_JOB_DELETE_RECORD,
    ST_JOB_CLAIM,
    ST_JOB_DELETE,
    ST_START_DOC,
    ST_START_IMG,
    ST_JOB_RENEW,
    ST_JOB_FINISH,
    ST_COMPLETE_DOC,
    ST_COMPLETE_IMG,
    ST_FAIL_DOC,
    ST_FAIL_IMG,
    ST_JOB_COUNT,
    ST_JOB_EXISTS,
    ST_JOB_COUNTS,
    ST_USER_TOTAL,
    ST_RATE_HIT,
    ST_RATE_PRUNE,
    ST_IDEM_TAKE,
    ST_IDEM_GET,
    ST_IDEM_FINISH,
    ST_IDEM_ABORT,
    ST_IDEM_PRUNE,
    ST_MEDIA_KEYS,
    ST_REV_SNAP_DOC,
    ST_REV_SNAP_IMG,
    ST_REV_DELETE_DOC,
    ST_REV_DELETE_IMG,
    ST_REV_TRIM_DOC,
    ST_REV_TRIM_IMG,
    ST_REV_LIST_DOC,
    ST_REV_LIST_IMG,
    ST_REV_COUNT_DOC,
    ST_REV_COUNT_IMG,
    ST_REV_GET_DOC,
    ST_REV_GET_IMG,
    ST_REGEN_DOC,
    ST_REGEN_IMG,
    ST_REGENERATED_DOC,
    ST_JOB_INSERT_REGEN,
    ST_RESTORE_DOC,
    ST_RESTORE_IMG,
    ST_ACTION_CHECK, /* (races: API.md §24) */
    ST_ACTION_SAME,
    ST_ACTION_CHANGED,
    ST_COUNT
};

extern const char *const sq_stmt_sql[ST_COUNT];

/* ---- the search index's blocks ------------------------------------------------------- */

/* The results' trigram index (documents_result_fts, migration 19) has one row per block
 * of 1 << SQ_BLOCK_BITS consecutive document ids: its rowid is id >> SQ_BLOCK_BITS and it
 * holds the trigrams of every text the block's documents have had (a superset: a
 * search checks each document of a matching block, sqlite_lists.c). Written by the
 * index thread (sqlite_index.c); read by the result search (sqlite_lists.c). */
#define SQ_BLOCK_BITS 5
#define SQ_STR_(x) #x
#define SQ_STR(x) SQ_STR_(x)
#define SQ_BLOCK_BITS_SQL SQ_STR(SQ_BLOCK_BITS)

/* The second level (migration 33, sqlite_filter.c): search_filters has a row per block,
 * SQ_FILTER_BYTES a document (a filter of its text's pieces of four letters; 7 rows a
 * 4 KB page). sq_filter_needle: the bits of the folded search's pieces (false when it
 * has none: nothing to filter by). */
#define SQ_FILTER_BYTES 17
bool sq_filter_needle(const char *fold, uint8_t mask[SQ_FILTER_BYTES]);

/* ---- the connection -------------------------------------------------------------------- */

#define SQ_USER_STMTS 40 /* statements of sqlite_users.c (users, keys, usage) */
#define SQ_TPL_STMTS 8   /* statements of sqlite_templates.c (users' own templates) */
#define SQ_TAG_STMTS 24  /* statements of sqlite_tags.c (tags, bulk actions, drafts) */
#define SQ_WH_STMTS 28   /* statements of sqlite_webhooks.c (API.md §22) */

typedef struct {
    store_conn_t base;
    sqlite3 *db;
    sqlite3_stmt *stmt[ST_COUNT];
    sqlite3_stmt *list[LQ_SLOTS];
    sqlite3_stmt *users[SQ_USER_STMTS]; /* sqlite_users.c's, prepared on first use */
    sqlite3_stmt *tpl[SQ_TPL_STMTS];    /* sqlite_templates.c's, prepared on first use */
    sqlite3_stmt *tags[SQ_TAG_STMTS];   /* sqlite_tags.c's, prepared on first use */
    sqlite3_stmt *wh[SQ_WH_STMTS];      /* sqlite_webhooks.c's, prepared on first use */
    sqlite3_stmt *upto; /* the search index's watermark (sqlite_tail.c) */
    bool session; /* a read session (read_begin) holds a read transaction open */
    bool nested;  /* a read transaction of an operation runs inside the session */
} sq_conn_t;

static inline sq_conn_t *sq(store_conn_t *c)
{
    return (sq_conn_t *)c;
}

/* ---- errors, statement helpers, transactions (sqlite.c; what each does: there) --------- */

int sq_error(sq_conn_t *c, int rc, const char *what);
int sq_prepare(sq_conn_t *c, const char *sql, sqlite3_stmt **out, const char *what);
int sq_stmt(sq_conn_t *c, int id, sqlite3_stmt **out);
void sq_stmt_done(sqlite3_stmt *st);
void sq_bind_text(sqlite3_stmt *st, int i, const char *s);
const char *sq_col_text(sqlite3_stmt *st, int i, arena_t *a);
int sq_run(sq_conn_t *c, sqlite3_stmt *st, const char *what);
int sq_step_row(sq_conn_t *c, sqlite3_stmt *st, const char *what);
int sq_tx_begin(sq_conn_t *c);
int sq_tx_begin_read(sq_conn_t *c);
int sq_tx_end(sq_conn_t *c, int rc);
int sq_exec_sql(sq_conn_t *c, const char *sql, const char *what);

/* ---- a document's stored text (sqlite_text.c: the form) ------------------------------- */

/* The stored form of documents.result, document_revisions.result, search_changed.old:
 * the TEXT as it is, or a BLOB of it packed (zstd) when that is shorter. */

/* The BLOB of text t[0..n) (malloc'd, *len bytes), or NULL: store the text as it is
 * (the BLOB would not be shorter, or no memory). */
unsigned char *sq_text_pack(const char *t, size_t n, size_t *len);
/* The plain text's length of a stored BLOB, or -1 when b is not of the stored form. */
long long sq_text_unpacked_len(const void *b, size_t n);
/* Inflates a BLOB sq_text_unpacked_len accepted into dst (room for len + 1 bytes),
 * NUL-terminated: false when it is not exactly a stored text of len bytes. */
bool sq_text_unpack(const void *b, size_t n, char *dst, size_t len);
/* Binds text (NULL: NULL) in its stored form; text lives until sq_stmt_done. */
void sq_bind_result(sqlite3_stmt *st, int i, const char *text);
/* Reads column i's stored text (NULL for NULL) into the arena: STORE_OK, or
 * STORE_ERROR (logged) for a corrupt BLOB. */
int sq_col_result(sqlite3_stmt *st, int i, arena_t *a, const char **out);
/* For SQL functions: the plain text of a stored value (*t NULL for NULL), *n bytes;
 * *owned is what to free after (NULL unless a BLOB was unpacked). SQLITE_OK,
 * SQLITE_NOMEM, or SQLITE_CORRUPT for a BLOB not of the stored form, which
 * sq_value_result_error reports as function fn's error. */
int sq_value_result(sqlite3_value *v, const char **t, size_t *n, char **owned);
void sq_value_result_error(sqlite3_context *ctx, int rc, const char *fn);
/* Registers ink_pack(text), the stored form of a text, on db (migration 20). */
int sq_text_register(sqlite3 *db);

/* ---- records (sqlite_records.c) -------------------------------------------------------- */

void sq_bind_tokens(sqlite3_stmt *st, int i, int64_t n);
/* STORE_OK, or STORE_ERROR when the row's stored text is corrupt (sq_col_result). */
int sq_read_record(sqlite3_stmt *st, rec_kind_t kind, arena_t *a, record_t *r);

/* ---- tags and drafts (sqlite_tags.c) -------------------------------------------------- */

/* Inside a write transaction: record id's tags become tags[0..n) (each with the user's
 * spelling), its `tags` column their JSON array; bump: move its updated_us forward
 * (not for a record just inserted). */
int sq_tags_write(sq_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                  const char *const *tags, int n, bool bump);
/* Inside a write transaction: document id's draft dropped (an update of its result). */
int sq_draft_drop(sq_conn_t *c, int64_t user_id, int64_t id);
int sq_tags_list(store_conn_t *conn, int64_t user_id, arena_t *a, tag_count_t **out, size_t *n);
int sq_record_bulk(store_conn_t *conn, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                   size_t n, bulk_action_t action, const char *const *tags, int ntags,
                   arena_t *a, int64_t **done, size_t *ndone);
int sq_draft_put(store_conn_t *conn, int64_t user_id, int64_t id, const char *result,
                 int64_t base, arena_t *a, draft_t *out);
int sq_draft_get(store_conn_t *conn, int64_t user_id, int64_t id, arena_t *a, draft_t *out);
int sq_draft_delete(store_conn_t *conn, int64_t user_id, int64_t id);

/* ---- revisions (sqlite_revisions.c) ---------------------------------------------------- */

/* Inside a write transaction: the record's content as its revision `revision`. */
int sq_rev_snapshot(sq_conn_t *c, rec_kind_t kind, int64_t id, rev_source_t source,
                    const char *action, int64_t now);
/* The same for job_complete: an action's part (job_t's) kept with the revision. */
int sq_rev_snapshot_job(sq_conn_t *c, rec_kind_t kind, int64_t id, const job_t *job, int64_t now);
/* Runs st (bound) and appends the non-NULL text of its first column of every row to
 * *keys and *n (each once). */
int sq_collect_keys(sq_conn_t *c, sqlite3_stmt *st, arena_t *a, const char ***keys, size_t *n,
                    const char *what);

/* ---- ops (the ops table: sqlite.c) ----------------------------------------------------- */

/* sqlite_templates.c */
int sq_template_create(store_conn_t *conn, int64_t user_id, const char *name,
                       const char *description, const char *instruction, int max, arena_t *a,
                       custom_template_t *out);
int sq_template_get(store_conn_t *conn, int64_t user_id, int64_t id, bool with_deleted,
                    arena_t *a, custom_template_t *out);
int sq_template_list(store_conn_t *conn, int64_t user_id, arena_t *a, custom_template_t **out,
                     size_t *n);
int sq_template_update(store_conn_t *conn, int64_t user_id, int64_t id,
                       const template_patch_t *p, arena_t *a, custom_template_t *out);
int sq_template_delete(store_conn_t *conn, int64_t user_id, int64_t id);

/* sqlite_users.c */
int sq_user_ensure(store_conn_t *conn, const char *name, int64_t *user_id);
int sq_user_create(store_conn_t *conn, const char *name, int64_t quota_words,
                   int64_t quota_images, arena_t *a, user_info_t *out);
int sq_user_get(store_conn_t *conn, int64_t id, const char *name, arena_t *a, user_info_t *out);
int sq_user_list(store_conn_t *conn, int64_t limit, int64_t offset, arena_t *a,
                 user_info_t **out, size_t *n, int64_t *total);
int sq_user_secret(store_conn_t *conn, const char *name, arena_t *a, int64_t *user_id,
                   const char **hash);
int sq_user_password(store_conn_t *conn, int64_t user_id, const char *hash, int64_t keep,
                     int64_t *ended);
int sq_session_insert(store_conn_t *conn, const session_new_t *s, int64_t *id);
int sq_session_auth(store_conn_t *conn, const char *hash_hex, const char *period,
                    session_auth_t *out);
int sq_session_touch(store_conn_t *conn, int64_t id, int64_t now_us);
int sq_session_end(store_conn_t *conn, int64_t user_id, int64_t id, int64_t keep,
                   int64_t *ended);
int sq_session_list(store_conn_t *conn, int64_t user_id, int64_t limit, int64_t offset,
                    arena_t *a, session_info_t **out, size_t *n, int64_t *total);
/* single sign-on (API.md §21; sqlite_oidc.c) */
int sq_oidc_flow_put(store_conn_t *conn, const oidc_flow_t *f);
int sq_oidc_flow_take(store_conn_t *conn, const char *state_hash, int64_t now_us, arena_t *a,
                      oidc_flow_t *out);
int sq_user_oidc_find(store_conn_t *conn, const char *iss, const char *sub, int64_t *user_id);
int sq_user_oidc_link(store_conn_t *conn, int64_t id, const char *iss, const char *sub);
int sq_signin_failures(store_conn_t *conn, const char *bucket, int64_t minute, bool add,
                       int64_t *count);
int sq_user_update(store_conn_t *conn, int64_t id, const user_patch_t *p, arena_t *a,
                   user_info_t *out);
int sq_user_delete(store_conn_t *conn, int64_t id, arena_t *a, user_removed_t *out);
int sq_key_insert(store_conn_t *conn, int64_t user_id, const char *hash_hex, const char *prefix,
                  key_scope_t scope, int64_t expires_us, const char *name,
                  int64_t *key_id);
int sq_key_auth(store_conn_t *conn, const char *hash_hex, const char *period, key_auth_t *out);
int sq_key_list(store_conn_t *conn, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                key_info_t **out, size_t *n, int64_t *total);
int sq_key_get(store_conn_t *conn, int64_t key_id, arena_t *a, key_info_t *out);
int sq_key_revoke(store_conn_t *conn, int64_t key_id);
int sq_usage_add(store_conn_t *conn, int64_t user_id, const char *period,
                 const usage_counts_t *add);
int sq_idem_held(store_conn_t *conn, int64_t user_id, const char *key, int64_t now_us,
                 bool *held);
int sq_usage_list(store_conn_t *conn, const char *period, int64_t user_id, int64_t limit,
                  int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total);
/* sqlite_quota.c */
int sq_quota_hold(store_conn_t *conn, const quota_hold_t *h, int64_t *hold_id, int64_t *used);
int sq_quota_hold_end(store_conn_t *conn, int64_t hold_id, int64_t record_id);
/* sqlite_schema.c */
int sq_migrate(store_conn_t *conn);
/* After the migrations: starts the search index thread (sqlite_index.c), which then
 * indexes whatever a previous process left unindexed. */
void sq_index_start(store_t *s);
/* sqlite_records.c */
int sq_record_create(store_conn_t *conn, record_t *rec, idem_keep_t *keep, int64_t *job_id);
int sq_docs_create_completed(store_conn_t *conn, record_t *const *recs,
                            idem_keep_t *const *keeps, size_t n);
int sq_record_get_probed(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                         record_probe_fn probe, void *probe_arg, arena_t *a,
                         record_t *out);
int sq_record_get(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                  arena_t *a, record_t *out);
int sq_record_update(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                     const record_patch_t *p, arena_t *a, record_t *out);
int sq_record_delete(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                     arena_t *a, const char ***keys, size_t *n);
int sq_record_delete_many(store_conn_t *conn, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                          size_t n, arena_t *a, const char ***keys, size_t *nkeys,
                          int64_t **done, size_t *ndone);
int sq_media_keys(store_conn_t *conn, arena_t *a, const char ***keys, size_t *n);
/* sqlite_revisions.c */
int sq_record_regenerated(store_conn_t *conn, const record_t *in, int cap, idem_keep_t *keep,
                          arena_t *a, record_t *out);
int sq_record_regenerate(store_conn_t *conn, const record_t *in, const rec_action_t *act,
                         idem_keep_t *keep, arena_t *a,
                         record_t *out, int64_t *job_id);
int sq_revision_list(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                     int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                     int64_t *total);
int sq_revision_get(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                    int64_t number, arena_t *a, revision_t *out);
int sq_revision_restore(store_conn_t *conn, rec_kind_t kind, int64_t user_id, int64_t id,
                        int64_t number, const char *media_key, arena_t *a, record_t *out);
int sq_revision_trim(store_conn_t *conn, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                     const char ***keys, size_t *n);
/* sqlite_tail.c: the index of the tail's names (tailnames.h), one per kind (sqlite.c) */
tailnames_t *sq_tail(store_t *s, rec_kind_t kind);
/* Inside the inserting / renaming transaction. */
void sq_tail_added(sq_conn_t *c, const record_t *rec, int64_t id);
void sq_tail_renamed(sq_conn_t *c, rec_kind_t kind, int64_t id);
/* At the start (sq_index_start): from the records above the watermark. */
int sq_tail_rebuild(sq_conn_t *c);
/* What an indexed search of list key k binds for the tail (sqlite_lists.c): the
 * watermark, read in the caller's read transaction; the candidates (a JSON array of
 * ids above it) of the tail's names index when it covers the tail from the watermark
 * up to hi; the rest, above hi, scanned. Without it hi = upto and no candidates. */
typedef struct {
    int64_t upto, hi;
    const char *cands;
} sq_tail_query_t;
int sq_tail_query(sq_conn_t *c, int k, const list_query_t *q, const char *fold, arena_t *a,
                  sq_tail_query_t *out);
/* sqlite_lists.c */
int sq_record_list(store_conn_t *conn, rec_kind_t kind, const list_query_t *q,
                   arena_t *a, record_list_t *out);
/* sqlite_jobs.c */
int sq_job_claim(store_conn_t *conn, double lease_s, const char *busy, arena_t *a, job_t *out);
int sq_job_renew(store_conn_t *conn, int64_t job_id, const char *token, double lease_s);
int sq_job_complete(store_conn_t *conn, const job_t *job, const char *result,
                    int64_t words, const char *media_key, const char *revised_prompt, arena_t *a,
                    record_t *out);
int sq_job_fail(store_conn_t *conn, const job_t *job, const char *error);
int sq_job_count(store_conn_t *conn, int64_t *n);
int sq_job_counts(store_conn_t *conn, int64_t *queued, int64_t *running);
int sq_job_exists(store_conn_t *conn, int64_t job_id, bool *exists);
int sq_job_release_all(store_conn_t *conn, int64_t *n);
/* sqlite_limits.c */
int sq_rate_gcra(store_conn_t *conn, const char *bucket, int64_t now, int64_t interval,
                 int64_t period, bool prune, int64_t *tat_us, bool *allowed);
int sq_idem_begin(store_conn_t *conn, int64_t user_id, const char *key,
                  const char *digest, int64_t now, int64_t lease_us, int64_t ttl_us,
                  bool prune, arena_t *a, idem_t *out);
int sq_idem_finish(store_conn_t *conn, int64_t user_id, const char *key,
                   const char *token, int status, const char *location, const char *body,
                   int64_t expires_us);
int sq_idem_abort(store_conn_t *conn, int64_t user_id, const char *key, const char *token);
int sq_idem_keep(store_conn_t *conn, const idem_keep_t *k, const char *location,
                 const char *body);

#endif
