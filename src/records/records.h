/* records.h — the records service: the one owner of a record's life.
 *
 * Everything that happens to a document or an image goes through here: create (and
 * the choice of path: generated inline in the request and stored by the group commit,
 * or queued as a job for a worker), get, list, update, delete, waiting for a
 * generation, and clean-up after a failure (the record, its media file, its cached
 * rendering) in one place. The HTTP handlers (api/records.c, api/stream.c) decode,
 * call this, and render.
 *
 * Lifecycle events. Every step of a generation is published as an event with its
 * payload:
 *   REV_QUEUED      a record and its job were stored (rec: the record, queued)
 *   REV_GENERATING  a worker took the job (rec: NULL; kind/id/user set)
 *   REV_TEXT        the next piece of a document's text: text/len, and offset = the
 *                   byte offset in the final text just after the piece; pieces never
 *                   split a UTF-8 character and joined in order are the final text
 *   REV_COMPLETED   the generation ended and was stored (rec: the stored record)
 *   REV_FAILED      the generation failed (error: why, in words for the user; rec may
 *                   be NULL)
 *   REV_REVISION    a revision was made outside a generation: an edit of the result or
 *                   a restore (rec: the record as stored). This process only.
 *   REV_DELETED     the record was deleted (whatever its state)
 *   REV_UNSTORED    the generation ended but its outcome could not be stored: the
 *                   store stayed unavailable (a full disk) through every retry of
 *                   records/jobs.c (about 10 s); the record is left as it was and its job
 *                   runs again once its lease runs out and the store takes writes.
 *                   This process's subscribers only (streams end with a 503).
 *
 * The event sequence. Each event of a record carries seq, its number in the record's
 * sequence, which only grows: the store keeps the number of the latest (record_t
 * event_seq) and moves it on in the very statement of the change (store_int.h
 * STORE_SEQ): created (queued) 1; generating +1 (that number G is the generation's
 * gen_seq); the generation's text pieces G+1, G+2, ... (numbered in memory by the
 * process that generates, so they cost no write of their own); completed or failed
 * G + pieces + 1 (the worker tells the store how many pieces it published); a
 * regeneration queued +1; a revision made +1. A document created on the inline path is
 * stored completed at once: its one event, COMPLETED, is 1. Unnumbered (seq 0): UNSTORED
 * (this process's only; nothing changed), RELEASED, TICK. DELETED is last whatever came
 * before it: RECORDS_SEQ_END. One number is shared: a revision made (restore, edit)
 * while a generation runs takes the stored number G+1, which the running generation's
 * first piece has in memory too. The hub delivers both, whichever comes first (each
 * once: REV_TEXT and REV_REVISION may share a number, nothing else may;
 * tests/unit/test_records.c); a piece's place in the text is its offset.
 *
 * Events are published after the change is committed: in this process directly, to
 * other processes (PostgreSQL) by NOTIFY (records/remote.c) — the text pieces too, each
 * with its number, appended to the job's row in the statement that NOTIFYs them. A
 * subscriber never gets the same number twice nor an older one after a newer one (the
 * hub drops them), and a piece of another process's generation that the notifications
 * skipped (none are lost while the listener is connected; after a reconnection) is
 * filled from the job's row, as one TEXT event.
 *
 * Subscribing from a number (records_subscribe from_seq) first replays, under the hub's
 * lock and so in order with everything later, what this process holds of the record's
 * current generation and is numbered after from_seq: GENERATING, then every text piece
 * as its own TEXT event. The hub holds the generations this process runs and those of
 * other processes that a subscriber here follows; nothing else (no QUEUED, no finished
 * generation, no text of another process's generation that nobody here followed). The
 * subscriber reads what it needs beyond that from the store after subscribing: the
 * record (its state and event_seq say which events it covers) and records_partial (the
 * text so far of another process's generation, with the number of its last piece).
 *
 * Two kinds of listeners:
 *  - subscribers of one record (records_subscribe): waiting creates and SSE streams.
 *    Their callback runs in the publishing thread (a worker, the writer thread, the
 *    PostgreSQL listener) under the service's event lock: it must be quick (copy,
 *    wake a connection) and must not call back into the service.
 *  - process-wide observers (records_observe): metrics and the like. They see every
 *    event this process publishes (not those of other processes), outside any lock.
 *
 * Threads: every function may be called from any thread. */
