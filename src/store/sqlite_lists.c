/* sqlite_lists.c — record lists in the SQLite store: the SQL of each list key (from
 * fixed fragments only), prepared once per connection, the bound search (the folded
 * search and its FTS5 trigram query), the page and its total (cached in lists.c), and
 * the SQL functions of API.md §15 every connection of the process has. Part of the
 * SQLite backend (sqlite.c). */
#include "store/sqlite_int.h"

#include "core/unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ink_fold() and ink_key() ---------------------------------------------------------- */

/* ink_fold(text): its default case folding (core/unicode.c); NULL stays NULL. A text
 * may be in its stored form (a BLOB: sqlite_text.c). */
static void fn_fold(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *t;
    char *owned;
    size_t n, len = 0;
    int rc = sq_value_result(argv[0], &t, &n, &owned);
    if (rc != SQLITE_OK) {
        sq_value_result_error(ctx, rc, "ink_fold");
        return;
    }
    if (!t)
        return;
    if (uni_fold_is_same(t, n)) {
        if (owned)
            sqlite3_result_text64(ctx, owned, n, free, SQLITE_UTF8);
        else
            sqlite3_result_value(ctx, argv[0]);
        return;
    }
    char *f = uni_fold(t, n, &len);
    free(owned);
    if (!f)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_text64(ctx, f, len, free, SQLITE_UTF8);
}

/* ink_has(text, folded search): whether the text's folding holds the folded search (a
 * search's match without a folded copy of an ASCII text); NULL text: NULL. The text
 * may be in its stored form (sqlite_text.c). */
static void fn_has(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *t;
    char *owned;
    size_t n;
    int rc = sq_value_result(argv[0], &t, &n, &owned);
    if (rc != SQLITE_OK) {
        sq_value_result_error(ctx, rc, "ink_has");
        return;
    }
    if (!t)
        return;
    const char *needle = (const char *)sqlite3_value_text(argv[1]);
    if (!needle)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_int(ctx, uni_fold_contains(t, n, needle));
    free(owned);
}

/* ink_key(name): its order key, a BLOB (uni_sort_key); NULL stays NULL. */
static void fn_key(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    size_t len = 0;
    uint8_t *k = t ? uni_sort_key(t, (size_t)sqlite3_value_bytes(argv[0]), &len) : NULL;
    if (!k)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_blob64(ctx, k, len, free);
}

static int unicode_init(sqlite3 *db, char **err, const void *api)
{
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_function_v2(db, "ink_fold", 1, flags, NULL, fn_fold, NULL, NULL,
                                        NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "ink_key", 1, flags, NULL, fn_key, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "ink_has", 2, flags, NULL, fn_has, NULL, NULL, NULL);
    return rc;
}

/* The schema uses them (the name key's and the search index's triggers, migration 11),
 * so every connection of the process that writes needs them, the store's own and
 * any other (the index and checkpoint threads, a backup, a test): registered for all
 * of them before main() runs. */
__attribute__((constructor)) static void unicode_register(void)
{
    sqlite3_auto_extension((void (*)(void))unicode_init);
}

/* ---- lists ----------------------------------------------------------------------------- */

/* Parameter numbers used by every list statement. */
enum {
    LP_USER = 1, LP_PATTERN, LP_FILTER, LP_STYLE, LP_FAVORITE, LP_LIMIT, LP_OFFSET, LP_MATCH,
    LP_WINDOW, LP_SEEK_NAME, LP_SEEK_ID, LP_TAIL_IDS, LP_TAIL_HI, LP_TAG, LP_FILTER_MASK
};

/* How many rows of the order a name-ordered search looks through before it asks the
 * index (see list_page). */
#define WINDOW_ROWS 1000
#define WINDOW_MAX_END 100 /* only for pages ending this early in the order */

/* The filters of key k other than user and search. */
static void list_filters(int k, buf_t *b)
{
    if (k & LQ_FILTER)
        buf_puts(b, k & LQ_IMG ? " AND resolution = ?3" : " AND template_id = ?3");
    if (k & LQ_STYLE)
        buf_puts(b, " AND style = ?4");
    if (k & LQ_FAVORITE)
        buf_puts(b, " AND favorite = ?5");
    /* the tag's records of the kind, from record_tags' primary key (migration 23) */
    if (k & LQ_TAG)
        buf_printf(b, " AND id IN (SELECT record_id FROM record_tags WHERE tag_id ="
                      " (SELECT id FROM tags WHERE user_id = ?1 AND fold = ?14) AND kind = %d)",
                   k & LQ_IMG ? 1 : 0);
}

