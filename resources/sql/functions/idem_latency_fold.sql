-- idem_latency_fold (schema v17; the history is in git log).
-- The latency values of [p_from, p_to), read from the task rows, one row per minute, tenant,
-- operation, kind and slot (see 0017_latency.sql): for each key that succeeded in the window its
-- attempt's run time (when claim() recorded the attempt's start), its time to success and its
-- attempts; for each attempt that failed in the window its run time, from the errors entry fail()
-- wrote. A failed attempt's row may have moved on since (taken over, succeeded), but it was written
-- at or after the failure, so every row written since p_from is read: succeeded ones through the
-- succeeded index, operation by operation, the others through the unfinished index. Reads only;
-- idem_latency_rollup() stores what it returns.
CREATE OR REPLACE FUNCTION idem_latency_fold(p_from timestamptz, p_to timestamptz)
RETURNS TABLE (bucket timestamptz, tenant text, operation text, kind text, slot smallint, n bigint, total numeric)
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $fold$
    WITH succeeded AS (
        SELECT t.idempotency_key, t.updated_at, t.created_at, t.attempt_started_at, t.attempts, t.errors
          FROM idem_succeeded_operations() o(op)
          CROSS JOIN LATERAL (
              SELECT * FROM task_idempotency s
               WHERE s.status = 'succeeded' AND split_part(s.idempotency_key, ':', 2) = o.op
                 AND s.updated_at >= p_from) t
    ), failures AS (
        SELECT s.idempotency_key, s.errors FROM succeeded s WHERE s.errors <> '[]'::jsonb
        UNION ALL
        SELECT u.idempotency_key, u.errors FROM task_idempotency u
         WHERE u.status <> 'succeeded' AND u.updated_at >= p_from AND u.errors <> '[]'::jsonb
    ), observed AS (
        SELECT s.idempotency_key AS k, s.updated_at AS at, v.kind, v.value
          FROM succeeded s
          CROSS JOIN LATERAL (VALUES
              ('run', extract(epoch FROM s.updated_at - s.attempt_started_at) * 1000000),
              ('tts', extract(epoch FROM s.updated_at - s.created_at) * 1000000),
              ('attempts', s.attempts::numeric)) v(kind, value)
         WHERE s.updated_at < p_to AND v.value IS NOT NULL AND v.value >= 0
        UNION ALL
        SELECT f.idempotency_key, (e.entry->>'at')::timestamptz, 'run', (e.entry->>'run_us')::numeric
          FROM failures f CROSS JOIN LATERAL jsonb_array_elements(f.errors) e(entry)
         WHERE jsonb_typeof(e.entry->'run_us') = 'number' AND (e.entry->>'run_us')::numeric >= 0
           AND (e.entry->>'at')::timestamptz >= p_from AND (e.entry->>'at')::timestamptz < p_to
    )
    SELECT date_trunc('minute', o.at), split_part(o.k, ':', 1), split_part(o.k, ':', 2), o.kind,
           CASE WHEN o.kind = 'attempts' THEN least(o.value, 32767)::smallint
                ELSE idem_latency_slot(o.value::double precision) END,
           count(*), sum(o.value)
      FROM observed o
     GROUP BY 1, 2, 3, 4, 5
$fold$;

REVOKE ALL ON FUNCTION idem_latency_fold(timestamptz, timestamptz) FROM PUBLIC;
