/* test_records.c — the records service's event hub (src/records/events.c): events
 * reach the subscribers of their record only, with their payload; a subscription from a
 * sequence number replays, piece by piece, the events of the generation the hub holds
 * numbered after it; numbers a subscriber had already (or older ones) are not
 * delivered again; another process's pieces are held for replays while subscribers
 * follow them; observers see local events and not other processes'; unsubscribe stops
 * delivery; release tells every subscriber and later subscriptions at once; ticks
 * come, and only while somebody is subscribed; a revision and a piece that share a
 * number both arrive; many threads' pieces arrive in order, numbered without a gap. */
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
    int64_t seqs[64]; /* the numbers of the first events (ticks aside) */
    int nseqs;
    int64_t last_seq;
    bool out_of_order; /* a numbered event not after the previous one */
} seen_t;

static void on_event(void *arg, const rev_t *ev)
{
    seen_t *s = arg;
    /* atomic: the tests poll the count of ticks while the ticker adds to it */
    __atomic_fetch_add(&s->n[ev->type], 1, __ATOMIC_RELEASE);
    if (ev->type != REV_TICK && s->nseqs < 64)
        s->seqs[s->nseqs++] = ev->seq;
    if (ev->seq > 0) {
        if (ev->seq <= s->last_seq)
            s->out_of_order = true;
        s->last_seq = ev->seq;
    }
    if (ev->type == REV_TEXT) {
        buf_append(&s->text, ev->text, ev->len);
        s->last_offset = ev->offset;
    }
    if (ev->type == REV_FAILED)
        s->error = ev->error;
    if (ev->type == REV_COMPLETED && ev->rec)
        s->rec_id = ev->rec->id;
}

/* A piece of generation gen (its GENERATING number): the pieces so far are
 * (*offset's) gen + 1, gen + 2, ... */
static void publish_piece(hub_t *h, int64_t id, int64_t gen, const char *piece,
                          int64_t *offset, int64_t *seq, bool local)
{
    size_t len = strlen(piece);
    *offset += (int64_t)len;
    *seq = *seq ? *seq + 1 : gen + 1;
    rev_t ev = {.type = REV_TEXT, .kind = KIND_DOC, .id = id, .text = piece, .len = len,
                .offset = *offset, .seq = *seq, .gen_seq = gen, .pieces = 1};
    hub_publish(h, &ev, local);
}

static void test_delivery_and_replay(void)
{
    hub_t *h = hub_new(30);
    seen_t a = {0}, b = {0}, obs = {0};
    buf_init(&a.text);
    buf_init(&b.text);
    buf_init(&obs.text);
    hub_observe(h, on_event, &obs);
    records_sub_t *sa = hub_subscribe(h, KIND_DOC, 7, 1, 0, on_event, &a);
    CHECK_INT(hub_subscribers(h, KIND_DOC, 1), 1);
    CHECK_INT(hub_subscribers(h, KIND_IMG, 1), 0);

    rev_t gen = {.type = REV_GENERATING, .kind = KIND_DOC, .id = 1, .user_id = 7, .seq = 2,
                 .gen_seq = 2};
    hub_publish(h, &gen, true);
    int64_t off = 0, seq = 0;
    publish_piece(h, 1, 2, "héllo ", &off, &seq, true);
    publish_piece(h, 1, 2, "wörld", &off, &seq, true);
    /* a late subscriber from 0 gets the generation so far replayed event by event (its
     * GENERATING, then each piece as its own TEXT, numbered), then what follows */
    records_sub_t *sb = hub_subscribe(h, KIND_DOC, 7, 1, 0, on_event, &b);
    CHECK_INT(b.n[REV_GENERATING], 1);
    CHECK_INT(b.n[REV_TEXT], 2);
    CHECK_STR(buf_cstr(&b.text), "héllo wörld");
    CHECK_INT(b.nseqs, 3);
    CHECK_INT(b.seqs[0], 2);
    CHECK_INT(b.seqs[1], 3);
    CHECK_INT(b.seqs[2], 4);
    /* from a number: only what comes after it */
    seen_t f = {0};
    buf_init(&f.text);
    records_sub_t *sf = hub_subscribe(h, KIND_DOC, 7, 1, 3, on_event, &f);
    CHECK_INT(f.n[REV_GENERATING], 0);
    CHECK_STR(buf_cstr(&f.text), "wörld");
    CHECK_INT(f.last_offset, (int64_t)strlen("héllo wörld"));
    hub_unsubscribe(h, sf);
    seen_t g = {0};
    buf_init(&g.text);
    records_sub_t *sg = hub_subscribe(h, KIND_DOC, 7, 1, 4, on_event, &g);
    CHECK_INT(g.nseqs, 0);
    hub_unsubscribe(h, sg);
    publish_piece(h, 1, 2, "!", &off, &seq, true);
    CHECK_STR(buf_cstr(&a.text), "héllo wörld!");
    CHECK_STR(buf_cstr(&b.text), "héllo wörld!");
    CHECK_INT(b.last_offset, (int64_t)strlen("héllo wörld!"));
    CHECK_INT(b.last_seq, 5);
    CHECK(!a.out_of_order && !b.out_of_order);
    CHECK_STR(buf_cstr(&obs.text), "héllo wörld!");
    /* a number they had (or an older one) is not delivered again */
    rev_t again = {.type = REV_TEXT, .kind = KIND_DOC, .id = 1, .text = "!", .len = 1,
                   .offset = off, .seq = 5, .gen_seq = 2, .pieces = 1};
    hub_publish(h, &again, false);
    gen.seq = 2;
    hub_publish(h, &gen, false);
    CHECK_INT(a.n[REV_TEXT], 3);
    CHECK_INT(a.n[REV_GENERATING], 1);
    buf_free(&f.text);
    buf_free(&g.text);

    /* another record's events do not reach them */
    rev_t other = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 2};
    hub_publish(h, &other, true);
    CHECK_INT(a.n[REV_COMPLETED], 0);
    CHECK_INT(obs.n[REV_COMPLETED], 1);

    /* the end carries its payload; no more live text afterwards */
    record_t rec = {.kind = KIND_DOC, .id = 1, .event_seq = 6};
    rev_t done = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 1, .rec = &rec, .seq = 6};
    hub_publish(h, &done, true);
    CHECK_INT(a.rec_id, 1);
    CHECK_INT(b.rec_id, 1);
    seen_t c = {0};
    buf_init(&c.text);
    records_sub_t *sc = hub_subscribe(h, KIND_DOC, 7, 1, 0, on_event, &c);
    CHECK_INT(c.nseqs, 0); /* a finished generation is not held: the store has it */

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
    records_sub_t *sd = hub_subscribe(h, KIND_IMG, 7, 9, 0, on_event, &d);
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
    records_sub_t *s1 = hub_subscribe(h, KIND_DOC, 3, 10, 0, on_event, &a);
    records_sub_t *s2 = hub_subscribe(h, KIND_IMG, 4, 11, 0, on_event, &a);
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
    CHECK(__atomic_load_n(&a.n[REV_TICK], __ATOMIC_ACQUIRE) >= 4); /* two subscriptions, every 50 ms */
    hub_unsubscribe(h, s2);
    CHECK_INT(hub_watched(h, kinds, users, ids, 4), 0);
    hub_free(h);
    buf_free(&a.text);
}

