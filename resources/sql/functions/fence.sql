-- fence (schema v2, changed in v6; the history is in git log).
-- Inside the caller's business transaction, before its writes: locks the row and checks the
-- token still owns it. Raises ID001 otherwise, which aborts the caller's transaction.
CREATE OR REPLACE FUNCTION fence(p_key text, p_token uuid)
RETURNS TABLE (attempts integer, lease_until timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $fence$
DECLARE
    r task_idempotency%ROWTYPE;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL THEN
        RAISE EXCEPTION 'no owner token (a claim that did not acquire the key gives none)' USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no idempotency record for key %', p_key USING ERRCODE = 'ID002';
    END IF;
    -- A row without an owner (released) is nobody's: never equal to any token.
    IF r.status <> 'processing' OR r.owner_token IS NULL OR r.owner_token <> p_token THEN
        RAISE EXCEPTION 'owner token % no longer owns key % (status %)', p_token, p_key, r.status
            USING ERRCODE = 'ID001';
    END IF;
    RETURN QUERY SELECT r.attempts, r.lease_until;
END
$fence$;

REVOKE ALL ON FUNCTION fence(text, uuid) FROM PUBLIC;
