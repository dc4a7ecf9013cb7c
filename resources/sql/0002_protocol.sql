-- Idem schema v2: the idempotency protocol as SQL functions, one round trip each, for
-- workers in any language. The C++ library (core/taskstore.cpp) calls exactly these.
--
-- Errors raised here carry Idem's own SQLSTATEs (class ID, unused by PostgreSQL):
--   ID001  the caller's owner_token no longer owns the row (lease lost, released or taken
--          over, or the row already finished): nothing of the caller's transaction may commit
--   ID002  no record for that key
--   ID003  an argument is invalid (empty key, non-positive lease, unknown error class, oversize result)
--
-- Every statement filters on idempotency_key = p_key and touches one row: the functions stay
-- valid when task_idempotency is distributed by that key. now() is the transaction's start,
-- which is what a short claim transaction wants.

CREATE FUNCTION claim(p_key text, p_request_hash text, p_token uuid, p_lease_ms bigint,
                      p_max_attempts integer DEFAULT 5, p_max_age_ms bigint DEFAULT NULL)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $claim$
DECLARE
    r task_idempotency%ROWTYPE;
    v_expired_by_age boolean;
    v_detail text;
BEGIN
    IF p_key IS NULL OR p_key = '' OR octet_length(p_key) > 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_request_hash IS NULL OR p_request_hash = '' THEN
        RAISE EXCEPTION 'request hash is required' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL OR p_lease_ms IS NULL OR p_lease_ms <= 0 OR p_max_attempts IS NULL OR p_max_attempts < 1 THEN
        RAISE EXCEPTION 'claim needs a token, a positive lease and max_attempts >= 1' USING ERRCODE = 'ID003';
    END IF;

    INSERT INTO task_idempotency AS t (idempotency_key, request_hash, status, owner_token, lease_until,
                                       attempts, max_attempts, created_at, updated_at)
    VALUES (p_key, p_request_hash, 'processing', p_token, now() + p_lease_ms * interval '1 millisecond',
            1, p_max_attempts, now(), now())
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING t.* INTO r;
    IF FOUND THEN
        RETURN QUERY SELECT 'acquired'::text, 'new'::text, r.owner_token, r.attempts, r.max_attempts,
                            r.lease_until, 0::bigint, NULL::jsonb, r.request_hash, NULL::text, NULL::text;
        RETURN;
    END IF;

    -- First without a lock: a succeeded row and a row's digest never change, and a live lease
    -- or a pending backoff is an answer in itself. Only a takeover needs the lock.
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
    IF NOT FOUND THEN
        -- Inserted by a transaction that then rolled back, between our insert and our read.
        RETURN QUERY SELECT 'in_progress'::text, 'contended'::text, NULL::uuid, 0, p_max_attempts,
                            NULL::timestamptz, 50::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;

    FOR i IN 1..2 LOOP
        IF r.request_hash <> p_request_hash THEN
            RETURN QUERY SELECT 'conflict'::text, r.status, NULL::uuid, r.attempts, r.max_attempts,
                                NULL::timestamptz, 0::bigint, NULL::jsonb, r.request_hash, NULL::text, NULL::text;
            RETURN;
        ELSIF r.status = 'succeeded' THEN
            RETURN QUERY SELECT 'replay'::text, 'succeeded'::text, NULL::uuid, r.attempts, r.max_attempts,
                                NULL::timestamptz, 0::bigint, r.result_json, r.request_hash, NULL::text, NULL::text;
            RETURN;
        ELSIF r.status = 'failed' THEN
            RETURN QUERY SELECT 'failed'::text, 'failed'::text, NULL::uuid, r.attempts, r.max_attempts,
                                NULL::timestamptz, 0::bigint, NULL::jsonb, r.request_hash, r.error_class,
                                r.error_message;
            RETURN;
        ELSIF r.status = 'processing' AND r.lease_until > now() THEN
            RETURN QUERY SELECT 'in_progress'::text, 'lease_live'::text, NULL::uuid, r.attempts, r.max_attempts,
                                r.lease_until,
                                GREATEST(1, ceil(extract(epoch FROM r.lease_until - now()) * 1000))::bigint,
                                NULL::jsonb, r.request_hash, NULL::text, NULL::text;
            RETURN;
        ELSIF r.status = 'retryable_failed' AND r.next_attempt_at > now() THEN
            RETURN QUERY SELECT 'retry_later'::text, r.error_class, NULL::uuid, r.attempts, r.max_attempts,
                                r.next_attempt_at,
                                GREATEST(1, ceil(extract(epoch FROM r.next_attempt_at - now()) * 1000))::bigint,
                                NULL::jsonb, r.request_hash, r.error_class, r.error_message;
            RETURN;
        END IF;
        EXIT WHEN i = 2;
        -- A takeover candidate. Lock it, but never wait behind its executor (who holds the
        -- lock while completing) or another claimer: a locked row is in progress by definition.
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'in_progress'::text, 'locked'::text, NULL::uuid, 0, p_max_attempts,
                                NULL::timestamptz, 50::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
            RETURN;
        END IF;
        -- Loop once more: the locked row is the newest version and may have moved on.
    END LOOP;

    v_expired_by_age := p_max_age_ms IS NOT NULL AND r.created_at + p_max_age_ms * interval '1 millisecond' <= now();
    IF r.attempts >= r.max_attempts OR v_expired_by_age THEN
        -- Out of attempts (or too old) with no recorded outcome: stop here, keep the key and
        -- the last error, and leave reopening it to an operator.
        UPDATE task_idempotency t
           SET status = 'failed',
               error_class = COALESCE(CASE WHEN r.status = 'processing' THEN 'unknown' END, t.error_class, 'unknown'),
               error_message = CASE WHEN r.status = 'processing'
                                    THEN 'lease expired with no outcome recorded; '
                                    ELSE COALESCE(t.error_message || '; ', '') END
                               || CASE WHEN v_expired_by_age THEN 'maximum age reached' ELSE 'attempts exhausted' END,
               owner_token = NULL, lease_until = NULL, next_attempt_at = NULL, updated_at = now()
         WHERE t.idempotency_key = p_key
        RETURNING t.* INTO r;
        RETURN QUERY SELECT 'failed'::text, 'exhausted'::text, NULL::uuid, r.attempts, r.max_attempts,
                            NULL::timestamptz, 0::bigint, NULL::jsonb, r.request_hash, r.error_class, r.error_message;
        RETURN;
    END IF;

    v_detail := CASE WHEN r.status = 'processing' THEN 'lease_expired' ELSE 'retry_due' END;
    UPDATE task_idempotency t
       SET status = 'processing', owner_token = p_token,
           lease_until = now() + p_lease_ms * interval '1 millisecond',
           attempts = t.attempts + 1, next_attempt_at = NULL, updated_at = now()
     WHERE t.idempotency_key = p_key
    RETURNING t.* INTO STRICT r;
    RETURN QUERY SELECT 'reacquired'::text, v_detail, r.owner_token, r.attempts, r.max_attempts, r.lease_until, 0::bigint, NULL::jsonb,
                        r.request_hash, r.error_class, r.error_message;
