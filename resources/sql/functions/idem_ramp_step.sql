-- idem_ramp_step (schema v33; the history is in git log).
-- The step a ramping pause is at by the server's clock: 0 while its first step runs, then one more
-- every ramp_step_ms, at most the last (whose percentage is 100, when the ramp is over); NULL for a
-- pause that does not ramp. Computed where it is read: no runner advances a ramp. Readers may call
-- it (idem_pause_list, run as the reader, reads the step with it).
CREATE OR REPLACE FUNCTION idem_ramp_step(p @extschema@.idem_pauses)
RETURNS integer
LANGUAGE sql
STABLE
AS $step$
    SELECT CASE WHEN p.ramp_started_at IS NULL THEN NULL::integer
                ELSE LEAST(pg_catalog.cardinality(p.ramp_steps) OPERATOR(pg_catalog.-) 1,
                         GREATEST(0, pg_catalog.floor(
                             pg_catalog.date_part('epoch'::text, pg_catalog.now() OPERATOR(pg_catalog.-) p.ramp_started_at)
                             OPERATOR(pg_catalog.*) 1000::double precision
                             OPERATOR(pg_catalog./) p.ramp_step_ms::double precision)::integer)) END
$step$;

REVOKE ALL ON FUNCTION idem_ramp_step(@extschema@.idem_pauses) FROM PUBLIC;
