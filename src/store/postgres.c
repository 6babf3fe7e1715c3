/* postgres.c — the PostgreSQL backend of store.h, over libpq.
 *
 * How the parts fit:
 *  - pg_conn_t is one libpq connection (one per thread, cached by store.c). Every
 *    operation starts with pg_ready(), which reconnects a broken connection (at most
 *    once every PG_RETRY_S seconds) or answers STORE_UNAVAILABLE.
 *  - Every statement is a prepared statement with parameters. The fixed ones live in
 *    stmts[] and are prepared on first use; list queries are assembled from fixed
 *    fragments chosen by the query's enum/bool fields (never from user text) and
 *    prepared under a name derived from that choice. A reconnect forgets them all.
 *  - pg_fail() sorts errors: connection-level → STORE_UNAVAILABLE (and the connection
 *    is marked broken), unique violation → STORE_CONFLICT, else STORE_ERROR, logged
 *    without user data.
 *  - migrate() applies the numbered migrations of migrations[] inside one transaction
 *    holding an advisory lock, so processes starting at once are safe.
 * Several server processes share the job queue: job_claim uses FOR UPDATE SKIP LOCKED. */
#include "store/pg_listen.h"
#include "store/store_int.h"

#include "core/log.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG_RETRY_S 0.5                      /* minimum pause between reconnect attempts */
#define PG_MIGRATE_LOCK "727370514152313"   /* pg_advisory_xact_lock key of migrate() */
#define PG_CLAIM_TRIES 8                    /* orphan jobs skipped per claim at most */

/* ---- schema ---------------------------------------------------------------------- */

/* Numbered migrations; version = index + 1. Never edit one that has shipped: append. */
static const char *const migrations[] = {
    /* 1: the initial schema */
    "CREATE TABLE users ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  created_us BIGINT NOT NULL);"
    "CREATE TABLE api_keys ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id),"
    "  hash TEXT NOT NULL UNIQUE,"
    "  prefix TEXT NOT NULL,"
    "  created_us BIGINT NOT NULL,"
    "  revoked_us BIGINT);" /* NULL = active */
    "CREATE INDEX api_keys_user ON api_keys (user_id);"
    "CREATE TABLE documents ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id),"
    "  name TEXT NOT NULL,"
    "  favorite BOOLEAN NOT NULL DEFAULT false,"
    "  state TEXT NOT NULL CHECK (state IN ('queued', 'generating', 'completed', 'failed')),"
    "  error TEXT,"
    "  created_us BIGINT NOT NULL,"
    "  updated_us BIGINT NOT NULL,"
    "  prompt TEXT NOT NULL,"
    "  creativity DOUBLE PRECISION NOT NULL,"
    "  template_id INTEGER NOT NULL,"
    "  result TEXT,"
    "  words BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX documents_user_id ON documents (user_id, id);"
    "CREATE INDEX documents_user_name ON documents (user_id, name COLLATE \"C\", id);"
    "CREATE INDEX documents_user_template ON documents (user_id, template_id, id);"
    "CREATE INDEX documents_user_favorite ON documents (user_id, favorite, id);"
    "CREATE TABLE images ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id),"
    "  name TEXT NOT NULL,"
    "  favorite BOOLEAN NOT NULL DEFAULT false,"
    "  state TEXT NOT NULL CHECK (state IN ('queued', 'generating', 'completed', 'failed')),"
    "  error TEXT,"
    "  created_us BIGINT NOT NULL,"
    "  updated_us BIGINT NOT NULL,"
    "  description TEXT NOT NULL,"
    "  resolution TEXT NOT NULL,"
    "  style TEXT,"
    "  media_key TEXT,"
    "  revised_prompt TEXT);"
    "CREATE INDEX images_user_id ON images (user_id, id);"
    "CREATE INDEX images_user_name ON images (user_id, name COLLATE \"C\", id);"
    "CREATE INDEX images_user_resolution ON images (user_id, resolution, id);"
    "CREATE INDEX images_user_favorite ON images (user_id, favorite, id);"
    "CREATE TABLE jobs ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  kind SMALLINT NOT NULL CHECK (kind IN (0, 1)),"
    "  record_id BIGINT NOT NULL,"
    "  token TEXT," /* NULL until claimed */
    "  lease_until_us BIGINT,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  created_us BIGINT NOT NULL,"
    "  UNIQUE (kind, record_id));"
    "CREATE TABLE rate_hits ("
    "  bucket TEXT NOT NULL,"
    "  \"window\" BIGINT NOT NULL,"
    "  count BIGINT NOT NULL,"
    "  PRIMARY KEY (bucket, \"window\"));",
    /* 2: each user's number of documents and images, kept by a trigger, so that an
     * unfiltered list needs no count(*) over all of the user's rows. */
    "CREATE TABLE record_counts ("
    "  user_id BIGINT NOT NULL,"
    "  kind SMALLINT NOT NULL CHECK (kind IN (0, 1)),"
    "  n BIGINT NOT NULL,"
    "  PRIMARY KEY (user_id, kind));"
    "INSERT INTO record_counts SELECT user_id, 0, count(*) FROM documents GROUP BY user_id;"
    "INSERT INTO record_counts SELECT user_id, 1, count(*) FROM images GROUP BY user_id;"
    "CREATE FUNCTION ink_count_records() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  IF TG_OP = 'INSERT' THEN"
    "    INSERT INTO record_counts (user_id, kind, n) VALUES (NEW.user_id, TG_ARGV[0]::smallint, 1)"
    "    ON CONFLICT (user_id, kind) DO UPDATE SET n = record_counts.n + 1;"
    "  ELSE"
    "    UPDATE record_counts SET n = n - 1 WHERE user_id = OLD.user_id AND kind = TG_ARGV[0]::smallint;"
    "  END IF;"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER documents_count AFTER INSERT OR DELETE ON documents"
    "  FOR EACH ROW EXECUTE FUNCTION ink_count_records('0');"
    "CREATE TRIGGER images_count AFTER INSERT OR DELETE ON images"
    "  FOR EACH ROW EXECUTE FUNCTION ink_count_records('1');",
    /* 3: the text so far of a running generation, for streams served by other
     * processes (records/remote.c); a document's token usage and truncation. */
    "ALTER TABLE jobs ADD COLUMN partial TEXT;"
    "ALTER TABLE documents ADD COLUMN prompt_tokens BIGINT,"
    "  ADD COLUMN completion_tokens BIGINT,"
    "  ADD COLUMN truncated BOOLEAN NOT NULL DEFAULT false;",
    /* 4: the search index: pg_trgm GIN indexes on the searched expression (the
     * contract's folding: lower() under "C" folds A-Z only), which LIKE uses for
     * patterns of three or more characters; PostgreSQL re-checks every candidate
     * row against the LIKE itself. pg_trgm is a trusted extension (PostgreSQL 13+):
     * the database owner may create it. */
    "CREATE EXTENSION IF NOT EXISTS pg_trgm;"
    "CREATE INDEX documents_name_trgm ON documents"
    "  USING gin (lower(name COLLATE \"C\") gin_trgm_ops);"
    "CREATE INDEX documents_result_trgm ON documents"
    "  USING gin (lower(result COLLATE \"C\") gin_trgm_ops);"
    "CREATE INDEX images_name_trgm ON images USING gin (lower(name COLLATE \"C\") gin_trgm_ops);"
    /* each user's version of its records, for the totals cache of store_int.h: every
     * insert, delete and change of a listed or searched column moves it forward */
    "ALTER TABLE record_counts ADD COLUMN version BIGINT NOT NULL DEFAULT 0;"
    "CREATE OR REPLACE FUNCTION ink_count_records() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  IF TG_OP = 'INSERT' THEN"
    "    INSERT INTO record_counts (user_id, kind, n, version)"
    "    VALUES (NEW.user_id, TG_ARGV[0]::smallint, 1, 1) ON CONFLICT (user_id, kind)"
    "    DO UPDATE SET n = record_counts.n + 1, version = record_counts.version + 1;"
    "  ELSIF TG_OP = 'DELETE' THEN"
    "    UPDATE record_counts SET n = n - 1, version = version + 1"
    "    WHERE user_id = OLD.user_id AND kind = TG_ARGV[0]::smallint;"
    "  ELSE"
    "    UPDATE record_counts SET version = version + 1"
    "    WHERE user_id = NEW.user_id AND kind = TG_ARGV[0]::smallint;"
    "  END IF;"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER documents_count_upd AFTER UPDATE OF name, result, favorite, template_id"
    "  ON documents FOR EACH ROW EXECUTE FUNCTION ink_count_records('0');"
    "CREATE TRIGGER images_count_upd AFTER UPDATE OF name, favorite, resolution, style"
    "  ON images FOR EACH ROW EXECUTE FUNCTION ink_count_records('1');",
    /* 5 (safety): the rate limit's GCRA state, one theoretical arrival time per bucket,
     * instead of fixed-window counts. */
    "DROP TABLE rate_hits;"
    "CREATE TABLE rate_tat ("
    "  bucket TEXT PRIMARY KEY,"
    "  tat_us BIGINT NOT NULL,"
    "  allowed BOOLEAN NOT NULL);",
    /* 6 (safety): idempotency keys (API.md §11); state 0 in progress, 1 done */
    "CREATE TABLE idempotency_keys ("
    "  user_id BIGINT NOT NULL,"
    "  idem_key TEXT NOT NULL,"
    "  digest TEXT NOT NULL,"
    "  token TEXT NOT NULL,"
    "  state SMALLINT NOT NULL,"
    "  status INTEGER,"
    "  location TEXT,"
    "  body TEXT,"
    "  lease_until_us BIGINT NOT NULL,"
    "  expires_us BIGINT NOT NULL,"
    "  PRIMARY KEY (user_id, idem_key));"
    "CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_us);",
};

