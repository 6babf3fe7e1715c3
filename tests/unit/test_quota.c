/* test_quota.c — the records service's generations in flight of users with a quota
 * (src/records/quota.c): far from the limit every create is admitted, near it one at a
 * time; a reservation ends with its record's COMPLETED/FAILED/DELETED event or its
 * release; a usage read before a generation ended is not trusted near the limit; an
 * image reserves one picture, a document the most words one generation has made; a
 * used-up quota is CREATE_QUOTA_USED; users and kinds are counted apart. The second look
 * at the store (look_again) is exercised by tests/http/test_admin.py; here there is no
 * store (NULL), so a second look answers "cannot say" and the create is refused BUSY. */
#include "records/records_int.h"
#include "test.h"

#include <string.h>

static records_create_t cr_for(int64_t user, rec_kind_t kind, int64_t limit, int64_t used,
                               double read_at)
{
    records_create_t cr;
    memset(&cr, 0, sizeof(cr));
    cr.rec.user_id = user;
    cr.rec.kind = kind;
    cr.quota_limit = limit;
    cr.quota_used = used;
    cr.quota_at = read_at;
    return cr;
}

static void test_no_limit_holds_nothing(void)
{
    quota_t *q = quota_new();
    records_create_t cr = cr_for(1, KIND_DOC, -1, 0, mono_s());
    int64_t t = 99;
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATED_DONE);
    CHECK(t == 0);
    quota_free(q);
}

static void test_images_far_then_near_the_limit(void)
{
    quota_t *q = quota_new();
    int64_t tickets[12];
    /* limit 5, 2 used: 3 pictures may be in flight at once, exactly */
    for (int i = 0; i < 3; i++) {
        records_create_t cr = cr_for(7, KIND_IMG, 5, 2, mono_s());
        CHECK(quota_admit(NULL, q, NULL, &cr, &tickets[i]) == CREATED_DONE);
        CHECK(tickets[i] > 0);
    }
    records_create_t cr = cr_for(7, KIND_IMG, 5, 2, mono_s());
    int64_t t;
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATE_QUOTA_BUSY);
    CHECK(t == 0);
    /* another user, and another kind of the same user, are counted apart */
    cr = cr_for(8, KIND_IMG, 5, 2, mono_s());
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATED_DONE);
    quota_release(q, t);
    cr = cr_for(7, KIND_DOC, 1000, 0, mono_s());
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATED_DONE);
    quota_release(q, t);
    /* one ends (its record's COMPLETED): 3 used and 2 in flight fill the 5 */
    quota_bind(q, tickets[0], 41);
    record_t done;
    memset(&done, 0, sizeof(done));
    rev_t ev = {.type = REV_COMPLETED, .kind = KIND_IMG, .id = 41, .user_id = 7, .rec = &done};
    quota_event(q, &ev);
    cr = cr_for(7, KIND_IMG, 5, 3, mono_s());
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATE_QUOTA_BUSY);
    /* another fails (nothing counted): 3 used, 1 in flight, room for one */
    quota_bind(q, tickets[1], 42);
    rev_t failed = {.type = REV_FAILED, .kind = KIND_IMG, .id = 42, .user_id = 7};
    quota_event(q, &failed);
    cr = cr_for(7, KIND_IMG, 5, 3, mono_s());
    CHECK(quota_admit(NULL, q, NULL, &cr, &tickets[3]) == CREATED_DONE);
    /* but not on a usage read before those ends (it may not count them) */
    quota_release(q, tickets[3]);
    cr = cr_for(7, KIND_IMG, 5, 3, 0.0);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATE_QUOTA_BUSY);
    /* a used-up quota is USED whatever is in flight */
    cr = cr_for(7, KIND_IMG, 5, 5, mono_s());
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATE_QUOTA_USED);
    quota_free(q);
}

