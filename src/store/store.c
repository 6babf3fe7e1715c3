/* store.c — backend choice by URL and one connection per thread. */
#include "store/store_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pthread_key_t key;
    store_counts_t *counts; /* totals of filtered lists (store_int.h) */
    store_pages_t *pages;   /* page boundaries of unsearched lists (store_int.h) */
} store_priv_t;

static void conn_destroy(void *p)
{
    store_conn_t *c = p;
    if (c)
        c->ops->disconnect(c);
}

store_t *store_open(const char *url, char *err, size_t errlen)
{
    store_t *s = xcalloc(1, sizeof(*s));
    if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
        s->ops = &store_postgres_ops;
        s->url = xstrdup(url);
    } else {
        s->ops = &store_sqlite_ops;
        s->url = xstrdup(strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url);
    }
    if (!s->url[0]) {
        snprintf(err, errlen, "empty database location");
        free(s->url);
        free(s);
        return NULL;
    }
    store_priv_t *p = xcalloc(1, sizeof(*p));
    if (pthread_key_create(&p->key, conn_destroy) != 0) {
        snprintf(err, errlen, "cannot create thread key");
        free(p);
        free(s->url);
        free(s);
        return NULL;
    }
    p->counts = store_counts_new();
    p->pages = store_pages_new();
    s->priv = p;
    if (s->ops->open)
        s->ops->open(s);
    return s;
}

store_conn_t *store_conn(store_t *s, char *err, size_t errlen)
{
    store_priv_t *p = s->priv;
    store_conn_t *c = pthread_getspecific(p->key);
    if (c)
        return c;
    c = s->ops->connect(s, err, errlen);
    if (c)
        pthread_setspecific(p->key, c);
    return c;
}

void store_close(store_t *s)
{
    if (!s)
        return;
    store_priv_t *p = s->priv;
    store_conn_t *c = pthread_getspecific(p->key);
    if (c) {
        pthread_setspecific(p->key, NULL);
        c->ops->disconnect(c);
    }
    pthread_key_delete(p->key);
    store_counts_free(p->counts);
    store_pages_free(p->pages);
    free(p);
    if (s->ops->close)
        s->ops->close(s);
    free(s->url);
    free(s);
}

store_counts_t *store_counts(store_t *s)
{
    return ((store_priv_t *)s->priv)->counts;
}

store_pages_t *store_pages(store_t *s)
{
    return ((store_priv_t *)s->priv)->pages;
}

const char *store_rc_name(int rc)
{
    switch (rc) {
    case STORE_OK: return "ok";
    case STORE_NOTFOUND: return "not found";
    case STORE_STALE: return "stale lease";
    case STORE_CONFLICT: return "conflict";
    case STORE_CHANGED: return "changed since asked";
    case STORE_UNAVAILABLE: return "database unavailable";
    default: return "database error";
    }
}

bool store_docs_finished(record_t *const *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i]->kind != KIND_DOC || !recs[i]->result)
            return false;
    return true;
}

static const char *const state_names[] = {"queued", "generating", "completed", "failed"};

const char *rec_state_name(rec_state_t s)
{
    return (unsigned)s < ARRAY_LEN(state_names) ? state_names[s] : "failed";
}

rec_state_t rec_state_parse(const char *name)
{
    for (size_t i = 0; name && i < ARRAY_LEN(state_names); i++)
        if (strcmp(name, state_names[i]) == 0)
            return (rec_state_t)i;
    return REC_FAILED;
}

void store_record_inserted(record_t *rec, rec_state_t state, int64_t now)
{
    rec->state = state;
    rec->error = NULL;
    rec->created_us = rec->updated_us = now;
    store_doc_defaults(rec);
    rec->revision = state == REC_COMPLETED ? 1 : 0;
    rec->event_seq = 1; /* the column's default */
    if (state == REC_QUEUED) {
        rec->result = NULL;
        rec->words = 0;
        rec->prompt_tokens = rec->completion_tokens = -1;
        rec->truncated = false;
        rec->media_key = NULL;
        rec->revised_prompt = NULL;
    }
}

