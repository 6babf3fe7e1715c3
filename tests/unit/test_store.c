/* test_store.c — the backend-generic store suite.
 *
 * run_suite(url) drives every operation of store.h through store_open / store_conn /
 * ops, on a database it assumes fresh. main() runs it on a new temporary SQLite file,
 * and on a new uniquely named PostgreSQL database that it creates and drops, with the
 * admin URL in INKWELL_TEST_PG_URL (postgres://user@host:port/postgres; tests/run.sh
 * gives it). Without that URL the PostgreSQL half fails: it is never skipped. */
#include "core/log.h"
#include "core/unicode.h"
#include "store/store_copy.h"
#include "store/sqlite_int.h" /* the search filters' SQL (sqlite_filter.c) */
#include "store/store_int.h" /* the suite calls each op of both backends */
#include "store/writer.h"
#include "test.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_CLAIM_THREADS 4
#define N_CLAIM_JOBS 200

typedef struct {
    store_t *s;
    store_conn_t *c;
    const store_ops_t *ops;
    arena_t a;
    int64_t alice, bob;
} ctx_t;

/* record_delete, with the first media key it gave (or NULL). */
static int delete_one(const store_ops_t *ops, store_conn_t *c, rec_kind_t kind, int64_t uid,
                      int64_t id, arena_t *a, const char **key)
{
    const char **keys = NULL;
    size_t n = 0;
    int rc = ops->record_delete(c, kind, uid, id, a, &keys, &n);
    *key = n ? keys[0] : NULL;
    return rc;
}

static int64_t user(ctx_t *t, const char *name)
{
    int64_t id = 0;
    CHECK_INT(t->ops->user_ensure(t->c, name, &id), STORE_OK);
    return id;
}

/* Creates a document; favorite is set with an update (create leaves it false). */
static int64_t make_doc(ctx_t *t, int64_t uid, const char *name, int template_id, int favorite)
{
    record_t r = {.kind = KIND_DOC, .user_id = uid, .name = name, .prompt = "a prompt",
                  .creativity = 0.5, .template_id = template_id};
    int64_t job = 0;
    CHECK_INT(t->ops->record_create(t->c, &r, NULL, &job), STORE_OK);
    if (favorite > 0) {
        record_patch_t p = {.words = -1, .favorite = 1};
        record_t out = {0};
        CHECK_INT(t->ops->record_update(t->c, KIND_DOC, uid, r.id, &p, &t->a, &out), STORE_OK);
    }
    return r.id;
}

static int64_t make_img(ctx_t *t, int64_t uid, const char *name, const char *resolution,
                        const char *style, int favorite)
{
    record_t r = {.kind = KIND_IMG, .user_id = uid, .name = name, .description = "a picture",
                  .resolution = resolution, .style = style};
    int64_t job = 0;
    CHECK_INT(t->ops->record_create(t->c, &r, NULL, &job), STORE_OK);
    if (favorite > 0) {
        record_patch_t p = {.words = -1, .favorite = 1};
        record_t out = {0};
        CHECK_INT(t->ops->record_update(t->c, KIND_IMG, uid, r.id, &p, &t->a, &out), STORE_OK);
    }
    return r.id;
}

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static list_query_t query(int64_t uid)
{
    return (list_query_t){.user_id = uid, .favorite = -1, .per_page = 100, .page = 1};
}

/* Checks that the list gives exactly the names in expect (NULL-terminated), in order,
 * with total equal to their number. */
static void expect_names(ctx_t *t, rec_kind_t kind, const list_query_t *q,
                         const char *const *expect, int line)
{
    record_list_t l = {0};
    int rc = t->ops->record_list(t->c, kind, q, &t->a, &l);
    CHECK_MSG(rc == STORE_OK, "line %d: list rc %d", line, rc);
    size_t n = 0;
    while (expect[n])
        n++;
    CHECK_MSG(l.n == n && l.total == (int64_t)n, "line %d: %zu items, total %lld, expected %zu",
              line, l.n, (long long)l.total, n);
    for (size_t i = 0; i < n && i < l.n; i++) {
        CHECK_MSG(str_eq(l.items[i].name, expect[i]), "line %d: item %zu \"%s\" != \"%s\"",
                  line, i, l.items[i].name, expect[i]);
        CHECK_MSG(l.items[i].user_id == q->user_id && l.items[i].kind == kind,
                  "line %d: item of another user or kind", line);
    }
}
#define EXPECT_NAMES(t, kind, q, ...)                                                              \
    do {                                                                                           \
        static const char *const e_[] = {__VA_ARGS__, NULL};                                       \
        expect_names((t), (kind), (q), e_, __LINE__);                                              \
    } while (0)
#define EXPECT_NONE(t, kind, q)                                                                    \
    do {                                                                                           \
        static const char *const e_[] = {NULL};                                                    \
        expect_names((t), (kind), (q), e_, __LINE__);                                              \
    } while (0)

/* Checks that the list gives exactly the ids in expect, in order. */
static void expect_ids(ctx_t *t, rec_kind_t kind, const list_query_t *q, const int64_t *expect,
                       size_t n, int64_t total, int line)
{
    record_list_t l = {0};
    int rc = t->ops->record_list(t->c, kind, q, &t->a, &l);
    CHECK_MSG(rc == STORE_OK, "line %d: list rc %d", line, rc);
    CHECK_MSG(l.n == n && l.total == total, "line %d: %zu items, total %lld, expected %zu, %lld",
              line, l.n, (long long)l.total, n, (long long)total);
    for (size_t i = 0; i < n && i < l.n; i++)
        CHECK_MSG(l.items[i].id == expect[i], "line %d: item %zu id %lld != %lld", line, i,
                  (long long)l.items[i].id, (long long)expect[i]);
}

/* ---- schema ---------------------------------------------------------------------------- */

typedef struct {
    store_t *s;
    int rc;
} migrate_arg_t;

static void *migrate_thread(void *p)
{
    migrate_arg_t *m = p;
    char err[256];
    store_conn_t *c = store_conn(m->s, err, sizeof(err));
    m->rc = c ? c->ops->migrate(c) : -100;
    return NULL;
}

static void test_migrate(ctx_t *t)
{
    /* several connections migrating a fresh database at once, as processes starting
     * together would */
    pthread_t th[4];
    migrate_arg_t args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (migrate_arg_t){.s = t->s, .rc = -99};
        CHECK(pthread_create(&th[i], NULL, migrate_thread, &args[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(args[i].rc, STORE_OK);
    }
    CHECK_INT(t->ops->migrate(t->c), STORE_OK);
    CHECK_INT(t->ops->migrate(t->c), STORE_OK);
    CHECK_INT(t->ops->ping(t->c), STORE_OK);
    /* every table of the schema is copied or skipped by inkwell migrate (store/copy.c):
     * a table added to one backend without a place in that list fails here */
    char err[256] = "";
    CHECK_MSG(store_copy_check(t->c, err, sizeof(err)) == 0, "%s", err);
}

/* ---- users and keys -------------------------------------------------------------------- */

static void test_keys(ctx_t *t)
{
    t->alice = user(t, "alice");
    CHECK(t->alice > 0);
    CHECK_INT(user(t, "alice"), t->alice);
    t->bob = user(t, "bob");
    CHECK(t->bob > 0 && t->bob != t->alice);

    char h1[65], h2[65], h3[65];
    sha256_hex("ink_key_one", 11, h1);
    sha256_hex("ink_key_two", 11, h2);
    sha256_hex("ink_key_unknown", 15, h3);
    int64_t k1 = 0, k2 = 0, k3 = 0;
    key_auth_t ka;
    CHECK_INT(t->ops->key_insert(t->c, t->alice, h1, "ink_aaaaaa", SCOPE_WRITE, 0, NULL, &k1),
              STORE_OK);
    CHECK_INT(t->ops->key_insert(t->c, t->bob, h2, "ink_bbbbbb", SCOPE_READ, 4000000000000000LL,
                                 "laptop", &k2),
              STORE_OK);
    CHECK(k1 > 0 && k2 > k1);
    CHECK_INT(t->ops->key_insert(t->c, t->bob, h1, "ink_aaaaaa", SCOPE_WRITE, 0, "x", &k3),
              STORE_CONFLICT);
    {   /* the name is stored by the insert itself; none given: NULL */
        arena_t ka_a;
        arena_init(&ka_a);
        key_info_t ki;
        CHECK_INT(t->ops->key_get(t->c, k2, &ka_a, &ki), STORE_OK);
        CHECK(ki.name && strcmp(ki.name, "laptop") == 0);
        CHECK_INT(t->ops->key_get(t->c, k1, &ka_a, &ki), STORE_OK);
        CHECK(ki.name == NULL);
        arena_free(&ka_a);
    }

    CHECK_INT(t->ops->key_auth(t->c, h1, "2026-11", &ka), STORE_OK);
    CHECK_INT(ka.user_id, t->alice);
    CHECK_INT(ka.key_id, k1);
    CHECK_INT(ka.scope, SCOPE_WRITE);
    CHECK_INT(ka.expires_us, 0);
    CHECK_INT(ka.quota_words, -1);
    CHECK_INT(t->ops->key_auth(t->c, h2, "2026-11", &ka), STORE_OK);
    CHECK_INT(ka.user_id, t->bob);
    CHECK_INT(ka.key_id, k2);
    CHECK_INT(ka.scope, SCOPE_READ);
    CHECK_INT(ka.expires_us, 4000000000000000LL);
    CHECK_INT(t->ops->key_auth(t->c, h2, NULL, &ka), STORE_OK);
    CHECK_INT(ka.scope, SCOPE_READ);
    CHECK_INT(ka.expires_us, 4000000000000000LL);
    CHECK_INT(t->ops->key_auth(t->c, h3, "2026-11", &ka), STORE_NOTFOUND);
    CHECK_INT(t->ops->key_auth(t->c, h3, NULL, &ka), STORE_NOTFOUND);

    int64_t before = now_us();
    CHECK_INT(t->ops->key_revoke(t->c, k1), STORE_OK);
    CHECK_INT(t->ops->key_auth(t->c, h1, "2026-11", &ka), STORE_NOTFOUND);
    CHECK_INT(t->ops->key_auth(t->c, h1, NULL, &ka), STORE_NOTFOUND);
    CHECK_INT(t->ops->key_revoke(t->c, k2 + 1000), STORE_NOTFOUND);
    CHECK_INT(t->ops->key_auth(t->c, h2, "2026-11", &ka), STORE_OK);

    key_info_t *keys = NULL;
    size_t n = 0;
    int64_t total = 0;
    CHECK_INT(t->ops->key_list(t->c, 0, -1, 0, &t->a, &keys, &n, &total), STORE_OK);
    CHECK_INT(n, 2);
    CHECK_INT(total, 2);
    if (n == 2) {
        CHECK_INT(keys[0].id, k1);
        CHECK_INT(keys[0].user_id, t->alice);
        CHECK_STR(keys[0].user_name, "alice");
        CHECK_STR(keys[0].prefix, "ink_aaaaaa");
        CHECK(keys[0].created_us > 0 && keys[0].created_us <= before);
        CHECK(keys[0].revoked_us >= before && keys[0].revoked_us <= now_us());
        CHECK_INT(keys[1].id, k2);
        CHECK_STR(keys[1].user_name, "bob");
        CHECK_STR(keys[1].prefix, "ink_bbbbbb");
        CHECK_INT(keys[1].revoked_us, 0);
        CHECK_INT(keys[1].scope, SCOPE_READ);
    }
    CHECK_INT(t->ops->key_list(t->c, t->bob, 10, 0, &t->a, &keys, &n, &total), STORE_OK);
    CHECK_INT(n, 1);
    CHECK_INT(total, 1);
}

/* Users, quotas and usage (§19): the upsert adds, periods are apart, quotas read with
 * the key. */
static void test_users_usage(ctx_t *t)
{
    user_info_t u, u2;
    CHECK_INT(t->ops->user_create(t->c, "carol", 100, -1, &t->a, &u), STORE_OK);
    CHECK_INT(u.quota_words, 100);
    CHECK_INT(u.quota_images, -1);
    CHECK_INT(t->ops->user_create(t->c, "carol", -1, -1, &t->a, &u2), STORE_CONFLICT);
    CHECK_INT(t->ops->user_get(t->c, 0, "carol", &t->a, &u2), STORE_OK);
    CHECK_INT(u2.id, u.id);
    user_patch_t p = {.set_images = true, .quota_images = 3};
    CHECK_INT(t->ops->user_update(t->c, u.id, &p, &t->a, &u2), STORE_OK);
    CHECK_INT(u2.quota_words, 100);
    CHECK_INT(u2.quota_images, 3);
    p = (user_patch_t){.name = "alice"};
    CHECK_INT(t->ops->user_update(t->c, u.id, &p, &t->a, &u2), STORE_CONFLICT);
    usage_counts_t add = {7, 1, 11, 13};
    CHECK_INT(t->ops->usage_add(t->c, u.id, "2026-11", &add), STORE_OK);
    CHECK_INT(t->ops->usage_add(t->c, u.id, "2026-11", &add), STORE_OK);
    CHECK_INT(t->ops->usage_add(t->c, u.id, "2026-12", &add), STORE_OK);
    usage_row_t *rows;
    size_t n;
    int64_t total;
    CHECK_INT(t->ops->usage_list(t->c, "2026-11", u.id, 1, 0, &t->a, &rows, &n, &total), STORE_OK);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(rows[0].used.words, 14);
        CHECK_INT(rows[0].used.images, 2);
        CHECK_INT(rows[0].used.prompt_tokens, 22);
        CHECK_INT(rows[0].used.completion_tokens, 26);
        CHECK_INT(rows[0].user.quota_images, 3);
    }
    CHECK_INT(t->ops->usage_list(t->c, "2026-10", 0, -1, 0, &t->a, &rows, &n, &total), STORE_OK);
    CHECK(n >= 3 && (int64_t)n == total);
    for (size_t i = 0; i < n; i++)
        CHECK_INT(rows[i].used.words, 0);
    char h[65];
    sha256_hex("ink_key_carol", 13, h);
    int64_t kid;
    key_auth_t ka;
    CHECK_INT(t->ops->key_insert(t->c, u.id, h, "ink_cccccc", SCOPE_ADMIN, 0, NULL, &kid), STORE_OK);
    CHECK_INT(t->ops->key_auth(t->c, h, "2026-12", &ka), STORE_OK);
    CHECK_INT(ka.scope, SCOPE_ADMIN);
    CHECK_INT(ka.used.words, 7);
    CHECK_INT(ka.used.images, 1);
    CHECK_INT(ka.quota_words, 100);
    /* without a period: the key alone, no quota and nothing used */
    CHECK_INT(t->ops->key_auth(t->c, h, NULL, &ka), STORE_OK);
    CHECK_INT(ka.user_id, u.id);
    CHECK_INT(ka.key_id, kid);
    CHECK_INT(ka.scope, SCOPE_ADMIN);
    CHECK_INT(ka.quota_words, -1);
    CHECK_INT(ka.quota_images, -1);
    CHECK_INT(ka.used.words, 0);
    CHECK_INT(ka.used.images, 0);
    user_removed_t gone = {0};
    CHECK_INT(t->ops->user_delete(t->c, u.id, &t->a, &gone), STORE_OK);
    CHECK_INT(gone.n_keys, 0);
    CHECK_INT(gone.n_records, 0);
    CHECK_INT(t->ops->user_get(t->c, u.id, NULL, &t->a, &u2), STORE_NOTFOUND);
    CHECK_INT(t->ops->key_auth(t->c, h, "2026-12", &ka), STORE_NOTFOUND);
    CHECK_INT(t->ops->key_auth(t->c, h, NULL, &ka), STORE_NOTFOUND);
    CHECK_INT(t->ops->user_delete(t->c, u.id, &t->a, &gone), STORE_NOTFOUND);
}

/* ---- users' own templates (API.md §18) -------------------------------------------------- */

static void test_templates(ctx_t *t)
{
    custom_template_t a, b, g;
    CHECK_INT(store_template_create(t->c, t->alice, "Haiku", "Writes haiku.", "You write haiku.",
                                    2, &t->a, &a), STORE_OK);
    CHECK(a.id >= CUSTOM_TEMPLATE_MIN_ID);
    CHECK_STR(a.name, "Haiku");
    CHECK(!a.deleted && a.created_us > 0 && a.updated_us == a.created_us);
    CHECK_INT(store_template_create(t->c, t->alice, "Ode", "Writes odes.", "You write odes.", 2,
                                    &t->a, &b), STORE_OK);
    CHECK(b.id > a.id);
    /* the cap counts the user's templates, not deleted ones */
    CHECK_INT(store_template_create(t->c, t->alice, "Third", "d", "i", 2, &t->a, &g),
              STORE_CONFLICT);
    CHECK_INT(store_template_create(t->c, t->bob, "Bob's", "d", "i", 2, &t->a, &g), STORE_OK);
    /* another user's is missing; the 52 are not rows */
    CHECK_INT(store_template_get(t->c, t->bob, a.id, true, &t->a, &g), STORE_NOTFOUND);
    CHECK_INT(store_template_get(t->c, t->alice, 6, true, &t->a, &g), STORE_NOTFOUND);
    CHECK_INT(store_template_get(t->c, t->alice, a.id, false, &t->a, &g), STORE_OK);
    CHECK_STR(g.instruction, "You write haiku.");
    custom_template_t *v;
    size_t n;
    CHECK_INT(store_template_list(t->c, t->alice, &t->a, &v, &n), STORE_OK);
    CHECK_INT(n, 2);
    if (n == 2)
        CHECK(v[0].id == a.id && v[1].id == b.id);
    /* a rename moves the updated_us of the user's documents with the template forward */
    record_t r = {.kind = KIND_DOC, .user_id = t->alice, .name = "tpl doc", .prompt = "p",
                  .creativity = 0.5, .template_id = (int)a.id};
    int64_t job;
    CHECK_INT(t->ops->record_create(t->c, &r, NULL, &job), STORE_OK);
    record_t before, after;
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &before), STORE_OK);
    template_patch_t p = {.description = "Changed."};
    CHECK_INT(store_template_update(t->c, t->alice, a.id, &p, &t->a, &g), STORE_OK);
    CHECK_STR(g.description, "Changed.");
    CHECK_STR(g.name, "Haiku");
    CHECK(g.updated_us > a.updated_us);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &after), STORE_OK);
    CHECK(after.updated_us == before.updated_us); /* no new name: the rendering stands */
    p = (template_patch_t){.name = "Haiku II"};
    CHECK_INT(store_template_update(t->c, t->alice, a.id, &p, &t->a, &g), STORE_OK);
    CHECK_STR(g.name, "Haiku II");
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &after), STORE_OK);
    CHECK(after.updated_us > before.updated_us);
    CHECK_INT(store_template_update(t->c, t->bob, a.id, &p, &t->a, &g), STORE_NOTFOUND);
    /* delete: kept as a row for its documents' name, gone for everything else */
    CHECK_INT(store_template_delete(t->c, t->bob, a.id), STORE_NOTFOUND);
    CHECK_INT(store_template_delete(t->c, t->alice, a.id), STORE_OK);
    CHECK_INT(store_template_delete(t->c, t->alice, a.id), STORE_NOTFOUND);
    CHECK_INT(store_template_get(t->c, t->alice, a.id, false, &t->a, &g), STORE_NOTFOUND);
    CHECK_INT(store_template_get(t->c, t->alice, a.id, true, &t->a, &g), STORE_OK);
    CHECK(g.deleted);
    CHECK_STR(g.name, "Haiku II");
    CHECK_INT(store_template_update(t->c, t->alice, a.id, &p, &t->a, &g), STORE_NOTFOUND);
    CHECK_INT(store_template_list(t->c, t->alice, &t->a, &v, &n), STORE_OK);
    CHECK_INT(n, 1);
    CHECK_INT(store_template_create(t->c, t->alice, "Third", "d", "i", 2, &t->a, &g), STORE_OK);
    const char **media;
    CHECK_INT(t->ops->record_delete(t->c, KIND_DOC, t->alice, r.id, &t->a, &media, &n), STORE_OK);
    /* a user with templates can be deleted */
    user_info_t u;
    CHECK_INT(t->ops->user_create(t->c, "tpl-owner", -1, -1, &t->a, &u), STORE_OK);
    CHECK_INT(store_template_create(t->c, u.id, "Mine", "d", "i", 5, &t->a, &g), STORE_OK);
    user_removed_t gone = {0};
    CHECK_INT(t->ops->user_delete(t->c, u.id, &t->a, &gone), STORE_OK);
    CHECK_INT(store_template_get(t->c, u.id, g.id, true, &t->a, &g), STORE_NOTFOUND);
}