/* ---- statements ------------------------------------------------------------------ */

#define BUMP(now) STORE_BUMP("GREATEST", now "::bigint")

/* complete/fail: deletes the job while the token matches and updates its record (of
 * the kind the job row names), in one statement: one transaction. The row says whether
 * the job was there. */
#define JOB_FINISH(doc_set, img_set)                                                               \
    "WITH j AS (DELETE FROM jobs WHERE id = $1 AND token = $2 RETURNING kind, record_id),"         \
    " d AS (UPDATE documents t SET " doc_set " FROM j WHERE j.kind = 0 AND t.id = j.record_id"     \
    " RETURNING t.id),"                                                                            \
    " i AS (UPDATE images t SET " img_set " FROM j WHERE j.kind = 1 AND t.id = j.record_id"        \
    " RETURNING t.id)"                                                                             \
    " SELECT count(*) FROM j"

enum {
    S_PING,
    S_MIG_VERSION,
    S_MIG_RECORD,
    S_USER_FIND,
    S_USER_INSERT,
    S_KEY_INSERT,
    S_KEY_AUTH,
    S_KEY_LIST,
    S_KEY_REVOKE,
    S_DOC_INSERT,
    S_IMG_INSERT,
    S_DOC_INSERT_DONE,
    S_JOB_INSERT,
    S_DOC_GET,
    S_IMG_GET,
    S_DOC_UPDATE,
    S_IMG_UPDATE,
    S_DOC_DELETE,
    S_IMG_DELETE,
    S_JOB_PICK,
    S_DOC_CLAIM,
    S_IMG_CLAIM,
    S_JOB_DROP,
    S_JOB_RENEW,
    S_JOB_COMPLETE,
    S_JOB_FAIL,
    S_JOB_COUNT,
    S_JOB_COUNTS,
    S_RATE_HIT,
    S_RATE_PRUNE,
    S_IDEM_TAKE,
    S_IDEM_GET,
    S_IDEM_FINISH,
    S_IDEM_ABORT,
    S_IDEM_PRUNE,
    S_JOB_PROGRESS,
    S_JOB_PARTIAL,
    S_NOTIFY,
    S_MEDIA_KEYS,
    S_COUNT
};

typedef struct {
    const char *name;
    int nparams;
    const char *sql;
} pg_stmt_t;

