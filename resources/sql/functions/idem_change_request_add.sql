-- idem_change_request_add (schema v22; the history is in git log).
-- Records a change request (idem_request_retention, idem_request_purge, which check their
-- arguments first): the spec, its SHA-256 (of the jsonb's text, which PostgreSQL prints
-- canonically), the requester (session_user, idem_caller), approvable for the policy's
-- change_ttl_seconds; one audit entry, action 'change_request'. Refuses (ID003) a kind whose
-- switch is off: the change is made directly then. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_change_request_add(p_kind text, p_spec jsonb, p_reason text, p_actor text)
RETURNS TABLE (request_id bigint, spec_sha256 text, spec jsonb, approvable_until timestamptz, audit_id bigint)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $add$
DECLARE
    v_policy idem_approval_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    r idem_change_requests;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    SELECT * INTO v_policy FROM idem_approval_policy;
    IF p_kind = 'retention' AND NOT v_policy.retention_changes_need_approval THEN
        RAISE EXCEPTION 'retention changes do not need approval (the approval policy): make the change directly'
            USING ERRCODE = 'ID003', HINT = 'idemctl retention set / clear, or idem_set_retention / idem_clear_retention.';
    END IF;
    IF p_kind = 'purge' AND NOT v_policy.manual_purges_need_approval THEN
        RAISE EXCEPTION 'manual purges do not need approval (the approval policy): run the purge directly'
            USING ERRCODE = 'ID003', HINT = 'idemctl purge, or idem_purge_begin.';
    END IF;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    INSERT INTO idem_change_requests AS x (kind, spec, spec_sha256, requested_login, requested_role, requested_actor,
                                           requested_reason, requested_at, approvable_until, request_audit_id)
    VALUES (p_kind, p_spec, encode(sha256(convert_to(p_spec::text, 'UTF8')), 'hex'), session_user, idem_caller(),
            v_actor, p_reason, v_now, v_now + v_policy.change_ttl_seconds * interval '1 second', 0)
    RETURNING x.* INTO r;
    audit_id := audit_append('', 'change_request', p_reason, v_actor, jsonb_build_object('request_id', r.id, 'state', NULL),
                             idem_change_image(r) || jsonb_build_object('event', 'request'));
    UPDATE idem_change_requests x SET request_audit_id = audit_id WHERE x.id = r.id;
    request_id := r.id;
    spec_sha256 := r.spec_sha256;
    spec := r.spec;
    approvable_until := r.approvable_until;
    RETURN NEXT;
END
$add$;

REVOKE ALL ON FUNCTION idem_change_request_add(text, jsonb, text, text) FROM PUBLIC;