/* ---- records --------------------------------------------------------------------------- */

/* A probe of record_get_probed: answers *(int64_t *)arg == the row's version. */
static bool probe_holds(void *arg, rec_kind_t kind, int64_t id, int64_t updated_us)
{
    (void)kind;
    (void)id;
    return *(int64_t *)arg == updated_us;
}

/* A probed get: the version the caller holds gives the row's key and version alone;
 * another version, the whole row; another user's, NOTFOUND either way. */
static void check_probed(ctx_t *t, const record_t *r)
{
    record_t g;
    int64_t held = r->updated_us;
    CHECK_INT(t->ops->record_get_probed(t->c, r->kind, r->user_id, r->id, probe_holds, &held,
                                        &t->a, &g),
              STORE_OK);
    CHECK(g.probed && g.id == r->id && g.kind == r->kind && g.updated_us == r->updated_us);
    CHECK(g.name == NULL);
    held = r->updated_us - 1;
    CHECK_INT(t->ops->record_get_probed(t->c, r->kind, r->user_id, r->id, probe_holds, &held,
                                        &t->a, &g),
              STORE_OK);
    CHECK(!g.probed && g.id == r->id && g.updated_us == r->updated_us);
    CHECK_STR(g.name, r->name);
    CHECK_INT(t->ops->record_get_probed(t->c, r->kind, r->user_id + 1000, r->id, probe_holds,
                                        &held, &t->a, &g),
              STORE_NOTFOUND);
}

static void test_documents(ctx_t *t)
{
    record_t r = {.kind = KIND_DOC, .user_id = t->alice, .name = "First doc",
                  .prompt = "Write about owls", .creativity = 0.75, .template_id = 3};
    int64_t job = 0, t0 = now_us();
    CHECK_INT(t->ops->record_create(t->c, &r, NULL, &job), STORE_OK);
    int64_t t1 = now_us();
    CHECK(r.id > 0 && job > 0);
    CHECK_STR(rec_state_name(r.state), "queued");
    CHECK(r.created_us >= t0 && r.created_us <= t1);
    CHECK_INT(r.updated_us, r.created_us);
    check_probed(t, &r);

    record_t g = {0};
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &g), STORE_OK);
    CHECK_INT(g.kind, KIND_DOC);
    CHECK_INT(g.id, r.id);
    CHECK_INT(g.user_id, t->alice);
    CHECK_STR(g.name, "First doc");
    CHECK_STR(g.prompt, "Write about owls");
    CHECK(g.creativity == 0.75);
    CHECK_INT(g.template_id, 3);
    CHECK_STR(rec_state_name(g.state), "queued");
    CHECK(g.result == NULL && g.error == NULL && !g.favorite);
    CHECK_INT(g.words, 0);
    CHECK_INT(g.created_us, r.created_us);
    CHECK_INT(g.updated_us, r.updated_us);

    sleep_ms(3);
    record_patch_t p = {.name = "Renamed", .result = "one two three", .words = 3, .favorite = 1};
    record_t u = {0};
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, t->alice, r.id, &p, &t->a, &u), STORE_OK);
    CHECK_STR(u.name, "Renamed");
    CHECK_STR(u.result, "one two three");
    CHECK_INT(u.words, 3);
    CHECK(u.favorite);
    CHECK_STR(u.prompt, "Write about owls");
    CHECK_INT(u.created_us, r.created_us);
    CHECK(u.updated_us > r.updated_us);

    sleep_ms(3);
    record_patch_t p2 = {.words = -1, .favorite = 0};
    record_t u2 = {0};
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, t->alice, r.id, &p2, &t->a, &u2), STORE_OK);
    CHECK_STR(u2.name, "Renamed");
    CHECK_STR(u2.result, "one two three");
    CHECK_INT(u2.words, 3);
    CHECK(!u2.favorite);
    CHECK(u2.updated_us > u.updated_us);
    record_patch_t p3 = {.words = -1, .favorite = -1};
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, t->alice, r.id, &p3, &t->a, &u2), STORE_OK);
    CHECK(!u2.favorite);
    CHECK_STR(u2.name, "Renamed");

    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &g), STORE_OK);
    CHECK_STR(g.name, "Renamed");
    CHECK_STR(g.result, "one two three");
    /* the same id is no image */
    CHECK_INT(t->ops->record_get(t->c, KIND_IMG, t->alice, r.id + 100000, &t->a, &g),
              STORE_NOTFOUND);

    const char *key = "unset";
    CHECK_INT(delete_one(t->ops, t->c, KIND_DOC, t->alice, r.id, &t->a, &key), STORE_OK);
    CHECK(key == NULL);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &g), STORE_NOTFOUND);
    CHECK_INT(delete_one(t->ops, t->c, KIND_DOC, t->alice, r.id, &t->a, &key),
              STORE_NOTFOUND);
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, t->alice, r.id, &p, &t->a, &u),
              STORE_NOTFOUND);

    /* ids are never reused, even the highest one after its delete */
    int64_t again = make_doc(t, t->alice, "Second doc", 1, 0);
    CHECK(again > r.id);
}

static void test_images(ctx_t *t)
{
    record_t r = {.kind = KIND_IMG, .user_id = t->alice, .name = "Lighthouse",
                  .description = "a lighthouse at dusk", .resolution = "1792x1024",
                  .style = "vivid"};
    int64_t job = 0, t0 = now_us();
    CHECK_INT(t->ops->record_create(t->c, &r, NULL, &job), STORE_OK);
    CHECK(r.id > 0 && job > 0);
    CHECK_STR(rec_state_name(r.state), "queued");
    CHECK(r.created_us >= t0 && r.updated_us == r.created_us);
    check_probed(t, &r);

    record_t g = {0};
    CHECK_INT(t->ops->record_get(t->c, KIND_IMG, t->alice, r.id, &t->a, &g), STORE_OK);
    CHECK_INT(g.kind, KIND_IMG);
    CHECK_STR(g.name, "Lighthouse");
    CHECK_STR(g.description, "a lighthouse at dusk");
    CHECK_STR(g.resolution, "1792x1024");
    CHECK_STR(g.style, "vivid");
    CHECK_STR(rec_state_name(g.state), "queued");
    CHECK(g.media_key == NULL && g.revised_prompt == NULL && g.error == NULL && !g.favorite);
    CHECK_INT(g.created_us, r.created_us);

    record_t r2 = {.kind = KIND_IMG, .user_id = t->alice, .name = "No style",
                   .description = "plain", .resolution = "1024x1792"};
    CHECK_INT(t->ops->record_create(t->c, &r2, NULL, &job), STORE_OK);
    CHECK(r2.id > r.id);
    CHECK_INT(t->ops->record_get(t->c, KIND_IMG, t->alice, r2.id, &t->a, &g), STORE_OK);
    CHECK(g.style == NULL);
    CHECK_STR(g.resolution, "1024x1792");

    sleep_ms(3);
    record_patch_t p = {.name = "Lighthouse 2", .words = -1, .favorite = 1};
    record_t u = {0};
    CHECK_INT(t->ops->record_update(t->c, KIND_IMG, t->alice, r.id, &p, &t->a, &u), STORE_OK);
    CHECK_STR(u.name, "Lighthouse 2");
    CHECK(u.favorite);
    CHECK_STR(u.description, "a lighthouse at dusk");
    CHECK_STR(u.style, "vivid");
    CHECK_INT(u.created_us, r.created_us);
    CHECK(u.updated_us > r.updated_us);

    const char *key = "unset";
    CHECK_INT(delete_one(t->ops, t->c, KIND_IMG, t->alice, r2.id, &t->a, &key), STORE_OK);
    CHECK(key == NULL);
    CHECK_INT(t->ops->record_get(t->c, KIND_IMG, t->alice, r2.id, &t->a, &g), STORE_NOTFOUND);
}

/* Another user's id is NOTFOUND for get, update and delete, and nothing changes. */
static void check_isolated(ctx_t *t, rec_kind_t kind, int64_t id)
{
    record_t before = {0}, g = {0}, u = {0};
    CHECK_INT(t->ops->record_get(t->c, kind, t->alice, id, &t->a, &before), STORE_OK);
    CHECK_INT(t->ops->record_get(t->c, kind, t->bob, id, &t->a, &g), STORE_NOTFOUND);
    record_patch_t p = {.name = "stolen", .result = "stolen", .words = 1, .favorite = 1};
    CHECK_INT(t->ops->record_update(t->c, kind, t->bob, id, &p, &t->a, &u), STORE_NOTFOUND);
    const char *key = NULL;
    CHECK_INT(delete_one(t->ops, t->c, kind, t->bob, id, &t->a, &key), STORE_NOTFOUND);
    CHECK_INT(t->ops->record_get(t->c, kind, t->alice, id, &t->a, &g), STORE_OK);
    CHECK_STR(g.name, before.name);
    CHECK_INT(g.favorite, before.favorite);
    CHECK_INT(g.updated_us, before.updated_us);
    CHECK(!str_eq(g.result, "stolen"));
}

static void test_isolation(ctx_t *t)
{
    check_isolated(t, KIND_DOC, make_doc(t, t->alice, "private doc", 1, 0));
    check_isolated(t, KIND_IMG, make_img(t, t->alice, "private img", "1024x1024", NULL, 0));
}

/* ---- lists ----------------------------------------------------------------------------- */

static void test_search(ctx_t *t)
{
    int64_t me = user(t, "searcher"), other = user(t, "search-other");
    const char *names[] = {"100% pure", "100 percent", "a_b",         "axb",   "back\\slash",
                           "backxslash", "Hello World", "HELLO there", "ÉCOLE", "école"};
    int64_t ids[ARRAY_LEN(names)];
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        ids[i] = make_doc(t, me, names[i], i == 2 || i == 3 ? 7 : 1, i == 0 || i == 9);
    /* the other user has lookalikes that must never show */
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        make_doc(t, other, names[i], 7, 1);
    record_patch_t p = {.result = "the needle is here", .words = 4, .favorite = -1};
    record_t u = {0};
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, me, ids[1], &p, &t->a, &u), STORE_OK);
    p.result = "NEEDLE again";
    p.words = 2;
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, me, ids[3], &p, &t->a, &u), STORE_OK);

    list_query_t q = query(me);
    q.sort_by_name = q.asc = true;
    q.search = "%";
    EXPECT_NAMES(t, KIND_DOC, &q, "100% pure");
    q.search = "100%";
    EXPECT_NAMES(t, KIND_DOC, &q, "100% pure");
    q.search = "100";
    EXPECT_NAMES(t, KIND_DOC, &q, "100 percent", "100% pure");
    q.search = "_";
    EXPECT_NAMES(t, KIND_DOC, &q, "a_b");
    q.search = "a_b";
    EXPECT_NAMES(t, KIND_DOC, &q, "a_b");
    q.search = "\\";
    EXPECT_NAMES(t, KIND_DOC, &q, "back\\slash");
    q.search = "k\\s";
    EXPECT_NAMES(t, KIND_DOC, &q, "back\\slash");
    q.search = "hello";
    EXPECT_NAMES(t, KIND_DOC, &q, "HELLO there", "Hello World");
    q.search = "hELLO w";
    EXPECT_NAMES(t, KIND_DOC, &q, "Hello World");
    /* Unicode default case folding (API.md §15): É and é alike; accents count */
    q.search = "école";
    EXPECT_NAMES(t, KIND_DOC, &q, "école", "ÉCOLE");
    q.search = "ÉCOLE";
    EXPECT_NAMES(t, KIND_DOC, &q, "école", "ÉCOLE");
    q.search = "cole";
    EXPECT_NAMES(t, KIND_DOC, &q, "école", "ÉCOLE");
    q.search = "ecole";
    EXPECT_NONE(t, KIND_DOC, &q);
    q.search = "no such thing";
    EXPECT_NONE(t, KIND_DOC, &q);
    q.search = "";
    EXPECT_NAMES(t, KIND_DOC, &q, "100 percent", "100% pure", "a_b", "axb", "back\\slash",
                 "backxslash", "école", "ÉCOLE", "HELLO there", "Hello World");

    /* search on result */
    q.search = "needle";
    EXPECT_NONE(t, KIND_DOC, &q);
    q.search_result = true;
    EXPECT_NAMES(t, KIND_DOC, &q, "100 percent", "axb");
    q.search = "needle is";
    EXPECT_NAMES(t, KIND_DOC, &q, "100 percent");
    q.search_result = false;

    /* template and favorite filters, alone and together with a search */
    q.search = NULL;
    q.template_id = 7;
    EXPECT_NAMES(t, KIND_DOC, &q, "a_b", "axb");
    q.search = "x";
    EXPECT_NAMES(t, KIND_DOC, &q, "axb");
    q.search = NULL;
    q.template_id = 0;
    q.favorite = 1;
    EXPECT_NAMES(t, KIND_DOC, &q, "100% pure", "école");
    q.favorite = 0;
    EXPECT_NAMES(t, KIND_DOC, &q, "100 percent", "a_b", "axb", "back\\slash", "backxslash",
                 "ÉCOLE", "HELLO there", "Hello World");
    q.favorite = 1;
    q.template_id = 7;
    EXPECT_NONE(t, KIND_DOC, &q);

    /* the other user's list is theirs alone */
    list_query_t o = query(other);
    o.template_id = 7;
    o.favorite = 1;
    record_list_t l = {0};
    CHECK_INT(t->ops->record_list(t->c, KIND_DOC, &o, &t->a, &l), STORE_OK);
    CHECK_INT(l.total, ARRAY_LEN(names));
    CHECK_INT(l.n, ARRAY_LEN(names));
}

static void test_image_filters(ctx_t *t)
{
    int64_t me = user(t, "painter"), other = user(t, "painter-other");
    make_img(t, me, "sunset", "1024x1024", "vivid", 0);
    make_img(t, me, "Sunrise", "1792x1024", "natural", 0);
    make_img(t, me, "forest", "1024x1792", NULL, 1);
    make_img(t, me, "sun_dog", "1024x1024", "natural", 0);
    make_img(t, me, "sunXdog", "1024x1024", NULL, 0);
    make_img(t, other, "sunset", "1024x1024", "natural", 1);
    make_doc(t, me, "sunset as a document", 1, 0);

    list_query_t q = query(me);
    q.sort_by_name = q.asc = true;
    EXPECT_NAMES(t, KIND_IMG, &q, "forest", "sun_dog", "Sunrise", "sunset", "sunXdog");
    q.resolution = "1024x1024";
    EXPECT_NAMES(t, KIND_IMG, &q, "sun_dog", "sunset", "sunXdog");
    q.style = "natural";
    EXPECT_NAMES(t, KIND_IMG, &q, "sun_dog");
    q.resolution = NULL;
    EXPECT_NAMES(t, KIND_IMG, &q, "sun_dog", "Sunrise");
    q.style = "vivid";
    EXPECT_NAMES(t, KIND_IMG, &q, "sunset");
    q.style = NULL;
    q.search = "sun_";
    EXPECT_NAMES(t, KIND_IMG, &q, "sun_dog");
    q.search = "SUN";
    EXPECT_NAMES(t, KIND_IMG, &q, "sun_dog", "Sunrise", "sunset", "sunXdog");
    q.search = "sun";
    q.resolution = "1024x1024";
    q.style = "vivid";
    EXPECT_NAMES(t, KIND_IMG, &q, "sunset");
    q = query(me);
    q.favorite = 1;
    EXPECT_NAMES(t, KIND_IMG, &q, "forest");
    q.favorite = 0;
    q.resolution = "1792x1024";
    EXPECT_NAMES(t, KIND_IMG, &q, "Sunrise");
    q.resolution = "800x600";
    EXPECT_NONE(t, KIND_IMG, &q);
}

