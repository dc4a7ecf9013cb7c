-- Idem schema v13: the lowest roles cannot blind or impersonate the operators (issue #31).
--
-- 1. Counters (add_counters, the roll-up, every reader): a sum never overflows. A flush that
--    claims more in one minute and outcome than idem_counters_policy.max_flush_per_minute (10^7,
--    a worker flushes about a second of its counts) is refused whole, recorded in
--    idem_counters_refused with who sent it (role, application_name, client address, when, what)
--    and shown to operators (idemctl stats, the exporter, the console); nothing of it lands, and
--    honest flushes for the same minutes still do. Stored counts saturate at 10^15 instead of
--    overflowing; the roll-up sums in numeric. A minute after the server's current minute (a
--    worker's clock ahead by up to the hour the bounds allow) is counted in the current minute:
--    no figure counts the future.
-- 2. Every function pins its search_path or names pg_catalog for what it calls: idem_exact_stats
--    and the other inlined SQL functions qualify their operators and functions (a SET clause
--    would stop the inlining the callers' plans rely on), idem_purge_run (a procedure that
--    commits may not carry a SET clause) pins its path at the start of each of its
--    transactions. A planted public.*(integer, interval) no longer runs as the operator.
-- 4. A purge run's liveness is its own backend holding an advisory lock under a random key
--    recorded in its row, checked in pg_locks by pid: nobody can predict the next run's key, a
--    key someone else holds keeps no run alive, and two Idem schemas in one database never share
--    one.
-- 6. The shared exact refresh names who holds it (idem_exact_refresh_holder: pid, role, since),
--    and readers count for themselves when it is held past its due time (operations/stats.cpp).
-- 7. complete() stamps updated_at with clock_timestamp(): retention counts from the completion,
--    not from the start of the business transaction that made it.
-- 9. A reason needs a visible character by a positive list: letters, numbers, punctuation and
--    symbols (General_Category L, N, P, S); a lone combining mark, a format character, private
--    use or an unassigned code point is not one.
-- 10. claim()'s conflict answer no longer carries the stored digest (request_hash NULL): a
--    worker that knows a key cannot learn the digest that replays its result.

-- 7 and 10: v6's complete() and claim() (0006_protocol_hardening.sql), changes marked v13.
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

-- 9: true when the text has no visible character. Visible is a positive list (see
-- scripts/gen-visible-ranges.py, which also writes operations/visibleranges.h for the C++
-- reasonIsBlank): the assigned letters, numbers, punctuation and symbols of Unicode 14, minus
-- the fillers and the braille blank. Still inlined (no SET clause), so its operators are named.
CREATE OR REPLACE FUNCTION audit_reason_blank(p text)
RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT
AS $$
    SELECT NOT p OPERATOR(pg_catalog.~) (E'['
     OPERATOR(pg_catalog.||) E'\\u0021-\\u007E\\u00A1-\\u00AC\\u00AE-\\u02FF\\u0370-\\u0377\\u037A-\\u037F\\u0384-\\u038A\\u038C\\u038E-\\u03A1'
     OPERATOR(pg_catalog.||) E'\\u03A3-\\u0482\\u048A-\\u052F\\u0531-\\u0556\\u0559-\\u058A\\u058D-\\u058F\\u05BE\\u05C0\\u05C3'
     OPERATOR(pg_catalog.||) E'\\u05C6\\u05D0-\\u05EA\\u05EF-\\u05F4\\u0606-\\u060F\\u061B\\u061D-\\u064A\\u0660-\\u066F\\u0671-\\u06D5'
     OPERATOR(pg_catalog.||) E'\\u06DE\\u06E5-\\u06E6\\u06E9\\u06EE-\\u070D\\u0710\\u0712-\\u072F\\u074D-\\u07A5\\u07B1'
     OPERATOR(pg_catalog.||) E'\\u07C0-\\u07EA\\u07F4-\\u07FA\\u07FE-\\u0815\\u081A\\u0824\\u0828\\u0830-\\u083E\\u0840-\\u0858'
     OPERATOR(pg_catalog.||) E'\\u085E\\u0860-\\u086A\\u0870-\\u088E\\u08A0-\\u08C9\\u0904-\\u0939\\u093D\\u0950\\u0958-\\u0961'
     OPERATOR(pg_catalog.||) E'\\u0964-\\u0980\\u0985-\\u098C\\u098F-\\u0990\\u0993-\\u09A8\\u09AA-\\u09B0\\u09B2\\u09B6-\\u09B9\\u09BD'
     OPERATOR(pg_catalog.||) E'\\u09CE\\u09DC-\\u09DD\\u09DF-\\u09E1\\u09E6-\\u09FD\\u0A05-\\u0A0A\\u0A0F-\\u0A10\\u0A13-\\u0A28\\u0A2A-\\u0A30'
     OPERATOR(pg_catalog.||) E'\\u0A32-\\u0A33\\u0A35-\\u0A36\\u0A38-\\u0A39\\u0A59-\\u0A5C\\u0A5E\\u0A66-\\u0A6F\\u0A72-\\u0A74\\u0A76'
     OPERATOR(pg_catalog.||) E'\\u0A85-\\u0A8D\\u0A8F-\\u0A91\\u0A93-\\u0AA8\\u0AAA-\\u0AB0\\u0AB2-\\u0AB3\\u0AB5-\\u0AB9\\u0ABD\\u0AD0'
     OPERATOR(pg_catalog.||) E'\\u0AE0-\\u0AE1\\u0AE6-\\u0AF1\\u0AF9\\u0B05-\\u0B0C\\u0B0F-\\u0B10\\u0B13-\\u0B28\\u0B2A-\\u0B30\\u0B32-\\u0B33'
     OPERATOR(pg_catalog.||) E'\\u0B35-\\u0B39\\u0B3D\\u0B5C-\\u0B5D\\u0B5F-\\u0B61\\u0B66-\\u0B77\\u0B83\\u0B85-\\u0B8A\\u0B8E-\\u0B90'
     OPERATOR(pg_catalog.||) E'\\u0B92-\\u0B95\\u0B99-\\u0B9A\\u0B9C\\u0B9E-\\u0B9F\\u0BA3-\\u0BA4\\u0BA8-\\u0BAA\\u0BAE-\\u0BB9\\u0BD0'
     OPERATOR(pg_catalog.||) E'\\u0BE6-\\u0BFA\\u0C05-\\u0C0C\\u0C0E-\\u0C10\\u0C12-\\u0C28\\u0C2A-\\u0C39\\u0C3D\\u0C58-\\u0C5A\\u0C5D'
     OPERATOR(pg_catalog.||) E'\\u0C60-\\u0C61\\u0C66-\\u0C6F\\u0C77-\\u0C80\\u0C84-\\u0C8C\\u0C8E-\\u0C90\\u0C92-\\u0CA8\\u0CAA-\\u0CB3\\u0CB5-\\u0CB9'
     OPERATOR(pg_catalog.||) E'\\u0CBD\\u0CDD-\\u0CDE\\u0CE0-\\u0CE1\\u0CE6-\\u0CEF\\u0CF1-\\u0CF2\\u0D04-\\u0D0C\\u0D0E-\\u0D10\\u0D12-\\u0D3A'
     OPERATOR(pg_catalog.||) E'\\u0D3D\\u0D4E-\\u0D4F\\u0D54-\\u0D56\\u0D58-\\u0D61\\u0D66-\\u0D7F\\u0D85-\\u0D96\\u0D9A-\\u0DB1\\u0DB3-\\u0DBB'
     OPERATOR(pg_catalog.||) E'\\u0DBD\\u0DC0-\\u0DC6\\u0DE6-\\u0DEF\\u0DF4\\u0E01-\\u0E30\\u0E32-\\u0E33\\u0E3F-\\u0E46\\u0E4F-\\u0E5B'
     OPERATOR(pg_catalog.||) E'\\u0E81-\\u0E82\\u0E84\\u0E86-\\u0E8A\\u0E8C-\\u0EA3\\u0EA5\\u0EA7-\\u0EB0\\u0EB2-\\u0EB3\\u0EBD'
     OPERATOR(pg_catalog.||) E'\\u0EC0-\\u0EC4\\u0EC6\\u0ED0-\\u0ED9\\u0EDC-\\u0EDF\\u0F00-\\u0F17\\u0F1A-\\u0F34\\u0F36\\u0F38'
     OPERATOR(pg_catalog.||) E'\\u0F3A-\\u0F3D\\u0F40-\\u0F47\\u0F49-\\u0F6C\\u0F85\\u0F88-\\u0F8C\\u0FBE-\\u0FC5\\u0FC7-\\u0FCC\\u0FCE-\\u0FDA'
     OPERATOR(pg_catalog.||) E'\\u1000-\\u102A\\u103F-\\u1055\\u105A-\\u105D\\u1061\\u1065-\\u1066\\u106E-\\u1070\\u1075-\\u1081\\u108E'
     OPERATOR(pg_catalog.||) E'\\u1090-\\u1099\\u109E-\\u10C5\\u10C7\\u10CD\\u10D0-\\u115E\\u1161-\\u1248\\u124A-\\u124D\\u1250-\\u1256'
     OPERATOR(pg_catalog.||) E'\\u1258\\u125A-\\u125D\\u1260-\\u1288\\u128A-\\u128D\\u1290-\\u12B0\\u12B2-\\u12B5\\u12B8-\\u12BE\\u12C0'
     OPERATOR(pg_catalog.||) E'\\u12C2-\\u12C5\\u12C8-\\u12D6\\u12D8-\\u1310\\u1312-\\u1315\\u1318-\\u135A\\u1360-\\u137C\\u1380-\\u1399\\u13A0-\\u13F5'
     OPERATOR(pg_catalog.||) E'\\u13F8-\\u13FD\\u1400-\\u167F\\u1681-\\u169C\\u16A0-\\u16F8\\u1700-\\u1711\\u171F-\\u1731\\u1735-\\u1736\\u1740-\\u1751'
     OPERATOR(pg_catalog.||) E'\\u1760-\\u176C\\u176E-\\u1770\\u1780-\\u17B3\\u17D4-\\u17DC\\u17E0-\\u17E9\\u17F0-\\u17F9\\u1800-\\u180A\\u1810-\\u1819'
     OPERATOR(pg_catalog.||) E'\\u1820-\\u1878\\u1880-\\u1884\\u1887-\\u18A8\\u18AA\\u18B0-\\u18F5\\u1900-\\u191E\\u1940\\u1944-\\u196D'
     OPERATOR(pg_catalog.||) E'\\u1970-\\u1974\\u1980-\\u19AB\\u19B0-\\u19C9\\u19D0-\\u19DA\\u19DE-\\u1A16\\u1A1E-\\u1A54\\u1A80-\\u1A89\\u1A90-\\u1A99'
     OPERATOR(pg_catalog.||) E'\\u1AA0-\\u1AAD\\u1B05-\\u1B33\\u1B45-\\u1B4C\\u1B50-\\u1B6A\\u1B74-\\u1B7E\\u1B83-\\u1BA0\\u1BAE-\\u1BE5\\u1BFC-\\u1C23'
     OPERATOR(pg_catalog.||) E'\\u1C3B-\\u1C49\\u1C4D-\\u1C88\\u1C90-\\u1CBA\\u1CBD-\\u1CC7\\u1CD3\\u1CE9-\\u1CEC\\u1CEE-\\u1CF3\\u1CF5-\\u1CF6'
     OPERATOR(pg_catalog.||) E'\\u1CFA\\u1D00-\\u1DBF\\u1E00-\\u1F15\\u1F18-\\u1F1D\\u1F20-\\u1F45\\u1F48-\\u1F4D\\u1F50-\\u1F57\\u1F59'
     OPERATOR(pg_catalog.||) E'\\u1F5B\\u1F5D\\u1F5F-\\u1F7D\\u1F80-\\u1FB4\\u1FB6-\\u1FC4\\u1FC6-\\u1FD3\\u1FD6-\\u1FDB\\u1FDD-\\u1FEF'
     OPERATOR(pg_catalog.||) E'\\u1FF2-\\u1FF4\\u1FF6-\\u1FFE\\u2010-\\u2027\\u2030-\\u205E\\u2070-\\u2071\\u2074-\\u208E\\u2090-\\u209C\\u20A0-\\u20C0'
     OPERATOR(pg_catalog.||) E'\\u2100-\\u218B\\u2190-\\u2426\\u2440-\\u244A\\u2460-\\u27FF\\u2801-\\u2B73\\u2B76-\\u2B95\\u2B97-\\u2CEE\\u2CF2-\\u2CF3'
     OPERATOR(pg_catalog.||) E'\\u2CF9-\\u2D25\\u2D27\\u2D2D\\u2D30-\\u2D67\\u2D6F-\\u2D70\\u2D80-\\u2D96\\u2DA0-\\u2DA6\\u2DA8-\\u2DAE'
     OPERATOR(pg_catalog.||) E'\\u2DB0-\\u2DB6\\u2DB8-\\u2DBE\\u2DC0-\\u2DC6\\u2DC8-\\u2DCE\\u2DD0-\\u2DD6\\u2DD8-\\u2DDE\\u2E00-\\u2E5D\\u2E80-\\u2E99'
     OPERATOR(pg_catalog.||) E'\\u2E9B-\\u2EF3\\u2F00-\\u2FD5\\u2FF0-\\u2FFB\\u3001-\\u3029\\u3030-\\u303F\\u3041-\\u3096\\u309B-\\u30FF\\u3105-\\u312F'
     OPERATOR(pg_catalog.||) E'\\u3131-\\u3163\\u3165-\\u318E\\u3190-\\u31E3\\u31F0-\\u321E\\u3220-\\uA48C\\uA490-\\uA4C6\\uA4D0-\\uA62B\\uA640-\\uA66E'
     OPERATOR(pg_catalog.||) E'\\uA673\\uA67E-\\uA69D\\uA6A0-\\uA6EF\\uA6F2-\\uA6F7\\uA700-\\uA7CA\\uA7D0-\\uA7D1\\uA7D3\\uA7D5-\\uA7D9'
     OPERATOR(pg_catalog.||) E'\\uA7F2-\\uA801\\uA803-\\uA805\\uA807-\\uA80A\\uA80C-\\uA822\\uA828-\\uA82B\\uA830-\\uA839\\uA840-\\uA877\\uA882-\\uA8B3'
     OPERATOR(pg_catalog.||) E'\\uA8CE-\\uA8D9\\uA8F2-\\uA8FE\\uA900-\\uA925\\uA92E-\\uA946\\uA95F-\\uA97C\\uA984-\\uA9B2\\uA9C1-\\uA9CD\\uA9CF-\\uA9D9'
     OPERATOR(pg_catalog.||) E'\\uA9DE-\\uA9E4\\uA9E6-\\uA9FE\\uAA00-\\uAA28\\uAA40-\\uAA42\\uAA44-\\uAA4B\\uAA50-\\uAA59\\uAA5C-\\uAA7A\\uAA7E-\\uAAAF'
     OPERATOR(pg_catalog.||) E'\\uAAB1\\uAAB5-\\uAAB6\\uAAB9-\\uAABD\\uAAC0\\uAAC2\\uAADB-\\uAAEA\\uAAF0-\\uAAF4\\uAB01-\\uAB06'
     OPERATOR(pg_catalog.||) E'\\uAB09-\\uAB0E\\uAB11-\\uAB16\\uAB20-\\uAB26\\uAB28-\\uAB2E\\uAB30-\\uAB6B\\uAB70-\\uABE2\\uABEB\\uABF0-\\uABF9'
     OPERATOR(pg_catalog.||) E'\\uAC00-\\uD7A3\\uD7B0-\\uD7C6\\uD7CB-\\uD7FB\\uF900-\\uFA6D\\uFA70-\\uFAD9\\uFB00-\\uFB06\\uFB13-\\uFB17\\uFB1D'
     OPERATOR(pg_catalog.||) E'\\uFB1F-\\uFB36\\uFB38-\\uFB3C\\uFB3E\\uFB40-\\uFB41\\uFB43-\\uFB44\\uFB46-\\uFBC2\\uFBD3-\\uFD8F\\uFD92-\\uFDC7'
     OPERATOR(pg_catalog.||) E'\\uFDCF\\uFDF0-\\uFDFF\\uFE10-\\uFE19\\uFE30-\\uFE52\\uFE54-\\uFE66\\uFE68-\\uFE6B\\uFE70-\\uFE74\\uFE76-\\uFEFC'
     OPERATOR(pg_catalog.||) E'\\uFF01-\\uFF9F\\uFFA1-\\uFFBE\\uFFC2-\\uFFC7\\uFFCA-\\uFFCF\\uFFD2-\\uFFD7\\uFFDA-\\uFFDC\\uFFE0-\\uFFE6\\uFFE8-\\uFFEE'
     OPERATOR(pg_catalog.||) E'\\uFFFC-\\uFFFD\\U00010000-\\U0001000B\\U0001000D-\\U00010026\\U00010028-\\U0001003A\\U0001003C-\\U0001003D\\U0001003F-\\U0001004D\\U00010050-\\U0001005D\\U00010080-\\U000100FA'
     OPERATOR(pg_catalog.||) E'\\U00010100-\\U00010102\\U00010107-\\U00010133\\U00010137-\\U0001018E\\U00010190-\\U0001019C\\U000101A0\\U000101D0-\\U000101FC\\U00010280-\\U0001029C\\U000102A0-\\U000102D0'
     OPERATOR(pg_catalog.||) E'\\U000102E1-\\U000102FB\\U00010300-\\U00010323\\U0001032D-\\U0001034A\\U00010350-\\U00010375\\U00010380-\\U0001039D\\U0001039F-\\U000103C3\\U000103C8-\\U000103D5\\U00010400-\\U0001049D'
     OPERATOR(pg_catalog.||) E'\\U000104A0-\\U000104A9\\U000104B0-\\U000104D3\\U000104D8-\\U000104FB\\U00010500-\\U00010527\\U00010530-\\U00010563\\U0001056F-\\U0001057A\\U0001057C-\\U0001058A\\U0001058C-\\U00010592'
     OPERATOR(pg_catalog.||) E'\\U00010594-\\U00010595\\U00010597-\\U000105A1\\U000105A3-\\U000105B1\\U000105B3-\\U000105B9\\U000105BB-\\U000105BC\\U00010600-\\U00010736\\U00010740-\\U00010755\\U00010760-\\U00010767'
     OPERATOR(pg_catalog.||) E'\\U00010780-\\U00010785\\U00010787-\\U000107B0\\U000107B2-\\U000107BA\\U00010800-\\U00010805\\U00010808\\U0001080A-\\U00010835\\U00010837-\\U00010838\\U0001083C'
     OPERATOR(pg_catalog.||) E'\\U0001083F-\\U00010855\\U00010857-\\U0001089E\\U000108A7-\\U000108AF\\U000108E0-\\U000108F2\\U000108F4-\\U000108F5\\U000108FB-\\U0001091B\\U0001091F-\\U00010939\\U0001093F'
     OPERATOR(pg_catalog.||) E'\\U00010980-\\U000109B7\\U000109BC-\\U000109CF\\U000109D2-\\U00010A00\\U00010A10-\\U00010A13\\U00010A15-\\U00010A17\\U00010A19-\\U00010A35\\U00010A40-\\U00010A48\\U00010A50-\\U00010A58'
     OPERATOR(pg_catalog.||) E'\\U00010A60-\\U00010A9F\\U00010AC0-\\U00010AE4\\U00010AEB-\\U00010AF6\\U00010B00-\\U00010B35\\U00010B39-\\U00010B55\\U00010B58-\\U00010B72\\U00010B78-\\U00010B91\\U00010B99-\\U00010B9C'
     OPERATOR(pg_catalog.||) E'\\U00010BA9-\\U00010BAF\\U00010C00-\\U00010C48\\U00010C80-\\U00010CB2\\U00010CC0-\\U00010CF2\\U00010CFA-\\U00010D23\\U00010D30-\\U00010D39\\U00010E60-\\U00010E7E\\U00010E80-\\U00010EA9'
     OPERATOR(pg_catalog.||) E'\\U00010EAD\\U00010EB0-\\U00010EB1\\U00010F00-\\U00010F27\\U00010F30-\\U00010F45\\U00010F51-\\U00010F59\\U00010F70-\\U00010F81\\U00010F86-\\U00010F89\\U00010FB0-\\U00010FCB'
     OPERATOR(pg_catalog.||) E'\\U00010FE0-\\U00010FF6\\U00011003-\\U00011037\\U00011047-\\U0001104D\\U00011052-\\U0001106F\\U00011071-\\U00011072\\U00011075\\U00011083-\\U000110AF\\U000110BB-\\U000110BC'
     OPERATOR(pg_catalog.||) E'\\U000110BE-\\U000110C1\\U000110D0-\\U000110E8\\U000110F0-\\U000110F9\\U00011103-\\U00011126\\U00011136-\\U00011144\\U00011147\\U00011150-\\U00011172\\U00011174-\\U00011176'
     OPERATOR(pg_catalog.||) E'\\U00011183-\\U000111B2\\U000111C1-\\U000111C8\\U000111CD\\U000111D0-\\U000111DF\\U000111E1-\\U000111F4\\U00011200-\\U00011211\\U00011213-\\U0001122B\\U00011238-\\U0001123D'
     OPERATOR(pg_catalog.||) E'\\U00011280-\\U00011286\\U00011288\\U0001128A-\\U0001128D\\U0001128F-\\U0001129D\\U0001129F-\\U000112A9\\U000112B0-\\U000112DE\\U000112F0-\\U000112F9\\U00011305-\\U0001130C'
     OPERATOR(pg_catalog.||) E'\\U0001130F-\\U00011310\\U00011313-\\U00011328\\U0001132A-\\U00011330\\U00011332-\\U00011333\\U00011335-\\U00011339\\U0001133D\\U00011350\\U0001135D-\\U00011361'
     OPERATOR(pg_catalog.||) E'\\U00011400-\\U00011434\\U00011447-\\U0001145B\\U0001145D\\U0001145F-\\U00011461\\U00011480-\\U000114AF\\U000114C4-\\U000114C7\\U000114D0-\\U000114D9\\U00011580-\\U000115AE'
     OPERATOR(pg_catalog.||) E'\\U000115C1-\\U000115DB\\U00011600-\\U0001162F\\U00011641-\\U00011644\\U00011650-\\U00011659\\U00011660-\\U0001166C\\U00011680-\\U000116AA\\U000116B8-\\U000116B9\\U000116C0-\\U000116C9'
     OPERATOR(pg_catalog.||) E'\\U00011700-\\U0001171A\\U00011730-\\U00011746\\U00011800-\\U0001182B\\U0001183B\\U000118A0-\\U000118F2\\U000118FF-\\U00011906\\U00011909\\U0001190C-\\U00011913'
     OPERATOR(pg_catalog.||) E'\\U00011915-\\U00011916\\U00011918-\\U0001192F\\U0001193F\\U00011941\\U00011944-\\U00011946\\U00011950-\\U00011959\\U000119A0-\\U000119A7\\U000119AA-\\U000119D0'
     OPERATOR(pg_catalog.||) E'\\U000119E1-\\U000119E3\\U00011A00\\U00011A0B-\\U00011A32\\U00011A3A\\U00011A3F-\\U00011A46\\U00011A50\\U00011A5C-\\U00011A89\\U00011A9A-\\U00011AA2'
     OPERATOR(pg_catalog.||) E'\\U00011AB0-\\U00011AF8\\U00011C00-\\U00011C08\\U00011C0A-\\U00011C2E\\U00011C40-\\U00011C45\\U00011C50-\\U00011C6C\\U00011C70-\\U00011C8F\\U00011D00-\\U00011D06\\U00011D08-\\U00011D09'
     OPERATOR(pg_catalog.||) E'\\U00011D0B-\\U00011D30\\U00011D46\\U00011D50-\\U00011D59\\U00011D60-\\U00011D65\\U00011D67-\\U00011D68\\U00011D6A-\\U00011D89\\U00011D98\\U00011DA0-\\U00011DA9'
     OPERATOR(pg_catalog.||) E'\\U00011EE0-\\U00011EF2\\U00011EF7-\\U00011EF8\\U00011FB0\\U00011FC0-\\U00011FF1\\U00011FFF-\\U00012399\\U00012400-\\U0001246E\\U00012470-\\U00012474\\U00012480-\\U00012543'
     OPERATOR(pg_catalog.||) E'\\U00012F90-\\U00012FF2\\U00013000-\\U0001342E\\U00014400-\\U00014646\\U00016800-\\U00016A38\\U00016A40-\\U00016A5E\\U00016A60-\\U00016A69\\U00016A6E-\\U00016ABE\\U00016AC0-\\U00016AC9'
     OPERATOR(pg_catalog.||) E'\\U00016AD0-\\U00016AED\\U00016AF5\\U00016B00-\\U00016B2F\\U00016B37-\\U00016B45\\U00016B50-\\U00016B59\\U00016B5B-\\U00016B61\\U00016B63-\\U00016B77\\U00016B7D-\\U00016B8F'
     OPERATOR(pg_catalog.||) E'\\U00016E40-\\U00016E9A\\U00016F00-\\U00016F4A\\U00016F50\\U00016F93-\\U00016F9F\\U00016FE0-\\U00016FE3\\U00017000-\\U000187F7\\U00018800-\\U00018CD5\\U00018D00-\\U00018D08'
     OPERATOR(pg_catalog.||) E'\\U0001AFF0-\\U0001AFF3\\U0001AFF5-\\U0001AFFB\\U0001AFFD-\\U0001AFFE\\U0001B000-\\U0001B122\\U0001B150-\\U0001B152\\U0001B164-\\U0001B167\\U0001B170-\\U0001B2FB\\U0001BC00-\\U0001BC6A'
     OPERATOR(pg_catalog.||) E'\\U0001BC70-\\U0001BC7C\\U0001BC80-\\U0001BC88\\U0001BC90-\\U0001BC99\\U0001BC9C\\U0001BC9F\\U0001CF50-\\U0001CFC3\\U0001D000-\\U0001D0F5\\U0001D100-\\U0001D126'
     OPERATOR(pg_catalog.||) E'\\U0001D129-\\U0001D164\\U0001D16A-\\U0001D16C\\U0001D183-\\U0001D184\\U0001D18C-\\U0001D1A9\\U0001D1AE-\\U0001D1EA\\U0001D200-\\U0001D241\\U0001D245\\U0001D2E0-\\U0001D2F3'
     OPERATOR(pg_catalog.||) E'\\U0001D300-\\U0001D356\\U0001D360-\\U0001D378\\U0001D400-\\U0001D454\\U0001D456-\\U0001D49C\\U0001D49E-\\U0001D49F\\U0001D4A2\\U0001D4A5-\\U0001D4A6\\U0001D4A9-\\U0001D4AC'
     OPERATOR(pg_catalog.||) E'\\U0001D4AE-\\U0001D4B9\\U0001D4BB\\U0001D4BD-\\U0001D4C3\\U0001D4C5-\\U0001D505\\U0001D507-\\U0001D50A\\U0001D50D-\\U0001D514\\U0001D516-\\U0001D51C\\U0001D51E-\\U0001D539'
     OPERATOR(pg_catalog.||) E'\\U0001D53B-\\U0001D53E\\U0001D540-\\U0001D544\\U0001D546\\U0001D54A-\\U0001D550\\U0001D552-\\U0001D6A5\\U0001D6A8-\\U0001D7CB\\U0001D7CE-\\U0001D9FF\\U0001DA37-\\U0001DA3A'
     OPERATOR(pg_catalog.||) E'\\U0001DA6D-\\U0001DA74\\U0001DA76-\\U0001DA83\\U0001DA85-\\U0001DA8B\\U0001DF00-\\U0001DF1E\\U0001E100-\\U0001E12C\\U0001E137-\\U0001E13D\\U0001E140-\\U0001E149\\U0001E14E-\\U0001E14F'
     OPERATOR(pg_catalog.||) E'\\U0001E290-\\U0001E2AD\\U0001E2C0-\\U0001E2EB\\U0001E2F0-\\U0001E2F9\\U0001E2FF\\U0001E7E0-\\U0001E7E6\\U0001E7E8-\\U0001E7EB\\U0001E7ED-\\U0001E7EE\\U0001E7F0-\\U0001E7FE'
     OPERATOR(pg_catalog.||) E'\\U0001E800-\\U0001E8C4\\U0001E8C7-\\U0001E8CF\\U0001E900-\\U0001E943\\U0001E94B\\U0001E950-\\U0001E959\\U0001E95E-\\U0001E95F\\U0001EC71-\\U0001ECB4\\U0001ED01-\\U0001ED3D'
     OPERATOR(pg_catalog.||) E'\\U0001EE00-\\U0001EE03\\U0001EE05-\\U0001EE1F\\U0001EE21-\\U0001EE22\\U0001EE24\\U0001EE27\\U0001EE29-\\U0001EE32\\U0001EE34-\\U0001EE37\\U0001EE39'
     OPERATOR(pg_catalog.||) E'\\U0001EE3B\\U0001EE42\\U0001EE47\\U0001EE49\\U0001EE4B\\U0001EE4D-\\U0001EE4F\\U0001EE51-\\U0001EE52\\U0001EE54'
     OPERATOR(pg_catalog.||) E'\\U0001EE57\\U0001EE59\\U0001EE5B\\U0001EE5D\\U0001EE5F\\U0001EE61-\\U0001EE62\\U0001EE64\\U0001EE67-\\U0001EE6A'
     OPERATOR(pg_catalog.||) E'\\U0001EE6C-\\U0001EE72\\U0001EE74-\\U0001EE77\\U0001EE79-\\U0001EE7C\\U0001EE7E\\U0001EE80-\\U0001EE89\\U0001EE8B-\\U0001EE9B\\U0001EEA1-\\U0001EEA3\\U0001EEA5-\\U0001EEA9'
     OPERATOR(pg_catalog.||) E'\\U0001EEAB-\\U0001EEBB\\U0001EEF0-\\U0001EEF1\\U0001F000-\\U0001F02B\\U0001F030-\\U0001F093\\U0001F0A0-\\U0001F0AE\\U0001F0B1-\\U0001F0BF\\U0001F0C1-\\U0001F0CF\\U0001F0D1-\\U0001F0F5'
     OPERATOR(pg_catalog.||) E'\\U0001F100-\\U0001F1AD\\U0001F1E6-\\U0001F202\\U0001F210-\\U0001F23B\\U0001F240-\\U0001F248\\U0001F250-\\U0001F251\\U0001F260-\\U0001F265\\U0001F300-\\U0001F6D7\\U0001F6DD-\\U0001F6EC'
     OPERATOR(pg_catalog.||) E'\\U0001F6F0-\\U0001F6FC\\U0001F700-\\U0001F773\\U0001F780-\\U0001F7D8\\U0001F7E0-\\U0001F7EB\\U0001F7F0\\U0001F800-\\U0001F80B\\U0001F810-\\U0001F847\\U0001F850-\\U0001F859'
     OPERATOR(pg_catalog.||) E'\\U0001F860-\\U0001F887\\U0001F890-\\U0001F8AD\\U0001F8B0-\\U0001F8B1\\U0001F900-\\U0001FA53\\U0001FA60-\\U0001FA6D\\U0001FA70-\\U0001FA74\\U0001FA78-\\U0001FA7C\\U0001FA80-\\U0001FA86'
     OPERATOR(pg_catalog.||) E'\\U0001FA90-\\U0001FAAC\\U0001FAB0-\\U0001FABA\\U0001FAC0-\\U0001FAC5\\U0001FAD0-\\U0001FAD9\\U0001FAE0-\\U0001FAE7\\U0001FAF0-\\U0001FAF6\\U0001FB00-\\U0001FB92\\U0001FB94-\\U0001FBCA'
     OPERATOR(pg_catalog.||) E'\\U0001FBF0-\\U0001FBF9\\U00020000-\\U0002A6DF\\U0002A700-\\U0002B738\\U0002B740-\\U0002B81D\\U0002B820-\\U0002CEA1\\U0002CEB0-\\U0002EBE0\\U0002F800-\\U0002FA1D\\U00030000-\\U0003134A'
     OPERATOR(pg_catalog.||) E']')
$$;

-- 2: v11's one-pass idem_exact_stats (0011_exact_one_pass.sql), every function and operator
-- named in pg_catalog: it runs with its caller's search_path (it stays LANGUAGE sql without a
-- SET clause, so it is inlined and a caller's EXPLAIN shows its index-only scan), and a caller's
-- path may hold a schema others can write (public before PostgreSQL 15), where an operator such
-- as *(integer, interval), a closer match than pg_catalog's *(double precision, interval), would
-- run as the caller. Same signature, columns and meaning.
DO $exact_fn$
BEGIN
    EXECUTE format($f$
CREATE OR REPLACE FUNCTION idem_exact_stats(p_tenant text, p_operation text, p_long_after_minutes integer)
RETURNS TABLE (processing bigint, expired_leases bigint, oldest_processing_created_at timestamptz,
               retryable_failed bigint, uncertain bigint, failed_permanent bigint, failed_exhausted bigint,
               long_unfinished bigint, attempts_histogram jsonb)
LANGUAGE sql
STABLE
AS $exact$
    SELECT a.processing, a.expired_leases, a.oldest_processing_created_at, a.retryable_failed, a.uncertain,
           a.failed_permanent, a.failed_exhausted, a.long_unfinished,
           (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array((b.ord OPERATOR(pg_catalog.-) 1::bigint)::int, b.n)
                                                 ORDER BY b.ord), '[]'::jsonb)
              FROM pg_catalog.unnest(a.bins) WITH ORDINALITY AS b(n, ord)
             WHERE b.n OPERATOR(pg_catalog.>) 0::bigint)
      FROM (
        SELECT pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'processing'::text
                                             AND t.lease_until OPERATOR(pg_catalog.>) pg_catalog.now()) AS processing,
               pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'processing'::text
                                             AND (t.lease_until IS NULL
                                                  OR t.lease_until OPERATOR(pg_catalog.<=) pg_catalog.now()))
                   AS expired_leases,
               pg_catalog.min(t.created_at) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'processing'::text)
                   AS oldest_processing_created_at,
               pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'retryable_failed'::text)
                   AS retryable_failed,
               pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'retryable_failed'::text
                                             AND t.error_class OPERATOR(pg_catalog.=) 'unknown'::text) AS uncertain,
               pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'failed'::text
                                             AND t.error_class OPERATOR(pg_catalog.=) 'permanent'::text)
                   AS failed_permanent,
               pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'failed'::text
                                             AND (t.error_class IS NULL
                                                  OR t.error_class OPERATOR(pg_catalog.<>) 'permanent'::text))
                   AS failed_exhausted,
               pg_catalog.count(*) FILTER (WHERE (t.status OPERATOR(pg_catalog.=) 'processing'::text
                                                  OR t.status OPERATOR(pg_catalog.=) 'retryable_failed'::text)
                                             AND t.created_at OPERATOR(pg_catalog.<) (pg_catalog.now()
                                                 OPERATOR(pg_catalog.-) pg_catalog.make_interval(
                                                     mins => least(greatest(p_long_after_minutes, 1), 525600))))
                   AS long_unfinished,
               -- rows by attempts 0, 1, ..., 9 and 10 or more
               ARRAY[pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 0),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 1),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 2),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 3),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 4),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 5),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 6),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 7),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 8),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.=) 9),
                     pg_catalog.count(*) FILTER (WHERE t.attempts OPERATOR(pg_catalog.>=) 10)] AS bins
          FROM %I.task_idempotency t
         WHERE t.status OPERATOR(pg_catalog.<>) 'succeeded'::text
           AND (p_tenant IS NULL
                OR pg_catalog.split_part(t.idempotency_key, ':'::text, 1) OPERATOR(pg_catalog.=) p_tenant)
           AND (p_operation IS NULL
                OR pg_catalog.split_part(t.idempotency_key, ':'::text, 2) OPERATOR(pg_catalog.=) p_operation)
      ) a
