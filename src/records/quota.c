/* quota.c — the generations in flight of users with a quota, in this process
 * (API.md §19; issue 23's race bound).
 *
 * The quota check itself (used >= limit → 403) is the API's, on the usage read with the
 * key (api/router.c). What that usage cannot show is the generations that have started
 * and are not counted yet: twenty creates at once for a user one word below the limit
 * would all pass it, and a check racing a completion reads the usage from before it.
 * So the service keeps, per process, a reservation for every generation it starts for a
 * user with a limit (records_create_t.quota_limit >= 0), from before anything is
 * generated until the generation ends (its record completed, failed or deleted), and
 * starts a new one only when either
 *   - far from the limit: used + the units of the user's reservations that ended since
 *     that usage was read (records_create_t.quota_at: it may not count them) + the
 *     units reserved + this generation's <= limit; or
 *   - near it, none of the user's generations of that kind is in flight here and none
 *     ended since the usage was read (or it has just been read again).
 * A reservation's units:
 *   - images: the pictures a generation makes (1): exact;
 *   - words: the most words one generation has produced in this process so far (at
 *     least 1): an estimate, exact as long as generations are no longer than that.
 * So in one process a user's generations go past the limit by at most one generation:
 * near the limit they start one at a time, each on a usage that counts the one before
 * (a completion in another process can still race a check: one per process).
 * A create that passes the API's check but not this one — its quota is not used up, but
 * its other generations running now may use it up — is refused with
 * CREATE_QUOTA_BUSY (the API answers 429 with Retry-After: try again when they have
 * finished). Before refusing, the service looks again (one read of the usage, one of
 * each reserved record): a reservation whose record has finished, in this process or
 * another, is dropped, and the fresh usage decides — CREATE_QUOTA_USED when it is used
 * up. Reservations end on this process's COMPLETED/FAILED/DELETED events (and those of
 * other processes this one hears of), and lapse after QUOTA_HOLD_S whatever happens (a
 * job lost with its process).
 *
 * Cost: nothing for users without a limit; for the others one mutex and a scan of the
 * (short) list of reservations per create, and store reads only near the limit. */
#include "records/records_int.h"

#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The longest a reservation is held (a job whose process died is taken over and ends
 * well within this; a reservation that outlives it only makes the check stricter). */
#define QUOTA_HOLD_S 900.0
/* How long the ends of a user's generations are remembered: a create whose usage was
 * read longer ago than this reads it again. */
#define QUOTA_END_S 60.0

typedef struct {
    int64_t ticket, user_id;
    int64_t id; /* the record, 0 until the generation has one */
    rec_kind_t kind;
    int64_t units;
    double since;
} qres_t;

/* The ends of one user's generations of one kind in the last QUOTA_END_S: each mark is
 * an end's time and the units ended before it, so the units ended since any time in that
 * span is `total - the first mark at or after it`. */
typedef struct {
    double at;
    int64_t before;
} qmark_t;

typedef struct {
    int64_t user_id;
    rec_kind_t kind;
    int64_t total; /* units of the reservations ended (while marks are kept) */
    qmark_t *m;    /* m[start .. n) in order of time */
    size_t start, n, cap;
} qend_t;

struct quota {
    pthread_mutex_t mu;
    qres_t *v;
    size_t n, cap;
    qend_t *ends; /* per user and kind with an end in the last QUOTA_END_S */
    size_t nends, capends;
    int64_t next_ticket;
    _Atomic int64_t most_words; /* the most words one generation produced here */
};

quota_t *quota_new(void)
{
    quota_t *q = xcalloc(1, sizeof(*q));
    pthread_mutex_init(&q->mu, NULL);
    return q;
}

void quota_free(quota_t *q)
{
    if (!q)
        return;
    pthread_mutex_destroy(&q->mu);
    free(q->v);
    for (size_t i = 0; i < q->nends; i++)
        free(q->ends[i].m);
    free(q->ends);
    free(q);
}

