-- idem_request_retention (schema v22; the history is in git log).
-- Requests a retention change that the approval policy holds for a second person
-- (retention_changes_need_approval): p_change 'set' (p_operation, or '*' the default, to
-- p_horizon_seconds: 3600 to 315360000) or 'clear' (p_operation's own row removed, back to '*';
-- p_horizon_seconds NULL). Records the spec {"kind", "change", "operation", "horizon_seconds"}
-- and its SHA-256, which the approver (idem_change_approve) and the use (idem_change_use) name.
-- Changes no policy. One audit entry, action 'change_request'. ID003 for bad arguments or with the
-- switch off (then the change is made directly), nothing written. Granted to idem_may_purge.
CREATE OR REPLACE FUNCTION idem_request_retention(p_change text, p_operation text, p_horizon_seconds bigint,
                                                  p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, spec_sha256 text, spec jsonb, approvable_until timestamptz, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $request$
BEGIN
    IF p_change IS NULL OR p_change NOT IN ('set', 'clear') THEN
        RAISE EXCEPTION 'a retention change is set or clear, not %', COALESCE(quote_literal(left(p_change, 64)), 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_change = 'set' THEN
        IF p_operation IS NULL OR NOT (p_operation = '*' OR p_operation ~ '^[!-9;-~]{1,64}$') THEN
            RAISE EXCEPTION 'operation must be ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
                COALESCE(quote_literal(left(p_operation, 80)), 'NULL') USING ERRCODE = 'ID003';
        END IF;
        IF p_horizon_seconds IS NULL OR p_horizon_seconds NOT BETWEEN 3600 AND 3650::bigint * 86400 THEN
            RAISE EXCEPTION 'horizon must be 3600 to 315360000 seconds (1 hour to 3650 days), not %',
                COALESCE(p_horizon_seconds::text, 'NULL') USING ERRCODE = 'ID003';
        END IF;
    ELSE
        IF p_operation IS NULL OR p_operation = '*' OR p_operation !~ '^[!-9;-~]{1,64}$' THEN
            RAISE EXCEPTION 'operation must be 1 to 64 visible ASCII characters without '':'' (the ''*'' default cannot be'
                            ' removed), not %', COALESCE(quote_literal(left(p_operation, 80)), 'NULL') USING ERRCODE = 'ID003';
        END IF;
        IF p_horizon_seconds IS NOT NULL THEN
            RAISE EXCEPTION 'clearing an operation''s retention names no horizon, not %', p_horizon_seconds
                USING ERRCODE = 'ID003';
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM idem_approval_request_add('retention',
        jsonb_build_object('kind', 'retention', 'change', p_change, 'operation', p_operation,
                           'horizon_seconds', p_horizon_seconds), p_reason, p_actor);
END
$request$;

REVOKE ALL ON FUNCTION idem_request_retention(text, text, bigint, text, text) FROM PUBLIC;
