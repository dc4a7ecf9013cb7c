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

-- The v7 append (0007 recovery_action_apply), for entries of any kind: serialised on the head
-- row, the id dense, the hash as audit_entry_hash computes it. The caller checks its arguments,
-- runs READ COMMITTED and holds no lock an audited action could be waiting behind.
CREATE FUNCTION audit_append(p_key text, p_action text, p_reason text, p_actor text, p_before jsonb, p_after jsonb)
RETURNS bigint
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $append$
DECLARE
    v_found boolean;
    v_prev_id bigint;
    v_prev_hash text;
    v_id bigint;
    v_at timestamptz;
    v_at_us bigint;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_host text := COALESCE(host(inet_client_addr()), '[local]');
    v_app text := COALESCE(current_setting('application_name', true), '');
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'audited changes run in READ COMMITTED transactions, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;
    BEGIN
        PERFORM FROM task_idempotency_audit_head h FOR UPDATE;
        v_found := FOUND;
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'the audit trail stayed locked for % (lock_timeout): another audited change has appended'
                        ' to it and its transaction has not ended', current_setting('lock_timeout')
            USING ERRCODE = 'lock_not_available', HINT = 'Nothing changed. Retry.';
    END;
    IF NOT v_found THEN
        INSERT INTO task_idempotency_audit_head VALUES (true) ON CONFLICT DO NOTHING;
        PERFORM FROM task_idempotency_audit_head h FOR UPDATE;
    END IF;
    EXECUTE 'SELECT au.id, au.entry_hash FROM task_idempotency_audit au ORDER BY au.id DESC LIMIT 1'
       INTO v_prev_id, v_prev_hash;
    v_id := COALESCE(v_prev_id, 0) + 1;
    v_prev_hash := COALESCE(v_prev_hash, repeat('0', 64));
    v_at := clock_timestamp();
    v_at_us := (extract(epoch FROM v_at) * 1000000)::bigint;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    INSERT INTO task_idempotency_audit (id, at, idempotency_key, action, reason, db_role, os_user, client_host,
                                        application, before_image, after_image, prev_hash, entry_hash)
    OVERRIDING SYSTEM VALUE
    VALUES (v_id, v_at, p_key, p_action, p_reason, session_user, v_actor, v_host, v_app, p_before, p_after,
            v_prev_hash,
            audit_entry_hash(v_id, v_at_us, p_key, p_action, p_reason, session_user::text, v_actor, v_host, v_app,
                             p_before, p_after, v_prev_hash));
    RETURN v_id;
END
$append$;

-- Reason and actor as the recovery actions check them (0007).
CREATE FUNCTION audit_check_reason(p_reason text, p_actor text)
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_reason IS NULL OR audit_reason_blank(p_reason) THEN
        RAISE EXCEPTION 'a reason is required: it needs a visible character, not only white space or invisible'
                        ' characters' USING ERRCODE = 'ID003';
    END IF;
    IF char_length(p_reason) > 16384 THEN
        RAISE EXCEPTION 'the reason is % characters, more than the 16384 allowed', char_length(p_reason)
            USING ERRCODE = 'ID003';
    END IF;
    IF char_length(btrim(COALESCE(p_actor, ''))) > 256 THEN
        RAISE EXCEPTION 'the actor name is longer than 256 characters' USING ERRCODE = 'ID003';
    END IF;
END
$check$;

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

-- Operations that hold succeeded rows: one probe of task_idempotency_succeeded_idx each (a
-- loose index scan), however many rows each holds.
CREATE FUNCTION idem_succeeded_operations()
RETURNS SETOF text
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $ops$
    WITH RECURSIVE ops(op) AS (
        (SELECT split_part(t.idempotency_key, ':', 2) FROM task_idempotency t WHERE t.status = 'succeeded'
          ORDER BY split_part(t.idempotency_key, ':', 2) LIMIT 1)
        UNION ALL
        SELECT (SELECT split_part(t.idempotency_key, ':', 2) FROM task_idempotency t
                 WHERE t.status = 'succeeded' AND split_part(t.idempotency_key, ':', 2) > o.op
                 ORDER BY split_part(t.idempotency_key, ':', 2) LIMIT 1)
          FROM ops o WHERE o.op IS NOT NULL
    )
    SELECT o.op FROM ops o WHERE o.op IS NOT NULL
