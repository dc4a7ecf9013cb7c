-- idem_fail (schema v3; the history is in git log).
-- The operator's "mark failed" (recovery_action_apply with action fail), SECURITY DEFINER:
-- granted to idem_operator only, audited.
CREATE OR REPLACE FUNCTION idem_fail(p_key text, p_expected_status text, p_expected_updated_at_us bigint, p_reason text,
                          p_actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, updated_at_us bigint, row_image jsonb, audit_id bigint, message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY SELECT * FROM recovery_action_apply('fail', p_key, p_expected_status, p_expected_updated_at_us, NULL, p_reason,
                                        p_actor);
END
$$;

REVOKE ALL ON FUNCTION idem_fail(text, text, bigint, text, text) FROM PUBLIC;
