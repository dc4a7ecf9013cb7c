-- idem_job_runner_alive (schema v19; the history is in git log).
-- Whether recovery job j's runner is alive: its backend (runner_pid) still holds the session
-- advisory lock under the job's random keys, as pg_locks shows to every role (the purge's rule,
-- idem_purge_alive). A runner killed, cancelled or disconnected has lost it with its session.
CREATE OR REPLACE FUNCTION idem_job_runner_alive(j idem_jobs)
RETURNS boolean
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $$
    SELECT j.runner_pid IS NOT NULL
       AND EXISTS (SELECT FROM pg_locks l
                    WHERE l.locktype = 'advisory' AND l.granted AND l.pid = j.runner_pid
                      AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                      AND l.classid = j.runner_key1::oid AND l.objid = j.runner_key2::oid AND l.objsubid = 2)
$$;

REVOKE ALL ON FUNCTION idem_job_runner_alive(idem_jobs) FROM PUBLIC;
