/* sqlite_text.c — the stored form of a document's text in the SQLite store: the
 * columns documents.result, document_revisions.result and search_changed.old (type ANY
 * since migration 20). Every binder and reader of them goes through here, and so do the
 * SQL functions that read them (ink_fold, ink_has: sqlite_lists.c).
 *
 * A value is one of:
 *   NULL  no text;
 *   TEXT  the plain text (every row written before migration 20 stayed readable so,
 *         and a text that deflate does not make shorter is kept so);
 *   BLOB  [1: the format][the plain text's length in bytes, LEB128: 7 bits a byte, low
 *         first, high bit set on all bytes but the last][raw deflate stream (RFC 1951,
 *         zlib level 1, 4 KB window)], written only when shorter than the text.
 * The form is a function of the text (the same text gives the same bytes), so SQL that
 * copies or compares the column as it is stays right: a restore's COALESCE, the
 * revision trigger of migration 16, the `OLD.result IS NOT NEW.result` triggers. (A
 * different zlib could deflate a text to other bytes: a comparison would then see a
 * change where there is none, which costs a needless trigger, never a wrong text.)
 * The PostgreSQL store keeps plain text (TOAST compresses it). Part of the SQLite
 * backend (sqlite.c). */
#include "store/sqlite_int.h"

#include "core/log.h"
#include "core/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define FORMAT_DEFLATE 1
#define LEVEL 1        /* as small as 6 for these texts (229 bytes against 226 a text) */
#define WINDOW_BITS 12 /* a 4 KB window: deflateInit2's cost is mostly its tables */
#define MEM_LEVEL 6
#define MAX_PLAIN (1u << 30) /* no stored text is longer (SQLite's own limit: 1e9) */
#define HDR_MAX 6            /* the format byte and up to 5 bytes of length */

unsigned char *sq_text_pack(const char *t, size_t n, size_t *len)
{
    /* it must be shorter than the text: the smallest form is 1 + 1 + 2 bytes */
    if (n < 5 || n > MAX_PLAIN)
        return NULL;
    unsigned char *b = malloc(n);
    if (!b)
        return NULL;
    size_t h = 0;
    b[h++] = FORMAT_DEFLATE;
    for (size_t v = n;; v >>= 7) {
        b[h] = (unsigned char)(v & 0x7f);
        if (v < 0x80) {
            h++;
            break;
        }
        b[h++] |= 0x80;
    }
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, LEVEL, Z_DEFLATED, -WINDOW_BITS, MEM_LEVEL, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
        free(b);
        return NULL;
    }
    z.next_in = (unsigned char *)t;
    z.avail_in = (uInt)n;
    z.next_out = b + h;
    z.avail_out = (uInt)(n - 1 - h); /* room for one byte less than the text */
    int rc = deflate(&z, Z_FINISH);
    size_t out = h + z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) { /* not shorter (or zlib could not): the text as it is */
        free(b);
        return NULL;
    }
    *len = out;
    return b;
}

long long sq_text_unpacked_len(const void *blob, size_t n)
{
    const unsigned char *b = blob;
    if (n < 2 || b[0] != FORMAT_DEFLATE)
        return -1;
    unsigned long long v = 0;
    size_t i = 1;
    for (int shift = 0;; shift += 7, i++) {
        if (i >= n || i >= HDR_MAX)
            return -1;
        v |= (unsigned long long)(b[i] & 0x7f) << shift;
        if (!(b[i] & 0x80))
            break;
    }
    /* deflate makes at most 1032 bytes of 1 (RFC 1951's longest match in ~2 bits) */
    if (v > MAX_PLAIN || v > (unsigned long long)(n - i - 1) * 1032 + 64)
        return -1;
    return (long long)v;
}

/* The offset of the deflate stream in a BLOB sq_text_unpacked_len accepted. */
static size_t stream_at(const unsigned char *b)
{
    size_t i = 1;
    while (b[i] & 0x80)
        i++;
    return i + 1;
}