#ifndef INK_RECORDS_H
#define INK_RECORDS_H

#include "core/config.h"
#include "gen/provider.h"
#include "media/media.h"
#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct records records_t;

/* ---- events ---- */

typedef enum {
    REV_QUEUED,
    REV_GENERATING,
    REV_TEXT,
    REV_COMPLETED,
    REV_FAILED,
    REV_DELETED,
    REV_UNSTORED,
    REV_REVISION,
    /* Subscribers only: the server is stopping; the subscription has been removed. */
    REV_RELEASED,
    /* Subscribers only: a periodic tick (records_tick_s), for deadlines and SSE
     * keep-alives. offset is unused; now_mono is set. */
    REV_TICK,
} rev_type_t;

/* Why a generation failed, as a code (the API maps it to a status: the service knows
 * none). The words for the user are the event's (or record's) error. */
typedef enum {
    RF_NONE = 0,
    RF_GENERATION,   /* the generator failed */
    RF_STORAGE_FULL, /* a picture found no room (media.h MEDIA_FULL) */
    RF_UNSTORED,     /* the outcome could not be stored (REV_UNSTORED) */
    RF_DELETED,      /* the record was deleted before its generation finished */
    RF_CHANGED,      /* an action lost the race to another revision (API.md §24: 409) */
} rec_failure_t;

typedef struct {
    rev_type_t type;
    rec_kind_t kind;
    int64_t id, user_id;
    const record_t *rec;  /* QUEUED, COMPLETED; may be NULL when not known */
    const char *text;     /* TEXT */
    size_t len;           /* TEXT */
    int64_t offset;       /* TEXT: byte offset just after this piece */
    const char *error;    /* FAILED */
    rec_failure_t failure; /* FAILED, UNSTORED (RF_NONE: RF_GENERATION) */
    const char *provider; /* COMPLETED, FAILED: the provider's name (this process) */
    double duration_s;    /* COMPLETED, FAILED: time spent generating (this process) */
    bool inline_path;     /* COMPLETED, FAILED: generated in the creating request */
    bool here_only;       /* not announced to other processes (they are told otherwise:
                           * a user's deletion, a lost job's record) */
    double now_mono;      /* TICK */
    /* COMPLETED of an action (§17): the text events carried only the part rewritten,
     * rec->result[part_start .. strlen - part_after) */
    bool part;
    int64_t part_start, part_after;
    /* GENERATING, TEXT, COMPLETED, FAILED of a job of this process: its id (else 0).
     * A record regenerated again may still hear the late events of its previous job;
     * whoever follows one generation ignores those of another job. */
    int64_t job_id;
    /* The event's number in its record's sequence (see above); 0: unnumbered. */
    int64_t seq;
    /* GENERATING, TEXT: the number of the generation's GENERATING event (TEXT pieces
     * are gen_seq + 1, + 2, ...). */
    int64_t gen_seq;
    /* TEXT: how many pieces this event carries, the last one numbered seq (1 but for
     * pieces of another process that arrived joined). */
    int64_t pieces;
} rev_t;

/* The number of REV_DELETED: after every other. */
#define RECORDS_SEQ_END INT64_MAX

typedef void (*records_event_fn)(void *arg, const rev_t *ev);

/* What the stored error of a failed record stands for (records_failure_of): the
 * failures whose kind must survive the database, told apart in this one place. */
rec_failure_t records_failure_of(const char *stored_error);

/* The error of a generation whose outcome could not be stored (REV_UNSTORED). */
#define RECORDS_UNSTORED_ERROR "The result could not be stored: the server's storage is full or unavailable."


/* Registers a process-wide observer; call at start-up, before the server accepts
 * requests. At most 8. Observers are never removed. */