static void test_near_the_limit_one_at_a_time(void)
{
    quota_t *q = quota_new();
    /* one picture left: the first is admitted, the next waits for it */
    records_create_t cr = cr_for(3, KIND_IMG, 4, 3, mono_s());
    int64_t t1, t2;
    CHECK(quota_admit(NULL, q, NULL, &cr, &t1) == CREATED_DONE);
    double read_before_end = mono_s();
    cr = cr_for(3, KIND_IMG, 4, 3, read_before_end);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATE_QUOTA_BUSY);
    /* it fails (its record's FAILED): no usage was added, but a create whose usage was
     * read before that end cannot know it — with no store to ask, it is refused */
    quota_bind(q, t1, 12);
    rev_t ev = {.type = REV_FAILED, .kind = KIND_IMG, .id = 12, .user_id = 3};
    quota_event(q, &ev);
    cr = cr_for(3, KIND_IMG, 4, 3, read_before_end);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATE_QUOTA_BUSY);
    /* a usage read after the end is trusted: admitted */
    cr = cr_for(3, KIND_IMG, 4, 3, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATED_DONE);
    /* released without a record (nothing generated): the next one is admitted */
    quota_release(q, t2);
    cr = cr_for(3, KIND_IMG, 4, 3, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATED_DONE);
    /* a deleted record ends its reservation too */
    quota_bind(q, t2, 13);
    rev_t del = {.type = REV_DELETED, .kind = KIND_IMG, .id = 13, .user_id = 3};
    quota_event(q, &del);
    cr = cr_for(3, KIND_IMG, 4, 3, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATED_DONE);
    quota_free(q);
}

static void test_words_reserve_the_longest_generation(void)
{
    quota_t *q = quota_new();
    /* before any generation ended here a document reserves 1 word */
    records_create_t cr = cr_for(5, KIND_DOC, 1000, 0, mono_s());
    int64_t t1, t2;
    CHECK(quota_admit(NULL, q, NULL, &cr, &t1) == CREATED_DONE);
    quota_bind(q, t1, 70);
    record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.words = 400;
    rev_t ev = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 70, .user_id = 5, .rec = &rec};
    quota_event(q, &ev);
    /* 400 used of 1000: one reserves 400 (800 <= 1000), a second would make 1200 */
    cr = cr_for(5, KIND_DOC, 1000, 400, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t1) == CREATED_DONE);
    cr = cr_for(5, KIND_DOC, 1000, 400, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATE_QUOTA_BUSY);
    /* a shorter generation does not lower the estimate */
    quota_bind(q, t1, 71);
    rec.words = 10;
    ev.id = 71;
    quota_event(q, &ev);
    cr = cr_for(5, KIND_DOC, 1000, 410, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t1) == CREATED_DONE);
    cr = cr_for(5, KIND_DOC, 1000, 410, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t2) == CREATE_QUOTA_BUSY);
    quota_free(q);
}

/* A hot user far from the limit: ends since the usage was read are counted, not looked
 * up (no store here: a second look would refuse). */
static void test_ends_since_the_read_are_counted_far_from_the_limit(void)
{
    quota_t *q = quota_new();
    double read_at = mono_s();
    for (int i = 0; i < 5; i++) {
        records_create_t cr = cr_for(9, KIND_IMG, 100, 0, read_at);
        int64_t t;
        CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATED_DONE);
        quota_release(q, t); /* it ended (nothing was made: the same to the count) */
    }
    /* 0 read, 5 ended since: 5 + 1 <= 6 */
    records_create_t cr = cr_for(9, KIND_IMG, 6, 0, read_at);
    int64_t t;
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATED_DONE);
    quota_release(q, t);
    /* 6 ended since the read now: 6 + 1 > 6 — only a second look could tell */
    cr = cr_for(9, KIND_IMG, 6, 0, read_at);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATE_QUOTA_BUSY);
    /* a usage read after them is trusted */
    cr = cr_for(9, KIND_IMG, 6, 5, mono_s() + 1e-3);
    CHECK(quota_admit(NULL, q, NULL, &cr, &t) == CREATED_DONE);
    quota_free(q);
}

int main(void)
{
    test_ends_since_the_read_are_counted_far_from_the_limit();
    test_no_limit_holds_nothing();
    test_images_far_then_near_the_limit();
    test_near_the_limit_one_at_a_time();
    test_words_reserve_the_longest_generation();
    TEST_DONE();
}
