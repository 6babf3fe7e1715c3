/* test_records_service.c — the records service's ownership of a generation's outcome
 * (src/records/outcome.c, revisions.c), against a fake store (an ops table whose
 * job_complete/job_fail/revision_trim record their calls and answer as scripted) and a
 * real media directory: the stored row is what COMPLETED carries (nobody reads it
 * again), a failure is published with its code, an unavailable store is retried, a
 * picture that no record came to refer to is removed, the revision cap trims past
 * --max-revisions and removes the trimmed pictures, the stored error of a record
 * maps back to its failure code, and the event sequence: the store is told how many
 * pieces a generation published and its end carries the number stored; a subscriber
 * from a number gets the rest of a running generation replayed, then what follows, each
 * number once. */
#include "records/records_int.h"
#include "store/store_int.h" /* a fake backend of its own */
#include "test.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a fake store ---- */

typedef struct {
    store_conn_t base;
    int completes, fails, gets, trims;
    int answer;          /* what job_complete / job_fail answer */
    int unavailable_for; /* answer STORE_UNAVAILABLE this many times first */
    atomic_bool *stop_after_unavailable; /* set once the unavailable answers are used up */
    char last_key[MEDIA_KEY_LEN + 1];
    char last_text[256];
    int64_t last_words, last_prompt_tokens, last_pieces;
    char last_error[256];
    int64_t stored_revision; /* the revision of the row job_complete gives back */
    const char *trim_keys[4];
    size_t ntrim_keys;
    int trim_keep;
} fake_t;

static fake_t *fk(store_conn_t *c)
{
    return (fake_t *)c;
}

static int take_unavailable(fake_t *f)
{
    if (f->unavailable_for > 0) {
        f->unavailable_for--;
        if (f->unavailable_for == 0 && f->stop_after_unavailable)
            atomic_store(f->stop_after_unavailable, true);
        return 1;
    }
    return 0;
}

static int fake_complete(store_conn_t *c, const job_t *job, const char *result, int64_t words,
                         const char *media_key, const char *revised, arena_t *a, record_t *out)
{
    fake_t *f = fk(c);
    f->completes++;
    if (take_unavailable(f))
        return STORE_UNAVAILABLE;
    snprintf(f->last_key, sizeof(f->last_key), "%s", media_key ? media_key : "");
    snprintf(f->last_text, sizeof(f->last_text), "%s", result ? result : "");
    f->last_words = words;
    f->last_prompt_tokens = job->rec.prompt_tokens;
    f->last_pieces = job->pieces;
    (void)revised;
    if (f->answer == STORE_OK && out) {
        record_copy(a, out, &job->rec);
        out->state = REC_COMPLETED;
        out->result = result ? arena_strdup(a, result) : NULL;
        out->media_key = media_key ? arena_strdup(a, media_key) : NULL;
        out->revision = f->stored_revision;
        out->updated_us = 4242;
        out->event_seq = job->rec.event_seq + 1 + job->pieces; /* as STORE_SEQ does */
    }
    return f->answer;
}

static int fake_fail(store_conn_t *c, const job_t *job, const char *error)
{
    fake_t *f = fk(c);
    f->fails++;
    f->last_pieces = job->pieces;
    if (take_unavailable(f))
        return STORE_UNAVAILABLE;
    snprintf(f->last_error, sizeof(f->last_error), "%s", error);
    return f->answer;
}

static int fake_get(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id, arena_t *a,
                    record_t *out)
{
    fk(c)->gets++; /* the service must not need it after storing an outcome */
    (void)kind, (void)user_id, (void)id, (void)a, (void)out;
    return STORE_ERROR;
}

static int fake_trim(store_conn_t *c, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                     const char ***keys, size_t *n)
{
    fake_t *f = fk(c);
    (void)kind, (void)id;
    f->trims++;
    f->trim_keep = keep;
    const char **v = arena_alloc(a, (f->ntrim_keys + 1) * sizeof(*v));
    for (size_t i = 0; i < f->ntrim_keys; i++)
        v[i] = f->trim_keys[i];
    *keys = v;
    *n = f->ntrim_keys;
    return STORE_OK;
}

