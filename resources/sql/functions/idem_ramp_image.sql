-- idem_ramp_image (schema v33; the history is in git log).
-- A ramp as its audit entries record it (null for a pause that does not ramp): its steps, their
-- length, when it began, its abort threshold and sample, and the step it is at with that step's
-- percentage, begin and end by the server's clock.
CREATE OR REPLACE FUNCTION idem_ramp_image(p idem_pauses)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $$
    SELECT CASE WHEN p.ramp_started_at IS NULL THEN 'null'::jsonb
                ELSE jsonb_build_object('steps', to_jsonb(p.ramp_steps), 'step_ms', p.ramp_step_ms,
                                        'started_at', p.ramp_started_at, 'abort_above', p.ramp_abort_above,
                                        'min_claims', p.ramp_min_claims, 'step', s.step,
                                        'percent', p.ramp_steps[s.step + 1],
                                        'step_began_at', p.ramp_started_at + s.step * p.ramp_step_ms * interval '1 millisecond',
                                        'ends_at', p.until) END
      FROM (SELECT idem_ramp_step(p) AS step) s
$$;

REVOKE ALL ON FUNCTION idem_ramp_image(idem_pauses) FROM PUBLIC;
