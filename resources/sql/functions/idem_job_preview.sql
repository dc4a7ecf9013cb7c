-- idem_job_preview (schema v19; the history is in git log).
-- What idem_job_start would match now, changing nothing: the rows filter p_filter matches
-- (counted up to p_limit, 1 to 1000000; more is true when there are more) and how many of them
-- action p_action applies to. For readers: the console and idemctl job start --dry-run.
CREATE OR REPLACE FUNCTION idem_job_preview(p_action text, p_filter jsonb, p_limit bigint DEFAULT 1000000)
RETURNS TABLE (moment timestamptz, matched bigint, applicable bigint, more boolean)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $preview$
DECLARE
    v_moment timestamptz := clock_timestamp();
BEGIN
    IF p_action IS NULL OR p_action NOT IN ('requeue', 'release', 'fail') THEN
        RAISE EXCEPTION 'a job''s action is requeue, release or fail, not %', COALESCE(left(p_action, 64), 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 1000000 THEN
        RAISE EXCEPTION 'limit must be 1 to 1000000, not %', COALESCE(p_limit::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    SELECT v_moment, least(count(*), p_limit), least(count(*) FILTER (WHERE CASE p_action
                                                WHEN 'requeue' THEN m.status IN ('failed', 'retryable_failed')
                                                WHEN 'release' THEN m.status = 'processing'
                                                ELSE m.status IN ('processing', 'retryable_failed') END), p_limit),
           count(*) > p_limit
      FROM idem_job_match(p_filter, v_moment, p_limit + 1) m;
END
$preview$;

REVOKE ALL ON FUNCTION idem_job_preview(text, jsonb, bigint) FROM PUBLIC;
