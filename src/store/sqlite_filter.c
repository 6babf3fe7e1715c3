/* sqlite_filter.c — the results' index's second level (migration 33, issue 38): one
 * small filter per document of the letter pieces of its folded text, kept per block of
 * the results' index (search_filters, one row per block of 1 << SQ_BLOCK_BITS documents,
 * SQ_FILTER_BYTES a document). A result search reads a matching block's row once and
 * reads only the documents whose filter holds every piece of the search: a word no
 * text has but whose trigrams are each common (`kettle`) matched 6 % of the blocks,
 * ~74,000 texts unpacked and checked at 1M documents (190 ms of CPU); their filters
 * turn most of them down unread, from the documents' id index (docs/benchmarks.md
 * "Result search at 1M").
 *
 * The filter of a text: for each GRAM (4) consecutive characters of its folding that
 * are all letters (an ASCII letter, or any character outside ASCII), one bit of
 * SQ_FILTER_BYTES * 8, chosen by a hash of their UTF-8 bytes (filter_bit: part of the
 * stored format; changing it or GRAM needs the table filled again). Four letters, not
 * the index's three: a piece of four carries the order of the trigrams (`kettle`'s
 * `kett`, `ettl`, `ttle` are rare where `ket`, `ett`, `ttl`, `tle` each are not),
 * which turned down twice the texts in the same bits (measured on the bench's texts).
 * Pieces with a space, a digit or a sign are left out: they would fill the bits, and a
 * search with no four letters in a row (`4242`, `the cat`) is not filtered (its
 * documents are read and checked as before). A document's slot only gains bits (like
 * its block's row in the trigram table): the index thread ORs each text it indexes
 * into it, so a filter holds every text the document had since, a superset, and the
 * search's ink_has() still checks what passes. Part of the SQLite backend. */
#include "store/sqlite_int.h"

#include "core/unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS (1 << SQ_BLOCK_BITS)
#define GRAM 4 /* characters a piece */
#define ROW_BYTES (SLOTS * SQ_FILTER_BYTES)

static bool is_letter(const unsigned char *p)
{
    return *p >= 0x80 || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
}

/* The bit of the piece at [p, end): FNV-1a of its bytes, mixed (stored format). */
static unsigned filter_bit(const unsigned char *p, const unsigned char *end)
{
    uint32_t h = 2166136261u;
    for (; p < end; p++)
        h = (h ^ *p) * 16777619u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h % (SQ_FILTER_BYTES * 8);
}

/* Sets in f the bits of the letter pieces (GRAM letters in a row) of the folded text s
 * (n bytes); returns how many pieces it saw. */
static int filter_add(const char *s, size_t n, uint8_t *f)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    const unsigned char *at[GRAM] = {NULL}; /* the last GRAM characters */
    int letters = 0, seen = 0;
    while (p < end) {
        const unsigned char *c = p++;
        while (p < end && (*p & 0xC0) == 0x80)
            p++;
        memmove(at, at + 1, (GRAM - 1) * sizeof(*at));
        at[GRAM - 1] = c;
        letters = is_letter(c) ? letters + 1 : 0;
        if (letters >= GRAM) {
            unsigned b = filter_bit(at[0], p);
            f[b >> 3] |= (uint8_t)(1u << (b & 7));
            seen++;
        }
    }
    return seen;
}

bool sq_filter_needle(const char *fold, uint8_t mask[SQ_FILTER_BYTES])
{
    memset(mask, 0, SQ_FILTER_BYTES);
    return filter_add(fold, strlen(fold), mask) > 0;
}

/* The folding of a stored text (sqlite_text.c) into *f; *owned to free. */
static int value_fold(sqlite3_value *v, const char **f, size_t *n, char **owned)
{
    const char *t;
    char *raw;
    size_t len;
    int rc = sq_value_result(v, &t, &len, &raw);
    *owned = NULL;
    *f = NULL;
    *n = 0;
    if (rc != SQLITE_OK || !t)
        return rc;
    if (uni_fold_is_same(t, len)) {
        *f = t, *n = len, *owned = raw;
        return SQLITE_OK;
    }
    char *folded = uni_fold(t, len, n);
    free(raw);
    if (!folded)
        return SQLITE_NOMEM;
    *f = *owned = folded;
    return SQLITE_OK;
}

/* ink_filter_row(id, text): a block's row with the slot of document id holding the
 * filter of the text (the others empty), to be ORed into the row (ink_filter_or). */
