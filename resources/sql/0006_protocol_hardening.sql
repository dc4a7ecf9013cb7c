-- Idem schema v6: the protocol hardened (issue 12).
--
-- 1. A NULL token is refused and "no owner" never passes for "this owner". After idem_release a
--    row is processing with owner_token NULL, and v2's `owner_token IS DISTINCT FROM p_token` is
--    false for NULL and NULL: a client that sent on the NULL token of a claim it had not won could
--    fence, write its business row and fail() the row into a retry, and the next worker paid again.
-- 2. Every argument is checked, before any arithmetic on it, against these bounds; anything
--    outside raises ID003 and changes nothing (2^63-1 ms used to raise 22008, 10^15 ms passed):
--      key               1 .. 1024 bytes
--      request_hash      1 .. 256 bytes of visible ASCII (0x21 .. 0x7e); a v1 digest is 67
--      token             not NULL
--      lease_ms          1 .. 86 400 000 (24 h), claim and heartbeat
--      max_attempts      1 .. 1000
--      max_age_ms        NULL (no limit) or 1 .. 31 536 000 000 (365 days), claim and fail
--      class             retryable | permanent | unknown
--      message           not NULL; stored cut to its first 8192 characters, as in v2
--      retry_delay_ms    0 .. 604 800 000 (7 days)
--      result            not NULL (the JSON value null is a result)
--      max_result_bytes  1 .. 67 108 864 (64 MiB)
--    core/taskstore.cpp refuses the same values with std::invalid_argument before any I/O.
-- 3. The protocol functions are SECURITY DEFINER. roles.sql leaves idem_worker no privilege on
--    any Idem table (it may read idem_schema_version), so these functions, whose checks hold the
--    state machine, are a worker's only way in: it cannot put a succeeded row back, forge one, or
--    lock a table. The path is pinned as in v3: migrate runs this with search_path =
--    <schema>, pg_temp, which SET search_path FROM CURRENT captures (pg_catalog first implicitly,
--    pg_temp last explicitly), so no object of the caller's can stand in for one named here.
--    The functions already had a SET clause, so the call already went through the definer
--    wrapper; only the user switch is new (measured in bench/README.md, "Session 4").
-- 4. claim() reads the row before it tries the insert. A replay (what a retry storm is made of)
--    is then one index lookup instead of a speculative insert that finds the conflict, then the
--    lookup; it takes no ROW EXCLUSIVE table lock either, so replays go on while something holds
--    SHARE (a plain CREATE INDEX). A new key pays one extra index miss. The decisions and the
--    race of two claimers of a new key are unchanged: both miss, both insert, one wins, and the
--    other waits for its commit in the insert, then reads the row as before.
-- 5. add_counters(batch) is the counters flush (core/counters.cpp): the worker has no write on
--    idem_counters any more. Bounded: at most 10000 rows per call; tenant and operation 1 .. 64
--    bytes (core/key.h); a known outcome; n 0 .. 10^14; buckets on the minute, from 31 days before
--    the server's clock to one hour after it.
--
-- Signatures, defaults, results and decisions are those of v2 and v5; 0005's digest-conflict
-- record stays on claim()'s conflict path, now with the whole (bounded) digest.

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

    -- First without a lock: a succeeded row and a row's digest never change, and a live lease
    -- or a pending backoff is an answer in itself. Only a takeover needs the lock.
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
    IF NOT FOUND THEN
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

-- In the caller's business transaction, before its writes: locks the row and checks the token
-- still owns it. Raises ID001 otherwise, which aborts the caller's transaction.
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

-- Records a failed attempt, fenced by the token (classes as in v2). The last 20 failures are
-- kept in errors.
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
                                                            'class', p_class, 'message', v_message)),
           owner_token = NULL, lease_until = NULL, updated_at = now()
     WHERE t.idempotency_key = p_key
    RETURNING t.* INTO r;
    RETURN QUERY SELECT r.status, r.attempts, r.max_attempts, r.next_attempt_at,
                        r.status = 'failed' AND p_class <> 'permanent';
