-- idem_reconcile_begin (schema v30; the history is in git log).
-- Starts a run of a reconcile probe: p_operation's (ID002 when it has none), or with NULL the
-- probe due longest (none due: NULL). Unless p_force, a probe not due yet (next_run_at in the
-- future) is not run: NULL. A probe another runner is starting at the same moment is skipped
-- (SKIP LOCKED), so two exporters never run one probe twice in a period. Sets the next run one
-- period ahead, records the run (runner: the login and p_runner), closes runs of this probe left
-- unfinished for an hour (a runner that died) and returns what the runner needs as JSON:
-- {"run", "operation", "query", "timeout_ms", "keys": [{"key", "business_id"}]}, the keys being
-- at most sample_size keys of the operation that succeeded within the window, newest first (the
-- partial index on succeeded keys by operation and updated_at). The business id is the part of
-- the key after its second ':' (keys are tenant:operation:business_id). Granted to
-- idem_reconcile. ID003 for bad arguments.
CREATE OR REPLACE FUNCTION idem_reconcile_begin(p_operation text, p_force boolean, p_runner text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $begin$
DECLARE
    v_probe idem_reconcile_probes;
    v_run bigint;
    v_keys jsonb;
BEGIN
    IF p_operation IS NOT NULL AND char_length(p_operation) > 64 THEN
        RAISE EXCEPTION 'an operation is at most 64 characters, not %', char_length(p_operation) USING ERRCODE = 'ID003';
    END IF;
    IF p_force IS NULL THEN
        RAISE EXCEPTION 'say whether to run the probe before it is due: true or false, not NULL' USING ERRCODE = 'ID003';
    END IF;
    PERFORM idem_check_worker_text('runner', p_runner);
    IF p_operation IS NOT NULL THEN
        PERFORM FROM idem_reconcile_probes p WHERE p.operation = p_operation;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'operation % has no reconcile probe', quote_literal(p_operation) USING ERRCODE = 'ID002';
        END IF;
    END IF;
    SELECT * INTO v_probe FROM idem_reconcile_probes p
     WHERE (p_operation IS NULL OR p.operation = p_operation) AND (p_force OR p.next_run_at <= now())
     ORDER BY p.next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE idem_reconcile_probes p SET next_run_at = now() + v_probe.every_seconds * interval '1 second'
     WHERE p.operation = v_probe.operation;
    UPDATE idem_reconcile_runs r
       SET finished_at = now(), sampled = 0, ok = 0, missing = 0, duplicated = 0, errors = 0,
           problem = 'the runner stopped before it finished the run'
     WHERE r.operation = v_probe.operation AND r.finished_at IS NULL AND r.started_at < now() - interval '1 hour';
    INSERT INTO idem_reconcile_runs (operation, started_at, runner, sample_size)
    VALUES (v_probe.operation, now(), format('%s (%s)', session_user, p_runner), v_probe.sample_size)
    RETURNING id INTO v_run;
    SELECT COALESCE(jsonb_agg(jsonb_build_object('key', s.k,
                                                 'business_id', regexp_replace(s.k, '^[^:]*:[^:]*:', ''))
                              ORDER BY s.at DESC), '[]'::jsonb)
      INTO v_keys
      FROM (SELECT t.idempotency_key AS k, t.updated_at AS at FROM task_idempotency t
             WHERE t.status = 'succeeded' AND split_part(t.idempotency_key, ':', 2) = v_probe.operation
               AND t.updated_at >= now() - v_probe.window_seconds * interval '1 second'
             ORDER BY t.updated_at DESC LIMIT v_probe.sample_size) s;
    RETURN jsonb_build_object('run', v_run, 'operation', v_probe.operation, 'query', v_probe.query,
                              'timeout_ms', v_probe.timeout_ms, 'keys', v_keys);
END
$begin$;

REVOKE ALL ON FUNCTION idem_reconcile_begin(text, boolean, text) FROM PUBLIC;