/* LQ_SEEK: only the rows after the boundary ?10, ?11 in the order (lists.c). */
static void list_seek_sql(int k, buf_t *b)
{
    const char *op = k & LQ_ASC ? ">" : "<";
    if (!(k & LQ_SEEK))
        return;
    if (k & LQ_BY_NAME) /* the boundary's key computed once; spelled as two conditions so
                         * the key's index is searched from it */
        buf_printf(b, " AND name_key %s= ink_key(?10) AND (name_key %s ink_key(?10)"
                      " OR id %s ?11)", op, op, op);
    else
        buf_printf(b, " AND id %s ?11", op);
}

/* LQ_WINDOW: the page among the first WINDOW_ROWS rows of the name order (with the
 * filters) only: the rows whose key is at most (asc; at least, desc) the key of the
 * WINDOW_ROWS-th row, a prefix of the order (rows of that same key come along: the
 * same name). The name index is walked in order from its start, each row checked (a
 * name search on the index's own name column, a result search on the row's result),
 * and the walk stops when the page is full (a window sorted again by key would sort
 * a thousand rows for every page). With fewer rows than the
 * window the bound is the end of the order: x'' or 32 bytes of 0xFF, past any key a
 * name of fewer than 16 U+FFFF characters has; a longer one only makes the window
 * shorter, which the page then tells (it is not full; the index serves it). */
static void list_window_sql(int k, const char *table, buf_t *b)
{
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    buf_printf(b, " FROM %s WHERE user_id = ?1", table);
    list_filters(k, b);
    buf_printf(b, " AND name_key %s coalesce((SELECT name_key FROM %s WHERE user_id = ?1",
               k & LQ_ASC ? "<=" : ">=", table);
    list_filters(k, b);
    buf_printf(b, " ORDER BY name_key %s, id %s LIMIT 1 OFFSET ?9 - 1), %s)", dir, dir,
               k & LQ_ASC ? "x'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF'"
                          : "x''");
    buf_puts(b, k & LQ_SEARCH_RESULT ? " AND ink_has(result, ?2)"
                                     : " AND ink_has(name, ?2)");
    buf_printf(b, " ORDER BY name_key %s, id %s LIMIT ?6 OFFSET ?7", dir, dir);
}

/* The search and filter conditions of key k after "WHERE user_id = ?1". */
static void list_conds(int k, buf_t *b)
{
    if (k & LQ_SEARCH_NAME)
        buf_puts(b, " AND ink_has(name, ?2)");
    if (k & LQ_SEARCH_RESULT)
        buf_puts(b, " AND ink_has(result, ?2)");
    list_filters(k, b);
}

/* Whether page statement k is a result search of documents by id, read in the results'
 * index's block order and put in id order by list_block_rows. */
static bool list_by_block(int k)
{
    return (k & LQ_INDEXED) && (k & LQ_SEARCH_RESULT) && !(k & LQ_IMG) &&
           !(k & (LQ_BY_NAME | LQ_COUNT | LQ_WINDOW | LQ_BOUNDS));
}

/* A search of three characters or more (LQ_INDEXED) has two parts, in the same read
 * transaction: the records the index holds (at or below the kind's search_index
 * watermark) come from the trigram table, each candidate's row read by its id
 * (CROSS JOIN keeps that order: the full-text table gives its rowids in id order, so an
 * id-ordered page stops after its rows); the records above the watermark, not indexed
 * yet (sqlite_index.c), are the tail; so are, for a result search, the documents
 * whose text changed since the index had it (search_changed, a fourth part). Of the
 * tail, the ids the index of its names
 * (sqlite_tail.c, a name search only) covers are read by id from its candidates (?12, a
 * JSON array); the rest, above ?13, is scanned on the user's id index (without that
 * index ?12 is empty and ?13 is the watermark, read in the same transaction: the whole
 * tail is scanned). ink_has(column, folded search) checks every row with the
 * contract's semantics: the index gives a superset (the rows holding every trigram,
 * migration 7), the check keeps results exactly those of a scan.
 *
 * The results' index has a row per block of documents (migration 19, SQ_BLOCK_BITS):
 * each document of a matching block at or below the watermark is a candidate (its
 * rows read by the id range of the block).
 *
 * Rows: the parts are one UNION ALL ordered by the page's order, which SQLite runs
 * as a merge of them, each in its own order (a last column carries the id for the
 * id order: the index part's is the FTS rowid, which is what it is ordered by). The
 * results' index gives its rows in block order only (SQLite sorts a join's rows by a
 * second table's column itself, all of them): an id-ordered page of a result search
 * is the merge in block order (a column more: the index part's FTS rowid, the others'
 * id >> SQ_BLOCK_BITS) from a block before the page's first row on (a block has at
 * most 1 << SQ_BLOCK_BITS rows, together in both orders), read by list_block_rows up to
 * the end of the block of the page's last row, sorted by id, and the page cut from it
 * (it read 2 blocks' worth of matching rows more, whatever the blocks: 74 rows for a
 * first page of 10, most of a common word's 2.3 ms). */