$ops$;

-- The horizon that applies to an operation: its own row, else '*'.
CREATE FUNCTION idem_retention_horizon(p_operation text)
RETURNS interval
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $h$
    SELECT COALESCE((SELECT p.horizon FROM idem_retention_policy p WHERE p.operation = p_operation),
                    (SELECT p.horizon FROM idem_retention_policy p WHERE p.operation = '*'))
$h$;

-- Per operation with succeeded rows or a policy row of its own: the horizon, the cutoff, the
-- oldest succeeded row's completion and the rows due, counted up to p_cap (due_capped: the
-- count stopped there, the figure is a lower bound). At most p_cap + 2 index entries per operation.
CREATE FUNCTION idem_retention_due(p_cap bigint)
RETURNS TABLE (operation text, policy_operation text, horizon_seconds bigint, cutoff timestamptz,
               oldest_completed_at timestamptz, due bigint, due_capped boolean, policy_changed_at timestamptz,
               policy_changed_by text)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
SET enable_seqscan = off
SET enable_bitmapscan = off
SET max_parallel_workers_per_gather = 0
AS $due$
DECLARE
    v_op text;
    v_n bigint;
BEGIN
    IF p_cap IS NULL OR p_cap NOT BETWEEN 1 AND 10000000 THEN
        RAISE EXCEPTION 'cap must be 1 to 10000000 rows, not %', p_cap USING ERRCODE = 'ID003';
    END IF;
    FOR v_op IN SELECT o FROM idem_succeeded_operations() o
                UNION SELECT p.operation FROM idem_retention_policy p WHERE p.operation <> '*'
                ORDER BY 1 LOOP
        SELECT v_op, p.operation, extract(epoch FROM p.horizon)::bigint, now() - p.horizon, p.changed_at, p.changed_by
          INTO operation, policy_operation, horizon_seconds, cutoff, policy_changed_at, policy_changed_by
          FROM idem_retention_policy p
         WHERE p.operation IN (v_op, '*')
         ORDER BY p.operation = '*' LIMIT 1;
        oldest_completed_at := (SELECT t.updated_at FROM task_idempotency t
                                 WHERE split_part(t.idempotency_key, ':', 2) = v_op AND t.status = 'succeeded'
                                 ORDER BY split_part(t.idempotency_key, ':', 2), t.updated_at LIMIT 1);
        SELECT count(*) INTO v_n
          FROM (SELECT FROM task_idempotency t
                 WHERE split_part(t.idempotency_key, ':', 2) = v_op AND t.status = 'succeeded'
                   AND t.updated_at < cutoff
                 LIMIT p_cap + 1) x;
        due := least(v_n, p_cap);
        due_capped := v_n > p_cap;
        RETURN NEXT;
    END LOOP;
END
$due$;

