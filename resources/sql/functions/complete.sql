-- complete (schema v2, changed in v6, v13; the history is in git log).
-- Marks the row succeeded with its result, in the caller's business transaction (after fence
-- and the business writes). Raises ID001 if the token lost the row: the caller's commit must
-- not happen, and since the error aborts the transaction it cannot.
CREATE OR REPLACE FUNCTION complete(p_key text, p_token uuid, p_result jsonb, p_max_result_bytes integer DEFAULT 1048576)
RETURNS timestamptz
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $complete$
DECLARE
    v_at timestamptz;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL THEN
        RAISE EXCEPTION 'no owner token (a claim that did not acquire the key gives none)' USING ERRCODE = 'ID003';
    END IF;
    IF p_max_result_bytes IS NULL OR p_max_result_bytes NOT BETWEEN 1 AND 67108864 THEN
        RAISE EXCEPTION 'max_result_bytes must be 1 to 67108864 (64 MiB), not %', p_max_result_bytes
            USING ERRCODE = 'ID003';
    END IF;
    IF p_result IS NULL THEN
        RAISE EXCEPTION 'a result is required (the JSON value null is one)' USING ERRCODE = 'ID003';
    END IF;
    IF octet_length(p_result::text) > p_max_result_bytes THEN
        RAISE EXCEPTION 'result is % bytes, more than the % allowed', octet_length(p_result::text), p_max_result_bytes
            USING ERRCODE = 'ID003';
    END IF;
    UPDATE task_idempotency t
       SET status = 'succeeded', result_json = p_result, owner_token = NULL, lease_until = NULL,
           next_attempt_at = NULL,
           updated_at = clock_timestamp() -- v13: the completion's time, not the transaction's start
     WHERE t.idempotency_key = p_key AND t.status = 'processing' AND t.owner_token = p_token
    RETURNING t.updated_at INTO v_at;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'owner token % no longer owns key %', p_token, p_key USING ERRCODE = 'ID001';
    END IF;
    RETURN v_at;
END
$complete$;

REVOKE ALL ON FUNCTION complete(text, uuid, jsonb, integer) FROM PUBLIC;
