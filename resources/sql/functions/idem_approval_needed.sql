-- idem_approval_needed (schema v23, changed in v28; the history is in git log).
-- The approval policy's one rule, for every path that changes task rows (idem_approval_gate
-- applies it; the console and idemctl ask it before they start anything): would p_rows more task
-- rows changed by this login (session_user) now, by a p_kind ('job': a recovery job; 'requeue',
-- 'release', 'fail': single actions, one row each), need another login's approval? why: NULL (no),
-- 'rows' (a job over the threshold of gated kind 'job' in idem_approval_kinds, returned as job_rows) or 'budget' (this login's rows changed without an
-- approval within the window, used, plus p_rows would pass budget_rows). Changes nothing; ID003
-- for bad arguments.
CREATE OR REPLACE FUNCTION idem_approval_needed(p_kind text, p_rows bigint)
RETURNS TABLE (why text, job_rows bigint, budget_rows bigint, window_seconds integer, used bigint,
               frees_at timestamptz)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $needed$
DECLARE
    v_policy idem_approval_policy;
    v_jobs idem_approval_kinds;
BEGIN
    IF p_kind IS NULL OR p_kind NOT IN ('job', 'requeue', 'release', 'fail') THEN
        RAISE EXCEPTION 'a change under the approval policy is a job, requeue, release or fail, not %',
                        COALESCE(quote_literal(left(p_kind, 64)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_rows IS NULL OR p_rows NOT BETWEEN 0 AND 1000000 THEN
        RAISE EXCEPTION 'rows must be 0 to 1000000, not %', COALESCE(p_rows::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_policy FROM idem_approval_policy;
    SELECT * INTO v_jobs FROM idem_approval_kinds k WHERE k.kind = 'job';
    job_rows := CASE WHEN v_jobs.gated THEN COALESCE(v_jobs.over_rows, 0) END;
    budget_rows := v_policy.budget_rows;
    window_seconds := COALESCE(v_policy.budget_window_seconds, 3600);
    used := 0;
    IF v_policy.budget_rows IS NOT NULL THEN
        -- The oldest change still in the window: when it leaves, the budget frees up.
        SELECT COALESCE(sum(u.row_count), 0), min(u.at) + window_seconds * interval '1 second' INTO used, frees_at
          FROM idem_approval_uses u
         WHERE u.login = session_user AND u.at > clock_timestamp() - window_seconds * interval '1 second';
    END IF;
    why := CASE WHEN p_kind = 'job' AND job_rows IS NOT NULL AND p_rows > job_rows THEN 'rows'
                WHEN v_policy.budget_rows IS NOT NULL AND used + p_rows > v_policy.budget_rows THEN 'budget' END;
    RETURN NEXT;
END
$needed$;

REVOKE ALL ON FUNCTION idem_approval_needed(text, bigint) FROM PUBLIC;