static const pg_stmt_t stmts[S_COUNT] = {
    [S_JOB_PROGRESS] = {"ink_job_progress", 4,
                        "WITH u AS (UPDATE jobs SET partial = $3 WHERE id = $1 AND token = $2"
                        " RETURNING 1) SELECT pg_notify('" PG_CHANNEL "', $4) FROM u"},
    [S_JOB_PARTIAL] = {"ink_job_partial", 2,
                       "SELECT partial FROM jobs WHERE kind = $1 AND record_id = $2"},
    [S_NOTIFY] = {"ink_notify", 1, "SELECT pg_notify('" PG_CHANNEL "', $1)"},
    [S_PING] = {"ink_ping", 0, "SELECT 1"},
    [S_MIG_VERSION] = {"ink_mig_version", 0,
                       "SELECT COALESCE(max(version), 0) FROM schema_migrations"},
    [S_MIG_RECORD] = {"ink_mig_record", 2,
                      "INSERT INTO schema_migrations (version, applied_us) VALUES ($1, $2)"},
    [S_USER_FIND] = {"ink_user_find", 1, "SELECT id FROM users WHERE name = $1"},
    [S_USER_INSERT] = {"ink_user_insert", 2,
                       "INSERT INTO users (name, created_us) VALUES ($1, $2)"
                       " ON CONFLICT (name) DO NOTHING RETURNING id"},
    [S_KEY_INSERT] = {"ink_key_insert", 4,
                      "INSERT INTO api_keys (user_id, hash, prefix, created_us)"
                      " VALUES ($1, $2, $3, $4) RETURNING id"},
    [S_KEY_AUTH] = {"ink_key_auth", 1,
                    "SELECT user_id, id, hash FROM api_keys WHERE hash = $1 AND revoked_us IS NULL"},
    [S_KEY_LIST] = {"ink_key_list", 0,
                    "SELECT k.id, k.user_id, u.name, k.prefix, k.created_us,"
                    " COALESCE(k.revoked_us, 0)"
                    " FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.id"},
    [S_KEY_REVOKE] = {"ink_key_revoke", 2,
                      "UPDATE api_keys SET revoked_us = COALESCE(revoked_us, $2) WHERE id = $1"},
    [S_DOC_INSERT] = {"ink_doc_insert", 7,
                      "INSERT INTO documents (user_id, name, favorite, state, created_us,"
                      " updated_us, prompt, creativity, template_id, words)"
                      " VALUES ($1, $2, $3, 'queued', $4, $4, $5, $6, $7, 0) RETURNING id"},
    [S_IMG_INSERT] = {"ink_img_insert", 7,
                      "INSERT INTO images (user_id, name, favorite, state, created_us, updated_us,"
                      " description, resolution, style)"
                      " VALUES ($1, $2, $3, 'queued', $4, $4, $5, $6, $7) RETURNING id"},
    [S_DOC_INSERT_DONE] = {"ink_doc_insert_done", 12,
                           "INSERT INTO documents (user_id, name, favorite, state, created_us,"
                           " updated_us, prompt, creativity, template_id, result, words,"
                           " prompt_tokens, completion_tokens, truncated)"
                           " VALUES ($1, $2, $3, 'completed', $4, $4, $5, $6, $7, $8, $9,"
                           " $10, $11, $12)"
                           " RETURNING id"},
    [S_JOB_INSERT] = {"ink_job_insert", 3,
                      "INSERT INTO jobs (kind, record_id, created_us) VALUES ($1, $2, $3)"
                      " RETURNING id"},
    [S_DOC_GET] = {"ink_doc_get", 2,
                   "SELECT " DOC_COLS " FROM documents WHERE user_id = $1 AND id = $2"},
    [S_IMG_GET] = {"ink_img_get", 2,
                   "SELECT " IMG_COLS " FROM images WHERE user_id = $1 AND id = $2"},
    [S_DOC_UPDATE] = {"ink_doc_update", 8,
                      "UPDATE documents SET name = COALESCE($3::text, name),"
                      " result = CASE WHEN $4::boolean THEN $5::text ELSE result END,"
                      " words = CASE WHEN $4::boolean THEN $6::bigint ELSE words END,"
                      " favorite = CASE WHEN $7::int < 0 THEN favorite ELSE $7::int <> 0 END,"
                      " " BUMP("$8") " WHERE user_id = $1 AND id = $2 RETURNING " DOC_COLS},
    [S_IMG_UPDATE] = {"ink_img_update", 5,
                      "UPDATE images SET name = COALESCE($3::text, name),"
                      " favorite = CASE WHEN $4::int < 0 THEN favorite ELSE $4::int <> 0 END,"
                      " " BUMP("$5") " WHERE user_id = $1 AND id = $2 RETURNING " IMG_COLS},
    [S_DOC_DELETE] = {"ink_doc_delete", 2,
                      "WITH r AS (DELETE FROM documents WHERE user_id = $1 AND id = $2"
                      " RETURNING id),"
                      " j AS (DELETE FROM jobs WHERE kind = 0 AND record_id IN (SELECT id FROM r))"
                      " SELECT NULL::text FROM r"},
    [S_IMG_DELETE] = {"ink_img_delete", 2,
                      "WITH r AS (DELETE FROM images WHERE user_id = $1 AND id = $2"
                      " RETURNING id, media_key),"
                      " j AS (DELETE FROM jobs WHERE kind = 1 AND record_id IN (SELECT id FROM r))"
                      " SELECT media_key FROM r"},
    [S_JOB_PICK] = {"ink_job_pick", 3,
                    "UPDATE jobs SET token = $2, lease_until_us = $3, attempts = attempts + 1"
                    " WHERE id = (SELECT id FROM jobs WHERE token IS NULL OR lease_until_us < $1"
                    " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)"
                    " RETURNING id, kind, record_id, attempts"},
    [S_DOC_CLAIM] = {"ink_doc_claim", 2,
                     "UPDATE documents SET state = 'generating', " BUMP("$2") " WHERE id = $1"
                     " RETURNING " DOC_COLS},
    [S_IMG_CLAIM] = {"ink_img_claim", 2,
                     "UPDATE images SET state = 'generating', " BUMP("$2") " WHERE id = $1"
                     " RETURNING " IMG_COLS},
    [S_JOB_DROP] = {"ink_job_drop", 1, "DELETE FROM jobs WHERE id = $1"},
    [S_JOB_RENEW] = {"ink_job_renew", 3,
                     "UPDATE jobs SET lease_until_us = $3 WHERE id = $1 AND token = $2"},
    /* $3 result, $4 words, $5 media_key, $6 revised_prompt, $7 now, $8 prompt tokens,
     * $9 completion tokens, $10 truncated */
    [S_JOB_COMPLETE] = {"ink_job_complete", 10,
                        JOB_FINISH("state = 'completed', error = NULL, result = $3::text,"
                                   " words = $4::bigint, prompt_tokens = $8::bigint,"
                                   " completion_tokens = $9::bigint, truncated = $10::boolean, "
                                   BUMP("$7"),
                                   "state = 'completed', error = NULL, media_key = $5::text,"
                                   " revised_prompt = $6::text, " BUMP("$7"))},
    /* $3 error, $4 now */
    [S_JOB_FAIL] = {"ink_job_fail", 4,
                    JOB_FINISH("state = 'failed', error = $3::text, " BUMP("$4"),
                               "state = 'failed', error = $3::text, " BUMP("$4"))},
    [S_JOB_COUNT] = {"ink_job_count", 0, "SELECT count(*) FROM jobs"},
    /* $1 now */
    [S_JOB_COUNTS] = {"ink_job_counts", 1,
                      "SELECT count(*) FILTER (WHERE token IS NULL OR lease_until_us < $1),"
                      " count(*) FILTER (WHERE token IS NOT NULL AND lease_until_us >= $1) FROM jobs"},
    /* $1 bucket, $2 now, $3 interval, $4 period; SET reads the row as it was */
    [S_RATE_HIT] = {"ink_rate_gcra", 4,
                    "INSERT INTO rate_tat AS t (bucket, tat_us, allowed)"
                    " VALUES ($1, $2::bigint + $3::bigint, $3::bigint <= $4::bigint)"
                    " ON CONFLICT (bucket) DO UPDATE SET"
                    " allowed = GREATEST(t.tat_us, $2::bigint) + $3::bigint - $2::bigint <= $4::bigint,"
                    " tat_us = CASE WHEN GREATEST(t.tat_us, $2::bigint) + $3::bigint - $2::bigint"
                    " <= $4::bigint THEN GREATEST(t.tat_us, $2::bigint) + $3::bigint ELSE t.tat_us END"
                    " RETURNING tat_us, allowed"},
    [S_RATE_PRUNE] = {"ink_rate_prune", 1, "DELETE FROM rate_tat WHERE tat_us < $1"},
    /* $1 user, $2 key, $3 digest, $4 token, $5 lease until, $6 expires, $7 now */
    [S_IDEM_TAKE] = {"ink_idem_take", 7,
                     "INSERT INTO idempotency_keys AS k (user_id, idem_key, digest, token, state,"
                     " lease_until_us, expires_us) VALUES ($1, $2, $3, $4, 0, $5, $6)"
                     " ON CONFLICT (user_id, idem_key) DO UPDATE SET digest = excluded.digest,"
                     " token = excluded.token, state = 0, status = NULL, location = NULL,"
                     " body = NULL, lease_until_us = excluded.lease_until_us,"
                     " expires_us = excluded.expires_us"
                     " WHERE k.expires_us < $7::bigint OR (k.state = 0 AND k.lease_until_us < $7::bigint)"
                     " RETURNING token"},
    [S_IDEM_GET] = {"ink_idem_get", 2,
                    "SELECT digest, state, status, location, body FROM idempotency_keys"
                    " WHERE user_id = $1 AND idem_key = $2"},
    [S_IDEM_FINISH] = {"ink_idem_finish", 7,
                       "UPDATE idempotency_keys SET state = 1, status = $4, location = $5,"
                       " body = $6, expires_us = $7"
                       " WHERE user_id = $1 AND idem_key = $2 AND token = $3 AND state = 0"},
    [S_IDEM_ABORT] = {"ink_idem_abort", 3,
                      "DELETE FROM idempotency_keys"
                      " WHERE user_id = $1 AND idem_key = $2 AND token = $3 AND state = 0"},
    [S_IDEM_PRUNE] = {"ink_idem_prune", 1, "DELETE FROM idempotency_keys WHERE expires_us < $1"},
    [S_MEDIA_KEYS] = {"ink_media_keys", 0,
                      "SELECT media_key FROM images WHERE media_key IS NOT NULL"
                      " ORDER BY media_key COLLATE \"C\""},
};


/* ---- connection ------------------------------------------------------------------ */

_Static_assert(S_COUNT <= 64, "pg_conn_t.prepared has one bit per statement");

typedef struct {
    store_conn_t base; /* first: store.c casts */
    PGconn *pg;
    bool broken;          /* a connection-level error was seen: reconnect before use */
    double last_try;      /* mono_s() of the last reconnect attempt */
    uint64_t prepared;    /* bit i: stmts[i] is prepared on this connection */
    bool list_prepared[LQ_SLOTS]; /* by list key (store_int.h) */
} pg_conn_t;

static pg_conn_t *pg_cast(store_conn_t *c)
{
    return (pg_conn_t *)c;
}

/* Notices (e.g. "relation already exists, skipping") are not worth a line. */
static void pg_notice(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

/* Copies libpq's message (first line only) into err, unless it could show the URL's
 * password: when it contains it, or when the URL does not even parse (libpq then
 * quotes pieces of it). */
static void pg_conn_error(const char *url, const char *msg, char *err, size_t errlen)
{
    char line[512];
    size_t n = strcspn(msg, "\n");
    if (n >= sizeof(line))
        n = sizeof(line) - 1;
    memcpy(line, msg, n);
    line[n] = '\0';
    char *errmsg = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &errmsg);
    PQfreemem(errmsg);
    const char *pw = NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && o->val[0])
            pw = o->val;
    if (!opts)
        snprintf(err, errlen,
                 "postgres: malformed database URL (details withheld: it may hold a password)");
    else if (pw && strstr(line, pw))
        snprintf(err, errlen,
                 "postgres: cannot connect (details withheld: they hold the password)");
    else
        snprintf(err, errlen, "postgres: %s", line);
    PQconninfoFree(opts);
}

