/* records_int.h — for the files of the records service only (events.c, service.c,
 * create.c, remote.c, ...): the event hub and the service's state. */
#ifndef INK_RECORDS_INT_H
#define INK_RECORDS_INT_H

#include "records/records.h"

typedef struct hub hub_t;
typedef struct hub_entry hub_entry_t;

hub_t *hub_new(double tick_s);
void hub_free(hub_t *h);
void hub_observe(hub_t *h, records_event_fn fn, void *arg);
records_sub_t *hub_subscribe(hub_t *h, rec_kind_t kind, int64_t user_id, int64_t id,
                             int64_t from_seq, records_event_fn fn, void *arg);
/* The same for the client of one generation (job_id, records_subscribe_job). */
records_sub_t *hub_subscribe_job(hub_t *h, rec_kind_t kind, int64_t user_id, int64_t id,
                                 int64_t from_seq, int64_t job_id, records_event_fn fn,
                                 void *arg);
void hub_unsubscribe(hub_t *h, records_sub_t *sub);
int hub_subscribers(hub_t *h, rec_kind_t kind, int64_t id);
/* local: published by this process (observers see it); else an event of another
 * process, for subscribers only. The text of a generation is kept (for replays) while
 * this process runs it, or while subscribers here follow another process's. */
void hub_publish(hub_t *h, const rev_t *ev, bool local);
void hub_release(hub_t *h);
/* What this process holds of the text of the record's generation gen_seq: *len bytes,
 * the last piece numbered *seq; false (0 and 0) when it holds none of that generation. */
bool hub_text_known(hub_t *h, rec_kind_t kind, int64_t id, int64_t gen_seq, size_t *len,
                    int64_t *seq);
size_t hub_watched(hub_t *h, rec_kind_t *kinds, int64_t *user_ids, int64_t *ids, size_t max);

typedef struct remote remote_t;
typedef struct quota quota_t;

/* The effects of a create's one exit (create.c), each made once per create: records_start
 * sets the real ones (records_exit_fx); tests/unit/test_exit.c wraps them to count.
 *   quota   the reservation (ticket) is settled: handed to record id's generation (id > 0,
 *           at its store; its end event ends it) or released (id 0, at the exit)
 *   wake    the waiter's wake-up: cr->done
 *   answer  the idempotency hook's end, with the outcome as finished */
typedef struct {
    void (*quota)(records_t *s, int64_t ticket, int64_t id);
    void (*wake)(records_t *s, records_create_t *cr);
    void (*answer)(records_t *s, records_create_t *cr);
} records_exit_fx_t;
extern const records_exit_fx_t records_exit_fx;

struct records {
    records_deps_t d;
    hub_t *hub;
    records_create_hook_t hook;
    bool has_hook;
    remote_t *remote; /* PostgreSQL: events of other processes; NULL otherwise */
    bool exit_after_kept_commit; /* test hook (records_start) */
    quota_t *quota; /* generations in flight of users with a quota (quota.c) */
    records_exit_fx_t fx; /* the create exit's effects (create.c) */
};

/* quota.c: the generations in flight of users with a quota, held in the store (every
 * process sees them). */
quota_t *quota_new(store_t *store);
void quota_free(quota_t *q);
/* Before anything is generated: CREATED_DONE (go on; *ticket: the hold, 0 when none is
 * held), CREATE_QUOTA_USED or CREATE_QUOTA_BUSY. c: the store's (NULL: BUSY). */
create_outcome_t quota_admit(records_t *s, quota_t *q, store_conn_t *c,
                             const records_req_t *req, int64_t *ticket);
/* The generation's record is id, stored with its job: the hold counts while it has one. */
void quota_bind(quota_t *q, int64_t ticket, int64_t id);
/* The reservation ends (nothing generated, or the inline path's outcome is known). */
void quota_release(quota_t *q, int64_t ticket);
/* A record's generation ended (rec: as completed, or NULL): the words estimate. */
void quota_end(quota_t *q, rec_kind_t kind, int64_t id, const record_t *rec);
/* quota_end for a COMPLETED, FAILED or DELETED event (local or another process's). */
void quota_event(quota_t *q, const rev_t *ev);

/* remote.c: with a shared store, follows the records other processes generate. */
remote_t *remote_start(records_t *s);
void remote_stop(remote_t *r);
/* A local generation ended (REV_COMPLETED/REV_FAILED) or a record was deleted
 * (REV_DELETED): tells the other processes. */
void remote_announce(remote_t *r, const rev_t *ev);
/* A user and every record of it were deleted (records_delete_user): one NOTIFY tells
 * the other processes, which read each record of the user they follow again (gone:
 * REV_DELETED). r may be NULL (the command line, which follows nothing): c is used. */
void remote_announce_user(remote_t *r, store_conn_t *c, int64_t user_id);
/* records_send_piece / records_flush_pieces for the service. */
void remote_send_piece(remote_t *r, const job_t *job, const rev_t *ev);
void remote_flush_pieces(remote_t *r, int64_t job_id);

/* The one way every event goes (service.c): the quota's reservations hear it, then the
 * record's subscribers (and, local, the observers); a local event that other processes
 * must hear is announced to them (records_publish is records_deliver(s, ev, true)).
 * remote.c delivers the events of other processes with local false. */
void records_deliver(records_t *s, const rev_t *ev, bool local);

/* Publishes REV_REVISION for rec, just stored with a new revision (service.c). */
void records_revision_event(records_t *s, const record_t *rec);

/* Removal (service.c): the files of the media keys a removal's transaction handed back
 * (what and id name it in the log): how many could not be removed; and the DELETED of a
 * record removed, to this process (and by NOTIFY to the others when remote). */
size_t records_removed_files(media_t *media, const char *const *keys, size_t n,
                             const char *what, int64_t id);
void records_removed(records_t *s, rec_kind_t kind, int64_t user_id, int64_t id, bool remote);

/* Tells the deps' changed hook (records_deps_t.changed), if any (service.c). */
void records_changed(records_t *s, rec_kind_t kind, int64_t id);

#endif
