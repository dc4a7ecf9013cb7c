-- idem_latency_value (schema v17; the history is in git log).
-- What a slot of idem_latency stands for: for 'attempts' the number itself; for the durations
-- ('run', 'tts') the slot's geometric middle, 10^((s+0.5)/32) microseconds, within 3.7 % of any
-- value in the slot.
CREATE OR REPLACE FUNCTION idem_latency_value(p_kind text, p_slot integer)
RETURNS double precision
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path FROM CURRENT
AS $value$
    SELECT CASE WHEN p_slot IS NULL THEN NULL
                WHEN p_kind OPERATOR(pg_catalog.=) 'attempts' THEN p_slot::double precision
                ELSE power(10::double precision, (p_slot + 0.5) / 32) END
$value$;

REVOKE ALL ON FUNCTION idem_latency_value(text, integer) FROM PUBLIC;