static store_conn_t *pg_connect(store_t *s, char *err, size_t errlen)
{
    /* Later values override earlier ones: the URL may set its own timeouts and
     * application_name; the client encoding is always UTF-8. Keepalives and
     * tcp_user_timeout notice a server that vanished without closing the connection. */
    const char *const keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval",
                                "keepalives_count", "tcp_user_timeout", "application_name",
                                "dbname", "client_encoding", NULL};
    const char *const vals[] = {"5", "30", "10", "3", "30000", "inkwell", s->url, "UTF8", NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (!pg) {
        snprintf(err, errlen, "postgres: out of memory");
        return NULL;
    }
    if (PQstatus(pg) != CONNECTION_OK) {
        pg_conn_error(s->url, PQerrorMessage(pg), err, errlen);
        PQfinish(pg);
        return NULL;
    }
    PQsetNoticeProcessor(pg, pg_notice, NULL);
    pg_conn_t *c = xcalloc(1, sizeof(*c));
    c->base.ops = &store_postgres_ops;
    c->base.store = s;
    c->pg = pg;
    c->last_try = -1e9;
    return &c->base;
}

static void pg_disconnect(store_conn_t *sc)
{
    pg_conn_t *c = pg_cast(sc);
    if (!c)
        return;
    PQfinish(c->pg);
    free(c);
}

static bool pg_conn_lost(pg_conn_t *c, const char *sqlstate)
{
    if (PQstatus(c->pg) == CONNECTION_BAD)
        return true;
    if (!sqlstate)
        return false;
    return strncmp(sqlstate, "08", 2) == 0 || strcmp(sqlstate, "57P01") == 0 ||
           strcmp(sqlstate, "57P02") == 0 || strcmp(sqlstate, "57P03") == 0;
}

/* Sorts a failed result (or none) into a store_rc_t. Logs real errors without user
 * data: data exceptions and constraint violations (classes 22, 23) can quote values,
 * so only their SQLSTATE and constraint are logged. */
static int pg_fail(pg_conn_t *c, const PGresult *res, const char *what)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (!res || pg_conn_lost(c, state)) {
        if (!c->broken) {
            const char *m = PQerrorMessage(c->pg);
            log_warn("postgres: connection lost (%s): %.*s", what, (int)strcspn(m, "\n"), m);
        }
        c->broken = true;
        return STORE_UNAVAILABLE;
    }
    if (state && strcmp(state, "23505") == 0)
        return STORE_CONFLICT;
    const char *constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
    const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    bool quotes_data = state && (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0);
    log_error("postgres: %s failed: SQLSTATE %s%s%s%s%s", what, state ? state : "?",
              constraint ? " constraint " : "", constraint ? constraint : "",
              quotes_data || !primary ? "" : ": ", quotes_data || !primary ? "" : primary);
    return STORE_ERROR;
}

/* An idle connection expects nothing from the server: it has something to read only
 * when the server ended it (a restart sends "terminating connection" and closes, which
 * arrive while the connection sits in the pool). Seeing that now, before any statement
 * is sent, lets the operation reconnect instead of failing on its first statement. */
static bool pg_closed_while_idle(pg_conn_t *c)
{
    struct pollfd p = {.fd = PQsocket(c->pg), .events = POLLIN};
    if (p.fd < 0)
        return true;
    return poll(&p, 1, 0) != 0;
}

/* Makes the connection usable: reconnects a broken one (not more than once every
 * PG_RETRY_S), forgetting every prepared statement. */
static int pg_ready(pg_conn_t *c)
{
    if (!c->broken && PQstatus(c->pg) == CONNECTION_OK) {
        if (PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
            /* left over from a failed call: never run inside someone else's transaction */
            PGresult *r = PQexec(c->pg, "ROLLBACK");
            PQclear(r);
            if (PQstatus(c->pg) != CONNECTION_OK)
                c->broken = true;
        } else if (pg_closed_while_idle(c)) {
            log_info("postgres: the server closed an idle connection; reconnecting");
            c->broken = true;
        }
        if (!c->broken)
            return STORE_OK;
    }
    double t = mono_s();
    if (t - c->last_try < PG_RETRY_S)
        return STORE_UNAVAILABLE;
    c->last_try = t;
    PQreset(c->pg);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        c->broken = true;
        return STORE_UNAVAILABLE;
    }
    c->broken = false;
    c->prepared = 0;
    memset(c->list_prepared, 0, sizeof(c->list_prepared));
    log_info("postgres: reconnected");
    return STORE_OK;
}

/* Runs a statement without parameters or result (BEGIN, COMMIT, schema text). */
static int pg_command(pg_conn_t *c, const char *sql, const char *what)
{
    PGresult *r = PQexec(c->pg, sql);
    int rc = STORE_OK;
    if (!r || (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK))
        rc = pg_fail(c, r, what);
    PQclear(r);
    return rc;
}

/* Ends a transaction that failed; nothing to do when the connection is gone. */
static void pg_rollback(pg_conn_t *c)
{
    if (c->broken || PQstatus(c->pg) != CONNECTION_OK ||
        PQtransactionStatus(c->pg) == PQTRANS_IDLE)
        return;
    pg_command(c, "ROLLBACK", "rollback");
}

/* A statement PostgreSQL chose as the victim of a deadlock (40P01) or of a
 * serialization failure (40001) was undone whole. Outside a transaction block it
 * was alone in its transaction, so running it again is safe and is what the server
 * asks for; inside one, the caller's whole transaction is lost and it is the
 * caller's failure. (E.g. a DELETE that locks a record and then its job, while the
 * job's worker locks the job and then the record.) */
#define PG_VICTIM_TRIES 4
static bool pg_victim_alone(pg_conn_t *c, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return state && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0) &&
           PQtransactionStatus(c->pg) == PQTRANS_IDLE;
}

/* Prepares (once per connection) and runs a named statement. On STORE_OK *out holds a
 * result the caller clears. */
static int pg_run_named(pg_conn_t *c, const char *name, const char *sql, int nparams,
                        bool *prepared, const char *const *params, PGresult **out)
{
    if (!*prepared) {
        PGresult *r = PQprepare(c->pg, name, sql, nparams, NULL);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
            int rc = pg_fail(c, r, name);
            PQclear(r);
            return rc;
        }
        PQclear(r);
        *prepared = true;
    }
    for (int attempt = 1;; attempt++) {
        PGresult *r = PQexecPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
        ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            *out = r;
            return STORE_OK;
        }
        if (attempt < PG_VICTIM_TRIES && pg_victim_alone(c, r)) {
            PQclear(r);
            continue;
        }
        int rc = pg_fail(c, r, name);
        PQclear(r);
        return rc;
    }
}

static int pg_run(pg_conn_t *c, int id, const char *const *params, PGresult **out)
{
    bool prepared = (c->prepared >> id) & 1;
    int rc = pg_run_named(c, stmts[id].name, stmts[id].sql, stmts[id].nparams, &prepared, params,
                          out);
    if (prepared)
        c->prepared |= (uint64_t)1 << id;
    return rc;
}

/* Rows changed by an INSERT/UPDATE/DELETE without RETURNING. */
static int64_t pg_affected(PGresult *r)
{
    return strtoll(PQcmdTuples(r), NULL, 10);
}

/* ---- values ---------------------------------------------------------------------- */

typedef struct {
    char s[32];
} num_t;

static num_t num_i64(int64_t v)
{
    num_t n;
    snprintf(n.s, sizeof(n.s), "%" PRId64, v);
    return n;
}

static num_t num_f64(double v)
{
    num_t n;
    snprintf(n.s, sizeof(n.s), "%.17g", v);
    return n;
}

static int64_t lease_until(int64_t now, double lease_s)
{
    return now + (int64_t)(lease_s * 1e6);
}

