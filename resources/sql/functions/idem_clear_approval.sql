-- idem_clear_approval (schema v21, a delegate since v28; the history is in git log).
-- Kept for the clients of v21 to v27: jobs start active whatever their size
-- (idem_set_approval_policy('job', false, ...); jobs waiting for approval keep waiting). Returns
-- its audit entry; NULL, writing nothing, when jobs were not gated. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_clear_approval(p_reason text, p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $clear$
DECLARE
    k idem_approval_kinds;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    SELECT * INTO k FROM idem_approval_kinds x WHERE x.kind = 'job';
    IF NOT k.gated THEN
        RETURN NULL;
    END IF;
    RETURN (SELECT s.audit_id FROM idem_set_approval_policy('job', false, NULL, k.ttl_seconds, p_reason, p_actor) s);
END
$clear$;

REVOKE ALL ON FUNCTION idem_clear_approval(text, text) FROM PUBLIC;
