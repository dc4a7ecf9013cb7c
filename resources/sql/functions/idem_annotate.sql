-- idem_annotate (schema v17; the history is in git log).
-- Records an operator's mark on the time axis, e.g. a deploy or a vendor's incident, for a tenant,
-- an operation or both ('*' for all): one audit entry, action 'annotate', whose reason is the
-- text (the recovery actions' rules: visible characters, 1 to 1000) and whose after image names
-- the scope. The charts show it with the other events of idem_events(). Returns the entry.
CREATE OR REPLACE FUNCTION idem_annotate(p_text text, p_actor text DEFAULT NULL, p_tenant text DEFAULT '*',
                                         p_operation text DEFAULT '*')
RETURNS TABLE (audit_id bigint, at timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $annotate$
DECLARE
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    PERFORM idem_pause_check_scope(p_tenant, p_operation);
    PERFORM audit_check_reason(p_text, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    audit_id := audit_append('', 'annotate', p_text, v_actor, 'null'::jsonb,
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation));
    SELECT a.at INTO at FROM task_idempotency_audit a WHERE a.id = idem_annotate.audit_id;
    RETURN NEXT;
END
$annotate$;

REVOKE ALL ON FUNCTION idem_annotate(text, text, text, text) FROM PUBLIC;