static void list_indexed_sql(int k, const char *table, buf_t *b)
{
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    /* a compound SELECT orders by its result columns only: the id (the index part's is
     * its FTS rowid), then, for the name order, the name's key */
    const char *cols = k & LQ_KEYS ? "id, updated_us" : k & LQ_IMG ? IMG_COLS : DOC_COLS;
    int sort_col = (k & LQ_KEYS ? 2 : REC_NCOLS) + 1;
    const char *key_col = k & LQ_BY_NAME ? ", name_key" : "";
    /* the searched column's own trigram table (migration 11) */
    const char *fts = k & LQ_IMG ? "images_fts"
                      : k & LQ_SEARCH_RESULT ? "documents_result_fts" : "documents_name_fts";
    bool blocks = (k & LQ_SEARCH_RESULT) && !(k & LQ_IMG);
    bool by_block = list_by_block(k);
    /* the candidates are read by id (+user_id: not from the user's index, which the
     * planner would walk from the watermark on, the whole tail) */
    static const char *const tail[3] = {
        "id IN (SELECT value FROM json_each(?12)) AND +user_id = ?1",
        "id > ?13 AND user_id = ?1",
        "id IN (SELECT id FROM search_changed) AND +user_id = ?1",
    };
    /* a result search: the documents whose text changed since the index had it
     * (migration 17, sqlite_index.c) are read as the tail is, not from the index */
    bool changed = k & LQ_SEARCH_RESULT;
    for (int part = 0; part < (changed ? 4 : 3); part++) {
        if (k & LQ_COUNT)
            buf_puts(b, part ? " + (SELECT COUNT(*)" : "SELECT (SELECT COUNT(*)");
        else if (part)
            buf_printf(b, " UNION ALL SELECT %s, id%s%s", cols, key_col,
                       by_block ? ", id >> " SQ_BLOCK_BITS_SQL : "");
        else if (by_block)
            buf_printf(b, "SELECT %s, id, fts_block", cols);
        else /* the id: the index part's is its FTS rowid, but for the results' blocks */
            buf_printf(b, "SELECT %s, %s%s", cols, blocks ? "id" : fts, blocks ? "" : ".rowid");
        if (!part && !by_block)
            buf_puts(b, key_col);
        if (part)
            buf_printf(b, " FROM %s WHERE %s", table, tail[part - 1]);
        else if (blocks) /* each matching block's filters (sqlite_filter.c) read once, and
                          * only the documents whose filter may hold the search, by id (in a
                          * subquery, which SQLite flattens: json_each has an id column) */
            buf_printf(b, " FROM (SELECT %s.*, %s.rowid AS fts_block FROM %s LEFT JOIN"
                          " search_filters ON search_filters.block = %s.rowid CROSS JOIN"
                          " json_each(ink_filter_ids(search_filters.bits, %s.rowid, ?15))"
                          " AS block_ids CROSS JOIN %s ON %s.id = block_ids.value WHERE %s"
                          " MATCH ?8) WHERE user_id = ?1 AND id <= ?13"
                          " AND id NOT IN (SELECT id FROM search_changed)",
                       table, fts, fts, fts, fts, table, table, fts);
        else
            buf_printf(b, " FROM %s CROSS JOIN %s ON %s.id = %s.rowid"
                          " WHERE %s MATCH ?8 AND user_id = ?1%s",
                       fts, table, table, fts, fts,
                       changed ? " AND id NOT IN (SELECT id FROM search_changed)" : "");
        list_conds(k, b);
        if (k & LQ_COUNT)
            buf_puts(b, ")");
    }
    if (k & LQ_COUNT)
        return;
    if (by_block) { /* no end: list_block_rows stops after the page's last block */
        buf_printf(b, " ORDER BY %d %s LIMIT -1 OFFSET ?7", sort_col + 1, dir);
        return;
    }
    if (k & LQ_BY_NAME)
        buf_printf(b, " ORDER BY %d %s, %d %s", sort_col + 1, dir, sort_col, dir);
    else
        buf_printf(b, " ORDER BY %d %s", sort_col, dir);
    buf_puts(b, " LIMIT ?6 OFFSET ?7");
}

