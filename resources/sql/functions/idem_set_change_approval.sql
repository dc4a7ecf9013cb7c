-- idem_set_change_approval (schema v22, a delegate since v28; the history is in git log).
-- Kept for the clients of v22 to v27: sets kinds 'retention' and 'purge' through
-- idem_set_approval_policy, the one setter (two audit entries, action 'approval_policy'; the
-- second's id returned). Granted to nobody.
CREATE OR REPLACE FUNCTION idem_set_change_approval(p_retention_changes boolean, p_manual_purges boolean,
                                                    p_ttl_seconds integer, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, retention_changes_need_approval boolean, manual_purges_need_approval boolean,
               change_ttl_seconds integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $set$
BEGIN
    IF p_retention_changes IS NULL OR p_manual_purges IS NULL THEN
        RAISE EXCEPTION 'say whether retention changes and manual purges need approval: true or false, not NULL'
            USING ERRCODE = 'ID003';
    END IF;
    PERFORM idem_set_approval_policy('retention', p_retention_changes, NULL, p_ttl_seconds, p_reason, p_actor);
    RETURN QUERY SELECT s.audit_id, p_retention_changes, s.gated, s.ttl_seconds
                   FROM idem_set_approval_policy('purge', p_manual_purges, NULL, p_ttl_seconds, p_reason, p_actor) s;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_change_approval(boolean, boolean, integer, text, text) FROM PUBLIC;
