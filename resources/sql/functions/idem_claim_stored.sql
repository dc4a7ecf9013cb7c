-- idem_claim_stored (schema v25, changed in v27; the history is in git log).
-- claim() for a key of a re-drivable operation (idem_redrive_register), in one round trip: the
-- same arguments and answers, plus p_request, the canonical JSON text of the request. When the key
-- is acquired (new, or reacquired without one) and has no stored request yet, p_request is stored
-- beside it (idem_stored_requests, deleted with the key by idem_purge_batch). Refused, nothing
-- claimed or stored: p_request NULL or empty (always, ID003); and when the claim acquires the
-- key, the operation not registered for the key's tenant (nor '*') (ID004), p_request over the
-- operation's max_request_bytes, or p_request not the text whose v1 digest is p_request_hash
-- ('v1:' || hex(sha256(its UTF-8 bytes))) (ID003). The refusal undoes the claim with the rest of the
-- statement. v27: a claim that does not acquire (a replay, in_progress, retry_later, conflict,
-- failed, paused) neither reads the registration nor hashes the request, and an acquisition
-- hashes it once; claim()'s answer is copied into the out columns, not re-selected.
-- Claims of operations not registered call claim().
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
    v_max integer;
    v_bytes integer;
    v_tenant text;
    v_operation text;
BEGIN
    IF p_request IS NULL OR p_request = '' THEN
        RAISE EXCEPTION 'a claim of a re-drivable operation stores its request: the request is required'
            USING ERRCODE = 'ID003';
    END IF;
    SELECT x.decision, x.detail, x.owner_token, x.attempts, x.max_attempts, x.lease_until, x.retry_after_ms,
           x.result_json, x.request_hash, x.error_class, x.error_message
      INTO decision, detail, owner_token, attempts, max_attempts, lease_until, retry_after_ms,
           result_json, request_hash, error_class, error_message
      FROM claim(p_key, p_request_hash, p_token, p_lease_ms, p_max_attempts, p_max_age_ms) x;
    IF decision IN ('acquired', 'reacquired')
       AND (decision = 'acquired'
            OR NOT EXISTS (SELECT FROM idem_stored_requests q WHERE q.idempotency_key = p_key)) THEN
        v_tenant := split_part(p_key, ':', 1);
        v_operation := split_part(p_key, ':', 2);
        -- idem_redrive_registration's query, written out: a call of that (non-inlinable) function
        -- cost about as much as the claim itself (bench/README.md, Session 17).
        SELECT o.max_request_bytes INTO v_max FROM idem_redrive_operations o
         WHERE o.operation = v_operation AND o.tenant IN (v_tenant, '*')
         ORDER BY o.tenant = '*'
         LIMIT 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION '%:% is not registered as re-drivable: claim it with claim(), or register it first'
                            ' (idem_redrive_register)', left(v_tenant, 64), left(v_operation, 64)
                USING ERRCODE = 'ID004';
        END IF;
        v_bytes := octet_length(p_request);
        IF v_bytes > v_max THEN
            RAISE EXCEPTION 'the request is % bytes, over the bound of % bytes of %:%: nothing was claimed or stored',
                v_bytes, v_max, v_tenant, v_operation
                USING ERRCODE = 'ID003',
                      HINT = 'Send a smaller request, or register the operation with a larger max_request_bytes'
                             ' (at most 1048576).';
        END IF;
        IF 'v1:' || encode(sha256(convert_to(p_request, 'UTF8')), 'hex') <> p_request_hash THEN
            RAISE EXCEPTION 'the request is not the one digest % was computed from (v1: sha256 of its canonical JSON):'
                            ' nothing was claimed or stored', left(p_request_hash, 80) USING ERRCODE = 'ID003';
        END IF;
        -- A new key's leftover (a request of a key truncated by hand) is replaced.
        INSERT INTO idem_stored_requests AS q (idempotency_key, request, request_hash, bytes, stored_at)
        VALUES (p_key, p_request, p_request_hash, v_bytes, now())
        ON CONFLICT (idempotency_key) DO UPDATE
            SET request = excluded.request, request_hash = excluded.request_hash, bytes = excluded.bytes,
                stored_at = excluded.stored_at;
    END IF;
    RETURN NEXT;
END
$claim$;

REVOKE ALL ON FUNCTION idem_claim_stored(text, text, uuid, bigint, integer, bigint, text) FROM PUBLIC;
