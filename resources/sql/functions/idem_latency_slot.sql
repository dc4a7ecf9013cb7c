-- idem_latency_slot (schema v17; the history is in git log).
-- The histogram slot of a duration in microseconds: s such that 10^(s/32) < p_us <= 10^((s+1)/32)
-- (upper bounds included, as a Prometheus bucket's le is), 0 up to 1 us (and for NULL), at most
-- 1023. Slots are 7.5 % wide.
CREATE OR REPLACE FUNCTION idem_latency_slot(p_us double precision)
RETURNS smallint
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path FROM CURRENT
AS $slot$
    SELECT CASE WHEN p_us IS NULL OR p_us <= 1 THEN 0
                ELSE least(ceil(32 * log(p_us) - 1e-9) - 1, 1023) END::smallint
$slot$;

REVOKE ALL ON FUNCTION idem_latency_slot(double precision) FROM PUBLIC;
