-- idem_latency_quantile (schema v17; the history is in git log).
-- The p_q quantile (0 < p_q <= 1) of a histogram as idem_latency_histogram returns it, by nearest
-- rank: the value (idem_latency_value) of the slot that holds the ceil(p_q * n)-th smallest value.
-- NULL for an empty histogram.
CREATE OR REPLACE FUNCTION idem_latency_quantile(p_kind text, p_slots smallint[], p_counts bigint[], p_q double precision)
RETURNS double precision
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path FROM CURRENT
AS $quantile$
    SELECT idem_latency_value(p_kind, min(x.s))
      FROM (SELECT u.s, sum(u.c) OVER (ORDER BY u.s) AS cum, sum(u.c) OVER () AS total
              FROM unnest(p_slots, p_counts) u(s, c)) x
     WHERE p_q > 0 AND p_q <= 1 AND x.cum >= ceil(p_q * x.total)
$quantile$;

REVOKE ALL ON FUNCTION idem_latency_quantile(text, smallint[], bigint[], double precision) FROM PUBLIC;