static int64_t col_i64(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static bool col_bool(const PGresult *r, int row, int col)
{
    return PQgetvalue(r, row, col)[0] == 't';
}

static const char *col_str(const PGresult *r, int row, int col, arena_t *a)
{
    if (PQgetisnull(r, row, col))
        return NULL;
    return arena_strndup(a, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

/* A row of DOC_COLS or IMG_COLS. */
static void row_record(const PGresult *r, int row, rec_kind_t kind, arena_t *a, record_t *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    out->id = col_i64(r, row, 0);
    out->user_id = col_i64(r, row, 1);
    out->name = col_str(r, row, 2, a);
    out->favorite = col_bool(r, row, 3);
    out->state = rec_state_parse(PQgetvalue(r, row, 4));
    out->error = col_str(r, row, 5, a);
    out->created_us = col_i64(r, row, 6);
    out->updated_us = col_i64(r, row, 7);
    if (kind == KIND_DOC) {
        out->prompt = col_str(r, row, 8, a);
        out->creativity = strtod(PQgetvalue(r, row, 9), NULL);
        out->template_id = (int)col_i64(r, row, 10);
        out->result = col_str(r, row, 11, a);
        out->words = col_i64(r, row, 12);
        out->prompt_tokens = PQgetisnull(r, row, 13) ? -1 : col_i64(r, row, 13);
        out->completion_tokens = PQgetisnull(r, row, 14) ? -1 : col_i64(r, row, 14);
        out->truncated = col_bool(r, row, 15);
    } else {
        out->description = col_str(r, row, 8, a);
        out->resolution = col_str(r, row, 9, a);
        out->style = col_str(r, row, 10, a);
        out->media_key = col_str(r, row, 11, a);
        out->revised_prompt = col_str(r, row, 12, a);
    }
}

/* ---- schema and health ----------------------------------------------------------- */

static int pg_migrate(store_conn_t *sc)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r = NULL;
    if ((rc = pg_command(c, "BEGIN", "migrate begin")) != STORE_OK)
        return rc;
    rc = pg_command(c, "SELECT pg_advisory_xact_lock(" PG_MIGRATE_LOCK ")", "migrate lock");
    if (rc == STORE_OK)
        rc = pg_command(c,
                        "CREATE TABLE IF NOT EXISTS schema_migrations ("
                        " version INTEGER PRIMARY KEY, applied_us BIGINT NOT NULL)",
                        "migrate table");
    if (rc == STORE_OK)
        rc = pg_run(c, S_MIG_VERSION, NULL, &r);
    if (rc != STORE_OK)
        goto out;
    int64_t have = col_i64(r, 0, 0);
    PQclear(r);
    r = NULL;
    int64_t want = (int64_t)ARRAY_LEN(migrations);
    if (have > want) {
        log_error("postgres: database schema version %" PRId64
                  " is newer than this program's (%" PRId64 ")",
                  have, want);
        rc = STORE_ERROR;
        goto out;
    }
    for (int64_t v = have + 1; v <= want && rc == STORE_OK; v++) {
        char what[48];
        snprintf(what, sizeof(what), "migration %" PRId64, v);
        rc = pg_command(c, migrations[v - 1], what);
        if (rc != STORE_OK)
            break;
        num_t nv = num_i64(v), now = num_i64(now_us());
        const char *p[] = {nv.s, now.s};
        rc = pg_run(c, S_MIG_RECORD, p, &r);
        PQclear(r);
        r = NULL;
        if (rc == STORE_OK)
            log_info("postgres: applied schema migration %" PRId64, v);
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "migrate commit");
out:
    PQclear(r);
    if (rc != STORE_OK)
        pg_rollback(c);
    return rc;
}

static int pg_ping(store_conn_t *sc)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = pg_run(c, S_PING, NULL, &r)) != STORE_OK)
        return rc;
    PQclear(r);
    return STORE_OK;
}

/* ---- users and keys -------------------------------------------------------------- */

/* Runs a statement whose first column is an id; NOTFOUND when it gives no row. */
static int pg_find_id(pg_conn_t *c, int id, const char *const *p, int64_t *out)
{
    PGresult *r;
    int rc = pg_run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        *out = col_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

static int pg_user_ensure(store_conn_t *sc, const char *name, int64_t *user_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *find[] = {name};
    rc = pg_find_id(c, S_USER_FIND, find, user_id);
    if (rc != STORE_NOTFOUND)
        return rc;
    num_t now = num_i64(now_us());
    const char *ins[] = {name, now.s};
    rc = pg_find_id(c, S_USER_INSERT, ins, user_id);
    if (rc != STORE_NOTFOUND)
        return rc;
    /* another process inserted the same name in between */
    rc = pg_find_id(c, S_USER_FIND, find, user_id);
    return rc == STORE_NOTFOUND ? STORE_ERROR : rc;
}

static int pg_key_insert(store_conn_t *sc, int64_t user_id, const char *hash_hex,
                         const char *prefix, int64_t *key_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t uid = num_i64(user_id), now = num_i64(now_us());
    const char *p[] = {uid.s, hash_hex, prefix, now.s};
    return pg_find_id(c, S_KEY_INSERT, p, key_id);
}

static int pg_key_auth(store_conn_t *sc, const char *hash_hex, int64_t *user_id, int64_t *key_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *p[] = {hash_hex};
    PGresult *r;
    if ((rc = pg_run(c, S_KEY_AUTH, p, &r)) != STORE_OK)
        return rc;
    /* the index found it; the digest is confirmed in constant time all the same */
    if (PQntuples(r) == 0 || PQgetlength(r, 0, 2) != 64 ||
        !ct_equal(PQgetvalue(r, 0, 2), hash_hex, 64)) {
        rc = STORE_NOTFOUND;
    } else {
        *user_id = col_i64(r, 0, 0);
        *key_id = col_i64(r, 0, 1);
    }
    PQclear(r);
    return rc;
}

static int pg_key_list(store_conn_t *sc, arena_t *a, key_info_t **out, size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = pg_run(c, S_KEY_LIST, NULL, &r)) != STORE_OK)
        return rc;
    size_t rows = (size_t)PQntuples(r);
    key_info_t *keys = arena_alloc(a, (rows ? rows : 1) * sizeof(*keys));
    for (size_t i = 0; i < rows; i++) {
        int row = (int)i;
        keys[i].id = col_i64(r, row, 0);
        keys[i].user_id = col_i64(r, row, 1);
        keys[i].user_name = col_str(r, row, 2, a);
        keys[i].prefix = col_str(r, row, 3, a);
        keys[i].created_us = col_i64(r, row, 4);
        keys[i].revoked_us = col_i64(r, row, 5);
    }
    PQclear(r);
    *out = keys;
    *n = rows;
    return STORE_OK;
}