$exact$
$f$, current_schema());
END
$exact_fn$;

-- v8's idem_key_matches, named the same way (inlined into callers' queries).
CREATE OR REPLACE FUNCTION idem_key_matches(p_key text, p_tenant text, p_operation text)
RETURNS boolean
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $$
    SELECT (p_tenant IS NULL OR pg_catalog.split_part(p_key, ':'::text, 1) OPERATOR(pg_catalog.=) p_tenant)
       AND (p_operation IS NULL OR pg_catalog.split_part(p_key, ':'::text, 2) OPERATOR(pg_catalog.=) p_operation)
$$;

-- 4: a run's liveness. v9 made it a session advisory lock on a key computed from the run's id
-- (idem_purge_lock_key): any login role could take the keys of the next runs (every purge then
-- failed with 55P03) or the key of a dead run (which then looked alive for ever), and two Idem
-- schemas in one database computed the same keys. Now each run takes a lock under a random key
-- (62 bits from gen_random_uuid, taken with a try: a key someone holds is never waited for, the
-- next one is drawn), records the key and its backend's pid in its row, and is alive only while
-- that backend holds that lock (pg_locks, which every role sees). A key held by anyone else
-- keeps nothing alive; nobody can know a key before the run draws it.
ALTER TABLE idem_purge_runs ADD COLUMN backend_pid integer, ADD COLUMN lock_key1 integer, ADD COLUMN lock_key2 integer;

