/* test_quota.c — the records service's generations in flight of users with a quota
 * (src/records/quota.c) over a SQLite store: no limit holds nothing; far from the
 * limit every create is admitted, near it one at a time; two quota_t on one store (two
 * processes on one database) admit no more than one does; a hold ends when released or
 * when its record's job is gone; an image holds one picture, a document the most words
 * one generation has made here; a used-up quota is CREATE_QUOTA_USED; no store is BUSY.
 * The holds themselves (both backends): tests/unit/test_store.c test_quota_holds. */
#include "records/records_int.h"
#include "store/store.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static store_t *st;
static store_conn_t *conn;

static records_req_t cr_for(int64_t user, rec_kind_t kind, int64_t limit, int64_t used)
{
    records_req_t cr;
    memset(&cr, 0, sizeof(cr));
    cr.rec.user_id = user;
    cr.rec.kind = kind;
    cr.quota_limit = limit;
    cr.quota_used = used;
    return cr;
}

static int64_t new_user(const char *name, int64_t images, int64_t words_used)
{
    arena_t a;
    arena_init(&a);
    user_info_t u;
    CHECK_INT(store_user_create(conn, name, 1000, images, &a, &u), STORE_OK);
    arena_free(&a);
    if (words_used)
        CHECK_INT(store_usage_add(conn, u.id, words_used, 0, 0, 0), STORE_OK);
    return u.id;
}

static void test_no_limit_holds_nothing(void)
{
    quota_t *q = quota_new(st);
    records_req_t cr = cr_for(1, KIND_DOC, -1, 0);
    int64_t t = 99;
    CHECK(quota_admit(NULL, q, conn, &cr, &t) == CREATED_DONE);
    CHECK(t == 0);
    cr = cr_for(1, KIND_DOC, 10, 3); /* no store: cannot say */
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATE_QUOTA_BUSY);
    CHECK(t == 0);
    quota_free(q);
}

static void test_two_processes_admit_as_one(void)
{
    quota_t *p1 = quota_new(st), *p2 = quota_new(st);
    int64_t uid = new_user("quota-two", 5, 0), t[8];
    /* limit 5: five pictures in flight, whichever process admits them */
    for (int i = 0; i < 5; i++) {
        records_req_t cr = cr_for(uid, KIND_IMG, 5, 0);
        CHECK(quota_admit(NULL, i % 2 ? p2 : p1, conn, &cr, &t[i]) == CREATED_DONE);
        CHECK(t[i] > 0);
    }
    records_req_t cr = cr_for(uid, KIND_IMG, 5, 0);
    CHECK(quota_admit(NULL, p1, conn, &cr, &t[5]) == CREATE_QUOTA_BUSY);
    CHECK(quota_admit(NULL, p2, conn, &cr, &t[5]) == CREATE_QUOTA_BUSY);
    /* one released in the other process: room for one */
    quota_release(p2, t[0]);
    CHECK(quota_admit(NULL, p1, conn, &cr, &t[0]) == CREATED_DONE);
    CHECK(quota_admit(NULL, p2, conn, &cr, &t[5]) == CREATE_QUOTA_BUSY);
    /* bound to a record whose job is gone (never had one here): ended */
    quota_bind(p1, t[1], 987654);
    CHECK(quota_admit(NULL, p2, conn, &cr, &t[1]) == CREATED_DONE);
    /* used up: USED, whatever is held */
    cr = cr_for(uid, KIND_IMG, 5, 5);
    CHECK(quota_admit(NULL, p2, conn, &cr, &t[5]) == CREATE_QUOTA_USED);
    for (int i = 0; i < 5; i++)
        quota_release(i % 2 ? p1 : p2, t[i]);
    quota_free(p1);
    quota_free(p2);
}

static void test_words_hold_the_longest_generation(void)
{
    quota_t *q = quota_new(st);
    int64_t uid = new_user("quota-words", -1, 400), t1, t2;
    record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.words = 400;
    rev_t ev = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 70, .user_id = uid, .rec = &rec};
    quota_event(q, &ev);
    /* 400 used of 1000: one holds 400 (800 <= 1000), a second would make 1200 */
    records_req_t cr = cr_for(uid, KIND_DOC, 1000, 400);
    CHECK(quota_admit(NULL, q, conn, &cr, &t1) == CREATED_DONE);
    CHECK(quota_admit(NULL, q, conn, &cr, &t2) == CREATE_QUOTA_BUSY);
    /* a shorter generation does not lower the estimate */
    rec.words = 10;
    quota_event(q, &ev);
    CHECK(quota_admit(NULL, q, conn, &cr, &t2) == CREATE_QUOTA_BUSY);
    /* near the limit (990 used): one at a time, even past it */
    quota_release(q, t1);
    CHECK_INT(store_usage_add(conn, uid, 590, 0, 0, 0), STORE_OK);
    cr = cr_for(uid, KIND_DOC, 1000, 400); /* (read before the 590: the store's counts) */
    CHECK(quota_admit(NULL, q, conn, &cr, &t1) == CREATED_DONE);
    CHECK(quota_admit(NULL, q, conn, &cr, &t2) == CREATE_QUOTA_BUSY);
    quota_release(q, t1);
    CHECK_INT(store_usage_add(conn, uid, 10, 0, 0, 0), STORE_OK);
    CHECK(quota_admit(NULL, q, conn, &cr, &t2) == CREATE_QUOTA_USED);
    quota_free(q);
}

int main(void)
{
    char dir[] = "/tmp/inkwell-quota-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], err[256];
    snprintf(path, sizeof(path), "%s/inkwell.db", dir);
    st = store_open(path, err, sizeof(err));
    CHECK_MSG(st != NULL, "store_open: %s", err);
    conn = st ? store_conn(st, err, sizeof(err)) : NULL;
    CHECK_MSG(conn != NULL, "store_conn: %s", err);
    if (conn)
        CHECK_INT(store_migrate(conn), STORE_OK);
    if (conn) {
        test_no_limit_holds_nothing();
        test_two_processes_admit_as_one();
        test_words_hold_the_longest_generation();
    }
    store_close(st);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    TEST_DONE();
}
