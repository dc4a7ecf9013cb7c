-- idem_exact_stats (schema v8, changed in v11, v13, with v21; the history is in git log).
-- The exact figures, each defined here once. Processing and retryable rows first seen more
-- than p_long_after_minutes ago are long-unfinished (work still in flight; failed rows have
-- their own figures). One pass over the unfinished rows (task_idempotency_unfinished_idx,
-- covering since v4): its cost follows the unfinished set, which is why no tick runs it.
-- Leases and long-unfinished are judged at the data's time (idem_data_time(): a lagging
-- standby's replay point), as idem_live_stats judges them: the two never disagree on a standby.
-- The table is named with @extschema@ (migrate writes the schema's name there) and every
-- operator and function in pg_catalog, not with SET search_path: so it stays inlinable and
-- EXPLAIN of a caller shows (and tests check) the index-only scan it makes, and nothing resolves
-- through a caller's path. Callers set max_parallel_workers_per_gather = 0 for it.
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
                                             AND t.lease_until OPERATOR(pg_catalog.>) d.at) AS processing,
               pg_catalog.count(*) FILTER (WHERE t.status OPERATOR(pg_catalog.=) 'processing'::text
                                             AND (t.lease_until IS NULL
                                                  OR t.lease_until OPERATOR(pg_catalog.<=) d.at))
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
                                             AND t.created_at OPERATOR(pg_catalog.<) (d.at
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
          FROM (SELECT @extschema@.idem_data_time() AS at) d, @extschema@.task_idempotency t
         WHERE t.status OPERATOR(pg_catalog.<>) 'succeeded'::text
           AND (p_tenant IS NULL
                OR pg_catalog.split_part(t.idempotency_key, ':'::text, 1) OPERATOR(pg_catalog.=) p_tenant)
           AND (p_operation IS NULL
                OR pg_catalog.split_part(t.idempotency_key, ':'::text, 2) OPERATOR(pg_catalog.=) p_operation)
      ) a
$exact$;

REVOKE ALL ON FUNCTION idem_exact_stats(text, text, integer) FROM PUBLIC;
