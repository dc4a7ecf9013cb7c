-- idem_lease_fold (schema v31; the history is in git log).
-- The lease minutes of [p_from, p_to), read from the task rows as idem_latency_fold reads the
-- succeeded ones (the succeeded index, operation by operation): per minute of completion, tenant,
-- operation and the lease the attempt's claim asked for (lease_ms, v31), the attempts measured and
-- those whose run time (attempt_started_at to complete()) exceeded that lease. Rows claimed before
-- v31 have no lease and are left out. Reads only; idem_latency_rollup() stores what it returns.
CREATE OR REPLACE FUNCTION idem_lease_fold(p_from timestamptz, p_to timestamptz)
RETURNS TABLE (bucket timestamptz, tenant text, operation text, lease_ms integer, attempts bigint, overruns bigint)
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $fold$
    SELECT date_trunc('minute', t.updated_at), split_part(t.idempotency_key, ':', 1), o.op, t.lease_ms,
           count(*),
           count(*) FILTER (WHERE t.updated_at - t.attempt_started_at > t.lease_ms * interval '1 millisecond')
      FROM idem_succeeded_operations() o(op)
      CROSS JOIN LATERAL (
          SELECT s.idempotency_key, s.updated_at, s.attempt_started_at, s.lease_ms FROM task_idempotency s
           WHERE s.status = 'succeeded' AND split_part(s.idempotency_key, ':', 2) = o.op
             AND s.updated_at >= p_from AND s.updated_at < p_to) t
     WHERE t.lease_ms IS NOT NULL AND t.attempt_started_at IS NOT NULL AND t.updated_at >= t.attempt_started_at
     GROUP BY 1, 2, 3, 4
$fold$;

REVOKE ALL ON FUNCTION idem_lease_fold(timestamptz, timestamptz) FROM PUBLIC;
