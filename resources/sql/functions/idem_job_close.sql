-- idem_job_close (schema v19; the history is in git log).
-- Ends recovery job j (its row locked by the caller): 'finished' when no row is left to do, or
-- 'cancelled' with p_reason by p_actor, the rows not yet done then recorded as skipped
-- (cancelled). Appends the job's closing audit entry (action 'job': the job before and after,
-- event finish or cancel; a cancel's entry carries its reason, a finish's the job's) and returns it.
CREATE OR REPLACE FUNCTION idem_job_close(j idem_jobs, p_state text, p_reason text DEFAULT NULL,
                                          p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $close$
DECLARE
    v_after idem_jobs;
    v_left bigint;
    v_audit bigint;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_state = 'cancelled' THEN
        UPDATE idem_job_items i SET state = 'skipped', why = 'cancelled', done_at = clock_timestamp()
         WHERE i.job_id = j.id AND i.state = 'pending';
        GET DIAGNOSTICS v_left = ROW_COUNT;
        UPDATE idem_jobs x
           SET state = 'cancelled', skipped_cancelled = x.skipped_cancelled + v_left, finished_at = clock_timestamp(),
               cancelled_by = format('%s (%s)', session_user, CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END),
               cancel_reason = p_reason
         WHERE x.id = j.id
        RETURNING * INTO v_after;
    ELSE
        UPDATE idem_jobs x SET state = 'finished', finished_at = clock_timestamp() WHERE x.id = j.id
        RETURNING * INTO v_after;
    END IF;
    v_audit := audit_append('', 'job', CASE WHEN p_state = 'cancelled' THEN p_reason ELSE j.reason END,
                            CASE WHEN p_state = 'cancelled' THEN p_actor ELSE COALESCE(j.runner_actor, j.actor) END,
                            idem_job_image(j),
                            idem_job_image(v_after)
                            || jsonb_build_object('event', CASE WHEN p_state = 'cancelled' THEN 'cancel' ELSE 'finish' END));
    UPDATE idem_jobs x SET end_audit_id = v_audit WHERE x.id = j.id;
    RETURN v_audit;
END
$close$;

REVOKE ALL ON FUNCTION idem_job_close(idem_jobs, text, text, text) FROM PUBLIC;
