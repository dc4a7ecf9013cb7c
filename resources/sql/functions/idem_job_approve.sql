-- idem_job_approve (schema v21, a delegate since v28; the history is in git log).
-- Kept for the clients of v21 to v27: approves job p_job's request (idem_approval_requests.job_id)
-- through idem_approval_approve, the one approve (its refusals and its audit entry). ID002 when
-- the job has no request (no such job, or one that never needed approval).
CREATE OR REPLACE FUNCTION idem_job_approve(p_job bigint, p_spec_sha256 text, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (job_id bigint, approved_at timestamptz, expires_at timestamptz, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $approve$
DECLARE
    v_request bigint;
BEGIN
    PERFORM idem_require_right('approve', 'approve a job');
    IF p_job IS NULL THEN
        RAISE EXCEPTION 'name the job to approve' USING ERRCODE = 'ID003';
    END IF;
    -- Bad arguments before any state: as idem_approval_approve would say them.
    IF p_spec_sha256 IS NULL OR p_spec_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'an approval names the job''s spec: its spec_sha256, 64 lower-case hex digits, not %',
                        COALESCE(quote_literal(left(p_spec_sha256, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    SELECT x.id INTO v_request FROM idem_approval_requests x WHERE x.job_id = p_job;
    IF NOT FOUND THEN
        IF NOT EXISTS (SELECT FROM idem_jobs x WHERE x.id = p_job) THEN
            RAISE EXCEPTION 'there is no job %', p_job USING ERRCODE = 'ID002';
        END IF;
        RAISE EXCEPTION 'job % is not waiting for approval: it never needed an approval', p_job USING ERRCODE = 'ID004';
    END IF;
    RETURN QUERY SELECT a.job_id, a.approved_at, a.expires_at, a.audit_id
                   FROM idem_approval_approve(v_request, p_spec_sha256, p_reason, p_actor) a;
END
$approve$;

REVOKE ALL ON FUNCTION idem_job_approve(bigint, text, text, text) FROM PUBLIC;
