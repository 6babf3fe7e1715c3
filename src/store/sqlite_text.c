/* sqlite_text.c — the stored form of a document's text in the SQLite store: the
 * columns documents.result, document_revisions.result and search_changed.old (type ANY
 * since migration 20). Every binder and reader of them goes through here, and so do the
 * SQL functions that read them (ink_fold, ink_has: sqlite_lists.c).
 *
 * A value is one of:
 *   NULL  no text;
 *   TEXT  the plain text (every row written before migration 20 stayed readable so,
 *         and a text that zstd does not make shorter is kept so);
 *   BLOB  [2: the format][the plain text's length in bytes, LEB128: 7 bits a byte, low
 *         first, high bit set on all bytes but the last][a zstd frame (RFC 8878, level
 *         1, without content size or checksum)], written only when shorter than the
 *         text. (zstd, not zlib's deflate: deflate took 28 µs of a 1.2 KB text, ~20 %
 *         of a builtin create's time on one core, zstd 7 µs for 1 % more bytes.)
 * The form is a function of the text (the same text gives the same bytes), so SQL that
 * copies or compares the column as it is stays right: a restore's COALESCE, the
 * revision trigger of migration 16, the `OLD.result IS NOT NEW.result` triggers. (A
 * different zstd could pack a text to other bytes: a comparison would then see a
 * change where there is none, which costs a needless trigger, never a wrong text.)
 * The PostgreSQL store keeps plain text (TOAST compresses it). Part of the SQLite
 * backend (sqlite.c). */
#include "store/sqlite_int.h"

#include "core/log.h"
#include "core/utf8.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define FORMAT_ZSTD 2 /* 1 was raw deflate, never in a released version */
#define LEVEL 1        /* zstd level 1: 4 µs a ~380-byte text, 7 µs a 1.2 KB one */
#define MAX_PLAIN (1u << 30) /* no stored text is longer (SQLite's own limit: 1e9) */
#define MAX_RATIO 1024       /* a BLOB unpacks to at most this times its size (+64): a
                              * text that would pack tighter is kept as TEXT, so a
                              * corrupt length cannot ask for more memory than that */
#define HDR_MAX 6            /* the format byte and up to 5 bytes of length */

/* Each thread's compression and decompression contexts, made once and reused (a new
 * context per text cost more than the compression), freed when the thread ends. */
typedef struct {
    ZSTD_CCtx *c;
    ZSTD_DCtx *d;
} zctx_t;

static pthread_key_t zctx_key;
static pthread_once_t zctx_once = PTHREAD_ONCE_INIT;

static void zctx_free(void *p)
{
    zctx_t *z = p;
    ZSTD_freeCCtx(z->c);
    ZSTD_freeDCtx(z->d);
    free(z);
}

static void zctx_key_make(void)
{
    if (pthread_key_create(&zctx_key, zctx_free) != 0)
        abort(); /* only when the process has no key left: at its start */
}

static zctx_t *zctx(void)
{
    pthread_once(&zctx_once, zctx_key_make);
    zctx_t *z = pthread_getspecific(zctx_key);
    if (z)
        return z;
    if (!(z = calloc(1, sizeof(*z))))
        return NULL;
    z->c = ZSTD_createCCtx();
    z->d = ZSTD_createDCtx();
    /* the frame without what the BLOB's own header says or the checks below catch:
     * no content size (the header has it), no checksum */
    if (!z->c || !z->d || ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_compressionLevel, LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_contentSizeFlag, 0)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_checksumFlag, 0)) ||
        pthread_setspecific(zctx_key, z) != 0) {
        zctx_free(z);
        return NULL;
    }
    return z;
}

unsigned char *sq_text_pack(const char *t, size_t n, size_t *len)
{
    /* it must be shorter than the text: the smallest form is 1 + 1 + a frame */
    if (n < 16 || n > MAX_PLAIN)
        return NULL;
    zctx_t *z = zctx();
    /* zstd wants room for its worst case (it refuses a smaller buffer even when the
     * frame would fit): kept only when shorter than the text, below */
    size_t room = ZSTD_compressBound(n);
    unsigned char *b = z && !ZSTD_isError(room) ? malloc(HDR_MAX + room) : NULL;
    if (!b)
        return NULL;
    size_t h = 0;
    b[h++] = FORMAT_ZSTD;
    for (size_t v = n;; v >>= 7) {
        b[h] = (unsigned char)(v & 0x7f);
        if (v < 0x80) {
            h++;
            break;
        }
        b[h++] |= 0x80;
    }
    size_t out = ZSTD_compress2(z->c, b + h, room, t, n);
    if (ZSTD_isError(out) || h + out >= n || n > (h + out) * MAX_RATIO + 64) {
        /* not shorter (or zstd could not): the text as it is */
        free(b);
        return NULL;
    }
    *len = h + out;
    return b;
}

long long sq_text_unpacked_len(const void *blob, size_t n)
{
    const unsigned char *b = blob;
    if (n < 2 || b[0] != FORMAT_ZSTD)
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
    if (v > MAX_PLAIN || v > (unsigned long long)n * MAX_RATIO + 64)
        return -1;
    return (long long)v;
}

/* The offset of the frame in a BLOB sq_text_unpacked_len accepted. */
static size_t frame_at(const unsigned char *b)
{
    size_t i = 1;
    while (b[i] & 0x80)
        i++;
    return i + 1;
}

/* Whether s holds only bytes 0x01-0x7F (no NUL, valid UTF-8), eight at a time: most
 * texts, checked without utf8_count's byte by byte decoding. */
static bool plain_ascii(const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    size_t i = 0;
    for (uint64_t w; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        if ((w & high) || ((w - ones) & ~w & high)) /* a byte >= 0x80, or a zero byte */
            return false;
    }
    for (; i < n; i++)
        if ((unsigned char)s[i] == 0 || (unsigned char)s[i] >= 0x80)
            return false;
    return true;
}

bool sq_text_unpack(const void *blob, size_t n, char *dst, size_t len)
{
    const unsigned char *b = blob;
    size_t at = frame_at(b);
    zctx_t *z = zctx();
    /* one byte more than the text may take: a frame that unpacks longer is corrupt */
    size_t got = z ? ZSTD_decompressDCtx(z->d, dst, len + 1, b + at, n - at) : 0;
    bool ok = z && !ZSTD_isError(got) && got == len;
    dst[len] = '\0';
    /* no checksum in the frame: a text has no NUL and is valid UTF-8 */
    return ok && (plain_ascii(dst, len) || (!memchr(dst, '\0', len) && utf8_count(dst, len) >= 0));
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