/* ---- wrappers ---- */

int store_record_get(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                     record_probe_fn probe, void *probe_arg, arena_t *a, record_t *out)
{
    if (probe && c->ops->record_get_probed)
        return c->ops->record_get_probed(c, kind, user_id, id, probe, probe_arg, a, out);
    return c->ops->record_get(c, kind, user_id, id, a, out);
}

int store_record_list(store_conn_t *c, rec_kind_t kind, list_query_t *q, arena_t *a,
                      record_list_t *out)
{
    if (!c->ops->list_probes) {
        q->probe = NULL;
        q->probe_arg = NULL;
    }
    return c->ops->record_list(c, kind, q, a, out);
}

int store_record_create(store_conn_t *c, record_t *rec, idem_keep_t *keep, int64_t *job_id)
{
    return c->ops->record_create(c, rec, keep, job_id);
}

int store_keep_answer(store_conn_t *c, idem_keep_t *k, const record_t *rec, int64_t id,
                      rec_state_t state, int64_t now)
{
    if (!k)
        return STORE_OK;
    record_t r = *rec;
    r.id = id;
    store_record_inserted(&r, state, now);
    return store_keep_record(c, k, &r);
}

int store_record_update(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        const record_patch_t *p, arena_t *a, record_t *out)
{
    if (!p->name && !p->result && p->favorite < 0 && !p->set_tags)
        return c->ops->record_get(c, kind, user_id, id, a, out);
    return c->ops->record_update(c, kind, user_id, id, p, a, out);
}

/* ---- tags, bulk actions, drafts (API.md §23, §24) ---- */

int store_tags_list(store_conn_t *c, int64_t user_id, arena_t *a, tag_count_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    return c->ops->tags_list(c, user_id, a, out, n);
}

int store_record_bulk(store_conn_t *c, rec_kind_t kind, int64_t user_id, const int64_t *ids,
                      size_t n, bulk_action_t action, const char *const *tags, int ntags,
                      arena_t *a, int64_t **done, size_t *ndone)
{
    *done = NULL;
    *ndone = 0;
    return c->ops->record_bulk(c, kind, user_id, ids, n, action, tags, ntags, a, done, ndone);
}

int store_draft_put(store_conn_t *c, int64_t user_id, int64_t id, const char *result,
                    int64_t base, arena_t *a, draft_t *out)
{
    return c->ops->draft_put(c, user_id, id, result, base, a, out);
}

int store_draft_get(store_conn_t *c, int64_t user_id, int64_t id, arena_t *a, draft_t *out)
{
    return c->ops->draft_get(c, user_id, id, a, out);
}

int store_draft_delete(store_conn_t *c, int64_t user_id, int64_t id)
{
    return c->ops->draft_delete(c, user_id, id);
}

int store_record_delete(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        arena_t *a, const char ***keys, size_t *n)
{
    *keys = NULL;
    *n = 0;
    return c->ops->record_delete(c, kind, user_id, id, a, keys, n);
}

int store_record_delete_many(store_conn_t *c, rec_kind_t kind, int64_t user_id,
                             const int64_t *ids, size_t n, arena_t *a, const char ***keys,
                             size_t *nkeys, int64_t **done, size_t *ndone)
{
    *keys = NULL;
    *nkeys = 0;
    *done = NULL;
    *ndone = 0;
    return c->ops->record_delete_many(c, kind, user_id, ids, n, a, keys, nkeys, done, ndone);
}

/* ---- one wrapper per op (store.h) ---- */

int store_idem_abort(store_conn_t *c, int64_t user_id, const char *key, const char *token)
{
    return c->ops->idem_abort(c, user_id, key, token);
}

int store_idem_begin(store_conn_t *c, int64_t user_id, const char *key, const char *digest,
                     int64_t now_us, int64_t lease_us, int64_t ttl_us, bool prune, arena_t *a,
                     idem_t *out)
{
    return c->ops->idem_begin(c, user_id, key, digest, now_us, lease_us, ttl_us, prune, a, out);
}