static void test_sort(ctx_t *t)
{
    int64_t me = user(t, "sorter");
    const char *names[] = {"b", "a", "b", "c", "a", "B", "é", "z"};
    int64_t i[ARRAY_LEN(names)];
    for (size_t k = 0; k < ARRAY_LEN(names); k++)
        i[k] = make_doc(t, me, names[k], 1, 0);
    make_doc(t, user(t, "sorter-other"), "a", 1, 0);

    list_query_t q = query(me);
    q.sort_by_name = true;
    q.asc = true;
    /* CLDR root order: "a" < "b" < "B" < "c" < "é" < "z"; equal names by id in the same
     * direction */
    int64_t asc[] = {i[1], i[4], i[0], i[2], i[5], i[3], i[6], i[7]};
    expect_ids(t, KIND_DOC, &q, asc, 8, 8, __LINE__);
    q.asc = false;
    int64_t desc[] = {i[7], i[6], i[3], i[5], i[2], i[0], i[4], i[1]};
    expect_ids(t, KIND_DOC, &q, desc, 8, 8, __LINE__);

    q.sort_by_name = false;
    q.asc = true;
    expect_ids(t, KIND_DOC, &q, i, 8, 8, __LINE__);
    q.asc = false;
    int64_t rev[8];
    for (int k = 0; k < 8; k++)
        rev[k] = i[7 - k];
    expect_ids(t, KIND_DOC, &q, rev, 8, 8, __LINE__);

    /* name sort across pages of 3: no repeat, no skip among equal names */
    q.sort_by_name = true;
    q.asc = true;
    q.per_page = 3;
    for (int page = 1; page <= 3; page++) {
        q.page = page;
        size_t n = page < 3 ? 3 : 2;
        expect_ids(t, KIND_DOC, &q, asc + (page - 1) * 3, n, 8, __LINE__);
    }
}

static void test_pages(ctx_t *t)
{
    int64_t me = user(t, "pager"), other = user(t, "pager-other");
    int64_t ids[27];
    for (int k = 0; k < 27; k++) {
        char name[16];
        snprintf(name, sizeof(name), "doc %02d", k + 1);
        ids[k] = make_doc(t, me, name, 1, 0);
        make_doc(t, other, name, 1, 0);
    }
    int64_t desc[27];
    for (int k = 0; k < 27; k++)
        desc[k] = ids[26 - k];

    list_query_t q = query(me); /* defaults: by id, desc */
    q.per_page = 10;
    expect_ids(t, KIND_DOC, &q, desc, 10, 27, __LINE__);
    q.page = 2;
    expect_ids(t, KIND_DOC, &q, desc + 10, 10, 27, __LINE__);
    q.page = 3;
    expect_ids(t, KIND_DOC, &q, desc + 20, 7, 27, __LINE__);
    q.page = 4;
    expect_ids(t, KIND_DOC, &q, NULL, 0, 27, __LINE__);
    q.page = 1000000000000LL;
    expect_ids(t, KIND_DOC, &q, NULL, 0, 27, __LINE__);
    q.per_page = 25;
    q.page = 2;
    expect_ids(t, KIND_DOC, &q, desc + 25, 2, 27, __LINE__);
    q.per_page = 50;
    q.page = 1;
    expect_ids(t, KIND_DOC, &q, desc, 27, 27, __LINE__);
    q.per_page = 100;
    expect_ids(t, KIND_DOC, &q, desc, 27, 27, __LINE__);
    q.sort_by_name = q.asc = true;
    q.per_page = 10;
    q.page = 3;
    expect_ids(t, KIND_DOC, &q, ids + 20, 7, 27, __LINE__);
    q.search = "doc 2";
    q.page = 1;
    expect_ids(t, KIND_DOC, &q, ids + 19, 8, 8, __LINE__);

    /* 100 per page out of more than 100 rows */
    int64_t many = user(t, "many");
    for (int k = 0; k < 105; k++)
        make_img(t, many, "pic", "1024x1024", NULL, 0);
    list_query_t m = query(many);
    record_list_t l = {0};
    CHECK_INT(t->ops->record_list(t->c, KIND_IMG, &m, &t->a, &l), STORE_OK);
    CHECK_INT(l.n, 100);
    CHECK_INT(l.total, 105);
    m.page = 2;
    CHECK_INT(t->ops->record_list(t->c, KIND_IMG, &m, &t->a, &l), STORE_OK);
    CHECK_INT(l.n, 5);
    CHECK_INT(l.total, 105);
}

/* ---- jobs ------------------------------------------------------------------------------ */

/* Claims and completes every job left from the sections above, oldest first. */
static void drain_jobs(ctx_t *t)
{
    job_t j = {0};
    int64_t last = 0, n = 0, left = -1;
    CHECK_INT(t->ops->job_count(t->c, &left), STORE_OK);
    CHECK(left > 0);
    while (t->ops->job_claim(t->c, 60, NULL, &t->a, &j) == STORE_OK) {
        CHECK_MSG(j.id > last, "claim order: job %lld after %lld", (long long)j.id,
                  (long long)last);
        last = j.id;
        CHECK_INT(j.attempts, 1);
        CHECK_INT(t->ops->job_complete(t->c, &j, "drained", 1, "drained-key", NULL, NULL, NULL), STORE_OK);
        if (++n > 100000)
            break;
    }
    CHECK_INT(n, left);
    CHECK_INT(t->ops->job_count(t->c, &left), STORE_OK);
    CHECK_INT(left, 0);
}

static void check_state(ctx_t *t, rec_kind_t kind, int64_t uid, int64_t id, const char *state,
                        int line)
{
    record_t g = {0};
    int rc = t->ops->record_get(t->c, kind, uid, id, &t->a, &g);
    CHECK_MSG(rc == STORE_OK && str_eq(rec_state_name(g.state), state),
              "line %d: record %lld state %s, expected %s (rc %d)", line, (long long)id,
              rc == STORE_OK ? rec_state_name(g.state) : "-", state, rc);
}
#define CHECK_STATE(t, kind, uid, id, state) check_state(t, kind, uid, id, state, __LINE__)

static void test_jobs_basic(ctx_t *t)
{
    int64_t me = user(t, "worker");
    record_t d1 = {.kind = KIND_DOC, .user_id = me, .name = "d1", .prompt = "owls",
                   .creativity = 0.25, .template_id = 4};
    record_t i1 = {.kind = KIND_IMG, .user_id = me, .name = "i1", .description = "a cat",
                   .resolution = "1024x1792", .style = "natural"};
    record_t d2 = {.kind = KIND_DOC, .user_id = me, .name = "d2", .prompt = "bats",
                   .creativity = 1, .template_id = 1};
    int64_t j1, j2, j3, n = -1;
    CHECK_INT(t->ops->record_create(t->c, &d1, NULL, &j1), STORE_OK);
    CHECK_INT(t->ops->record_create(t->c, &i1, NULL, &j2), STORE_OK);
    CHECK_INT(t->ops->record_create(t->c, &d2, NULL, &j3), STORE_OK);
    CHECK(j1 < j2 && j2 < j3);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 3);

    job_t a = {0}, b = {0}, c = {0}, x = {0};
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &a), STORE_OK);
    CHECK_INT(a.id, j1);
    CHECK_INT(a.attempts, 1);
    CHECK_INT(strlen(a.token), 32);
    CHECK_INT(a.rec.kind, KIND_DOC);
    CHECK_INT(a.rec.id, d1.id);
    CHECK_INT(a.rec.user_id, me);
    CHECK_STR(a.rec.prompt, "owls");
    CHECK(a.rec.creativity == 0.25);
    CHECK_INT(a.rec.template_id, 4);
    CHECK_INT(d1.event_seq, 1); /* the event sequence (records.h): created 1, claimed 2 */
    CHECK_INT(a.rec.event_seq, 2);
    CHECK_STATE(t, KIND_DOC, me, d1.id, "generating");
    CHECK_STATE(t, KIND_DOC, me, d2.id, "queued");

    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &b), STORE_OK);
    CHECK_INT(b.id, j2);
    CHECK_INT(b.rec.kind, KIND_IMG);
    CHECK_INT(b.rec.id, i1.id);
    CHECK_STR(b.rec.description, "a cat");
    CHECK_STR(b.rec.resolution, "1024x1792");
    CHECK_STR(b.rec.style, "natural");
    CHECK(!str_eq(a.token, b.token));
    CHECK_STATE(t, KIND_IMG, me, i1.id, "generating");

    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &c), STORE_OK);
    CHECK_INT(c.id, j3);
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &x), STORE_NOTFOUND);
    CHECK_INT(t->ops->job_renew(t->c, a.id, a.token, 120), STORE_OK);

    /* a claimed job's record has no usage yet */
    CHECK_INT(a.rec.prompt_tokens, -1);
    CHECK_INT(a.rec.completion_tokens, -1);
    CHECK(!a.rec.truncated);
    job_t a_done = a; /* the usage the provider reported goes with the result */
    a_done.rec.prompt_tokens = 12;
    a_done.rec.completion_tokens = 345;
    a_done.rec.truncated = true;
    a_done.pieces = 3; /* numbered 3, 4, 5 by the worker: completed is 6 */
    CHECK_INT(t->ops->job_complete(t->c, &a_done, "alpha beta", 2, NULL, NULL, NULL, NULL), STORE_OK);
    record_t g = {0};
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, me, d1.id, &t->a, &g), STORE_OK);
    CHECK_STR(rec_state_name(g.state), "completed");
    CHECK_STR(g.result, "alpha beta");
    CHECK_INT(g.words, 2);
    CHECK(g.error == NULL);
    CHECK_INT(g.prompt_tokens, 12);
    CHECK_INT(g.completion_tokens, 345);
    CHECK(g.truncated);
    CHECK_INT(g.event_seq, 6);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 2);

    CHECK_INT(t->ops->job_complete(t->c, &b, NULL, 0, "k/abc.png", "a better cat", NULL, NULL), STORE_OK);
    CHECK_INT(t->ops->record_get(t->c, KIND_IMG, me, i1.id, &t->a, &g), STORE_OK);
    CHECK_STR(rec_state_name(g.state), "completed");
    CHECK_STR(g.media_key, "k/abc.png");
    CHECK_STR(g.revised_prompt, "a better cat");
    CHECK_INT(g.event_seq, 3);

    c.pieces = 1;
    CHECK_INT(t->ops->job_fail(t->c, &c, "The provider refused."), STORE_OK);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, me, d2.id, &t->a, &g), STORE_OK);
    CHECK_STR(rec_state_name(g.state), "failed");
    CHECK_INT(g.event_seq, 4); /* 1, 2 claimed, 3 a piece, 4 failed */
    CHECK_STR(g.error, "The provider refused.");
    CHECK(g.result == NULL);

    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 0);
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &x), STORE_NOTFOUND);
    /* finished jobs are gone: their tokens are stale */
    CHECK_INT(t->ops->job_complete(t->c, &a, "again", 1, NULL, NULL, NULL, NULL), STORE_STALE);
    CHECK_INT(t->ops->job_renew(t->c, a.id, a.token, 60), STORE_STALE);
    CHECK_INT(t->ops->job_fail(t->c, &c, "again"), STORE_STALE);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, me, d1.id, &t->a, &g), STORE_OK);
    CHECK_STR(g.result, "alpha beta");

    const char *key = NULL;
    CHECK_INT(delete_one(t->ops, t->c, KIND_IMG, me, i1.id, &t->a, &key), STORE_OK);
    CHECK_STR(key, "k/abc.png");
}

/* Creates document d (its id set) and claims its job. */
static job_t claimed_doc(ctx_t *t, record_t *d)
{
    int64_t jid;
    CHECK_INT(t->ops->record_create(t->c, d, NULL, &jid), STORE_OK);
    job_t j = {0};
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &j), STORE_OK);
    CHECK_INT(j.rec.id, d->id);
    return j;
}

/* A document regenerated in the request (record_regenerated): one transaction stores
 * the new inputs and text as the next revision, the event sequence moved on by 2; a
 * record being generated is BUSY, another user's NOTFOUND. */

static void test_regenerated(ctx_t *t)
{
    int64_t me = user(t, "regen");
    record_t d = {.kind = KIND_DOC, .user_id = me, .name = "r", .prompt = "old",
                  .creativity = 0.5, .template_id = 2};
    job_t j = claimed_doc(t, &d);
    record_t in = d;
    in.prompt = "new";
    in.result = "fresh words here";
    in.words = 3;
    in.prompt_tokens = in.completion_tokens = -1;
    in.tone = "neutral", in.language = "en", in.length = "medium";
    record_t out;
    CHECK_INT(t->ops->record_regenerated(t->c, &in, 0, NULL, &t->a, &out), STORE_BUSY);
    CHECK_INT(t->ops->job_complete(t->c, &j, "first", 1, NULL, NULL, NULL, NULL), STORE_OK);
    CHECK_INT(t->ops->record_regenerated(t->c, &in, 0, NULL, &t->a, &out), STORE_OK);
    CHECK_STR(rec_state_name(out.state), "completed");
    CHECK_STR(out.result, "fresh words here");
    CHECK_STR(out.prompt, "new");
    CHECK_INT(out.revision, 2);
    CHECK_INT(out.event_seq, 5); /* 1 created, 2 claimed, 3 completed, 4 queued, 5 completed */
    revision_t rv;
    CHECK_INT(t->ops->revision_get(t->c, KIND_DOC, me, d.id, 2, &t->a, &rv), STORE_OK);
    CHECK_STR(rv.source, "regeneration");
    CHECK_STR(rv.rec.result, "fresh words here");
    /* with a cap, the revisions past it go in the same transaction (none at the cap) */
    in.result = "third words";
    CHECK_INT(t->ops->record_regenerated(t->c, &in, 3, NULL, &t->a, &out), STORE_OK);
    CHECK_INT(out.revision, 3);
    CHECK_INT(t->ops->revision_get(t->c, KIND_DOC, me, d.id, 1, &t->a, &rv), STORE_OK);
    in.result = "fourth words";
    CHECK_INT(t->ops->record_regenerated(t->c, &in, 2, NULL, &t->a, &out), STORE_OK);
    CHECK_INT(out.revision, 4);
    revision_t *items;
    size_t got;
    int64_t total;
    CHECK_INT(t->ops->revision_list(t->c, KIND_DOC, me, d.id, 10, 1, &t->a, &items, &got, &total),
              STORE_OK);
    CHECK_INT(total, 2);
    CHECK_INT(got, 2);
    CHECK_INT(items[0].number, 4);
    CHECK_STR(items[0].rec.result, "fourth words");
    CHECK_INT(items[1].number, 3);
    CHECK_STR(items[1].rec.result, "third words");
    CHECK_INT(t->ops->revision_get(t->c, KIND_DOC, me, d.id, 2, &t->a, &rv), STORE_NOTFOUND);
    in.user_id = me + 1000;
    CHECK_INT(t->ops->record_regenerated(t->c, &in, 0, NULL, &t->a, &out), STORE_NOTFOUND);
}

/* The text so far of a running job kept for other processes (PostgreSQL; one process
 * owns a SQLite store and has no such op): pieces are kept only where the row's text
 * ends, so pieces whose send failed before them leave the row short, never with a gap;
 * an old token is STALE; a claim empties the row. */
static void test_job_progress(ctx_t *t)
{
    if (!t->ops->job_progress)
        return;
    int64_t me = user(t, "progress");
    record_t d = {.kind = KIND_DOC, .user_id = me, .name = "p", .prompt = "p",
                  .creativity = 0, .template_id = 1};
    job_t j = claimed_doc(t, &d);
    const char *text;
    int64_t seq;
    CHECK_INT(t->ops->record_partial(t->c, KIND_DOC, d.id, &t->a, &text, &seq), STORE_OK);
    CHECK(text == NULL);
    CHECK_INT(t->ops->job_progress(t->c, j.id, j.token, 0, "Héllo", 3, "x"), STORE_OK);
    CHECK_INT(t->ops->job_progress(t->c, j.id, j.token, 6, " wörld", 4, "x"), STORE_OK);
    CHECK_INT(t->ops->record_partial(t->c, KIND_DOC, d.id, &t->a, &text, &seq), STORE_OK);
    CHECK_STR(text, "Héllo wörld");
    CHECK_INT(seq, 4);
    /* pieces 5 (bytes 13..) were lost: 6 does not follow the row, which stays as it was */
    CHECK_INT(t->ops->job_progress(t->c, j.id, j.token, 20, " again", 6, "x"), STORE_OK);
    CHECK_INT(t->ops->record_partial(t->c, KIND_DOC, d.id, &t->a, &text, &seq), STORE_OK);
    CHECK_STR(text, "Héllo wörld");
    CHECK_INT(seq, 4);
    /* 5 and 6 sent again together, from where the row ends */
    CHECK_INT(t->ops->job_progress(t->c, j.id, j.token, 13, "!! again", 6, "x"), STORE_OK);
    CHECK_INT(t->ops->record_partial(t->c, KIND_DOC, d.id, &t->a, &text, &seq), STORE_OK);
    CHECK_STR(text, "Héllo wörld!! again");
    CHECK_INT(seq, 6);
    CHECK_INT(t->ops->job_progress(t->c, j.id, "not-the-token", 21, "?", 7, "x"), STORE_STALE);
    CHECK_INT(t->ops->job_complete(t->c, &j, "Héllo wörld!! again", 3, NULL, NULL, NULL, NULL),
              STORE_OK);
    CHECK_INT(t->ops->record_partial(t->c, KIND_DOC, d.id, &t->a, &text, &seq), STORE_NOTFOUND);
}

