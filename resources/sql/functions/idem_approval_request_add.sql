-- idem_approval_request_add (schema v28; the history is in git log).
-- Records a request of gated kind p_kind (a row of idem_approval_kinds) for another login's
-- approval: the spec, its SHA-256 (of the jsonb's text, which PostgreSQL prints canonically), the
-- requester (session_user, idem_caller, p_actor, p_reason), approvable for the kind's
-- ttl_seconds. A recovery job's request (kind 'job', p_job its job: idem_job_start, which decided
-- the job waits) is audited by the job's start entry; any other kind's by an entry of its own,
-- action 'change_request'. Called by the functions that check their arguments first
-- (idem_request_retention, idem_request_purge, idem_job_start): ID002 for a kind that is not
-- registered, ID004 for one whose policy does not gate it (the change is made directly then).
-- Granted to nobody.
CREATE OR REPLACE FUNCTION idem_approval_request_add(p_kind text, p_spec jsonb, p_reason text, p_actor text,
                                                     p_job bigint DEFAULT NULL)
RETURNS TABLE (request_id bigint, spec_sha256 text, spec jsonb, approvable_until timestamptz, audit_id bigint)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $add$
DECLARE
    k idem_approval_kinds;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    r idem_approval_requests;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    SELECT * INTO k FROM idem_approval_kinds x WHERE x.kind = p_kind;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no gated kind %', COALESCE(quote_literal(left(p_kind, 64)), 'NULL')
            USING ERRCODE = 'ID002';
    END IF;
    IF p_kind <> 'job' AND NOT k.gated THEN
        RAISE EXCEPTION '% does not need approval (the approval policy): make the change directly', k.what
            USING ERRCODE = 'ID004',
                  HINT = CASE p_kind WHEN 'retention' THEN 'idemctl retention set / unset.'
                                     WHEN 'purge' THEN 'idemctl purge.' ELSE 'idemctl approvals policy.' END;
    END IF;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    INSERT INTO idem_approval_requests AS x (kind, job_id, spec, spec_sha256, requested_login, requested_role,
                                             requested_actor, requested_reason, requested_at, approvable_until,
                                             request_audit_id)
    VALUES (p_kind, p_job, p_spec, encode(sha256(convert_to(p_spec::text, 'UTF8')), 'hex'), session_user,
            idem_caller(), v_actor, p_reason, v_now, v_now + k.ttl_seconds * interval '1 second', 0)
    RETURNING x.* INTO r;
    IF p_kind <> 'job' THEN
        audit_id := audit_append('', 'change_request', p_reason, v_actor,
                                 jsonb_build_object('request_id', r.id, 'state', NULL),
                                 idem_approval_image(r) || jsonb_build_object('event', 'request'));
        UPDATE idem_approval_requests x SET request_audit_id = audit_id WHERE x.id = r.id;
    END IF;
    request_id := r.id;
    spec_sha256 := r.spec_sha256;
    spec := r.spec;
    approvable_until := r.approvable_until;
    RETURN NEXT;
END
$add$;

REVOKE ALL ON FUNCTION idem_approval_request_add(text, jsonb, text, text, bigint) FROM PUBLIC;
