-- idem_redrive_items_of (schema v25; the history is in git log).
-- The re-drive items of key p_key, newest first (at most 100): for the Tasks detail and idemctl
-- tasks show. ID003 for a NULL, empty or over-long key.
CREATE OR REPLACE FUNCTION idem_redrive_items_of(p_key text)
RETURNS TABLE (item_id bigint, state text, job_id bigint, worker text, tries integer, requested_at timestamptz,
               requested_role text, requested_actor text, taken_at timestamptz, lease_until timestamptz,
               not_before timestamptz, finished_at timestamptz, detail text, audit_id bigint)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $items$
#variable_conflict use_column
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    SELECT i.id, i.state, i.job_id, i.worker, i.tries, i.requested_at, i.requested_role, i.requested_actor, i.taken_at,
           i.lease_until, i.not_before, i.finished_at, i.detail, i.audit_id
      FROM idem_redrive_items i
     WHERE i.idempotency_key = p_key
     ORDER BY i.id DESC
     LIMIT 100;
END
$items$;

REVOKE ALL ON FUNCTION idem_redrive_items_of(text) FROM PUBLIC;
