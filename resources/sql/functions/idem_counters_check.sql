-- idem_counters_check (schema v13, changed in v15; the history is in git log).
-- v10's checks of a batch (0010_failed_retries.sql, then in idem_counters_add_detail), on their
-- own: a batch out of these bounds is a client's bug and refused whole with ID003, as before.
CREATE OR REPLACE FUNCTION idem_counters_check(p_batch jsonb)
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
                                        'retry_failed', 'paused')
           END
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'counter row out of bounds: %', left(v_bad::text, 300) USING ERRCODE = 'ID003';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_counters_check(jsonb) FROM PUBLIC;