/* The SQL of a list key, from fixed fragments only. */
static void list_sql(int k, buf_t *b)
{
    bool img = k & LQ_IMG;
    const char *table = img ? "images" : "documents";
    if ((k & LQ_INDEXED) && !(k & LQ_WINDOW)) {
        list_indexed_sql(k, table, b);
        return;
    }
    if (k & LQ_COUNT)
        buf_puts(b, "SELECT COUNT(*)");
    else if (k & LQ_BOUNDS)
        buf_puts(b, k & LQ_BY_NAME ? "SELECT id, name" : "SELECT id");
    else if (k & LQ_KEYS)
        buf_puts(b, "SELECT id, updated_us");
    else
        buf_puts(b, img ? "SELECT " IMG_COLS : "SELECT " DOC_COLS);
    if (k & LQ_WINDOW) {
        list_window_sql(k, table, b);
        return;
    }
    /* a tag's list is read from the tag's records (record_tags' primary key, in id
     * order): an id-ordered page stops after its rows, a name-ordered one sorts the
     * tag's records only; never a walk of every record of the user */
    if (k & LQ_TAG)
        buf_printf(b, " FROM (SELECT record_id AS rid FROM record_tags WHERE tag_id ="
                      " (SELECT id FROM tags WHERE user_id = ?1 AND fold = ?14) AND kind = %d)"
                      " CROSS JOIN %s ON id = rid WHERE user_id = ?1", img ? 1 : 0, table);
    else
        buf_printf(b, " FROM %s WHERE user_id = ?1", table);
    list_conds(k & ~LQ_TAG, b);
    list_seek_sql(k, b);
    if (k & LQ_COUNT)
        return;
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    if (k & LQ_BY_NAME)
        buf_printf(b, " ORDER BY name_key %s, id %s", dir, dir);
    else
        buf_printf(b, " ORDER BY %s %s", k & LQ_TAG ? "rid" : "id", dir);
    buf_puts(b, " LIMIT ?6 OFFSET ?7");
}

static int list_stmt(sq_conn_t *c, int k, sqlite3_stmt **out)
{
    if (!c->list[k]) {
        buf_t sql;
        buf_init(&sql);
        list_sql(k, &sql);
        int rc = sq_prepare(c, sql.data, &c->list[k], "record_list sq_prepare");
        buf_free(&sql);
        if (rc != STORE_OK)
            return rc;
    }
    *out = c->list[k];
    return STORE_OK;
}

/* The search as bound to a list statement: its default case folding (the rows whose
 * folded column holds it match: ink_has(), '%' and '_' plain characters), and the
 * full-text query on the key's column's own table: the folded search's trigrams, '"' doubled. */
typedef struct {
    const char *fold, *match;
    sq_tail_query_t tail; /* LQ_INDEXED: the tail's parts (sqlite_tail.c) */
    bool masked;          /* mask: the bits of its pieces of four letters (sqlite_filter.c) */
    uint8_t mask[SQ_FILTER_BYTES];
} list_search_t;

#define MATCH_TRIGRAMS 32

/* The character after the one at s (UTF-8; s itself at the end of the string). */
static const char *char_after(const char *s)
{
    if (!*s)
        return s;
    s++;
    while ((*s & 0xC0) == 0x80)
        s++;
    return s;
}

