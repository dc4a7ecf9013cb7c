-- idem_job_cancel (schema v19; the history is in git log).
-- Cancels recovery job p_job with reason p_reason: waits for the batch in flight (it holds the
-- job's row) to commit, then, in one transaction, records the rows not yet done as skipped
-- (cancelled), ends the job and appends its closing audit entry (action 'job', event cancel, this
-- reason and actor). Its runner finds it ended at its next batch and stops. Refused: ID003 bad
-- reason or actor; ID002 no such job; ID004 a job that has ended already.
-- v21: the caller (idem_caller) needs the job's action right; 42501 else. v28: the approve right
-- alone no longer cancels (it cancelled active jobs too): an approver turns a job's request down
-- while it waits (idem_approval_decline). A job waiting for approval cancelled here is withdrawn
-- the same way: its request declined (action 'decline'), then the job closed.
CREATE OR REPLACE FUNCTION idem_job_cancel(p_job bigint, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (state text, skipped_cancelled bigint, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $cancel$
DECLARE
    j idem_jobs;
    v_audit bigint;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a job is cancelled in a READ COMMITTED transaction, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID004';
    END IF;
    SELECT * INTO j FROM idem_jobs x WHERE x.id = p_job FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no job %', COALESCE(p_job::text, 'NULL') USING ERRCODE = 'ID002';
    END IF;
    IF NOT idem_has_right(idem_caller(), j.action) THEN
        RAISE EXCEPTION 'role % may not cancel job %: that needs the % right (role %)', idem_caller(), j.id, j.action,
                        idem_right_role(j.action)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = CASE WHEN j.state = 'awaiting_approval'
                              THEN format('A request waiting for approval is turned down with the approve right:'
                                          ' idemctl approvals decline %s --reason ...',
                                          (SELECT r.id FROM idem_approval_requests r WHERE r.job_id = j.id)) END;
    END IF;
    IF j.state NOT IN ('active', 'awaiting_approval') THEN
        RAISE EXCEPTION 'job % has ended already: % at %', j.id, j.state,
                        to_char(j.finished_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') USING ERRCODE = 'ID004';
    END IF;
    IF j.state = 'awaiting_approval' AND EXISTS (SELECT FROM idem_approval_requests r WHERE r.job_id = j.id) THEN
        PERFORM idem_approval_decline((SELECT r.id FROM idem_approval_requests r WHERE r.job_id = j.id), p_reason,
                                      p_actor);
        RETURN QUERY SELECT x.state, x.skipped_cancelled, x.end_audit_id FROM idem_jobs x WHERE x.id = p_job;
        RETURN;
    END IF;
    v_audit := idem_job_close(j, 'cancelled', p_reason, p_actor);
    RETURN QUERY SELECT x.state, x.skipped_cancelled, v_audit FROM idem_jobs x WHERE x.id = p_job;
END
$cancel$;

REVOKE ALL ON FUNCTION idem_job_cancel(bigint, text, text) FROM PUBLIC;
