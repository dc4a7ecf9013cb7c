-- Idem schema v10: failed retries are counted as such.
--
-- idem_counters has no attempt number, so "failed retries" summed every retryable, unknown and
-- exhausted failure, first attempts included (most of them, under faults). A worker now counts
-- 'retry_failed' beside a failure's own outcome (failed_retryable / failed_permanent /
-- failed_unknown) when the attempt that failed was the second or a later one: a failure of a
-- retry. Only the set of outcome names grows; nothing already counted changes, and minutes
-- flushed before this version have no retry_failed (they read 0).
--
-- Migrate before starting workers of this version: add_counters() of an older schema refuses a
-- batch that names an outcome it does not know.

-- The CHECK of 0001, with one name more. Found by what it checks: its name was given by the
-- server (idem_counters_outcome_check), not written in 0001.
DO $check$
DECLARE
    c text;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
              WHERE conrelid = 'idem_counters'::regclass AND contype = 'c'
                AND pg_get_constraintdef(oid) LIKE '%outcome%'
    LOOP
        EXECUTE format('ALTER TABLE idem_counters DROP CONSTRAINT %I', c);
    END LOOP;
END
$check$;

ALTER TABLE idem_counters ADD CONSTRAINT idem_counters_outcome_check CHECK (outcome IN (
    'acquired', 'reacquired_lease', 'reacquired_retry', 'replayed', 'in_progress', 'conflict', 'retry_later',
    'rejected_failed', 'stale_token', 'succeeded', 'failed_retryable', 'failed_permanent', 'failed_unknown',
    'exhausted',
    'retry_failed'));  -- a failure of attempt 2 or later, counted beside the failure's own outcome

-- The flush's checks (v6's add_counters(), renamed idem_counters_add_detail() by v8) with the
-- same name added; everything else as it was. CREATE OR REPLACE keeps its owner and privileges.
-- idem_counters_total (v8) has no CHECK on outcome: add_counters() writes there only what
-- passed this function.
CREATE OR REPLACE FUNCTION idem_counters_add_detail(p_batch jsonb)
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
                                        'failed_retryable', 'failed_permanent', 'failed_unknown', 'exhausted',
                                        'retry_failed')
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
