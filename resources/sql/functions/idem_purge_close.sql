-- idem_purge_close (schema v9; the history is in git log).
-- Closes a run (finished, or abandoned when its session ended first) with its one audit entry.
CREATE OR REPLACE FUNCTION idem_purge_close(r idem_purge_runs, p_state text)
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

REVOKE ALL ON FUNCTION idem_purge_close(idem_purge_runs, text) FROM PUBLIC;
