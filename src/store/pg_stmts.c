/* pg_stmts.c — the fixed SQL statements of the PostgreSQL store (data: pg_stmts[],
 * indexed by the S_* ids of pg_int.h, each prepared on first use by pg_run()). */
#include "store/pg_int.h"
#include "store/pg_listen.h"

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

const pg_stmt_t pg_stmts[S_COUNT] = {
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
    /* $1 now, $2 this process's owner (hex), $3 PG_OWNER_NS: leases whose owner (the
     * token's first 8 hex digits) holds no advisory lock in this database (pg_owner.c) */
    [S_JOB_RELEASE_DEAD] = {"ink_job_release_dead", 3,
                            "UPDATE jobs SET token = NULL, lease_until_us = NULL"
                            " WHERE token IS NOT NULL AND lease_until_us >= $1"
                            " AND left(token, 8) <> $2 AND token ~ '^[0-9a-f]{8}'"
                            " AND NOT EXISTS (SELECT 1 FROM pg_locks l"
                            "  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
                            "  AND l.database = (SELECT oid FROM pg_database"
                            "   WHERE datname = current_database())"
                            "  AND l.classid = $3::int::oid"
                            "  AND l.objid = ('x' || left(jobs.token, 8))::bit(32)::int::oid)"},
    /* $4 1 for a release (the attempt is given back), else 0 */
    [S_JOB_RENEW] = {"ink_job_renew", 4,
                     "UPDATE jobs SET lease_until_us = $3, attempts = attempts - $4::int"
                     " WHERE id = $1 AND token = $2"},
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
                     " WHERE k.expires_us < $7::bigint"
                     " OR (k.state = 0 AND k.lease_until_us < $7::bigint AND k.status IS NULL)"
                     " RETURNING token"},
    [S_IDEM_GET] = {"ink_idem_get", 2,
                    "SELECT digest, state, status, location, body, lease_until_us FROM idempotency_keys"
                    " WHERE user_id = $1 AND idem_key = $2"},
    /* $8: 1 done, 0 in progress with the answer a retry gets if the request dies */
    [S_IDEM_FINISH] = {"ink_idem_finish", 8,
                       "UPDATE idempotency_keys SET state = $8, status = $4, location = $5,"
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