/* The latest revision shares its text with the document (SQLite migration 16,
 * PostgreSQL 14): every revision still reads as what it was, through edits, an edit to
 * the same text, a restore of the latest and of an older one. */
static void check_texts(ctx_t *t, int64_t me, int64_t id, const char *const *want, int n)
{
    for (int i = 0; i < n; i++) {
        revision_t rv;
        CHECK_INT(t->ops->revision_get(t->c, KIND_DOC, me, id, i + 1, &t->a, &rv), STORE_OK);
        CHECK_STR(rv.rec.result, want[i]);
    }
    revision_t *items;
    size_t got;
    int64_t total;
    CHECK_INT(t->ops->revision_list(t->c, KIND_DOC, me, id, 100, 1, &t->a, &items, &got, &total),
              STORE_OK);
    CHECK_INT(total, n);
    for (size_t i = 0; i < got; i++)
        CHECK_STR(items[i].rec.result, want[n - 1 - (int)i]);
}

static void test_revision_texts(ctx_t *t)
{
    int64_t me = user(t, "texts");
    record_t d = {.kind = KIND_DOC, .user_id = me, .name = "t", .prompt = "p",
                  .creativity = 0, .template_id = 1};
    job_t j = claimed_doc(t, &d);
    CHECK_INT(t->ops->job_complete(t->c, &j, "first", 1, NULL, NULL, NULL, NULL), STORE_OK);
    const char *want[] = {"first", "second", "second", "first", "second", "third"};
    check_texts(t, me, d.id, want, 1);
    record_t u;
    record_patch_t p = {.result = "second", .words = 1, .favorite = -1};
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, me, d.id, &p, &t->a, &u), STORE_OK);
    CHECK_INT(u.revision, 2);
    check_texts(t, me, d.id, want, 2);
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, me, d.id, &p, &t->a, &u), STORE_OK);
    CHECK_INT(u.revision, 3); /* the same text again: two revisions share it */
    check_texts(t, me, d.id, want, 3);
    CHECK_INT(t->ops->revision_restore(t->c, KIND_DOC, me, d.id, 1, NULL, &t->a, &u), STORE_OK);
    CHECK_STR(u.result, "first");
    check_texts(t, me, d.id, want, 4);
    CHECK_INT(t->ops->revision_restore(t->c, KIND_DOC, me, d.id, 3, NULL, &t->a, &u), STORE_OK);
    CHECK_STR(u.result, "second");
    check_texts(t, me, d.id, want, 5);
    p.result = "third";
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, me, d.id, &p, &t->a, &u), STORE_OK);
    check_texts(t, me, d.id, want, 6);
    /* a restore of the latest makes a copy of it */
    CHECK_INT(t->ops->revision_restore(t->c, KIND_DOC, me, d.id, 6, NULL, &t->a, &u), STORE_OK);
    CHECK_STR(u.result, "third");
    CHECK_INT(u.revision, 7);
    revision_t rv;
    CHECK_INT(t->ops->revision_get(t->c, KIND_DOC, me, d.id, 6, &t->a, &rv), STORE_OK);
    CHECK_STR(rv.rec.result, "third");
    CHECK_INT(t->ops->revision_get(t->c, KIND_DOC, me, d.id, 7, &t->a, &rv), STORE_OK);
    CHECK_STR(rv.rec.result, "third");
}

static void test_jobs_lease(ctx_t *t)
{
    int64_t me = user(t, "worker");
    record_t d = {.kind = KIND_DOC, .user_id = me, .name = "lease", .prompt = "p",
                  .creativity = 0, .template_id = 1};
    int64_t jid, n;
    CHECK_INT(t->ops->record_create(t->c, &d, NULL, &jid), STORE_OK);
    job_t first = {0}, second = {0}, x = {0};
    CHECK_INT(t->ops->job_claim(t->c, 0.05, NULL, &t->a, &first), STORE_OK);
    CHECK_INT(first.id, jid);
    CHECK_INT(first.attempts, 1);
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &x), STORE_NOTFOUND);
    sleep_ms(100);
    /* its lease ran out, but this process still runs it: never taken over */
    char busy[64];
    snprintf(busy, sizeof(busy), "[%lld,%lld]", (long long)jid + 1000, (long long)jid);
    CHECK_INT(t->ops->job_claim(t->c, 60, busy, &t->a, &x), STORE_NOTFOUND);
    snprintf(busy, sizeof(busy), "[%lld]", (long long)jid + 1000);
    CHECK_INT(t->ops->job_claim(t->c, 60, busy, &t->a, &second), STORE_OK);
    CHECK_INT(second.id, jid);
    CHECK_INT(second.attempts, 2);
    CHECK_INT(second.rec.id, d.id);
    CHECK(!str_eq(first.token, second.token));

    CHECK_INT(t->ops->job_complete(t->c, &first, "late", 1, NULL, NULL, NULL, NULL), STORE_STALE);
    CHECK_INT(t->ops->job_renew(t->c, first.id, first.token, 60), STORE_STALE);
    CHECK_INT(t->ops->job_fail(t->c, &first, "late"), STORE_STALE);
    record_t g = {0};
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, me, d.id, &t->a, &g), STORE_OK);
    CHECK_STR(rec_state_name(g.state), "generating");
    CHECK(g.result == NULL && g.error == NULL);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 1);

    CHECK_INT(t->ops->job_renew(t->c, second.id, second.token, 60), STORE_OK);
    CHECK_INT(t->ops->job_complete(t->c, &second, "on time", 2, NULL, NULL, NULL, NULL), STORE_OK);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, me, d.id, &t->a, &g), STORE_OK);
    CHECK_STR(rec_state_name(g.state), "completed");
    CHECK_STR(g.result, "on time");

    /* deleting a record removes its job, queued or claimed */
    record_t q = d, w = d;
    CHECK_INT(t->ops->record_create(t->c, &q, NULL, &jid), STORE_OK);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 1);
    const char *key = NULL;
    CHECK_INT(delete_one(t->ops, t->c, KIND_DOC, me, q.id, &t->a, &key), STORE_OK);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 0);
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &x), STORE_NOTFOUND);

    CHECK_INT(t->ops->record_create(t->c, &w, NULL, &jid), STORE_OK);
    CHECK_INT(t->ops->job_claim(t->c, 60, NULL, &t->a, &x), STORE_OK);
    CHECK_INT(x.rec.id, w.id);
    CHECK_INT(delete_one(t->ops, t->c, KIND_DOC, me, w.id, &t->a, &key), STORE_OK);
    CHECK_INT(t->ops->job_complete(t->c, &x, "orphan", 1, NULL, NULL, NULL, NULL), STORE_STALE);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 0);
}

typedef struct {
    store_t *s;
    store_conn_t *main_conn;
    job_t jobs[N_CLAIM_JOBS];
    int n, errors;
    bool own_conn;
    arena_t a;
} claimer_t;

static void *claim_thread(void *p)
{
    claimer_t *w = p;
    char err[256];
    store_conn_t *c = store_conn(w->s, err, sizeof(err));
    if (!c) {
        w->errors++;
        return NULL;
    }
    w->own_conn = c != w->main_conn;
    for (;;) {
        job_t j = {0};
        int rc = c->ops->job_claim(c, 300, NULL, &w->a, &j);
        if (rc == STORE_NOTFOUND)
            break;
        if (rc != STORE_OK || w->n == N_CLAIM_JOBS) {
            w->errors++;
            break;
        }
        w->jobs[w->n++] = j;
    }
    /* then everyone finishes their jobs at once */
    for (int i = 0; i < w->n; i++) {
        int rc = (i % 2) ? c->ops->job_complete(c, &w->jobs[i], "done", 1, NULL, NULL, NULL, NULL)
                         : c->ops->job_fail(c, &w->jobs[i], "failed on purpose");
        if (rc != STORE_OK)
            w->errors++;
    }
    return NULL;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static void test_jobs_concurrent(ctx_t *t)
{
    int64_t me = user(t, "crowd");
    int64_t created[N_CLAIM_JOBS], n = -1;
    for (int i = 0; i < N_CLAIM_JOBS; i++) {
        record_t r = {.kind = i % 4 ? KIND_DOC : KIND_IMG, .user_id = me, .name = "c",
                      .prompt = "p", .template_id = 1, .description = "d",
                      .resolution = "1024x1024"};
        CHECK_INT(t->ops->record_create(t->c, &r, NULL, &created[i]), STORE_OK);
    }
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, N_CLAIM_JOBS);

    claimer_t *w = xcalloc(N_CLAIM_THREADS, sizeof(*w));
    pthread_t th[N_CLAIM_THREADS];
    for (int i = 0; i < N_CLAIM_THREADS; i++) {
        w[i].s = t->s;
        w[i].main_conn = t->c;
        arena_init(&w[i].a);
        CHECK(pthread_create(&th[i], NULL, claim_thread, &w[i]) == 0);
    }
    int64_t got[N_CLAIM_JOBS * N_CLAIM_THREADS];
    size_t total = 0;
    for (int i = 0; i < N_CLAIM_THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(w[i].errors, 0);
        CHECK(w[i].own_conn);
        for (int k = 0; k < w[i].n; k++)
            got[total++] = w[i].jobs[k].id;
        arena_free(&w[i].a);
    }
    free(w);
    CHECK_INT(total, N_CLAIM_JOBS);
    qsort(got, total, sizeof(got[0]), cmp_i64);
    qsort(created, N_CLAIM_JOBS, sizeof(created[0]), cmp_i64);
    int dup = 0, missing = 0;
    for (size_t i = 1; i < total; i++)
        dup += got[i] == got[i - 1];
    for (size_t i = 0; i < N_CLAIM_JOBS; i++)
        missing += i >= total || got[i] != created[i];
    CHECK_INT(dup, 0);
    CHECK_INT(missing, 0);
    CHECK_INT(t->ops->job_count(t->c, &n), STORE_OK);
    CHECK_INT(n, 0);

    /* every record left is finished: every page of them, not the first only */
    list_query_t q = query(me);
    int64_t seen = 0, done = 0;
    for (q.page = 1;; q.page++) {
        record_list_t l = {0};
        CHECK_INT(t->ops->record_list(t->c, KIND_DOC, &q, &t->a, &l), STORE_OK);
        CHECK_INT(l.total, N_CLAIM_JOBS - N_CLAIM_JOBS / 4);
        for (size_t i = 0; i < l.n; i++)
            done += record_finished(&l.items[i]);
        seen += (int64_t)l.n;
        if (l.n < (size_t)q.per_page)
            break;
    }
    CHECK_INT(seen, N_CLAIM_JOBS - N_CLAIM_JOBS / 4);
    CHECK_INT(done, seen);
}

/* ---- rate limiting --------------------------------------------------------------------- */

/* Finished documents stored without a job: one, several in one transaction, and all
 * or none when one of them cannot be stored. */
static void test_docs_completed(ctx_t *t)
{
    int64_t before = 0, after = 0, jobs_before = 0, jobs_after = 0;
    list_query_t q = {.user_id = t->alice, .favorite = -1, .per_page = 10, .page = 1};
    record_list_t l;
    CHECK_INT(t->ops->record_list(t->c, KIND_DOC, &q, &t->a, &l), STORE_OK);
    before = l.total;
    CHECK_INT(t->ops->job_count(t->c, &jobs_before), STORE_OK);

    record_t one = {.kind = KIND_DOC, .user_id = t->alice, .name = "Done one", .prompt = "p1",
                    .creativity = 0.25, .template_id = 7, .result = "alpha beta", .words = 2,
                    .prompt_tokens = -1, .completion_tokens = 7, .truncated = false};
    record_t *r1[] = {&one};
    int64_t t0 = now_us();
    CHECK_INT(t->ops->docs_create_completed(t->c, r1, NULL, 1), STORE_OK);
    CHECK(one.id > 0);
    CHECK_STR(rec_state_name(one.state), "completed");
    CHECK(one.created_us >= t0 && one.updated_us == one.created_us);
    record_t g = {0};
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, one.id, &t->a, &g), STORE_OK);
    CHECK_STR(rec_state_name(g.state), "completed");
    CHECK_STR(g.result, "alpha beta");
    CHECK_INT(g.words, 2);
    CHECK_INT(g.template_id, 7);
    CHECK(g.creativity == 0.25 && g.error == NULL);
    CHECK_INT(g.prompt_tokens, -1); /* not said: NULL */
    CHECK_INT(g.completion_tokens, 7);
    CHECK(!g.truncated);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->bob, one.id, &t->a, &g), STORE_NOTFOUND);

    record_t b[3];
    record_t *rb[3];
    const char *names[] = {"Batch a", "Batch b", "Batch c"};
    for (int i = 0; i < 3; i++) {
        b[i] = (record_t){.kind = KIND_DOC, .user_id = i == 1 ? t->bob : t->alice,
                          .name = names[i], .prompt = "p", .creativity = 1, .template_id = 1,
                          .result = names[i], .words = 2};
        rb[i] = &b[i];
    }
    CHECK_INT(t->ops->docs_create_completed(t->c, rb, NULL, 3), STORE_OK);
    CHECK(b[0].id > one.id && b[1].id > b[0].id && b[2].id > b[1].id);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->bob, b[1].id, &t->a, &g), STORE_OK);
    CHECK_STR(g.result, "Batch b");

    /* a user that does not exist: the whole batch is refused */
    record_t bad[2] = {
        {.kind = KIND_DOC, .user_id = t->alice, .name = "Lost", .prompt = "p", .creativity = 0,
         .template_id = 1, .result = "x", .words = 1},
        {.kind = KIND_DOC, .user_id = 999999, .name = "Nobody", .prompt = "p", .creativity = 0,
         .template_id = 1, .result = "y", .words = 1},
    };
    record_t *rbad[] = {&bad[0], &bad[1]};
    CHECK(t->ops->docs_create_completed(t->c, rbad, NULL, 2) != STORE_OK);
    record_t img = {.kind = KIND_IMG, .user_id = t->alice, .name = "i", .result = "x"};
    record_t *rimg[] = {&img};
    CHECK_INT(t->ops->docs_create_completed(t->c, rimg, NULL, 1), STORE_ERROR);

    CHECK_INT(t->ops->record_list(t->c, KIND_DOC, &q, &t->a, &l), STORE_OK);
    after = l.total;
    CHECK_INT(after, before + 3); /* one + two of alice's three; nothing of the bad batch */
    q.search = "Lost";
    CHECK_INT(t->ops->record_list(t->c, KIND_DOC, &q, &t->a, &l), STORE_OK);
    CHECK_INT(l.total, 0);
    CHECK_INT(t->ops->job_count(t->c, &jobs_after), STORE_OK);
    CHECK_INT(jobs_after, jobs_before); /* no job for any of them */
}

/* The group commit: many threads submit at once; every item is stored exactly once,
 * with its own text, and woken once. */
#define N_WRITER_THREADS 6
#define N_WRITER_DOCS 60

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int woken;
} wake_count_t;

