-- add_counters (schema v6, changed in v8, v13, v31; the history is in git log).
-- The counters flush: p_batch is a JSON array of {"m": bucket as Unix seconds, "t": tenant,
-- "o": operation, "w": outcome, "n": count}. Rows of one batch with the same counter are summed;
-- counter rows are written in key order, so two flushers cannot deadlock. Returns the number of
-- counter rows written. Any row out of bounds refuses the whole batch (ID003). v31: the batch's
-- takeovers and refused late calls ('reacquired_lease', 'stale_token') are also counted by worker
-- in idem_counters_workers, the worker being the flushing session's application_name (else its
-- login role).
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
    INSERT INTO idem_counters_workers AS c (bucket, tenant, operation, worker, outcome, n)
    SELECT least(to_timestamp(r.m), v_now), r.t, r.o,
           left(COALESCE(NULLIF(current_setting('application_name', true), ''), session_user), 256), r.w,
           least(sum(r.n), c_cap)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     WHERE r.w IN ('reacquired_lease', 'stale_token')
     GROUP BY 1, 2, 3, 4, 5
     ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (bucket, tenant, operation, worker, outcome) DO UPDATE SET n = least(c.n::numeric + EXCLUDED.n, c_cap)::bigint;
    INSERT INTO idem_counters_total AS c (minutes, bucket, outcome, n)
    SELECT 1, least(to_timestamp(r.m), v_now), r.w, least(sum(r.n), c_cap)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     GROUP BY 2, 3
     ORDER BY 2, 3
    ON CONFLICT (minutes, bucket, outcome) DO UPDATE SET n = least(c.n::numeric + EXCLUDED.n, c_cap)::bigint;
    RETURN v_rows;
END
$add_counters$;

REVOKE ALL ON FUNCTION add_counters(jsonb) FROM PUBLIC;