static const store_ops_t fake_ops = {
    .name = "fake",
    .job_complete = fake_complete,
    .job_fail = fake_fail,
    .record_get = fake_get,
    .revision_trim = fake_trim,
};

/* ---- a fake provider (only its name is used by the service here) ---- */

static const provider_t fake_prov = {.name = "fake"};

/* ---- what is published ---- */

typedef struct {
    int n[REV_TICK + 1];
    rec_failure_t failure;
    char error[256];
    int64_t job_id, revision, updated_us, seq;
    int64_t seqs[16];
    int nseqs;
    char result[256];
    bool had_rec;
} seen_t;

static void on_event(void *arg, const rev_t *ev)
{
    seen_t *s = arg;
    s->n[ev->type]++;
    s->job_id = ev->job_id;
    s->seq = ev->seq;
    if (ev->type != REV_TICK && s->nseqs < 16)
        s->seqs[s->nseqs++] = ev->seq;
    if (ev->type == REV_FAILED || ev->type == REV_UNSTORED) {
        s->failure = ev->failure;
        snprintf(s->error, sizeof(s->error), "%s", ev->error ? ev->error : "");
    }
    if (ev->type == REV_COMPLETED) {
        s->had_rec = ev->rec != NULL;
        if (ev->rec) {
            s->revision = ev->rec->revision;
            s->updated_us = ev->rec->updated_us;
            snprintf(s->result, sizeof(s->result), "%s", ev->rec->result ? ev->rec->result : "");
        }
    }
}

typedef struct {
    char dir[128];
    media_t *media;
    cfg_t cfg;
    store_t store;
    records_t *s;
    fake_t f;
    seen_t seen;
} env_t;

static void env_init(env_t *e, long max_revisions)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->dir, sizeof(e->dir), "/tmp/inkwell-rs-%d-XXXXXX", (int)getpid());
    CHECK(mkdtemp(e->dir) != NULL);
    char err[128];
    e->media = media_open(e->dir, err, sizeof(err));
    CHECK_MSG(e->media != NULL, "media_open: %s", err);
    e->cfg.max_revisions = max_revisions;
    e->store.ops = &fake_ops;
    e->f.base.ops = &fake_ops;
    e->f.base.store = &e->store;
    e->f.answer = STORE_OK;
    e->f.stored_revision = 1;
    records_deps_t d = {.cfg = &e->cfg, .store = &e->store, .media = e->media,
                        .prov = &fake_prov};
    e->s = records_start(&d);
    records_observe(e->s, on_event, &e->seen);
}

static void env_free(env_t *e)
{
    records_stop(e->s);
    media_close(e->media);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
    CHECK_INT(system(cmd), 0);
}

static bool media_exists(env_t *e, const char *key)
{
    int fd;
    uint64_t size;
    if (media_open_file(e->media, key, &fd, &size) != 0)
        return false;
    close(fd);
    return true;
}

static job_t doc_job(int64_t id)
{
    job_t j;
    memset(&j, 0, sizeof(j));
    j.id = 70 + id;
    snprintf(j.token, sizeof(j.token), "tok");
    j.rec.kind = KIND_DOC;
    j.rec.id = id;
    j.rec.user_id = 3;
    j.rec.prompt = "p";
    j.rec.prompt_tokens = -1;
    j.rec.completion_tokens = -1;
    return j;
}

/* ---- cases ---- */

static void test_document_outcome_is_stored_once_and_published_as_stored(void)
{
    env_t e;
    env_init(&e, 50);
    job_t job = doc_job(1);
    records_outcome_t o = {.ok = true, .text = "three small words", .prompt_tokens = 11,
                           .completion_tokens = 3, .t0 = mono_s()};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT(e.f.completes, 1);
    CHECK_STR(e.f.last_text, "three small words");
    CHECK_INT(e.f.last_words, 3);
    CHECK_INT(e.f.last_prompt_tokens, 11); /* the usage goes with the text */
    CHECK_INT(e.seen.n[REV_COMPLETED], 1);
    CHECK(e.seen.had_rec);
    CHECK_INT(e.seen.updated_us, 4242); /* the row job_complete gave back */
    CHECK_STR(e.seen.result, "three small words");
    CHECK_INT(e.seen.job_id, job.id);
    CHECK_INT(e.f.gets, 0); /* nobody reads it again */
    CHECK_INT(e.f.trims, 0); /* revision 1 of at most 50 */
    env_free(&e);
}

