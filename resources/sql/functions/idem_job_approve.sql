-- idem_job_approve (schema v21, changed with v22; the history is in git log).
-- Approves recovery job p_job, waiting for approval, naming the spec the approver saw
-- (p_spec_sha256: the SHA-256 of its action, extra attempts, filter, moment, cap and count,
-- idem_jobs.spec_sha256), with a reason: the job becomes active and may start or resume until
-- the approval expires (the policy's ttl_seconds from now). One audit entry, action 'approve',
-- the job before and after. Refused with nothing written:
--   42501  the caller (idem_caller) lacks the approve right (role idem_may_approve)
--   ID003  bad arguments; no such job; a job not waiting for approval; a spec that is not the
--          job's (an approval names one job's exact spec, nothing else can run under it); a
--          request older than the policy's ttl_seconds
--   ID003  the approver is the requester: the same login (session_user), or either login is a
--          member of the other (it could SET ROLE to it; a superuser is a member of every role)
CREATE OR REPLACE FUNCTION idem_job_approve(p_job bigint, p_spec_sha256 text, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (job_id bigint, approved_at timestamptz, expires_at timestamptz, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $approve$
DECLARE
    j idem_jobs;
    v_before jsonb;
    v_policy idem_approval_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    v_audit bigint;
BEGIN
    PERFORM idem_require_right('approve', 'approve a job');
    IF p_job IS NULL THEN
        RAISE EXCEPTION 'name the job to approve' USING ERRCODE = 'ID003';
    END IF;
    IF p_spec_sha256 IS NULL OR p_spec_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'an approval names the job''s spec: its spec_sha256, 64 lower-case hex digits, not %',
                        COALESCE(quote_literal(left(p_spec_sha256, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a job is approved in a READ COMMITTED transaction, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO j FROM idem_jobs x WHERE x.id = p_job FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no job %', p_job USING ERRCODE = 'ID003';
    END IF;
    IF j.state <> 'awaiting_approval' THEN
        RAISE EXCEPTION '%', format('job %s is not waiting for approval: it is %s%s', j.id, j.state,
                        CASE WHEN j.approved_at IS NOT NULL
                             THEN format(', approved by %s at %s', j.approved_login,
                                         to_char(j.approved_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
                             WHEN NOT j.needs_approval THEN ' and never needed an approval' ELSE '' END)
            USING ERRCODE = 'ID003';
    END IF;
    IF p_spec_sha256 <> j.spec_sha256
       OR j.spec_sha256 <> encode(sha256(convert_to(idem_job_spec(j)::text, 'UTF8')), 'hex') THEN
        RAISE EXCEPTION 'that spec is not job %''s: job % is % of % row(s) matched by % as of %, cap % (spec %)', j.id,
                        j.id, j.action, j.matched, j.filter::text, to_char(j.moment, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                        j.cap, j.spec_sha256
            USING ERRCODE = 'ID003', HINT = 'An approval names one job''s exact spec: read it again (idemctl job pending).';
    END IF;
    PERFORM idem_approver_check(format('job %s', j.id), j.db_role);
    IF j.approval_requested_until <= v_now THEN
        RAISE EXCEPTION 'job %''s request for approval expired at %: it can no longer be approved', j.id,
                        to_char(j.approval_requested_until, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            USING ERRCODE = 'ID003',
                  HINT = format('Cancel it (idemctl job cancel %s) and start it again for a new request.', j.id);
    END IF;
    SELECT * INTO v_policy FROM idem_approval_policy;
    v_before := idem_job_image(j);
    UPDATE idem_jobs x
       SET state = 'active', approved_login = session_user, approved_role = idem_caller(),
           approved_actor = CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END, approved_reason = p_reason,
           approved_spec_sha256 = j.spec_sha256, approved_at = v_now,
           approval_expires_at = v_now + v_policy.ttl_seconds * interval '1 second'
     WHERE x.id = j.id
    RETURNING * INTO j;
    v_audit := audit_append('', 'approve', p_reason, p_actor, v_before,
                            idem_job_image(j) || jsonb_build_object('event', 'approve'));
    UPDATE idem_jobs x SET approval_audit_id = v_audit WHERE x.id = j.id;
    RETURN QUERY SELECT j.id, j.approved_at, j.approval_expires_at, v_audit;
END
$approve$;

REVOKE ALL ON FUNCTION idem_job_approve(bigint, text, text, text) FROM PUBLIC;
