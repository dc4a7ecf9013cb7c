-- idem_redrive_outcomes_of (schema v27; the history is in git log).
-- idem_redrive_outcomes for many recovery jobs in one read (the Jobs page, every poll): one row
-- per job and item state with its count, states without items left out, by job id and then in
-- the order queued, running, succeeded, failed, conflict, gone; a job without items has no row.
-- p_job_ids: 0 to 1000 ids, none NULL or below 1 (ID003 otherwise); an id given twice counts once.
-- The same right as idem_redrive_outcomes (idem_reader).
CREATE OR REPLACE FUNCTION idem_redrive_outcomes_of(p_job_ids bigint[])
RETURNS TABLE (job_id bigint, state text, n bigint)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $outcomes$
#variable_conflict use_column
BEGIN
    IF p_job_ids IS NULL THEN
        RAISE EXCEPTION 'the job ids are an array (empty for none), not NULL' USING ERRCODE = 'ID003';
    END IF;
    IF cardinality(p_job_ids) > 1000 THEN
        RAISE EXCEPTION 'at most 1000 job ids at once, not %', cardinality(p_job_ids) USING ERRCODE = 'ID003';
    END IF;
    IF array_position(p_job_ids, NULL) IS NOT NULL OR EXISTS (SELECT FROM unnest(p_job_ids) j WHERE j < 1) THEN
        RAISE EXCEPTION 'a job id is a positive number, not NULL or below 1' USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    SELECT i.job_id, i.state, count(*)
      FROM idem_redrive_items i
     WHERE i.job_id = ANY (p_job_ids)
     GROUP BY i.job_id, i.state
     ORDER BY i.job_id,
              array_position(ARRAY['queued', 'running', 'succeeded', 'failed', 'conflict', 'gone'], i.state);
END
$outcomes$;

REVOKE ALL ON FUNCTION idem_redrive_outcomes_of(bigint[]) FROM PUBLIC;
