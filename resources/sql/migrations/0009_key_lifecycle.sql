-- Idem schema v9: key lifecycle (issue #16). Succeeded keys are kept for a horizon per
-- operation, then purged in small batches that never hold up a claim; the console's Storage page
-- reads what the tables hold and what a purge would do.
--
-- 1. Retention policy (idem_retention_policy): one row per operation with a horizon of its own,
--    and the '*' row for every other operation (defaults: charge 30 days, '*' 7 days). Changed
--    only by idem_set_retention / idem_clear_retention (idem_operator), each one audit entry.
--    A row is due when it is succeeded and its completion time (updated_at: complete() sets it,
--    nothing changes a succeeded row afterwards) is before now() minus its operation's horizon
--    (the second ':'-separated part of the key); exactly at the horizon it is kept. Processing,
--    retryable_failed and failed rows are never removed, whatever their age. A claim of a
--    purged key creates it anew: the task executes again.
-- 2. The purge: idem_purge_begin / idem_purge_batch / idem_purge_finish, each its own short
--    transaction (idemctl purge drives them; CALL idem_purge_run(...) does the same with a
--    COMMIT between batches, for pg_cron), or idem_purge(batch, max_batches): one bounded run in
--    the caller's transaction. A batch takes due rows through task_idempotency_succeeded_idx
--    (operation, updated_at) WHERE status = 'succeeded', FOR UPDATE SKIP LOCKED (a row anyone
--    holds is skipped, never waited for), and the DELETE checks status and horizon again. A claim
--    reads a succeeded row without a lock (0006), so it never waits for a batch either. Every
--    batch records what it removed in the run's row (idem_purge_runs) in its own transaction, so
--    a kill leaves nothing half-written; the run's session holds an advisory lock, and the next
--    run closes a run whose session is gone as abandoned. One audit entry per run (action
--    'purge'), never one per row. The audit trail itself is never purged.
-- 3. Audit entries without a task key: action 'retention' or 'purge', idempotency_key ''. They
--    join the same hash chain through audit_append (the v7 append: the head row's lock, dense ids,
--    audit_entry_hash unchanged), so entries of every kind verify alike.
-- 4. Storage figures for readers: idem_storage_tables() (sizes, tuples, vacuum times of the Idem
--    tables), idem_retention_due(cap) (per operation: horizon, oldest succeeded row, rows due
--    counted up to the cap), the runs, and idem_storage_samples (task_idempotency's size over
--    time, at most one sample per 15 minutes, written by idem_storage_sample() from the shared
--    exact refresh, the purge and storage reads; expired with the counters' expire_after).
--
-- The new index is built here inside the migration's transaction (a SHARE lock on
-- task_idempotency for one scan: claims of new keys and completions wait). For a big live table,
-- build it first, outside any transaction; this migration then takes it as it is:
--   CREATE INDEX CONCURRENTLY task_idempotency_succeeded_idx ON <schema>.task_idempotency
--       (split_part(idempotency_key, ':', 2), updated_at) WHERE status = 'succeeded';

DO $index$
DECLARE
    c_target constant text := $d$USING btree (split_part(idempotency_key, ':'::text, 2), updated_at) WHERE (status = 'succeeded'::text)$d$;
    v_idx regclass := to_regclass(quote_ident(current_schema()) || '.task_idempotency_succeeded_idx');
BEGIN
    IF v_idx IS NULL THEN
        CREATE INDEX task_idempotency_succeeded_idx ON task_idempotency (split_part(idempotency_key, ':', 2), updated_at)
            WHERE status = 'succeeded';
    ELSIF NOT (SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = v_idx)
          OR substring(pg_get_indexdef(v_idx) FROM ' (USING .*)$') IS DISTINCT FROM c_target THEN
        RAISE EXCEPTION 'index task_idempotency_succeeded_idx exists but is not valid or is defined as "%", expected "... %"',
                        pg_get_indexdef(v_idx), c_target
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
    END IF;
END
$index$;

ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge')));

-- audit_append(): defined in functions/audit_append.sql

-- audit_check_reason(): defined in functions/audit_check_reason.sql

CREATE TABLE idem_retention_policy (
    operation  TEXT PRIMARY KEY CHECK (operation = '*' OR operation ~ '^[!-9;-~]{1,64}$'),
    -- Whole seconds (built as N * interval '1 second'): a horizon is an exact duration, never
    -- a calendar month or a day that a DST change makes 23 hours long.
    horizon    INTERVAL NOT NULL CHECK (horizon BETWEEN interval '1 hour' AND interval '3650 days'
                                        AND extract(day FROM horizon) = 0 AND extract(month FROM horizon) = 0),
    changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    changed_by TEXT NOT NULL
);
INSERT INTO idem_retention_policy (operation, horizon, changed_by) VALUES
    ('*', 7 * 86400 * interval '1 second', 'migration'),
    ('charge', 30 * 86400 * interval '1 second', 'migration');

-- idem_succeeded_operations(): defined in functions/idem_succeeded_operations.sql

-- idem_retention_horizon(): defined in functions/idem_retention_horizon.sql

-- idem_retention_due(): defined in functions/idem_retention_due.sql

-- idem_set_retention(): defined in functions/idem_set_retention.sql

-- idem_clear_retention(): defined in functions/idem_clear_retention.sql

-- One row per purge run. operations: per operation the run has visited, {"from": the completion
-- time it has purged up to, "cutoff", "horizon_seconds": of its last batch, "removed"}; written
-- with each batch, in the batch's transaction.
CREATE TABLE idem_purge_runs (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    state         TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'finished', 'abandoned')),
    started_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    last_batch_at TIMESTAMPTZ,
    finished_at   TIMESTAMPTZ,
    rows_removed  BIGINT NOT NULL DEFAULT 0 CHECK (rows_removed >= 0),
    batches       BIGINT NOT NULL DEFAULT 0 CHECK (batches >= 0),
    operations    JSONB NOT NULL DEFAULT '{}'::jsonb,
    db_role       TEXT NOT NULL,
    actor         TEXT NOT NULL,
    application   TEXT NOT NULL,
    reason        TEXT NOT NULL,
    audit_id      BIGINT,
    CHECK ((state = 'running') = (finished_at IS NULL))
);
CREATE INDEX idem_purge_runs_running_idx ON idem_purge_runs (id) WHERE state = 'running';