static void test_failure_is_published_with_its_code(void)
{
    env_t e;
    env_init(&e, 50);
    job_t job = doc_job(2);
    records_outcome_t o = {.ok = false, .error = "The model refused.", .t0 = mono_s()};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT(e.f.fails, 1);
    CHECK_STR(e.f.last_error, "The model refused.");
    CHECK_INT(e.seen.n[REV_FAILED], 1);
    CHECK_INT(e.seen.failure, RF_GENERATION);
    CHECK_STR(e.seen.error, "The model refused.");
    CHECK_INT(e.seen.n[REV_COMPLETED], 0);
    /* a failure without words gets some */
    records_outcome_t empty = {.ok = false, .error = "", .t0 = mono_s()};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &empty, NULL), STORE_OK);
    CHECK_STR(e.f.last_error, "Generation failed.");
    env_free(&e);
}

static void test_unavailable_store_is_retried(void)
{
    env_t e;
    env_init(&e, 50);
    job_t job = doc_job(3);
    e.f.unavailable_for = 2;
    records_outcome_t o = {.ok = true, .text = "after a blip", .t0 = mono_s()};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT(e.f.completes, 3);
    CHECK_INT(e.seen.n[REV_COMPLETED], 1);
    CHECK_INT(e.seen.n[REV_UNSTORED], 0);
    /* stopping ends the retries: nothing stored, nothing announced (the job runs again
     * at the next start) */
    atomic_bool stopping = false;
    e.f.unavailable_for = 2;
    e.f.stop_after_unavailable = &stopping;
    e.f.completes = 0;
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, &stopping), STORE_UNAVAILABLE);
    CHECK_INT(e.f.completes, 2);
    CHECK_INT(e.seen.n[REV_COMPLETED], 1);
    CHECK_INT(e.seen.n[REV_UNSTORED], 0);
    env_free(&e);
}

static void test_picture_no_record_refers_to_is_removed(void)
{
    env_t e;
    env_init(&e, 50);
    job_t job = doc_job(4);
    job.rec.kind = KIND_IMG;
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 1, 2, 3};
    records_outcome_t o = {.ok = true, .png = png, .png_len = sizeof(png), .t0 = mono_s()};
    /* stored: the file stays, named by the row */
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT((int)strlen(e.f.last_key), MEDIA_KEY_LEN);
    CHECK(media_exists(&e, e.f.last_key));
    /* a stale worker (lease lost, record deleted): its picture goes */
    e.f.answer = STORE_STALE;
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_STALE);
    CHECK((int)strlen(e.f.last_key) == MEDIA_KEY_LEN && !media_exists(&e, e.f.last_key));
    CHECK_INT(e.seen.n[REV_COMPLETED], 1);
    CHECK_INT(e.seen.n[REV_FAILED], 0);
    env_free(&e);
}

static void test_revision_cap_trims_and_removes_pictures(void)
{
    env_t e;
    env_init(&e, 3);
    char old1[MEDIA_KEY_LEN + 1], old2[MEDIA_KEY_LEN + 1];
    CHECK_INT(media_put(e.media, "a", 1, old1), 0);
    CHECK_INT(media_put(e.media, "b", 1, old2), 0);
    e.f.trim_keys[0] = old1;
    e.f.trim_keys[1] = old2;
    e.f.ntrim_keys = 2;
    job_t job = doc_job(5);
    e.f.stored_revision = 3; /* at the cap: nothing to trim */
    records_outcome_t o = {.ok = true, .text = "x", .t0 = mono_s()};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT(e.f.trims, 0);
    e.f.stored_revision = 4; /* past it */
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT(e.f.trims, 1);
    CHECK_INT(e.f.trim_keep, 3);
    CHECK(!media_exists(&e, old1));
    CHECK(!media_exists(&e, old2));
    CHECK_INT(e.seen.revision, 4);
    env_free(&e);
}

