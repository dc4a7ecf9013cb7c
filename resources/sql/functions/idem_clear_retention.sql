-- idem_clear_retention (schema v9, changed in v22; the history is in git log).
-- Removes an operation's own row: it falls back to '*'. The '*' row stays. audit_id NULL and
-- nothing audited when the operation had no row. Since v22, with the approval policy's
-- retention_changes_need_approval on, only as the use of an approved request (idem_change_guard).
CREATE OR REPLACE FUNCTION idem_clear_retention(p_operation text, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, operation text, previous_horizon_seconds bigint, horizon_seconds bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $clear$
DECLARE
    v_old idem_retention_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_operation IS NULL OR p_operation = '*' OR p_operation !~ '^[!-9;-~]{1,64}$' THEN
        RAISE EXCEPTION 'operation must be 1 to 64 visible ASCII characters without '':'' (the ''*'' default cannot be'
                        ' removed), not %', COALESCE(quote_literal(p_operation), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    PERFORM idem_change_guard('retention', jsonb_build_object('kind', 'retention', 'change', 'clear', 'operation', p_operation,
                                                              'horizon_seconds', NULL));
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    DELETE FROM idem_retention_policy p WHERE p.operation = p_operation RETURNING p.* INTO v_old;
    operation := p_operation;
    horizon_seconds := extract(epoch FROM idem_retention_horizon(p_operation))::bigint;
    IF v_old.operation IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    previous_horizon_seconds := extract(epoch FROM v_old.horizon)::bigint;
    audit_id := audit_append('', 'retention', p_reason, v_actor,
                             jsonb_build_object('operation', p_operation, 'policy', jsonb_build_object(
                                 'horizon_seconds', previous_horizon_seconds, 'changed_at', v_old.changed_at,
                                 'changed_by', v_old.changed_by)),
                             jsonb_build_object('operation', p_operation, 'policy', NULL,
                                                'falls_back_to_default_seconds', horizon_seconds));
    RETURN NEXT;
END
$clear$;

REVOKE ALL ON FUNCTION idem_clear_retention(text, text, text) FROM PUBLIC;
