-- idem_job_match (schema v24; the history is in git log).
-- The task rows recovery-job filter p_filter (idem_job_filter_check) matches in the caller's
-- snapshot, as of p_moment (what the task list compares with now(): lease ends, the minute windows,
-- first seen), at most p_limit of them, in no order. The predicate is idem_task_filter_where's,
-- the one the task list (operations/tasklist.cpp) runs, so a job matches what the Tasks page counts
-- for the same filter; the filter is a parameter of the one statement, never part of its text.
CREATE OR REPLACE FUNCTION idem_job_match(p_filter jsonb, p_moment timestamptz, p_limit bigint)
RETURNS TABLE (idempotency_key text, status text, updated_at timestamptz)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $match$
DECLARE
    f jsonb := idem_job_filter_check(p_filter);
BEGIN
    IF p_moment IS NULL OR p_limit IS NULL OR p_limit < 0 THEN
        RAISE EXCEPTION 'a moment and a limit of 0 or more are required' USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY EXECUTE
        'SELECT t.idempotency_key, t.status, t.updated_at FROM task_idempotency t WHERE '
        || idem_task_filter_where(f) || ' LIMIT $3'
        USING f, p_moment, p_limit;
END
$match$;

REVOKE ALL ON FUNCTION idem_job_match(jsonb, timestamptz, bigint) FROM PUBLIC;