static list_search_t list_search(int k, const list_query_t *q, arena_t *a)
{
    list_search_t ls = {0};
    if (!(k & LQ_SEARCH))
        return ls;
    size_t flen = 0;
    char *f = uni_fold(q->search, strlen(q->search), &flen);
    ls.fold = f ? arena_strdup(a, f) : q->search;
    free(f);
    if (!(k & LQ_INDEXED))
        return ls;
    /* an AND of the search's trigrams, one phrase each (the index has no positions,
     * migration 7): each character starts one while three remain, at most
     * MATCH_TRIGRAMS of them (any subset still gives a superset) */
    const char *s = ls.fold;
    size_t len = strlen(s);
    char *m = arena_alloc(a, 6 * len + 16 + 8 * MATCH_TRIGRAMS), *o = m;
    *o++ = '('; /* the column's own table: no column filter */
    int n = 0;
    for (const char *t = s; *t && n < MATCH_TRIGRAMS; t = char_after(t)) {
        const char *end = char_after(char_after(char_after(t)));
        if (end == char_after(char_after(t)))
            break; /* under three characters left */
        o += sprintf(o, "%s\"", n++ ? " AND " : "");
        for (const char *c = t; c < end; c++) {
            if (*c == '"')
                *o++ = '"';
            *o++ = *c;
        }
        *o++ = '"';
    }
    *o++ = ')';
    *o = '\0';
    ls.match = m;
    ls.masked = sq_filter_needle(ls.fold, ls.mask);
    return ls;
}

static void list_bind(sqlite3_stmt *st, int k, const list_query_t *q, const list_search_t *ls)
{
    sqlite3_bind_int64(st, LP_USER, q->user_id);
    if (k & LQ_SEARCH)
        sq_bind_text(st, LP_PATTERN, ls->fold);
    if ((k & LQ_INDEXED) && !(k & LQ_WINDOW)) {
        sq_bind_text(st, LP_MATCH, ls->match);
        sq_bind_text(st, LP_TAIL_IDS, ls->tail.cands);
        sqlite3_bind_int64(st, LP_TAIL_HI, ls->tail.hi);
        if (ls->masked && (k & LQ_SEARCH_RESULT) && !(k & LQ_IMG))
            sqlite3_bind_blob(st, LP_FILTER_MASK, ls->mask, SQ_FILTER_BYTES, SQLITE_TRANSIENT);
        else /* (never a pointer left from an earlier search) */
            sqlite3_bind_null(st, LP_FILTER_MASK);
    }
    if (k & LQ_WINDOW)
        sqlite3_bind_int(st, LP_WINDOW, WINDOW_ROWS);
    if (k & LQ_FILTER) {
        if (k & LQ_IMG)
            sq_bind_text(st, LP_FILTER, q->resolution);
        else
            sqlite3_bind_int(st, LP_FILTER, q->template_id);
    }
    if (k & LQ_STYLE)
        sq_bind_text(st, LP_STYLE, q->style);
    if (k & LQ_FAVORITE)
        sqlite3_bind_int(st, LP_FAVORITE, q->favorite != 0);
    if (k & LQ_TAG)
        sq_bind_text(st, LP_TAG, q->tag);
}

/* Whether the name search of count key k has more than COMMON_ROWS candidates in the
 * index: then a scan of the name index (names only, no row read) counts its rows
 * faster than reading every candidate's row by id. */
#define COMMON_ROWS 5000

static int name_is_common(sq_conn_t *c, int k, const list_search_t *ls, bool *common)
{
    *common = false;
    if (!(k & LQ_INDEXED) || !(k & LQ_SEARCH_NAME))
        return STORE_OK;
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_FTS_COMMON_DOC + ((k & LQ_IMG) != 0), &st);
    if (rc != STORE_OK)
        return rc;
    sq_bind_text(st, 1, ls->match);
    sqlite3_bind_int(st, 2, COMMON_ROWS);
    rc = sq_step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        *common = sqlite3_column_int64(st, 0) >= COMMON_ROWS;
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* The user's record count and version of the kind of key k (0, 0 when none). */
static int user_counts(sq_conn_t *c, int k, const list_query_t *q, int64_t *n,
                       int64_t *version)
{
    sqlite3_stmt *st;
    int rc = sq_stmt(c, ST_USER_TOTAL, &st);
    if (rc != STORE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, q->user_id);
    sqlite3_bind_int(st, 2, (k & LQ_IMG) ? 1 : 0);
    *n = *version = 0;
    rc = sq_step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        *n = sqlite3_column_int64(st, 0);
        *version = sqlite3_column_int64(st, 1);
        sq_stmt_done(st);
    }
    return rc == STORE_NOTFOUND ? STORE_OK : rc;
}

/* The total of key k: the user's record count for an unfiltered list; otherwise the
 * cached total of this version of the user's records (store_int.h), or a count. */
