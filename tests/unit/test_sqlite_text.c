/* test_sqlite_text.c — the stored form of a document's text in the SQLite store
 * (sqlite_text.c): the codec's round trips and refusals, then through a store on a
 * temporary file: the column holds a shorter BLOB, every read gives the exact text back
 * (get, list, search by result), and a corrupt BLOB is a store error (a read, a search's
 * ink_has, ink_fold), never a crash or a garbage string. */
#include "store/sqlite_int.h"
#include "test.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* text round-trips through pack/unpack; packed: whether it should become a BLOB */
static void round_trip(const char *what, const char *text, bool packed)
{
    size_t n = strlen(text), len = 0;
    unsigned char *b = sq_text_pack(text, n, &len);
    CHECK_MSG(!!b == packed, "%s: packed %d, want %d", what, !!b, packed);
    if (!b)
        return;
    CHECK_MSG(len < n, "%s: %zu bytes for %zu", what, len, n);
    CHECK_INT(b[0], 2); /* zstd */
    size_t len2 = 0; /* the same text, the same bytes */
    unsigned char *b2 = sq_text_pack(text, n, &len2);
    CHECK(b2 && len2 == len && memcmp(b, b2, len) == 0);
    free(b2);
    long long plain = sq_text_unpacked_len(b, len);
    CHECK_INT(plain, (long long)n);
    char *out = malloc(n + 1);
    CHECK_MSG(plain == (long long)n && sq_text_unpack(b, len, out, n) && memcmp(out, text, n) == 0 &&
                  out[n] == '\0',
              "%s: not the same text back", what);
    /* a stream cut short, or one byte longer, is refused */
    CHECK(sq_text_unpacked_len(b, len - 1) < 0 || !sq_text_unpack(b, len - 1, out, n));
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, b, len);
    longer[len] = 0;
    CHECK(!sq_text_unpack(longer, len + 1, out, n));
    free(longer);
    free(out);
    free(b);
}