END
$claim$;

-- Inside the caller's business transaction, before its writes: locks the row and checks the
-- token still owns it. Raises ID001 otherwise, which aborts the caller's transaction.
CREATE FUNCTION fence(p_key text, p_token uuid)
RETURNS TABLE (attempts integer, lease_until timestamptz)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $fence$
DECLARE
    r task_idempotency%ROWTYPE;
BEGIN
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no idempotency record for key %', p_key USING ERRCODE = 'ID002';
    END IF;
    IF r.status <> 'processing' OR r.owner_token IS DISTINCT FROM p_token THEN
        RAISE EXCEPTION 'owner token % no longer owns key % (status %)', p_token, p_key, r.status
            USING ERRCODE = 'ID001';
    END IF;
    RETURN QUERY SELECT r.attempts, r.lease_until;
END
$fence$;

-- Marks the row succeeded with its result, in the caller's business transaction (after fence
-- and the business writes). Raises ID001 if the token lost the row: the caller's commit must
-- not happen, and since the error aborts the transaction it cannot.
CREATE FUNCTION complete(p_key text, p_token uuid, p_result jsonb, p_max_result_bytes integer DEFAULT 1048576)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $complete$
DECLARE
    v_at timestamptz;
BEGIN
    IF p_result IS NOT NULL AND octet_length(p_result::text) > p_max_result_bytes THEN
        RAISE EXCEPTION 'result is % bytes, more than the % allowed', octet_length(p_result::text), p_max_result_bytes
            USING ERRCODE = 'ID003';
    END IF;
    UPDATE task_idempotency t
       SET status = 'succeeded', result_json = p_result, owner_token = NULL, lease_until = NULL,
           next_attempt_at = NULL, updated_at = now()
     WHERE t.idempotency_key = p_key AND t.status = 'processing' AND t.owner_token = p_token
    RETURNING t.updated_at INTO v_at;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'owner token % no longer owns key %', p_token, p_key USING ERRCODE = 'ID001';
    END IF;
    RETURN v_at;