static int pg_key_revoke(store_conn_t *sc, int64_t key_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t id = num_i64(key_id), now = num_i64(now_us());
    const char *p[] = {id.s, now.s};
    PGresult *r;
    if ((rc = pg_run(c, S_KEY_REVOKE, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

/* ---- records --------------------------------------------------------------------- */

/* A new record, "queued"; done: a document already "completed" with its result. */
static int pg_insert_record(pg_conn_t *c, const record_t *rec, int64_t now, bool done,
                            int64_t *id)
{
    num_t uid = num_i64(rec->user_id), ts = num_i64(now);
    const char *fav = rec->favorite ? "t" : "f";
    if (rec->kind == KIND_DOC) {
        num_t cr = num_f64(rec->creativity), tpl = num_i64(rec->template_id),
              words = num_i64(rec->words), pt = num_i64(rec->prompt_tokens),
              ct = num_i64(rec->completion_tokens);
        const char *p[] = {uid.s, rec->name, fav, ts.s, rec->prompt, cr.s, tpl.s,
                           rec->result, words.s, rec->prompt_tokens < 0 ? NULL : pt.s,
                           rec->completion_tokens < 0 ? NULL : ct.s,
                           rec->truncated ? "t" : "f"};
        return pg_find_id(c, done ? S_DOC_INSERT_DONE : S_DOC_INSERT, p, id);
    }
    const char *p[] = {uid.s, rec->name, fav, ts.s, rec->description, rec->resolution, rec->style};
    return pg_find_id(c, S_IMG_INSERT, p, id);
}

static int pg_record_create(store_conn_t *sc, record_t *rec, int64_t *job_id)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t now = now_us(), id = 0, jid = 0;
    if ((rc = pg_command(c, "BEGIN", "record create begin")) != STORE_OK)
        return rc;
    rc = pg_insert_record(c, rec, now, false, &id);
    if (rc == STORE_OK) {
        num_t kind = num_i64(rec->kind), rid = num_i64(id), ts = num_i64(now);
        const char *p[] = {kind.s, rid.s, ts.s};
        rc = pg_find_id(c, S_JOB_INSERT, p, &jid);
    }
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "record create commit");
    if (rc != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    rec->id = id;
    store_record_inserted(rec, REC_QUEUED, now);
    *job_id = jid;
    return STORE_OK;
}

/* All in one transaction (all or none). A connection that sat idle through a database
 * restart is remade by pg_ready, as for every operation. */
static int pg_docs_create_completed(store_conn_t *sc, record_t *const *recs, size_t n)
{
    pg_conn_t *c = pg_cast(sc);
    if (!store_docs_finished(recs, n))
        return STORE_ERROR;
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    if ((rc = pg_command(c, "BEGIN", "docs create begin")) != STORE_OK)
        return rc;
    int64_t now = now_us();
    for (size_t i = 0; i < n && rc == STORE_OK; i++)
        rc = pg_insert_record(c, recs[i], now, true, &recs[i]->id);
    if (rc == STORE_OK)
        rc = pg_command(c, "COMMIT", "docs create commit");
    if (rc != STORE_OK) {
        pg_rollback(c);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        store_record_inserted(recs[i], REC_COMPLETED, now);
    return STORE_OK;
}

/* Runs a statement returning at most one record row. */
static int pg_one_record(pg_conn_t *c, int id, const char *const *p, rec_kind_t kind, arena_t *a,
                         record_t *out)
{
    PGresult *r;
    int rc = pg_run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else
        row_record(r, 0, kind, a, out);
    PQclear(r);
    return rc;
}

static int pg_record_get(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                         arena_t *a, record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t uid = num_i64(user_id), rid = num_i64(id);
    const char *p[] = {uid.s, rid.s};
    return pg_one_record(c, kind == KIND_DOC ? S_DOC_GET : S_IMG_GET, p, kind, a, out);
}

/* The record cache's probe on PostgreSQL: the row comes whole in the one round trip
 * either way; a version the caller holds is not rendered again. */
static int pg_record_get_probed(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                                record_probe_fn probe, void *probe_arg, arena_t *a,
                                record_t *out)
{
    int rc = pg_record_get(sc, kind, user_id, id, a, out);
    if (rc == STORE_OK && probe(probe_arg, kind, out->id, out->updated_us))
        *out = (record_t){.kind = kind, .id = out->id, .updated_us = out->updated_us,
                          .probed = true};
    return rc;
}

static int pg_record_update(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                            const record_patch_t *pt, arena_t *a, record_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t uid = num_i64(user_id), rid = num_i64(id), now = num_i64(now_us());
    num_t fav = num_i64(pt->favorite < 0 ? -1 : pt->favorite ? 1 : 0);
    if (kind == KIND_DOC) {
        num_t words = num_i64(pt->words);
        const char *p[] = {uid.s, rid.s, pt->name, pt->result ? "t" : "f", pt->result, words.s,
                           fav.s, now.s};
        return pg_one_record(c, S_DOC_UPDATE, p, kind, a, out);
    }
    const char *p[] = {uid.s, rid.s, pt->name, fav.s, now.s};
    return pg_one_record(c, S_IMG_UPDATE, p, kind, a, out);
}

static int pg_record_delete(store_conn_t *sc, rec_kind_t kind, int64_t user_id, int64_t id,
                            arena_t *a, const char **media_key)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t uid = num_i64(user_id), rid = num_i64(id);
    const char *p[] = {uid.s, rid.s};
    PGresult *r;
    if ((rc = pg_run(c, kind == KIND_DOC ? S_DOC_DELETE : S_IMG_DELETE, p, &r)) != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = STORE_NOTFOUND;
    } else if (media_key) {
        *media_key = col_str(r, 0, 0, a);
    }
    PQclear(r);
    return rc;
}

/* ---- lists ----------------------------------------------------------------------- */

/* The WHERE clause of key k; parameters are numbered from $1 (user_id) in the order
 * list_run() fills them. Without search, the search's parameter keeps its number. */
static void list_where(buf_t *b, unsigned k, bool search)
{
    int n = 1;
    buf_puts(b, " WHERE user_id = $1");
    if (k & LQ_SEARCH)
        ++n;
    if ((k & LQ_SEARCH) && search)
        /* lower() under the "C" collation folds A-Z only, like SQLite's LIKE; the
         * pattern comes lowered the same way. The expression is that of the trigram
         * indexes of migration 4, which PostgreSQL re-checks for every candidate; a
         * short search, which they cannot serve (a GIN scan of every entry), spells it
         * so that they are not used. */
        buf_printf(b, " AND lower(%s%s COLLATE \"C\") LIKE $2 ESCAPE '\\'",
                   k & LQ_SEARCH_RESULT ? "result" : "name", k & LQ_INDEXED ? "" : " || ''");
    if (k & LQ_FILTER)
        buf_printf(b, k & LQ_IMG ? " AND resolution = $%d::text" : " AND template_id = $%d::int",
                   ++n);
    if (k & LQ_STYLE)
        buf_printf(b, " AND style = $%d::text", ++n);
    if (k & LQ_FAVORITE)
        buf_printf(b, " AND favorite = $%d::boolean", ++n);
}

/* Number of parameters of the WHERE clause of key k. */
static int list_where_nparams(unsigned k)
{
    return 1 + !!(k & LQ_SEARCH) + !!(k & LQ_FILTER) + !!(k & LQ_STYLE) + !!(k & LQ_FAVORITE);
}

/* How many rows of the order an indexed search looks through first (see
 * pg_record_list), for pages ending this early in the order. */
#define WINDOW_ROWS 1000
#define WINDOW_MAX_END 100

/* Builds the SQL of key k from fixed fragments only. Every statement also returns, as
 * its last two columns and from the same snapshot, the user's record count and
 * version; LQ_COUNT adds the count of the key's rows before them.
 *
 * An indexed search (LQ_INDEXED) gets its candidates from the trigram index in a
 * materialized CTE, so the planner cannot trade the index for a walk down the id or
 * name order that hopes to meet the page's rows early (with a LIMIT, a rare word would
 * walk every row). LQ_WINDOW is that hope made bounded: the page among the first
 * WINDOW_ROWS rows of the order only. */
static char *list_sql(unsigned k)
{
    const char *table = k & LQ_IMG ? "images" : "documents";
    const char *dir = k & LQ_ASC ? "ASC" : "DESC";
    buf_t where, b;
    buf_init(&where);
    buf_init(&b);
    list_where(&where, k, !(k & LQ_WINDOW));
    char counts[160], order[96];
    snprintf(counts, sizeof(counts),
             "(SELECT n FROM record_counts WHERE user_id = $1 AND kind = %d), "
             "(SELECT version FROM record_counts WHERE user_id = $1 AND kind = %d)",
             k & LQ_IMG ? 1 : 0, k & LQ_IMG ? 1 : 0);
    if (k & LQ_BY_NAME)
        snprintf(order, sizeof(order), "name COLLATE \"C\" %s, id %s", dir, dir);
    else
        snprintf(order, sizeof(order), "id %s", dir);
    int n = list_where_nparams(k);
    const char *cols = k & LQ_IMG ? IMG_COLS : DOC_COLS;
    if (k & LQ_COUNT)
        buf_printf(&b, "SELECT (SELECT count(*) FROM %s%s), %s", table, buf_cstr(&where), counts);
    else if (k & LQ_WINDOW)
        buf_printf(&b, "SELECT %s, %s FROM (SELECT * FROM %s%s ORDER BY %s LIMIT %d) w"
                       " WHERE lower(%s COLLATE \"C\") LIKE $2 ESCAPE '\\'"
                       " ORDER BY %s LIMIT $%d OFFSET $%d",
                   cols, counts, table, buf_cstr(&where), order, WINDOW_ROWS,
                   k & LQ_SEARCH_RESULT ? "result" : "name", order, n + 1, n + 2);
    else if (k & LQ_INDEXED)
        buf_printf(&b, "WITH m AS MATERIALIZED (SELECT id FROM %s%s)"
                       " SELECT %s, %s FROM m JOIN %s USING (id) ORDER BY %s"
                       " LIMIT $%d OFFSET $%d",
                   table, buf_cstr(&where), cols, counts, table, order, n + 1, n + 2);
    else
        /* the rows skipped by the offset come from the order's index alone (an
         * index-only scan once vacuumed): only the page's rows are read whole */
        buf_printf(&b, "SELECT %s, %s FROM %s WHERE id IN (SELECT id FROM %s%s ORDER BY %s"
                       " LIMIT $%d OFFSET $%d) ORDER BY %s",
                   cols, counts, table, table, buf_cstr(&where), order, n + 1, n + 2, order);
    buf_free(&where);
    return buf_steal(&b);
}

/* Runs list statement k with the parameters of q (+ limit/offset for pages). */
static int list_run(pg_conn_t *c, unsigned k, const list_query_t *q, const char *limit,
                    const char *offset, arena_t *a, PGresult **out)
{
    const char *p[8];
    int n = 0;
    num_t uid = num_i64(q->user_id), tpl = num_i64(q->template_id);
    p[n++] = uid.s;
    if (k & LQ_SEARCH)
        p[n++] = store_like_pattern(q->search, true, a);
    if (k & LQ_FILTER)
        p[n++] = k & LQ_IMG ? q->resolution : tpl.s;
    if (k & LQ_STYLE)
        p[n++] = q->style;
    if (k & LQ_FAVORITE)
        p[n++] = q->favorite ? "t" : "f";
    if (!(k & LQ_COUNT)) {
        p[n++] = limit;
        p[n++] = offset;
    }
    char name[32];
    snprintf(name, sizeof(name), "ink_list_%04x", k);
    char *sql = c->list_prepared[k] ? NULL : list_sql(k);
    int rc = pg_run_named(c, name, sql, n, &c->list_prepared[k], p, out);
    free(sql);
    return rc;
}

/* The total of key k when the page does not tell it: the user's record count for an
 * unfiltered list; else the totals cache at the version read with the page, or a
 * count (which reads its own version in its own snapshot). */
static int list_total(pg_conn_t *c, unsigned k, const list_query_t *q, int64_t n,
                      int64_t version, arena_t *a, int64_t *total)
{
    store_counts_t *cc = store_counts(c->base.store);
    if (!(k & LQ_FILTERED) || n == 0) {
        *total = n;
        return STORE_OK;
    }
    if (store_counts_get(cc, k, q, version, total))
        return STORE_OK;
    PGresult *r;
    k = (k & ~(unsigned)(LQ_BY_NAME | LQ_ASC)) | LQ_COUNT;
    int rc = list_run(c, k, q, NULL, NULL, a, &r);
    if (rc != STORE_OK)
        return rc;
    *total = col_i64(r, 0, 0);
    store_counts_put(cc, k, q, col_i64(r, 0, 2), *total);
    PQclear(r);
    return STORE_OK;
}

static int pg_record_list(store_conn_t *sc, rec_kind_t kind, const list_query_t *q, arena_t *a,
                          record_list_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    int64_t per_page = q->per_page > 0 ? q->per_page : 10;
    int64_t page = q->page > 0 ? q->page : 1;
    int64_t offset = page - 1 > INT64_MAX / per_page ? INT64_MAX : (page - 1) * per_page;
    num_t lim = num_i64(per_page), off = num_i64(offset);
    unsigned k = store_list_key(kind, q);
    PGresult *r = NULL;
    size_t rows = 0;
    if ((k & LQ_INDEXED) && offset + per_page <= WINDOW_MAX_END) {
        /* a common word fills its page among the first rows of the order */
        if ((rc = list_run(c, k | LQ_WINDOW, q, lim.s, off.s, a, &r)) != STORE_OK)
            return rc;
        rows = (size_t)PQntuples(r);
        if (rows < (size_t)per_page) {
            PQclear(r);
            r = NULL;
        }
    }
    if (!r) {
        if ((rc = list_run(c, k, q, lim.s, off.s, a, &r)) != STORE_OK)
            return rc;
        rows = (size_t)PQntuples(r);
    }
    record_t *items = arena_alloc(a, (rows ? rows : 1) * sizeof(*items));
    for (size_t i = 0; i < rows; i++) {
        if (q->probe) {
            /* id and updated_us first: a held version needs nothing else */
            items[i] = (record_t){.kind = kind, .id = col_i64(r, (int)i, 0),
                                  .updated_us = col_i64(r, (int)i, 7)};
            if (q->probe(q->probe_arg, kind, items[i].id, items[i].updated_us)) {
                items[i].probed = true;
                continue;
            }
        }
        row_record(r, (int)i, kind, a, &items[i]);
    }
    int64_t total = 0;
    if (rows > 0 && rows < (size_t)per_page) {
        total = offset + (int64_t)rows; /* the last page tells the total */
    } else if (rows > 0) {
        rc = list_total(c, k, q, col_i64(r, 0, REC_NCOLS), col_i64(r, 0, REC_NCOLS + 1), a,
                        &total);
    } else if (offset > 0) {
        /* a page past the end: the total still counts */
        PQclear(r);
        r = NULL;
        unsigned ck = (k & ~(unsigned)(LQ_BY_NAME | LQ_ASC)) | LQ_COUNT;
        if ((rc = list_run(c, ck, q, NULL, NULL, a, &r)) == STORE_OK)
            total = col_i64(r, 0, 0);
    }
    PQclear(r);
    if (rc != STORE_OK)
        return rc;
    out->items = items;
    out->n = rows;
    out->total = total;
    return STORE_OK;
}

/* ---- jobs ------------------------------------------------------------------------ */

/* Inside a transaction: picks and leases one job; *claimed false when there is none;
 * an orphan job (its record gone) is dropped and *claimed stays false with *again set. */
static int claim_one(pg_conn_t *c, int64_t now, const char *token, double lease_s, arena_t *a,
                     job_t *out, bool *claimed, bool *again)
{
    num_t tnow = num_i64(now), until = num_i64(lease_until(now, lease_s));
    const char *p[] = {tnow.s, token, until.s};
    PGresult *r;
    int rc = pg_run(c, S_JOB_PICK, p, &r);
    if (rc != STORE_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return STORE_OK;
    }
    int64_t job_id = col_i64(r, 0, 0), kind = col_i64(r, 0, 1), record_id = col_i64(r, 0, 2);
    int attempts = (int)col_i64(r, 0, 3);
    PQclear(r);
    num_t jid = num_i64(job_id), rid = num_i64(record_id);
    if (kind == KIND_DOC || kind == KIND_IMG) {
        const char *rp[] = {rid.s, tnow.s};
        record_t rec;
        rc = pg_one_record(c, kind == KIND_DOC ? S_DOC_CLAIM : S_IMG_CLAIM, rp, (rec_kind_t)kind,
                           a, &rec);
        if (rc == STORE_OK) {
            memset(out, 0, sizeof(*out));
            out->id = job_id;
            memcpy(out->token, token, sizeof(out->token));
            out->attempts = attempts;
            out->rec = rec;
            *claimed = true;
            return STORE_OK;
        }
        if (rc != STORE_NOTFOUND)
            return rc;
    }
    log_warn("postgres: dropping job %" PRId64 " without a record", job_id);
    const char *dp[] = {jid.s};
    if ((rc = pg_run(c, S_JOB_DROP, dp, &r)) != STORE_OK)
        return rc;
    PQclear(r);
    *again = true;
    return STORE_OK;
}

static int pg_job_claim(store_conn_t *sc, double lease_s, arena_t *a, job_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    for (int tries = 0; tries < PG_CLAIM_TRIES; tries++) {
        char token[33];
        random_hex(token, 16);
        bool claimed = false, again = false;
        if ((rc = pg_command(c, "BEGIN", "job claim begin")) != STORE_OK)
            return rc;
        rc = claim_one(c, now_us(), token, lease_s, a, out, &claimed, &again);
        if (rc == STORE_OK)
            rc = pg_command(c, "COMMIT", "job claim commit");
        if (rc != STORE_OK) {
            pg_rollback(c);
            return rc;
        }
        if (claimed)
            return STORE_OK;
        if (!again)
            return STORE_NOTFOUND;
    }
    return STORE_NOTFOUND;
}

static int pg_job_renew(store_conn_t *sc, int64_t job_id, const char *token, double lease_s)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t id = num_i64(job_id), until = num_i64(lease_until(now_us(), lease_s));
    const char *p[] = {id.s, token, until.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_RENEW, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

/* Runs a JOB_FINISH statement: STALE when the job (with this token) is gone. */
static int job_finish(pg_conn_t *c, int id, const char *const *p)
{
    PGresult *r;
    int rc = pg_run(c, id, p, &r);
    if (rc != STORE_OK)
        return rc;
    rc = col_i64(r, 0, 0) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

static int pg_job_complete(store_conn_t *sc, const job_t *job, const char *result, int64_t words,
                           const char *media_key, const char *revised_prompt)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t id = num_i64(job->id), w = num_i64(words), now = num_i64(now_us()),
          pt = num_i64(job->rec.prompt_tokens), ct = num_i64(job->rec.completion_tokens);
    const char *p[] = {id.s, job->token, result, w.s, media_key, revised_prompt, now.s,
                       job->rec.prompt_tokens < 0 ? NULL : pt.s,
                       job->rec.completion_tokens < 0 ? NULL : ct.s,
                       job->rec.truncated ? "t" : "f"};
    return job_finish(c, S_JOB_COMPLETE, p);
}

static int pg_job_fail(store_conn_t *sc, const job_t *job, const char *error)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t id = num_i64(job->id), now = num_i64(now_us());
    const char *p[] = {id.s, job->token, error, now.s};
    return job_finish(c, S_JOB_FAIL, p);
}

static int pg_job_count(store_conn_t *sc, int64_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_COUNT, NULL, &r)) != STORE_OK)
        return rc;
    *n = col_i64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}