static void count_wake(void *arg)
{
    wake_count_t *w = arg;
    pthread_mutex_lock(&w->mu);
    w->woken++;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

typedef struct {
    writer_t *w;
    int64_t user;
    int index;
    record_t recs[N_WRITER_DOCS];
    writer_item_t items[N_WRITER_DOCS];
    char texts[N_WRITER_DOCS][32];
    wake_count_t *wc;
} submit_arg_t;

static void *submit_thread(void *p)
{
    submit_arg_t *sa = p;
    for (int i = 0; i < N_WRITER_DOCS; i++) {
        snprintf(sa->texts[i], sizeof(sa->texts[i]), "text %d %d", sa->index, i);
        sa->recs[i] = (record_t){.kind = KIND_DOC, .user_id = sa->user, .name = "writer",
                                 .prompt = "p", .creativity = 0.5, .template_id = 2,
                                 .result = sa->texts[i], .words = 3};
        sa->items[i] = (writer_item_t){.rec = &sa->recs[i], .rc = 99, .wake = count_wake,
                                       .arg = sa->wc};
        writer_submit(sa->w, &sa->items[i]);
    }
    return NULL;
}

static void test_writer(ctx_t *t)
{
    writer_t *w = writer_start(t->s, 16);
    CHECK(w != NULL);
    if (!w)
        return;
    wake_count_t wc = {.woken = 0};
    pthread_mutex_init(&wc.mu, NULL);
    pthread_cond_init(&wc.cv, NULL);
    static submit_arg_t sa[N_WRITER_THREADS];
    pthread_t th[N_WRITER_THREADS];
    for (int i = 0; i < N_WRITER_THREADS; i++) {
        sa[i] = (submit_arg_t){.w = w, .user = i % 2 ? t->bob : t->alice, .index = i, .wc = &wc};
        pthread_create(&th[i], NULL, submit_thread, &sa[i]);
    }
    for (int i = 0; i < N_WRITER_THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_lock(&wc.mu);
    while (wc.woken < N_WRITER_THREADS * N_WRITER_DOCS)
        pthread_cond_wait(&wc.cv, &wc.mu);
    pthread_mutex_unlock(&wc.mu);
    writer_stop(w);
    CHECK_INT(wc.woken, N_WRITER_THREADS * N_WRITER_DOCS);

    static int64_t ids[N_WRITER_THREADS * N_WRITER_DOCS];
    int n = 0, ok = 0, right = 0;
    for (int i = 0; i < N_WRITER_THREADS; i++)
        for (int k = 0; k < N_WRITER_DOCS; k++) {
            ok += sa[i].items[k].rc == STORE_OK;
            ids[n++] = sa[i].recs[k].id;
            record_t g = {0};
            if (t->ops->record_get(t->c, KIND_DOC, sa[i].user, sa[i].recs[k].id, &t->a, &g) ==
                    STORE_OK &&
                g.result && strcmp(g.result, sa[i].texts[k]) == 0 && g.state == REC_COMPLETED)
                right++;
        }
    CHECK_INT(ok, n);
    CHECK_INT(right, n);
    qsort(ids, (size_t)n, sizeof(ids[0]), cmp_i64);
    int dup = 0;
    for (int i = 1; i < n; i++)
        dup += ids[i] == ids[i - 1] || ids[i] <= 0;
    CHECK_INT(dup, 0);
    pthread_cond_destroy(&wc.cv);
    pthread_mutex_destroy(&wc.mu);
}

/* Runs one SQL statement on the suite's database behind the store's back. */
static bool raw_sql(ctx_t *t, const char *url, const char *sql)
{
    if (strcmp(t->ops->name, "sqlite") == 0) {
        sqlite3 *db;
        bool ok = sqlite3_open(url, &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
        sqlite3_close(db);
        return ok;
    }
    PGconn *pc = PQconnectdb(url);
    PGresult *r = PQexec(pc, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    PQfinish(pc);
    return ok;
}

/* (id, updated_us) names one version of a record: every change moves updated_us
 * forward, even when the clock says it is already later (a clock step back, or two
 * changes within one microsecond). */
static void test_updated_moves_forward(ctx_t *t, const char *url)
{
    int64_t id = make_doc(t, t->alice, "Clockwise", 1, 0);
    int64_t future = now_us() + 3600LL * 1000000;
    char sql[160];
    snprintf(sql, sizeof(sql), "UPDATE documents SET updated_us = %lld WHERE id = %lld",
             (long long)future, (long long)id);
    CHECK(raw_sql(t, url, sql));
    record_patch_t p = {.name = "Clockwise 2", .words = -1, .favorite = -1};
    record_t u = {0};
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, t->alice, id, &p, &t->a, &u), STORE_OK);
    CHECK_INT(u.updated_us, future + 1);
    CHECK_INT(t->ops->record_update(t->c, KIND_DOC, t->alice, id, &p, &t->a, &u), STORE_OK);
    CHECK_INT(u.updated_us, future + 2);
    record_t g = {0};
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, id, &t->a, &g), STORE_OK);
    CHECK_INT(g.updated_us, future + 2);
    /* a claim and a completion move it too */
    drain_jobs(t);
    int64_t jid = 0;
    record_t r = {.kind = KIND_DOC, .user_id = t->alice, .name = "Clock job", .prompt = "p",
                  .creativity = 0.5, .template_id = 1};
    CHECK_INT(t->ops->record_create(t->c, &r, NULL, &jid), STORE_OK);
    snprintf(sql, sizeof(sql), "UPDATE documents SET updated_us = %lld WHERE id = %lld",
             (long long)future, (long long)r.id);
    CHECK(raw_sql(t, url, sql));
    job_t job;
    CHECK_INT(t->ops->job_claim(t->c, 30, NULL, &t->a, &job), STORE_OK);
    CHECK_INT(job.rec.id, r.id);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &g), STORE_OK);
    CHECK_INT(g.updated_us, future + 1);
    CHECK_INT(t->ops->job_complete(t->c, &job, "done", 1, NULL, NULL, NULL, NULL), STORE_OK);
    CHECK_INT(t->ops->record_get(t->c, KIND_DOC, t->alice, r.id, &t->a, &g), STORE_OK);
    CHECK_INT(g.updated_us, future + 2);
    CHECK_STR(rec_state_name(g.state), "completed");
}

static void test_rate(ctx_t *t)
{
    /* GCRA: interval 10, period 30 → 3 at once, then one every 10 */
    int64_t tat = 0;
    bool ok = false;
    const int64_t T = 1000000;
    for (int i = 1; i <= 3; i++) {
        CHECK_INT(t->ops->rate_gcra(t->c, "key:1", T, 10, 30, false, &tat, &ok), STORE_OK);
        CHECK_MSG(ok, "hit %d", i);
        CHECK_INT(tat, T + 10 * i);
    }
    CHECK_INT(t->ops->rate_gcra(t->c, "key:1", T, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK(!ok);
    CHECK_INT(tat, T + 30); /* a refusal leaves the TAT */
    CHECK_INT(t->ops->rate_gcra(t->c, "key:1", T + 9, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK(!ok);
    CHECK_INT(t->ops->rate_gcra(t->c, "key:1", T + 10, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK(ok);
    CHECK_INT(tat, T + 40);
    /* buckets are apart */
    CHECK_INT(t->ops->rate_gcra(t->c, "key:2", T, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK(ok);
    CHECK_INT(tat, T + 10);
    /* long after: a TAT in the past counts as now */
    CHECK_INT(t->ops->rate_gcra(t->c, "key:1", T + 1000, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK(ok);
    CHECK_INT(tat, T + 1010);
    /* pruning drops only passed TATs: key:1 (T + 1010) stays, key:2 (T + 10) goes */
    CHECK_INT(t->ops->rate_gcra(t->c, "ip:127.0.0.1", T + 500, 10, 30, true, &tat, &ok), STORE_OK);
    CHECK(ok);
    CHECK_INT(t->ops->rate_gcra(t->c, "key:1", T + 1000, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK_INT(tat, T + 1020);
    CHECK_INT(t->ops->rate_gcra(t->c, "key:2", T + 1000, 10, 30, false, &tat, &ok), STORE_OK);
    CHECK_INT(tat, T + 1010); /* fresh: pruned, or past and counted as now — the same */
    /* an interval over the period never passes */
    CHECK_INT(t->ops->rate_gcra(t->c, "key:3", T, 31, 30, false, &tat, &ok), STORE_OK);
    CHECK(!ok);
}

static void test_idem(ctx_t *t)
{
    const int64_t T = 5000000, LEASE = 100, TTL = 1000;
    idem_t k, k2;
    /* first use: taken */
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "K", "d1", T, LEASE, TTL, false, &t->a, &k), STORE_OK);
    CHECK_INT(k.state, IDEM_NEW);
    CHECK_INT(strlen(k.token), 32);
    /* while in progress: busy for the same request, mismatch for another */
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "K", "d1", T + 1, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_BUSY);
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "K", "d2", T + 1, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_MISMATCH);
    /* another user's key of the same name is apart */
    CHECK_INT(t->ops->idem_begin(t->c, t->bob, "K", "d2", T + 1, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_NEW);
    CHECK_INT(t->ops->idem_abort(t->c, t->bob, "K", k2.token), STORE_OK);
    CHECK_INT(t->ops->idem_abort(t->c, t->bob, "K", k2.token), STORE_STALE);
    /* finish with a wrong token: stale; with the right one: replayed after */
    CHECK_INT(t->ops->idem_finish(t->c, t->alice, "K", "0000", 201, NULL, "{}", T + TTL), STORE_STALE);
    CHECK_INT(t->ops->idem_finish(t->c, t->alice, "K", k.token, 201, "http://x/api/v1/documents/7",
                                  "{\"data\":{\"id\":7},\"status\":201}", T + 10 + TTL), STORE_OK);
    CHECK_INT(t->ops->idem_finish(t->c, t->alice, "K", k.token, 202, NULL, "{}", T + TTL), STORE_STALE);
    CHECK_INT(t->ops->idem_abort(t->c, t->alice, "K", k.token), STORE_STALE); /* done: kept */
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "K", "d1", T + 20, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_REPLAY);
    CHECK_INT(k2.status, 201);
    CHECK_STR(k2.location, "http://x/api/v1/documents/7");
    CHECK_STR(k2.body, "{\"data\":{\"id\":7},\"status\":201}");
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "K", "d2", T + 20, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_MISMATCH);
    /* a lease run out: the key is taken over; the old holder's token is stale */
    idem_t old;
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "L", "d", T, LEASE, TTL, false, &t->a, &old), STORE_OK);
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "L", "d", T + LEASE - 1, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_BUSY);
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "L", "d", T + LEASE + 1, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_NEW);
    CHECK(strcmp(k2.token, old.token) != 0);
    CHECK_INT(t->ops->idem_finish(t->c, t->alice, "L", old.token, 201, NULL, "{}", T + TTL), STORE_STALE);
    /* expired: free again, whatever the digest */
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "K", "d3", T + 11 + TTL, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_NEW);
    /* pruning deletes expired keys only */
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "P", "d", T, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(t->ops->idem_finish(t->c, t->alice, "P", k2.token, 202, NULL, "{}", T + 50), STORE_OK);
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "Q", "d", T + 60, LEASE, TTL, true, &t->a, &k2), STORE_OK);
    CHECK_INT(t->ops->idem_finish(t->c, t->alice, "P", k2.token, 202, NULL, "{}", T + 50), STORE_STALE);
    CHECK_INT(t->ops->idem_begin(t->c, t->alice, "P", "other", T + 61, LEASE, TTL, false, &t->a, &k2), STORE_OK);
    CHECK_INT(k2.state, IDEM_NEW); /* pruned (or expired): new */
}

/* ---- the suite ------------------------------------------------------------------------- */

/* ---- search: indexed results equal a plain scan ----------------------------------------- */

/* Pieces of random names and texts: mixed case, LIKE's special characters, multibyte
 * letters whose case a Unicode folding would change (É/é, ẞ/ß, the Kelvin sign that
 * folds to k), so an index that folds more than A-Z would show. */
static const char *const prop_pieces[] = {
    "a", "A", "b", "B", "k", "K", "ab", "AB", "aB", "abc", "ABC", " ", "%", "_", "\\",
    "%_", "é", "É", "ß", "ẞ", "\xe2\x84\xaa" /* KELVIN SIGN */, "ü", "Ü", "日本", "x",
};

static char *prop_text(unsigned *seed, int max_pieces)
{
    buf_t b;
    buf_init(&b);
    int n = (int)(rand_r(seed) % (unsigned)(max_pieces + 1));
    for (int i = 0; i < n; i++)
        buf_puts(&b, prop_pieces[rand_r(seed) % ARRAY_LEN(prop_pieces)]);
    return buf_steal(&b);
}

/* The contract's match (API.md §15), written plainly: the needle's default case
 * folding is a substring of the text's (core/unicode.c, tested alone there). */
static bool prop_match(const char *hay, const char *needle)
{
    if (!hay)
        return false;
    char *h = uni_fold(hay, strlen(hay), NULL), *n = uni_fold(needle, strlen(needle), NULL);
    bool found = h && n && strstr(h, n) != NULL;
    free(h);
    free(n);
    return found;
}

/* The model of the name order: the names' root-collation keys, made once per sort,
 * compared bytewise; ties by id. */
typedef struct {
    uint8_t *key;
    size_t len;
    int64_t id;
    int i;
} model_key_t;

static int model_key_cmp(const void *x, const void *y)
{
    const model_key_t *a = x, *b = y;
    int c = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);
    if (c == 0)
        c = (a->len > b->len) - (a->len < b->len);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* Sorts idx[0..n) (ascending) by names[idx[j]], ids[idx[j]] through the accessors. */
static void model_name_sort(int *idx, int n, const char *(*name_of)(const void *, int),
                            int64_t (*id_of)(const void *, int), const void *recs)
{
    model_key_t *k = xcalloc((size_t)n + 1, sizeof(*k));
    for (int j = 0; j < n; j++) {
        const char *name = name_of(recs, idx[j]);
        k[j].key = uni_sort_key(name, strlen(name), &k[j].len);
        k[j].id = id_of(recs, idx[j]);
        k[j].i = idx[j];
    }
    qsort(k, (size_t)n, sizeof(*k), model_key_cmp);
    for (int j = 0; j < n; j++) {
        idx[j] = k[j].i;
        free(k[j].key);
    }
    free(k);
}

typedef struct {
    int64_t id;
    char *name, *result; /* result NULL: not generated */
    bool alive;
} prop_doc_t;

static const char *prop_name(const void *recs, int i)
{
    return ((const prop_doc_t *)recs)[i].name;
}

static int64_t prop_id(const void *recs, int i)
{
    return ((const prop_doc_t *)recs)[i].id;
}

static bool prop_probe_none(void *arg, rec_kind_t kind, int64_t id, int64_t updated_us)
{
    return false;
}

/* Lists every page of q (in the order asked) and compares ids and total with the
 * documents of docs that match; with probe, as the record cache asks (keys first). */
static void prop_compare(ctx_t *t, int64_t uid, const prop_doc_t *docs, int n,
                         const char *needle, bool by_result, bool by_name, bool asc, bool probe)
{
    int idx[512], nidx = 0;
    for (int i = 0; i < n; i++)
        if (docs[i].alive && prop_match(by_result ? docs[i].result : docs[i].name, needle))
            idx[nidx++] = i;
    if (by_name) {
        model_name_sort(idx, nidx, prop_name, prop_id, docs);
    }
    int64_t want[512];
    for (int i = 0; i < nidx; i++)
        want[i] = docs[idx[asc ? i : nidx - 1 - i]].id;
    list_query_t q = query(uid);
    q.search = needle;
    q.search_result = by_result;
    q.sort_by_name = by_name;
    q.asc = asc;
    q.per_page = 10;
    if (probe && t->ops->list_probes)
        q.probe = prop_probe_none;
    int got = 0;
    bool same = true;
    int64_t total = -1;
    for (q.page = 1; q.page <= 60; q.page++) {
        record_list_t l = {0};
        if (t->ops->record_list(t->c, KIND_DOC, &q, &t->a, &l) != STORE_OK) {
            same = false;
            break;
        }
        total = l.total;
        for (size_t i = 0; i < l.n; i++, got++)
            if (got >= nidx || l.items[i].id != want[got])
                same = false;
        if (l.n < (size_t)q.per_page)
            break;
    }
    CHECK_MSG(same && got == nidx && total == nidx,
              "search %s \"%s\" (%s %s%s): %d rows (total %lld), a scan finds %d",
              by_result ? "result" : "name", needle, by_name ? "name" : "id", asc ? "asc" : "desc",
              q.probe ? ", probed" : "", got, (long long)total, nidx);
}

/* Random needles: pieces of stored texts (whole characters, ASCII case flipped at
 * random) or random pieces. */
