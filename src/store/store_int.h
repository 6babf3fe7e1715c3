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

/* The columns of a record row, in the order both backends read them. */
#define DOC_COLS                                                                           \
    "id, user_id, name, favorite, state, error, created_us, updated_us, prompt, "         \
    "creativity, template_id, result, words, prompt_tokens, completion_tokens, truncated, " \
    "revision, tone, language, length"
#define IMG_COLS                                                                           \
    "id, user_id, name, favorite, state, error, created_us, updated_us, description, "    \
    "resolution, style, media_key, revised_prompt, NULL, NULL, false, revision, NULL, NULL, " \
    "NULL"
#define REC_NCOLS 20
/* The columns of a revision row (revision_t), in the order both backends read them. */
#define REVDOC_COLS                                                                        \
    "number, source, action, created_us, prompt, creativity, template_id, tone, language, " \
    "length, result, words, prompt_tokens, completion_tokens, truncated"
#define REVIMG_COLS                                                                        \
    "number, source, action, created_us, description, resolution, style, media_key, "      \
    "revised_prompt"

/* Every change to a record moves updated_us strictly forward, so (id, updated_us) names
 * one version of it (api/rcache.h relies on this). greatest: the SQL dialect's
 * two-argument maximum; now: the parameter holding now_us(). */
#define STORE_BUMP(greatest, now) "updated_us = " greatest "(" now ", updated_us + 1)"

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
    LQ_SLOTS = 1 << 14
};
#define LQ_SEARCH (LQ_SEARCH_NAME | LQ_SEARCH_RESULT)
#define LQ_FILTERED (LQ_SEARCH | LQ_FILTER | LQ_STYLE | LQ_FAVORITE)

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
    .record_create = p##_record_create, .docs_create_completed = p##_docs_create_completed, \
    .record_get = p##_record_get, .record_update = p##_record_update,                     \
    .record_delete = p##_record_delete, .record_list = p##_record_list,                   \
    .job_claim = p##_job_claim, .job_renew = p##_job_renew,                               \
    .job_complete = p##_job_complete, .job_fail = p##_job_fail,                           \
    .job_count = p##_job_count, .job_counts = p##_job_counts, .rate_gcra = p##_rate_gcra,    \
    .idem_begin = p##_idem_begin, .idem_finish = p##_idem_finish,                         \
    .idem_abort = p##_idem_abort, .idem_keep = p##_idem_keep,                               \
    .media_keys = p##_media_keys, .record_regenerate = p##_record_regenerate,             \
    .revision_list = p##_revision_list, .revision_get = p##_revision_get,                 \
    .revision_restore = p##_revision_restore, .revision_trim = p##_revision_trim,          \
    .template_create = p##_template_create, .template_get = p##_template_get,             \
    .template_list = p##_template_list, .template_update = p##_template_update,           \
    .template_delete = p##_template_delete

#endif
