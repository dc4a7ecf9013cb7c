-- idem_pause_retry_after_ms (schema v15; the history is in git log).
-- When a claim turned away by a pause ending at p_until (NULL: until resumed) asks again: in 5 s,
-- or when the pause ends if that is sooner (at least 1 ms), by the server's clock.
CREATE OR REPLACE FUNCTION idem_pause_retry_after_ms(p_until timestamptz)
RETURNS bigint
LANGUAGE sql
STABLE
AS $$
    SELECT CASE WHEN p_until IS NULL THEN 5000::bigint
                ELSE LEAST(5000::bigint,
                         GREATEST(1::bigint,
                             pg_catalog.ceil(pg_catalog.date_part('epoch'::text, p_until OPERATOR(pg_catalog.-) pg_catalog.now())
                                             OPERATOR(pg_catalog.*) 1000::double precision)::bigint)) END
$$;

REVOKE ALL ON FUNCTION idem_pause_retry_after_ms(timestamptz) FROM PUBLIC;