static char *prop_needle(unsigned *seed, const prop_doc_t *docs, int n)
{
    const prop_doc_t *d = &docs[rand_r(seed) % (unsigned)n];
    const char *src = rand_r(seed) % 2 ? d->name : d->result;
    if (!src || !src[0] || rand_r(seed) % 3 == 0)
        return prop_text(seed, 4);
    size_t len = strlen(src), from = rand_r(seed) % len, to = from + 1 + rand_r(seed) % 9;
    while (from > 0 && ((unsigned char)src[from] & 0xC0) == 0x80)
        from--;
    if (to > len)
        to = len;
    while (to < len && ((unsigned char)src[to] & 0xC0) == 0x80)
        to++;
    char *needle = xmalloc(to - from + 1);
    for (size_t j = from; j < to; j++) {
        char ch = src[j];
        if (((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) && rand_r(seed) % 2)
            ch ^= 0x20;
        needle[j - from] = ch;
    }
    needle[to - from] = '\0';
    return needle;
}

/* Each needle in each order; asked twice so the second answer may come from the totals
 * cache. */
static void prop_queries(ctx_t *t, int64_t uid, const prop_doc_t *docs, int n, char **needles,
                         int nq)
{
    for (int i = 0; i < nq; i++) {
        if (!needles[i][0])
            continue;
        for (int rep = 0; rep < 2; rep++) {
            prop_compare(t, uid, docs, n, needles[i], false, false, false, rep);
            prop_compare(t, uid, docs, n, needles[i], true, false, i % 2, !rep);
        }
        /* name order, without and with the record cache's probe (the indexed search's
         * key query once failed to sort by name) */
        prop_compare(t, uid, docs, n, needles[i], i % 3 == 0, true, i % 2, false);
        prop_compare(t, uid, docs, n, needles[i], i % 3 != 0, true, !(i % 2), true);
    }
}

/* Appends a word with a number to some texts: rare trigrams, which PostgreSQL's
 * index is asked for instead of the whole search (pg_trgm.c). */
static char *prop_numbered(char *text, unsigned *seed)
{
    if (!text || rand_r(seed) % 3)
        return text;
    char *out = xmalloc(strlen(text) + 16);
    sprintf(out, "%s%s%u", text, rand_r(seed) % 2 ? " N" : "x", rand_r(seed) % 1000);
    free(text);
    return out;
}

/* On SQLite new records reach the index after their commit (sqlite_index.c), and a
 * search scans those not indexed yet: the property holds with none of them indexed,
 * half, and all, and with changes and deletes on both sides of the watermark. The
 * background thread is held meanwhile so each phase is what it says. On PostgreSQL the
 * queries run with the trigram statistics (pg_trgm.c). */
static void test_search_property(ctx_t *t, const char *url)
{
    enum { N = 240, QUERIES = 120 };
    unsigned seed = 12345;
    store_sqlite_index_hold(t->s, true);
    while (store_sqlite_index_now(t->c, 1000) > 0)
        ; /* what earlier tests left: the thread may have been held by its load */
    int64_t uid = user(t, "search-prop"), other = user(t, "search-prop-other");
    prop_doc_t docs[N];
    for (int i = 0; i < N; i++) {
        docs[i].name = prop_numbered(prop_text(&seed, 8), &seed);
        if (!docs[i].name[0]) {
            free(docs[i].name);
            docs[i].name = xstrdup("n");
        }
        docs[i].result = rand_r(&seed) % 5 ? prop_numbered(prop_text(&seed, 12), &seed) : NULL;
        docs[i].alive = true;
        record_t r = {.kind = KIND_DOC, .user_id = uid, .name = docs[i].name, .prompt = "p",
                      .creativity = 0.5, .template_id = 1, .result = docs[i].result, .words = 1};
        if (docs[i].result) {
            record_t *rs[] = {&r};
            CHECK_INT(t->ops->docs_create_completed(t->c, rs, NULL, 1), STORE_OK);
        } else {
            int64_t job = 0;
            CHECK_INT(t->ops->record_create(t->c, &r, NULL, &job), STORE_OK);
        }
        docs[i].id = r.id;
        if (i % 3 == 0 && docs[i].result) {
            /* another user's document with the same text between ours: in the same block
             * of the results' index on SQLite (migration 19), never in our lists */
            record_t o = r;
            o.id = 0;
            o.user_id = other;
            record_t *os[] = {&o};
            CHECK_INT(t->ops->docs_create_completed(t->c, os, NULL, 1), STORE_OK);
        }
    }
    char *needles[QUERIES];
    for (int i = 0; i < QUERIES; i++)
        needles[i] = prop_needle(&seed, docs, N);
    /* on PostgreSQL, with the trigram statistics (as autovacuum's ANALYZE makes them),
     * read by a new connection */
    ctx_t *orig = t, fresh = *t; /* fresh uses t's arena from here on */
    bool pg = strcmp(t->ops->name, "postgres") == 0;
    if (pg) {
        char err[256] = "";
        CHECK(raw_sql(t, url, "ANALYZE documents"));
        CHECK(raw_sql(t, url, "DO $$ BEGIN IF (SELECT count(*) FROM pg_stats_ext_exprs WHERE"
                              " statistics_name LIKE 'documents%trgm_freq') <> 2 THEN"
                              " RAISE 'no trigram statistics'; END IF; END $$"));
        fresh.s = store_open(url, err, sizeof(err));
        fresh.c = fresh.s ? store_conn(fresh.s, err, sizeof(err)) : NULL;
        CHECK_MSG(fresh.c != NULL, "store_open: %s", err);
        if (!fresh.c) {
            store_close(fresh.s);
            fresh.s = t->s;
            fresh.c = t->c;
        }
    }
    t = &fresh;
    prop_queries(t, uid, docs, N, needles, QUERIES); /* SQLite: nothing indexed */
    int indexed = store_sqlite_index_now(t->c, N / 2);
    CHECK(indexed == (t->ops == &store_sqlite_ops ? N / 2 : 0));
    prop_queries(t, uid, docs, N, needles, QUERIES); /* SQLite: the older half indexed */
    int merged;
    while ((merged = store_sqlite_index_merge(t->c)) > 0)
        ; /* compacted: the same results */
    CHECK_INT(merged, 0);
    prop_queries(t, uid, docs, N, needles, QUERIES);
    /* changes go through the index (and move the totals cache on): renames, new texts,
     * favorites, deletes; then the same needles again */
    for (int i = 0; i < N; i += 7) {
        char *name = prop_text(&seed, 6), *result = prop_text(&seed, 10);
        record_patch_t p = {.name = name[0] ? name : NULL, .result = result, .words = 1,
                            .favorite = -1};
        record_t out = {0};
        CHECK_INT(t->ops->record_update(t->c, KIND_DOC, uid, docs[i].id, &p, &t->a, &out),
                  STORE_OK);
        if (name[0]) {
            free(docs[i].name);
            docs[i].name = name;
        } else {
            free(name);
        }
        free(docs[i].result);
        docs[i].result = result;
    }
    for (int i = 3; i < N; i += 11) {
        const char *mk = NULL;
        CHECK_INT(delete_one(t->ops, t->c, KIND_DOC, uid, docs[i].id, &t->a, &mk), STORE_OK);
        docs[i].alive = false;
    }
    prop_queries(t, uid, docs, N, needles, QUERIES);
    /* the rest indexed, after its changes and deletes */
    while ((indexed = store_sqlite_index_now(t->c, 100)) > 0)
        ;
    CHECK_INT(indexed, 0);
    prop_queries(t, uid, docs, N, needles, QUERIES);
    store_sqlite_index_hold(orig->s, false);
    for (int i = 0; i < QUERIES; i++)
        free(needles[i]);
    for (int i = 0; i < N; i++) {
        free(docs[i].name);
        free(docs[i].result);
    }
    if (pg && fresh.s != orig->s)
        store_close(fresh.s);
    orig->a = fresh.a;
}

/* ---- deep pages: keyset seeks give exactly the OFFSET pages ------------------------------ */

typedef struct {
    int64_t id;
    char *name;
    int group; /* documents: template_id 1 or 2; images: resolution 0 or 1 */
    int style; /* images: 0 vivid, 1 natural */
    bool favorite, alive;
} page_rec_t;

static const char *page_name(const void *recs, int i)
{
    return ((const page_rec_t *)recs)[i].name;
}

static int64_t page_id(const void *recs, int i)
{
    return ((const page_rec_t *)recs)[i].id;
}

static bool page_probe_none(void *arg, rec_kind_t kind, int64_t id, int64_t updated_us)
{
    return false;
}

static const char *const page_res[] = {"1024x1024", "1792x1024"};
static const char *const page_style[] = {"vivid", "natural"};

/* A random search for the pages property: none (a third), else a piece of a record's
 * name of one to four characters (under three: the scan; three or more: the index),
 * ASCII case flipped at random. */
static char *page_needle(unsigned *seed, const page_rec_t *recs, int n)
{
    if (rand_r(seed) % 3 == 0)
        return NULL;
    const char *name = recs[rand_r(seed) % (unsigned)n].name;
    size_t len = strlen(name), from = rand_r(seed) % len;
    while (from > 0 && ((unsigned char)name[from] & 0xC0) == 0x80)
        from--;
    size_t to = from;
    for (unsigned chars = 1 + rand_r(seed) % 4; chars > 0 && to < len; chars--) {
        to++;
        while (to < len && ((unsigned char)name[to] & 0xC0) == 0x80)
            to++;
    }
    char *needle = xmalloc(to - from + 1);
    for (size_t j = from; j < to; j++) {
        char ch = name[j];
        if (((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) && rand_r(seed) % 2)
            ch ^= 0x20;
        needle[j - from] = ch;
    }
    needle[to - from] = '\0';
    return needle;
}

/* One random list of recs (search or none, order, direction, filters, page), compared
 * with the full ordered list; asked twice, with and without the record cache's probe
 * (the second also finds the boundaries and totals cached). */
static void page_compare(ctx_t *t, rec_kind_t kind, int64_t uid, const page_rec_t *recs, int n,
                         unsigned *seed)
{
    static const int per_pages[] = {10, 25, 50, 100};
    list_query_t q = query(uid);
    q.sort_by_name = rand_r(seed) % 2;
    q.asc = rand_r(seed) % 2;
    q.per_page = per_pages[rand_r(seed) % 4];
    int group = rand_r(seed) % 3 - 1, style = kind == KIND_IMG ? (int)(rand_r(seed) % 3) - 1 : -1;
    q.favorite = rand_r(seed) % 3 == 0 ? (int)(rand_r(seed) % 2) : -1;
    if (group >= 0 && kind == KIND_DOC)
        q.template_id = group + 1;
    if (group >= 0 && kind == KIND_IMG)
        q.resolution = page_res[group];
    if (style >= 0)
        q.style = page_style[style];
    bool probe_first = rand_r(seed) % 2;
    char *needle = page_needle(seed, recs, n);
    q.search = needle;
    int *idx = xmalloc((size_t)n * sizeof(int)), nidx = 0;
    for (int i = 0; i < n; i++)
        if (recs[i].alive && (!needle || prop_match(recs[i].name, needle)) &&
            (group < 0 || recs[i].group == group) &&
            (style < 0 || recs[i].style == style) &&
            (q.favorite < 0 || recs[i].favorite == (q.favorite != 0)))
            idx[nidx++] = i;
    if (q.sort_by_name) {
        model_name_sort(idx, nidx, page_name, page_id, recs);
    }
    /* mostly deep pages, some past the end */
    q.page = 1 + rand_r(seed) % (unsigned)(nidx / q.per_page + 2);
    int64_t from = (q.page - 1) * q.per_page;
    for (int rep = 0; rep < 2; rep++) { /* again: the boundaries are then cached */
        q.probe = (rep == 0) == probe_first && t->ops->list_probes ? page_probe_none : NULL;
        record_list_t l = {0};
        int rc = t->ops->record_list(t->c, kind, &q, &t->a, &l);
        bool same = rc == STORE_OK && l.total == nidx;
        size_t want = from >= nidx ? 0 : (size_t)(nidx - from < q.per_page ? nidx - from : q.per_page);
        same = same && l.n == want;
        for (size_t i = 0; same && i < l.n; i++) {
            const page_rec_t *r = &recs[idx[q.asc ? from + (int64_t)i : nidx - 1 - from - (int64_t)i]];
            same = l.items[i].id == r->id && str_eq(l.items[i].name, r->name);
        }
        CHECK_MSG(same,
                  "%s page %lld of %d by %s %s (search \"%s\", group %d, style %d, favorite %d%s):"
                  " rc %d, %zu rows (total %lld), want %zu of %d",
                  kind == KIND_DOC ? "documents" : "images", (long long)q.page, q.per_page,
                  q.sort_by_name ? "name" : "id", q.asc ? "asc" : "desc",
                  needle ? needle : "", group, style, q.favorite, q.probe ? ", probed" : "", rc,
                  l.n, (long long)l.total, want, nidx);
    }
    free(idx);
    free(needle);
}

/* Creates record i of recs (random name with ties, group, style, favorite). */
static void page_make(ctx_t *t, rec_kind_t kind, int64_t uid, page_rec_t *r, unsigned *seed)
{
    static const char *const names[] = {"a", "b", "B", "ab", "a b", "é", "日本", "zz", "Z",
                                        "Кот", "кОТ", "Ωmega", "ß", "SS", "Ärger", "apple pie"};
    char name[48];
    snprintf(name, sizeof(name), "%s%s", names[rand_r(seed) % ARRAY_LEN(names)],
             rand_r(seed) % 4 ? "" : names[rand_r(seed) % ARRAY_LEN(names)]);
    r->name = xstrdup(name);
    r->group = (int)(rand_r(seed) % 2);
    r->style = kind == KIND_IMG ? (int)(rand_r(seed) % 2) : 0;
    r->favorite = rand_r(seed) % 3 == 0;
    r->alive = true;
    r->id = kind == KIND_DOC
                ? make_doc(t, uid, r->name, r->group + 1, r->favorite)
                : make_img(t, uid, r->name, page_res[r->group], page_style[r->style], r->favorite);
}

/* Random data and random pages (order, direction, per_page, filters, page) compared
 * with the full ordered list, before and after changes that move the boundaries. */
static void test_pages_property(ctx_t *t)
{
    enum { NDOCS = 1400, NIMGS = 700, MORE = 60, QUERIES = 120 };
    unsigned seed = 4242;
    /* SQLite: round 0 with every record in the tail (its names index serves the name
     * searches, store/tailnames.c), round 1 with part of them indexed, round 2 all */
    store_sqlite_index_hold(t->s, true);
    while (store_sqlite_index_now(t->c, 1000) > 0)
        ;
    int64_t uid = user(t, "pages-prop");
    page_rec_t *docs = xcalloc(NDOCS + MORE, sizeof(*docs)), *imgs = xcalloc(NIMGS, sizeof(*imgs));
    for (int i = 0; i < NDOCS; i++)
        page_make(t, KIND_DOC, uid, &docs[i], &seed);
    for (int i = 0; i < NIMGS; i++)
        page_make(t, KIND_IMG, uid, &imgs[i], &seed);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < QUERIES; i++)
            page_compare(t, KIND_DOC, uid, docs, NDOCS + (round ? MORE : 0), &seed);
        for (int i = 0; i < QUERIES / 3; i++)
            page_compare(t, KIND_IMG, uid, imgs, NIMGS, &seed);
        /* changes: deletes, renames, favorites, and (once) new documents */
        for (int i = (int)(rand_r(&seed) % 13); i < NDOCS; i += 13) {
            const char *mk = NULL;
            if (!docs[i].alive)
                continue;
            if (i % 2) {
                CHECK_INT(delete_one(t->ops, t->c, KIND_DOC, uid, docs[i].id, &t->a, &mk),
                          STORE_OK);
                docs[i].alive = false;
                continue;
            }
            free(docs[i].name);
            docs[i].name = xstrdup(i % 4 ? "b" : "renamed");
            docs[i].favorite = !docs[i].favorite;
            record_patch_t p = {.name = docs[i].name, .words = -1, .favorite = docs[i].favorite};
            record_t out = {0};
            CHECK_INT(t->ops->record_update(t->c, KIND_DOC, uid, docs[i].id, &p, &t->a, &out),
                      STORE_OK);
        }
        for (int i = (int)(rand_r(&seed) % 17); i < NIMGS; i += 17) {
            const char *mk = NULL;
            if (imgs[i].alive) {
                CHECK_INT(delete_one(t->ops, t->c, KIND_IMG, uid, imgs[i].id, &t->a, &mk),
                          STORE_OK);
                imgs[i].alive = false;
            }
        }
        if (round == 0)
            for (int i = NDOCS; i < NDOCS + MORE; i++)
                page_make(t, KIND_DOC, uid, &docs[i], &seed);
        store_sqlite_index_now(t->c, round == 0 ? NDOCS / 2 : NDOCS + NIMGS + MORE);
    }
    store_sqlite_index_hold(t->s, false);
    for (int i = 0; i < NDOCS + MORE; i++)
        free(docs[i].name);
    for (int i = 0; i < NIMGS; i++)
        free(imgs[i].name);
    free(docs);
    free(imgs);
}

/* ---- migration to API.md §15 ------------------------------------------------------------ */

/* The schema before §15 (SQLite's migration 9 and 10, PostgreSQL's 7 and 8), made from
 * the current one: what an existing database had. */
static const char *const before_unicode[2] = {
    "DELETE FROM schema_migrations WHERE version IN (11, 19);" /* 19 replaces 11's triggers */
    "DROP TRIGGER documents_key_ins; DROP TRIGGER documents_key_upd;"
    "DROP TRIGGER images_key_ins; DROP TRIGGER images_key_upd;"
    "DROP INDEX documents_user_key; DROP INDEX images_user_key;"
    "ALTER TABLE documents DROP COLUMN name_key; ALTER TABLE images DROP COLUMN name_key;"
    "CREATE INDEX documents_user_name ON documents(user_id, name COLLATE BINARY, id);"
    "CREATE INDEX images_user_name ON images(user_id, name COLLATE BINARY, id);"
    "DROP TRIGGER documents_fts_del; DROP TRIGGER documents_name_fts_upd;"
    "DROP TRIGGER documents_result_fts_upd;"
    "DROP TABLE documents_name_fts; DROP TABLE documents_result_fts;"
    "CREATE VIRTUAL TABLE documents_fts USING fts5(sname, sresult, content='', columnsize=0,"
    "  detail=column, tokenize='trigram case_sensitive 1');"
    "CREATE TRIGGER documents_fts_del AFTER DELETE ON documents"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_fts(documents_fts, rowid, sname, sresult)"
    "  VALUES ('delete', OLD.id, lower(OLD.name), lower(OLD.result)); END;"
    "CREATE TRIGGER documents_fts_upd AFTER UPDATE OF name, result ON documents"
    "  WHEN OLD.id <= (SELECT upto FROM search_index WHERE kind = 0) BEGIN"
    "  INSERT INTO documents_fts(documents_fts, rowid, sname, sresult)"
    "  VALUES ('delete', OLD.id, lower(OLD.name), lower(OLD.result));"
    "  INSERT INTO documents_fts(rowid, sname, sresult)"
    "  VALUES (NEW.id, lower(NEW.name), lower(NEW.result)); END;"
    "INSERT INTO images_fts(images_fts) VALUES ('delete-all');"
    "INSERT INTO documents_fts(rowid, sname, sresult)"
    "  SELECT id, lower(name), lower(result) FROM documents;"
    "INSERT INTO images_fts(rowid, sname) SELECT id, lower(name) FROM images;"
    "UPDATE search_index SET upto = (SELECT coalesce(max(id), 0) FROM documents) WHERE kind = 0;"
    "UPDATE search_index SET upto = (SELECT coalesce(max(id), 0) FROM images) WHERE kind = 1;",
    "DELETE FROM schema_migrations WHERE version = 9;"
    "DROP INDEX documents_user_name, images_user_name, documents_name_trgm,"
    "  documents_result_trgm, images_name_trgm;"
    "DROP STATISTICS IF EXISTS documents_name_trgm_freq, documents_result_trgm_freq,"
    "  images_name_trgm_freq;"
    "ALTER TABLE documents DROP COLUMN name_fold, DROP COLUMN result_fold;"
    "ALTER TABLE images DROP COLUMN name_fold;"
    "CREATE INDEX documents_user_name ON documents (user_id, name COLLATE \"C\", id);"
    "CREATE INDEX images_user_name ON images (user_id, name COLLATE \"C\", id);"
    "CREATE INDEX documents_name_trgm ON documents"
    "  USING gin (lower(name COLLATE \"C\") gin_trgm_ops);"
    "CREATE INDEX documents_result_trgm ON documents"
    "  USING gin (lower(result COLLATE \"C\") gin_trgm_ops);"
    "CREATE INDEX images_name_trgm ON images USING gin (lower(name COLLATE \"C\") gin_trgm_ops);",
};

