-- idem_redrive_outcomes (schema v25, changed in v27; the history is in git log).
-- What became of the re-executions recovery job p_job_id queued: one row per item state (queued,
-- running, succeeded, failed, conflict, gone) with its count, states without items left out. For
-- "191 requeued: 185 succeeded, 4 failed, 2 running". ID003 for a NULL or non-positive id.
CREATE OR REPLACE FUNCTION idem_redrive_outcomes(p_job_id bigint)
RETURNS TABLE (state text, n bigint)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $outcomes$
#variable_conflict use_column
BEGIN
    IF p_job_id IS NULL OR p_job_id < 1 THEN
        RAISE EXCEPTION 'a job id is a positive number, not %', COALESCE(p_job_id::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    -- One job's rows of idem_redrive_outcomes_of (v27), the one place that counts them.
    RETURN QUERY
    SELECT o.state, o.n FROM idem_redrive_outcomes_of(ARRAY[p_job_id]) o;
END
$outcomes$;

REVOKE ALL ON FUNCTION idem_redrive_outcomes(bigint) FROM PUBLIC;