static void fn_filter_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *f;
    char *owned;
    size_t n;
    int rc = value_fold(argv[1], &f, &n, &owned);
    if (rc != SQLITE_OK) {
        sq_value_result_error(ctx, rc, "ink_filter_row");
        return;
    }
    uint8_t *row = sqlite3_malloc(ROW_BYTES);
    if (!row) {
        free(owned);
        sqlite3_result_error_nomem(ctx);
        return;
    }
    memset(row, 0, ROW_BYTES);
    int64_t slot = sqlite3_value_int64(argv[0]) & (SLOTS - 1);
    if (f)
        filter_add(f, n, row + slot * SQ_FILTER_BYTES);
    free(owned);
    sqlite3_result_blob(ctx, row, ROW_BYTES, sqlite3_free);
}

/* ink_filter_or(a, b): the bitwise OR of two rows (a row of another length, or NULL,
 * gives the other). */
static void fn_filter_or(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const uint8_t *a = sqlite3_value_blob(argv[0]), *b = sqlite3_value_blob(argv[1]);
    bool a_ok = a && sqlite3_value_bytes(argv[0]) == ROW_BYTES;
    bool b_ok = b && sqlite3_value_bytes(argv[1]) == ROW_BYTES;
    if (!a_ok || !b_ok) {
        sqlite3_result_value(ctx, argv[a_ok ? 0 : 1]);
        return;
    }
    uint8_t *row = sqlite3_malloc(ROW_BYTES);
    if (!row) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    for (int i = 0; i < ROW_BYTES; i++)
        row[i] = a[i] | b[i];
    sqlite3_result_blob(ctx, row, ROW_BYTES, sqlite3_free);
}

/* Whether slot's filter in the block's row argv[0] may hold the mask argv[2]
 * (sq_filter_needle): true when there is no row, no mask, or a row of another length
 * (the document is then read and checked). */
static bool slot_may(sqlite3_value **argv, int64_t slot)
{
    const uint8_t *row = sqlite3_value_blob(argv[0]), *mask = sqlite3_value_blob(argv[2]);
    if (!row || !mask || sqlite3_value_bytes(argv[0]) != ROW_BYTES ||
        sqlite3_value_bytes(argv[2]) != SQ_FILTER_BYTES)
        return true;
    const uint8_t *f = row + (slot & (SLOTS - 1)) * SQ_FILTER_BYTES;
    bool may = true;
    for (int i = 0; i < SQ_FILTER_BYTES; i++)
        may &= (f[i] & mask[i]) == mask[i];
    return may;
}

/* ink_filter_may(row, id, mask): whether document id may hold the search (slot_may;
 * what tests count with). */
static void fn_filter_may(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sqlite3_result_int(ctx, slot_may(argv, sqlite3_value_int64(argv[1])));
}

/* ink_filter_ids(row, block, mask): the JSON array of the ids of block's documents that
 * may hold the search (slot_may), ascending. A search joins the documents by these ids,
 * so a document turned down costs no row of SQL (the filters of 74,272 candidates
 * tested row by row took 12 ms at 1M). */
static void fn_filter_ids(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    int64_t first = sqlite3_value_int64(argv[1]) * SLOTS;
    char out[SLOTS * 22 + 3], *o = out;
    *o++ = '[';
    for (int slot = 0; slot < SLOTS; slot++)
        if (slot_may(argv, slot))
            o += snprintf(o, 22, "%s%lld", o > out + 1 ? "," : "", (long long)(first + slot));
    *o++ = ']';
    sqlite3_result_text(ctx, out, (int)(o - out), SQLITE_TRANSIENT);
}

static int filter_init(sqlite3 *db, char **err, const void *api)
{
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_function_v2(db, "ink_filter_row", 2, flags, NULL, fn_filter_row,
                                        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "ink_filter_or", 2, flags, NULL, fn_filter_or,
                                        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "ink_filter_may", 3, flags, NULL, fn_filter_may,
                                        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "ink_filter_ids", 3, flags, NULL, fn_filter_ids,
                                        NULL, NULL, NULL);
    return rc;
}

/* Every connection of the process (the migration's, the index thread's, the store's):
 * as ink_fold (sqlite_lists.c). */
__attribute__((constructor)) static void filter_register(void)
{
    sqlite3_auto_extension((void (*)(void))filter_init);
}