static int pg_job_counts(store_conn_t *sc, int64_t *queued, int64_t *running)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t now = num_i64(now_us());
    const char *p[] = {now.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_COUNTS, p, &r)) != STORE_OK)
        return rc;
    *queued = col_i64(r, 0, 0);
    *running = col_i64(r, 0, 1);
    PQclear(r);
    return STORE_OK;
}

/* ---- rate limiting --------------------------------------------------------------- */

static int pg_rate_gcra(store_conn_t *sc, const char *bucket, int64_t now_us, int64_t interval_us,
                        int64_t period_us, bool prune, int64_t *tat_us, bool *allowed)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    num_t now = num_i64(now_us), iv = num_i64(interval_us), per = num_i64(period_us);
    if (prune) {
        const char *pp[] = {now.s};
        if ((rc = pg_run(c, S_RATE_PRUNE, pp, &r)) != STORE_OK)
            return rc;
        PQclear(r);
    }
    const char *p[] = {bucket, now.s, iv.s, per.s};
    if ((rc = pg_run(c, S_RATE_HIT, p, &r)) != STORE_OK)
        return rc;
    *tat_us = col_i64(r, 0, 0);
    const char *a = PQgetvalue(r, 0, 1);
    *allowed = a && a[0] == 't';
    PQclear(r);
    return STORE_OK;
}

