-- idem_fencing (schema v31; the history is in git log).
-- Proof that fencing works, and the lease advisor's figures (issue 46 item 2), for the window
-- [p_from, p_to) (at most 24 hours), in one JSON document:
--   operations: per operation (all tenants), the takeovers of expired leases ('reacquired_lease')
--     and the late calls refused because of them ('stale_token': a complete, fail, heartbeat or
--     fence by a token another attempt had taken the key from), as the workers' libraries counted
--     them (minute and hourly counters); the run-time percentiles of its attempts (folded latency
--     minutes, within 3.7 %); the lease its claims asked for most often (lease_ms) and how many
--     different leases they asked for; of the succeeded attempts measured with a lease, how many
--     ran longer than it (overruns). The first p_limit, most refused first, then most overruns;
--     operations_omitted says how many more there were.
--   workers: per worker (the flushing session's application_name) and operation, the takeovers it
--     made and its late calls refused, minute counters only; the first p_limit, most refused first.
--   minutes: [minute as Unix seconds, takeovers, refused] for the chart, oldest first.
-- Figures only of folded minutes and flushed counters: a reader calls idem_latency_rollup() first.
CREATE OR REPLACE FUNCTION idem_fencing(p_from timestamptz, p_to timestamptz, p_limit integer DEFAULT 50)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $fencing$
DECLARE
    v_ops jsonb;
    v_ops_all integer;
    v_workers jsonb;
    v_workers_all integer;
    v_minutes jsonb;
    v_totals jsonb;
BEGIN
    IF p_from IS NULL OR p_to IS NULL OR p_to < p_from OR p_to - p_from > interval '24 hours' THEN
        RAISE EXCEPTION 'a window needs a start and an end at most 24 hours after it, not % to %', p_from, p_to
            USING ERRCODE = 'ID003';
    END IF;
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'limit must be 1 to 1000, not %', p_limit USING ERRCODE = 'ID003';
    END IF;

    WITH counted AS (
        SELECT c.operation AS op, sum(c.n) FILTER (WHERE c.outcome = 'reacquired_lease') AS takeovers,
               sum(c.n) FILTER (WHERE c.outcome = 'stale_token') AS refused
          FROM (SELECT m.operation, m.outcome, m.n FROM idem_counters m
                 WHERE m.bucket >= p_from AND m.bucket < p_to AND m.outcome IN ('reacquired_lease', 'stale_token')
                UNION ALL
                SELECT h.operation, h.outcome, h.n FROM idem_counters_hourly h
                 WHERE h.bucket >= p_from AND h.bucket < p_to AND h.outcome IN ('reacquired_lease', 'stale_token')) c
         GROUP BY 1
    ), leases AS (
        SELECT l.operation AS op, l.lease_ms, sum(l.attempts) AS attempts, sum(l.overruns) AS overruns
          FROM idem_lease l WHERE l.bucket >= p_from AND l.bucket < p_to
         GROUP BY 1, 2
    ), lease AS (
        SELECT x.op, (array_agg(x.lease_ms ORDER BY x.attempts DESC, x.lease_ms))[1] AS lease_ms,
               count(*) AS leases, sum(x.attempts) AS measured, sum(x.overruns) AS overruns
          FROM leases x GROUP BY 1
    ), runs AS (
        SELECT p.operation AS op, p.n, p.p50, p.p95, p.p99
          FROM idem_latency_percentiles(p_from, p_to, NULL, NULL, true, false) p WHERE p.kind = 'run'
    ), ops AS (
        SELECT o.op, COALESCE(c.takeovers, 0) AS takeovers, COALESCE(c.refused, 0) AS refused,
               COALESCE(r.n, 0) AS runs, r.p50, r.p95, r.p99, l.lease_ms, COALESCE(l.leases, 0) AS leases,
               COALESCE(l.measured, 0) AS measured, COALESCE(l.overruns, 0) AS overruns
          FROM (SELECT op FROM counted UNION SELECT op FROM lease UNION SELECT op FROM runs) o
          LEFT JOIN counted c ON c.op = o.op
          LEFT JOIN lease l ON l.op = o.op
          LEFT JOIN runs r ON r.op = o.op
    ), ranked AS (
        SELECT ops.*, row_number() OVER (ORDER BY refused DESC, overruns DESC, takeovers DESC, op) AS rn,
               count(*) OVER () AS total
          FROM ops
    )
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'operation', op, 'takeovers', takeovers, 'refused', refused, 'runs', runs,
               'run_p50_ms', p50, 'run_p95_ms', p95, 'run_p99_ms', p99, 'lease_ms', lease_ms, 'leases', leases,
               'measured', measured, 'overruns', overruns) ORDER BY rn) FILTER (WHERE rn <= p_limit), '[]'::jsonb),
           COALESCE(max(total), 0),
           jsonb_build_object('takeovers', COALESCE(sum(takeovers), 0), 'refused', COALESCE(sum(refused), 0),
                              'measured', COALESCE(sum(measured), 0), 'overruns', COALESCE(sum(overruns), 0))
      INTO v_ops, v_ops_all, v_totals
      FROM ranked;

    WITH w AS (
        SELECT c.worker, c.operation AS op, sum(c.n) FILTER (WHERE c.outcome = 'reacquired_lease') AS takeovers,
               sum(c.n) FILTER (WHERE c.outcome = 'stale_token') AS refused
          FROM idem_counters_workers c WHERE c.bucket >= p_from AND c.bucket < p_to
         GROUP BY 1, 2
    ), ranked AS (
        SELECT w.*, row_number() OVER (ORDER BY COALESCE(refused, 0) DESC, COALESCE(takeovers, 0) DESC, worker, op) AS rn,
               count(*) OVER () AS total
          FROM w
    )
    SELECT COALESCE(jsonb_agg(jsonb_build_object('worker', worker, 'operation', op,
                                                 'takeovers', COALESCE(takeovers, 0), 'refused', COALESCE(refused, 0))
                              ORDER BY rn) FILTER (WHERE rn <= p_limit), '[]'::jsonb),
           COALESCE(max(total), 0)
      INTO v_workers, v_workers_all
      FROM ranked;

    SELECT COALESCE(jsonb_agg(jsonb_build_array(extract(epoch FROM m.bucket)::bigint, m.takeovers, m.refused)
                              ORDER BY m.bucket), '[]'::jsonb)
      INTO v_minutes
      FROM (SELECT c.bucket, COALESCE(sum(c.n) FILTER (WHERE c.outcome = 'reacquired_lease'), 0) AS takeovers,
                   COALESCE(sum(c.n) FILTER (WHERE c.outcome = 'stale_token'), 0) AS refused
              FROM idem_counters c
             WHERE c.bucket >= p_from AND c.bucket < p_to AND c.outcome IN ('reacquired_lease', 'stale_token')
             GROUP BY 1) m;

    RETURN jsonb_build_object('from', p_from, 'to', p_to, 'as_of', now(), 'operations', v_ops,
                              'operations_omitted', greatest(v_ops_all - p_limit, 0), 'workers', v_workers,
                              'workers_omitted', greatest(v_workers_all - p_limit, 0), 'minutes', v_minutes,
                              'totals', v_totals);
END
$fencing$;

REVOKE ALL ON FUNCTION idem_fencing(timestamptz, timestamptz, integer) FROM PUBLIC;