-- idem_purge_lock_key(): defined in functions/idem_purge_lock_key.sql

-- idem_purge_close(): defined in functions/idem_purge_close.sql

-- idem_purge_begin(): defined in functions/idem_purge_begin.sql

-- idem_purge_batch(): defined in functions/idem_purge_batch.sql

-- idem_purge_finish(): defined in functions/idem_purge_finish.sql

-- idem_purge(): defined in functions/idem_purge.sql

-- idem_purge_run(): defined in functions/idem_purge_run.sql

-- task_idempotency's size over time, one sample per bucket of 15 minutes.
CREATE TABLE idem_storage_samples (
    bucket        TIMESTAMPTZ PRIMARY KEY,
    taken_at      TIMESTAMPTZ NOT NULL,
    table_bytes   BIGINT NOT NULL,
    index_bytes   BIGINT NOT NULL,
    rows_estimate BIGINT
);

-- idem_storage_sample(): defined in functions/idem_storage_sample.sql

-- idem_storage_tables(): defined in functions/idem_storage_tables.sql

-- v8's shared exact refresh (0008) with two changes, marked v9: a size sample when one is due; and
-- the row lock is waited for (up to 2 s) instead of skipped: a reader's begin() holds it for a
-- moment while it looks, and v8 lost the whole refresh when finish() met it there (its attempt
-- was marked, so nobody tried again for a minute).
-- idem_exact_refresh_finish(): changed in functions/idem_exact_refresh_finish.sql

-- Nobody but the owner holds any privilege on the new tables beyond what roles.sql grants.
DO $private$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT c.relname, a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid IN ('idem_retention_policy'::regclass, 'idem_purge_runs'::regclass,
                              'idem_storage_samples'::regclass)
                AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM %s', g.relname, g.name);
    END LOOP;
    REVOKE ALL ON idem_retention_policy, idem_purge_runs, idem_storage_samples FROM PUBLIC;
END
$private$;
