/* test_records.c — the records service's event hub (src/records/events.c): events
 * reach the subscribers of their record only, with their payload; the text so far of a
 * local generation is handed over atomically with a subscription; observers see local
 * events and not other processes'; unsubscribe stops delivery; release tells every
 * subscriber and later subscriptions at once; ticks come. */
#include "records/records_int.h"
#include "test.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    int n[REV_TICK + 1];
    buf_t text;
    int64_t last_offset;
    const char *error;
    int64_t rec_id;
} seen_t;

static void on_event(void *arg, const rev_t *ev)
{
    seen_t *s = arg;
    s->n[ev->type]++;
    if (ev->type == REV_TEXT) {
        buf_append(&s->text, ev->text, ev->len);
        s->last_offset = ev->offset;
    }
    if (ev->type == REV_FAILED)
        s->error = ev->error;
    if (ev->type == REV_COMPLETED && ev->rec)
        s->rec_id = ev->rec->id;
}

static void publish_text(hub_t *h, int64_t id, const char *piece, int64_t *offset)
{
    size_t len = strlen(piece);
    *offset += (int64_t)len;
    rev_t ev = {.type = REV_TEXT, .kind = KIND_DOC, .id = id, .text = piece, .len = len,
                .offset = *offset};
    hub_publish(h, &ev, true);
}

static void test_delivery_and_live_text(void)
{
    hub_t *h = hub_new(30);
    seen_t a = {0}, b = {0}, obs = {0};
    buf_init(&a.text);
    buf_init(&b.text);
    buf_init(&obs.text);
    hub_observe(h, on_event, &obs);
    records_sub_t *sa = hub_subscribe(h, KIND_DOC, 7, 1, on_event, &a, NULL, NULL);
    CHECK_INT(hub_subscribers(h, KIND_DOC, 1), 1);
    CHECK_INT(hub_subscribers(h, KIND_IMG, 1), 0);

    rev_t gen = {.type = REV_GENERATING, .kind = KIND_DOC, .id = 1, .user_id = 7};
    hub_publish(h, &gen, true);
    int64_t off = 0;
    publish_text(h, 1, "héllo ", &off);
    publish_text(h, 1, "wörld", &off);
    /* a late subscriber gets the text so far, then what follows */
    char *live = NULL;
    size_t live_len = 0;
    records_sub_t *sb = hub_subscribe(h, KIND_DOC, 7, 1, on_event, &b, &live, &live_len);
    CHECK_STR(live, "héllo wörld");
    CHECK_INT(live_len, strlen("héllo wörld"));
    free(live);
    publish_text(h, 1, "!", &off);
    CHECK_STR(buf_cstr(&a.text), "héllo wörld!");
    CHECK_STR(buf_cstr(&b.text), "!");
    CHECK_INT(b.last_offset, (int64_t)strlen("héllo wörld!"));
    CHECK_STR(buf_cstr(&obs.text), "héllo wörld!");

    /* another record's events do not reach them */
    rev_t other = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 2};
    hub_publish(h, &other, true);
    CHECK_INT(a.n[REV_COMPLETED], 0);
    CHECK_INT(obs.n[REV_COMPLETED], 1);

    /* the end carries its payload; no more live text afterwards */
    record_t rec = {.kind = KIND_DOC, .id = 1};
    rev_t done = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 1, .rec = &rec};
    hub_publish(h, &done, true);
    CHECK_INT(a.rec_id, 1);
    CHECK_INT(b.rec_id, 1);
    seen_t c = {0};
    buf_init(&c.text);
    live = (char *)"x";
    records_sub_t *sc = hub_subscribe(h, KIND_DOC, 7, 1, on_event, &c, &live, &live_len);
    CHECK(live == NULL);

    /* an event of another process: subscribers yes, observers no */
    rev_t remote = {.type = REV_FAILED, .kind = KIND_DOC, .id = 1, .error = "why"};
    hub_publish(h, &remote, false);
    CHECK_STR(c.error, "why");
    CHECK_INT(obs.n[REV_FAILED], 0);

    /* unsubscribed: nothing more */
    hub_unsubscribe(h, sa);
    hub_publish(h, &remote, false);
    CHECK_INT(a.n[REV_FAILED], 1);
    CHECK_INT(b.n[REV_FAILED], 2);

    /* release: everyone is told, later subscriptions at once */
    hub_release(h);
    CHECK_INT(b.n[REV_RELEASED], 1);
    CHECK_INT(c.n[REV_RELEASED], 1);
    seen_t d = {0};
    buf_init(&d.text);
    records_sub_t *sd = hub_subscribe(h, KIND_IMG, 7, 9, on_event, &d, NULL, NULL);
    CHECK_INT(d.n[REV_RELEASED], 1);
    hub_unsubscribe(h, sb);
    hub_unsubscribe(h, sc);
    hub_unsubscribe(h, sd);
    hub_free(h);
    buf_free(&a.text);
    buf_free(&b.text);
    buf_free(&c.text);
    buf_free(&d.text);
    buf_free(&obs.text);
}

