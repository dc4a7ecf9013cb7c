-- idem_set_approval_budget (schema v23; the history is in git log).
-- Sets the approval policy's budget: one login changes at most p_rows task rows (0 to 1000000;
-- NULL: no budget, as before v23) without another login's approval within any p_window_seconds
-- (60 to 604800), single actions and recovery jobs together (idem_approval_gate). Changes already
-- made keep counting in their window. One audit entry, action 'approval_policy'. Granted to nobody:
-- the owner of the Idem schema sets it, as idem_set_approval. ID003 for bad arguments, nothing
-- written.
CREATE OR REPLACE FUNCTION idem_set_approval_budget(p_rows bigint, p_window_seconds integer, p_reason text,
                                                    p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, budget_rows bigint, budget_window_seconds integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $set$
DECLARE
    v_old idem_approval_policy;
    v_new idem_approval_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_rows IS NOT NULL AND p_rows NOT BETWEEN 0 AND 1000000 THEN
        RAISE EXCEPTION 'the budget must be 0 to 1000000 rows (NULL: none), not %', p_rows USING ERRCODE = 'ID003';
    END IF;
    IF p_window_seconds IS NULL OR p_window_seconds NOT BETWEEN 60 AND 604800 THEN
        RAISE EXCEPTION 'the budget''s window must be 60 to 604800 seconds (a week), not %',
                        COALESCE(p_window_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    SELECT * INTO v_old FROM idem_approval_policy FOR UPDATE;
    UPDATE idem_approval_policy p
       SET budget_rows = p_rows, budget_window_seconds = p_window_seconds, updated_at = clock_timestamp(),
           updated_by = format('%s (%s)', session_user, v_actor)
    RETURNING p.* INTO v_new;
    audit_id := audit_append('', 'approval_policy', p_reason, v_actor,
                             jsonb_build_object('budget_rows', v_old.budget_rows,
                                                'budget_window_seconds', v_old.budget_window_seconds),
                             jsonb_build_object('budget_rows', v_new.budget_rows,
                                                'budget_window_seconds', v_new.budget_window_seconds));
    UPDATE idem_approval_policy p SET audit_id = idem_set_approval_budget.audit_id;
    budget_rows := v_new.budget_rows;
    budget_window_seconds := v_new.budget_window_seconds;
    RETURN NEXT;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_approval_budget(bigint, integer, text, text) FROM PUBLIC;