void records_observe(records_t *s, records_event_fn fn, void *arg);

typedef struct records_sub records_sub_t;

/* Subscribes to the events of one record (user_id: its owner), from the events
 * numbered after from_seq (0: all): what this process holds of them is replayed to fn
 * before this returns (see "Subscribing from a number" above), and every later one
 * follows. The callback gets a REV_TICK every RECORDS_TICK_S too. */
records_sub_t *records_subscribe(records_t *s, rec_kind_t kind, int64_t user_id, int64_t id,
                                 int64_t from_seq, records_event_fn fn, void *arg);
/* The same for the client of one generation (a waiting or streamed create, regenerate
 * or action): events of other jobs are not given to it, and its own job's end
 * (COMPLETED, FAILED, UNSTORED carrying job_id) is given to it even when the record's
 * number has moved past it (another regeneration accepted between the end's commit and
 * its event: before, that end was dropped as older and the client waited in vain). */
records_sub_t *records_subscribe_job(records_t *s, rec_kind_t kind, int64_t user_id,
                                     int64_t id, int64_t from_seq, int64_t job_id,
                                     records_event_fn fn, void *arg);
/* After it returns, the callback is never called again. NULL is ignored. */
void records_unsubscribe(records_t *s, records_sub_t *sub);

/* Whether generation job_id has ended (its job row is gone: completed, failed, or its
 * record deleted). A client that subscribed after its job may have ended asks this
 * BEFORE reading the record: a record read after a true answer that is not finished
 * is already another generation's (the client's own ended first). */
int records_job_ended(records_t *s, store_conn_t *c, int64_t job_id, bool *ended);

/* Publishes an event: to the record's subscribers, the observers and (PostgreSQL)
 * other processes. For the workers (records/jobs.c) and the service itself. */
void records_publish(records_t *s, const rev_t *ev);

/* With a store shared by several processes (PostgreSQL): a text piece of job (a
 * REV_TEXT this process published) goes to the other processes — appended to the job's
 * row and NOTIFYed in one statement, by a sender thread of the service, so the worker
 * never waits for the database; pieces that pile up while a statement runs go out
 * joined in the next one (records/remote.c). Nothing when the store is not shared. */
void records_send_piece(records_t *s, const job_t *job, const rev_t *ev);
/* Returns once every piece of job handed to records_send_piece was sent (or failed):
 * before its outcome is stored, so the other processes hear of its end after its text. */
void records_flush_pieces(records_t *s, int64_t job_id);
/* The text so far of a record another process generates (NULL when none is known), and
 * in *seq the number of its last piece. */
const char *records_partial(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t id,
                            arena_t *a, int64_t *seq);

/* ---- a generation's outcome (records/outcome.c) ---- */

/* What a worker hands to the service once its provider has answered. */
typedef struct {
    bool ok;
    const char *text;                        /* ok, documents */
    int64_t prompt_tokens, completion_tokens; /* ok, documents: -1 = not said */
    bool truncated;                          /* ok, documents */
    const void *png;                         /* ok, images */
    size_t png_len;
    const char *revised_prompt;              /* ok, images: may be NULL */
    const char *error;                       /* !ok: why, for the user */
    rec_failure_t failure;                   /* !ok: RF_NONE = RF_GENERATION */
    double t0;                               /* mono_s() when the generation began */
    /* ok, an action (§17): the text events carried only the part rewritten, which
     * starts at byte part_start of text and is followed by part_after bytes */
    bool part;
    int64_t part_start, part_after;
    int64_t pieces; /* the text pieces the generation published (REV_TEXT events) */
} records_outcome_t;

/* Stores job's outcome (an image's picture first), retrying while the store is
 * unavailable unless *stopping; keeps the revision cap; publishes COMPLETED (the row as
 * stored), FAILED or UNSTORED. A picture no record refers to is removed. Returns the
 * store's answer (STORE_STALE: the lease was lost or the record deleted; nothing
 * changed). */
int records_store_outcome(records_t *s, store_conn_t *c, const job_t *job,
                          const records_outcome_t *o, const _Atomic bool *stopping);

