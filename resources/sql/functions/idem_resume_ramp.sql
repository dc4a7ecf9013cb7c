-- idem_resume_ramp (schema v33; the history is in git log).
-- Resumes the pause of exactly this scope (tenant and operation as it was paused, '*' included)
-- in steps: p_steps are the percentages of keys admitted step by step (2 to 20 of them, rising,
-- each 1 to 100, the last 100), each step lasting p_step_ms (1 s to 24 h) from now by the
-- server's clock. Which keys a step admits is decided by the key's hash (idem_ramp_bucket), so a
-- key is either in or out and stays in at every later step. When a step has admitted at least
-- p_min_claims claims and more than p_abort_above (0 to 1) of them failed, fail() pauses the
-- scope again (idem_ramp_failed, audited 'ramp_abort'). The pause row carries the ramp; its until
-- becomes the start of the last step, after which it pauses nothing (listed as ended, lifted by
-- idemctl resume like any pause past its end). One audit entry, action 'ramp', before: the pause,
-- after: the pause and the ramp's schedule. Needs what idem_resume needs (granted with it).
-- ID002 when the scope is not paused, ID004 when its pause has ended already (resume it instead).
CREATE OR REPLACE FUNCTION idem_resume_ramp(p_tenant text, p_operation text, p_steps integer[], p_step_ms bigint,
                                            p_abort_above double precision, p_min_claims integer, p_reason text,
                                            p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, tenant text, operation text, steps integer[], step_ms bigint, started_at timestamptz,
               ends_at timestamptz, abort_above double precision, min_claims integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $ramp$
DECLARE
    v_old idem_pauses;
    v_new idem_pauses;
    v_actor text := btrim(COALESCE(p_actor, ''));
    i integer;
BEGIN
    PERFORM idem_pause_check_scope(p_tenant, p_operation);
    PERFORM audit_check_reason(p_reason, p_actor);
    IF p_steps IS NULL OR cardinality(p_steps) NOT BETWEEN 2 AND 20 OR array_ndims(p_steps) <> 1 THEN
        RAISE EXCEPTION 'a ramp has 2 to 20 steps, not %', COALESCE(cardinality(p_steps)::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    FOR i IN 1 .. cardinality(p_steps) LOOP
        IF p_steps[i] IS NULL OR p_steps[i] NOT BETWEEN 1 AND 100 OR (i > 1 AND p_steps[i] <= p_steps[i - 1]) THEN
            RAISE EXCEPTION 'a ramp''s steps are rising percentages from 1 to 100, not %', p_steps USING ERRCODE = 'ID003';
        END IF;
    END LOOP;
    IF p_steps[cardinality(p_steps)] <> 100 THEN
        RAISE EXCEPTION 'a ramp''s last step admits 100 %% of keys, not %', p_steps[cardinality(p_steps)]
            USING ERRCODE = 'ID003';
    END IF;
    IF p_step_ms IS NULL OR p_step_ms NOT BETWEEN 1000 AND 86400000 THEN
        RAISE EXCEPTION 'a ramp step lasts 1000 to 86400000 ms (1 s to 24 h), not %', COALESCE(p_step_ms::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_abort_above IS NULL OR NOT (p_abort_above > 0 AND p_abort_above <= 1) THEN
        RAISE EXCEPTION 'the abort threshold is a failure rate above 0 and at most 1, not %',
            COALESCE(p_abort_above::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_min_claims IS NULL OR p_min_claims NOT BETWEEN 1 AND 1000000 THEN
        RAISE EXCEPTION 'a step needs 1 to 1000000 admitted claims before it may abort, not %',
            COALESCE(p_min_claims::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;

    SELECT * INTO v_old FROM idem_pauses p WHERE p.tenant = p_tenant AND p.operation = p_operation FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no pause of tenant % and operation %', quote_literal(p_tenant),
            quote_literal(p_operation) USING ERRCODE = 'ID002',
            HINT = 'A ramp resumes a pause with the tenant and operation it was set with (''*'' included): idemctl pauses lists them.';
    END IF;
    IF v_old.until IS NOT NULL AND v_old.until <= now() THEN
        RAISE EXCEPTION 'the pause of tenant % and operation % has ended already (at %): nothing is held back to ramp',
            quote_literal(p_tenant), quote_literal(p_operation), v_old.until USING ERRCODE = 'ID004',
            HINT = 'Lift it with idemctl resume, or pause again first.';
    END IF;
    DELETE FROM idem_ramp_tally t WHERE t.tenant = p_tenant AND t.operation = p_operation;
    UPDATE idem_pauses p
       SET ramp_steps = p_steps::smallint[], ramp_step_ms = p_step_ms, ramp_started_at = now(),
           ramp_abort_above = p_abort_above, ramp_min_claims = p_min_claims, ramp_step_audited = 0,
           ramp_aborted_at = NULL,
           until = now() + (cardinality(p_steps) - 1) * p_step_ms * interval '1 millisecond', changed_at = now()
     WHERE p.tenant = p_tenant AND p.operation = p_operation
    RETURNING p.* INTO v_new;
    audit_id := audit_append('', 'ramp', p_reason, v_actor,
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation,
                                                'pause', idem_pause_image(v_old), 'ramp', idem_ramp_image(v_old)),
                             jsonb_build_object('tenant', p_tenant, 'operation', p_operation,
                                                'pause', idem_pause_image(v_new), 'ramp', idem_ramp_image(v_new)));
    UPDATE idem_pauses p SET audit_id = idem_resume_ramp.audit_id
     WHERE p.tenant = p_tenant AND p.operation = p_operation;
    tenant := p_tenant;
    operation := p_operation;
    steps := p_steps;
    step_ms := p_step_ms;
    started_at := v_new.ramp_started_at;
    ends_at := v_new.until;
    abort_above := p_abort_above;
    min_claims := p_min_claims;
    RETURN NEXT;
END
$ramp$;

REVOKE ALL ON FUNCTION idem_resume_ramp(text, text, integer[], bigint, double precision, integer, text, text) FROM PUBLIC;
