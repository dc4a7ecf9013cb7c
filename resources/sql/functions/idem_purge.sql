-- idem_purge (schema v9, changed in v12, v13; the history is in git log).
-- One bounded run in the caller's transaction (a scheduler's single statement): begin, up to
-- p_max_batches batches of p_batch rows, finish. Every lock it takes is held to the caller's
-- commit, so keep p_batch * p_max_batches small; CALL idem_purge_run(...) commits per batch.
CREATE OR REPLACE FUNCTION idem_purge(p_batch integer DEFAULT 1000, p_max_batches integer DEFAULT 1,
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
    BEGIN
        FOR i IN 1..p_max_batches LOOP
            SELECT b.removed INTO v_n FROM idem_purge_batch(run_id, p_batch) b;
            EXIT WHEN v_n < p_batch;
        END LOOP;
        SELECT f.audit_id, f.rows_removed, f.batches INTO audit_id, rows_removed, batches FROM idem_purge_finish(run_id) f;
    EXCEPTION WHEN query_canceled OR others THEN -- the run rolls back; its lock would not
        PERFORM idem_purge_release(run_id);
        RAISE;
    END;
    RETURN NEXT;
END
$purge$;

REVOKE ALL ON FUNCTION idem_purge(integer, integer, text, text) FROM PUBLIC;