static void test_ticks_and_watched(void)
{
    hub_t *h = hub_new(0.05);
    seen_t a = {0};
    buf_init(&a.text);
    records_sub_t *s1 = hub_subscribe(h, KIND_DOC, 3, 10, on_event, &a, NULL, NULL);
    records_sub_t *s2 = hub_subscribe(h, KIND_IMG, 4, 11, on_event, &a, NULL, NULL);
    rec_kind_t kinds[4];
    int64_t users[4], ids[4];
    CHECK_INT(hub_watched(h, kinds, users, ids, 4), 2);
    /* ticks come every 50 ms to both: wait for four of them (the bound only catches a
     * hub that never ticks, however slow the machine) */
    for (int i = 0; i < 1000 * test_slow() && __atomic_load_n(&a.n[REV_TICK], __ATOMIC_ACQUIRE) < 4; i++)
        usleep(10 * 1000);
    hub_unsubscribe(h, s1);
    CHECK_INT(hub_watched(h, kinds, users, ids, 4), 1);
    CHECK_INT(users[0], 4);
    CHECK_INT(ids[0], 11);
    CHECK(a.n[REV_TICK] >= 4); /* two subscriptions, every 50 ms */
    hub_unsubscribe(h, s2);
    CHECK_INT(hub_watched(h, kinds, users, ids, 4), 0);
    hub_free(h);
    buf_free(&a.text);
}

/* Many publishers and subscribers at once: every subscriber sees every piece of its
 * record, in order. */
typedef struct {
    hub_t *h;
    int64_t id;
} pub_arg_t;

static void *publisher(void *p)
{
    pub_arg_t *a = p;
    rev_t gen = {.type = REV_GENERATING, .kind = KIND_DOC, .id = a->id};
    hub_publish(a->h, &gen, true);
    int64_t off = 0;
    for (int i = 0; i < 2000; i++)
        publish_text(a->h, a->id, "ab", &off);
    return NULL;
}

static void test_threads(void)
{
    hub_t *h = hub_new(1);
    enum { N = 4 };
    seen_t seen[N];
    records_sub_t *subs[N];
    pthread_t t[N];
    pub_arg_t args[N];
    for (int i = 0; i < N; i++) {
        memset(&seen[i], 0, sizeof(seen[i]));
        buf_init(&seen[i].text);
        subs[i] = hub_subscribe(h, KIND_DOC, 1, 100 + i, on_event, &seen[i], NULL, NULL);
        args[i] = (pub_arg_t){h, 100 + i};
        pthread_create(&t[i], NULL, publisher, &args[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++) {
        CHECK_INT(seen[i].text.len, 4000);
        CHECK_INT(seen[i].last_offset, 4000);
        hub_unsubscribe(h, subs[i]);
        buf_free(&seen[i].text);
    }
    hub_free(h);
}

int main(void)
{
    CHECK_STR(rec_state_name(REC_GENERATING), "generating");
    CHECK_INT(rec_state_parse("completed"), REC_COMPLETED);
    CHECK_INT(rec_state_parse("queued"), REC_QUEUED);
    test_delivery_and_live_text();
    test_ticks_and_watched();
    test_threads();
    TEST_DONE();
}