static void test_stored_errors_map_to_codes(void)
{
    CHECK_INT(records_failure_of(MEDIA_FULL_ERROR), RF_STORAGE_FULL);
    CHECK_INT(records_failure_of(RECORDS_UNSTORED_ERROR), RF_UNSTORED);
    CHECK_INT(records_failure_of("The model refused."), RF_GENERATION);
    CHECK_INT(records_failure_of(NULL), RF_GENERATION);
    record_t r = {.state = REC_COMPLETED};
    CHECK(!records_last_failed(&r));
    r.error = "a regeneration failed";
    CHECK(records_last_failed(&r));
    r.state = REC_FAILED;
    r.error = NULL;
    CHECK(records_last_failed(&r));
    r.state = REC_GENERATING;
    CHECK(!records_last_failed(&r));
}

static void test_event_numbers(void)
{
    env_t e;
    env_init(&e, 50);
    /* a generation claimed at 2 (its GENERATING) that published 5 pieces, 3..7 */
    job_t job = doc_job(6);
    job.rec.event_seq = 2;
    rev_t gen = {.type = REV_GENERATING, .kind = KIND_DOC, .id = 6, .user_id = 3, .seq = 2,
                 .gen_seq = 2, .job_id = job.id};
    records_publish(e.s, &gen);
    const char *pieces[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) {
        rev_t t = {.type = REV_TEXT, .kind = KIND_DOC, .id = 6, .user_id = 3, .text = pieces[i],
                   .len = 1, .offset = i + 1, .seq = 3 + i, .gen_seq = 2, .pieces = 1,
                   .job_id = job.id};
        records_publish(e.s, &t);
        if (i == 2) { /* a subscriber from 4 joins after the third piece (5) */
            seen_t late = {0};
            records_sub_t *sub = records_subscribe(e.s, KIND_DOC, 3, 6, 4, on_event, &late);
            CHECK_INT(late.nseqs, 1);
            CHECK_INT(late.seqs[0], 5);
            records_unsubscribe(e.s, sub);
        }
    }
    seen_t sub_seen = {0};
    records_sub_t *sub = records_subscribe(e.s, KIND_DOC, 3, 6, 0, on_event, &sub_seen);
    CHECK_INT(sub_seen.nseqs, 6); /* GENERATING 2, then the pieces 3..7 */
    for (int i = 0; i < sub_seen.nseqs; i++)
        CHECK_INT(sub_seen.seqs[i], 2 + i);
    records_outcome_t o = {.ok = true, .text = "abcde", .t0 = mono_s(), .pieces = 5};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job, &o, NULL), STORE_OK);
    CHECK_INT(e.f.last_pieces, 5);   /* the store counts them */
    CHECK_INT(sub_seen.seq, 8);      /* and the end carries the number it stored */
    CHECK_INT(sub_seen.n[REV_COMPLETED], 1);
    /* heard again (another process's re-read): not delivered twice */
    record_t again = {.kind = KIND_DOC, .id = 6, .user_id = 3, .event_seq = 8};
    rev_t dup = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 6, .user_id = 3, .rec = &again,
                 .seq = 8};
    records_publish(e.s, &dup);
    CHECK_INT(sub_seen.n[REV_COMPLETED], 1);
    /* a failure: generating + pieces + 1, computed as the store does */
    job_t job2 = doc_job(7);
    job2.rec.event_seq = 4;
    records_outcome_t f = {.ok = false, .error = "no", .t0 = mono_s(), .pieces = 2};
    CHECK_INT(records_store_outcome(e.s, &e.f.base, &job2, &f, NULL), STORE_OK);
    CHECK_INT(e.f.last_pieces, 2);
    CHECK_INT(e.seen.seq, 7);
    records_unsubscribe(e.s, sub);
    env_free(&e);
}

int main(void)
{
    test_document_outcome_is_stored_once_and_published_as_stored();
    test_failure_is_published_with_its_code();
    test_unavailable_store_is_retried();
    test_picture_no_record_refers_to_is_removed();
    test_revision_cap_trims_and_removes_pictures();
    test_stored_errors_map_to_codes();
    test_event_numbers();
    TEST_DONE();
}
