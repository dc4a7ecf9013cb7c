-- idem_ramp_failed (schema v33; the history is in git log).
-- fail() calls it for a failed attempt of key p_key when idem_pause_may_cover(p_key) says a pause
-- may cover it (a catalog lookup: nothing is read while nothing is paused or ramping). For each
-- ramping pause in force that admits the key at its current step (idem_pause_check's rule), the
-- failure is counted in the step's tally, and when the step has admitted at least ramp_min_claims
-- claims and its failures over its claims exceed ramp_abort_above, the scope is paused again
-- (until resumed, the ramp's columns cleared, its reason saying why) with one audit entry,
-- 'ramp_abort', before: the ramp, after: the pause and the step's figures. Concurrent failures race
-- for the abort on the pause row; one wins. Returns how many ramps it aborted.
CREATE OR REPLACE FUNCTION idem_ramp_failed(p_key text)
RETURNS integer
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $failed$
DECLARE
    v_tenant text := split_part(p_key, ':', 1);
    v_operation text := split_part(p_key, ':', 2);
    p idem_pauses;
    v_new idem_pauses;
    v_bucket integer;
    v_step integer;
    v_claimed bigint;
    v_failed bigint;
    v_reason text;
    v_aborted integer := 0;
    v_audit bigint;
BEGIN
    IF NOT idem_pause_named(v_tenant, v_operation) THEN
        RETURN 0;
    END IF;
    FOR p IN
        SELECT q.* FROM idem_pauses q
         WHERE (q.tenant = v_tenant OR q.tenant = '*') AND (q.operation = v_operation OR q.operation = '*')
           AND q.ramp_started_at IS NOT NULL AND q.until > now()
         ORDER BY q.tenant, q.operation
    LOOP
        v_step := idem_ramp_step(p);
        v_bucket := COALESCE(v_bucket, idem_ramp_bucket(p_key));
        CONTINUE WHEN v_bucket >= p.ramp_steps[v_step + 1] * 100;
        INSERT INTO idem_ramp_tally AS t (tenant, operation, step, slot, failed)
        VALUES (p.tenant, p.operation, v_step, v_bucket % 16, 1)
        ON CONFLICT (tenant, operation, step, slot) DO UPDATE SET failed = t.failed + 1;
        SELECT COALESCE(sum(t.claimed), 0), COALESCE(sum(t.failed), 0) INTO v_claimed, v_failed
          FROM idem_ramp_tally t WHERE t.tenant = p.tenant AND t.operation = p.operation AND t.step = v_step;
        CONTINUE WHEN v_claimed < p.ramp_min_claims OR v_failed::double precision / v_claimed <= p.ramp_abort_above;
        -- The audit chain is appended under READ COMMITTED only; a failure recorded at another
        -- level is counted, and the next one recorded at READ COMMITTED aborts.
        CONTINUE WHEN current_setting('transaction_isolation') <> 'read committed';
        v_reason := format('ramp aborted at step %s of %s (%s %% of keys): %s of %s admitted claims failed (%s %%, above %s %%)',
                           v_step + 1, cardinality(p.ramp_steps), p.ramp_steps[v_step + 1], v_failed, v_claimed,
                           round((100.0 * v_failed / v_claimed)::numeric, 1),
                           round((100.0 * p.ramp_abort_above)::numeric, 1));
        UPDATE idem_pauses q
           SET reason = v_reason, paused_by = format('%s (ramp)', session_user), changed_at = now(), until = NULL,
               ramp_steps = NULL, ramp_step_ms = NULL, ramp_started_at = NULL, ramp_abort_above = NULL,
               ramp_min_claims = NULL, ramp_step_audited = NULL, ramp_aborted_at = now()
         WHERE q.tenant = p.tenant AND q.operation = p.operation AND q.ramp_started_at = p.ramp_started_at
        RETURNING q.* INTO v_new;
        CONTINUE WHEN NOT FOUND;
        v_audit := audit_append('', 'ramp_abort', v_reason, 'ramp',
                                jsonb_build_object('tenant', p.tenant, 'operation', p.operation,
                                                   'pause', idem_pause_image(p), 'ramp', idem_ramp_image(p)),
                                jsonb_build_object('tenant', p.tenant, 'operation', p.operation,
                                                   'pause', idem_pause_image(v_new),
                                                   'step', v_step, 'percent', p.ramp_steps[v_step + 1],
                                                   'claimed', v_claimed, 'failed', v_failed,
                                                   'abort_above', p.ramp_abort_above, 'failed_key', p_key));
        UPDATE idem_pauses q SET audit_id = v_audit WHERE q.tenant = p.tenant AND q.operation = p.operation;
        v_aborted := v_aborted + 1;
    END LOOP;
    RETURN v_aborted;
END
$failed$;

REVOKE ALL ON FUNCTION idem_ramp_failed(text) FROM PUBLIC;