static int list_total(sq_conn_t *c, int k, const list_query_t *q, const list_search_t *ls,
                      int64_t n, int64_t version, int64_t *total)
{
    sqlite3_stmt *st;
    int rc;
    store_counts_t *cc = store_counts(c->base.store);
    if (!(k & LQ_FILTERED) || n == 0) {
        *total = n;
        return STORE_OK;
    }
    if (store_counts_get(cc, (unsigned)k, q, version, total))
        return STORE_OK;
    int ck = (k & ~(LQ_BY_NAME | LQ_ASC | LQ_KEYS | LQ_WINDOW)) | LQ_COUNT;
    bool common = false;
    if ((rc = name_is_common(c, ck, ls, &common)) != STORE_OK)
        return rc;
    if ((rc = list_stmt(c, common ? ck & ~LQ_INDEXED : ck, &st)) != STORE_OK)
        return rc;
    list_bind(st, common ? ck & ~LQ_INDEXED : ck, q, ls);
    rc = sq_step_row(c, st, "record_list");
    if (rc == STORE_OK) {
        *total = sqlite3_column_int64(st, 0);
        sq_stmt_done(st);
        store_counts_put(cc, (unsigned)ck, q, version, *total);
    }
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

/* Binds the boundary of an LQ_SEEK statement. */
static void list_bind_seek(sqlite3_stmt *st, int k, const store_page_key_t *seek)
{
    if (!(k & LQ_SEEK))
        return;
    if (k & LQ_BY_NAME)
        sq_bind_text(st, LP_SEEK_NAME, seek->name);
    sqlite3_bind_int64(st, LP_SEEK_ID, seek->id);
}

/* The boundary (lists.c) an unsearched list's page at offset seeks past: the deepest
 * known at or before it at the user's current version, after extending the known ones
 * by a walk of the order's keys (an index-only scan for the id and name orders without
 * filters) from the deepest one. *k gains LQ_SEEK and *offset becomes the rows left to
 * skip after the boundary; both stay as they were when the offset is under one block. */
static int list_boundary(sq_conn_t *c, int *k, const list_query_t *q, const list_search_t *ls,
                         arena_t *a, store_page_key_t *key, int64_t *offset)
{
    int64_t j = *offset / STORE_PAGE_EVERY, n, version;
    if ((*k & LQ_SEARCH) || j == 0)
        return STORE_OK;
    int rc = user_counts(c, *k, q, &n, &version);
    if (rc != STORE_OK)
        return rc;
    if (j > n / STORE_PAGE_EVERY)
        j = n / STORE_PAGE_EVERY; /* no deeper boundary: the user has no more rows */
    if (j == 0)
        return STORE_OK;
    store_pages_t *pc = store_pages(c->base.store);
    int64_t known = -1;
    int64_t m = store_pages_get(pc, (unsigned)*k, q, j, a, key, &known);
    if (m > 0 && known != version)
        m = 0;
    if (m < j) {
        int bk = (*k & ~LQ_KEYS) | LQ_BOUNDS | (m > 0 ? LQ_SEEK : 0);
        sqlite3_stmt *st;
        if ((rc = list_stmt(c, bk, &st)) != STORE_OK)
            return rc;
        list_bind(st, bk, q, ls);
        list_bind_seek(st, bk, key);
        sqlite3_bind_int64(st, LP_LIMIT, (j - m) * STORE_PAGE_EVERY);
        sqlite3_bind_int64(st, LP_OFFSET, 0);
        store_page_key_t *keys = arena_alloc(a, (size_t)(j - m) * sizeof(*keys));
        size_t nk = 0;
        int src;
        for (int64_t row = 1; (src = sqlite3_step(st)) == SQLITE_ROW; row++) {
            if (row % STORE_PAGE_EVERY)
                continue;
            keys[nk].id = sqlite3_column_int64(st, 0);
            keys[nk++].name = *k & LQ_BY_NAME
                                  ? arena_strdup(a, (const char *)sqlite3_column_text(st, 1))
                                  : NULL;
        }
        sq_stmt_done(st);
        if (src != SQLITE_DONE)
            return sq_error(c, src, "record_list");
        store_pages_put(pc, (unsigned)*k, q, version, m, keys, nk);
        if (nk > 0) {
            m += (int64_t)nk;
            *key = keys[nk - 1];
        }
    }
    if (m > 0) {
        *k |= LQ_SEEK;
        *offset -= m * STORE_PAGE_EVERY;
    }
    return STORE_OK;
}

/* One row of a list statement: the whole record, or (keys) its id and updated_us, the
 * first two columns. */
static int read_row(sqlite3_stmt *st, rec_kind_t kind, arena_t *a, bool keys, record_t *it)
{
    if (!keys)
        return sq_read_record(st, kind, a, it);
    memset(it, 0, sizeof(*it));
    it->kind = kind;
    it->id = sqlite3_column_int64(st, 0);
    it->updated_us = sqlite3_column_int64(st, 1);
    return STORE_OK;
}

/* Runs page statement k: up to per_page rows from offset (after seek with LQ_SEEK). */
static int list_rows(sq_conn_t *c, rec_kind_t kind, int k, const list_query_t *q,
                     const list_search_t *ls, const store_page_key_t *seek, int per_page,
                     int64_t offset, arena_t *a, record_list_t *out)
{
    sqlite3_stmt *st;
    int rc = list_stmt(c, k, &st);
    if (rc != STORE_OK)
        return rc;
    list_bind(st, k, q, ls);
    list_bind_seek(st, k, seek);
    sqlite3_bind_int(st, LP_LIMIT, per_page);
    sqlite3_bind_int64(st, LP_OFFSET, offset);
    int src = SQLITE_DONE;
    bool keys = k & LQ_KEYS;
    out->n = 0;
    while (out->n < (size_t)per_page && (src = sqlite3_step(st)) == SQLITE_ROW) {
        if (read_row(st, kind, a, keys, &out->items[out->n++]) != STORE_OK) {
            sq_stmt_done(st);
            return STORE_ERROR;
        }
    }
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "record_list");
    sq_stmt_done(st);
    return rc;
}

