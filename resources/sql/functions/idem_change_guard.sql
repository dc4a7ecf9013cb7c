-- idem_change_guard (schema v22; the history is in git log).
-- The gate of a change the approval policy may hold for a second person (p_kind 'retention' or
-- 'purge'), called by idem_set_retention, idem_clear_retention (p_spec: the change, as
-- idem_request_retention writes it) and idem_purge_begin, before they change anything. With the
-- policy's switch off it passes. On, it passes only
--   - the use of an approved request of that kind in this very transaction (idem_change_use marks
--     it used here, then makes the change), a retention change only with the request's exact
--     spec, and each request's change once;
--   - for a purge, a scheduled one: pg_cron (installed in this database, its tables readable by
--     the owner of the Idem schema) runs it: its record of the running job (cron.job_run_details,
--     cron.log_run on) names this session, or this is a session pg_cron opened
--     (application_name pg_cron) for a login with an active job here whose command calls
--     idem_purge_run (or idem_purge);
-- and refuses anything else with ID003, saying to request the change. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_change_guard(p_kind text, p_spec jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $guard$
DECLARE
    v_policy idem_approval_policy;
    v_scheduled boolean := false;
BEGIN
    IF p_kind IS NULL OR p_kind NOT IN ('retention', 'purge') THEN
        RAISE EXCEPTION 'a guarded change is retention or purge, not %', COALESCE(quote_literal(p_kind), 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_policy FROM idem_approval_policy;
    IF NOT FOUND OR (p_kind = 'retention' AND NOT v_policy.retention_changes_need_approval)
       OR (p_kind = 'purge' AND NOT v_policy.manual_purges_need_approval) THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT FROM idem_change_requests r
                WHERE r.used_xid = pg_catalog.pg_current_xact_id() AND r.kind = p_kind AND r.state = 'used'
                  AND CASE p_kind WHEN 'retention' THEN r.applied_audit_id IS NULL AND r.spec = p_spec
                                  ELSE r.purge_run_id IS NULL END) THEN
        RETURN;
    END IF;
    IF p_kind = 'purge' AND pg_catalog.to_regclass('cron.job') IS NOT NULL
       AND pg_catalog.to_regclass('cron.job_run_details') IS NOT NULL THEN
        -- pg_cron's record of this session running the job; or, as pg_cron records the run's
        -- backend only once the command is on its way, the session pg_cron opened (its
        -- application_name) for a login with an active job of this database that calls the
        -- purge: by hand, that login could only run what its schedule runs anyway.
        BEGIN
            EXECUTE 'SELECT EXISTS (SELECT FROM cron.job_run_details d WHERE d.job_pid = pg_catalog.pg_backend_pid()'
                    '   AND d.status = ''running'' AND d.command ~ ''idem_purge'')'
                    ' OR (pg_catalog.current_setting(''application_name'') = ''pg_cron'''
                    '     AND EXISTS (SELECT FROM cron.job j WHERE j.active AND j.username = session_user'
                    '                   AND j.database = pg_catalog.current_database() AND j.command ~ ''idem_purge''))'
               INTO v_scheduled;
        EXCEPTION WHEN insufficient_privilege OR undefined_column THEN
            v_scheduled := false;
        END;
        IF v_scheduled THEN
            RETURN;
        END IF;
    END IF;
    IF p_kind = 'retention' THEN
        RAISE EXCEPTION 'retention changes need a second person''s approval (the approval policy): request this one'
                        ' (idem_request_retention, idemctl retention set), have another login approve it, then apply it'
            USING ERRCODE = 'ID003',
                  HINT = 'idemctl retention set ... prints the request; idemctl job approve --request N --sha256 ...;'
                         ' idemctl retention apply --request N --sha256 ...';
    END IF;
    RAISE EXCEPTION 'manual purges need a second person''s approval (the approval policy): request one'
                    ' (idem_request_purge, idemctl purge), have another login approve it, then run it'
        USING ERRCODE = 'ID003',
              HINT = 'Scheduled purges (CALL idem_purge_run from pg_cron) keep running. idemctl purge prints the request;'
                     ' idemctl job approve --request N --sha256 ...; idemctl purge --request N --sha256 ...';
END
$guard$;

REVOKE ALL ON FUNCTION idem_change_guard(text, jsonb) FROM PUBLIC;
