-- idem_purge_batch (schema v9; the history is in git log).
-- One batch of run p_run: at most p_batch due rows, oldest first per operation, in this
-- transaction. Rows another transaction holds are skipped. Returns what it removed; 0 (or
-- fewer than p_batch) means nothing more is due that nobody holds.
-- v23: a run begun by the use of an approved request (idem_change_use) is held to the request's
-- spec (idem_purge_spec_check: ID004, nothing removed, for a larger batch, one past max_seconds,
-- or one sooner than its duty allows); each batch records how long it took (last_batch_ms).
-- v27: the stored requests (idem_stored_requests) of the rows it deletes go in the same statement;
-- v32: their field fingerprints (idem_request_fields) too.
CREATE OR REPLACE FUNCTION idem_purge_batch(p_run bigint, p_batch integer)
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
    v_started timestamptz;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO r FROM idem_purge_runs x WHERE x.id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'running' THEN
        RAISE EXCEPTION 'purge run % is not running (%)', p_run, COALESCE(r.state, 'no such run')
            USING ERRCODE = CASE WHEN r.state IS NULL THEN 'ID002' ELSE 'ID004' END;
    END IF;
    IF r.db_role <> session_user THEN
        RAISE EXCEPTION 'purge run % belongs to %', p_run, r.db_role USING ERRCODE = 'ID004';
    END IF;
    -- v23: a run begun under an approved request runs as approved (its spec), not at any pace.
    IF r.change_request_id IS NOT NULL THEN
        PERFORM idem_purge_spec_check(r, p_batch);
    END IF;
    v_started := clock_timestamp();
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
            RETURNING t.idempotency_key, t.updated_at
        ), requests AS (
            -- v27: a stored request goes with its key (no foreign key does it since v27).
            DELETE FROM idem_stored_requests s WHERE s.idempotency_key IN (SELECT g.idempotency_key FROM gone g)
        ), prints AS (
            -- v32: and so do its field fingerprints.
            DELETE FROM idem_request_fields f WHERE f.idempotency_key IN (SELECT g.idempotency_key FROM gone g)
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
           last_batch_at = clock_timestamp(),
           last_batch_ms = extract(epoch FROM clock_timestamp() - v_started) * 1000
     WHERE x.id = p_run;
    RETURN NEXT;
END
$batch$;

REVOKE ALL ON FUNCTION idem_purge_batch(bigint, integer) FROM PUBLIC;