/* The rows of a list_by_block statement k (its last two columns the id and the block)
 * in id order: the statement starts a block before the page (offset - 1 << SQ_BLOCK_BITS,
 * or 0), whose first block then ends before the page; every later block is read whole,
 * up to the end of the block of the page's last row. Sorted by id (the blocks stay in
 * their order, the first one's rows before the others), the page is at offset - start. */
typedef struct {
    int64_t id;
    size_t at;
} block_row_t;

static int block_row_asc(const void *x, const void *y)
{
    const block_row_t *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

static int block_row_desc(const void *x, const void *y)
{
    return block_row_asc(y, x);
}

static int list_block_rows(sq_conn_t *c, rec_kind_t kind, int k, const list_query_t *q,
                           const list_search_t *ls, int per_page, int64_t offset, arena_t *a,
                           record_list_t *out)
{
    sqlite3_stmt *st;
    int rc = list_stmt(c, k, &st);
    if (rc != STORE_OK)
        return rc;
    int64_t start = offset > (1 << SQ_BLOCK_BITS) ? offset - (1 << SQ_BLOCK_BITS) : 0;
    int64_t end = offset + per_page; /* the page's rows are at [offset, end) */
    list_bind(st, k, q, ls);
    sqlite3_bind_int64(st, LP_OFFSET, start);
    bool keys = k & LQ_KEYS;
    int id_col = (keys ? 2 : REC_NCOLS), block_col = id_col + 1;
    size_t cap = (size_t)per_page + 2 * (1 << SQ_BLOCK_BITS), n = 0;
    record_t *rows = arena_take(a, cap * sizeof(*rows));
    block_row_t *order = arena_take(a, cap * sizeof(*order));
    int64_t block = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t b = sqlite3_column_int64(st, block_col);
        if (n > 0 && b != block && start + (int64_t)n >= end)
            break; /* the block of the page's last row is whole */
        block = b;
        if (n == cap) { /* cannot happen: a block has at most 1 << SQ_BLOCK_BITS rows */
            src = SQLITE_CORRUPT;
            break;
        }
        record_t *it = &rows[n];
        order[n].id = sqlite3_column_int64(st, id_col);
        order[n].at = n;
        n++;
        if (read_row(st, kind, a, keys, it) != STORE_OK) {
            sq_stmt_done(st);
            return STORE_ERROR;
        }
    }
    rc = src == SQLITE_DONE || src == SQLITE_ROW ? STORE_OK : sq_error(c, src, "record_list");
    sq_stmt_done(st);
    if (rc != STORE_OK)
        return rc;
    qsort(order, n, sizeof(*order), k & LQ_ASC ? block_row_asc : block_row_desc);
    out->n = 0;
    for (int64_t i = offset - start; i >= 0 && i < (int64_t)n && out->n < (size_t)per_page; i++)
        out->items[out->n++] = rows[order[i].at];
    return STORE_OK;
}

/* Reads one page. A page that is neither full nor empty is the last one, and so is an
 * empty first page: either tells the total without counting (*total_known is set).
 *
 * A name-ordered indexed search early in the order first looks for its page among the
 * first WINDOW_ROWS rows of the order: a common word fills it there without sorting
 * every candidate; a rarer one does not, and the index serves it. */