int store_idem_finish(store_conn_t *c, int64_t user_id, const char *key, const char *token,
                      int status, const char *location, const char *body, int64_t expires_us)
{
    return c->ops->idem_finish(c, user_id, key, token, status, location, body, expires_us);
}

int store_idem_held(store_conn_t *c, int64_t user_id, const char *key, int64_t now_us,
                    bool *held)
{
    return c->ops->idem_held(c, user_id, key, now_us, held);
}

int store_job_claim(store_conn_t *c, double lease_s, const int64_t *busy, size_t nbusy,
                    arena_t *a, job_t *out)
{
    buf_t ids; /* a JSON array, read by both backends' SQL */
    buf_init(&ids);
    for (size_t i = 0; i < nbusy; i++)
        buf_printf(&ids, "%c%lld", i ? ',' : '[', (long long)busy[i]);
    if (nbusy)
        buf_putc(&ids, ']');
    int rc = c->ops->job_claim(c, lease_s, nbusy ? buf_cstr(&ids) : NULL, a, out);
    buf_free(&ids);
    return rc;
}

int store_job_complete(store_conn_t *c, const job_t *job, const char *result, int64_t words,
                       const char *media_key, const char *revised_prompt, arena_t *a,
                       record_t *out)
{
    return c->ops->job_complete(c, job, result, words, media_key, revised_prompt, a, out);
}

int store_job_fail(store_conn_t *c, const job_t *job, const char *error)
{
    return c->ops->job_fail(c, job, error);
}

int store_key_auth(store_conn_t *c, const char *hash_hex, const char *period, key_auth_t *out)
{
    return c->ops->key_auth(c, hash_hex, period, out);
}

int store_key_get(store_conn_t *c, int64_t key_id, arena_t *a, key_info_t *out)
{
    return c->ops->key_get(c, key_id, a, out);
}

int store_key_insert(store_conn_t *c, int64_t user_id, const char *hash_hex, const char *prefix,
                     key_scope_t scope, int64_t expires_us, const char *name, int64_t *key_id)
{
    return c->ops->key_insert(c, user_id, hash_hex, prefix, scope, expires_us, name, key_id);
}

int store_key_list(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset, arena_t *a,
                   key_info_t **out, size_t *n, int64_t *total)
{
    return c->ops->key_list(c, user_id, limit, offset, a, out, n, total);
}

int store_key_revoke(store_conn_t *c, int64_t key_id)
{
    return c->ops->key_revoke(c, key_id);
}

int store_media_keys(store_conn_t *c, arena_t *a, const char ***keys, size_t *n)
{
    return c->ops->media_keys(c, a, keys, n);
}

int store_migrate(store_conn_t *c)
{
    return c->ops->migrate(c);
}

int store_ping(store_conn_t *c)
{
    return c->ops->ping(c);
}

int store_rate_gcra(store_conn_t *c, const char *bucket, int64_t now_us, int64_t interval_us,
                    int64_t period_us, bool prune, int64_t *tat_us, bool *allowed)
{
    return c->ops->rate_gcra(c, bucket, now_us, interval_us, period_us, prune, tat_us, allowed);
}

int store_usage_list(store_conn_t *c, const char *period, int64_t user_id, int64_t limit,
                     int64_t offset, arena_t *a, usage_row_t **out, size_t *n, int64_t *total)
{
    return c->ops->usage_list(c, period, user_id, limit, offset, a, out, n, total);
}

int store_quota_hold(store_conn_t *c, const quota_hold_t *h, int64_t *hold_id, int64_t *used)
{
    return c->ops->quota_hold(c, h, hold_id, used);
}

int store_quota_hold_end(store_conn_t *c, int64_t hold_id, int64_t record_id)
{
    return c->ops->quota_hold_end(c, hold_id, record_id);
}

int store_user_create(store_conn_t *c, const char *name, int64_t quota_words,
                      int64_t quota_images, arena_t *a, user_info_t *out)
{
    return c->ops->user_create(c, name, quota_words, quota_images, a, out);
}

int store_user_delete(store_conn_t *c, int64_t id, arena_t *a, user_removed_t *out)
{
    memset(out, 0, sizeof(*out));
    return c->ops->user_delete(c, id, a, out);
}