static void codec(void)
{
    round_trip("empty", "", false);
    round_trip("short", "hi", false);
    round_trip("incompressible", "q8Zr-3kLw_0pXv2Tn9Yb", false);
    round_trip("ascii",
               "Green tea is a type of tea made from Camellia sinensis leaves. Green tea is "
               "the tea of the leaves that have not undergone withering and oxidation.",
               true);
    round_trip("cyrillic", "Зелёный чай — чай, который не прошёл ферментацию. Зелёный чай "
                           "пьют в Китае, зелёный чай пьют в Японии. ЗЕЛЁНЫЙ ЧАЙ!",
               true);
    round_trip("emoji", "🍵 tea 🍵 tea 🍵 tea 🍵 tea 🍵 tea 🍵 tea 🍵 tea 🍵 tea", true);
    buf_t big;
    buf_init(&big);
    for (int i = 0; i < 20000; i++) /* 300 KB: a length of three bytes */
        buf_printf(&big, "line %d of a long text, ", i);
    round_trip("long", buf_cstr(&big), true);
    buf_free(&big);

    /* what is not the stored form */
    const char *t = "the same words again and again, the same words again and again";
    size_t n = strlen(t), len = 0;
    unsigned char *b = sq_text_pack(t, n, &len);
    CHECK(b != NULL);
    char *out = malloc(n + 1);
    b[0] = 1; /* an unknown format (1 was raw deflate before a release) */
    CHECK(sq_text_unpacked_len(b, len) < 0);
    b[0] = 2;
    b[1] ^= 1; /* another length */
    long long wrong = sq_text_unpacked_len(b, len);
    if (wrong >= 0) {
        char *w = malloc((size_t)wrong + 1);
        CHECK(!sq_text_unpack(b, len, w, (size_t)wrong));
        free(w);
    }
    b[1] ^= 1;
    for (size_t i = 2; i < len; i++) /* the stream garbled */
        b[i] ^= 0x5a;
    CHECK(!sq_text_unpack(b, len, out, n));
    const unsigned char huge[] = {2, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x03, 0x00};
    CHECK(sq_text_unpacked_len(huge, sizeof(huge)) < 0); /* far more than it could hold */
    const unsigned char endless[] = {2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
    CHECK(sq_text_unpacked_len(endless, sizeof(endless)) < 0);
    CHECK(sq_text_unpacked_len(huge, 1) < 0);
    free(out);
    free(b);
}

static int exec_int(sqlite3 *db, const char *sql, long long *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

static void through_store(void)
{
    char path[] = "/tmp/inkwell-text-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    char err[256];
    store_t *s = store_open(path, err, sizeof(err));
    store_conn_t *c = s ? store_conn(s, err, sizeof(err)) : NULL;
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_INT(store_migrate(c), STORE_OK);
    int64_t uid = 0;
    CHECK_INT(store_user_ensure(c, "text", &uid), STORE_OK);
    const char *texts[] = {
        "Чай — напиток, получаемый варкой, завариванием и/или настаиванием листа чайного "
        "куста. Чай — напиток, получаемый варкой.",
        "A plain English text about tea, tea and more tea: green tea, black tea, white tea. "
        "Tea is drunk hot or cold, with milk or without, and a pot of tea is shared.",
        "x", /* stays TEXT */
    };
    int64_t ids[3];
    arena_t a;
    arena_init(&a);
    for (int i = 0; i < 3; i++) {
        record_t r = {.kind = KIND_DOC, .user_id = uid, .name = "doc", .prompt = "p",
                      .creativity = 0, .template_id = 1, .result = texts[i], .words = 3,
                      .prompt_tokens = -1, .completion_tokens = -1};
        record_t *rp = &r;
        CHECK_INT(store_docs_create_completed(c, &rp, NULL, 1), STORE_OK);
        ids[i] = r.id;
        record_t got;
        CHECK_INT(store_record_get(c, KIND_DOC, uid, r.id, NULL, NULL, &a, &got), STORE_OK);
        CHECK_STR(got.result, texts[i]);
    }
    /* an edit's text and the revision it keeps */
    const char *edited = "Edited: the tea was green, the tea was black, the tea was white.";
    record_patch_t p = {.result = edited, .words = 12, .favorite = -1};
    record_t up;
    CHECK_INT(store_record_update(c, KIND_DOC, uid, ids[1], &p, &a, &up), STORE_OK);
    CHECK_STR(up.result, edited);

    sqlite3 *db = NULL;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 30000); /* the store's index thread writes too */
    long long v = 0;
    char sql[512];
    for (int i = 0; i < 3; i++) {
        snprintf(sql, sizeof(sql),
                 "SELECT typeof(result) = '%s' AND length(result) < %zu FROM documents "
                 "WHERE id = %lld",
                 i < 2 ? "blob" : "text", i < 2 ? strlen(texts[i]) : (size_t)2,
                 (long long)ids[i]);
        CHECK_INT(exec_int(db, sql, &v), SQLITE_OK);
        CHECK_INT(v, 1);
    }
    /* the SQL functions read the stored form (ink_fold, ink_has) */
    snprintf(sql, sizeof(sql),
             "SELECT ink_fold(result) = 'чай — напиток, получаемый варкой, завариванием и/или "
             "настаиванием листа чайного куста. чай — напиток, получаемый варкой.' AND "
             "ink_has(result, 'чайного') FROM documents WHERE id = %lld",
             (long long)ids[0]);
    CHECK_INT(exec_int(db, sql, &v), SQLITE_OK);
    CHECK_INT(v, 1);
    /* the old revision of the edited document keeps its text, as a BLOB */
    snprintf(sql, sizeof(sql),
             "SELECT typeof(result) = 'blob' FROM document_revisions WHERE document_id = %lld "
             "AND number = 1",
             (long long)ids[1]);
    CHECK_INT(exec_int(db, sql, &v), SQLITE_OK);
    CHECK_INT(v, 1);
    revision_t *revs = NULL;
    size_t nrev = 0;
    int64_t total = 0;
    CHECK_INT(store_revision_list(c, KIND_DOC, uid, ids[1], 10, 1, &a, &revs, &nrev, &total),
              STORE_OK);
    CHECK_INT(nrev, 2);
    if (nrev == 2) {
        CHECK_STR(revs[0].rec.result, edited);
        CHECK_STR(revs[1].rec.result, texts[1]);
    }
    /* a search by result over the texts as stored (the tail and the index alike) */
    record_t items[10];
    list_query_t q = {.user_id = uid, .search = "ЧАЙНОГО", .search_result = true,
                      .favorite = -1, .per_page = 10, .page = 1};
    record_list_t l = {.items = items};
    CHECK_INT(store_record_list(c, KIND_DOC, &q, &a, &l), STORE_OK);
    CHECK_INT(l.n, 1);
    if (l.n == 1)
        CHECK_STR(l.items[0].result, texts[0]);

    /* a corrupt BLOB: a store error for every read, never a garbage text */
    snprintf(sql, sizeof(sql),
             "UPDATE documents SET result = X'01FF01DEADBEEF0102030405' WHERE id = %lld",
             (long long)ids[0]);
    CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    record_t bad = {0};
    CHECK_INT(store_record_get(c, KIND_DOC, uid, ids[0], NULL, NULL, &a, &bad), STORE_ERROR);
    q.search = NULL;
    q.search_result = false;
    CHECK_INT(store_record_list(c, KIND_DOC, &q, &a, &l), STORE_ERROR);
    q.search = "zzz"; /* the re-check reads every candidate's text: ink_has */
    q.search_result = true;
    int rc = store_record_list(c, KIND_DOC, &q, &a, &l);
    CHECK_MSG(rc == STORE_ERROR || (rc == STORE_OK && l.n == 0), "search: %d", rc);
    snprintf(sql, sizeof(sql), "SELECT ink_fold(result) FROM documents WHERE id = %lld",
             (long long)ids[0]);
    CHECK_INT(exec_int(db, sql, &v), SQLITE_ERROR);
    CHECK(strstr(sqlite3_errmsg(db), "corrupt") != NULL);
    snprintf(sql, sizeof(sql), "SELECT ink_has(result, 'a') FROM documents WHERE id = %lld",
             (long long)ids[0]);
    CHECK_INT(exec_int(db, sql, &v), SQLITE_ERROR);
    /* the other documents read as before */
    record_t fine;
    CHECK_INT(store_record_get(c, KIND_DOC, uid, ids[2], NULL, NULL, &a, &fine), STORE_OK);
    CHECK_STR(fine.result, "x");

    sqlite3_close(db);
    arena_free(&a);
    store_close(s);
    unlink(path);
    char side[sizeof(path) + 8];
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
}

int main(void)
{
    codec();
    through_store();
    TEST_DONE();
}