static int list_page(sq_conn_t *c, rec_kind_t kind, int k, const list_query_t *q,
                     const list_search_t *ls, int64_t kept, arena_t *a, record_list_t *out,
                     bool *total_known)
{
    int per_page = q->per_page > 0 ? q->per_page : 10;
    int64_t page = q->page > 0 ? q->page : 1;
    out->items = arena_take(a, (size_t)per_page * sizeof(record_t)); /* (list_rows clears each) */
    out->n = 0;
    if (page - 1 > (INT64_MAX - per_page) / per_page)
        return STORE_OK; /* so far past the end that the offset would overflow */
    int64_t offset = (page - 1) * per_page;
    if (kept >= 0 && offset >= kept) {
        /* past the end by the kept total (a word no document has: every page) */
        out->total = kept;
        *total_known = true;
        return STORE_OK;
    }
    int rc = STORE_OK;
    bool done = false;
    if ((k & LQ_INDEXED) && (k & LQ_BY_NAME) && offset + per_page <= WINDOW_MAX_END) {
        rc = list_rows(c, kind, k | LQ_WINDOW, q, ls, NULL, per_page, offset, a, out);
        done = rc != STORE_OK || out->n == (size_t)per_page;
    }
    if (!done) {
        /* deep pages of an unsearched list seek past a page boundary (lists.c) */
        int pk = k;
        int64_t rest = offset;
        store_page_key_t seek = {0};
        rc = list_boundary(c, &pk, q, ls, a, &seek, &rest);
        if (rc == STORE_OK && list_by_block(pk))
            rc = list_block_rows(c, kind, pk, q, ls, per_page, rest, a, out);
        else if (rc == STORE_OK)
            rc = list_rows(c, kind, pk, q, ls, &seek, per_page, rest, a, out);
    }
    /* the rows the caller does not hold, whole, in the same read transaction */
    for (size_t i = 0; (k & LQ_KEYS) && rc == STORE_OK && i < out->n; i++) {
        record_t *it = &out->items[i];
        it->probed = q->probe(q->probe_arg, kind, it->id, it->updated_us);
        if (!it->probed)
            rc = sq_record_get(&c->base, kind, q->user_id, it->id, a, it);
        if (rc == STORE_NOTFOUND)
            rc = STORE_ERROR; /* cannot happen: the same snapshot listed it */
    }
    /* (an empty first page: no row at all, as for a word no document has) */
    if (rc == STORE_OK && (out->n > 0 || offset == 0) && out->n < (size_t)per_page) {
        out->total = offset + (int64_t)out->n;
        *total_known = true;
    }
    return rc;
}

/* Page and total are read in one read transaction: they agree with each other. */
int sq_record_list(store_conn_t *conn, rec_kind_t kind, const list_query_t *q,
                   arena_t *a, record_list_t *out)
{
    sq_conn_t *c = sq(conn);
    int k = (int)store_list_key(kind, q) | (q->probe ? LQ_KEYS : 0);
    list_search_t ls = list_search(k, q, a);
    record_list_t r = {0};
    bool total_known = false;
    int rc = sq_tx_begin_read(c);
    if (rc != STORE_OK)
        return rc;
    if (k & LQ_INDEXED)
        rc = sq_tail_query(c, k, q, ls.fold, a, &ls.tail);
    /* the user's count and version, and a filtered list's total kept for that version
     * (store_int.h's totals cache): a page past it is empty without a read */
    int64_t n = 0, version = 0, kept = -1;
    if (rc == STORE_OK)
        rc = user_counts(c, k, q, &n, &version);
    store_counts_t *cc = store_counts(c->base.store);
    if (rc == STORE_OK && (k & LQ_FILTERED) && n > 0 &&
        !store_counts_get(cc, (unsigned)k, q, version, &kept))
        kept = -1;
    if (rc == STORE_OK)
        rc = list_page(c, kind, k, q, &ls, kept, a, &r, &total_known);
    /* a total the page told is kept too */
    if (rc == STORE_OK && total_known && kept < 0 && (k & LQ_FILTERED) && n > 0)
        store_counts_put(cc, (unsigned)k, q, version, r.total);
    if (rc == STORE_OK && !total_known)
        rc = list_total(c, k, q, &ls, n, version, &r.total);
    rc = sq_tx_end(c, rc);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}