/* ---- the service ---- */

typedef struct {
    const cfg_t *cfg;
    store_t *store;
    media_t *media;
    const provider_t *prov;
    /* Told when a record's shown content changed without a newer updated_us than
     * a cached rendering may hold (a delete, a restore): the API drops its rendering
     * (api/rcache.h). NULL: nobody to tell. */
    void (*changed)(void *arg, rec_kind_t kind, int64_t id);
    void *changed_arg;
    struct jobs *jobs;     /* set with records_set_jobs once the workers run */
    struct writer *writer; /* group commit for inline generations; NULL = none */
} records_deps_t;

/* NULL when a thread of its own could not start (logged). */
records_t *records_start(const records_deps_t *deps);
void records_set_jobs(records_t *s, struct jobs *jobs);
/* The server is stopping: every subscriber gets REV_RELEASED (waiting creates answer
 * 202, streams end) and new subscriptions are released at once. */
void records_release(records_t *s);
void records_stop(records_t *s);

/* ---- create ---- */

typedef enum {
    CREATE_WAIT,   /* wait for the generation (up to --wait-limit) */
    CREATE_ASYNC,  /* Prefer: respond-async: answer once stored */
    CREATE_STREAM, /* SSE: answer once stored; the caller then subscribes (records_subscribe
                    * from 0, as api/stream.c does: the hub replays the running generation) */
} create_mode_t;

/* A create's outcome. The service knows no HTTP status: the API maps outcomes (and
 * cr->res.failure) to its answers (api/records.c api_create_answer). */
typedef enum {
    CREATED_DONE,       /* generated and stored: res.rec completed */
    CREATED_PENDING,    /* stored, generation goes on: res.rec as it stands */
    CREATED_STREAM,     /* CREATE_STREAM: stored; subscribe for the events */
    CREATE_FAILED,      /* generation failed: res.failure, res.error; a create leaves
                         * nothing behind, a regeneration its record */
    CREATE_STORE_ERROR, /* res.store_rc tells why */
    CREATE_HOOK,        /* the begin hook answered (its answer is in cr->hook.state) */
    CREATE_BUSY,        /* regenerate: the record is being generated */
    CREATE_NOTFOUND,    /* regenerate: no such record (or not the user's) */
    CREATE_QUOTA_USED,  /* the quota is used up (read again near the limit: quota.c) */
    CREATE_QUOTA_BUSY,  /* not used up, but this user's generations in flight here may
                         * use it up: try again when they have finished (quota.c) */
} create_outcome_t;

/* A create's request: what the API asks. The service reads it and never writes it. */
typedef struct {
    record_t rec;          /* kind, user_id and the input fields (a regeneration: rec.id is
                            * the record, as the API read it, with the new inputs) */
    create_mode_t mode;
    const void *fields;    /* the decoded body (a kvlist_t), for hooks */
    /* the request's Idempotency-Key header (API.md §11), or NULL; for the hook */
    const char *idempotency_key;
    /* A regeneration (API.md §16): rec's input fields are those of the new generation;
     * always through a job but for the builtin text. A failure leaves the record (its
     * latest revision, error set), and the result's rec is the record as it stands. */
    bool regenerate;
    /* An action (API.md §17; regenerate is set too): its name, NULL for none, and the
     * selection in code points of the record's result (-1 and -1: the whole text). */
    const char *action;
    int64_t sel_start, sel_end;
    /* The user's quota of the record's kind this month (API.md §19) and its usage as
     * the API read it with the key: quota_limit < 0 for none. With one, the service
     * holds a reservation while the generation is in flight (records/quota.c). */
    int64_t quota_limit, quota_used;
    double quota_at; /* mono_s() just before that usage was read */
} records_req_t;

/* A create's result: set by the service's one exit (records/create.c), completed by
 * records_create_finish. */
