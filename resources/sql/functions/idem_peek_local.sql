-- idem_peek_local (issue 45 item 1, record at commit): what the stored row of key p_key says a
-- run of request digest p_request_hash should do, without taking the key. Read by primary key;
-- for use before the task (so a replay or a conflict costs less than running the task) and after
-- a rollback of a run whose idem_record_local did not answer recorded (or whose own writes met a
-- concurrent duplicate's: 23505, 40P01, 40001). decision [detail]:
-- - run [new]: no row, no pause covers the key: run the task, then idem_record_local;
-- - run [retry_due, lease_expired]: a row idem_record_local may take over (a due retry, a
--   two-step executor's expired lease) with attempts left and no pause covering it;
-- - otherwise claim()'s answers and writes for them: replay [succeeded], conflict [status] (the
--   conflict is recorded in task_idempotency_conflicts, as claim() does), failed [failed,
--   exhausted] (a row out of attempts or age is marked failed, as claim() does), in_progress
--   [lease_live, locked], retry_later [class], paused [tenant:operation] (claim()'s pause check).
-- Nothing else is written: no row, no lease, no token. A key another transaction has inserted and
-- not committed is absent here (run [new]); its idem_record_local then waits for that commit.
CREATE OR REPLACE FUNCTION idem_peek_local(p_key text, p_request_hash text, p_max_attempts integer,
                      p_max_age_ms bigint)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $peek_local$
DECLARE
    r task_idempotency%ROWTYPE;
    v_pause idem_pauses%ROWTYPE;
    v_aged boolean;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_request_hash IS NULL OR octet_length(p_request_hash) NOT BETWEEN 1 AND 256
       OR p_request_hash !~ '^[!-~]+$' THEN
        RAISE EXCEPTION 'request hash must be 1 to 256 bytes of visible ASCII (no spaces)' USING ERRCODE = 'ID003';
    END IF;
    IF p_max_attempts IS NULL OR p_max_attempts NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_attempts must be 1 to 1000, not %', p_max_attempts USING ERRCODE = 'ID003';
    END IF;
    IF p_max_age_ms IS NOT NULL AND p_max_age_ms NOT BETWEEN 1 AND 31536000000 THEN
        RAISE EXCEPTION 'max_age must be NULL or 1 to 31536000000 ms (365 days), not %', p_max_age_ms
            USING ERRCODE = 'ID003';
    END IF;

    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
    IF FOUND THEN
        IF r.request_hash <> p_request_hash THEN
            -- claim()'s record of a conflicting digest.
            INSERT INTO task_idempotency_conflicts AS c (idempotency_key, first_at, last_at, n, last_digest)
            VALUES (p_key, now(), now(), 1, p_request_hash)
            ON CONFLICT (idempotency_key) DO UPDATE
               SET last_at = now(), n = c.n + 1, last_digest = EXCLUDED.last_digest;
        END IF;
        RETURN QUERY SELECT * FROM idem_local_answer(r, p_request_hash);
        IF FOUND THEN
            RETURN;
        END IF;
        v_aged := p_max_age_ms IS NOT NULL AND r.created_at + p_max_age_ms * interval '1 millisecond' <= now();
        IF r.attempts >= r.max_attempts OR v_aged THEN
            -- Out of attempts (or too old) with no recorded outcome: marked failed as claim() does,
            -- unless another transaction holds the row (then it is in progress by definition).
            UPDATE task_idempotency t
               SET status = 'failed',
                   error_class = COALESCE(CASE WHEN t.status = 'processing' THEN 'unknown' END, t.error_class, 'unknown'),
                   error_message = CASE WHEN t.status = 'processing'
                                        THEN 'lease expired with no outcome recorded; '
                                        ELSE COALESCE(t.error_message || '; ', '') END
                                   || CASE WHEN v_aged THEN 'maximum age reached' ELSE 'attempts exhausted' END,
                   owner_token = NULL, lease_until = NULL, next_attempt_at = NULL, updated_at = now()
             WHERE t.idempotency_key = p_key
               AND t.idempotency_key = (SELECT k.idempotency_key FROM task_idempotency k
                                         WHERE k.idempotency_key = p_key AND k.status = r.status
                                           AND k.attempts = r.attempts FOR UPDATE SKIP LOCKED)
            RETURNING t.* INTO r;
            IF NOT FOUND THEN
                RETURN QUERY SELECT 'in_progress'::text, 'locked'::text, NULL::uuid, 0, p_max_attempts,
                                    NULL::timestamptz, 50::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
                RETURN;
            END IF;
            RETURN QUERY SELECT 'failed'::text, 'exhausted'::text, NULL::uuid, r.attempts, r.max_attempts,
                                NULL::timestamptz, 0::bigint, NULL::jsonb, r.request_hash, r.error_class,
                                r.error_message;
            RETURN;
        END IF;
    END IF;

    -- claim()'s pause check (idem_pause_may_cover, then idem_pause_check, a ramp honoured; it only looks: the record counts an admitted key), where the key would be
    -- recorded: a new key or a takeover.
    IF idem_pause_may_cover(p_key) THEN
        SELECT * INTO v_pause FROM idem_pause_check(p_key, false);
        IF FOUND THEN
            RETURN QUERY SELECT 'paused'::text, v_pause.tenant || ':' || v_pause.operation, NULL::uuid,
                                COALESCE(r.attempts, 0), COALESCE(r.max_attempts, p_max_attempts), v_pause.until,
                                idem_pause_retry_after_ms(v_pause.until), NULL::jsonb, r.request_hash, NULL::text,
                                v_pause.reason;
            RETURN;
        END IF;
    END IF;
    IF r.idempotency_key IS NULL THEN
        RETURN QUERY SELECT 'run'::text, 'new'::text, NULL::uuid, 0, p_max_attempts, NULL::timestamptz, 0::bigint,
                            NULL::jsonb, NULL::text, NULL::text, NULL::text;
    ELSE
        RETURN QUERY SELECT 'run'::text, CASE WHEN r.status = 'processing' THEN 'lease_expired' ELSE 'retry_due' END,
                            NULL::uuid, r.attempts, r.max_attempts, NULL::timestamptz, 0::bigint, NULL::jsonb,
                            r.request_hash, r.error_class, r.error_message;
    END IF;
END
$peek_local$;

REVOKE ALL ON FUNCTION idem_peek_local(text, text, integer, bigint) FROM PUBLIC;
