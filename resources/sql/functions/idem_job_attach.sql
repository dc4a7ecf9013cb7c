-- idem_job_attach (schema v19; the history is in git log).
-- Makes this session the runner of recovery job p_job (NULL: the oldest active job nobody is
-- running; then NULL when there is none): takes a session advisory lock under two random keys
-- and records them with this backend's pid, role, p_actor and application in the job's row. One
-- runner per job: while another session's runner is alive (idem_job_runner_alive) the job is
-- refused with ID004 naming it. A runner that died (killed, cancelled, disconnected) lost its
-- lock with its session, so anyone with idem_operator attaches and the job goes on from its last
-- committed batch. Attaching again from the runner's own session changes nothing. Returns the job.
-- v21: the caller (idem_caller) and the job's starter both need the job's action right (42501);
-- a job that needed approval runs only under its approval, until it expires (ID004 in words
-- after). With p_job NULL, jobs the caller may not run and expired approvals are passed over.
CREATE OR REPLACE FUNCTION idem_job_attach(p_job bigint, p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $attach$
DECLARE
    j idem_jobs;
    v_candidate idem_jobs;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_k1 integer;
    v_k2 integer;
BEGIN
    IF char_length(v_actor) > 256 THEN
        RAISE EXCEPTION 'the actor name is longer than 256 characters' USING ERRCODE = 'ID003';
    END IF;
    IF p_job IS NULL THEN
        FOR v_candidate IN SELECT * FROM idem_jobs x WHERE x.state = 'active' ORDER BY x.id LOOP
            CONTINUE WHEN idem_job_runner_alive(v_candidate);
            CONTINUE WHEN NOT idem_has_right(idem_caller(), v_candidate.action)
                          OR NOT idem_has_right(COALESCE(v_candidate.starter_role, v_candidate.db_role)::name,
                                                v_candidate.action)
                          OR (v_candidate.needs_approval
                              AND NOT EXISTS (SELECT FROM idem_approval_requests r
                                               WHERE r.job_id = v_candidate.id
                                                 AND r.approval_expires_at > clock_timestamp()));
            SELECT * INTO j FROM idem_jobs x WHERE x.id = v_candidate.id AND x.state = 'active' FOR UPDATE SKIP LOCKED;
            EXIT WHEN FOUND AND NOT idem_job_runner_alive(j);
            j := NULL;
        END LOOP;
        IF j.id IS NULL THEN
            RETURN NULL;
        END IF;
    ELSE
        SELECT * INTO j FROM idem_jobs x WHERE x.id = p_job FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'there is no job %', p_job USING ERRCODE = 'ID002';
        END IF;
    END IF;
    IF j.state = 'awaiting_approval' THEN
        RAISE EXCEPTION 'job % is waiting for approval by another login holding the approve right: it runs once'
                        ' approved', j.id
            USING ERRCODE = 'ID004',
                  HINT = format('A login with the approve right (role idem_may_approve) runs idemctl approvals approve %s'
                                ' --spec %s --reason ...; then idemctl job resume %s runs it.',
                                (SELECT r.id FROM idem_approval_requests r WHERE r.job_id = j.id), j.spec_sha256, j.id);
    ELSIF j.state <> 'active' THEN
        RAISE EXCEPTION 'job % has ended: % at %', j.id, j.state,
                        to_char(j.finished_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') USING ERRCODE = 'ID004';
    END IF;
    PERFORM idem_job_check_rights(j, 'run');
    IF idem_job_runner_alive(j) THEN
        IF j.runner_pid = pg_backend_pid() THEN
            RETURN j.id;
        END IF;
        RAISE EXCEPTION 'job % is being run by another session: pid %, role %, %, since %', j.id, j.runner_pid,
                        j.runner_role, j.runner_actor, to_char(j.runner_since, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            USING ERRCODE = 'ID004',
                  HINT = 'One runner per job. idemctl job status shows its progress; if that session hangs, ending it'
                         || ' (pg_terminate_backend) lets anyone resume the job from its last batch.';
    END IF;
    LOOP
        v_k1 := ('x' || substr(md5(gen_random_uuid()::text), 1, 8))::bit(32)::integer & 2147483647;
        v_k2 := ('x' || substr(md5(gen_random_uuid()::text), 1, 8))::bit(32)::integer & 2147483647;
        EXIT WHEN pg_try_advisory_lock(v_k1, v_k2);
    END LOOP;
    UPDATE idem_jobs x
       SET runner_pid = pg_backend_pid(), runner_key1 = v_k1, runner_key2 = v_k2, runner_role = session_user,
           runner_actor = CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END,
           runner_application = COALESCE(current_setting('application_name', true), ''),
           runner_since = clock_timestamp(), attaches = x.attaches + 1
     WHERE x.id = j.id;
    RETURN j.id;
END
$attach$;

REVOKE ALL ON FUNCTION idem_job_attach(bigint, text) FROM PUBLIC;
