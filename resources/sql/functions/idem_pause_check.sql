-- idem_pause_check (schema v33; the history is in git log).
-- The pause check of every path that would acquire a key or take it over (claim() at both places,
-- and any statement that claims): the pause in force that turns key p_key away, none when none
-- does. Callers ask idem_pause_may_cover(p_key) first (a catalog lookup, no read) and call this
-- only when it says yes, so while nothing is paused or ramping this is never called.
-- - A plain pause covering the key's tenant and operation turns it away (the longest-lasting
--   first, as idem_pause_covering orders them).
-- - A ramping pause (v33, idemctl resume --ramp) turns away only the keys outside its current
--   step's fraction (idem_ramp_bucket(p_key) >= percent * 100, the step by the server's clock,
--   idem_ramp_step); a key it admits is counted in its step's tally (idem_ramp_tally), which
--   fail() reads to re-pause the scope when admitted keys fail past the ramp's threshold; a
--   caller that only looks (idem_peek_local, before the task runs) passes p_count false, so
--   the statement that then records the key counts it once.
-- - The first claim that reads a ramp at a step not yet audited writes that step's audit entry
--   ('ramp_step'); concurrent claims race for it on the pause row and one wins.
-- Reads idem_pause_tenants first (idem_pause_named), idem_pauses only on a possible match.
CREATE OR REPLACE FUNCTION idem_pause_check(p_key text, p_count boolean DEFAULT true)
RETURNS SETOF idem_pauses
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $check$
DECLARE
    v_tenant text := split_part(p_key, ':', 1);
    v_operation text := split_part(p_key, ':', 2);
    p idem_pauses;
    v_bucket integer;
    v_step integer;
    v_admitted idem_pauses[] := '{}';
    v_steps integer[] := '{}';
    i integer;
BEGIN
    IF NOT idem_pause_named(v_tenant, v_operation) THEN
        RETURN;
    END IF;
    FOR p IN
        SELECT q.* FROM idem_pauses q
         WHERE (q.tenant = v_tenant OR q.tenant = '*') AND (q.operation = v_operation OR q.operation = '*')
           AND (q.until IS NULL OR q.until > now())
         ORDER BY q.ramp_started_at IS NOT NULL, q.until DESC NULLS FIRST
    LOOP
        IF p.ramp_started_at IS NULL THEN
            RETURN NEXT p;
            RETURN;
        END IF;
        v_step := idem_ramp_step(p);
        IF v_step > p.ramp_step_audited THEN
            UPDATE idem_pauses q SET ramp_step_audited = v_step
             WHERE q.tenant = p.tenant AND q.operation = p.operation AND q.ramp_started_at = p.ramp_started_at
               AND q.ramp_step_audited < v_step;
            IF FOUND THEN
                PERFORM audit_append('', 'ramp_step',
                    format('ramp step %s of %s: %s %% of keys admitted', v_step + 1, cardinality(p.ramp_steps),
                           p.ramp_steps[v_step + 1]),
                    'ramp', jsonb_build_object('tenant', p.tenant, 'operation', p.operation, 'ramp', idem_ramp_image(p),
                                               'step', p.ramp_step_audited),
                    jsonb_build_object('tenant', p.tenant, 'operation', p.operation, 'ramp', idem_ramp_image(p),
                                       'step', v_step));
            END IF;
        END IF;
        v_bucket := COALESCE(v_bucket, idem_ramp_bucket(p_key));
        IF v_bucket >= p.ramp_steps[v_step + 1] * 100 THEN
            RETURN NEXT p;
            RETURN;
        END IF;
        v_admitted := v_admitted || p;
        v_steps := v_steps || v_step;
    END LOOP;
    -- Admitted by every ramp that covers the key: counted in each one's step.
    FOR i IN 1 .. CASE WHEN p_count THEN cardinality(v_admitted) ELSE 0 END LOOP
        INSERT INTO idem_ramp_tally AS t (tenant, operation, step, slot, claimed)
        VALUES (v_admitted[i].tenant, v_admitted[i].operation, v_steps[i], v_bucket % 16, 1)
        ON CONFLICT (tenant, operation, step, slot) DO UPDATE SET claimed = t.claimed + 1;
    END LOOP;
END
$check$;

REVOKE ALL ON FUNCTION idem_pause_check(text, boolean) FROM PUBLIC;
