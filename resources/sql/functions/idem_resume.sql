-- idem_resume (schema v15; the history is in git log).
-- Lifts the pause of exactly this scope (tenant and operation as they were paused, '*' included),
-- whether it is in force or has expired; ID002 when there is none. One audit entry, action
-- 'resume', before: the pause, after: null. Claims of the scope acquire again from the moment
-- this commits, unless another pause (a wider or narrower scope) still covers them.
CREATE OR REPLACE FUNCTION idem_resume(p_tenant text, p_operation text, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, tenant text, operation text, paused_at timestamptz, until timestamptz,
               was_active boolean, still_paused_by jsonb)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $resume$
DECLARE
    v_old idem_pauses;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    PERFORM idem_pause_check_scope(p_tenant, p_operation);
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;

    DELETE FROM idem_pauses p WHERE p.tenant = p_tenant AND p.operation = p_operation RETURNING p.* INTO v_old;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no pause of tenant % and operation %', quote_literal(p_tenant),
            quote_literal(p_operation) USING ERRCODE = 'ID002',
            HINT = 'A pause is lifted with the tenant and operation it was set with (''*'' included): idemctl pauses lists them.';
    END IF;
    PERFORM idem_pause_summarise();
    audit_id := audit_append('', 'resume', p_reason, v_actor,
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation,
                                                'pause', idem_pause_image(v_old)),
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation, 'pause', NULL));
    tenant := v_old.tenant;
    operation := v_old.operation;
    paused_at := v_old.paused_at;
    until := v_old.until;
    was_active := v_old.until IS NULL OR v_old.until > now();
    -- Other pauses that still cover some of this scope's keys (e.g. '*' for the tenant), in force now.
    SELECT COALESCE(jsonb_agg(jsonb_build_object('tenant', p.tenant, 'operation', p.operation)
                              ORDER BY p.tenant, p.operation), '[]'::jsonb)
      INTO still_paused_by
      FROM idem_pauses p
     WHERE (p.until IS NULL OR p.until > now())
       AND (p.tenant = '*' OR p_tenant = '*' OR p.tenant = p_tenant)
       AND (p.operation = '*' OR p_operation = '*' OR p.operation = p_operation);
    RETURN NEXT;
END
$resume$;

REVOKE ALL ON FUNCTION idem_resume(text, text, text, text) FROM PUBLIC;