/* ---- idempotency keys ------------------------------------------------------------ */

#define PG_IDEM_TRIES 4 /* a key freed between the take and the read is taken again */

static int pg_idem_begin(store_conn_t *sc, int64_t user_id, const char *key, const char *digest,
                         int64_t now_us, int64_t lease_us, int64_t ttl_us, bool prune, arena_t *a,
                         idem_t *out)
{
    pg_conn_t *c = pg_cast(sc);
    memset(out, 0, sizeof(*out));
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    num_t uid = num_i64(user_id), now = num_i64(now_us), lease = num_i64(now_us + lease_us),
          exp = num_i64(now_us + ttl_us);
    if (prune) {
        const char *pp[] = {now.s};
        if ((rc = pg_run(c, S_IDEM_PRUNE, pp, &r)) != STORE_OK)
            return rc;
        PQclear(r);
    }
    for (int tries = 0; tries < PG_IDEM_TRIES; tries++) {
        /* one statement: taken atomically, or held by someone (the row lock of the
         * upsert makes a concurrent first use wait for the other's outcome) */
        random_hex(out->token, 16);
        const char *p[] = {uid.s, key, digest, out->token, lease.s, exp.s, now.s};
        if ((rc = pg_run(c, S_IDEM_TAKE, p, &r)) != STORE_OK)
            return rc;
        bool taken = PQntuples(r) == 1;
        PQclear(r);
        if (taken) {
            out->state = IDEM_NEW;
            return STORE_OK;
        }
        const char *g[] = {uid.s, key};
        if ((rc = pg_run(c, S_IDEM_GET, g, &r)) != STORE_OK)
            return rc;
        if (PQntuples(r) == 0) { /* aborted meanwhile: try to take it again */
            PQclear(r);
            continue;
        }
        if (strcmp(PQgetvalue(r, 0, 0), digest) != 0) {
            out->state = IDEM_MISMATCH;
        } else if (col_i64(r, 0, 1) == 0) {
            out->state = IDEM_BUSY;
        } else {
            out->state = IDEM_REPLAY;
            out->status = (int)col_i64(r, 0, 2);
            out->location = col_str(r, 0, 3, a);
            out->body = col_str(r, 0, 4, a);
            if (!out->body)
                out->body = "";
        }
        PQclear(r);
        return STORE_OK;
    }
    out->state = IDEM_BUSY; /* taken and freed again and again: say it is busy */
    return STORE_OK;
}

static int pg_idem_finish(store_conn_t *sc, int64_t user_id, const char *key, const char *token,
                          int status, const char *location, const char *body, int64_t expires_us)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t uid = num_i64(user_id), st = num_i64(status), exp = num_i64(expires_us);
    const char *p[] = {uid.s, key, token, st.s, location, body, exp.s};
    PGresult *r;
    if ((rc = pg_run(c, S_IDEM_FINISH, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

static int pg_idem_abort(store_conn_t *sc, int64_t user_id, const char *key, const char *token)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t uid = num_i64(user_id);
    const char *p[] = {uid.s, key, token};
    PGresult *r;
    if ((rc = pg_run(c, S_IDEM_ABORT, p, &r)) != STORE_OK)
        return rc;
    rc = pg_affected(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

/* ---- events of other processes (records/remote.c) ---- */

static int pg_job_progress(store_conn_t *sc, const job_t *job, const char *text,
                           const char *payload)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t id = num_i64(job->id);
    const char *p[] = {id.s, job->token, text, payload};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_PROGRESS, p, &r)) != STORE_OK)
        return rc;
    rc = PQntuples(r) > 0 ? STORE_OK : STORE_STALE;
    PQclear(r);
    return rc;
}

static int pg_record_partial(store_conn_t *sc, rec_kind_t kind, int64_t id, arena_t *a,
                             const char **text)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    num_t k = num_i64(kind), rid = num_i64(id);
    const char *p[] = {k.s, rid.s};
    PGresult *r;
    if ((rc = pg_run(c, S_JOB_PARTIAL, p, &r)) != STORE_OK)
        return rc;
    *text = NULL;
    if (PQntuples(r) == 0)
        rc = STORE_NOTFOUND;
    else if (!PQgetisnull(r, 0, 0))
        *text = arena_strdup(a, PQgetvalue(r, 0, 0));
    PQclear(r);
    return rc;
}

static int pg_notify(store_conn_t *sc, const char *payload)
{
    pg_conn_t *c = pg_cast(sc);
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    const char *p[] = {payload};
    PGresult *r;
    if ((rc = pg_run(c, S_NOTIFY, p, &r)) != STORE_OK)
        return rc;
    PQclear(r);
    return STORE_OK;
}

static int pg_media_keys(store_conn_t *sc, arena_t *a, const char ***keys, size_t *n)
{
    pg_conn_t *c = pg_cast(sc);
    *keys = NULL;
    *n = 0;
    int rc = pg_ready(c);
    if (rc != STORE_OK)
        return rc;
    PGresult *r;
    if ((rc = pg_run(c, S_MEDIA_KEYS, NULL, &r)) != STORE_OK)
        return rc;
    int rows = PQntuples(r);
    const char **v = arena_alloc(a, (size_t)(rows ? rows : 1) * sizeof(*v));
    for (int i = 0; i < rows; i++)
        v[i] = col_str(r, i, 0, a);
    PQclear(r);
    *keys = v;
    *n = (size_t)rows;
    return STORE_OK;
}

const store_ops_t store_postgres_ops = {
    .name = "postgres",
    .list_probes = true,
    .record_get_probed = pg_record_get_probed,
    STORE_OPS_COMMON(pg),
    .job_progress = pg_job_progress,
    .record_partial = pg_record_partial,
    .notify = pg_notify,
    .listen_start = pg_listen_start,
    .listen_stop = pg_listen_stop,
};