/* A revision made while a generation runs (an edit, a restore) takes the stored number
 * G+1, which the generation's first piece has in memory too: every subscriber gets
 * both, whichever comes first, each once, and the pieces after them (records.h). */
static void test_revision_shares_a_number(void)
{
    for (int order = 0; order < 2; order++) {
        hub_t *h = hub_new(30);
        seen_t a = {0};
        buf_init(&a.text);
        records_sub_t *sa = hub_subscribe(h, KIND_DOC, 7, 5, 0, on_event, &a);
        rev_t gen = {.type = REV_GENERATING, .kind = KIND_DOC, .id = 5, .user_id = 7,
                     .seq = 10, .gen_seq = 10};
        hub_publish(h, &gen, true);
        rev_t rev = {.type = REV_REVISION, .kind = KIND_DOC, .id = 5, .user_id = 7, .seq = 11};
        int64_t off = 0, seq = 0;
        if (order == 0) {
            hub_publish(h, &rev, true);
            hub_publish(h, &rev, false); /* the same again (another path): not twice */
        }
        publish_piece(h, 5, 10, "one ", &off, &seq, true); /* 11 */
        if (order == 1)
            hub_publish(h, &rev, true);
        int64_t off2 = 0, seq2 = 0; /* the first piece again, from another process */
        publish_piece(h, 5, 10, "one ", &off2, &seq2, false);
        publish_piece(h, 5, 10, "two", &off, &seq, true); /* 12 */
        hub_publish(h, &rev, true); /* older now */
        CHECK_INT(a.n[REV_GENERATING], 1);
        CHECK_INT(a.n[REV_REVISION], 1);
        CHECK_INT(a.n[REV_TEXT], 2);
        CHECK_STR(a.text.data, "one two");
        CHECK_INT(a.last_seq, 12);
        hub_unsubscribe(h, sa);
        hub_free(h);
        buf_free(&a.text);
    }
}

/* The ticker with nobody subscribed does nothing (it waits for a subscriber); the
 * first subscription gets ticks at once again. */
