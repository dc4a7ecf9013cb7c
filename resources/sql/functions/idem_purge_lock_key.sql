-- idem_purge_lock_key (schema v9; the history is in git log).
-- The run's session holds this advisory lock from begin to finish; free means the session is gone.
CREATE OR REPLACE FUNCTION idem_purge_lock_key(p_run bigint)
RETURNS bigint
LANGUAGE sql
IMMUTABLE
SET search_path FROM CURRENT
AS $$
    SELECT (hashtext('idem.purge')::bigint << 32) | (p_run & 4294967295)
$$;

REVOKE ALL ON FUNCTION idem_purge_lock_key(bigint) FROM PUBLIC;
