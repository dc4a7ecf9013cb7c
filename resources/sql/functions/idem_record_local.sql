-- idem_record_local (issue 45 item 1, record at commit): one transaction for local effects in
-- one Idem statement. The caller's READ COMMITTED transaction runs the task's writes first, then
-- this, then COMMIT. It inserts the key's row already succeeded with p_result (one row write,
-- no claim before the task, no lease, no token). decision [detail]:
-- - recorded [new]: the key was new; recorded [retry_due, lease_expired]: a retryable failure
--   whose backoff is due, or a two-step executor's expired lease, taken over and marked
--   succeeded in the same statement (attempts + 1). The caller commits; until then nobody sees it.
-- - every other answer is claim()'s, from the stored row: replay [succeeded] (result_json),
--   conflict [status], failed [failed, exhausted], in_progress [lease_live], retry_later [class],
--   paused [tenant:operation]. Nothing is written for them (not even the conflict's record or an
--   exhaustion: idem_peek_local writes those, on its own, after the caller rolled back), and the
--   caller rolls its transaction back: its writes must not commit without the record.
-- A transaction that inserted the key and has not committed yet (another run of the same key) is
-- waited for by the INSERT ... ON CONFLICT, and a row another transaction holds locked by the
-- row lock; both bounded by lock_timeout = p_wait_ms for this statement's duration (the SET
-- clause puts the caller's value back). When the wait runs out the statement fails with SQLSTATE
-- 55P03 (lock_not_available) and the caller's transaction is aborted: the caller answers
-- in_progress [wait_timeout]. The pause check is claim()'s (idem_pause_may_cover,
-- idem_pause_named, idem_pause_covering), where the key would be recorded: a new key, a takeover;
-- made after the statement's first lock on task_idempotency, so that a pause committed while the
-- task ran (after the caller's transaction began) is seen: a new key's paused answer undoes its
-- insert (the caller rolls back).
-- Latency (v17): attempt_started_at is the transaction's start (the task ran after it),
-- updated_at the record's time.
CREATE OR REPLACE FUNCTION idem_record_local(p_key text, p_request_hash text, p_result jsonb, p_max_attempts integer,
                      p_max_age_ms bigint, p_wait_ms integer, p_max_result_bytes integer)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '1s'
AS $record_local$
DECLARE
    r task_idempotency%ROWTYPE;
    v_pause idem_pauses%ROWTYPE;
    v_detail text;
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
    IF p_wait_ms IS NULL OR p_wait_ms NOT BETWEEN 1 AND 60000 THEN
        RAISE EXCEPTION 'wait must be 1 to 60000 ms, not %', p_wait_ms USING ERRCODE = 'ID003';
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
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'idem_record_local runs at READ COMMITTED, not %: a snapshot taken before a pause would not see it',
            upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'ID003',
                  HINT = 'Run the task in a READ COMMITTED transaction (the default isolation level).';
    END IF;
    PERFORM pg_catalog.set_config('lock_timeout', p_wait_ms::text, true);

    FOR i IN 1..3 LOOP
        INSERT INTO task_idempotency AS t (idempotency_key, request_hash, status, result_json, attempts, max_attempts,
                                           created_at, updated_at, attempt_started_at)
        VALUES (p_key, p_request_hash, 'succeeded', p_result, 1, p_max_attempts, now(), clock_timestamp(), now())
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING t.* INTO r;
        IF FOUND THEN
            -- The pause check where the key is recorded as new (claim()'s, not copied: the same
            -- three functions in the same order). After the insert, not before: the insert's lock
            -- on the table makes this backend read the catalog's news, and the caller's transaction
            -- may be older than a pause committed while the task ran (idem_pause_may_cover asks
            -- the catalog). A paused answer rolls the insert back with the caller's writes.
            IF idem_pause_may_cover(p_key) AND idem_pause_named(split_part(p_key, ':', 1), split_part(p_key, ':', 2)) THEN
                SELECT * INTO v_pause FROM idem_pause_covering(split_part(p_key, ':', 1), split_part(p_key, ':', 2));
                IF FOUND THEN
                    RETURN QUERY SELECT 'paused'::text, v_pause.tenant || ':' || v_pause.operation, NULL::uuid, 0,
                                        p_max_attempts, v_pause.until, idem_pause_retry_after_ms(v_pause.until),
                                        NULL::jsonb, NULL::text, NULL::text, v_pause.reason;
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY SELECT 'recorded'::text, 'new'::text, NULL::uuid, 1, p_max_attempts, NULL::timestamptz,
                                0::bigint, NULL::jsonb, p_request_hash, NULL::text, NULL::text;
            RETURN;
        END IF;
        -- The key exists (the insert waited for its inserter's commit): decide from what is stored.
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
        EXIT WHEN FOUND;
        -- Inserted by a transaction that rolled back (or removed since): try the insert again.
    END LOOP;
    IF r.idempotency_key IS NULL THEN
        RETURN QUERY SELECT 'in_progress'::text, 'contended'::text, NULL::uuid, 0, p_max_attempts,
                            NULL::timestamptz, 50::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;

    FOR i IN 1..2 LOOP
        IF r.request_hash <> p_request_hash THEN
            RETURN QUERY SELECT 'conflict'::text, r.status, NULL::uuid, r.attempts, r.max_attempts,
                                NULL::timestamptz, 0::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
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
        -- A takeover candidate: lock it, waiting (bounded) for its holder (an executor completing,
        -- another run taking it over), and decide again from the newest version.
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
        IF NOT FOUND THEN -- removed meanwhile (an operator's purge): ask again
            RETURN QUERY SELECT 'in_progress'::text, 'contended'::text, NULL::uuid, 0, p_max_attempts,
                                NULL::timestamptz, 50::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
            RETURN;
        END IF;
    END LOOP;

    IF r.attempts >= r.max_attempts
       OR (p_max_age_ms IS NOT NULL AND r.created_at + p_max_age_ms * interval '1 millisecond' <= now()) THEN
        -- claim() would mark it failed; idem_peek_local does, after the caller's rollback.
        RETURN QUERY SELECT 'failed'::text, 'exhausted'::text, NULL::uuid, r.attempts, r.max_attempts,
                            NULL::timestamptz, 0::bigint, NULL::jsonb, r.request_hash, r.error_class, r.error_message;
        RETURN;
    END IF;
    IF idem_pause_may_cover(p_key) AND idem_pause_named(split_part(p_key, ':', 1), split_part(p_key, ':', 2)) THEN
        SELECT * INTO v_pause FROM idem_pause_covering(split_part(p_key, ':', 1), split_part(p_key, ':', 2));
        IF FOUND THEN
            RETURN QUERY SELECT 'paused'::text, v_pause.tenant || ':' || v_pause.operation, NULL::uuid,
                                r.attempts, r.max_attempts, v_pause.until, idem_pause_retry_after_ms(v_pause.until),
                                NULL::jsonb, r.request_hash, NULL::text, v_pause.reason;
            RETURN;
        END IF;
    END IF;
    v_detail := CASE WHEN r.status = 'processing' THEN 'lease_expired' ELSE 'retry_due' END;
    UPDATE task_idempotency t
       SET status = 'succeeded', result_json = p_result, owner_token = NULL, lease_until = NULL,
           next_attempt_at = NULL, attempts = t.attempts + 1, updated_at = clock_timestamp(),
           attempt_started_at = now()
     WHERE t.idempotency_key = p_key
    RETURNING t.* INTO STRICT r;
    RETURN QUERY SELECT 'recorded'::text, v_detail, NULL::uuid, r.attempts, r.max_attempts, NULL::timestamptz,
                        0::bigint, NULL::jsonb, r.request_hash, r.error_class, r.error_message;
END
$record_local$;

REVOKE ALL ON FUNCTION idem_record_local(text, text, jsonb, integer, bigint, integer, integer) FROM PUBLIC;