int store_user_get(store_conn_t *c, int64_t id, const char *name, arena_t *a, user_info_t *out)
{
    return c->ops->user_get(c, id, name, a, out);
}

int store_user_list(store_conn_t *c, int64_t limit, int64_t offset, arena_t *a,
                    user_info_t **out, size_t *n, int64_t *total)
{
    return c->ops->user_list(c, limit, offset, a, out, n, total);
}

int store_user_update(store_conn_t *c, int64_t id, const user_patch_t *p, arena_t *a,
                      user_info_t *out)
{
    return c->ops->user_update(c, id, p, a, out);
}

int store_user_ensure(store_conn_t *c, const char *name, int64_t *user_id)
{
    return c->ops->user_ensure(c, name, user_id);
}

void store_set_pooled_url(store_t *s, const char *url)
{
    free(s->pooled_url);
    s->pooled_url = url ? xstrdup(url) : NULL;
}

bool store_has(const store_t *s, store_cap_t cap)
{
    return (s->ops->caps & (unsigned)cap) != 0;
}

const char *store_backend_name(const store_t *s)
{
    return s->ops->name;
}

int store_job_release_all(store_conn_t *c, int64_t *n)
{
    *n = 0;
    return c->ops->job_release_all ? c->ops->job_release_all(c, n) : STORE_OK;
}

int store_docs_create_completed(store_conn_t *c, record_t *const *recs,
                                idem_keep_t *const *keeps, size_t n)
{
    return c->ops->docs_create_completed(c, recs, keeps, n);
}

int store_job_exists(store_conn_t *c, int64_t job_id, bool *exists)
{
    return c->ops->job_exists(c, job_id, exists);
}

int store_job_counts(store_conn_t *c, int64_t *queued, int64_t *running)
{
    return c->ops->job_counts(c, queued, running);
}

/* ---- revisions (API.md §16) ---- */

static const char *const source_names[] = {"generation", "regeneration", "action", "edit",
                                           "restore"};

const char *rev_source_name(rev_source_t s)
{
    return (unsigned)s < ARRAY_LEN(source_names) ? source_names[s] : "generation";
}

void store_doc_defaults(record_t *rec)
{
    if (rec->kind != KIND_DOC)
        return;
    if (!rec->tone)
        rec->tone = "neutral";
    if (!rec->language)
        rec->language = "en";
    if (!rec->length)
        rec->length = "medium";
}

int store_record_regenerate(store_conn_t *c, const record_t *in, const rec_action_t *act,
                            idem_keep_t *keep, arena_t *a, record_t *out, int64_t *job_id)
{
    record_t r = *in;
    store_doc_defaults(&r);
    return c->ops->record_regenerate(c, &r, act, keep, a, out, job_id);
}

int store_record_regenerated(store_conn_t *c, const record_t *in, int cap, idem_keep_t *keep,
                             arena_t *a, record_t *out)
{
    record_t r = *in;
    store_doc_defaults(&r);
    return c->ops->record_regenerated(c, &r, cap, keep, a, out);
}

int store_revision_list(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                        int per_page, int64_t page, arena_t *a, revision_t **items, size_t *n,
                        int64_t *total)
{
    *items = NULL;
    *n = 0;
    *total = 0;
    return c->ops->revision_list(c, kind, user_id, id, per_page, page, a, items, n, total);
}

int store_revision_get(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                       int64_t number, arena_t *a, revision_t *out)
{
    return c->ops->revision_get(c, kind, user_id, id, number, a, out);
}

int store_revision_restore(store_conn_t *c, rec_kind_t kind, int64_t user_id, int64_t id,
                           int64_t number, const char *media_key, arena_t *a, record_t *out)
{
    return c->ops->revision_restore(c, kind, user_id, id, number, media_key, a, out);
}

int store_revision_trim(store_conn_t *c, rec_kind_t kind, int64_t id, int keep, arena_t *a,
                        const char ***keys, size_t *n)
{
    *keys = NULL;
    *n = 0;
    return c->ops->revision_trim(c, kind, id, keep, a, keys, n);
}

