-- idem_purge_release (schema v13; the history is in git log).
-- Lets go of run p_run's lock if this session holds it (a run that finished, failed or was
-- cancelled: v12's rule, with v13's key).
CREATE OR REPLACE FUNCTION idem_purge_release(p_run bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $release$
DECLARE
    r idem_purge_runs;
BEGIN
    SELECT * INTO r FROM idem_purge_runs x WHERE x.id = p_run;
    IF NOT FOUND THEN
        RETURN false;
    ELSIF r.lock_key1 IS NULL THEN
        RETURN pg_advisory_unlock(idem_purge_lock_key(p_run));
    ELSIF r.backend_pid IS DISTINCT FROM pg_backend_pid() OR NOT idem_purge_alive(r) THEN
        RETURN false;
    END IF;
    RETURN pg_advisory_unlock(r.lock_key1, r.lock_key2);
END
$release$;

REVOKE ALL ON FUNCTION idem_purge_release(bigint) FROM PUBLIC;