typedef struct {
    create_outcome_t outcome;
    record_t rec;            /* the record as stored (or as it stands: see the outcomes) */
    int store_rc;            /* CREATE_STORE_ERROR */
    const char *error;       /* CREATE_FAILED: why, in words for the user */
    rec_failure_t failure;   /* CREATE_FAILED */
    int64_t job_id;          /* the job stored for it (0 on the inline path) */
    /* CREATE_STREAM on the inline path: the text was generated before the record was
     * stored; the record is completed (rec.result) and no REV_TEXT events follow. */
    bool inline_text;
} records_result_t;

/* The create hook's state (records_create_hook_t), the hook's own. */
typedef struct {
    void *state; /* what begin set up for end (api/idempotency.c: the key, or its answer) */
    /* Set by begin (or NULL): the Idempotency-Key answer the service keeps in the
     * transaction that stores the record (store.h idem_keep_t); the service sets its
     * status and final for the path taken (inline, stream: 201 final; async: 202 final;
     * waiting: 202 kept for a crash, the end hook finishes the key). */
    idem_keep_t *keep;
} records_hook_state_t;

typedef struct records_create records_create_t;
struct records_create {
    records_req_t req;
    records_result_t res;
    records_hook_state_t hook;
    arena_t *arena;        /* strings of the result are allocated here */
    void (*done)(records_create_t *cr); /* the waiter's wake-up: once, from any thread */
    void *arg;
    void *priv;            /* the service's */
};

/* Hooks around every create, for every path (inline, job, streamed): begin runs
 * before anything is stored and may answer instead (return true: the outcome is
 * CREATE_HOOK, and the answer the hook's own, in cr->hook.state); end runs once, in
 * records_create_finish, with the outcome as finished (not after a begin that
 * answered). For Idempotency-Key (§11). */
typedef struct {
    bool (*begin)(void *arg, records_create_t *cr);
    void (*end)(void *arg, records_create_t *cr);
    /* The status kept with the record for an outcome (its idem_keep_t.status): the
     * API's, since the service knows none. */
    int (*status)(void *arg, const records_create_t *cr, create_outcome_t outcome);
    void *arg;
} records_create_hook_t;
void records_set_create_hook(records_t *s, const records_create_hook_t *h);

/* Starts a create (cr->req set, cr->res and cr->hook zeroed). cr->done is called
 * exactly once with the outcome in cr->res, maybe before this returns, maybe later from
 * another thread (records/create.c: the one exit). */
void records_create(records_t *s, records_create_t *cr);
/* After done: completes the outcome in a thread that may use the store (c): a waited
 * generation that failed is discarded (nothing left behind), a wait that ended first
 * reads the record as it stands, and the end hook runs. A second call does nothing. */
void records_create_finish(records_t *s, store_conn_t *c, records_create_t *cr);

/* ---- read and change ---- */

/* probe (may be NULL): see record_get_probed in store.h; used only when the backend
 * has probed reads. */
int records_get(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                record_probe_fn probe, void *probe_arg, arena_t *a, record_t *out);
int records_list(records_t *s, store_conn_t *c, rec_kind_t kind, list_query_t *q, arena_t *a,
                 record_list_t *out);
/* An empty patch reads the record. */
int records_update(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                   const record_patch_t *p, arena_t *a, record_t *out);
/* Deletes the record, its media file and its cached rendering. */
int records_delete(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id);
/* The bulk delete (API.md §23): the user's records among ids[0..n) (ascending,
 * distinct), all in one store transaction (an error deletes none), then their files and
 * each one's deletion told as records_delete does. *done (in a) gets the ids deleted. */
int records_delete_many(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id,
                        const int64_t *ids, size_t n, arena_t *a, int64_t **done, size_t *ndone);
/* Removes a user and everything of it (API.md §19; issue 33): every row it owns in
 * every table, in one transaction (store_user_delete: the store's one list), then every
 * picture file of its records and their revisions, then tells of each record's
 * deletion as records_delete does: REV_DELETED to this process's streams, waiters and
 * jobs, and one notification to other processes (PostgreSQL), which end theirs. s may
 * be NULL (the command line: no process of its own to tell; media is used for the
 * files). STORE_NOTFOUND when there is no such user. *files_left: pictures that could
 * not be removed (logged; swept at the next start). */
