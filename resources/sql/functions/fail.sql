-- fail (schema v2, changed in v6, v17, v33; the history is in git log).
-- Records a failed attempt, fenced by the token. p_class: retryable (definitely failed,
-- safe to retry), permanent (stop now), unknown (the request left and the answer was lost:
-- retried like retryable, with the same key, and flagged). Retryable and unknown rows are
-- due again after p_retry_delay_ms unless attempts or age are exhausted, which ends in failed.
-- The last 20 failures are kept in errors, each (v17) with its attempt's run time in run_us.
-- A failure of a key a ramp admitted (v33) counts against the ramp, which it may abort
-- (idem_ramp_failed); while nothing is paused or ramping that is the catalog lookup claim() makes.
CREATE OR REPLACE FUNCTION fail(p_key text, p_token uuid, p_class text, p_message text, p_retry_delay_ms bigint,
                     p_max_age_ms bigint DEFAULT NULL)
RETURNS TABLE (status text, attempts integer, max_attempts integer, next_attempt_at timestamptz, exhausted boolean)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $fail$
DECLARE
    r task_idempotency%ROWTYPE;
    v_message text;
    v_final boolean;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL THEN
        RAISE EXCEPTION 'no owner token (a claim that did not acquire the key gives none)' USING ERRCODE = 'ID003';
    END IF;
    IF p_class IS NULL OR p_class NOT IN ('retryable', 'permanent', 'unknown') THEN
        RAISE EXCEPTION 'error class must be retryable, permanent or unknown, not %', p_class USING ERRCODE = 'ID003';
    END IF;
    IF p_message IS NULL THEN
        RAISE EXCEPTION 'a message is required (it may be empty)' USING ERRCODE = 'ID003';
    END IF;
    IF p_retry_delay_ms IS NULL OR p_retry_delay_ms NOT BETWEEN 0 AND 604800000 THEN
        RAISE EXCEPTION 'retry delay must be 0 to 604800000 ms (7 days), not %', p_retry_delay_ms
            USING ERRCODE = 'ID003';
    END IF;
    IF p_max_age_ms IS NOT NULL AND p_max_age_ms NOT BETWEEN 1 AND 31536000000 THEN
        RAISE EXCEPTION 'max_age must be NULL or 1 to 31536000000 ms (365 days), not %', p_max_age_ms
            USING ERRCODE = 'ID003';
    END IF;
    v_message := left(p_message, 8192);
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
    -- A row without an owner (released) is nobody's: never equal to any token.
    IF NOT FOUND OR r.status <> 'processing' OR r.owner_token IS NULL OR r.owner_token <> p_token THEN
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
                                                            'class', p_class, 'message', v_message,
                                                            'run_us', round(extract(epoch FROM clock_timestamp()
                                                                                    - t.attempt_started_at) * 1000000))),
           owner_token = NULL, lease_until = NULL, updated_at = now()
     WHERE t.idempotency_key = p_key
    RETURNING t.* INTO r;
    IF idem_pause_may_cover(p_key) THEN
        PERFORM idem_ramp_failed(p_key);
    END IF;
    RETURN QUERY SELECT r.status, r.attempts, r.max_attempts, r.next_attempt_at,
                        r.status = 'failed' AND p_class <> 'permanent';
END
$fail$;

REVOKE ALL ON FUNCTION fail(text, uuid, text, text, bigint, bigint) FROM PUBLIC;