/* A database of the schema before §15 is converted in place when a store opens it
 * (SQLite migration 11, PostgreSQL migration 9): its records are then searched and
 * ordered as §15 says. Runs last: the suite's own store is not used after it. */
static void test_unicode_migration(ctx_t *t, const char *url)
{
    bool pg = strcmp(t->ops->name, "postgres") == 0;
    int64_t uid = user(t, "migrated");
    static const char *const names[] = {"Кот", "zebra", "кот дома", "Ωmega", "apple pie",
                                        "STRASSE", "Ärger", "Zürich"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        make_doc(t, uid, names[i], 1, 0);
        make_img(t, uid, names[i], "1024x1024", NULL, 0);
    }
    record_t r = {.kind = KIND_DOC, .user_id = uid, .name = "tale", .prompt = "p",
                  .creativity = 0.5, .template_id = 1, .result = "Жил-был КОТ", .words = 3};
    record_t *rs[] = {&r};
    CHECK_INT(t->ops->docs_create_completed(t->c, rs, NULL, 1), STORE_OK);
    if (!pg) {
        store_sqlite_index_hold(t->s, true);
        while (store_sqlite_index_now(t->c, 1000) > 0)
            ; /* the old index held every record */
    }
    CHECK(raw_sql(t, url, before_unicode[pg]));
    char err[256] = "";
    ctx_t n = *t;
    n.s = store_open(url, err, sizeof(err));
    n.c = n.s ? store_conn(n.s, err, sizeof(err)) : NULL;
    CHECK_MSG(n.c != NULL, "store_open after the old schema: %s", err);
    if (n.c)
        CHECK_INT(n.c->ops->migrate(n.c), STORE_OK); /* as a server's start does */
    if (n.c) {
        list_query_t q = query(uid);
        q.sort_by_name = q.asc = true;
        EXPECT_NAMES(&n, KIND_DOC, &q, "apple pie", "Ärger", "STRASSE", "tale", "zebra", "Zürich",
                     "Ωmega", "Кот", "кот дома");
        EXPECT_NAMES(&n, KIND_IMG, &q, "apple pie", "Ärger", "STRASSE", "zebra", "Zürich", "Ωmega",
                     "Кот", "кот дома");
        for (int i = 0; i < 2; i++) {
            rec_kind_t kind = i ? KIND_IMG : KIND_DOC;
            q.search = "КОТ";
            EXPECT_NAMES(&n, kind, &q, "Кот", "кот дома");
            q.search = "ß";
            EXPECT_NAMES(&n, kind, &q, "STRASSE");
            q.search = "äRG";
            EXPECT_NAMES(&n, kind, &q, "Ärger");
        }
        q.search = "кот";
        q.search_result = true;
        EXPECT_NAMES(&n, KIND_DOC, &q, "tale");
        /* a record changed after the migration is searched by its new name */
        q = query(uid);
        q.search = "ωMEGA";
        record_list_t l = {0};
        CHECK_INT(n.ops->record_list(n.c, KIND_DOC, &q, &n.a, &l), STORE_OK);
        CHECK_INT(l.n, 1);
        if (l.n == 1) {
            record_patch_t p = {.name = "ΣΊΣΥΦΟΣ", .words = -1, .favorite = -1};
            record_t u = {0};
            CHECK_INT(n.ops->record_update(n.c, KIND_DOC, uid, l.items[0].id, &p, &n.a, &u),
                      STORE_OK);
            q.search = "σίσυφοσ";
            EXPECT_NAMES(&n, KIND_DOC, &q, "ΣΊΣΥΦΟΣ");
        }
    }
    t->a = n.a;
    store_close(n.s);
    if (!pg)
        store_sqlite_index_hold(t->s, false);
}

/* Quota holds (store_quota_hold, API.md §19): far from the limit each fits exactly
 * (pictures), near it one at a time; a hold ends when released, when its record has no
 * job left, or unbound when it expires; users and kinds apart; a user's deletion
 * removes them. */
static void test_quota_holds(ctx_t *t)
{
    user_info_t u, v;
    CHECK_INT(t->ops->user_create(t->c, "quota-q", 1000, 5, &t->a, &u), STORE_OK);
    CHECK_INT(t->ops->user_create(t->c, "quota-r", -1, 5, &t->a, &v), STORE_OK);
    usage_counts_t add = {9, 2, 0, 0};
    CHECK_INT(t->ops->usage_add(t->c, u.id, "2026-11", &add), STORE_OK);
    int64_t now = now_us(), later = now + 60000000;
    quota_hold_t h = {.user_id = u.id, .kind = KIND_IMG, .period = "2026-11", .units = 1,
                      .limit = 5, .now_us = now, .expires_us = later};
    int64_t ids[4], id, used;
    for (int i = 0; i < 3; i++) { /* 2 used: room for 3 pictures */
        CHECK_INT(t->ops->quota_hold(t->c, &h, &ids[i], &used), STORE_OK);
        CHECK(ids[i] > 0);
        CHECK_INT(used, 2);
    }
    CHECK_INT(t->ops->quota_hold(t->c, &h, &id, &used), STORE_OK);
    CHECK_INT(id, 0);
    CHECK_INT(used, 2);
    quota_hold_t other = h; /* another user; another kind: apart */
    other.user_id = v.id;
    CHECK_INT(t->ops->quota_hold(t->c, &other, &id, &used), STORE_OK);
    CHECK(id > 0);
    CHECK_INT(used, 0);
    other = h;
    other.kind = KIND_DOC;
    other.units = 100;
    other.limit = 1000;
    CHECK_INT(t->ops->quota_hold(t->c, &other, &ids[3], &used), STORE_OK);
    CHECK(ids[3] > 0);
    CHECK_INT(used, 9);
    /* released: room for one */
    CHECK_INT(t->ops->quota_hold_end(t->c, ids[0], 0), STORE_OK);
    CHECK_INT(t->ops->quota_hold(t->c, &h, &ids[0], &used), STORE_OK);
    CHECK(ids[0] > 0);
    CHECK_INT(t->ops->quota_hold(t->c, &h, &id, &used), STORE_OK);
    CHECK_INT(id, 0);
    /* bound to a record with a job: counts (no expiry); its job gone: ended */
    int64_t rec = make_img(t, u.id, "held", "1024x1024", NULL, 0);
    CHECK_INT(t->ops->quota_hold_end(t->c, ids[1], rec), STORE_OK);
    quota_hold_t late = h; /* every unbound hold expired by now */
    late.now_us = later + 1;
    late.expires_us = later + 60000000;
    CHECK_INT(t->ops->quota_hold(t->c, &late, &id, &used), STORE_OK);
    CHECK(id > 0); /* the two unbound ones expired: 2 used + the bound one + this */
    CHECK_INT(t->ops->quota_hold(t->c, &late, &ids[2], &used), STORE_OK);
    CHECK(ids[2] > 0);
    CHECK_INT(t->ops->quota_hold(t->c, &late, &ids[0], &used), STORE_OK);
    CHECK_INT(ids[0], 0); /* 2 + 3 held */
    const char *key;
    CHECK_INT(delete_one(t->ops, t->c, KIND_IMG, u.id, rec, &t->a, &key), STORE_OK);
    CHECK_INT(t->ops->quota_hold(t->c, &late, &ids[0], &used), STORE_OK);
    CHECK(ids[0] > 0); /* the record's job is gone: its hold ended */
    /* near the limit: one at a time whatever its units; used up: refused */
    add = (usage_counts_t){990, 0, 0, 0};
    CHECK_INT(t->ops->usage_add(t->c, u.id, "2026-11", &add), STORE_OK);
    CHECK_INT(t->ops->quota_hold_end(t->c, ids[3], 0), STORE_OK);
    other.now_us = late.now_us;
    other.expires_us = late.expires_us;
    CHECK_INT(t->ops->quota_hold(t->c, &other, &ids[3], &used), STORE_OK);
    CHECK(ids[3] > 0);
    CHECK_INT(used, 999);
    CHECK_INT(t->ops->quota_hold(t->c, &other, &id, &used), STORE_OK);
    CHECK_INT(id, 0);
    CHECK_INT(t->ops->quota_hold_end(t->c, ids[3], 0), STORE_OK);
    add = (usage_counts_t){1, 0, 0, 0};
    CHECK_INT(t->ops->usage_add(t->c, u.id, "2026-11", &add), STORE_OK);
    CHECK_INT(t->ops->quota_hold(t->c, &other, &id, &used), STORE_OK);
    CHECK_INT(id, 0);
    CHECK_INT(used, 1000);
    /* the user's deletion removes its holds; a gone user holds nothing */
    user_removed_t gone;
    CHECK_INT(t->ops->user_delete(t->c, u.id, &t->a, &gone), STORE_OK);
    CHECK_INT(t->ops->quota_hold(t->c, &late, &id, &used), STORE_NOTFOUND);
    CHECK_INT(id, 0);
    CHECK_INT(t->ops->user_delete(t->c, v.id, &t->a, &gone), STORE_OK);
}

static void run_suite(const char *url)
{
    char err[256] = "";
    ctx_t t = {0};
    arena_init(&t.a);
    t.s = store_open(url, err, sizeof(err));
    CHECK_MSG(t.s != NULL, "store_open: %s", err);
    if (!t.s)
        return;
    t.c = store_conn(t.s, err, sizeof(err));
    CHECK_MSG(t.c != NULL, "store_conn: %s", err);
    if (t.c) {
        t.ops = t.c->ops;
        CHECK(store_conn(t.s, err, sizeof(err)) == t.c);
        printf("store suite on %s\n", t.ops->name);
        test_migrate(&t);
        test_keys(&t);
        test_users_usage(&t);
        test_quota_holds(&t);
        test_templates(&t);
        test_documents(&t);
        test_images(&t);
        test_isolation(&t);
        test_search(&t);
        test_search_property(&t, url);
        test_image_filters(&t);
        test_sort(&t);
        test_pages(&t);
        test_pages_property(&t);
        drain_jobs(&t);
        test_jobs_basic(&t);
        test_regenerated(&t);
        test_revision_texts(&t);
        test_job_progress(&t);
        test_jobs_lease(&t);
        test_jobs_concurrent(&t);
        test_rate(&t);
        test_idem(&t);
        test_docs_completed(&t);
        test_updated_moves_forward(&t, url);
        test_writer(&t);
        test_unicode_migration(&t, url);
    }
    arena_free(&t.a);
    store_close(t.s);
}

/* Removes a SQLite database file with its WAL and shared-memory files. */
static void remove_db(const char *path)
{
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
        char f[300];
        snprintf(f, sizeof(f), "%s%s", path, suffixes[i]);
        unlink(f);
    }
}

/* ---- SQLite: background checkpoints ------------------------------------------------------ */

static store_checkpoint_stats_t ckpt_stats(store_t *s)
{
    store_checkpoint_stats_t st = {0};
    CHECK(store_sqlite_checkpoint_stats(s, &st));
    return st;
}

/* The checkpoint sequence number in the WAL file's header (big-endian, bytes 12-15):
 * SQLite adds one each time the WAL starts over. -1 when unreadable. */
static int64_t wal_sequence(const char *db_path)
{
    char f[300];
    snprintf(f, sizeof(f), "%s-wal", db_path);
    unsigned char h[16];
    FILE *fp = fopen(f, "rb");
    size_t n = fp ? fread(h, 1, sizeof(h), fp) : 0;
    if (fp)
        fclose(fp);
    if (n != sizeof(h))
        return -1;
    return (int64_t)h[12] << 24 | (int64_t)h[13] << 16 | (int64_t)h[14] << 8 | h[15];
}

/* Commits one finished document whose text fills about two pages. */
static void ckpt_commit(store_conn_t *c, int64_t uid, int i, const char *text)
{
    char name[32];
    snprintf(name, sizeof(name), "ck %d", i);
    record_t r = {.kind = KIND_DOC, .user_id = uid, .name = name, .prompt = "p",
                  .creativity = 0.5, .template_id = 1, .result = text, .words = 1};
    record_t *rs[] = {&r};
    CHECK_INT(c->ops->docs_create_completed(c, rs, NULL, 1), STORE_OK);
}

