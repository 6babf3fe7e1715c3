/* pg_stmts.c — the fixed SQL statements of the PostgreSQL store (data: pg_stmts[],
 * indexed by the S_* ids of pg_int.h, each prepared on first use by pg_run()). */
#include "store/pg_int.h"
#include "store/pg_listen.h"

#define BUMP(now) STORE_BUMP("GREATEST", now "::bigint")
#define SEQ(n) STORE_SEQ(n)

/* complete/fail: deletes the job while the token matches and updates its record (of
 * the kind the job row names), in one statement: one transaction. The row says whether
 * the job was there. */
#define JOB_FINISH(doc_set, img_set, also)                                                         \
    "WITH j AS (DELETE FROM jobs WHERE id = $1 AND token = $2 RETURNING kind, record_id),"         \
    " d AS (UPDATE documents t SET " doc_set " FROM j WHERE j.kind = 0 AND t.id = j.record_id"     \
    " RETURNING t.*),"                                                                             \
    " i AS (UPDATE images t SET " img_set " FROM j WHERE j.kind = 1 AND t.id = j.record_id"        \
    " RETURNING t.*)" also                                                                         \
    " SELECT count(*) FROM j"

/* A revision made of a record row (a CTE or table with the record's columns): source
 * and created_us are SQL expressions. */
#define DOC_REV_FROM(source, action, created, from)                                               \
    "INSERT INTO document_revisions SELECT id, revision, " source ", " action ", " created ","     \
    " prompt,"                                                                                   \
    " creativity, template_id, tone, language, length, NULL, words, prompt_tokens,"              \
    " completion_tokens, truncated FROM " from
/* an action's revision (job_complete): with the part it rewrote */
#define DOC_REV_PART_FROM(source, action, created, part, from)                                   \
    "INSERT INTO document_revisions SELECT id, revision, " source ", " action ", " created ","     \
    " prompt,"                                                                                   \
    " creativity, template_id, tone, language, length, NULL, words, prompt_tokens,"              \
    " completion_tokens, truncated, " part " FROM " from
#define IMG_REV_FROM(source, created, from)                                                       \
    "INSERT INTO image_revisions SELECT id, revision, " source ", NULL, " created ","             \
    " description, resolution, style, media_key, revised_prompt FROM " from