static void test_ticker_idle(void)
{
    hub_t *h = hub_new(0.02);
    seen_t a = {0};
    buf_init(&a.text);
    records_sub_t *s1 = hub_subscribe(h, KIND_DOC, 3, 10, 0, on_event, &a);
    for (int i = 0; i < 1000 * test_slow() && __atomic_load_n(&a.n[REV_TICK], __ATOMIC_ACQUIRE) < 2; i++)
        usleep(10 * 1000);
    hub_unsubscribe(h, s1);
    int ticks = a.n[REV_TICK];
    CHECK(ticks >= 2);
    usleep(100 * 1000); /* a window in which nothing may happen: nobody is subscribed */
    CHECK_INT(a.n[REV_TICK], ticks);
    s1 = hub_subscribe(h, KIND_DOC, 3, 10, 0, on_event, &a);
    for (int i = 0; i < 1000 * test_slow() && __atomic_load_n(&a.n[REV_TICK], __ATOMIC_ACQUIRE) < ticks + 2; i++)
        usleep(10 * 1000);
    hub_unsubscribe(h, s1);
    CHECK(a.n[REV_TICK] >= ticks + 2);
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
    rev_t gen = {.type = REV_GENERATING, .kind = KIND_DOC, .id = a->id, .seq = 1, .gen_seq = 1};
    hub_publish(a->h, &gen, true);
    int64_t off = 0, seq = 0;
    for (int i = 0; i < 2000; i++)
        publish_piece(a->h, a->id, 1, "ab", &off, &seq, true);
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
        subs[i] = hub_subscribe(h, KIND_DOC, 1, 100 + i, 0, on_event, &seen[i]);
        args[i] = (pub_arg_t){h, 100 + i};
        pthread_create(&t[i], NULL, publisher, &args[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++) {
        CHECK_INT(seen[i].text.len, 4000);
        CHECK_INT(seen[i].last_offset, 4000);
        CHECK_INT(seen[i].last_seq, 2001); /* 1 generating, then 2000 pieces */
        CHECK(!seen[i].out_of_order);
        for (int k = 0; k < seen[i].nseqs; k++) /* no gap: 1, 2, 3, ... */
            CHECK_INT(seen[i].seqs[k], k + 1);
        hub_unsubscribe(h, subs[i]);
        buf_free(&seen[i].text);
    }
    hub_free(h);
}

/* Another process's pieces (local = false): held while subscribers here follow them,
 * so a second subscriber gets them replayed; a gap is left to the caller (remote.c fills
 * it from the job's row: hub_text_known says what is held); the end drops them. */
static void test_followed(void)
{
    hub_t *h = hub_new(30);
    seen_t a = {0}, b = {0};
    buf_init(&a.text);
    buf_init(&b.text);
    size_t len;
    int64_t seq;
    CHECK(!hub_text_known(h, KIND_DOC, 5, 4, &len, &seq));
    records_sub_t *sa = hub_subscribe(h, KIND_DOC, 1, 5, 0, on_event, &a);
    int64_t off = 0, s = 0;
    publish_piece(h, 5, 4, "one ", &off, &s, false);
    publish_piece(h, 5, 4, "two ", &off, &s, false);
    CHECK(hub_text_known(h, KIND_DOC, 5, 4, &len, &seq));
    CHECK_INT(len, 8);
    CHECK_INT(seq, 6);
    CHECK(!hub_text_known(h, KIND_DOC, 5, 9, &len, &seq)); /* another generation */
    /* a gap filled from the row comes as one event of two pieces: held */
    rev_t filled = {.type = REV_TEXT, .kind = KIND_DOC, .id = 5, .text = "three four", .len = 10,
                    .offset = 18, .seq = 8, .gen_seq = 4, .pieces = 2};
    hub_publish(h, &filled, false);
    hub_publish(h, &filled, false); /* heard twice: delivered once */
    CHECK_INT(a.n[REV_TEXT], 3);
    records_sub_t *sb = hub_subscribe(h, KIND_DOC, 1, 5, 0, on_event, &b);
    CHECK_STR(buf_cstr(&b.text), "one two three four");
    CHECK_INT(b.n[REV_TEXT], 3);
    CHECK_INT(b.n[REV_GENERATING], 1);
    CHECK_INT(b.seqs[0], 4);
    CHECK_INT(b.seqs[3], 8);
    record_t rec = {.kind = KIND_DOC, .id = 5, .event_seq = 9};
    rev_t done = {.type = REV_COMPLETED, .kind = KIND_DOC, .id = 5, .rec = &rec, .seq = 9};
    hub_publish(h, &done, false);
    CHECK(!hub_text_known(h, KIND_DOC, 5, 4, &len, &seq));
    CHECK_INT(a.n[REV_COMPLETED], 1);
    CHECK_INT(b.n[REV_COMPLETED], 1);
    /* deleted is last: nothing after it */
    rev_t del = {.type = REV_DELETED, .kind = KIND_DOC, .id = 5, .seq = RECORDS_SEQ_END};
    hub_publish(h, &del, false);
    hub_publish(h, &done, false);
    CHECK_INT(a.n[REV_DELETED], 1);
    CHECK_INT(a.n[REV_COMPLETED], 1);
    CHECK(!a.out_of_order && !b.out_of_order);
    hub_unsubscribe(h, sa);
    hub_unsubscribe(h, sb);
    hub_free(h);
    buf_free(&a.text);
    buf_free(&b.text);
}

int main(void)
{
    CHECK_STR(rec_state_name(REC_GENERATING), "generating");
    CHECK_INT(rec_state_parse("completed"), REC_COMPLETED);
    CHECK_INT(rec_state_parse("queued"), REC_QUEUED);
    test_delivery_and_replay();
    test_ticks_and_watched();
    test_ticker_idle();
    test_revision_shares_a_number();
    test_followed();
    test_threads();
    TEST_DONE();
}