END
$fail$;

-- The counters flush: p_batch is a JSON array of {"m": bucket as Unix seconds, "t": tenant,
-- "o": operation, "w": outcome, "n": count}. Rows of one batch with the same counter are summed;
-- counter rows are written in key order, so two flushers cannot deadlock. Returns the number of
-- counter rows written. Any row out of bounds refuses the whole batch (ID003).
CREATE FUNCTION add_counters(p_batch jsonb)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $add_counters$
DECLARE
    v_bad jsonb;
    v_from numeric := extract(epoch FROM now() - interval '31 days');
    v_to numeric := extract(epoch FROM now() + interval '1 hour');
    v_rows integer;
BEGIN
    IF p_batch IS NULL OR jsonb_typeof(p_batch) <> 'array' THEN
        RAISE EXCEPTION 'the batch must be a JSON array' USING ERRCODE = 'ID003';
    END IF;
    IF jsonb_array_length(p_batch) > 10000 THEN
        RAISE EXCEPTION 'a batch holds at most 10000 rows, not %', jsonb_array_length(p_batch) USING ERRCODE = 'ID003';
    END IF;
    -- CASE, not AND: a value is cast only once its type is known to be right.
    SELECT e INTO v_bad
      FROM jsonb_array_elements(p_batch) AS e
     WHERE NOT CASE
               WHEN jsonb_typeof(e) <> 'object' OR jsonb_typeof(e -> 'm') IS DISTINCT FROM 'number'
                    OR jsonb_typeof(e -> 'n') IS DISTINCT FROM 'number'
                    OR jsonb_typeof(e -> 't') IS DISTINCT FROM 'string'
                    OR jsonb_typeof(e -> 'o') IS DISTINCT FROM 'string'
                    OR jsonb_typeof(e -> 'w') IS DISTINCT FROM 'string'
                    OR (e ->> 'm') !~ '^[0-9]{1,12}$' OR (e ->> 'n') !~ '^[0-9]{1,15}$' THEN false
               ELSE (e ->> 'm')::numeric BETWEEN v_from AND v_to AND (e ->> 'm')::numeric % 60 = 0
                    AND (e ->> 'n')::numeric <= 100000000000000
                    AND octet_length(e ->> 't') BETWEEN 1 AND 64 AND octet_length(e ->> 'o') BETWEEN 1 AND 64
                    AND (e ->> 'w') IN ('acquired', 'reacquired_lease', 'reacquired_retry', 'replayed', 'in_progress',
                                        'conflict', 'retry_later', 'rejected_failed', 'stale_token', 'succeeded',
                                        'failed_retryable', 'failed_permanent', 'failed_unknown', 'exhausted')
           END
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'counter row out of bounds: %', left(v_bad::text, 300) USING ERRCODE = 'ID003';
    END IF;
    INSERT INTO idem_counters AS c (bucket, tenant, operation, outcome, n)
    SELECT to_timestamp(r.m), r.t, r.o, r.w, sum(r.n)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     GROUP BY 1, 2, 3, 4
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = c.n + EXCLUDED.n;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END
$add_counters$;

REVOKE ALL ON FUNCTION add_counters(jsonb) FROM PUBLIC;

-- The table privileges a worker had until v5 go now (roles.sql no longer grants them; it runs
-- after this on every migrate, and also grants EXECUTE on add_counters). A database migrated
-- with --no-roles may have no idem_worker yet: then there is nothing to revoke.
DO $worker$
DECLARE
    s text := current_schema();
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_worker') THEN
        EXECUTE format('REVOKE ALL ON %1$I.task_idempotency, %1$I.idem_counters, %1$I.task_idempotency_conflicts,'
                       ' %1$I.task_idempotency_audit FROM idem_worker', s);
    END IF;
END
$worker$;