END
$complete$;

-- Extends a live lease. Raises ID001 if the token lost the row.
CREATE FUNCTION heartbeat(p_key text, p_token uuid, p_lease_ms bigint)
RETURNS timestamptz
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $heartbeat$
DECLARE
    v_until timestamptz;
BEGIN
    IF p_lease_ms IS NULL OR p_lease_ms <= 0 THEN
        RAISE EXCEPTION 'lease must be positive' USING ERRCODE = 'ID003';
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

-- Records a failed attempt, fenced by the token. p_class: retryable (definitely failed,
-- safe to retry), permanent (stop now), unknown (the request left and the answer was lost:
-- retried like retryable, with the same key, and flagged). Retryable and unknown rows are
-- due again after p_retry_delay_ms unless attempts or age are exhausted, which ends in failed.
-- The last 20 failures are kept in errors.
CREATE FUNCTION fail(p_key text, p_token uuid, p_class text, p_message text, p_retry_delay_ms bigint,
                     p_max_age_ms bigint DEFAULT NULL)
RETURNS TABLE (status text, attempts integer, max_attempts integer, next_attempt_at timestamptz, exhausted boolean)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $fail$
DECLARE
    r task_idempotency%ROWTYPE;
    v_message text := left(COALESCE(p_message, ''), 8192);
    v_final boolean;
BEGIN
    IF p_class IS NULL OR p_class NOT IN ('retryable', 'permanent', 'unknown') THEN
        RAISE EXCEPTION 'error class must be retryable, permanent or unknown, not %', p_class USING ERRCODE = 'ID003';
    END IF;
    IF p_retry_delay_ms IS NULL OR p_retry_delay_ms < 0 THEN
        RAISE EXCEPTION 'retry delay must be zero or more' USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
    IF NOT FOUND OR r.status <> 'processing' OR r.owner_token IS DISTINCT FROM p_token THEN
        RAISE EXCEPTION 'owner token % no longer owns key %', p_token, p_key USING ERRCODE = 'ID001';
    END IF;
    v_final := p_class = 'permanent' OR r.attempts >= r.max_attempts
               OR (p_max_age_ms IS NOT NULL AND r.created_at + p_max_age_ms * interval '1 millisecond' <= now());
    UPDATE task_idempotency t
       SET status = CASE WHEN v_final THEN 'failed' ELSE 'retryable_failed' END,
           next_attempt_at = CASE WHEN v_final THEN NULL ELSE now() + p_retry_delay_ms * interval '1 millisecond' END,
           error_class = p_class,
           error_message = v_message,
           errors = (CASE WHEN jsonb_array_length(t.errors) >= 20 THEN t.errors - 0 ELSE t.errors END)
                    || jsonb_build_array(jsonb_build_object('attempt', t.attempts, 'at', now(),
                                                            'class', p_class, 'message', v_message)),
           owner_token = NULL, lease_until = NULL, updated_at = now()
     WHERE t.idempotency_key = p_key
    RETURNING t.* INTO r;
    RETURN QUERY SELECT r.status, r.attempts, r.max_attempts, r.next_attempt_at,
                        r.status = 'failed' AND p_class <> 'permanent';
END
$fail$;

REVOKE ALL ON FUNCTION claim(text, text, uuid, bigint, integer, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fence(text, uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION complete(text, uuid, jsonb, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION heartbeat(text, uuid, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fail(text, uuid, text, text, bigint, bigint) FROM PUBLIC;
