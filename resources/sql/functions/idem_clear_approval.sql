-- idem_clear_approval (schema v21; the history is in git log).
-- Turns the approval policy off: jobs start active whatever their size (jobs waiting for
-- approval keep waiting). One audit entry, action 'approval_policy'; none, and audit_id NULL,
-- when it was off. Granted to nobody: the owner's, as idem_set_approval.
CREATE OR REPLACE FUNCTION idem_clear_approval(p_reason text, p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $clear$
DECLARE
    v_old idem_approval_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_audit bigint;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    SELECT * INTO v_old FROM idem_approval_policy FOR UPDATE;
    IF v_old.job_rows IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE idem_approval_policy p
       SET job_rows = NULL, updated_at = clock_timestamp(), updated_by = format('%s (%s)', session_user, v_actor);
    v_audit := audit_append('', 'approval_policy', p_reason, v_actor,
                            jsonb_build_object('job_rows', v_old.job_rows, 'ttl_seconds', v_old.ttl_seconds),
                            jsonb_build_object('job_rows', NULL, 'ttl_seconds', v_old.ttl_seconds));
    UPDATE idem_approval_policy p SET audit_id = v_audit;
    RETURN v_audit;
END
$clear$;

REVOKE ALL ON FUNCTION idem_clear_approval(text, text) FROM PUBLIC;
