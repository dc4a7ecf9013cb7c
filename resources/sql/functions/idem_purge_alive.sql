-- idem_purge_alive (schema v13; the history is in git log).
-- Whether purge run r is alive: its backend (backend_pid) still holds the advisory lock under
-- the run's random key (lock_key1, lock_key2), as pg_locks shows to every role (v13).
CREATE OR REPLACE FUNCTION idem_purge_alive(r idem_purge_runs)
RETURNS boolean
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $alive$
BEGIN
    IF r.lock_key1 IS NULL THEN -- a run begun by v12 or earlier: its lock is v9's
        IF pg_try_advisory_lock(idem_purge_lock_key(r.id)) THEN
            PERFORM pg_advisory_unlock(idem_purge_lock_key(r.id));
            RETURN false;
        END IF;
        RETURN true;
    END IF;
    RETURN EXISTS (SELECT FROM pg_locks l
                    WHERE l.locktype = 'advisory' AND l.granted AND l.pid = r.backend_pid
                      AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                      AND l.classid = r.lock_key1::oid AND l.objid = r.lock_key2::oid AND l.objsubid = 2);
END
$alive$;

REVOKE ALL ON FUNCTION idem_purge_alive(idem_purge_runs) FROM PUBLIC;
