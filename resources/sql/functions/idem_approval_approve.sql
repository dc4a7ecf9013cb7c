-- idem_approval_approve (schema v28; the history is in git log).
-- The one approve of every gated kind: approves request p_request (idem_approval_requests: a
-- recovery job's, a retention change's, a manual purge's, or any kind's registered since), naming
-- the spec the approver read (p_spec_sha256, the request's spec_sha256), with a reason. It may
-- then be used until the approval expires (the kind's ttl_seconds from now): a job becomes active
-- and may start or resume until then; a change may be used once (idem_change_use). One audit
-- entry: action 'approve' with the job before and after for a job (as since v21), 'change_approve'
-- with the request for any other kind. Refused with nothing written:
--   42501  the caller (idem_caller) lacks the approve right (role idem_may_approve)
--   ID003  bad arguments (NULL, a malformed sha256, a blank reason)
--   ID002  no such request
--   ID004  a request not waiting for approval (approved, used, declined); a spec that is not the
--          request's (an approval names one request's exact spec, nothing else runs under it);
--          a request past its approvable_until; an approver who is the requester (the same login,
--          or either a member of the other: idem_approver_check); a transaction not READ COMMITTED
CREATE OR REPLACE FUNCTION idem_approval_approve(p_request bigint, p_spec_sha256 text, p_reason text,
                                                 p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, kind text, job_id bigint, approved_at timestamptz, expires_at timestamptz,
               audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $approve$
DECLARE
    r idem_approval_requests;
    j idem_jobs;
    v_lock record;
    k idem_approval_kinds;
    v_what text;
    v_before jsonb;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    v_audit bigint;
BEGIN
    PERFORM idem_require_right('approve', 'approve a request');
    IF p_request IS NULL THEN
        RAISE EXCEPTION 'name the request to approve' USING ERRCODE = 'ID003';
    END IF;
    IF p_spec_sha256 IS NULL OR p_spec_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'an approval names the request''s spec: its spec_sha256, 64 lower-case hex digits, not %',
                        COALESCE(quote_literal(left(p_spec_sha256, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_lock := idem_approval_lock(p_request, 'approved'); -- the job, then the request
    r := v_lock.r;
    j := v_lock.j;
    v_what := v_lock.what;
    IF r.state <> 'awaiting_approval' OR (j.id IS NOT NULL AND j.state <> 'awaiting_approval') THEN
        RAISE EXCEPTION '%', format('%s is not waiting for approval: it is %s%s', v_what,
                        CASE WHEN j.id IS NOT NULL AND r.state <> 'declined' THEN j.state ELSE r.state END,
                        CASE WHEN r.approved_at IS NOT NULL
                             THEN format(', approved by %s at %s', r.approved_login,
                                         to_char(r.approved_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
                             WHEN r.declined_at IS NOT NULL
                             THEN format(', declined by %s at %s', r.declined_login,
                                         to_char(r.declined_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
                             ELSE '' END)
            USING ERRCODE = 'ID004';
    END IF;
    IF p_spec_sha256 <> r.spec_sha256 OR r.spec_sha256 <> encode(sha256(convert_to(r.spec::text, 'UTF8')), 'hex')
       OR (j.id IS NOT NULL AND (j.spec_sha256 IS DISTINCT FROM r.spec_sha256
                                 OR r.spec_sha256 <> encode(sha256(convert_to(idem_job_spec(j)::text, 'UTF8')), 'hex'))) THEN
        IF j.id IS NOT NULL THEN
            RAISE EXCEPTION 'that spec is not job %''s: job % is % of % row(s) matched by % as of %, cap % (spec %)', j.id,
                            j.id, j.action, j.matched, j.filter::text,
                            to_char(j.moment, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), j.cap, j.spec_sha256
                USING ERRCODE = 'ID004', HINT = format('An approval names one request''s exact spec: read it again'
                                                       ' (idemctl approvals show %s).', r.id);
        END IF;
        RAISE EXCEPTION 'that spec is not change request %''s: request % is % (spec %)', r.id, r.id, r.spec::text,
                        r.spec_sha256
            USING ERRCODE = 'ID004', HINT = format('An approval names one request''s exact spec: read it again'
                                                   ' (idemctl approvals show %s).', r.id);
    END IF;
    PERFORM idem_approver_check(v_what, r.requested_login);
    IF r.approvable_until <= v_now THEN
        RAISE EXCEPTION '%''s request for approval expired at %: it can no longer be approved', v_what,
                        to_char(r.approvable_until, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            USING ERRCODE = 'ID004',
                  HINT = CASE WHEN j.id IS NOT NULL
                              THEN format('Decline it (idemctl approvals decline %s) and start the job again for a'
                                          ' new request.', r.id)
                              ELSE 'Request the change again.' END;
    END IF;
    SELECT * INTO k FROM idem_approval_kinds x WHERE x.kind = r.kind;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    v_before := CASE WHEN j.id IS NOT NULL THEN idem_job_image(j) ELSE idem_approval_image(r) END;
    UPDATE idem_approval_requests x
       SET state = 'approved', approved_login = session_user, approved_role = idem_caller(), approved_actor = v_actor,
           approved_reason = p_reason, approved_at = v_now, approval_expires_at = v_now + k.ttl_seconds * interval '1 second'
     WHERE x.id = r.id
    RETURNING x.* INTO r;
    IF j.id IS NOT NULL THEN
        UPDATE idem_jobs x SET state = 'active' WHERE x.id = j.id RETURNING x.* INTO j;
        v_audit := audit_append('', 'approve', p_reason, v_actor, v_before,
                                idem_job_image(j) || jsonb_build_object('event', 'approve', 'request_id', r.id));
    ELSE
        v_audit := audit_append('', 'change_approve', p_reason, v_actor, v_before,
                                idem_approval_image(r) || jsonb_build_object('event', 'approve'));
    END IF;
    UPDATE idem_approval_requests x SET approval_audit_id = v_audit WHERE x.id = r.id;
    RETURN QUERY SELECT r.id, r.kind, r.job_id, r.approved_at, r.approval_expires_at, v_audit;
END
$approve$;

REVOKE ALL ON FUNCTION idem_approval_approve(bigint, text, text, text) FROM PUBLIC;