rev_source_t store_job_source(const job_t *job)
{
    return job->action ? SRC_ACTION : job->regen ? SRC_REGENERATION : SRC_GENERATION;
}

void store_job_inputs(job_t *job, const record_t *in)
{
    record_t *r = &job->rec;
    if (r->kind == KIND_DOC) {
        r->prompt = in->prompt;
        r->creativity = in->creativity;
        r->template_id = in->template_id;
        r->tone = in->tone;
        r->language = in->language;
        r->length = in->length;
    } else {
        r->description = in->description;
        r->resolution = in->resolution;
        r->style = in->style;
    }
}

/* Keeps k's answer rendered for rec as it stands (inside the caller's transaction). */
int store_keep_record(store_conn_t *c, idem_keep_t *k, const record_t *rec)
{
    if (!k)
        return STORE_OK;
    k->stored = false;
    buf_t body, location;
    buf_init(&body);
    buf_init(&location);
    k->render(k->arg, rec, k->status, &body, &location);
    int rc = c->ops->idem_keep(c, k, buf_cstr(&location), buf_cstr(&body));
    buf_free(&body);
    buf_free(&location);
    if (rc == STORE_OK)
        k->stored = true;
    else if (rc == STORE_STALE) /* its lease ran out and another request took the key */
        rc = STORE_OK;
    return rc;
}

void store_read_begin(store_conn_t *c)
{
    if (c->ops->read_begin)
        c->ops->read_begin(c);
}

void store_read_end(store_conn_t *c)
{
    if (c->ops->read_end)
        c->ops->read_end(c);
}

int store_job_renew(store_conn_t *c, int64_t job_id, const char *token, double lease_s)
{
    return c->ops->job_renew(c, job_id, token, lease_s);
}

int store_job_release(store_conn_t *c, int64_t job_id, const char *token)
{
    return c->ops->job_renew(c, job_id, token, 0);
}

bool store_shared(const store_t *s)
{
    return store_has(s, STORE_CAP_SHARED);
}

bool store_probes(const store_t *s)
{
    return s->ops->list_probes;
}

int store_job_progress(store_conn_t *c, int64_t job_id, const char *token, int64_t start,
                       const char *pieces, int64_t seq, const char *payload)
{
    return c->ops->job_progress
               ? c->ops->job_progress(c, job_id, token, start, pieces, seq, payload)
               : STORE_OK;
}

int store_record_partial(store_conn_t *c, rec_kind_t kind, int64_t id, arena_t *a,
                         const char **text, int64_t *seq)
{
    *text = NULL;
    *seq = 0;
    return c->ops->record_partial ? c->ops->record_partial(c, kind, id, a, text, seq) : STORE_OK;
}

int store_notify(store_conn_t *c, const char *payload)
{
    return c->ops->notify ? c->ops->notify(c, payload) : STORE_OK;
}

store_listener_t *store_listen(store_t *s, void (*fn)(void *arg, const char *payload),
                               void (*connected)(void *arg), void *arg)
{
    return s->ops->listen_start ? s->ops->listen_start(s, fn, connected, arg) : NULL;
}

void store_listen_stop(store_t *s, store_listener_t *l)
{
    if (l && s->ops->listen_stop)
        s->ops->listen_stop(l);
}

void record_copy(arena_t *a, record_t *dst, const record_t *src)
{
    *dst = *src;
#define DUP(f) dst->f = src->f ? arena_strdup(a, src->f) : NULL
    DUP(name);
    DUP(error);
    DUP(prompt);
    DUP(result);
    DUP(description);
    DUP(resolution);
    DUP(style);
    DUP(media_key);
    DUP(revised_prompt);
    DUP(tone);
    DUP(language);
    DUP(length);
    DUP(template_name);
    DUP(tags_json);
#undef DUP
    if (src->tags && src->ntags > 0) { /* every pointer of the copy into its own arena */
        const char **t = arena_alloc(a, (size_t)src->ntags * sizeof(*t));
        for (int i = 0; i < src->ntags; i++)
            t[i] = arena_strdup(a, src->tags[i]);
        dst->tags = t;
    }
}

