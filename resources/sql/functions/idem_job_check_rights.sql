-- idem_job_check_rights (schema v21; the history is in git log).
-- Before a runner attaches to job j (p_when 'run') and before each of its batches ('batch'):
-- 42501 in words unless the caller (idem_caller) holds the job's action right, and so does the
-- role that started it (starter_role; db_role for a job of v19): a job's rows are applied with
-- its starter's rights. On attach, a job that needs approval must hold an approval of its exact
-- spec that has not expired (ID004 in words else). Changes nothing.
CREATE OR REPLACE FUNCTION idem_job_check_rights(j idem_jobs, p_when text)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $$
DECLARE
    v_starter name := COALESCE(j.starter_role, j.db_role)::name;
    r idem_approval_requests;
BEGIN
    PERFORM idem_require_right(j.action, format('run job %s (a %s job)', j.id, j.action));
    IF NOT idem_has_right(v_starter, j.action) THEN
        RAISE EXCEPTION 'job % was started by role %, which no longer holds the % right (role %): its rows are applied'
                        ' with its starter''s rights, so it cannot run', j.id, v_starter, j.action, idem_right_role(j.action)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Cancel it (idemctl job cancel %s), or grant the right again: GRANT %I TO %I;', j.id,
                                idem_right_role(j.action), v_starter);
    END IF;
    IF p_when = 'run' AND j.needs_approval AND j.state = 'active' THEN
        -- v28: its approval is its request's (idem_approval_requests).
        SELECT * INTO r FROM idem_approval_requests x WHERE x.job_id = j.id;
        IF r.approved_at IS NULL OR r.spec_sha256 IS DISTINCT FROM j.spec_sha256
           OR j.spec_sha256 IS DISTINCT FROM encode(sha256(convert_to(idem_job_spec(j)::text, 'UTF8')), 'hex') THEN
            RAISE EXCEPTION 'job % has no approval of its spec: it cannot run', j.id USING ERRCODE = 'ID004';
        END IF;
        IF r.approval_expires_at <= clock_timestamp() THEN
            RAISE EXCEPTION 'job %''s approval by % expired at %: it cannot start or resume under it', j.id,
                            r.approved_login, to_char(r.approval_expires_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                USING ERRCODE = 'ID004',
                      HINT = format('Cancel it (idemctl job cancel %s) and start it again: the new job matches the rows'
                                    ' as they are now and needs a new approval.', j.id);
        END IF;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION idem_job_check_rights(idem_jobs, text) FROM PUBLIC;
