-- idem_claim_stored (schema v25; the history is in git log).
-- claim() for a key of a re-drivable operation (idem_redrive_register), in one round trip: the
-- same arguments and answers, plus p_request, the canonical JSON text of the request. When the key
-- is acquired (new, or reacquired) and has no stored request yet, p_request is stored beside it
-- (idem_stored_requests, deleted with the key). Refused before anything is read or claimed: the
-- operation is not registered for the key's tenant (ID004); p_request is NULL, empty or over
-- the operation's max_request_bytes; p_request is not the text whose v1 digest is p_request_hash
-- ('v1:' || hex(sha256(its UTF-8 bytes))) (ID003). Claims of operations not registered call claim().
CREATE OR REPLACE FUNCTION idem_claim_stored(p_key text, p_request_hash text, p_token uuid, p_lease_ms bigint,
                                             p_max_attempts integer DEFAULT 5, p_max_age_ms bigint DEFAULT NULL,
                                             p_request text DEFAULT NULL)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $claim$
#variable_conflict use_column
DECLARE
    c record;
    v_max integer;
    v_bytes integer;
    v_tenant text;
    v_operation text;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    v_tenant := split_part(p_key, ':', 1);
    v_operation := split_part(p_key, ':', 2);
    -- idem_redrive_registration's query, written out: a call of that (non-inlinable) function cost
    -- about as much as the claim itself (bench/README.md, Session 17).
    SELECT o.max_request_bytes INTO v_max FROM idem_redrive_operations o
     WHERE o.operation = v_operation AND o.tenant IN (v_tenant, '*')
     ORDER BY o.tenant = '*'
     LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION '%:% is not registered as re-drivable: claim it with claim(), or register it first'
                        ' (idem_redrive_register)', left(v_tenant, 64), left(v_operation, 64) USING ERRCODE = 'ID004';
    END IF;
    IF p_request IS NULL THEN
        RAISE EXCEPTION 'a claim of re-drivable %:% stores its request: the request is required', v_tenant, v_operation
            USING ERRCODE = 'ID003';
    END IF;
    v_bytes := octet_length(p_request);
    IF v_bytes NOT BETWEEN 1 AND v_max THEN
        RAISE EXCEPTION 'the request is % bytes, over the bound of % bytes of %:%: nothing was claimed or stored',
            v_bytes, v_max, v_tenant, v_operation
            USING ERRCODE = 'ID003',
                  HINT = 'Send a smaller request, or register the operation with a larger max_request_bytes'
                         ' (at most 1048576).';
    END IF;
    -- (A NULL or malformed p_request_hash is claim()'s to refuse, below, before it reads anything.)
    IF 'v1:' || encode(sha256(convert_to(p_request, 'UTF8')), 'hex') <> p_request_hash THEN
        RAISE EXCEPTION 'the request is not the one digest % was computed from (v1: sha256 of its canonical JSON)',
            left(p_request_hash, 80) USING ERRCODE = 'ID003';
    END IF;

    SELECT * INTO c FROM claim(p_key, p_request_hash, p_token, p_lease_ms, p_max_attempts, p_max_age_ms) x;
    IF c.decision IN ('acquired', 'reacquired') THEN
        INSERT INTO idem_stored_requests (idempotency_key, request, request_hash, bytes, stored_at)
        VALUES (p_key, p_request, p_request_hash, v_bytes, now())
        ON CONFLICT (idempotency_key) DO NOTHING;
    END IF;
    RETURN QUERY SELECT c.decision, c.detail, c.owner_token, c.attempts, c.max_attempts, c.lease_until,
                        c.retry_after_ms, c.result_json, c.request_hash, c.error_class, c.error_message;
END
$claim$;

REVOKE ALL ON FUNCTION idem_claim_stored(text, text, uuid, bigint, integer, bigint, text) FROM PUBLIC;
