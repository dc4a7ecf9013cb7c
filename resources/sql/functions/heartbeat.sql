-- heartbeat (schema v2, changed in v6; the history is in git log).
-- Extends a live lease. Raises ID001 if the token lost the row.
CREATE OR REPLACE FUNCTION heartbeat(p_key text, p_token uuid, p_lease_ms bigint)
RETURNS timestamptz
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $heartbeat$
DECLARE
    v_until timestamptz;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL THEN
        RAISE EXCEPTION 'no owner token (a claim that did not acquire the key gives none)' USING ERRCODE = 'ID003';
    END IF;
    IF p_lease_ms IS NULL OR p_lease_ms NOT BETWEEN 1 AND 86400000 THEN
        RAISE EXCEPTION 'lease must be 1 to 86400000 ms (24 h), not %', p_lease_ms USING ERRCODE = 'ID003';
    END IF;
    UPDATE task_idempotency t
       SET lease_until = now() + p_lease_ms * interval '1 millisecond', updated_at = now()
     WHERE t.idempotency_key = p_key AND t.status = 'processing' AND t.owner_token = p_token
    RETURNING t.lease_until INTO v_until;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'owner token % no longer owns key %', p_token, p_key USING ERRCODE = 'ID001';
    END IF;
    RETURN v_until;
END
$heartbeat$;

REVOKE ALL ON FUNCTION heartbeat(text, uuid, bigint) FROM PUBLIC;
