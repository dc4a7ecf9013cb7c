-- idem_set_retention (schema v9, changed in v22; the history is in git log).
-- Sets an operation's horizon (or the '*' default), one audit entry (action 'retention', before
-- and after: the policy row, or null when the operation had none). Since v22, with the approval
-- policy's retention_changes_need_approval on, only as the use of an approved request
-- (idem_change_guard; idem_request_retention, idem_change_approve, idem_change_use).
CREATE OR REPLACE FUNCTION idem_set_retention(p_operation text, p_horizon_seconds bigint, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, operation text, horizon_seconds bigint, previous_horizon_seconds bigint,
               changed_at timestamptz, changed_by text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $set$
DECLARE
    v_old idem_retention_policy;
    v_new idem_retention_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_operation IS NULL OR NOT (p_operation = '*' OR p_operation ~ '^[!-9;-~]{1,64}$') THEN
        RAISE EXCEPTION 'operation must be ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
            COALESCE(quote_literal(p_operation), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_horizon_seconds IS NULL OR p_horizon_seconds NOT BETWEEN 3600 AND 3650::bigint * 86400 THEN
        RAISE EXCEPTION 'horizon must be 3600 to 315360000 seconds (1 hour to 3650 days), not %',
            COALESCE(p_horizon_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    PERFORM idem_change_guard('retention', jsonb_build_object('kind', 'retention', 'change', 'set', 'operation', p_operation,
                                                              'horizon_seconds', p_horizon_seconds));
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;

    SELECT * INTO v_old FROM idem_retention_policy p WHERE p.operation = p_operation FOR UPDATE;
    INSERT INTO idem_retention_policy AS p (operation, horizon, changed_at, changed_by)
    VALUES (p_operation, p_horizon_seconds * interval '1 second', now(), format('%s (%s)', session_user, v_actor))
    ON CONFLICT ON CONSTRAINT idem_retention_policy_pkey DO UPDATE
       SET horizon = EXCLUDED.horizon, changed_at = EXCLUDED.changed_at, changed_by = EXCLUDED.changed_by
    RETURNING p.* INTO v_new;

    audit_id := audit_append('', 'retention', p_reason, v_actor,
                             CASE WHEN v_old.operation IS NULL THEN jsonb_build_object('operation', p_operation, 'policy', NULL)
                                  ELSE jsonb_build_object('operation', p_operation, 'policy', jsonb_build_object(
                                           'horizon_seconds', extract(epoch FROM v_old.horizon)::bigint,
                                           'changed_at', v_old.changed_at, 'changed_by', v_old.changed_by)) END,
                             jsonb_build_object('operation', p_operation, 'policy', jsonb_build_object(
                                 'horizon_seconds', p_horizon_seconds, 'changed_at', v_new.changed_at,
                                 'changed_by', v_new.changed_by)));
    operation := p_operation;
    horizon_seconds := p_horizon_seconds;
    previous_horizon_seconds := extract(epoch FROM v_old.horizon)::bigint;
    changed_at := v_new.changed_at;
    changed_by := v_new.changed_by;
    RETURN NEXT;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_retention(text, bigint, text, text) FROM PUBLIC;
