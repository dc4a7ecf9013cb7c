-- idem_job_detach (schema v19; the history is in git log).
-- This session stops being recovery job p_job's runner: lets go of its advisory lock (at once,
-- whatever becomes of the transaction: a runner that fails calls it before raising) and clears
-- the runner from the job's row. Returns false when this session was not its runner.
CREATE OR REPLACE FUNCTION idem_job_detach(p_job bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '5s'
AS $detach$
DECLARE
    j idem_jobs;
BEGIN
    SELECT * INTO j FROM idem_jobs x WHERE x.id = p_job;
    IF NOT FOUND OR j.runner_pid IS DISTINCT FROM pg_backend_pid() OR NOT idem_job_runner_alive(j) THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_unlock(j.runner_key1, j.runner_key2);
    UPDATE idem_jobs x SET runner_pid = NULL, runner_key1 = NULL, runner_key2 = NULL
     WHERE x.id = p_job AND x.runner_pid = pg_backend_pid() AND x.runner_key1 = j.runner_key1;
    RETURN true;
END
$detach$;

REVOKE ALL ON FUNCTION idem_job_detach(bigint) FROM PUBLIC;
