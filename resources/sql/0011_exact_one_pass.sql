-- Idem schema v11: the shared exact refresh in one pass (issue #13). v8's idem_exact_stats
-- gathered the unfinished rows into a CTE that two aggregates read (one for the figures, one for
-- the attempts histogram): PostgreSQL materialises such a CTE, and at 300k unfinished rows that
-- spilled to a temporary file and cost 240-320 ms, of which the index-only scan was 50 ms.
-- The same figures and the same histogram now come from one aggregate over that scan:
-- 126-139 ms on the same table (bench/README.md, "Session 7"). The refresh's period is 50x its
-- cost (20 s at least), so the exact figures every console shows stay younger than 30 s where
-- they used to reach 41 s under load.
--
-- Same signature, same columns, same meaning: the histogram is still [[attempts, rows], ...]
-- over the attempts that occur, ascending, the last bin holding 10 or more (attempts >= 0 by
-- task_idempotency_attempts_check). Still LANGUAGE sql with the schema's name written in, so it
-- stays inlinable and a caller's EXPLAIN shows the index-only scan.
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
           (SELECT coalesce(jsonb_agg(jsonb_build_array((b.ord - 1)::int, b.n) ORDER BY b.ord), '[]'::jsonb)
              FROM unnest(a.bins) WITH ORDINALITY AS b(n, ord)
             WHERE b.n > 0)
      FROM (
        SELECT count(*) FILTER (WHERE t.status = 'processing' AND t.lease_until > now()) AS processing,
               count(*) FILTER (WHERE t.status = 'processing' AND (t.lease_until IS NULL OR t.lease_until <= now()))
                   AS expired_leases,
               min(t.created_at) FILTER (WHERE t.status = 'processing') AS oldest_processing_created_at,
               count(*) FILTER (WHERE t.status = 'retryable_failed') AS retryable_failed,
               count(*) FILTER (WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown') AS uncertain,
               count(*) FILTER (WHERE t.status = 'failed' AND t.error_class = 'permanent') AS failed_permanent,
               count(*) FILTER (WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent')
                   AS failed_exhausted,
               count(*) FILTER (WHERE t.status IN ('processing', 'retryable_failed')
                                  AND t.created_at < now() - least(greatest(p_long_after_minutes, 1), 525600)
                                                             * interval '1 minute') AS long_unfinished,
               -- rows by attempts 0, 1, ..., 9 and 10 or more
               ARRAY[count(*) FILTER (WHERE t.attempts = 0), count(*) FILTER (WHERE t.attempts = 1),
                     count(*) FILTER (WHERE t.attempts = 2), count(*) FILTER (WHERE t.attempts = 3),
                     count(*) FILTER (WHERE t.attempts = 4), count(*) FILTER (WHERE t.attempts = 5),
                     count(*) FILTER (WHERE t.attempts = 6), count(*) FILTER (WHERE t.attempts = 7),
                     count(*) FILTER (WHERE t.attempts = 8), count(*) FILTER (WHERE t.attempts = 9),
                     count(*) FILTER (WHERE t.attempts >= 10)] AS bins
          FROM %I.task_idempotency t
         WHERE t.status <> 'succeeded'
           AND (p_tenant IS NULL OR split_part(t.idempotency_key, ':', 1) = p_tenant)
           AND (p_operation IS NULL OR split_part(t.idempotency_key, ':', 2) = p_operation)
      ) a
$exact$
$f$, current_schema());
END
$exact_fn$;
