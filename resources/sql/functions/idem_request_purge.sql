-- idem_request_purge (schema v22; the history is in git log).
-- Requests a manual purge that the approval policy holds for a second person
-- (manual_purges_need_approval): batches of p_batch rows (1 to 100000), for at most
-- p_max_seconds (0: until nothing is due; at most 86400), at duty p_duty (0.01 to 1), removing
-- what the retention policy makes due when it runs. Records the spec {"kind", "batch",
-- "max_seconds", "duty"} and its SHA-256, which the approver (idem_change_approve) and the use
-- (idem_change_use) name. Removes nothing. One audit entry, action 'change_request'. ID003 for bad
-- arguments or with the switch off (then the purge runs directly), nothing written. Granted to
-- idem_may_purge.
CREATE OR REPLACE FUNCTION idem_request_purge(p_batch integer, p_max_seconds integer, p_duty double precision,
                                              p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, spec_sha256 text, spec jsonb, approvable_until timestamptz, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $request$
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_seconds IS NULL OR p_max_seconds NOT BETWEEN 0 AND 86400 THEN
        RAISE EXCEPTION 'max_seconds must be 0 (until nothing is due) to 86400, not %', COALESCE(p_max_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_duty IS NULL OR NOT (p_duty >= 0.01 AND p_duty <= 1) THEN
        RAISE EXCEPTION 'duty must be 0.01 to 1, not %', COALESCE(p_duty::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY SELECT * FROM idem_approval_request_add('purge',
        jsonb_build_object('kind', 'purge', 'batch', p_batch, 'max_seconds', p_max_seconds, 'duty', p_duty),
        p_reason, p_actor);
END
$request$;

REVOKE ALL ON FUNCTION idem_request_purge(integer, integer, double precision, text, text) FROM PUBLIC;
