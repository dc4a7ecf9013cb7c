-- idem_set_approval (schema v21, a delegate since v28; the history is in git log).
-- Kept for the clients of v21 to v27: idem_set_approval_policy('job', true, p_job_rows,
-- p_ttl_seconds, ...), the one setter (a job acting on more than p_job_rows rows waits). Granted
-- to nobody, as that one.
CREATE OR REPLACE FUNCTION idem_set_approval(p_job_rows bigint, p_ttl_seconds integer, p_reason text,
                                             p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, job_rows bigint, ttl_seconds integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $set$
BEGIN
    IF p_job_rows IS NULL THEN
        RAISE EXCEPTION 'the approval threshold must be 0 to 1000000 rows, not NULL (idem_clear_approval turns approval off)'
            USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY SELECT s.audit_id, s.over_rows, s.ttl_seconds
                   FROM idem_set_approval_policy('job', true, p_job_rows, p_ttl_seconds, p_reason, p_actor) s;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_approval(bigint, integer, text, text) FROM PUBLIC;
