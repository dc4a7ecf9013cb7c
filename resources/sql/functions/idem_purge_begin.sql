-- idem_purge_begin (schema v9, changed in v13, v22; the history is in git log).
-- Starts a run: closes runs whose session is gone (each with its audit entry), records this one
-- and takes its session lock. Returns the run's id. Since v22, with the approval policy's
-- manual_purges_need_approval on, only for the use of an approved request or a scheduled purge
-- (idem_change_guard).
CREATE OR REPLACE FUNCTION idem_purge_begin(p_reason text DEFAULT 'purge', p_actor text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '100ms'
AS $begin$
DECLARE
    r idem_purge_runs;
    v_old idem_purge_runs;
    v_run bigint;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_k1 integer;
    v_k2 integer;
BEGIN
    PERFORM audit_check_reason(p_reason, p_actor);
    PERFORM idem_change_guard('purge', NULL);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a purge runs in READ COMMITTED transactions, not %', current_setting('transaction_isolation')
            USING ERRCODE = 'ID003';
    END IF;
    -- Only a run that is not alive is locked and closed (SKIP LOCKED: another run's begin may be
    -- closing it right now).
    FOR v_old IN SELECT * FROM idem_purge_runs x WHERE x.state = 'running' ORDER BY x.id LOOP
        IF NOT idem_purge_alive(v_old) THEN
            SELECT * INTO r FROM idem_purge_runs x WHERE x.id = v_old.id AND x.state = 'running' FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                PERFORM idem_purge_close(r, 'abandoned');
            END IF;
        END IF;
    END LOOP;
    LOOP
        v_k1 := ('x' || substr(md5(gen_random_uuid()::text), 1, 8))::bit(32)::integer & 2147483647;
        v_k2 := ('x' || substr(md5(gen_random_uuid()::text), 1, 8))::bit(32)::integer & 2147483647;
        EXIT WHEN pg_try_advisory_lock(v_k1, v_k2);
    END LOOP;
    INSERT INTO idem_purge_runs (db_role, actor, application, reason, backend_pid, lock_key1, lock_key2)
    VALUES (session_user, CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END,
            COALESCE(current_setting('application_name', true), ''), p_reason, pg_backend_pid(), v_k1, v_k2)
    RETURNING id INTO v_run;
    RETURN v_run;
END
$begin$;

REVOKE ALL ON FUNCTION idem_purge_begin(text, text) FROM PUBLIC;
