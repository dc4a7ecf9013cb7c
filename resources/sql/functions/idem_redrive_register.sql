-- idem_redrive_register (schema v25; the history is in git log).
-- Registers operation p_operation of tenant p_tenant ('*': every tenant) as re-drivable, or
-- updates its registration: its claims (idem_claim_stored) then store the canonical request,
-- at most p_max_request_bytes (1 to 1048576, default 65536) bytes of it; p_redact names the
-- top-level JSON fields (at most 64, each 1 to 200 characters) that idem_stored_request shows as
-- "[redacted]". outcome: registered | unchanged | updated. The login that registers it first owns
-- the registration: another login (not a member of it, nor of the owner's) is refused (42501)
-- and changes nothing, as is a tenant's registration beside another login's for every tenant (or
-- the reverse). Workers and the HTTP middleware call it at start.
CREATE OR REPLACE FUNCTION idem_redrive_register(p_tenant text, p_operation text,
                                                 p_max_request_bytes integer DEFAULT 65536,
                                                 p_redact text[] DEFAULT '{}')
RETURNS TABLE (outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $register$
DECLARE
    r idem_redrive_operations%ROWTYPE;
    v_redact text[];
BEGIN
    PERFORM idem_redrive_check_scope(p_tenant, p_operation);
    IF p_max_request_bytes IS NULL OR p_max_request_bytes NOT BETWEEN 1 AND 1048576 THEN
        RAISE EXCEPTION 'max_request_bytes must be 1 to 1048576 (1 MiB), not %',
            COALESCE(p_max_request_bytes::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_redact IS NULL OR cardinality(p_redact) > 64 OR array_ndims(p_redact) > 1 THEN
        RAISE EXCEPTION 'redact must be a list of at most 64 field names, not %',
            COALESCE(left(p_redact::text, 80), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF EXISTS (SELECT FROM unnest(p_redact) f WHERE f IS NULL OR char_length(f) NOT BETWEEN 1 AND 200) THEN
        RAISE EXCEPTION 'a redacted field name must be 1 to 200 characters' USING ERRCODE = 'ID003';
    END IF;
    SELECT COALESCE(array_agg(DISTINCT f ORDER BY f), '{}') INTO v_redact FROM unnest(p_redact) f;

    SELECT * INTO r FROM idem_redrive_operations o
     WHERE o.operation = p_operation AND o.tenant = p_tenant FOR UPDATE;
    IF FOUND THEN
        IF r.max_request_bytes = p_max_request_bytes AND r.redact = v_redact THEN
            RETURN QUERY SELECT 'unchanged'::text;
            RETURN;
        END IF;
        IF NOT idem_redrive_may_serve(r.registered_by) THEN
            RAISE EXCEPTION 'login % may not change the registration of %:%: login % registered it', session_user,
                p_tenant, p_operation, r.registered_by
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('Register from login %s, or: GRANT %I TO %I;', r.registered_by, r.registered_by,
                                    session_user);
        END IF;
        UPDATE idem_redrive_operations o
           SET max_request_bytes = p_max_request_bytes, redact = v_redact, updated_at = now()
         WHERE o.operation = p_operation AND o.tenant = p_tenant;
        RETURN QUERY SELECT 'updated'::text;
        RETURN;
    END IF;
    -- A tenant's registration beside another login's for every tenant, or the reverse, would let
    -- one login's re-drivers read the other's requests.
    SELECT * INTO r FROM idem_redrive_operations o
     WHERE o.operation = p_operation AND (p_tenant = '*' OR o.tenant = '*') AND NOT idem_redrive_may_serve(o.registered_by)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'login % may not register %:%: login % registered %:%', session_user, p_tenant, p_operation,
            r.registered_by, r.tenant, r.operation
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Register from login %s, or: GRANT %I TO %I;', r.registered_by, r.registered_by,
                                session_user);
    END IF;
    INSERT INTO idem_redrive_operations AS o (tenant, operation, max_request_bytes, redact, registered_at,
                                              registered_by, updated_at)
    VALUES (p_tenant, p_operation, p_max_request_bytes, v_redact, now(), session_user, now())
    ON CONFLICT (operation, tenant) DO NOTHING;
    IF NOT FOUND THEN
        -- Registered at the same moment by another session: decide again against its row.
        RETURN QUERY SELECT * FROM idem_redrive_register(p_tenant, p_operation, p_max_request_bytes, p_redact);
        RETURN;
    END IF;
    RETURN QUERY SELECT 'registered'::text;
END
$register$;

REVOKE ALL ON FUNCTION idem_redrive_register(text, text, integer, text[]) FROM PUBLIC;