static void test_checkpoints(const char *dir)
{
    /* a commit here writes about 2x the pages it did before the search index
     * (migration 3), so the threshold is twice what it was */
    enum { PAGES = 128, N1 = 400 };
    char path[256];
    snprintf(path, sizeof(path), "%s/ckpt.db", dir);
    char err[256];
    store_t *s = store_open(path, err, sizeof(err));
    CHECK(s != NULL);
    if (!s)
        return;
    store_sqlite_checkpoint_pages(s, PAGES);
    store_conn_t *c = store_conn(s, err, sizeof(err));
    int64_t uid = 0;
    if (!c || c->ops->migrate(c) != STORE_OK || c->ops->user_ensure(c, "ck", &uid) != STORE_OK) {
        CHECK_MSG(false, "cannot set up %s", path);
        store_close(s);
        return;
    }
    char *text = xmalloc(7001);
    unsigned lcg = 7; /* letters at random: deflate (sqlite_text.c) leaves ~4 KB of them */
    for (int i = 0; i < 7000; i++) {
        lcg = lcg * 1103515245u + 12345u;
        text[i] = (char)('a' + (lcg >> 16) % 26);
    }
    text[7000] = '\0';

    /* several pages a commit (a 7 KB text spills into overflow pages), thousands in
     * all: the thread copies them, and no commit waits for that */
    for (int i = 0; i < N1; i++) {
        ckpt_commit(c, uid, i, text);
        sleep_ms(3);
    }
    store_checkpoint_stats_t st = ckpt_stats(s);
    CHECK_MSG(st.background >= 2, "background %lu", st.background);
    /* none, unless one sync of the thread stalled for the ~200 ms of 64 commits (while
     * it syncs, a commit's attempt answers BUSY and is not counted). How long the WAL
     * got is not checked: that depends on how long the thread's syncs take (seconds,
     * on a disk busy with something else, and then it holds all written here). */
    CHECK_MSG(st.self <= 1, "%lu whole checkpoints ran in a committing thread", st.self);

    /* commits back to back, as under load: each run of the thread ends with more
     * committed meanwhile, so the WAL can start over only when a commit copies the
     * small last part itself (finish); then the same connection's next transaction
     * starts it over. (How long the WAL gets meanwhile depends on how long one run of
     * the thread takes to sync, so it is not checked here.) */
    int n2 = 0;
    double t0 = mono_s();
    const unsigned long finish0 = st.finish; /* the check is on the increase */
    while (ckpt_stats(s).finish < finish0 + 3 && mono_s() - t0 < 20 * test_slow())
        ckpt_commit(c, uid, N1 + n2++, text);
    st = ckpt_stats(s);
    CHECK_MSG(st.finish >= finish0 + 3, "background %lu, finish %lu (was %lu), self %lu after %d commits",
              st.background, st.finish, finish0, st.self, n2);
    CHECK(n2 > 0);

    /* a reader holding its snapshot keeps the thread from copying past it: the WAL
     * grows, and at four times the threshold the committing thread tries itself */
    sqlite3 *rd = NULL;
    CHECK_INT(sqlite3_open_v2(path, &rd, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_exec(rd, "BEGIN; SELECT count(*) FROM documents;", NULL, NULL, NULL),
              SQLITE_OK);
    for (int i = 0; i < 5 * PAGES / 2; i++)
        ckpt_commit(c, uid, N1 + n2 + i, text);
    st = ckpt_stats(s);
    CHECK_MSG(st.self >= 1, "self %lu", st.self);
    CHECK_INT(sqlite3_exec(rd, "COMMIT;", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(rd);
    /* released: the next rounds catch up and the WAL starts over, again and again
     * (through a commit's own checkpoint, a finish, or the thread copying everything
     * between two commits: whichever comes first) */
    int64_t seq0 = wal_sequence(path), seq = seq0;
    CHECK(seq0 >= 0);
    for (int i = 0; i < 2000 && seq < seq0 + 2; i++) {
        ckpt_commit(c, uid, 10000 + i, "short");
        sleep_ms(2);
        seq = wal_sequence(path);
    }
    CHECK_MSG(seq >= seq0 + 2, "the WAL started over %lld times after the reader left",
              (long long)(seq - seq0));

    arena_t a;
    arena_init(&a);
    list_query_t q = {.user_id = uid, .favorite = -1, .per_page = 10, .page = 1};
    record_list_t l = {0};
    CHECK_INT(c->ops->record_list(c, KIND_DOC, &q, &a, &l), STORE_OK);
    int64_t total = l.total;
    CHECK(total >= N1 + n2 + 5 * PAGES / 2);
    store_close(s);

    /* everything committed is there for the next process */
    s = store_open(path, err, sizeof(err));
    c = s ? store_conn(s, err, sizeof(err)) : NULL;
    CHECK(c != NULL);
    if (c) {
        CHECK_INT(c->ops->record_list(c, KIND_DOC, &q, &a, &l), STORE_OK);
        CHECK_INT(l.total, total);
        record_t g = {0};
        CHECK_INT(c->ops->record_get(c, KIND_DOC, uid, 1, &a, &g), STORE_OK);
        CHECK_STR(g.result, text);
    }
    store_close(s);
    arena_free(&a);
    free(text);
    remove_db(path);
}

/* The rows of documents_result_fts holding trigram (three characters), read by a
 * connection of its own. */
static int fts_hits(const char *path, const char *trigram)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM documents_result_fts WHERE "
                               "documents_result_fts MATCH ?1", -1, &st, NULL) == SQLITE_OK) {
        char m[16];
        snprintf(m, sizeof(m), "\"%s\"", trigram);
        sqlite3_bind_text(st, 1, m, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* A new text of an indexed document is indexed by the index thread (migration 17):
 * meanwhile searches find it by its new text only, and its block's row (migration 19:
 * a and b share one) then holds the new text's trigrams as well as the old ones, which
 * stay (a deleted document's too) — what a search, whose index is a superset checked row
 * by row, cannot show: it finds each text by what it says now, and nothing else. */
/* Opens the SQLite store at path into t (arena, store, connection, ops), migrated, its
 * index thread held (the test runs the batches); false when it cannot. */
static bool ctx_open_held(ctx_t *t, const char *path)
{
    char err[256];
    *t = (ctx_t){0};
    arena_init(&t->a);
    t->s = store_open(path, err, sizeof(err));
    t->c = t->s ? store_conn(t->s, err, sizeof(err)) : NULL;
    CHECK_MSG(t->c != NULL, "store: %s", err);
    if (!t->c)
        return false;
    t->ops = t->c->ops;
    store_sqlite_index_hold(t->s, true);
    CHECK_INT(store_migrate(t->c), STORE_OK);
    return true;
}

static void test_search_changed(const char *dir)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/changed.db", dir);
    ctx_t t;
    if (!ctx_open_held(&t, path))
        return;
    int64_t me;
    CHECK_INT(store_user_ensure(t.c, "changed", &me), STORE_OK);
    int64_t a = make_doc(&t, me, "a", 1, 1), b = make_doc(&t, me, "b", 1, 1);
    record_patch_t p = {.result = "alpha kestrel", .words = 2, .favorite = -1};
    record_t u;
    CHECK_INT(t.ops->record_update(t.c, KIND_DOC, me, a, &p, &t.a, &u), STORE_OK);
    p.result = "alpha heron";
    CHECK_INT(t.ops->record_update(t.c, KIND_DOC, me, b, &p, &t.a, &u), STORE_OK);
    while (store_sqlite_index_now(t.c, 100) > 0)
        ;
    CHECK_INT(fts_hits(path, "kes"), 1);
    CHECK_INT(fts_hits(path, "her"), 1);
    CHECK_INT(fts_hits(path, "alp"), 1); /* one block */
    /* new texts: the index still holds the old ones, searches do not see them */
    p.result = "omega kestrel";
    CHECK_INT(t.ops->record_update(t.c, KIND_DOC, me, a, &p, &t.a, &u), STORE_OK);
    p.result = "omega falcon";
    CHECK_INT(t.ops->record_update(t.c, KIND_DOC, me, a, &p, &t.a, &u), STORE_OK);
    p.result = "omega heron";
    CHECK_INT(t.ops->record_update(t.c, KIND_DOC, me, b, &p, &t.a, &u), STORE_OK);
    CHECK_INT(fts_hits(path, "alp"), 1);
    CHECK_INT(fts_hits(path, "ome"), 0);
    CHECK_INT(store_sqlite_index_pending(t.c), 2);
    list_query_t q = query(me);
    q.search_result = true;
    q.search = "alpha";
    EXPECT_NONE(&t, KIND_DOC, &q);
    q.search = "kestrel";
    EXPECT_NONE(&t, KIND_DOC, &q);
    q.search = "omega";
    EXPECT_NAMES(&t, KIND_DOC, &q, "b", "a");
    q.search = "falcon";
    EXPECT_NAMES(&t, KIND_DOC, &q, "a");
    /* deleted while its new text waits: nothing left to index for it, its trigrams stay */
    const char *mk = NULL;
    CHECK_INT(delete_one(t.ops, t.c, KIND_DOC, me, b, &t.a, &mk), STORE_OK);
    CHECK_INT(fts_hits(path, "her"), 1);
    CHECK_INT(store_sqlite_index_pending(t.c), 1);
    q.search = "heron";
    EXPECT_NONE(&t, KIND_DOC, &q);
    while (store_sqlite_index_now(t.c, 100) > 0)
        ;
    CHECK_INT(store_sqlite_index_pending(t.c), 0);
    CHECK_INT(fts_hits(path, "alp"), 1);
    CHECK_INT(fts_hits(path, "kes"), 1);
    CHECK_INT(fts_hits(path, "fal"), 1);
    CHECK_INT(fts_hits(path, "ome"), 1);
    q.search = "alpha";
    EXPECT_NONE(&t, KIND_DOC, &q);
    q.search = "falcon";
    EXPECT_NAMES(&t, KIND_DOC, &q, "a");
    q.search = "heron";
    EXPECT_NONE(&t, KIND_DOC, &q);
    q.search = "omega";
    EXPECT_NAMES(&t, KIND_DOC, &q, "a");
    q.search = "kestrel";
    EXPECT_NONE(&t, KIND_DOC, &q);
    store_sqlite_index_hold(t.s, false);
    arena_free(&t.a);
    store_close(t.s);
    remove_db(path);
}

/* Creates n completed documents of user me named <prefix><i>, the i-th with the text
 * text(i) writes; their ids in ids. */
static void make_texts(ctx_t *t, int64_t me, int n, const char *prefix,
                       void (*text)(int i, char *out, size_t size), int64_t *ids)
{
    for (int i = 0; i < n; i++) {
        char name[16], body[64];
        snprintf(name, sizeof(name), "%s%d", prefix, i);
        text(i, body, sizeof(body));
        record_t r = {.kind = KIND_DOC, .user_id = me, .name = name, .prompt = "p",
                      .creativity = 0.5, .template_id = 1, .result = body, .words = 5};
        record_t *rs[] = {&r};
        CHECK_INT(t->ops->docs_create_completed(t->c, rs, NULL, 1), STORE_OK);
        ids[i] = r.id;
    }
}

/* Opens the store at path (ctx_open_held) for user name, and a result search of search
 * by that user into *q; false when it cannot. */
static bool open_kestrels(ctx_t *t, const char *path, const char *name, const char *search,
                          int64_t *me, list_query_t *q)
{
    if (!ctx_open_held(t, path))
        return false;
    CHECK_INT(store_user_ensure(t->c, name, me), STORE_OK);
    *q = query(*me);
    q->search_result = true;
    q->search = search;
    return true;
}

static void heron_text(int i, char *out, size_t size)
{
    snprintf(out, size, "note %d on a %s", i, i % 7 == 3 ? "kestrel" : "heron");
}

/* one in ten holds `kestrel`, the others each of its trigrams but none of its pieces of
 * four letters */
static void kestrel_text(int i, char *out, size_t size)
{
    snprintf(out, size, i % 10 == 5 ? "a kestrel at dawn %d" : "kes est str tre rel note %d", i);
}

/* A database whose results' index has a row per document (before migration 19) is
 * converted when a store opens it: the index emptied, searches exact while the thread
 * refills it, then one row per block of ids holding a matching text. */
static void test_block_migration(const char *dir)
{
    enum { N = 80, BLOCK_BITS = 5 /* sqlite_int.h SQ_BLOCK_BITS */ };
    char path[256];
    snprintf(path, sizeof(path), "%s/blocks.db", dir);
    int64_t ids[N], want[N];
    size_t nwant = 0;
    for (int round = 0; round < 2; round++) {
        ctx_t t;
        int64_t me;
        list_query_t q;
        if (!open_kestrels(&t, path, "blocks", "KESTREL", &me, &q))
            return;
        if (round == 0) {
            make_texts(&t, me, N, "d", heron_text, ids);
            for (int i = N - 1; i >= 0; i--)
                if (i % 7 == 3)
                    want[nwant++] = ids[i];
            while (store_sqlite_index_now(t.c, 1000) > 0)
                ;
        } else {
            /* opened again: migration 19 ran, the index is empty, a search scans */
            CHECK_INT(fts_hits(path, "kes"), 0);
            expect_ids(&t, KIND_DOC, &q, want, nwant, (int64_t)nwant, __LINE__);
            while (store_sqlite_index_now(t.c, 1000) > 0)
                ;
            int blocks = 0;
            for (size_t i = 0; i < nwant; i++)
                blocks += i == 0 || want[i] >> BLOCK_BITS != want[i - 1] >> BLOCK_BITS;
            CHECK_INT(fts_hits(path, "kes"), blocks);
            CHECK_INT(fts_hits(path, "her"), (int)((ids[N - 1] >> BLOCK_BITS) -
                                                   (ids[0] >> BLOCK_BITS) + 1));
        }
        expect_ids(&t, KIND_DOC, &q, want, nwant, (int64_t)nwant, __LINE__);
        q.asc = true;
        q.per_page = 2;
        q.page = 2;
        int64_t asc[2] = {want[nwant - 3], want[nwant - 4]};
        expect_ids(&t, KIND_DOC, &q, asc, 2, (int64_t)nwant, __LINE__);
        store_sqlite_index_hold(t.s, false);
        arena_free(&t.a);
        store_close(t.s);
        if (round > 0)
            continue;
        /* the results' index as it was before migration 19 */
        sqlite3 *db = NULL;
        CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
        CHECK_INT(sqlite3_exec(db, "DELETE FROM schema_migrations WHERE version = 19;"
                                   "INSERT INTO documents_result_fts(documents_result_fts)"
                                   "  VALUES ('delete-all');"
                                   "INSERT INTO documents_result_fts(rowid, sresult)"
                                   "  SELECT id, ink_fold(result) FROM documents;",
                               NULL, NULL, NULL),
                  SQLITE_OK);
        sqlite3_close(db);
        CHECK_INT(fts_hits(path, "kes"), (int)(nwant));
    }
    CHECK_INT(fts_hits(path, "kes") > 0, 1);
    remove_db(path);
}

/* The results' index's second level (migration 33, sqlite_filter.c): how many of the
 * documents the filters let through for the folded search needle (a document with no
 * filter row passes, as in a search). */
static int filter_passes(const char *path, const char *needle)
{
    uint8_t mask[SQ_FILTER_BYTES];
    bool masked = sq_filter_needle(needle, mask);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM documents LEFT JOIN search_filters"
                               " ON block = id >> " SQ_BLOCK_BITS_SQL
                               " WHERE ink_filter_may(bits, id, ?1)", -1, &st, NULL) == SQLITE_OK) {
        if (masked)
            sqlite3_bind_blob(st, 1, mask, SQ_FILTER_BYTES, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static int sql_count(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* Every document of a block holds all of `kestrel`'s trigrams between them, one in ten
 * the word: the filters let through those only (the others have no four letters of it
 * in a row), a changed text's pieces are added to its filter, a block without its row
 * is read whole, and migration 33 fills the table of an existing database. The
 * searches' answers are the same throughout (and in test_search_property). */
static void test_search_filters(const char *dir)
{
    enum { N = 96 };
    char path[256];
    snprintf(path, sizeof(path), "%s/filters.db", dir);
    int64_t ids[N], want[N + 1];
    size_t nwant = 0;
    for (int round = 0; round < 2; round++) {
        ctx_t t;
        int64_t me;
        list_query_t q;
        if (!open_kestrels(&t, path, "filters", "Kestrel", &me, &q))
            return;
        if (round == 0) {
            make_texts(&t, me, N, "f", kestrel_text, ids);
            while (store_sqlite_index_now(t.c, 1000) > 0)
                ;
            for (int i = N - 1; i >= 0; i--)
                if (i % 10 == 5)
                    want[nwant++] = ids[i];
            CHECK_INT(filter_passes(path, "kestrel"), (int)nwant);
            CHECK_INT(filter_passes(path, "kes est"), N); /* no four letters: not filtered */
            expect_ids(&t, KIND_DOC, &q, want, nwant, (int64_t)nwant, __LINE__);
            /* a new text: its pieces join the document's filter when it is indexed */
            record_patch_t p = {.result = "the kestrel flew", .words = 3, .favorite = -1};
            record_t u;
            CHECK_INT(t.ops->record_update(t.c, KIND_DOC, me, ids[0], &p, &t.a, &u), STORE_OK);
            want[nwant++] = ids[0];
            expect_ids(&t, KIND_DOC, &q, want, nwant, (int64_t)nwant, __LINE__);
            while (store_sqlite_index_now(t.c, 1000) > 0)
                ;
            CHECK_INT(filter_passes(path, "kestrel"), (int)nwant);
        } else {
            /* opened again: migration 33 filled the table from the texts */
            CHECK_INT(filter_passes(path, "kestrel"), (int)nwant);
        }
        CHECK_INT(sql_count(path, "SELECT count(*) FROM search_filters"),
                  (int)((ids[N - 1] >> SQ_BLOCK_BITS) - (ids[0] >> SQ_BLOCK_BITS) + 1));
        expect_ids(&t, KIND_DOC, &q, want, nwant, (int64_t)nwant, __LINE__);
        q.asc = true;
        q.per_page = 3;
        q.page = 2;
        int64_t asc[3] = {want[nwant - 4], want[nwant - 5], want[nwant - 6]};
        expect_ids(&t, KIND_DOC, &q, asc, 3, (int64_t)nwant, __LINE__);
        store_sqlite_index_hold(t.s, false);
        arena_free(&t.a);
        store_close(t.s);
        sqlite3 *db = NULL;
        CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
        if (round == 0) /* the schema of before migration 33 */
            CHECK_INT(sqlite3_exec(db, "DELETE FROM schema_migrations WHERE version = 33;"
                                       "DROP TABLE search_filters;", NULL, NULL, NULL),
                      SQLITE_OK);
        else /* a block without its row: its documents are all read and checked */
            CHECK_INT(sqlite3_exec(db, "DELETE FROM search_filters WHERE block = (SELECT"
                                       " min(block) FROM search_filters)", NULL, NULL, NULL),
                      SQLITE_OK);
        sqlite3_close(db);
    }
    ctx_t t;
    int64_t me;
    list_query_t q;
    if (open_kestrels(&t, path, "filters", "kestrel", &me, &q)) {
        expect_ids(&t, KIND_DOC, &q, want, nwant, (int64_t)nwant, __LINE__);
        CHECK_INT(filter_passes(path, "kestrel") > (int)nwant, 1);
        arena_free(&t.a);
        store_close(t.s);
    }
    remove_db(path);
}

static void run_sqlite(void)
{
    char dir[] = "/tmp/inkwell-store-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(false, "mkdtemp failed");
        return;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/inkwell.db", dir);
    run_suite(path);
    test_search_changed(dir);
    test_block_migration(dir);
    test_search_filters(dir);
    test_checkpoints(dir);
    remove_db(path);
    rmdir(dir);
}

/* ---- PostgreSQL: a fresh database per run ---------------------------------------------- */

static bool pg_admin(const char *admin_url, const char *sql)
{
    PGconn *pg = PQconnectdb(admin_url);
    bool ok = PQstatus(pg) == CONNECTION_OK;
    if (!ok) {
        fprintf(stderr, "postgres: cannot connect with INKWELL_TEST_PG_URL: %s",
                PQerrorMessage(pg));
    } else {
        PGresult *r = PQexec(pg, sql);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            fprintf(stderr, "postgres: %s: %s", sql, PQerrorMessage(pg));
        PQclear(r);
    }
    PQfinish(pg);
    return ok;
}

/* The admin URL with its database (the path after host[:port]) replaced by name. */
static char *pg_url_with_db(const char *admin_url, const char *name)
{
    const char *scheme = strstr(admin_url, "://");
    const char *host = scheme ? scheme + 3 : admin_url;
    const char *path = strchr(host, '/');
    const char *query = strchr(host, '?');
    if (query && path && path > query)
        path = NULL;
    size_t head = path ? (size_t)(path - admin_url)
                       : query ? (size_t)(query - admin_url) : strlen(admin_url);
    buf_t b;
    buf_init(&b);
    buf_append(&b, admin_url, head);
    buf_printf(&b, "/%s%s", name, query ? query : "");
    return buf_steal(&b);
}

static void run_postgres(const char *admin_url)
{
    char name[64], hex[17], sql[128];
    random_hex(hex, 8);
    snprintf(name, sizeof(name), "inkwell_test_%d_%s", (int)getpid(), hex);
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
    if (!pg_admin(admin_url, sql)) {
        CHECK_MSG(false, "cannot create the test database");
        return;
    }
    char *url = pg_url_with_db(admin_url, name);
    run_suite(url);
    free(url);
    snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", name);
    CHECK(pg_admin(admin_url, sql));
}

int main(void)
{
    log_level = LOG_WARN;
    static const struct {
        const char *admin, *want;
    } urls[] = {
        {"postgres://u@h:5/postgres", "postgres://u@h:5/x"},
        {"postgres://u@h:5", "postgres://u@h:5/x"},
        {"postgresql://u@h/postgres?sslmode=disable", "postgresql://u@h/x?sslmode=disable"},
    };
    for (size_t i = 0; i < ARRAY_LEN(urls); i++) {
        char *u = pg_url_with_db(urls[i].admin, "x");
        CHECK_STR(u, urls[i].want);
        free(u);
    }
    run_sqlite();
    const char *pg = getenv("INKWELL_TEST_PG_URL");
    CHECK_MSG(pg && pg[0], "INKWELL_TEST_PG_URL is not set: the PostgreSQL suite cannot run "
                           "(tests/run.sh starts a cluster and sets it)");
    if (pg && pg[0])
        run_postgres(pg);
    TEST_DONE();
}