int records_delete_user(records_t *s, store_conn_t *c, media_t *media, int64_t user_id,
                        size_t *files_left);
/* A worker lost its job (jobs.c: the lease renewal found it gone): when its record is
 * gone too — deleted by a process whose events do not reach this one, the command line
 * beside a SQLite server — its streams and waiters here hear REV_DELETED. */
void records_job_lost(records_t *s, store_conn_t *c, const job_t *job);

/* A generation the client waited for failed: the record goes, as with delete (errors
 * are logged, not returned). */
void records_discard(records_t *s, rec_kind_t kind, int64_t user_id, int64_t id);

/* ---- revisions (API.md §16; records/revisions.c) ---- */

/* True when the record's last generation failed: a failed record, or one that keeps
 * showing its latest revision after a failed regeneration (completed, error set). */
static inline bool records_last_failed(const record_t *r)
{
    return r->state == REC_FAILED || (r->state == REC_COMPLETED && r->error != NULL);
}
int records_revisions(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                      int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                      int64_t *total);
int records_revision(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                     int64_t number, arena_t *a, revision_t *out);
/* A new revision with revision number's content (an image's picture is copied: each
 * revision keeps its own file). */
int records_restore(records_t *s, store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                    int64_t number, arena_t *a, record_t *out);
/* rec just got a revision: past --max-revisions the oldest go, with their pictures. (An
 * inline regeneration has its store trim in its own transaction instead.) */
void records_revision_made(records_t *s, store_conn_t *c, const record_t *rec);
/* --max-revisions: the revisions a record keeps. */
int records_revision_cap(const records_t *s);

/* ---- actions (API.md §17; records/actions.c) ---- */

/* True for one of the nine actions. */
bool records_action_valid(const char *name);
/* The bytes [*b0, *b1) of text that an action rewrites: the selection (code points;
 * -1 and -1 = the whole text) clamped to the text; for continue the empty range at
 * its end, where the new text goes. */
void records_action_range(const char *text, const char *action, int64_t sel_start,
                          int64_t sel_end, size_t *b0, size_t *b1);
/* An action's part (the bytes text[b_start .. strlen - b_after)) in code points, as
 * its revision keeps it (job_t.part_start, part_end), and back: false when the code
 * points do not fit text. */
void records_part_cps(const char *text, int64_t b_start, int64_t b_after, int64_t *cp_start,
                      int64_t *cp_end);
bool records_part_bytes(const char *text, int64_t cp_start, int64_t cp_end, int64_t *b_start,
                        int64_t *b_after);
/* When the latest revision of rec (a completed document, read with its result) was made
 * by an action (API.md §17): true and the part it rewrote, rec->result[*b_start ..
 * strlen - *b_after). False for any other revision, one made before the part was kept
 * (SQLite migration 31, PostgreSQL 24), or when the store cannot say. */
bool records_latest_part(records_t *s, store_conn_t *c, const record_t *rec, int64_t *b_start,
                         int64_t *b_after);
/* What a continuation at b0 starts with, so that it begins a paragraph of its own:
 * "", "\n" or "\n\n" ("" for the other actions). */
const char *records_action_sep(const char *text, const char *action, size_t b0);
/* text[0..b0) + part + text[b1..]: malloc'd. */
char *records_action_splice(const char *text, size_t b0, size_t b1, const char *part,
                            size_t part_len);

/* The seconds between REV_TICK events: the precision of wait limits and keep-alives. */
#define RECORDS_TICK_S 0.05
double records_tick_s(records_t *s);

/* The generator's request for a document (service.c): prompt, creativity and template;
 * a user's own template (API.md §18) is looked up on c, deleted or not (a job accepted
 * before its delete still runs with it), for its instruction and name. STORE_OK, or
 * the store's failure (req then has no instruction). */
int records_text_req(store_conn_t *c, const record_t *rec, arena_t *a, gen_text_req_t *req);

#endif
