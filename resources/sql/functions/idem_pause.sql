-- idem_pause (schema v15, changed in v33; the history is in git log).
-- Pauses a tenant, an operation or both ('*' for all) until resumed, for p_for_ms from the server's
-- now, or until p_until (by the server's clock; at most one of the two). Setting a scope that is
-- paused already changes its reason and expiry (paused_at is kept). One audit entry, action 'pause',
-- before and after: the pause as it was (null when there was none) and as it is. claim() turns away
-- keys under it from the moment this commits (the decision 'paused'); see functions/claim.sql.
-- Names that no traffic has used yet are allowed: a pause may precede traffic.
CREATE OR REPLACE FUNCTION idem_pause(p_tenant text, p_operation text, p_reason text, p_actor text DEFAULT NULL,
                                      p_for_ms bigint DEFAULT NULL, p_until timestamptz DEFAULT NULL)
RETURNS TABLE (audit_id bigint, tenant text, operation text, reason text, paused_by text, paused_at timestamptz,
               changed_at timestamptz, until timestamptz, previous_until timestamptz, was_paused boolean)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $pause$
DECLARE
    c_max_pauses constant integer := 10000;
    v_old idem_pauses;
    v_new idem_pauses;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_until timestamptz;
    v_count bigint;
BEGIN
    PERFORM idem_pause_check_scope(p_tenant, p_operation);
    PERFORM audit_check_reason(p_reason, p_actor);
    IF p_for_ms IS NOT NULL AND p_until IS NOT NULL THEN
        RAISE EXCEPTION 'give a pause a length or an end, not both' USING ERRCODE = 'ID003';
    END IF;
    IF p_for_ms IS NOT NULL AND p_for_ms NOT BETWEEN 1000 AND 31536000000 THEN
        RAISE EXCEPTION 'a pause lasts 1000 to 31536000000 ms (1 s to 365 days), not %', p_for_ms
            USING ERRCODE = 'ID003';
    END IF;
    IF p_until IS NOT NULL AND p_until <= now() THEN
        RAISE EXCEPTION 'the pause would end at %, which is in the past by the server''s clock (now %)',
            p_until, now() USING ERRCODE = 'ID003';
    END IF;
    IF p_until IS NOT NULL AND p_until > now() + interval '365 days' THEN
        RAISE EXCEPTION 'the pause would end at %, more than 365 days from now (%); pause without an end instead',
            p_until, now() USING ERRCODE = 'ID003';
    END IF;
    v_until := COALESCE(p_until, now() + p_for_ms * interval '1 millisecond');
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;

    SELECT * INTO v_old FROM idem_pauses p WHERE p.tenant = p_tenant AND p.operation = p_operation FOR UPDATE;
    IF NOT FOUND THEN
        -- Serialise new scopes on the table so the bound below holds under concurrent calls;
        -- SHARE ROW EXCLUSIVE does not conflict with the reads of claim().
        LOCK TABLE idem_pauses IN SHARE ROW EXCLUSIVE MODE;
        SELECT count(*) INTO v_count FROM idem_pauses;
        IF v_count >= c_max_pauses THEN
            RAISE EXCEPTION 'there are % pauses already, the most there may be; resume some (expired ones first)', v_count
                USING ERRCODE = 'ID004';
        END IF;
    END IF;

    INSERT INTO idem_pauses AS p (tenant, operation, reason, paused_by, paused_at, changed_at, until, audit_id)
    VALUES (p_tenant, p_operation, p_reason, format('%s (%s)', session_user, v_actor), now(), now(), v_until, 0)
    ON CONFLICT ON CONSTRAINT idem_pauses_pkey DO UPDATE
       SET reason = EXCLUDED.reason, paused_by = EXCLUDED.paused_by, changed_at = EXCLUDED.changed_at,
           until = EXCLUDED.until,
           -- a pause set again on a ramping scope ends the ramp (v33): the scope is paused whole
           ramp_steps = NULL, ramp_step_ms = NULL, ramp_started_at = NULL, ramp_abort_above = NULL,
           ramp_min_claims = NULL, ramp_step_audited = NULL, ramp_aborted_at = NULL,
           -- a pause that had expired starts again
           paused_at = CASE WHEN p.until IS NOT NULL AND p.until <= now() THEN EXCLUDED.paused_at ELSE p.paused_at END
    RETURNING p.* INTO v_new;

    IF v_old.tenant IS NULL THEN
        PERFORM idem_pause_summarise(); -- a new scope: claim() reads idem_pause_tenants first
    END IF;
    audit_id := audit_append('', 'pause', p_reason, v_actor,
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation,
                                                'pause', idem_pause_image(v_old)),
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation,
                                                'pause', idem_pause_image(v_new)));
    UPDATE idem_pauses p SET audit_id = idem_pause.audit_id
     WHERE p.tenant = p_tenant AND p.operation = p_operation
    RETURNING p.* INTO v_new;

    tenant := v_new.tenant;
    operation := v_new.operation;
    reason := v_new.reason;
    paused_by := v_new.paused_by;
    paused_at := v_new.paused_at;
    changed_at := v_new.changed_at;
    until := v_new.until;
    previous_until := v_old.until;
    was_paused := v_old.tenant IS NOT NULL AND (v_old.until IS NULL OR v_old.until > now());
    RETURN NEXT;
END
$pause$;

REVOKE ALL ON FUNCTION idem_pause(text, text, text, text, bigint, timestamptz) FROM PUBLIC;