/* ---- users' own templates (API.md §18) ---- */

int store_template_create(store_conn_t *c, int64_t user_id, const char *name,
                          const char *description, const char *instruction, int max,
                          arena_t *a, custom_template_t *out)
{
    return c->ops->template_create(c, user_id, name, description, instruction, max, a, out);
}

int store_template_get(store_conn_t *c, int64_t user_id, int64_t id, bool with_deleted,
                       arena_t *a, custom_template_t *out)
{
    if (id < CUSTOM_TEMPLATE_MIN_ID)
        return STORE_NOTFOUND; /* the 52 are not rows */
    return c->ops->template_get(c, user_id, id, with_deleted, a, out);
}

int store_template_list(store_conn_t *c, int64_t user_id, arena_t *a, custom_template_t **out,
                        size_t *n)
{
    *out = NULL;
    *n = 0;
    return c->ops->template_list(c, user_id, a, out, n);
}

int store_template_update(store_conn_t *c, int64_t user_id, int64_t id,
                          const template_patch_t *p, arena_t *a, custom_template_t *out)
{
    if (id < CUSTOM_TEMPLATE_MIN_ID)
        return STORE_NOTFOUND;
    if (!p->name && !p->description && !p->instruction)
        return c->ops->template_get(c, user_id, id, false, a, out);
    return c->ops->template_update(c, user_id, id, p, a, out);
}

int store_template_delete(store_conn_t *c, int64_t user_id, int64_t id)
{
    if (id < CUSTOM_TEMPLATE_MIN_ID)
        return STORE_NOTFOUND;
    return c->ops->template_delete(c, user_id, id);
}

/* ---- sign-in (API.md §21) ---- */

int store_user_secret(store_conn_t *c, const char *name, arena_t *a, int64_t *user_id,
                      const char **hash)
{
    return c->ops->user_secret(c, name, a, user_id, hash);
}

int store_user_password(store_conn_t *c, int64_t user_id, const char *hash, int64_t keep,
                        int64_t *ended)
{
    return c->ops->user_password(c, user_id, hash, keep, ended);
}

int store_session_insert(store_conn_t *c, const session_new_t *s, int64_t *id)
{
    return c->ops->session_insert(c, s, id);
}

int store_session_auth(store_conn_t *c, const char *hash_hex, const char *period,
                       session_auth_t *out)
{
    return c->ops->session_auth(c, hash_hex, period, out);
}

int store_session_touch(store_conn_t *c, int64_t id, int64_t now_us)
{
    return c->ops->session_touch(c, id, now_us);
}

int store_session_end(store_conn_t *c, int64_t user_id, int64_t id, int64_t keep,
                      int64_t *ended)
{
    return c->ops->session_end(c, user_id, id, keep, ended);
}

int store_session_list(store_conn_t *c, int64_t user_id, int64_t limit, int64_t offset,
                       arena_t *a, session_info_t **out, size_t *n, int64_t *total)
{
    return c->ops->session_list(c, user_id, limit, offset, a, out, n, total);
}

int store_signin_failures(store_conn_t *c, const char *bucket, int64_t minute, bool add,
                          int64_t *count)
{
    return c->ops->signin_failures(c, bucket, minute, add, count);
}

int store_oidc_flow_put(store_conn_t *c, const oidc_flow_t *f)
{
    return c->ops->oidc_flow_put(c, f);
}

int store_oidc_flow_take(store_conn_t *c, const char *state_hash, int64_t now_us, arena_t *a,
                         oidc_flow_t *out)
{
    return c->ops->oidc_flow_take(c, state_hash, now_us, a, out);
}

int store_user_oidc_find(store_conn_t *c, const char *iss, const char *sub, int64_t *user_id)
{
    return c->ops->user_oidc_find(c, iss, sub, user_id);
}

int store_user_oidc_link(store_conn_t *c, int64_t id, const char *iss, const char *sub)
{
    return c->ops->user_oidc_link(c, id, iss, sub);
}