-- Sets an operation's horizon (or the '*' default), one audit entry (action 'retention', before
-- and after: the policy row, or null when the operation had none).
CREATE FUNCTION idem_set_retention(p_operation text, p_horizon_seconds bigint, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, operation text, horizon_seconds bigint, previous_horizon_seconds bigint,
               changed_at timestamptz, changed_by text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $set$
DECLARE
    v_old idem_retention_policy;
    v_new idem_retention_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_operation IS NULL OR NOT (p_operation = '*' OR p_operation ~ '^[!-9;-~]{1,64}$') THEN
        RAISE EXCEPTION 'operation must be ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
            COALESCE(quote_literal(p_operation), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_horizon_seconds IS NULL OR p_horizon_seconds NOT BETWEEN 3600 AND 3650::bigint * 86400 THEN
        RAISE EXCEPTION 'horizon must be 3600 to 315360000 seconds (1 hour to 3650 days), not %',
            COALESCE(p_horizon_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;

    SELECT * INTO v_old FROM idem_retention_policy p WHERE p.operation = p_operation FOR UPDATE;
    INSERT INTO idem_retention_policy AS p (operation, horizon, changed_at, changed_by)
    VALUES (p_operation, p_horizon_seconds * interval '1 second', now(), format('%s (%s)', session_user, v_actor))
    ON CONFLICT ON CONSTRAINT idem_retention_policy_pkey DO UPDATE
       SET horizon = EXCLUDED.horizon, changed_at = EXCLUDED.changed_at, changed_by = EXCLUDED.changed_by
    RETURNING p.* INTO v_new;

    audit_id := audit_append('', 'retention', p_reason, v_actor,
                             CASE WHEN v_old.operation IS NULL THEN jsonb_build_object('operation', p_operation, 'policy', NULL)
                                  ELSE jsonb_build_object('operation', p_operation, 'policy', jsonb_build_object(
                                           'horizon_seconds', extract(epoch FROM v_old.horizon)::bigint,
                                           'changed_at', v_old.changed_at, 'changed_by', v_old.changed_by)) END,
                             jsonb_build_object('operation', p_operation, 'policy', jsonb_build_object(
                                 'horizon_seconds', p_horizon_seconds, 'changed_at', v_new.changed_at,
                                 'changed_by', v_new.changed_by)));
    operation := p_operation;
    horizon_seconds := p_horizon_seconds;
    previous_horizon_seconds := extract(epoch FROM v_old.horizon)::bigint;
    changed_at := v_new.changed_at;
    changed_by := v_new.changed_by;
    RETURN NEXT;
END
$set$;

-- Removes an operation's own row: it falls back to '*'. The '*' row stays. audit_id NULL and
-- nothing audited when the operation had no row.
CREATE FUNCTION idem_clear_retention(p_operation text, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, operation text, previous_horizon_seconds bigint, horizon_seconds bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $clear$
DECLARE
    v_old idem_retention_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_operation IS NULL OR p_operation = '*' OR p_operation !~ '^[!-9;-~]{1,64}$' THEN
        RAISE EXCEPTION 'operation must be 1 to 64 visible ASCII characters without '':'' (the ''*'' default cannot be'
                        ' removed), not %', COALESCE(quote_literal(p_operation), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    DELETE FROM idem_retention_policy p WHERE p.operation = p_operation RETURNING p.* INTO v_old;
    operation := p_operation;
    horizon_seconds := extract(epoch FROM idem_retention_horizon(p_operation))::bigint;
    IF v_old.operation IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    previous_horizon_seconds := extract(epoch FROM v_old.horizon)::bigint;
    audit_id := audit_append('', 'retention', p_reason, v_actor,
                             jsonb_build_object('operation', p_operation, 'policy', jsonb_build_object(
                                 'horizon_seconds', previous_horizon_seconds, 'changed_at', v_old.changed_at,
                                 'changed_by', v_old.changed_by)),
                             jsonb_build_object('operation', p_operation, 'policy', NULL,
                                                'falls_back_to_default_seconds', horizon_seconds));
    RETURN NEXT;
END
$clear$;

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

-- The run's session holds this advisory lock from begin to finish; free means the session is gone.
CREATE FUNCTION idem_purge_lock_key(p_run bigint)
RETURNS bigint
LANGUAGE sql
IMMUTABLE
AS $$
    SELECT (hashtext('idem.purge')::bigint << 32) | (p_run & 4294967295)
$$;

-- Closes a run (finished, or abandoned when its session ended first) with its one audit entry.
CREATE FUNCTION idem_purge_close(r idem_purge_runs, p_state text)
RETURNS bigint
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $close$
DECLARE
    v_at timestamptz := clock_timestamp();
    v_audit bigint;
BEGIN
    v_audit := audit_append('', 'purge',
        CASE WHEN p_state = 'abandoned'
             THEN format('%s (run %s ended without finishing: its session was gone)', r.reason, r.id)
             ELSE r.reason END,
        r.actor,
        jsonb_build_object('run', r.id, 'started_at', r.started_at, 'db_role', r.db_role,
                           'application', r.application,
                           'policy', (SELECT jsonb_object_agg(p.operation, extract(epoch FROM p.horizon)::bigint)
                                        FROM idem_retention_policy p)),
        jsonb_build_object('run', r.id, 'state', p_state, 'rows_removed', r.rows_removed, 'batches', r.batches,
                           'finished_at', CASE WHEN p_state = 'abandoned' THEN r.last_batch_at ELSE v_at END,
                           'duration_ms', round(extract(epoch FROM COALESCE(
                               CASE WHEN p_state = 'abandoned' THEN r.last_batch_at ELSE v_at END, r.started_at)
                                                 - r.started_at) * 1000),
                           'operations', r.operations));
    UPDATE idem_purge_runs x
       SET state = p_state, finished_at = CASE WHEN p_state = 'abandoned' THEN COALESCE(r.last_batch_at, r.started_at)
                                               ELSE v_at END,
           audit_id = v_audit
     WHERE x.id = r.id;
    RETURN v_audit;
END
$close$;

-- Starts a run: closes runs whose session is gone (each with its audit entry), records this one
-- and takes its session lock. Returns the run's id.
CREATE FUNCTION idem_purge_begin(p_reason text DEFAULT 'purge', p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '100ms'
AS $begin$
DECLARE
    r idem_purge_runs;
    v_run bigint;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a purge runs in READ COMMITTED transactions, not %', current_setting('transaction_isolation')
            USING ERRCODE = 'ID003';
    END IF;
    -- A live run's session holds its lock; only a run whose lock is free is locked and closed
    -- (SKIP LOCKED: another run's begin may be closing it right now).
    FOR v_run IN SELECT x.id FROM idem_purge_runs x WHERE x.state = 'running' ORDER BY x.id LOOP
        IF pg_try_advisory_lock(idem_purge_lock_key(v_run)) THEN
            PERFORM pg_advisory_unlock(idem_purge_lock_key(v_run));
            SELECT * INTO r FROM idem_purge_runs x WHERE x.id = v_run AND x.state = 'running' FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                PERFORM idem_purge_close(r, 'abandoned');
            END IF;
        END IF;
    END LOOP;
    INSERT INTO idem_purge_runs (db_role, actor, application, reason)
    VALUES (session_user, CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END,
            COALESCE(current_setting('application_name', true), ''), p_reason)
    RETURNING id INTO v_run;
    PERFORM pg_advisory_lock(idem_purge_lock_key(v_run));
    RETURN v_run;
END
$begin$;

-- One batch of run p_run: at most p_batch due rows, oldest first per operation, in this
-- transaction. Rows another transaction holds are skipped. Returns what it removed; 0 (or
-- fewer than p_batch) means nothing more is due that nobody holds.
CREATE FUNCTION idem_purge_batch(p_run bigint, p_batch integer)
RETURNS TABLE (removed bigint, by_operation jsonb)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '100ms'
SET enable_seqscan = off
SET enable_bitmapscan = off
SET max_parallel_workers_per_gather = 0
AS $batch$
DECLARE
    r idem_purge_runs;
    v_ops jsonb;
    v_op text;
    v_from timestamptz;
    v_horizon interval;
    v_cutoff timestamptz;
    v_left bigint := p_batch;
    v_n bigint;
    v_max timestamptz;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO r FROM idem_purge_runs x WHERE x.id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'running' THEN
        RAISE EXCEPTION 'purge run % is not running (%)', p_run, COALESCE(r.state, 'no such run') USING ERRCODE = 'ID003';
    END IF;
    IF r.db_role <> session_user THEN
        RAISE EXCEPTION 'purge run % belongs to %', p_run, r.db_role USING ERRCODE = 'ID003';
    END IF;
    -- The operations known at the run's first batch; one that appears later is the next run's.
    v_ops := r.operations;
    IF r.batches = 0 THEN
        SELECT COALESCE(jsonb_object_agg(o, jsonb_build_object('from', '-infinity'::timestamptz, 'removed', 0)), '{}')
          INTO v_ops FROM idem_succeeded_operations() o;
    END IF;
    removed := 0;
    by_operation := '{}';
    FOR v_op IN SELECT k FROM jsonb_object_keys(v_ops) k ORDER BY k LOOP
        EXIT WHEN v_left = 0;
        v_from := (v_ops -> v_op ->> 'from')::timestamptz;
        v_horizon := idem_retention_horizon(v_op);
        v_cutoff := now() - v_horizon;
        -- From where this run got to: the dead entries before it are not walked again.
        WITH gone AS (
            DELETE FROM task_idempotency t
             WHERE t.ctid = ANY (ARRAY(
                       SELECT d.ctid FROM task_idempotency d
                        WHERE split_part(d.idempotency_key, ':', 2) = v_op AND d.status = 'succeeded'
                          AND d.updated_at >= v_from AND d.updated_at < v_cutoff
                        ORDER BY split_part(d.idempotency_key, ':', 2), d.updated_at
                        LIMIT v_left
                          FOR UPDATE SKIP LOCKED))
               AND t.status = 'succeeded' AND t.updated_at < v_cutoff AND split_part(t.idempotency_key, ':', 2) = v_op
            RETURNING t.updated_at
        )
        SELECT count(*), max(g.updated_at) INTO v_n, v_max FROM gone g;
        v_left := v_left - v_n;
        removed := removed + v_n;
        IF v_n > 0 THEN
            by_operation := by_operation || jsonb_build_object(v_op, v_n);
        END IF;
        v_ops := jsonb_set(v_ops, ARRAY[v_op], jsonb_build_object(
                     'from', GREATEST(v_from, COALESCE(v_max, v_from)), 'cutoff', v_cutoff,
                     'horizon_seconds', extract(epoch FROM v_horizon)::bigint,
                     'removed', (v_ops -> v_op ->> 'removed')::bigint + v_n));
    END LOOP;
    UPDATE idem_purge_runs x
       SET operations = v_ops, rows_removed = x.rows_removed + removed, batches = x.batches + 1,
           last_batch_at = clock_timestamp()
     WHERE x.id = p_run;
    RETURN NEXT;
END
$batch$;

-- Ends run p_run: its one audit entry, the session lock released, a size sample if due.
CREATE FUNCTION idem_purge_finish(p_run bigint)
RETURNS TABLE (audit_id bigint, rows_removed bigint, batches bigint, duration_ms double precision)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '5s'
AS $finish$
DECLARE
    r idem_purge_runs;
BEGIN
    SELECT * INTO r FROM idem_purge_runs x WHERE x.id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'running' THEN
        RAISE EXCEPTION 'purge run % is not running (%)', p_run, COALESCE(r.state, 'no such run') USING ERRCODE = 'ID003';
    END IF;
    IF r.db_role <> session_user THEN
        RAISE EXCEPTION 'purge run % belongs to %', p_run, r.db_role USING ERRCODE = 'ID003';
    END IF;
    audit_id := idem_purge_close(r, 'finished');
    PERFORM pg_advisory_unlock(idem_purge_lock_key(p_run));
    PERFORM idem_storage_sample();
    SELECT x.rows_removed, x.batches, extract(epoch FROM x.finished_at - x.started_at) * 1000
      INTO rows_removed, batches, duration_ms FROM idem_purge_runs x WHERE x.id = p_run;
    RETURN NEXT;
END
$finish$;

-- One bounded run in the caller's transaction (a scheduler's single statement): begin, up to
-- p_max_batches batches of p_batch rows, finish. Every lock it takes is held to the caller's
-- commit, so keep p_batch * p_max_batches small; CALL idem_purge_run(...) commits per batch.
CREATE FUNCTION idem_purge(p_batch integer DEFAULT 1000, p_max_batches integer DEFAULT 1,
                           p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL)
RETURNS TABLE (run_id bigint, rows_removed bigint, batches bigint, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $purge$
DECLARE
    v_n bigint;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_batches IS NULL OR p_max_batches NOT BETWEEN 1 AND 100 THEN
        RAISE EXCEPTION 'max_batches must be 1 to 100, not %', COALESCE(p_max_batches::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    run_id := idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    FOR i IN 1..p_max_batches LOOP
        SELECT b.removed INTO v_n FROM idem_purge_batch(run_id, p_batch) b;
        EXIT WHEN v_n < p_batch;
    END LOOP;
    SELECT f.audit_id, f.rows_removed, f.batches INTO audit_id, rows_removed, batches FROM idem_purge_finish(run_id) f;
    RETURN NEXT;
END
$purge$;

-- The same as idemctl purge, for pg_cron: CALL <schema>.idem_purge_run(1000, 300). Each batch
-- commits on its own, then it sleeps (holding no lock) so that batches take at most p_duty of
-- the time: after a batch of t ms, t * (1 - p_duty) / p_duty ms (on a small machine a purge at
-- full speed takes CPU from the claims, see bench/README.md, "Session 6"); stops after
-- p_max_seconds or when nothing more is due. Transaction
-- control needs a CALL outside any transaction block (pg_cron calls it so) and no SET clause on
-- the procedure, hence the schema written into its body.
DO $proc$
BEGIN
    EXECUTE format($p$
CREATE PROCEDURE idem_purge_run(p_batch integer DEFAULT 1000, p_max_seconds integer DEFAULT 60,
                                p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL,
                                p_duty double precision DEFAULT 0.1)
LANGUAGE plpgsql
AS $run$
DECLARE
    v_run bigint;
    v_n bigint;
    v_start timestamptz := clock_timestamp();
    v_batch_start timestamptz;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %%', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_seconds IS NULL OR p_max_seconds NOT BETWEEN 1 AND 86400 THEN
        RAISE EXCEPTION 'max_seconds must be 1 to 86400, not %%', COALESCE(p_max_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_duty IS NULL OR NOT (p_duty >= 0.01 AND p_duty <= 1) THEN
        RAISE EXCEPTION 'duty must be 0.01 to 1, not %%', COALESCE(p_duty::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    v_run := %1$I.idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    COMMIT;
    LOOP
        v_batch_start := clock_timestamp();
        SELECT b.removed INTO v_n FROM %1$I.idem_purge_batch(v_run, p_batch) b;
        COMMIT;
        EXIT WHEN v_n < p_batch OR clock_timestamp() >= v_start + p_max_seconds * interval '1 second';
        PERFORM pg_sleep(least(extract(epoch FROM clock_timestamp() - v_batch_start) * (1 - p_duty) / p_duty, 10));
    END LOOP;
    PERFORM %1$I.idem_purge_finish(v_run);
    COMMIT;
END
$run$
$p$, current_schema());
END
$proc$;

-- task_idempotency's size over time, one sample per bucket of 15 minutes.
CREATE TABLE idem_storage_samples (
    bucket        TIMESTAMPTZ PRIMARY KEY,
    taken_at      TIMESTAMPTZ NOT NULL,
    table_bytes   BIGINT NOT NULL,
    index_bytes   BIGINT NOT NULL,
    rows_estimate BIGINT
);

-- Takes a sample if this bucket has none (a primary, read-write, READ COMMITTED), and removes
-- samples older than the counters' expire_after. Returns whether it took one. Readers may call
-- it: it writes at most one row per 15 minutes, whoever calls it how often.
CREATE FUNCTION idem_storage_sample()
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '1s'
AS $sample$
DECLARE
    v_bucket timestamptz := to_timestamp(floor(extract(epoch FROM now()) / 900) * 900);
    v_n integer;
BEGIN
    IF pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'
       OR current_setting('transaction_isolation') <> 'read committed'
       OR EXISTS (SELECT FROM idem_storage_samples s WHERE s.bucket = v_bucket) THEN
        RETURN false;
    END IF;
    INSERT INTO idem_storage_samples (bucket, taken_at, table_bytes, index_bytes, rows_estimate)
    SELECT v_bucket, now(), pg_table_size(c.oid), pg_indexes_size(c.oid),
           CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END
      FROM pg_class c WHERE c.oid = 'task_idempotency'::regclass
    ON CONFLICT (bucket) DO NOTHING;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    DELETE FROM idem_storage_samples s
     WHERE s.bucket < now() - (SELECT p.expire_after FROM idem_counters_policy p);
    RETURN v_n > 0;
END
$sample$;

-- Sizes, tuples and vacuum times of the schema's Idem tables (task_idempotency* and idem_*),
-- largest first. From the catalogue and the statistics views: nothing is scanned.
CREATE FUNCTION idem_storage_tables()
RETURNS TABLE (name text, table_bytes bigint, index_bytes bigint, total_bytes bigint, rows_estimate bigint,
               live_tuples bigint, dead_tuples bigint, last_vacuum timestamptz, last_autovacuum timestamptz,
               last_analyze timestamptz)
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $tables$
    SELECT c.relname::text, pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
           CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END,
           COALESCE(s.n_live_tup, 0), COALESCE(s.n_dead_tup, 0), s.last_vacuum, s.last_autovacuum,
           GREATEST(s.last_analyze, s.last_autoanalyze)
      FROM pg_class c
      LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE c.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())
       AND c.relkind IN ('r', 'p')
       AND (c.relname = 'task_idempotency' OR c.relname LIKE 'task\_idempotency\_%' OR c.relname LIKE 'idem\_%')
     ORDER BY pg_total_relation_size(c.oid) DESC, c.relname
$tables$;

-- v8's shared exact refresh (0008) with two changes, marked v9: a size sample when one is due; and
-- the row lock is waited for (up to 2 s) instead of skipped: a reader's begin() holds it for a
-- moment while it looks, and v8 lost the whole refresh when finish() met it there (its attempt
-- was marked, so nobody tried again for a minute).
CREATE OR REPLACE FUNCTION idem_exact_refresh_finish(p_token uuid, p_long_after_minutes integer)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET max_parallel_workers_per_gather = 0
AS $finish$
DECLARE
    v idem_stats_exact;
    v_start timestamptz;
    v_cost double precision;
    v_locked boolean := false;
BEGIN
    IF p_long_after_minutes IS NULL OR p_long_after_minutes NOT BETWEEN 1 AND 525600 THEN
        RAISE EXCEPTION 'long-unfinished threshold must be 1 to 525600 minutes' USING ERRCODE = 'ID003';
    END IF;
    FOR i IN 1..200 LOOP -- v9
        IF p_token IS NULL OR NOT EXISTS (SELECT FROM idem_stats_exact x WHERE x.attempt_token = p_token) THEN
            RETURN false;
        END IF;
        SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        EXIT WHEN v_locked;
        PERFORM pg_sleep(0.01);
    END LOOP;
    -- Still held after 2 s (a session holding it on purpose): this refresh is lost, nothing else.
    IF NOT v_locked OR v.attempt_token IS DISTINCT FROM p_token THEN
        RETURN false;
    END IF;
    v_start := clock_timestamp();
    UPDATE idem_stats_exact AS x
       SET (processing, expired_leases, oldest_processing_created_at, retryable_failed, uncertain,
            failed_permanent, failed_exhausted, long_unfinished, attempts_histogram)
           = (SELECT e.processing, e.expired_leases, e.oldest_processing_created_at, e.retryable_failed, e.uncertain,
                     e.failed_permanent, e.failed_exhausted, e.long_unfinished, e.attempts_histogram
                FROM idem_exact_stats(NULL, NULL, p_long_after_minutes) e),
           taken_at = now(),
           long_unfinished_after_minutes = p_long_after_minutes,
           taken_by = session_user,
           attempt_at = NULL,
           attempt_token = NULL;
    v_cost := extract(epoch FROM clock_timestamp() - v_start) * 1000;
    UPDATE idem_stats_exact
       SET cost_ms = v_cost,
           period_s = least(greatest(v_cost / 1000 * 50, 20), 900),
           refreshes = refreshes + 1;
    PERFORM idem_counters_maintain(2000);
    PERFORM idem_storage_sample(); -- v9
    RETURN true;
END
$finish$;

REVOKE ALL ON FUNCTION audit_append(text, text, text, text, jsonb, jsonb), audit_check_reason(text, text),
    idem_succeeded_operations(), idem_retention_horizon(text), idem_retention_due(bigint),
    idem_set_retention(text, bigint, text, text), idem_clear_retention(text, text, text),
    idem_purge_lock_key(bigint), idem_purge_close(idem_purge_runs, text), idem_purge_begin(text, text),
    idem_purge_batch(bigint, integer), idem_purge_finish(bigint), idem_purge(integer, integer, text, text),
    idem_storage_sample(), idem_storage_tables() FROM PUBLIC;
REVOKE ALL ON PROCEDURE idem_purge_run(integer, integer, text, text, double precision) FROM PUBLIC;

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