CREATE FUNCTION idem_purge_alive(r idem_purge_runs)
RETURNS boolean
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $alive$
BEGIN
    IF r.lock_key1 IS NULL THEN -- a run begun by v12 or earlier: its lock is v9's
        IF pg_try_advisory_lock(idem_purge_lock_key(r.id)) THEN
            PERFORM pg_advisory_unlock(idem_purge_lock_key(r.id));
            RETURN false;
        END IF;
        RETURN true;
    END IF;
    RETURN EXISTS (SELECT FROM pg_locks l
                    WHERE l.locktype = 'advisory' AND l.granted AND l.pid = r.backend_pid
                      AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                      AND l.classid = r.lock_key1::oid AND l.objid = r.lock_key2::oid AND l.objsubid = 2);
END
$alive$;

-- Lets go of run p_run's lock if this session holds it (a run that finished, failed or was
-- cancelled: v12's rule, with v13's key).
CREATE FUNCTION idem_purge_release(p_run bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $release$
DECLARE
    r idem_purge_runs;
BEGIN
    SELECT * INTO r FROM idem_purge_runs x WHERE x.id = p_run;
    IF NOT FOUND THEN
        RETURN false;
    ELSIF r.lock_key1 IS NULL THEN
        RETURN pg_advisory_unlock(idem_purge_lock_key(p_run));
    ELSIF r.backend_pid IS DISTINCT FROM pg_backend_pid() OR NOT idem_purge_alive(r) THEN
        RETURN false;
    END IF;
    RETURN pg_advisory_unlock(r.lock_key1, r.lock_key2);
END
$release$;

-- v9's begin with v13's liveness.
CREATE OR REPLACE FUNCTION idem_purge_begin(p_reason text DEFAULT 'purge', p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '100ms'
AS $begin$
DECLARE
    r idem_purge_runs;
    v_old idem_purge_runs;
    v_run bigint;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_k1 integer;
    v_k2 integer;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a purge runs in READ COMMITTED transactions, not %', current_setting('transaction_isolation')
            USING ERRCODE = 'ID003';
    END IF;
    -- Only a run that is not alive is locked and closed (SKIP LOCKED: another run's begin may be
    -- closing it right now).
    FOR v_old IN SELECT * FROM idem_purge_runs x WHERE x.state = 'running' ORDER BY x.id LOOP
        IF NOT idem_purge_alive(v_old) THEN
            SELECT * INTO r FROM idem_purge_runs x WHERE x.id = v_old.id AND x.state = 'running' FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                PERFORM idem_purge_close(r, 'abandoned');
            END IF;
        END IF;
    END LOOP;
    LOOP
        v_k1 := ('x' || substr(md5(gen_random_uuid()::text), 1, 8))::bit(32)::integer & 2147483647;
        v_k2 := ('x' || substr(md5(gen_random_uuid()::text), 1, 8))::bit(32)::integer & 2147483647;
        EXIT WHEN pg_try_advisory_lock(v_k1, v_k2);
    END LOOP;
    INSERT INTO idem_purge_runs (db_role, actor, application, reason, backend_pid, lock_key1, lock_key2)
    VALUES (session_user, CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END,
            COALESCE(current_setting('application_name', true), ''), p_reason, pg_backend_pid(), v_k1, v_k2)
    RETURNING id INTO v_run;
    RETURN v_run;
END
$begin$;

-- v9's finish, releasing v13's lock.
CREATE OR REPLACE FUNCTION idem_purge_finish(p_run bigint)
RETURNS TABLE (audit_id bigint, rows_removed bigint, batches bigint, duration_ms double precision)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '5s'
AS $finish$
DECLARE
    r idem_purge_runs;
BEGIN
    SELECT * INTO r FROM idem_purge_runs x WHERE x.id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'running' THEN
        RAISE EXCEPTION 'purge run % is not running (%)', p_run, COALESCE(r.state, 'no such run') USING ERRCODE = 'ID003';
    END IF;
    IF r.db_role <> session_user THEN
        RAISE EXCEPTION 'purge run % belongs to %', p_run, r.db_role USING ERRCODE = 'ID003';
    END IF;
    audit_id := idem_purge_close(r, 'finished');
    PERFORM idem_purge_release(p_run); -- v13
    PERFORM idem_storage_sample();
    SELECT x.rows_removed, x.batches, extract(epoch FROM x.finished_at - x.started_at) * 1000
      INTO rows_removed, batches, duration_ms FROM idem_purge_runs x WHERE x.id = p_run;
    RETURN NEXT;
END
$finish$;

-- v12's idem_purge, releasing v13's lock when it fails.
CREATE OR REPLACE FUNCTION idem_purge(p_batch integer DEFAULT 1000, p_max_batches integer DEFAULT 1,
                                      p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL)
RETURNS TABLE (run_id bigint, rows_removed bigint, batches bigint, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $purge$
DECLARE
    v_n bigint;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_batches IS NULL OR p_max_batches NOT BETWEEN 1 AND 100 THEN
        RAISE EXCEPTION 'max_batches must be 1 to 100, not %', COALESCE(p_max_batches::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    run_id := idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    BEGIN
        FOR i IN 1..p_max_batches LOOP
            SELECT b.removed INTO v_n FROM idem_purge_batch(run_id, p_batch) b;
            EXIT WHEN v_n < p_batch;
        END LOOP;
        SELECT f.audit_id, f.rows_removed, f.batches INTO audit_id, rows_removed, batches FROM idem_purge_finish(run_id) f;
    EXCEPTION WHEN query_canceled OR others THEN -- the run rolls back; its lock would not
        PERFORM idem_purge_release(run_id);
        RAISE;
    END;
    RETURN NEXT;
END
$purge$;

-- v12's procedure: v13's lock, and (2) its search_path pinned at the start of each of its
-- transactions, before any expression of its own is planned. A procedure that commits may carry
-- no SET clause, and it runs as its caller, with the caller's path: p_max_seconds * interval,
-- p_duty >= 0.01 and the pause's arithmetic would otherwise resolve through it.
DO $proc$
BEGIN
    EXECUTE format($p$
CREATE OR REPLACE PROCEDURE idem_purge_run(p_batch integer DEFAULT 1000, p_max_seconds integer DEFAULT 60,
                                           p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL,
                                           p_duty double precision DEFAULT 0.1)
LANGUAGE plpgsql
AS $run$
DECLARE
    v_run bigint;
    v_n bigint;
    v_start timestamptz := pg_catalog.clock_timestamp();
    v_batch_start timestamptz;
BEGIN
    PERFORM pg_catalog.set_config('search_path', %2$L, true);
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %%', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_seconds IS NULL OR p_max_seconds NOT BETWEEN 1 AND 86400 THEN
        RAISE EXCEPTION 'max_seconds must be 1 to 86400, not %%', COALESCE(p_max_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_duty IS NULL OR NOT (p_duty >= 0.01 AND p_duty <= 1) THEN
        RAISE EXCEPTION 'duty must be 0.01 to 1, not %%', COALESCE(p_duty::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    v_run := %1$I.idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    COMMIT;
    LOOP
        PERFORM pg_catalog.set_config('search_path', %2$L, true);
        v_batch_start := clock_timestamp();
        BEGIN
            SELECT b.removed INTO v_n FROM %1$I.idem_purge_batch(v_run, p_batch) b;
        EXCEPTION WHEN query_canceled OR others THEN
            PERFORM %1$I.idem_purge_release(v_run);
            RAISE;
        END;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', %2$L, true);
        EXIT WHEN v_n < p_batch OR clock_timestamp() >= v_start + p_max_seconds * interval '1 second';
        BEGIN
            PERFORM pg_sleep(least(extract(epoch FROM clock_timestamp() - v_batch_start) * (1 - p_duty) / p_duty, 10));
        EXCEPTION WHEN query_canceled OR others THEN
            PERFORM %1$I.idem_purge_release(v_run);
            RAISE;
        END;
    END LOOP;
    BEGIN
        PERFORM %1$I.idem_purge_finish(v_run);
    EXCEPTION WHEN query_canceled OR others THEN
        PERFORM %1$I.idem_purge_release(v_run);
        RAISE;
    END;
    COMMIT;
END
$run$
$p$, current_schema(), format('%I, pg_temp', current_schema()));
END
$proc$;

REVOKE ALL ON FUNCTION idem_purge_alive(idem_purge_runs), idem_purge_release(bigint) FROM PUBLIC;

-- 1: counters that no flush can overflow or fill with the implausible.
ALTER TABLE idem_counters_policy
    ADD COLUMN max_flush_per_minute BIGINT NOT NULL DEFAULT 10000000
        CHECK (max_flush_per_minute BETWEEN 1 AND 1000000000000000);

-- Flushes refused as implausible, newest 1000 kept: who sent it and what.
CREATE TABLE idem_counters_refused (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    db_role     TEXT NOT NULL,
    application TEXT NOT NULL,
    client_addr INET,
    rows        INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    batch       TEXT NOT NULL  -- its first 2000 characters
);

-- Counts stored before v13 past what a count may now hold (a flush that poisoned a minute) are
-- cut to it, so that no sum over them overflows.
UPDATE idem_counters SET n = 1000000000000000 WHERE n > 1000000000000000;
UPDATE idem_counters_total SET n = 1000000000000000 WHERE n > 1000000000000000;
UPDATE idem_counters_hourly SET n = 1000000000000000 WHERE n > 1000000000000000;

-- v10's checks of a batch (0010_failed_retries.sql, then in idem_counters_add_detail), on their
-- own: a batch out of these bounds is a client's bug and refused whole with ID003, as before.
CREATE FUNCTION idem_counters_check(p_batch jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $check$
DECLARE
    v_bad jsonb;
    v_from numeric := extract(epoch FROM now() - interval '31 days');
    v_to numeric := extract(epoch FROM now() + interval '1 hour');
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
                                        'failed_retryable', 'failed_permanent', 'failed_unknown', 'exhausted',
                                        'retry_failed')
           END
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'counter row out of bounds: %', left(v_bad::text, 300) USING ERRCODE = 'ID003';
    END IF;
END
$check$;

-- The detailed rows of a checked batch. A minute after the server's current one is counted in
-- the current one (no figure counts the future); a stored count saturates at 10^15 rather than
-- overflow (a batch adds at most 10000 x 10^14 before the ceiling, far below bigint's range).
CREATE OR REPLACE FUNCTION idem_counters_add_detail(p_batch jsonb)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $detail$
DECLARE
    c_cap constant numeric := 1000000000000000;
    v_now timestamptz := date_trunc('minute', now());
    v_rows integer;
BEGIN
    INSERT INTO idem_counters AS c (bucket, tenant, operation, outcome, n)
    SELECT least(to_timestamp(r.m), v_now), r.t, r.o, r.w, least(sum(r.n), c_cap)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     GROUP BY 1, 2, 3, 4
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = least(c.n::numeric + EXCLUDED.n, c_cap)::bigint;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END
$detail$;

-- The flush. Checked (ID003 as before), then judged: a batch that counts more in one minute
-- and outcome, over all its tenants and operations, than idem_counters_policy.max_flush_per_minute
-- is implausible (one flush is about a second of one process's counts). It is refused whole
-- and recorded with who sent it, and the call returns 0 with a WARNING: not an error, so the
-- record stays, and a flusher drops the batch as it drops a refused one. Nothing of it lands;
-- every other flush, for the same minutes too, does.
CREATE OR REPLACE FUNCTION add_counters(p_batch jsonb)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $add_counters$
DECLARE
    c_cap constant numeric := 1000000000000000;
    v_now timestamptz := date_trunc('minute', now());
    v_max bigint;
    v_bad record;
    v_id bigint;
    v_rows integer;
BEGIN
    PERFORM idem_counters_check(p_batch);
    SELECT p.max_flush_per_minute INTO v_max FROM idem_counters_policy p;
    SELECT least(to_timestamp(r.m), v_now) AS bucket, r.w AS outcome, sum(r.n) AS n INTO v_bad
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, w text, n bigint)
     GROUP BY 1, 2
    HAVING sum(r.n) > v_max
     ORDER BY 3 DESC
     LIMIT 1;
    IF FOUND THEN
        INSERT INTO idem_counters_refused (db_role, application, client_addr, rows, reason, batch)
        VALUES (session_user, COALESCE(current_setting('application_name', true), ''), inet_client_addr(),
                jsonb_array_length(p_batch),
                format('%s %s in the minute %s, more than the %s one flush may count', v_bad.n, v_bad.outcome,
                       to_char(v_bad.bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"'), v_max),
                left(p_batch::text, 2000))
        RETURNING id INTO v_id;
        DELETE FROM idem_counters_refused x WHERE x.id <= v_id - 1000;
        RAISE WARNING 'counters flush refused: % (recorded in idem_counters_refused, id %)',
            format('%s %s in one minute, more than %s', v_bad.n, v_bad.outcome, v_max), v_id;
        RETURN 0;
    END IF;
    v_rows := idem_counters_add_detail(p_batch);
    INSERT INTO idem_counters_total AS c (minutes, bucket, outcome, n)
    SELECT 1, least(to_timestamp(r.m), v_now), r.w, least(sum(r.n), c_cap)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     GROUP BY 2, 3
     ORDER BY 2, 3
    ON CONFLICT (minutes, bucket, outcome) DO UPDATE SET n = least(c.n::numeric + EXCLUDED.n, c_cap)::bigint;
    RETURN v_rows;
END
$add_counters$;

-- v8's roll-up, summing in numeric and saturating as the flush does: a poisoned hour can no
-- longer stop it (nor, through it, the shared exact refresh).
CREATE OR REPLACE FUNCTION idem_counters_maintain(p_batch integer)
RETURNS TABLE (rolled_up bigint, expired bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $maintain$
DECLARE
    c_cap constant numeric := 1000000000000000;
    v_policy idem_counters_policy;
    v_rollup timestamptz;
    v_expire timestamptz;
    v_rolled bigint := 0;
    v_expired bigint := 0;
    v_n bigint;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows' USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_policy FROM idem_counters_policy;
    v_rollup := date_trunc('hour', now() - v_policy.rollup_after);
    v_expire := date_trunc('hour', now() - v_policy.expire_after);

    WITH moved AS (
        DELETE FROM idem_counters c
         WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters d WHERE d.bucket < v_rollup
                                    ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED))
        RETURNING c.bucket, c.tenant, c.operation, c.outcome, c.n
    ), hourly AS (
        INSERT INTO idem_counters_hourly AS h (bucket, tenant, operation, outcome, n)
        SELECT date_trunc('hour', m.bucket), m.tenant, m.operation, m.outcome, least(sum(m.n), c_cap)::bigint
          FROM moved m GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = least(h.n::numeric + EXCLUDED.n, c_cap)::bigint
    )
    SELECT count(*) INTO v_n FROM moved;
    v_rolled := v_rolled + v_n;

    WITH moved AS (
        DELETE FROM idem_counters_total c
         WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_total d WHERE d.minutes = 1 AND d.bucket < v_rollup
                                    ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED))
        RETURNING c.bucket, c.outcome, c.n
    ), hourly AS (
        INSERT INTO idem_counters_total AS h (minutes, bucket, outcome, n)
        SELECT 60, date_trunc('hour', m.bucket), m.outcome, least(sum(m.n), c_cap)::bigint
          FROM moved m GROUP BY 2, 3 ORDER BY 2, 3
        ON CONFLICT (minutes, bucket, outcome) DO UPDATE SET n = least(h.n::numeric + EXCLUDED.n, c_cap)::bigint
    )
    SELECT count(*) INTO v_n FROM moved;
    v_rolled := v_rolled + v_n;

    DELETE FROM idem_counters_hourly c
     WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_hourly d WHERE d.bucket < v_expire
                                ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_expired := v_expired + v_n;
    DELETE FROM idem_counters_total c
     WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_total d WHERE d.minutes = 60 AND d.bucket < v_expire
                                ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_expired := v_expired + v_n;
    DELETE FROM idem_counters_refused r WHERE r.at < now() - v_policy.expire_after;
    RETURN QUERY SELECT v_rolled, v_expired;
END
$maintain$;

REVOKE ALL ON FUNCTION idem_counters_check(jsonb) FROM PUBLIC;

-- 6: who holds the shared exact refresh. A session that called idem_exact_refresh_begin() or
-- _finish() and kept its transaction open holds the one row's lock: nobody else can refresh
-- until it ends. The lock shows in the row's xmax and, for as long as that transaction lives,
-- as its transactionid lock in pg_locks, with its pid. NULL when nobody holds it. Readers count
-- for themselves while it is held past its due time (operations/stats.cpp, needsOwnExact).
CREATE FUNCTION idem_exact_refresh_holder()
RETURNS TABLE (pid integer, db_role text, application text, since timestamptz)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $holder$
    SELECT l.pid, COALESCE(a.usename::text, ''), COALESCE(a.application_name, ''), COALESCE(a.xact_start, a.backend_start)
      FROM idem_stats_exact x
      JOIN pg_locks l ON l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                     AND l.transactionid = x.xmax
      LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.pid <> pg_backend_pid()
     LIMIT 1
$holder$;

-- v9's finish (0009_key_lifecycle.sql) with the roll-up kept from stopping the refresh: the
-- figures are stored whatever the upkeep meets (marked v13).
CREATE OR REPLACE FUNCTION idem_exact_refresh_finish(p_token uuid, p_long_after_minutes integer)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET max_parallel_workers_per_gather = 0
AS $finish$
DECLARE
    v idem_stats_exact;
    v_start timestamptz;
    v_cost double precision;
    v_locked boolean := false;
BEGIN
    IF p_long_after_minutes IS NULL OR p_long_after_minutes NOT BETWEEN 1 AND 525600 THEN
        RAISE EXCEPTION 'long-unfinished threshold must be 1 to 525600 minutes' USING ERRCODE = 'ID003';
    END IF;
    FOR i IN 1..200 LOOP
        IF p_token IS NULL OR NOT EXISTS (SELECT FROM idem_stats_exact x WHERE x.attempt_token = p_token) THEN
            RETURN false;
        END IF;
        SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        EXIT WHEN v_locked;
        PERFORM pg_sleep(0.01);
    END LOOP;
    IF NOT v_locked OR v.attempt_token IS DISTINCT FROM p_token THEN
        RETURN false;
    END IF;
    v_start := clock_timestamp();
    UPDATE idem_stats_exact AS x
       SET (processing, expired_leases, oldest_processing_created_at, retryable_failed, uncertain,
            failed_permanent, failed_exhausted, long_unfinished, attempts_histogram)
           = (SELECT e.processing, e.expired_leases, e.oldest_processing_created_at, e.retryable_failed, e.uncertain,
                     e.failed_permanent, e.failed_exhausted, e.long_unfinished, e.attempts_histogram
                FROM idem_exact_stats(NULL, NULL, p_long_after_minutes) e),
           taken_at = now(),
           long_unfinished_after_minutes = p_long_after_minutes,
           taken_by = session_user,
           attempt_at = NULL,
           attempt_token = NULL;
    v_cost := extract(epoch FROM clock_timestamp() - v_start) * 1000;
    UPDATE idem_stats_exact
       SET cost_ms = v_cost,
           period_s = least(greatest(v_cost / 1000 * 50, 20), 900),
           refreshes = refreshes + 1;
    BEGIN -- v13
        PERFORM idem_counters_maintain(2000);
    EXCEPTION WHEN others THEN
        RAISE WARNING 'counter upkeep failed (%: %); the exact figures are stored', SQLSTATE, SQLERRM;
    END;
    PERFORM idem_storage_sample();
    RETURN true;
END
$finish$;

REVOKE ALL ON FUNCTION idem_exact_refresh_holder() FROM PUBLIC;

-- Nobody but the owner holds any privilege on the new table beyond what roles.sql grants.
DO $private$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT c.relname, a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = 'idem_counters_refused'::regclass AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM %s', g.relname, g.name);
    END LOOP;
    REVOKE ALL ON idem_counters_refused FROM PUBLIC;
END
$private$;

-- 2: the SQL helpers only the pinned functions call, pinned too, so that no caller's path can
-- ever reach into them (a SET clause costs them their inlining: a few microseconds per audit
-- entry or purge run).
ALTER FUNCTION audit_netstring(text) SET search_path FROM CURRENT;
ALTER FUNCTION audit_task_image(task_idempotency) SET search_path FROM CURRENT;
ALTER FUNCTION idem_purge_lock_key(bigint) SET search_path FROM CURRENT;
