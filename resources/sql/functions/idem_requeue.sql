-- idem_requeue (schema v3; the history is in git log).
-- The callable actions. Outcome: applied | stale | wrong_state | not_found; status and
-- updated_at_us are the row after the action (applied) or as it is now (refusals); row_image is
-- the row as the audit keeps it; audit_id the new entry. p_actor: who is acting as the client
-- knows it (OS user, host), recorded next to session_user, application_name and the client address.
CREATE OR REPLACE FUNCTION idem_requeue(p_key text, p_expected_status text, p_expected_updated_at_us bigint,
                             p_extra_attempts integer, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, updated_at_us bigint, row_image jsonb, audit_id bigint, message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY SELECT * FROM recovery_action_apply('requeue', p_key, p_expected_status, p_expected_updated_at_us,
                                        p_extra_attempts, p_reason, p_actor);
END
$$;

REVOKE ALL ON FUNCTION idem_requeue(text, text, bigint, integer, text, text) FROM PUBLIC;