const pg_stmt_t pg_stmts[S_COUNT] = {
    /* $3 the text pieces to append, $4 the sequence number of the last of them, $5 the
     * NOTIFY payload: the row and the notification commit together (records/remote.c).
     * $6 the byte the pieces start at: they are kept only where the row's text ends
     * there, so the row never holds a text with a gap (pieces whose send failed) */
    [S_JOB_PROGRESS] = {"ink_job_progress", 6,
                        "WITH u AS (UPDATE jobs SET"
                        " partial = CASE WHEN octet_length(COALESCE(partial, '')) = $6::bigint"
                        " THEN COALESCE(partial, '') || $3 ELSE partial END,"
                        " partial_seq = CASE WHEN octet_length(COALESCE(partial, '')) = $6::bigint"
                        " THEN $4::bigint ELSE partial_seq END"
                        " WHERE id = $1 AND token = $2"
                        " RETURNING 1) SELECT pg_notify('" PG_CHANNEL "', $5) FROM u"},
    [S_JOB_PARTIAL] = {"ink_job_partial", 2,
                       "SELECT partial, partial_seq FROM jobs WHERE kind = $1 AND record_id = $2"},
    [S_NOTIFY] = {"ink_notify", 1, "SELECT pg_notify('" PG_CHANNEL "', $1)"},
    [S_PING] = {"ink_ping", 0, "SELECT 1"},
    /* the versions applied; the loop applies the others (a restored or hand-edited
     * database may lack one below the highest) */
    [S_MIG_VERSION] = {"ink_mig_version", 0,
                       "SELECT version FROM schema_migrations ORDER BY version"},
    [S_MIG_RECORD] = {"ink_mig_record", 2,
                      "INSERT INTO schema_migrations (version, applied_us) VALUES ($1, $2)"},
    /* name_fold, result_fold: the folded columns of API.md §15 (pg_fold()) */
    [S_DOC_INSERT] = {"ink_doc_insert", 11,
                      "INSERT INTO documents (user_id, name, favorite, state, created_us,"
                      " updated_us, prompt, creativity, template_id, words, tone, language,"
                      " length, name_fold)"
                      " VALUES ($1, $2, $3, 'queued', $4, $4, $5, $6, $7, 0, $8, $9, $10, $11)"
                      " RETURNING id"},
    [S_IMG_INSERT] = {"ink_img_insert", 8,
                      "INSERT INTO images (user_id, name, favorite, state, created_us, updated_us,"
                      " description, resolution, style, name_fold)"
                      " VALUES ($1, $2, $3, 'queued', $4, $4, $5, $6, $7, $8) RETURNING id"},
    /* with its first revision */
    [S_DOC_INSERT_DONE] = {"ink_doc_insert_done", 17,
                           "WITH d AS (INSERT INTO documents (user_id, name, favorite, state,"
                           " created_us, updated_us, prompt, creativity, template_id, result,"
                           " words, prompt_tokens, completion_tokens, truncated, tone, language,"
                           " length, revision, name_fold, result_fold)"
                           " VALUES ($1, $2, $3, 'completed', $4, $4, $5, $6, $7, $8, $9,"
                           " $10, $11, $12, $13, $14, $15, 1, $16, $17) RETURNING *),"
                           " r AS (" DOC_REV_FROM("'generation'", "NULL", "created_us", "d") ")"
                           " SELECT id FROM d"},
    [S_JOB_INSERT] = {"ink_job_insert", 3,
                      "INSERT INTO jobs (kind, record_id, created_us) VALUES ($1, $2, $3)"
                      " RETURNING id"},
    [S_DOC_GET] = {"ink_doc_get", 2,
                   "SELECT " DOC_COLS " FROM documents WHERE user_id = $1 AND id = $2"},
    [S_IMG_GET] = {"ink_img_get", 2,
                   "SELECT " IMG_COLS " FROM images WHERE user_id = $1 AND id = $2"},
    [S_DOC_UPDATE] = {"ink_doc_update", 10,
                      "WITH u AS (UPDATE documents SET name = COALESCE($3::text, name),"
                      " name_fold = COALESCE($9::text, name_fold),"
                      " result = CASE WHEN $4::boolean THEN $5::text ELSE result END,"
                      " result_fold = CASE WHEN $4::boolean THEN $10::text ELSE result_fold END,"
                      " words = CASE WHEN $4::boolean THEN $6::bigint ELSE words END,"
                      " favorite = CASE WHEN $7::int < 0 THEN favorite ELSE $7::int <> 0 END,"
                      " revision = revision + CASE WHEN $4::boolean THEN 1 ELSE 0 END,"
                      " has_draft = has_draft AND NOT $4::boolean,"
                      " " SEQ("CASE WHEN $4::boolean THEN 1 ELSE 0 END") ","
                      " prompt_tokens = CASE WHEN $4::boolean THEN NULL ELSE prompt_tokens END,"
                      " completion_tokens = CASE WHEN $4::boolean THEN NULL"
                      " ELSE completion_tokens END,"
                      " truncated = CASE WHEN $4::boolean THEN false ELSE truncated END,"
                      " " BUMP("$8") " WHERE user_id = $1 AND id = $2 RETURNING *),"
                      " r AS (" DOC_REV_FROM("'edit'", "NULL", "updated_us", "u WHERE $4::boolean") "),"
                      " dd AS (DELETE FROM drafts WHERE $4::boolean AND document_id IN"
                      " (SELECT id FROM u))"
                      " SELECT " DOC_COLS " FROM u"},
    [S_IMG_UPDATE] = {"ink_img_update", 6,
                      "UPDATE images SET name = COALESCE($3::text, name),"
                      " name_fold = COALESCE($6::text, name_fold),"
                      " favorite = CASE WHEN $4::int < 0 THEN favorite ELSE $4::int <> 0 END,"
                      " " BUMP("$5") " WHERE user_id = $1 AND id = $2 RETURNING " IMG_COLS},
    [S_DOC_DELETE] = {"ink_doc_delete", 2,
                      "WITH r AS (DELETE FROM documents WHERE user_id = $1 AND id = $2"
                      " RETURNING id),"
                      " j AS (DELETE FROM jobs WHERE kind = 0 AND record_id IN (SELECT id FROM r)),"
                      " v AS (DELETE FROM document_revisions"
                      " WHERE document_id IN (SELECT id FROM r))"
                      " SELECT NULL::text FROM r"},
    [S_IMG_DELETE] = {"ink_img_delete", 2,
                      "WITH r AS (DELETE FROM images WHERE user_id = $1 AND id = $2"
                      " RETURNING id, media_key),"
                      " j AS (DELETE FROM jobs WHERE kind = 1 AND record_id IN (SELECT id FROM r)),"
                      " v AS (DELETE FROM image_revisions WHERE image_id IN (SELECT id FROM r)"
                      " RETURNING media_key)"
                      " SELECT media_key FROM r UNION SELECT media_key FROM v"},
    /* $4: the jobs this process runs now (a JSON array or NULL), never taken over */
    [S_JOB_PICK] = {"ink_job_pick", 4,
                    "UPDATE jobs SET token = $2, lease_until_us = $3, attempts = attempts + 1,"
                    " partial = NULL, partial_seq = NULL"
                    " WHERE id = (SELECT id FROM jobs WHERE (token IS NULL OR lease_until_us < $1)"
                    " AND id NOT IN (SELECT value::bigint FROM json_array_elements_text($4::json))"
                    " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)"
                    " RETURNING id, kind, record_id, attempts, regen, prompt, creativity,"
                    " template_id, tone, language, length, description, resolution, style,"
                    " action, sel_start, sel_end, base_revision"},
    [S_DOC_CLAIM] = {"ink_doc_claim", 2,
                     "UPDATE documents SET state = 'generating', " SEQ("1") ", " BUMP("$2") " WHERE id = $1"
                     " RETURNING " DOC_COLS},
    [S_IMG_CLAIM] = {"ink_img_claim", 2,
                     "UPDATE images SET state = 'generating', " SEQ("1") ", " BUMP("$2") " WHERE id = $1"
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
    /* $1 job, $2 token, $3 result, $4 words, $5 now, $6 prompt tokens, $7 completion
     * tokens, $8 truncated, $9 a regeneration (its inputs $10-$15 become the record's),
     * $16 the revision's source, $17 the result folded (pg_fold, API.md §15), $18 the
     * action (§17) or NULL, $20 $21 the part it rewrote (code points) or NULL: the next
     * revision is made of the row, which comes back (no row: the job, with this token,
     * is gone) */
    [S_JOB_COMPLETE] = {"ink_job_complete", 21,
                        "WITH j AS (DELETE FROM jobs WHERE id = $1 AND token = $2"
                        " RETURNING kind, record_id),"
                        " d AS (UPDATE documents t SET state = 'completed', error = NULL,"
                        " result = $3::text, result_fold = $17::text, words = $4::bigint,"
                        " prompt_tokens = $6::bigint,"
                        " completion_tokens = $7::bigint, truncated = $8::boolean,"
                        " revision = t.revision + 1,"
                        " prompt = CASE WHEN $9::boolean THEN $10::text ELSE t.prompt END,"
                        " creativity = CASE WHEN $9::boolean THEN $11::float8 ELSE t.creativity END,"
                        " template_id = CASE WHEN $9::boolean THEN $12::int ELSE t.template_id END,"
                        " tone = CASE WHEN $9::boolean THEN $13::text ELSE t.tone END,"
                        " language = CASE WHEN $9::boolean THEN $14::text ELSE t.language END,"
                        " length = CASE WHEN $9::boolean THEN $15::text ELSE t.length END, "
                        SEQ("1 + $19::bigint") ", " BUMP("$5") " FROM j WHERE j.kind = 0 AND t.id = j.record_id"
                        " RETURNING t.*),"
                        " dr AS (" DOC_REV_PART_FROM("$16::text", "$18::text", "$5::bigint",
                                                     "$20::bigint, $21::bigint", "d") ")"
                        " SELECT " DOC_COLS " FROM d"},
    /* an action's job (API.md §24), $1 job, $2 token: the document is still at the
     * revision the action was asked on, and its text is $3 (the action changes nothing);
     * the row locked until the outcome is stored */
    [S_ACTION_CHECK] = {"ink_action_check", 3,
                        "SELECT d.revision = j.base_revision, d.result IS NOT DISTINCT FROM $3::text"
                        " FROM jobs j JOIN documents d ON d.id = j.record_id AND j.kind = 0"
                        " WHERE j.id = $1 AND j.token = $2 FOR UPDATE OF d"},
    /* an action that changed nothing (no revision; $3 NULL) or lost the race ($3 the
     * error): $4 now, $5 the text pieces published */
    [S_ACTION_END] = {"ink_action_end", 5,
                      "WITH j AS (DELETE FROM jobs WHERE id = $1 AND token = $2"
                      " RETURNING kind, record_id),"
                      " d AS (UPDATE documents t SET state = 'completed', error = $3::text, "
                      SEQ("1 + $5::bigint") ", " BUMP("$4") " FROM j WHERE j.kind = 0"
                      " AND t.id = j.record_id RETURNING t.*)"
                      " SELECT " DOC_COLS " FROM d"},
    /* $1 job, $2 token, $3 media_key, $4 revised_prompt, $5 now, $6 a regeneration (its
     * inputs $7-$9), $10 the revision's source */
    [S_JOB_COMPLETE_IMG] = {"ink_job_complete_img", 11,
                            "WITH j AS (DELETE FROM jobs WHERE id = $1 AND token = $2"
                            " RETURNING kind, record_id),"
                            " i AS (UPDATE images t SET state = 'completed', error = NULL,"
                            " media_key = $3::text, revised_prompt = $4::text,"
                            " revision = t.revision + 1,"
                            " description = CASE WHEN $6::boolean THEN $7::text"
                            " ELSE t.description END,"
                            " resolution = CASE WHEN $6::boolean THEN $8::text"
                            " ELSE t.resolution END,"
                            " style = CASE WHEN $6::boolean THEN $9::text ELSE t.style END, "
                            SEQ("1 + $11::bigint") ", " BUMP("$5") " FROM j WHERE j.kind = 1 AND t.id = j.record_id"
                            " RETURNING t.*),"
                            " ir AS (" IMG_REV_FROM("$10::text", "$5::bigint", "i") ")"
                            " SELECT " IMG_COLS " FROM i"},
    /* $3 error, $4 now; a record with a revision keeps showing it (a regeneration
     * failed) */
    [S_JOB_FAIL] = {"ink_job_fail", 5,
                    JOB_FINISH("state = CASE WHEN t.revision > 0 THEN 'completed' ELSE 'failed'"
                               " END, error = $3::text, " SEQ("1 + $5::bigint") ", " BUMP("$4"),
                               "state = CASE WHEN t.revision > 0 THEN 'completed' ELSE 'failed'"
                               " END, error = $3::text, " SEQ("1 + $5::bigint") ", " BUMP("$4"),
                               "")},
    [S_JOB_COUNT] = {"ink_job_count", 0, "SELECT count(*) FROM jobs"},
    [S_JOB_EXISTS] = {"ink_job_exists", 1, "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)"},
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
                      "SELECT media_key COLLATE \"C\" FROM images WHERE media_key IS NOT NULL"
                      " UNION SELECT media_key FROM image_revisions WHERE media_key IS NOT NULL"
                      " ORDER BY 1"},
    /* ---- revisions (pg_revisions.c) ---- */
    /* $1 record, $2 source, $3 now: the record's content as its revision `revision` */
    [S_REV_SNAP_DOC] = {"ink_rev_snap_doc", 3,
                        DOC_REV_FROM("$2::text", "NULL", "$3::bigint", "documents WHERE id = $1")},
    [S_REV_SNAP_IMG] = {"ink_rev_snap_img", 3,
                        IMG_REV_FROM("$2::text", "$3::bigint", "images WHERE id = $1")},
    /* $1 record, $2 how many to keep */
    [S_REV_TRIM_DOC] = {"ink_rev_trim_doc", 2,
                        "DELETE FROM document_revisions WHERE document_id = $1 AND number <="
                        " (SELECT revision FROM documents WHERE id = $1) - $2::bigint"
                        " RETURNING NULL::text"},
    [S_REV_TRIM_IMG] = {"ink_rev_trim_img", 2,
                        "DELETE FROM image_revisions WHERE image_id = $1 AND number <="
                        " (SELECT revision FROM images WHERE id = $1) - $2::bigint"
                        " RETURNING media_key"},
    /* $1 user, $2 record, $3 limit, $4 offset: the count first, then the page (the count
     * is on every row; a page past the end gives it alone, revision columns NULL) */
    [S_REV_LIST_DOC] = {"ink_rev_list_doc", 4,
                        "SELECT (SELECT count(*) FROM document_revisions WHERE document_id = $2),"
                        " v.* FROM documents d LEFT JOIN LATERAL (SELECT " REVDOC_COLS
                        " FROM document_revisions WHERE document_id = d.id"
                        " ORDER BY number DESC LIMIT $3 OFFSET $4) v ON true"
                        " WHERE d.user_id = $1 AND d.id = $2"},
    [S_REV_LIST_IMG] = {"ink_rev_list_img", 4,
                        "SELECT (SELECT count(*) FROM image_revisions WHERE image_id = $2),"
                        " v.* FROM images d LEFT JOIN LATERAL (SELECT " REVIMG_COLS
                        " FROM image_revisions WHERE image_id = d.id"
                        " ORDER BY number DESC LIMIT $3 OFFSET $4) v ON true"
                        " WHERE d.user_id = $1 AND d.id = $2"},
    /* $1 user, $2 record, $3 number: one row when the record is the user's (revision
     * columns NULL when there is no such revision) */
    [S_REV_GET_DOC] = {"ink_rev_get_doc", 3,
                       "SELECT 0, v.* FROM documents d LEFT JOIN LATERAL (SELECT " REVDOC_COLS
                       ", part_start, part_end"
                       " FROM document_revisions WHERE document_id = d.id AND number = $3) v"
                       " ON true WHERE d.user_id = $1 AND d.id = $2"},
    [S_REV_GET_IMG] = {"ink_rev_get_img", 3,
                       "SELECT 0, v.* FROM images d LEFT JOIN LATERAL (SELECT " REVIMG_COLS
                       " FROM image_revisions WHERE image_id = d.id AND number = $3) v"
                       " ON true WHERE d.user_id = $1 AND d.id = $2"},
    /* $1 user, $2 id, $3 now */
    [S_DOC_REGEN] = {"ink_doc_regen", 3,
                     "UPDATE documents SET state = 'queued', " SEQ("1") ", " BUMP("$3") " WHERE user_id = $1"
                     " AND id = $2 AND state IN ('completed', 'failed') RETURNING " DOC_COLS},
    [S_IMG_REGEN] = {"ink_img_regen", 3,
                     "UPDATE images SET state = 'queued', " SEQ("1") ", " BUMP("$3") " WHERE user_id = $1"
                     " AND id = $2 AND state IN ('completed', 'failed') RETURNING " IMG_COLS},
    /* a document regenerated in the request (pg_record_regenerated): $1 user, $2 id, $3
     * result, $4 result folded, $5 words, $6-$8 usage, $9-$14 the inputs, $15 now; queued
     * and completed at once (the event sequence +2), with its revision */
    [S_DOC_REGEN_DONE] = {"ink_doc_regen_done", 15,
                          "WITH d AS (UPDATE documents t SET state = 'completed', error = NULL,"
                          " result = $3::text, result_fold = $4::text, words = $5::bigint,"
                          " prompt_tokens = $6::bigint, completion_tokens = $7::bigint,"
                          " truncated = $8::boolean, revision = t.revision + 1,"
                          " prompt = $9::text, creativity = $10::float8, template_id = $11::int,"
                          " tone = $12::text, language = $13::text, length = $14::text, "
                          SEQ("2") ", " BUMP("$15") " WHERE user_id = $1 AND id = $2"
                          " AND state IN ('completed', 'failed') RETURNING t.*),"
                          " dr AS (" DOC_REV_FROM("'regeneration'", "NULL", "$15::bigint", "d") ")"
                          " SELECT " DOC_COLS " FROM d"},
    /* $1 kind, $2 record, $3 now, then the inputs */
    [S_JOB_INSERT_REGEN] = {"ink_job_insert_regen", 16,
                            "INSERT INTO jobs (kind, record_id, created_us, regen, prompt,"
                            " creativity, template_id, tone, language, length, description,"
                            " resolution, style, action, sel_start, sel_end, base_revision)"
                            " VALUES ($1, $2, $3, true, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
                            " $13, $14, $15, $16)"
                            " RETURNING id"},
    /* $1 user, $2 id, $3 number, $4 now (, $5 media key) */
    [S_DOC_RESTORE] = {"ink_doc_restore", 4,
                       "UPDATE documents SET (prompt, creativity, template_id, tone, language,"
                       " length, result, words, prompt_tokens, completion_tokens, truncated) ="
                       " (SELECT prompt, creativity, template_id, tone, language, length,"
                       " COALESCE(r.result, documents.result), words, prompt_tokens,"
                       " completion_tokens, truncated"
                       " FROM document_revisions r WHERE document_id = $2 AND number = $3),"
                       " revision = revision + 1, error = NULL, state = CASE WHEN state IN"
                       " ('queued', 'generating') THEN state ELSE 'completed' END, " SEQ("1")
                       ", " BUMP("$4")
                       " WHERE user_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM"
                       " document_revisions WHERE document_id = $2 AND number = $3)"
                       " RETURNING " DOC_COLS},
    /* $1 id, $2 the result folded (pg_fold, API.md §15): after a restore, in its
     * transaction */
    [S_DOC_REFOLD] = {"ink_doc_refold", 2,
                      "UPDATE documents SET result_fold = $2::text WHERE id = $1"},
    [S_IMG_RESTORE] = {"ink_img_restore", 5,
                       "UPDATE images SET (description, resolution, style, revised_prompt) ="
                       " (SELECT description, resolution, style, revised_prompt"
                       " FROM image_revisions WHERE image_id = $2 AND number = $3),"
                       " media_key = $5, revision = revision + 1, error = NULL, state = CASE"
                       " WHEN state IN ('queued', 'generating') THEN state ELSE 'completed' END, "
                       SEQ("1") ", " BUMP("$4") " WHERE user_id = $1 AND id = $2 AND EXISTS"
                       " (SELECT 1 FROM image_revisions WHERE image_id = $2 AND number = $3)"
                       " RETURNING " IMG_COLS},
};
