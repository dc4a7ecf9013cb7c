-- idem_purge_finish (schema v9, changed in v13; the history is in git log).
-- Ends run p_run: its one audit entry, the session lock released, a size sample if due.
CREATE OR REPLACE FUNCTION idem_purge_finish(p_run bigint)
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
        RAISE EXCEPTION 'purge run % is not running (%)', p_run, COALESCE(r.state, 'no such run')
            USING ERRCODE = CASE WHEN r.state IS NULL THEN 'ID002' ELSE 'ID004' END;
    END IF;
    IF r.db_role <> session_user THEN
        RAISE EXCEPTION 'purge run % belongs to %', p_run, r.db_role USING ERRCODE = 'ID004';
    END IF;
    audit_id := idem_purge_close(r, 'finished');
    PERFORM idem_purge_release(p_run); -- v13
    PERFORM idem_storage_sample();
    SELECT x.rows_removed, x.batches, extract(epoch FROM x.finished_at - x.started_at) * 1000
      INTO rows_removed, batches, duration_ms FROM idem_purge_runs x WHERE x.id = p_run;
    RETURN NEXT;
END
$finish$;

REVOKE ALL ON FUNCTION idem_purge_finish(bigint) FROM PUBLIC;
