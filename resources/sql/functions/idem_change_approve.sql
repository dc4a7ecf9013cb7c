-- idem_change_approve (schema v22; the history is in git log).
-- Approves change request p_request (a retention change or a manual purge, idem_request_*),
-- naming the spec the approver read (p_spec_sha256, idem_change_requests.spec_sha256), with a
-- reason: it may then be used once (idem_change_use) until the approval expires (the policy's
-- change_ttl_seconds from now). One audit entry, action 'change_approve', the request before and
-- after. Refused with nothing written:
--   42501  the caller (idem_caller) lacks the approve right (role idem_may_approve)
--   ID003  bad arguments; no such request; one not waiting for approval (approved or used); a
--          spec that is not the request's (an approval names one request's exact spec); a
--          request older than its approvable_until
--   ID003  the approver is the requester: the same login (session_user), or either login is a
--          member of the other (it could SET ROLE to it; a superuser is a member of every role)
CREATE OR REPLACE FUNCTION idem_change_approve(p_request bigint, p_spec_sha256 text, p_reason text,
                                               p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, approved_at timestamptz, expires_at timestamptz, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $approve$
DECLARE
    r idem_change_requests;
    v_before jsonb;
    v_policy idem_approval_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    v_audit bigint;
BEGIN
    PERFORM idem_require_right('approve', 'approve a change request');
    IF p_request IS NULL THEN
        RAISE EXCEPTION 'name the change request to approve' USING ERRCODE = 'ID003';
    END IF;
    IF p_spec_sha256 IS NULL OR p_spec_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'an approval names the request''s spec: its spec_sha256, 64 lower-case hex digits, not %',
                        COALESCE(quote_literal(left(p_spec_sha256, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a change request is approved in a READ COMMITTED transaction, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO r FROM idem_change_requests x WHERE x.id = p_request FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no change request %', p_request USING ERRCODE = 'ID003';
    END IF;
    IF r.state <> 'awaiting_approval' THEN
        RAISE EXCEPTION '%', format('change request %s is not waiting for approval: it is %s, approved by %s at %s', r.id,
                        r.state, r.approved_login, to_char(r.approved_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
            USING ERRCODE = 'ID003';
    END IF;
    IF p_spec_sha256 <> r.spec_sha256 OR r.spec_sha256 <> encode(sha256(convert_to(r.spec::text, 'UTF8')), 'hex') THEN
        RAISE EXCEPTION 'that spec is not change request %''s: request % is % (spec %)', r.id, r.id, r.spec::text,
                        r.spec_sha256
            USING ERRCODE = 'ID003',
                  HINT = 'An approval names one request''s exact spec: read it again (idemctl job pending).';
    END IF;
    PERFORM idem_approver_check(format('change request %s', r.id), r.requested_login);
    IF r.approvable_until <= v_now THEN
        RAISE EXCEPTION 'change request %''s time for approval ended at %: it can no longer be approved', r.id,
                        to_char(r.approvable_until, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            USING ERRCODE = 'ID003', HINT = 'Request the change again.';
    END IF;
    SELECT * INTO v_policy FROM idem_approval_policy;
    v_before := idem_change_image(r);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    UPDATE idem_change_requests x
       SET state = 'approved', approved_login = session_user, approved_role = idem_caller(), approved_actor = v_actor,
           approved_reason = p_reason, approved_at = v_now,
           approval_expires_at = v_now + v_policy.change_ttl_seconds * interval '1 second'
     WHERE x.id = r.id
    RETURNING x.* INTO r;
    v_audit := audit_append('', 'change_approve', p_reason, v_actor, v_before,
                            idem_change_image(r) || jsonb_build_object('event', 'approve'));
    UPDATE idem_change_requests x SET approval_audit_id = v_audit WHERE x.id = r.id;
    RETURN QUERY SELECT r.id, r.approved_at, r.approval_expires_at, v_audit;
END
$approve$;

REVOKE ALL ON FUNCTION idem_change_approve(bigint, text, text, text) FROM PUBLIC;