bool sq_text_unpack(const void *blob, size_t n, char *dst, size_t len)
{
    const unsigned char *b = blob;
    size_t at = stream_at(b);
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, -15) != Z_OK) /* -15 reads a stream of any window */
        return false;
    z.next_in = (unsigned char *)b + at;
    z.avail_in = (uInt)(n - at);
    z.next_out = (unsigned char *)dst;
    z.avail_out = (uInt)len;
    int rc = inflate(&z, Z_FINISH);
    bool ok = rc == Z_STREAM_END && z.avail_in == 0 && z.total_out == len;
    inflateEnd(&z);
    dst[len] = '\0';
    /* raw deflate has no check value: a text has no NUL and is valid UTF-8 */
    return ok && !memchr(dst, '\0', len) && utf8_count(dst, len) >= 0;
}

void sq_bind_result(sqlite3_stmt *st, int i, const char *text)
{
    if (!text) {
        sqlite3_bind_null(st, i);
        return;
    }
    size_t n = strlen(text), len = 0;
    unsigned char *b = sq_text_pack(text, n, &len);
    if (b) /* SQLite frees it when the statement no longer needs it */
        sqlite3_bind_blob64(st, i, b, len, free);
    else /* the caller's memory lives until sq_stmt_done, as for sq_bind_text */
        sqlite3_bind_text64(st, i, text, n, SQLITE_STATIC, SQLITE_UTF8);
}

int sq_col_result(sqlite3_stmt *st, int i, arena_t *a, const char **out)
{
    if (sqlite3_column_type(st, i) != SQLITE_BLOB) {
        *out = sq_col_text(st, i, a);
        return STORE_OK;
    }
    const void *b = sqlite3_column_blob(st, i);
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    long long len = b ? sq_text_unpacked_len(b, n) : -1;
    char *t = len >= 0 ? arena_take(a, (size_t)len + 1) : NULL;
    if (!t || !sq_text_unpack(b, n, t, (size_t)len)) {
        *out = NULL;
        log_error("sqlite: a stored text (%s) is corrupt",
                  sqlite3_column_name(st, i) ? sqlite3_column_name(st, i) : "?");
        return STORE_ERROR;
    }
    *out = t;
    return STORE_OK;
}

int sq_value_result(sqlite3_value *v, const char **t, size_t *n, char **owned)
{
    *owned = NULL;
    *t = NULL;
    *n = 0;
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL:
        return SQLITE_OK;
    case SQLITE_BLOB: {
        const void *b = sqlite3_value_blob(v);
        size_t bn = (size_t)sqlite3_value_bytes(v);
        long long len = b ? sq_text_unpacked_len(b, bn) : -1;
        if (len < 0)
            return SQLITE_CORRUPT;
        char *p = malloc((size_t)len + 1);
        if (!p)
            return SQLITE_NOMEM;
        if (!sq_text_unpack(b, bn, p, (size_t)len)) {
            free(p);
            return SQLITE_CORRUPT;
        }
        *owned = p;
        *t = p;
        *n = (size_t)len;
        return SQLITE_OK;
    }
    default:
        *t = (const char *)sqlite3_value_text(v);
        *n = (size_t)sqlite3_value_bytes(v);
        return *t ? SQLITE_OK : SQLITE_NOMEM;
    }
}

void sq_value_result_error(sqlite3_context *ctx, int rc, const char *fn)
{
    if (rc == SQLITE_NOMEM) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    char msg[96];
    snprintf(msg, sizeof(msg), "%s: a stored text is corrupt", fn);
    sqlite3_result_error(ctx, msg, -1);
}

/* ink_pack(text): the stored form of a text (migration 20); NULL, and what is not
 * TEXT, stays as it is. */
static void fn_pack(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
        sqlite3_result_value(ctx, argv[0]);
        return;
    }
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    if (!t) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    size_t len = 0;
    unsigned char *b = sq_text_pack(t, (size_t)sqlite3_value_bytes(argv[0]), &len);
    if (b)
        sqlite3_result_blob64(ctx, b, len, free);
    else
        sqlite3_result_value(ctx, argv[0]);
}

int sq_text_register(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "ink_pack", 1,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                      NULL, fn_pack, NULL, NULL, NULL);
}
