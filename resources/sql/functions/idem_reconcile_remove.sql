-- idem_reconcile_remove (schema v30; the history is in git log).
-- Removes the reconcile probe of an operation, and its runs. One audit entry, action
-- 'reconcile_probe', before: the probe, after: null. Granted to nobody: the owner of the Idem
-- schema removes probes. ID003 for bad arguments, ID002 when the operation has no probe.
CREATE OR REPLACE FUNCTION idem_reconcile_remove(p_operation text, p_reason text, p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $remove$
DECLARE
    v_old idem_reconcile_probes;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_operation IS NULL OR char_length(p_operation) > 64 THEN
        RAISE EXCEPTION 'name the operation whose probe to remove (at most 64 characters), not %',
            COALESCE(quote_literal(left(p_operation, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    DELETE FROM idem_reconcile_probes p WHERE p.operation = p_operation RETURNING p.* INTO v_old;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'operation % has no reconcile probe', quote_literal(p_operation) USING ERRCODE = 'ID002';
    END IF;
    DELETE FROM idem_reconcile_runs r WHERE r.operation = p_operation;
    RETURN audit_append('', 'reconcile_probe', p_reason, v_actor, to_jsonb(v_old) - 'audit_id' - 'next_run_at', 'null'::jsonb);
END
$remove$;

REVOKE ALL ON FUNCTION idem_reconcile_remove(text, text, text) FROM PUBLIC;