/* Under q->mu: forgets the marks older than QUOTA_END_S, and the users left with none. */
static void forget(quota_t *q, double now)
{
    for (size_t i = 0; i < q->nends;) {
        qend_t *e = &q->ends[i];
        while (e->start < e->n && now - e->m[e->start].at > QUOTA_END_S)
            e->start++;
        if (e->start == e->n) {
            free(e->m);
            q->ends[i] = q->ends[--q->nends];
            continue;
        }
        if (e->start > e->cap / 2) { /* compact */
            memmove(e->m, e->m + e->start, (e->n - e->start) * sizeof(*e->m));
            e->n -= e->start;
            e->start = 0;
        }
        i++;
    }
}

static qend_t *ends_of(quota_t *q, int64_t user_id, rec_kind_t kind)
{
    for (size_t i = 0; i < q->nends; i++)
        if (q->ends[i].user_id == user_id && q->ends[i].kind == kind)
            return &q->ends[i];
    return NULL;
}

/* Under q->mu: a reservation of `units` of this user and kind ended now. */
static void ended(quota_t *q, int64_t user_id, rec_kind_t kind, int64_t units, double now)
{
    qend_t *e = ends_of(q, user_id, kind);
    if (!e) {
        if (q->nends == q->capends) {
            q->capends = q->capends ? q->capends * 2 : 16;
            q->ends = xrealloc(q->ends, q->capends * sizeof(*q->ends));
        }
        e = &q->ends[q->nends++];
        *e = (qend_t){.user_id = user_id, .kind = kind};
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 8;
        e->m = xrealloc(e->m, e->cap * sizeof(*e->m));
    }
    e->m[e->n++] = (qmark_t){now, e->total};
    e->total += units;
}

/* Under q->mu: the units of this user's reservations of this kind that ended at or after
 * `since` (what a usage read then may not count), or -1 when that is too long ago to
 * know. */
static int64_t ended_since(quota_t *q, int64_t user_id, rec_kind_t kind, double since, double now)
{
    forget(q, now);
    if (now - since > QUOTA_END_S)
        return -1;
    qend_t *e = ends_of(q, user_id, kind);
    if (!e)
        return 0;
    size_t lo = e->start, hi = e->n; /* the first mark at or after since */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->m[mid].at < since)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == e->n ? 0 : e->total - e->m[lo].before;
}

static void drop_at(quota_t *q, size_t i)
{
    ended(q, q->v[i].user_id, q->v[i].kind, q->v[i].units, mono_s());
    q->v[i] = q->v[--q->n];
}

/* Under q->mu: drops the lapsed reservations; sums this user's of this kind. */
static int64_t reserved(quota_t *q, int64_t user_id, rec_kind_t kind, double now, size_t *count)
{
    int64_t sum = 0;
    *count = 0;
    for (size_t i = 0; i < q->n;) {
        if (now - q->v[i].since > QUOTA_HOLD_S) {
            drop_at(q, i);
            continue;
        }
        if (q->v[i].user_id == user_id && q->v[i].kind == kind) {
            sum += q->v[i].units;
            (*count)++;
        }
        i++;
    }
    return sum;
}

/* Under q->mu: adds a reservation and returns its ticket. */
static int64_t add(quota_t *q, int64_t user_id, rec_kind_t kind, int64_t id, double now)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 16;
        q->v = xrealloc(q->v, q->cap * sizeof(*q->v));
    }
    int64_t words = atomic_load(&q->most_words);
    int64_t t = ++q->next_ticket;
    q->v[q->n++] = (qres_t){.ticket = t, .user_id = user_id, .id = id, .kind = kind,
                            .units = kind == KIND_IMG ? 1 : (words > 0 ? words : 1),
                            .since = now};
    return t;
}

/* Near the limit: the user's usage read again, and each reservation with a record
 * checked against it (finished or gone: dropped). Returns the fresh usage of the
 * kind, or -1 when the store could not say (the reservations then stand). */
