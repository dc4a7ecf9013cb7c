-- idem_redriver_seen (schema v25; the history is in git log).
-- A re-driver's presence: worker p_worker (version p_version) re-drives operation p_operation of
-- tenant p_tenant ('*': every tenant) under this login. Called at start and every 10 s or less;
-- online means seen within the last 30 s. Writes only when the row is new, the version changed or
-- last_seen is older than 5 s. outcome: new | seen | unchanged | not_recorded (the login has 1000
-- rows already, none of them unseen for a day: a warning, nothing written). Refused (ID003) when
-- the operation is not registered as re-drivable for that tenant, (42501) when the login may not
-- serve it (idem_redrive_may_serve), and when another login's re-driver of the same name is online.
CREATE OR REPLACE FUNCTION idem_redriver_seen(p_tenant text, p_operation text, p_worker text, p_version text)
RETURNS TABLE (outcome text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $seen$
DECLARE
    c_per_login constant integer := 1000;
    r idem_redrivers%ROWTYPE;
    v_reg idem_redrive_operations%ROWTYPE;
BEGIN
    PERFORM idem_redrive_check_scope(p_tenant, p_operation);
    PERFORM idem_check_worker_text('worker', p_worker);
    PERFORM idem_check_worker_text('version', p_version);
    IF p_tenant = '*' THEN
        SELECT * INTO v_reg FROM idem_redrive_operations o WHERE o.operation = p_operation AND o.tenant = '*';
    ELSE
        SELECT * INTO v_reg FROM idem_redrive_registration(p_tenant, p_operation);
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION '%:% is not registered as re-drivable: register it first (idem_redrive_register)',
            p_tenant, p_operation USING ERRCODE = 'ID004';
    END IF;
    IF NOT idem_redrive_may_serve(v_reg.registered_by) THEN
        RAISE EXCEPTION 'login % may not re-drive %:%: login % registered it', session_user, p_tenant, p_operation,
            v_reg.registered_by
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Re-drive from login %s, or: GRANT %I TO %I;', v_reg.registered_by, v_reg.registered_by,
                                session_user);
    END IF;

    SELECT * INTO r FROM idem_redrivers d
     WHERE d.operation = p_operation AND d.tenant = p_tenant AND d.worker = p_worker;
    IF FOUND THEN
        IF r.db_role <> session_user AND r.last_seen > now() - interval '30 seconds' THEN
            RAISE EXCEPTION 're-driver % of %:% reports under login %, not %', p_worker, p_tenant, p_operation,
                r.db_role, session_user USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF r.db_role = session_user AND r.version = p_version AND r.last_seen > now() - interval '5 seconds' THEN
            RETURN QUERY SELECT 'unchanged'::text;
            RETURN;
        END IF;
        UPDATE idem_redrivers d SET version = p_version, db_role = session_user, last_seen = now()
         WHERE d.operation = p_operation AND d.tenant = p_tenant AND d.worker = p_worker;
        RETURN QUERY SELECT 'seen'::text;
        RETURN;
    END IF;

    -- A new name: the login's rows are bounded, judged one new name at a time.
    PERFORM pg_advisory_xact_lock(hashtext('idem_redriver_seen'), hashtext(session_user));
    IF (SELECT count(*) FROM (SELECT FROM idem_redrivers d WHERE d.db_role = session_user LIMIT c_per_login) n)
       >= c_per_login THEN
        DELETE FROM idem_redrivers d WHERE d.db_role = session_user AND d.last_seen < now() - interval '1 day';
        IF (SELECT count(*) FROM (SELECT FROM idem_redrivers d WHERE d.db_role = session_user LIMIT c_per_login) n)
           >= c_per_login THEN
            RAISE WARNING 're-driver % not recorded: login % has % re-drivers seen within a day already', p_worker,
                session_user, c_per_login;
            RETURN QUERY SELECT 'not_recorded'::text;
            RETURN;
        END IF;
    END IF;
    INSERT INTO idem_redrivers AS d (tenant, operation, worker, version, db_role, first_seen, last_seen)
    VALUES (p_tenant, p_operation, p_worker, p_version, session_user, now(), now())
    ON CONFLICT (operation, tenant, worker) DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY SELECT * FROM idem_redriver_seen(p_tenant, p_operation, p_worker, p_version);
        RETURN;
    END IF;
    RETURN QUERY SELECT 'new'::text;
END
$seen$;

REVOKE ALL ON FUNCTION idem_redriver_seen(text, text, text, text) FROM PUBLIC;
