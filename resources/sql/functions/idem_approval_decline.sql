-- idem_approval_decline (schema v28; the history is in git log).
-- The one decline of every gated kind: turns down request p_request while it waits for approval,
-- with a reason. Who may: a login with the approve right, or the login that asked (withdrawing its
-- own request). A recovery job's request declined cancels the job (it never ran: its rows are
-- recorded as skipped, with its closing entry). One audit entry, action 'decline', the request
-- before and after (a job: and the job's closing entry). Only a request waiting for approval is
-- declined: an approved job that is running is cancelled with its action's right (idem_job_cancel,
-- idemctl job cancel), never through the approve right. Refused with nothing written:
--   42501  neither the approve right nor the requester (nor a job's action right)
--   ID003  bad arguments (NULL, a blank reason)
--   ID002  no such request
--   ID004  a request that is not waiting (approved, used, declined; a job that is not waiting);
--          a transaction not READ COMMITTED
CREATE OR REPLACE FUNCTION idem_approval_decline(p_request bigint, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, kind text, job_id bigint, declined_at timestamptz, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $decline$
DECLARE
    r idem_approval_requests;
    j idem_jobs;
    v_lock record;
    v_what text;
    v_before jsonb;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    v_audit bigint;
BEGIN
    IF p_request IS NULL THEN
        RAISE EXCEPTION 'name the request to decline' USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_lock := idem_approval_lock(p_request, 'declined'); -- the job, then the request
    r := v_lock.r;
    j := v_lock.j;
    v_what := v_lock.what;
    IF NOT idem_has_right(idem_caller(), 'approve') AND session_user::text <> r.requested_login
       AND NOT (j.id IS NOT NULL AND idem_has_right(idem_caller(), j.action)) THEN
        RAISE EXCEPTION 'role % may not decline %: that needs the approve right (role %), or to be the login that'
                        ' requested it (%)', idem_caller(), v_what, idem_right_role('approve'), r.requested_login
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF r.state <> 'awaiting_approval' OR (j.id IS NOT NULL AND j.state <> 'awaiting_approval') THEN
        RAISE EXCEPTION '%', format('%s is not waiting for approval: it is %s; only a request waiting for approval'
                                    ' is declined', v_what,
                                    CASE WHEN j.id IS NOT NULL AND r.state <> 'declined' THEN j.state ELSE r.state END)
            USING ERRCODE = 'ID004',
                  HINT = CASE WHEN j.id IS NOT NULL AND j.state = 'active'
                              THEN format('An approved job is stopped by cancelling it, with its action''s right'
                                          ' (idemctl job cancel %s).', j.id)
                              ELSE NULL END;
    END IF;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    v_before := idem_approval_image(r);
    UPDATE idem_approval_requests x
       SET state = 'declined', declined_login = session_user, declined_role = idem_caller(), declined_actor = v_actor,
           declined_reason = p_reason, declined_at = v_now
     WHERE x.id = r.id
    RETURNING x.* INTO r;
    v_audit := audit_append('', 'decline', p_reason, v_actor, v_before,
                            idem_approval_image(r) || jsonb_build_object('event', 'decline'));
    UPDATE idem_approval_requests x SET decline_audit_id = v_audit WHERE x.id = r.id;
    IF j.id IS NOT NULL THEN
        PERFORM idem_job_close(j, 'cancelled', p_reason, p_actor);
    END IF;
    RETURN QUERY SELECT r.id, r.kind, r.job_id, r.declined_at, v_audit;
END
$decline$;

REVOKE ALL ON FUNCTION idem_approval_decline(bigint, text, text) FROM PUBLIC;
