-- idem_reconcile_add (schema v30; the history is in git log).
-- Registers (or replaces) the reconcile probe of an operation: p_query counts the business effect
-- of one key, its business id bound as $1 (idem_reconcile_check_query says what is accepted); each
-- run samples at most p_sample_size keys of the operation that succeeded in the last
-- p_window_seconds (newest first), once every p_every_seconds, each query under a statement
-- timeout of p_timeout_ms. The first run is due at once. One audit entry, action
-- 'reconcile_probe', before and after: the probe as it was (null when new) and as it is.
-- Granted to nobody: the owner of the Idem schema registers probes (the query runs later, as
-- role idem_reconcile, under whatever SELECT grants that role holds). ID003 for bad arguments.
CREATE OR REPLACE FUNCTION idem_reconcile_add(p_operation text, p_query text, p_sample_size integer,
                                              p_window_seconds integer, p_every_seconds integer, p_timeout_ms integer,
                                              p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, operation text, replaced boolean, next_run_at timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $add$
DECLARE
    v_old idem_reconcile_probes;
    v_new idem_reconcile_probes;
    v_query text;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_operation IS NULL OR p_operation !~ '^[!-9;-~]{1,64}$' OR p_operation = '*' THEN
        RAISE EXCEPTION 'operation must be 1 to 64 visible ASCII characters without '':'', and not ''*'', not %',
            COALESCE(quote_literal(left(p_operation, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    v_query := idem_reconcile_check_query(p_query);
    IF p_sample_size IS NULL OR p_sample_size NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'a probe samples 1 to 1000 keys a run, not %', COALESCE(p_sample_size::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_window_seconds IS NULL OR p_window_seconds NOT BETWEEN 60 AND 2592000 THEN
        RAISE EXCEPTION 'a probe''s window is 60 to 2592000 seconds (30 days), not %',
            COALESCE(p_window_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_every_seconds IS NULL OR p_every_seconds NOT BETWEEN 60 AND 86400 THEN
        RAISE EXCEPTION 'a probe runs every 60 to 86400 seconds (a day), not %', COALESCE(p_every_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_timeout_ms IS NULL OR p_timeout_ms NOT BETWEEN 10 AND 60000 THEN
        RAISE EXCEPTION 'a probe''s statement timeout is 10 to 60000 ms, not %', COALESCE(p_timeout_ms::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;

    SELECT * INTO v_old FROM idem_reconcile_probes p WHERE p.operation = p_operation FOR UPDATE;
    INSERT INTO idem_reconcile_probes AS p (operation, query, sample_size, window_seconds, every_seconds, timeout_ms,
                                            created_at, created_by, next_run_at, audit_id)
    VALUES (p_operation, v_query, p_sample_size, p_window_seconds, p_every_seconds, p_timeout_ms, now(),
            format('%s (%s)', session_user, v_actor), now(), 0)
    ON CONFLICT ON CONSTRAINT idem_reconcile_probes_pkey DO UPDATE
       SET query = EXCLUDED.query, sample_size = EXCLUDED.sample_size, window_seconds = EXCLUDED.window_seconds,
           every_seconds = EXCLUDED.every_seconds, timeout_ms = EXCLUDED.timeout_ms, created_at = EXCLUDED.created_at,
           created_by = EXCLUDED.created_by, next_run_at = EXCLUDED.next_run_at
    RETURNING p.* INTO v_new;
    audit_id := audit_append('', 'reconcile_probe', p_reason, v_actor,
                             CASE WHEN v_old.operation IS NULL THEN 'null'::jsonb
                                  ELSE to_jsonb(v_old) - 'audit_id' - 'next_run_at' END,
                             to_jsonb(v_new) - 'audit_id' - 'next_run_at');
    UPDATE idem_reconcile_probes p SET audit_id = idem_reconcile_add.audit_id WHERE p.operation = p_operation;
    operation := p_operation;
    replaced := v_old.operation IS NOT NULL;
    next_run_at := v_new.next_run_at;
    RETURN NEXT;
END
$add$;

REVOKE ALL ON FUNCTION idem_reconcile_add(text, text, integer, integer, integer, integer, text, text) FROM PUBLIC;
