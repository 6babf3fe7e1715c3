/* pg_schema.c — the PostgreSQL store's schema: its numbered migrations, pg_migrate()
 * which applies them, and the health check (pg_ping). */
#include "store/pg_int.h"

#include "core/log.h"

#include <inttypes.h>

#define PG_MIGRATE_LOCK "727370514152313" /* pg_advisory_xact_lock key of pg_migrate() */

/* ---- schema ---------------------------------------------------------------------- */

/* Numbered migrations; version = index + 1. Never edit one that has shipped: append. */
/* The columns of a record's copy for its webhook event (migration 22): those DOC_COLS /
 * IMG_COLS read. */
#define WH_SNAP_DOC DOC_COLS
#define WH_SNAP_IMG                                                                        \
    "id, user_id, name, favorite, state, error, created_us, updated_us, description, "    \
    "resolution, style, media_key, revised_prompt, revision, event_seq, tags"

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
    /* 7 (pages): how common each trigram of the searched columns is, for pg_trgm.c:
     * statistics on the trigram arrays (their most common elements), which ANALYZE
     * keeps (PostgreSQL 14+: statistics on expressions; older servers go without). */
    "DO $$ BEGIN IF current_setting('server_version_num')::int >= 140000 THEN"
    "  EXECUTE 'CREATE STATISTICS documents_name_trgm_freq"
    "    ON (show_trgm(lower(name COLLATE \"C\"))) FROM documents';"
    "  EXECUTE 'CREATE STATISTICS documents_result_trgm_freq"
    "    ON (show_trgm(lower(result COLLATE \"C\"))) FROM documents';"
    "  EXECUTE 'CREATE STATISTICS images_name_trgm_freq"
    "    ON (show_trgm(lower(name COLLATE \"C\"))) FROM images';"
    "END IF; END $$;"
    "ANALYZE documents; ANALYZE images;",
    /* 8 (revisions, API.md §16): each record's revisions, its latest number, the
     * writing options of §17 with their defaults, and a regeneration's inputs on its
     * job. A completed record becomes revision 1 of what it shows now. */
    "ALTER TABLE documents ADD COLUMN revision BIGINT NOT NULL DEFAULT 0,"
    "  ADD COLUMN tone TEXT NOT NULL DEFAULT 'neutral',"
    "  ADD COLUMN language TEXT NOT NULL DEFAULT 'en',"
    "  ADD COLUMN length TEXT NOT NULL DEFAULT 'medium';"
    "ALTER TABLE images ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN regen BOOLEAN NOT NULL DEFAULT false,"
    "  ADD COLUMN prompt TEXT, ADD COLUMN creativity DOUBLE PRECISION,"
    "  ADD COLUMN template_id INTEGER, ADD COLUMN tone TEXT, ADD COLUMN language TEXT,"
    "  ADD COLUMN length TEXT, ADD COLUMN description TEXT, ADD COLUMN resolution TEXT,"
    "  ADD COLUMN style TEXT;"
    "CREATE TABLE document_revisions ("
    "  document_id BIGINT NOT NULL,"
    "  number BIGINT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  action TEXT,"
    "  created_us BIGINT NOT NULL,"
    "  prompt TEXT NOT NULL,"
    "  creativity DOUBLE PRECISION NOT NULL,"
    "  template_id INTEGER NOT NULL,"
    "  tone TEXT NOT NULL,"
    "  language TEXT NOT NULL,"
    "  length TEXT NOT NULL,"
    "  result TEXT,"
    "  words BIGINT NOT NULL,"
    "  prompt_tokens BIGINT,"
    "  completion_tokens BIGINT,"
    "  truncated BOOLEAN NOT NULL,"
    "  PRIMARY KEY (document_id, number));"
    "CREATE TABLE image_revisions ("
    "  image_id BIGINT NOT NULL,"
    "  number BIGINT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  action TEXT,"
    "  created_us BIGINT NOT NULL,"
    "  description TEXT NOT NULL,"
    "  resolution TEXT NOT NULL,"
    "  style TEXT,"
    "  media_key TEXT,"
    "  revised_prompt TEXT,"
    "  PRIMARY KEY (image_id, number));"
    "UPDATE documents SET revision = 1 WHERE state = 'completed';"
    "UPDATE images SET revision = 1 WHERE state = 'completed';"
    "INSERT INTO document_revisions SELECT id, 1, 'generation', NULL, updated_us, prompt,"
    "  creativity, template_id, tone, language, length, result, words, prompt_tokens,"
    "  completion_tokens, truncated FROM documents WHERE revision = 1;"
    "INSERT INTO image_revisions SELECT id, 1, 'generation', NULL, updated_us, description,"
    "  resolution, style, media_key, revised_prompt FROM images WHERE revision = 1;",
    /* 9 = PG_MIG_UNICODE (API.md §15): search and order for every language. The
     * searched columns' default case folding (core/unicode.c) is kept beside them
     * (name_fold, result_fold; the store writes them with the records); the name order
     * is ICU's root collation ("und-x-icu", the order of core/unicode.c's keys). Here
     * the old indexes go and the columns come; pg_unicode_migrate (pg_lists.c) then
     * fills them in C and builds the new indexes, in this migration's transaction. */
    "ALTER TABLE documents ADD COLUMN name_fold TEXT, ADD COLUMN result_fold TEXT;"
    "ALTER TABLE images ADD COLUMN name_fold TEXT;"
    "DROP INDEX documents_name_trgm; DROP INDEX documents_result_trgm;"
    "DROP INDEX images_name_trgm;"
    "DROP STATISTICS IF EXISTS documents_name_trgm_freq, documents_result_trgm_freq,"
    "  images_name_trgm_freq;"
    "DROP INDEX documents_user_name; DROP INDEX images_user_name;",
    /* 10 (admin): key scopes and expiry, users' monthly
     * quotas (NULL = none) and usage per user and calendar month (API.md §19).
     * Existing keys become write keys that never expire. */
    "ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'write'"
    "  CHECK (scope IN ('write', 'read', 'admin')),"
    "  ADD COLUMN expires_us BIGINT;" /* NULL = never */
    "ALTER TABLE users ADD COLUMN quota_words BIGINT, ADD COLUMN quota_images BIGINT;"
    "CREATE TABLE usage_months ("
    "  user_id BIGINT NOT NULL,"
    "  period TEXT NOT NULL," /* YYYY-MM, UTC */
    "  words BIGINT NOT NULL,"
    "  images BIGINT NOT NULL,"
    "  prompt_tokens BIGINT NOT NULL,"
    "  completion_tokens BIGINT NOT NULL,"
    "  PRIMARY KEY (user_id, period));",
    /* 11 (templates): users' own templates (API.md §18). Ids from 1001, one sequence
     * for every user; a deleted template keeps its row (deleted_us set) so its
     * documents keep its name. */
    "CREATE TABLE templates ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 1001) PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id),"
    "  name TEXT NOT NULL,"
    "  description TEXT NOT NULL,"
    "  instruction TEXT NOT NULL,"
    "  created_us BIGINT NOT NULL,"
    "  updated_us BIGINT NOT NULL,"
    "  deleted_us BIGINT);" /* NULL = not deleted */
    "CREATE INDEX templates_user ON templates (user_id, id);",
    /* 12 (actions, API.md §17): an action's job carries its name and the selection, in code
     * points of the record's result (-1 and -1: the whole text). */
    "ALTER TABLE jobs ADD COLUMN action TEXT, ADD COLUMN sel_start BIGINT,"
    "  ADD COLUMN sel_end BIGINT;",
    /* 13 (events, records.h): each record's event sequence, bumped with every change of
     * its life (queued 1, generating, text pieces, completed or failed, revision made;
     * records stored before it start at 1), and with a running job's text so far the
     * number of its last piece (records/remote.c). */
    "ALTER TABLE documents ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 1;"
    "ALTER TABLE images ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 1;"
    "ALTER TABLE jobs ADD COLUMN partial_seq BIGINT;",
    /* 14 (size, API.md §16): a document's latest revision does not keep a copy of the
     * text the document holds: its result is NULL, read as the document's
     * (REVDOC_COLS). When the document's text changes, this trigger gives the old text
     * to the revisions that were sharing it (number <= the old latest: never the
     * revision the same statement makes). */
    "CREATE FUNCTION documents_revision_text() RETURNS trigger LANGUAGE plpgsql AS $$"
    "BEGIN"
    "  UPDATE document_revisions SET result = OLD.result WHERE document_id = OLD.id"
    "    AND number <= OLD.revision AND result IS NULL;"
    "  RETURN NULL;"
    "END $$;"
    "CREATE TRIGGER documents_revision_text AFTER UPDATE OF result ON documents"
    "  FOR EACH ROW WHEN (OLD.result IS DISTINCT FROM NEW.result)"
    "  EXECUTE FUNCTION documents_revision_text();"
    "UPDATE document_revisions r SET result = NULL FROM documents d"
    "  WHERE d.id = r.document_id AND d.revision = r.number AND r.result = d.result;",
    /* 15 (sign-in, API.md §21): users' roles and password hashes (Argon2id, libsodium's
     * string form; NULL = none), the users holding an admin key made admins; sessions
     * (only their ids' SHA-256 kept; key_id: the key a session was made from) and failed
     * sign-ins per bucket (a SHA-256 of the name or the client's address) and minute. */
    "ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'member'"
    "  CHECK (role IN ('admin', 'member')), ADD COLUMN password_hash TEXT;"
    "UPDATE users SET role = 'admin' WHERE id IN"
    "  (SELECT user_id FROM api_keys WHERE scope = 'admin');"
    "CREATE TABLE sessions ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id),"
    "  key_id BIGINT REFERENCES api_keys (id),"
    "  hash TEXT NOT NULL UNIQUE,"
    "  csrf TEXT NOT NULL,"
    "  scope TEXT NOT NULL,"
    "  user_agent TEXT,"
    "  created_us BIGINT NOT NULL,"
    "  last_seen_us BIGINT NOT NULL,"
    "  expires_us BIGINT NOT NULL);"
    "CREATE INDEX sessions_user ON sessions (user_id, id);"
    "CREATE INDEX sessions_expiry ON sessions (expires_us);"
    "CREATE TABLE signin_failures ("
    "  bucket TEXT NOT NULL,"
    "  minute BIGINT NOT NULL,"
    "  n BIGINT NOT NULL,"
    "  PRIMARY KEY (bucket, minute));",
    /* 16 (races, API.md §24): an action's job keeps the revision it was asked on; its
     * outcome is stored only on that revision. */
    "ALTER TABLE jobs ADD COLUMN base_revision BIGINT;",
    /* 17 (API.md §23, §24): tags and drafts (pg_tags.c; SQLite migration 23). A tag is
     * one row per user and folding (its spelling); record_tags links it to the records
     * that carry it (its primary key serves a list's tag filter); the record's `tags`
     * column is the JSON array it shows. A record's links go with it, and the tags no
     * record carries any more then (a trigger, under the user's tags lock: pg_tags.c);
     * its draft too (foreign key); a user's tags with the user. A change of a record's tags moves its
     * user's version (totals, page boundaries). */
    "ALTER TABLE documents ADD COLUMN tags TEXT,"
    "  ADD COLUMN has_draft BOOLEAN NOT NULL DEFAULT false;"
    "ALTER TABLE images ADD COLUMN tags TEXT;"
    "CREATE TABLE tags (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,"
    "  fold TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (user_id, fold));"
    "CREATE TABLE record_tags (tag_id BIGINT NOT NULL REFERENCES tags (id) ON DELETE CASCADE,"
    "  kind SMALLINT NOT NULL, record_id BIGINT NOT NULL, user_id BIGINT NOT NULL,"
    "  pos INTEGER NOT NULL, PRIMARY KEY (tag_id, kind, record_id));"
    "CREATE INDEX record_tags_record ON record_tags (kind, record_id, pos);"
    /* under the user's tags lock (pg_tags.c PG_TAGS_LOCK): the record's links, then
     * the tags no record carries any more */
    "CREATE FUNCTION ink_record_tags_del() RETURNS trigger LANGUAGE plpgsql AS $$"
    "  DECLARE ids BIGINT[]; BEGIN"
    "  PERFORM pg_advisory_xact_lock(727370514152314 # OLD.user_id);"
    "  WITH g AS (DELETE FROM record_tags WHERE kind = TG_ARGV[0]::smallint"
    "    AND record_id = OLD.id RETURNING tag_id) SELECT array_agg(tag_id) INTO ids FROM g;"
    "  DELETE FROM tags t WHERE t.id = ANY (ids)"
    "    AND NOT EXISTS (SELECT 1 FROM record_tags r WHERE r.tag_id = t.id);"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER documents_tags_del AFTER DELETE ON documents FOR EACH ROW"
    "  WHEN (OLD.tags IS NOT NULL) EXECUTE FUNCTION ink_record_tags_del('0');"
    "CREATE TRIGGER images_tags_del AFTER DELETE ON images FOR EACH ROW"
    "  WHEN (OLD.tags IS NOT NULL) EXECUTE FUNCTION ink_record_tags_del('1');"
    "CREATE TRIGGER documents_count_tags AFTER UPDATE OF tags ON documents FOR EACH ROW"
    "  WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION ink_count_records('0');"
    "CREATE TRIGGER images_count_tags AFTER UPDATE OF tags ON images FOR EACH ROW"
    "  WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION ink_count_records('1');"
    "CREATE TABLE drafts (document_id BIGINT PRIMARY KEY"
    "  REFERENCES documents (id) ON DELETE CASCADE, user_id BIGINT NOT NULL,"
    "  result TEXT NOT NULL, base_revision BIGINT NOT NULL, updated_us BIGINT NOT NULL);",
    /* 18 (webhooks, API.md §22): users' endpoints, the outbox of events (one per change
     * reported, written by the triggers below in the change's transaction, only when
     * the user has an enabled endpoint subscribed to the type) and their deliveries, one
     * per endpoint (state 0 pending, 1 delivered, 2 failed). */
    "CREATE TABLE webhooks ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES users (id),"
    "  url TEXT NOT NULL,"
    "  description TEXT NOT NULL,"
    "  events BIGINT NOT NULL," /* bits of store_webhooks.h */
    "  enabled BOOLEAN NOT NULL,"
    "  secret TEXT NOT NULL,"
    "  prev_secret TEXT,"
    "  prev_until_us BIGINT NOT NULL,"
    "  created_us BIGINT NOT NULL,"
    "  updated_us BIGINT NOT NULL);"
    "CREATE INDEX webhooks_user ON webhooks (user_id, id);"
    "CREATE TABLE webhook_events ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  msg TEXT NOT NULL,"
    "  user_id BIGINT NOT NULL,"
    "  type TEXT NOT NULL,"
    "  kind INTEGER NOT NULL," /* 0 document, 1 image, -1 ping */
    "  record_id BIGINT NOT NULL,"
    "  revision BIGINT NOT NULL,"
    "  created_us BIGINT NOT NULL,"
    "  body TEXT);" /* rendered by the first attempt (src/webhooks/) */
    "CREATE INDEX webhook_events_user ON webhook_events (user_id);"
    "CREATE TABLE webhook_deliveries ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  event_id BIGINT NOT NULL,"
    "  webhook_id BIGINT NOT NULL,"
    "  user_id BIGINT NOT NULL,"
    "  kind INTEGER NOT NULL,"
    "  record_id BIGINT NOT NULL,"
    "  state INTEGER NOT NULL,"
    "  attempts INTEGER NOT NULL,"
    "  last_status INTEGER,"
    "  last_error TEXT,"
    "  next_us BIGINT NOT NULL,"
    "  lease_us BIGINT NOT NULL,"
    "  created_us BIGINT NOT NULL);"
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_us) WHERE state = 0;"
    "CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, kind, record_id, id)"
    "  WHERE state = 0;"
    "CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);"
    "CREATE INDEX webhook_deliveries_user ON webhook_deliveries (user_id);"
    "CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);"
    "CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_us);"
    /* one event of the user's record (kind k, id rid) and its deliveries */
    "CREATE FUNCTION webhook_emit(uid bigint, typ text, mask bigint, k integer, rid bigint,"
    "  rev bigint, at_us bigint) RETURNS void LANGUAGE plpgsql AS $$"
    "DECLARE e bigint;"
    "BEGIN"
    "  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE user_id = uid AND enabled"
    "      AND (events & mask) <> 0) THEN RETURN; END IF;"
    "  INSERT INTO webhook_events (msg, user_id, type, kind, record_id, revision, created_us)"
    "    VALUES ('msg_' || replace(gen_random_uuid()::text, '-', ''), uid, typ, k, rid, rev, at_us)"
    "    RETURNING id INTO e;"
    "  INSERT INTO webhook_deliveries (event_id, webhook_id, user_id, kind, record_id, state,"
    "    attempts, next_us, lease_us, created_us) SELECT e, id, user_id, k, rid, 0, 0, at_us, 0, at_us"
    "    FROM webhooks WHERE user_id = uid AND enabled AND (events & mask) <> 0;"
    "END $$;"
    /* TG_ARGV: kind (0, 1), the type's noun, the shift of its bits (0, 4) */
    "CREATE FUNCTION webhook_revision() RETURNS trigger LANGUAGE plpgsql AS $$"
    "DECLARE rid bigint; uid bigint; is_first boolean := NEW.number = 1;"
    "BEGIN"
    "  IF TG_ARGV[0] = '0' THEN rid := NEW.document_id;"
    "    SELECT user_id INTO uid FROM documents WHERE id = rid;"
    "  ELSE rid := NEW.image_id; SELECT user_id INTO uid FROM images WHERE id = rid; END IF;"
    "  PERFORM webhook_emit(uid, TG_ARGV[1] || CASE WHEN is_first THEN '.completed' ELSE"
    "    '.revised' END, (CASE WHEN is_first THEN 1 ELSE 4 END)::bigint << TG_ARGV[2]::int,"
    "    TG_ARGV[0]::int, rid, NEW.number, NEW.created_us);"
    "  RETURN NULL;"
    "END $$;"
    "CREATE FUNCTION webhook_failed() RETURNS trigger LANGUAGE plpgsql AS $$"
    "DECLARE is_first boolean := NEW.revision = 0;"
    "BEGIN"
    "  PERFORM webhook_emit(NEW.user_id, TG_ARGV[1] || CASE WHEN is_first THEN '.failed' ELSE"
    "    '.revised' END, (CASE WHEN is_first THEN 2 ELSE 4 END)::bigint << TG_ARGV[2]::int,"
    "    TG_ARGV[0]::int, NEW.id, NEW.revision, NEW.updated_us);"
    "  RETURN NULL;"
    "END $$;"
    /* a record that failed its first generation and is deleted before any attempt told
     * of the failure (the waited create that §5 leaves no record of): no event at all */
    "CREATE FUNCTION webhook_deleted() RETURNS trigger LANGUAGE plpgsql AS $$"
    "BEGIN"
    "  IF NOT EXISTS (SELECT 1 FROM webhooks WHERE user_id = OLD.user_id) THEN RETURN NULL;"
    "  END IF;"
    "  IF OLD.revision = 0 AND OLD.state = 'failed' THEN"
    "    DELETE FROM webhook_deliveries WHERE kind = TG_ARGV[0]::int AND record_id = OLD.id"
    "      AND state = 0 AND attempts = 0;"
    "    IF NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE kind = TG_ARGV[0]::int"
    "        AND record_id = OLD.id) THEN RETURN NULL; END IF;"
    "  END IF;"
    "  PERFORM webhook_emit(OLD.user_id, TG_ARGV[1] || '.deleted',"
    "    8::bigint << TG_ARGV[2]::int, TG_ARGV[0]::int, OLD.id, OLD.revision,"
    "    (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);"
    "  RETURN NULL;"
    "END $$;"
    "CREATE TRIGGER webhook_documents_revision AFTER INSERT ON document_revisions"
    "  FOR EACH ROW EXECUTE FUNCTION webhook_revision('0', 'document', '0');"
    "CREATE TRIGGER webhook_images_revision AFTER INSERT ON image_revisions"
    "  FOR EACH ROW EXECUTE FUNCTION webhook_revision('1', 'image', '4');"
    "CREATE TRIGGER webhook_documents_failed AFTER UPDATE OF error ON documents"
    "  FOR EACH ROW WHEN (NEW.error IS NOT NULL)"
    "  EXECUTE FUNCTION webhook_failed('0', 'document', '0');"
    "CREATE TRIGGER webhook_images_failed AFTER UPDATE OF error ON images"
    "  FOR EACH ROW WHEN (NEW.error IS NOT NULL)"
    "  EXECUTE FUNCTION webhook_failed('1', 'image', '4');"
    "CREATE TRIGGER webhook_documents_deleted AFTER DELETE ON documents"
    "  FOR EACH ROW EXECUTE FUNCTION webhook_deleted('0', 'document', '0');"
    "CREATE TRIGGER webhook_images_deleted AFTER DELETE ON images"
    "  FOR EACH ROW EXECUTE FUNCTION webhook_deleted('1', 'image', '4');",
    /* 19 (webhooks, speed): an endpoint's deliveries claimed now, found by one index range
     * (the claim's bound of sends in flight per endpoint scanned every pending one). */
    "CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (webhook_id, lease_us)"
    "  WHERE state = 0;",
    /* 20 (sign-in, API.md §21; SQLite 26): a key's name (POST /keys), NULL when none */
    "ALTER TABLE api_keys ADD COLUMN name TEXT;",
    /* 21 (quotas, API.md §19): the generations in flight of users with a limit, seen by
     * every process's admission (pg_quota.c): a hold's units count until its record has
     * no job left (record_id set) or, unbound, until it expires. A user's data:
     * user_delete. */
    "CREATE TABLE quota_holds ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL,"
    "  kind SMALLINT NOT NULL CHECK (kind IN (0, 1)),"
    "  units BIGINT NOT NULL,"
    "  record_id BIGINT,"
    "  expires_us BIGINT NOT NULL);"
    "CREATE INDEX quota_holds_user ON quota_holds (user_id, kind);",
    /* 22 (webhooks, API.md §22; SQLite 29): each event of a record gets a copy of the
     * record's row (the columns a GET reads) in the change's transaction; the workers
     * render "data" from it (as GET showed it when the event happened); it goes with its
     * event. */
    "CREATE TABLE webhook_snap_docs AS SELECT 0::bigint AS event_id, " WH_SNAP_DOC
    "  FROM documents WITH NO DATA;"
    "CREATE UNIQUE INDEX webhook_snap_docs_event ON webhook_snap_docs (event_id);"
    "CREATE TABLE webhook_snap_imgs AS SELECT 0::bigint AS event_id, " WH_SNAP_IMG
    "  FROM images WITH NO DATA;"
    "CREATE UNIQUE INDEX webhook_snap_imgs_event ON webhook_snap_imgs (event_id);"
    "CREATE FUNCTION webhook_snap() RETURNS trigger LANGUAGE plpgsql AS $$"
    "BEGIN"
    "  IF TG_OP = 'DELETE' THEN"
    "    DELETE FROM webhook_snap_docs WHERE event_id = OLD.id;"
    "    DELETE FROM webhook_snap_imgs WHERE event_id = OLD.id;"
    "    RETURN NULL;"
    "  END IF;"
    "  IF NEW.type LIKE '%.deleted' THEN RETURN NULL; END IF;"
    "  IF NEW.kind = 0 THEN"
    "    INSERT INTO webhook_snap_docs SELECT NEW.id, " WH_SNAP_DOC " FROM documents"
    "      WHERE id = NEW.record_id;"
    "  ELSIF NEW.kind = 1 THEN"
    "    INSERT INTO webhook_snap_imgs SELECT NEW.id, " WH_SNAP_IMG " FROM images"
    "      WHERE id = NEW.record_id;"
    "  END IF;"
    "  RETURN NULL;"
    "END $$;"
    "CREATE TRIGGER webhook_events_snap AFTER INSERT OR DELETE ON webhook_events"
    "  FOR EACH ROW EXECUTE FUNCTION webhook_snap();",
    /* 23 (single sign-on, API.md §21; pg_oidc.c; SQLite migration 30): a user's link to
     * an issuer's subject (gone with the user's row), and the sign-ins begun at the
     * issuer (state and browser kept as SHA-256s, removed when taken or expired). */
    "ALTER TABLE users ADD COLUMN oidc_issuer TEXT, ADD COLUMN oidc_subject TEXT;"
    "CREATE UNIQUE INDEX users_oidc ON users (oidc_issuer, oidc_subject);"
    "CREATE TABLE oidc_flows ("
    "  state_hash TEXT PRIMARY KEY,"
    "  browser_hash TEXT NOT NULL,"
    "  nonce TEXT NOT NULL,"
    "  verifier TEXT NOT NULL,"
    "  created_us BIGINT NOT NULL,"
    "  expires_us BIGINT NOT NULL);"
    "CREATE INDEX oidc_flows_expiry ON oidc_flows (expires_us);",
    /* 24 (streams, API.md §10 and §17; SQLite 31): an action's revision keeps the part
     * it rewrote, in code points of its result (NULL for every other revision) */
    "ALTER TABLE document_revisions ADD COLUMN part_start BIGINT, ADD COLUMN part_end BIGINT;",
    /* 25 (webhooks, speed: issue 36; SQLite 32): fewer indexes written per event. The
     * deliveries' by user, event and time and the events' by user go (a user's deletion
     * finds the deliveries by its endpoints and scans the events; the sweep goes by id:
     * pg_webhooks.c). */
    "DROP INDEX webhook_deliveries_user;"
    "DROP INDEX webhook_deliveries_event;"
    "DROP INDEX webhook_deliveries_created;"
    "DROP INDEX webhook_events_user;",
    /* 26 (webhooks, speed: issue 36; SQLite 27): a claim takes one endpoint's due
     * deliveries in order by this index (pg_webhooks.c), in place of one order over
     * every endpoint's (which scanned the whole backlog while the endpoints were busy) */
    "CREATE INDEX webhook_deliveries_next ON webhook_deliveries (webhook_id, next_us, id)"
    "  WHERE state = 0;"
    "DROP INDEX webhook_deliveries_due;",
};

/* ---- schema and health ----------------------------------------------------------- */

int pg_migrate(store_conn_t *sc)
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
    int64_t want = (int64_t)ARRAY_LEN(migrations), have = 0;
    bool applied[ARRAY_LEN(migrations) + 1] = {false};
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t v = pg_col_i64(r, i, 0);
        if (v > have)
            have = v;
        if (v >= 1 && v <= want)
            applied[v] = true;
    }
    PQclear(r);
    r = NULL;
    if (have > want) {
        log_error("postgres: database schema version %" PRId64
                  " is newer than this program's (%" PRId64 ")",
                  have, want);
        rc = STORE_ERROR;
        goto out;
    }
    for (int64_t v = 1; v <= want && rc == STORE_OK; v++) {
        if (applied[v])
            continue;
        char what[48];
        snprintf(what, sizeof(what), "migration %" PRId64, v);
        rc = pg_command(c, migrations[v - 1], what);
        if (rc == STORE_OK && v == PG_MIG_UNICODE)
            rc = pg_unicode_migrate(c);
        if (rc != STORE_OK)
            break;
        pg_num_t nv = pg_num_i64(v), now = pg_num_i64(now_us());
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

int pg_ping(store_conn_t *sc)
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
