-- idem_claim_fields (schema v32; the history is in git log).
-- claim() for a key of an operation whose worker fingerprints its requests' fields (opt-in per
-- operation in the worker's configuration; docs/workers-guide.md, "Which field differed"), in one
-- round trip: the same arguments and answers, plus p_fields, the canonical JSON object of the
-- request's field fingerprints (name -> 16 lowercase hex digits: at most 64 names of 1 to 256
-- bytes), p_field_count, how many top-level fields the request has, and p_request, the canonical
-- request for a re-drivable operation (then idem_claim_stored claims and stores it; NULL: claim()).
-- When the key is acquired (new, or reacquired without fingerprints) the fingerprints are kept in
-- idem_request_fields; when the claim conflicts, with the key's conflict record
-- (task_idempotency_conflicts.last_fields). Every other answer writes nothing more, and nothing but
-- its size is checked on it. Refused (ID003), nothing claimed or stored: p_fields NULL, over 131072
-- bytes, not an object, over 64 names, a name outside 1 to 256 characters, a value not 16 lowercase hex
-- digits; p_field_count NULL, outside 0 to 1000000, or below the names given. Text that is not JSON
-- is refused by PostgreSQL before the call (22P02).
CREATE OR REPLACE FUNCTION idem_claim_fields(p_key text, p_request_hash text, p_token uuid, p_lease_ms bigint,
                                             p_max_attempts integer, p_max_age_ms bigint,
                                             p_fields jsonb, p_field_count integer, p_request text DEFAULT NULL)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $claim$
#variable_conflict use_column
BEGIN
    IF p_fields IS NULL OR pg_column_size(p_fields) > 131072 THEN
        RAISE EXCEPTION 'the field fingerprints are required, at most 131072 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF p_field_count IS NULL OR p_field_count NOT BETWEEN 0 AND 1000000 THEN
        RAISE EXCEPTION 'the field count must be 0 to 1000000, not %', COALESCE(p_field_count::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_request IS NULL THEN
        SELECT x.decision, x.detail, x.owner_token, x.attempts, x.max_attempts, x.lease_until, x.retry_after_ms,
               x.result_json, x.request_hash, x.error_class, x.error_message
          INTO decision, detail, owner_token, attempts, max_attempts, lease_until, retry_after_ms,
               result_json, request_hash, error_class, error_message
          FROM claim(p_key, p_request_hash, p_token, p_lease_ms, p_max_attempts, p_max_age_ms) x;
    ELSE
        SELECT x.decision, x.detail, x.owner_token, x.attempts, x.max_attempts, x.lease_until, x.retry_after_ms,
               x.result_json, x.request_hash, x.error_class, x.error_message
          INTO decision, detail, owner_token, attempts, max_attempts, lease_until, retry_after_ms,
               result_json, request_hash, error_class, error_message
          FROM idem_claim_stored(p_key, p_request_hash, p_token, p_lease_ms, p_max_attempts, p_max_age_ms,
                                 p_request) x;
    END IF;
    IF decision = 'conflict'
       OR (decision IN ('acquired', 'reacquired')
           AND (decision = 'acquired'
                OR NOT EXISTS (SELECT FROM idem_request_fields f WHERE f.idempotency_key = p_key))) THEN
        -- One expression checks every fingerprint (jsonpath: no query, no exception block).
        IF jsonb_typeof(p_fields) <> 'object'
           OR jsonb_array_length(jsonb_path_query_array(p_fields, '$.*')) > LEAST(64, p_field_count)
           OR jsonb_path_exists(p_fields, '$.keyvalue() ? (@.key like_regex "^$" || @.key like_regex "^.{129}.{128}"'
                                          ' || @.value.type() != "string" || !(@.value like_regex "^[0-9a-f]{16}$"))') THEN
            RAISE EXCEPTION 'the field fingerprints are a JSON object of at most 64 names (and no more than the'
                            ' request''s % fields), each of 1 to 256 characters with 16 lowercase hex digits:'
                            ' nothing was claimed or stored', p_field_count USING ERRCODE = 'ID003';
        END IF;
        IF decision = 'conflict' THEN
            -- claim() recorded the conflict in this statement's transaction: the row is there.
            UPDATE task_idempotency_conflicts c
               SET last_fields = p_fields, last_field_count = p_field_count
             WHERE c.idempotency_key = p_key;
        ELSE
            -- A new key's leftover (fingerprints of a key truncated by hand) is replaced.
            INSERT INTO idem_request_fields AS f (idempotency_key, fields, field_count, stored_at)
            VALUES (p_key, p_fields, p_field_count, now())
            ON CONFLICT (idempotency_key) DO UPDATE
                SET fields = excluded.fields, field_count = excluded.field_count, stored_at = excluded.stored_at;
        END IF;
    END IF;
    RETURN NEXT;
END
$claim$;

REVOKE ALL ON FUNCTION idem_claim_fields(text, text, uuid, bigint, integer, bigint, jsonb, integer, text) FROM PUBLIC;
