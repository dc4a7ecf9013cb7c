-- idem_latency_percentiles (schema v17; the history is in git log).
-- p50, p95 and p99 (nearest rank, each within 3.7 % of the exact value for durations; exact for
-- attempts) and the mean, of the folded minutes in [p_from, p_to), grouped as
-- idem_latency_histogram groups them. Durations in milliseconds. What `idemctl latency` and the
-- console show.
CREATE OR REPLACE FUNCTION idem_latency_percentiles(p_from timestamptz, p_to timestamptz, p_tenant text DEFAULT NULL,
                                                    p_operation text DEFAULT NULL, p_by_operation boolean DEFAULT true,
                                                    p_per_minute boolean DEFAULT false)
RETURNS TABLE (bucket timestamptz, operation text, kind text, n bigint, mean double precision,
               p50 double precision, p95 double precision, p99 double precision)
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $percentiles$
    SELECT h.bucket, h.operation, h.kind, h.n,
           h.total::double precision / h.n / CASE WHEN h.kind = 'attempts' THEN 1 ELSE 1000 END,
           idem_latency_quantile(h.kind, h.slots, h.counts, 0.50) / CASE WHEN h.kind = 'attempts' THEN 1 ELSE 1000 END,
           idem_latency_quantile(h.kind, h.slots, h.counts, 0.95) / CASE WHEN h.kind = 'attempts' THEN 1 ELSE 1000 END,
           idem_latency_quantile(h.kind, h.slots, h.counts, 0.99) / CASE WHEN h.kind = 'attempts' THEN 1 ELSE 1000 END
      FROM idem_latency_histogram(p_from, p_to, p_tenant, p_operation, p_by_operation, p_per_minute) h
$percentiles$;

REVOKE ALL ON FUNCTION idem_latency_percentiles(timestamptz, timestamptz, text, text, boolean, boolean) FROM PUBLIC;
