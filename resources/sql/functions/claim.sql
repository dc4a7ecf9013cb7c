-- claim (schema v2, changed in v5, v6, v13, v15, v16, v17, v18, v24, v31, v33; the history is in git log).
-- The first step of every attempt, one round trip: takes key p_key for token p_token, or answers
-- from the stored row. decision [detail]: acquired [new]; reacquired [lease_expired, retry_due]
-- (a new token, attempts + 1); replay [succeeded] (the stored result); in_progress [lease_live,
-- locked] and retry_later [class] (ask again after retry_after_ms); conflict [status] (another
-- request digest used the key: nothing changes and request_hash is NULL); failed [failed,
-- exhausted]; paused [tenant:operation of the pause] (v15: a pause in idem_pauses covers the key,
-- which would otherwise be acquired or taken over; nothing changes, no attempt is counted;
-- error_message is the pause's reason, lease_until its end (NULL: until resumed), and
-- retry_after_ms at most 5 s and never past that end; v33: a ramping pause turns away only the
-- keys outside its step's fraction, idem_pause_check). It reads the row first, without a lock,
-- and inserts only when there is none. An acquisition or takeover records the attempt's start in
-- attempt_started_at (v17), from which the run time of the attempt is measured, and the lease
-- it asked for in lease_ms (v31: what the lease advisor compares the run times with).
-- It runs at READ COMMITTED only (v24): under REPEATABLE READ or SERIALIZABLE it would read the
-- pauses with a snapshot as old as its transaction, and acquire a key that a pause committed
-- since then covers; such a claim is refused (ID003) before anything is read.
-- The table of decisions and what a caller does: docs/workers-guide.md; the SQLSTATEs (ID001
-- lost ownership, ID002 no record, ID003 invalid argument): 0002_protocol.sql's header.
CREATE OR REPLACE FUNCTION claim(p_key text, p_request_hash text, p_token uuid, p_lease_ms bigint,
                      p_max_attempts integer DEFAULT 5, p_max_age_ms bigint DEFAULT NULL)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $claim$
DECLARE
    r task_idempotency%ROWTYPE;
    v_expired_by_age boolean;
    v_detail text;
    v_pause idem_pauses%ROWTYPE;
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_request_hash IS NULL OR octet_length(p_request_hash) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'request hash must be 1 to 256 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_request_hash !~ '^[!-~]+$' THEN
        RAISE EXCEPTION 'request hash must be visible ASCII (no spaces)' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL THEN
        RAISE EXCEPTION 'claim needs a token' USING ERRCODE = 'ID003';
    END IF;
    IF p_lease_ms IS NULL OR p_lease_ms NOT BETWEEN 1 AND 86400000 THEN
        RAISE EXCEPTION 'lease must be 1 to 86400000 ms (24 h), not %', p_lease_ms USING ERRCODE = 'ID003';
    END IF;
    IF p_max_attempts IS NULL OR p_max_attempts NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_attempts must be 1 to 1000, not %', p_max_attempts USING ERRCODE = 'ID003';
    END IF;
    IF p_max_age_ms IS NOT NULL AND p_max_age_ms NOT BETWEEN 1 AND 31536000000 THEN
        RAISE EXCEPTION 'max_age must be NULL or 1 to 31536000000 ms (365 days), not %', p_max_age_ms
            USING ERRCODE = 'ID003';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'claim runs at READ COMMITTED, not %: a snapshot taken before a pause would not see it',
            upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'ID003',
                  HINT = 'Claim on its own or in a READ COMMITTED transaction (the default isolation level).';
    END IF;

    -- First without a lock: a succeeded row and a row's digest never change, and a live lease
    -- or a pending backoff is an answer in itself. Only a takeover needs the lock.
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
    IF NOT FOUND THEN
        -- A pause is checked only where the key would be acquired or taken over (here and below):
        -- every other answer comes from the stored row, paused or not. The pause tables are read
        -- only when the catalog says a pause may cover the key (idem_pause_may_cover, v18): while
        -- nothing is paused, or only other operations are, the check is a catalog-cache lookup.
        -- A ramping pause (v33) turns away only the keys outside its step's fraction, inside
        -- idem_pause_check, which counts the keys it admits.
        IF idem_pause_may_cover(p_key) THEN
            SELECT * INTO v_pause FROM idem_pause_check(p_key);
            IF FOUND THEN
                RETURN QUERY SELECT 'paused'::text, v_pause.tenant || ':' || v_pause.operation, NULL::uuid, 0,
                                    p_max_attempts, v_pause.until, idem_pause_retry_after_ms(v_pause.until),
                                    NULL::jsonb, NULL::text, NULL::text, v_pause.reason;
                RETURN;
            END IF;
        END IF;
        INSERT INTO task_idempotency AS t (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, max_attempts, created_at, updated_at, attempt_started_at,
                                           lease_ms)
        VALUES (p_key, p_request_hash, 'processing', p_token, now() + p_lease_ms * interval '1 millisecond',
                1, p_max_attempts, now(), now(), now(), p_lease_ms)
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING t.* INTO r;
        IF FOUND THEN
            RETURN QUERY SELECT 'acquired'::text, 'new'::text, r.owner_token, r.attempts, r.max_attempts,
                                r.lease_until, 0::bigint, NULL::jsonb, r.request_hash, NULL::text, NULL::text;
            RETURN;
        END IF;
        -- Another claimer's insert won (our insert waited for its commit): read what it wrote.
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
        IF NOT FOUND THEN
            -- Inserted by a transaction that then rolled back, between our insert and our read.
            RETURN QUERY SELECT 'in_progress'::text, 'contended'::text, NULL::uuid, 0, p_max_attempts,
                                NULL::timestamptz, 50::bigint, NULL::jsonb, NULL::text, NULL::text, NULL::text;
            RETURN;
        END IF;
    END IF;

    FOR i IN 1..2 LOOP
        IF r.request_hash <> p_request_hash THEN
            -- Remember which key saw a conflicting digest (v5). Only this rare path writes.
            INSERT INTO task_idempotency_conflicts AS c (idempotency_key, first_at, last_at, n, last_digest)
            VALUES (p_key, now(), now(), 1, p_request_hash)
            ON CONFLICT (idempotency_key) DO UPDATE
               SET last_at = now(), n = c.n + 1, last_digest = EXCLUDED.last_digest;
            -- v13: not the stored digest, which a claim with it would turn into the stored result
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

    IF idem_pause_may_cover(p_key) THEN
        SELECT * INTO v_pause FROM idem_pause_check(p_key);
        IF FOUND THEN
            RETURN QUERY SELECT 'paused'::text, v_pause.tenant || ':' || v_pause.operation, NULL::uuid,
                                r.attempts, r.max_attempts, v_pause.until, idem_pause_retry_after_ms(v_pause.until),
                                NULL::jsonb, r.request_hash, NULL::text, v_pause.reason;
            RETURN;
        END IF;
    END IF;

    v_detail := CASE WHEN r.status = 'processing' THEN 'lease_expired' ELSE 'retry_due' END;
    UPDATE task_idempotency t
       SET status = 'processing', owner_token = p_token,
           lease_until = now() + p_lease_ms * interval '1 millisecond',
           attempts = t.attempts + 1, next_attempt_at = NULL, updated_at = now(), attempt_started_at = now(),
           lease_ms = p_lease_ms
     WHERE t.idempotency_key = p_key
    RETURNING t.* INTO STRICT r;
    RETURN QUERY SELECT 'reacquired'::text, v_detail, r.owner_token, r.attempts, r.max_attempts, r.lease_until, 0::bigint, NULL::jsonb,
                        r.request_hash, r.error_class, r.error_message;
END
$claim$;

REVOKE ALL ON FUNCTION claim(text, text, uuid, bigint, integer, bigint) FROM PUBLIC;