static int64_t look_again(records_t *s, quota_t *q, store_conn_t *c, int64_t user_id,
                          rec_kind_t kind)
{
    if (!c)
        return -1;
    arena_t a;
    arena_init(&a);
    char period[8];
    store_period(store_clock_us(), period);
    usage_row_t *row = NULL;
    size_t n = 0;
    int64_t total = 0;
    int64_t used = -1;
    if (store_usage_list(c, period, user_id, 1, 0, &a, &row, &n, &total) == STORE_OK && n == 1)
        used = kind == KIND_IMG ? row->used.images : row->used.words;
    /* the records reserved: copied out of the lock, read, and dropped under it */
    int64_t ids[64];
    size_t nids = 0;
    pthread_mutex_lock(&q->mu);
    for (size_t i = 0; i < q->n && nids < 64; i++)
        if (q->v[i].user_id == user_id && q->v[i].kind == kind && q->v[i].id > 0)
            ids[nids++] = q->v[i].id;
    pthread_mutex_unlock(&q->mu);
    for (size_t k = 0; k < nids; k++) {
        record_t rec;
        int rc = store_record_get(c, kind, user_id, ids[k], NULL, NULL, &a, &rec);
        if (rc == STORE_NOTFOUND || (rc == STORE_OK && record_finished(&rec)))
            quota_end(q, kind, ids[k], NULL);
    }
    arena_free(&a);
    (void)s;
    return used;
}

create_outcome_t quota_admit(records_t *s, quota_t *q, store_conn_t *c,
                             const records_create_t *cr, int64_t *ticket)
{
    *ticket = 0;
    if (cr->quota_limit < 0)
        return CREATED_DONE; /* no limit: nothing to hold */
    int64_t user_id = cr->rec.user_id, limit = cr->quota_limit, used = cr->quota_used;
    rec_kind_t kind = cr->rec.kind;
    int64_t id = cr->regenerate ? cr->rec.id : 0;
    double read_at = cr->quota_at; /* when the usage `used` was read (mono_s) */
    int64_t words = atomic_load(&q->most_words);
    int64_t unit = kind == KIND_IMG ? 1 : (words > 0 ? words : 1);
    for (int pass = 0;; pass++) {
        double now = mono_s();
        pthread_mutex_lock(&q->mu);
        size_t n;
        int64_t sum = reserved(q, user_id, kind, now, &n);
        /* what ended since the usage was read may not be in it: counted as used (a
         * failed one too — the second look tells) */
        int64_t since = ended_since(q, user_id, kind, read_at, now);
        int64_t counted = used + (since > 0 ? since : 0);
        if (since >= 0 && counted < limit &&
            (counted + sum + unit <= limit || (n == 0 && since == 0))) {
            *ticket = add(q, user_id, kind, id, now);
            pthread_mutex_unlock(&q->mu);
            return CREATED_DONE;
        }
        pthread_mutex_unlock(&q->mu);
        if (used >= limit)
            return CREATE_QUOTA_USED;
        if (pass == 2)
            return CREATE_QUOTA_BUSY;
        double t = mono_s();
        int64_t fresh = look_again(s, q, c, user_id, kind);
        if (fresh < 0)
            return CREATE_QUOTA_BUSY; /* the store could not say: try again */
        if (fresh > used)
            used = fresh;
        read_at = t;
    }
}

void quota_bind(quota_t *q, int64_t ticket, int64_t id)
{
    if (!ticket)
        return;
    pthread_mutex_lock(&q->mu);
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].ticket == ticket) {
            q->v[i].id = id;
            break;
        }
    pthread_mutex_unlock(&q->mu);
}

void quota_release(quota_t *q, int64_t ticket)
{
    if (!ticket)
        return;
    pthread_mutex_lock(&q->mu);
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].ticket == ticket) {
            drop_at(q, i);
            break;
        }
    pthread_mutex_unlock(&q->mu);
}

void quota_end(quota_t *q, rec_kind_t kind, int64_t id, const record_t *rec)
{
    if (rec && kind == KIND_DOC) { /* the longest generation so far */
        int64_t w = rec->words, cur = atomic_load(&q->most_words);
        while (w > cur && !atomic_compare_exchange_weak(&q->most_words, &cur, w))
            ;
    }
    if (id <= 0)
        return;
    pthread_mutex_lock(&q->mu);
    for (size_t i = 0; i < q->n;) {
        if (q->v[i].id == id && q->v[i].kind == kind)
            drop_at(q, i);
        else
            i++;
    }
    pthread_mutex_unlock(&q->mu);
}

void quota_event(quota_t *q, const rev_t *ev)
{
    if (ev->type == REV_COMPLETED || ev->type == REV_FAILED || ev->type == REV_DELETED)
        quota_end(q, ev->kind, ev->id, ev->type == REV_COMPLETED ? ev->rec : NULL);
}
