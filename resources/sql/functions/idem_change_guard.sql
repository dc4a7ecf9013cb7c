-- idem_change_guard (schema v22; the history is in git log).
-- The gate of a change the approval policy may hold for a second person (p_kind 'retention' or
-- 'purge'), called by idem_set_retention, idem_clear_retention (p_spec: the change, as
-- idem_request_retention writes it) and idem_purge_begin, before they change anything. With the
-- policy's switch off it passes. On, it passes only
--   - the use of an approved request of that kind in this very transaction (idem_change_use marks
--     it used here, then makes the change), a retention change only with the request's exact
--     spec, and each request's change once;
--   - for a purge, a scheduled one: pg_cron (installed in this database, its tables readable by
--     the owner of the Idem schema) runs it. Since v23 only pg_cron's own records say so, never a
--     name a client sets (application_name): its record of the run (cron.job_run_details, cron.log_run
--     on) names this backend (job_pid), is starting or running, and its command is the very
--     statement this session runs (current_query()) and the command of an active job of this
--     login and database in cron.job, which calls idem_purge_run (or idem_purge);
-- and refuses anything else with ID003, saying to request the change. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_change_guard(p_kind text, p_spec jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $guard$
DECLARE
    v_policy idem_approval_policy;
    v_scheduled boolean := false;
    v_recorded boolean := false;
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
        -- Only for this login's active pg_cron job of this database whose command is the very
        -- statement this session runs; then pg_cron's record of the run must name this backend.
        -- pg_cron writes the pid into that record as it connects or as it sends the command (its
        -- versions differ), a moment apart from this statement's start: wait for it, 5 s at most.
        BEGIN
            EXECUTE 'SELECT EXISTS (SELECT FROM cron.job j WHERE j.active AND j.username = session_user'
                    '   AND j.database = pg_catalog.current_database() AND j.command = pg_catalog.current_query()'
                    '   AND j.command ~ ''idem_purge'')'
               INTO v_scheduled;
            FOR i IN 1..100 LOOP
                EXIT WHEN NOT v_scheduled;
                EXECUTE 'SELECT EXISTS (SELECT FROM cron.job_run_details d JOIN cron.job j ON j.jobid = d.jobid'
                        '  WHERE d.job_pid = pg_catalog.pg_backend_pid() AND d.end_time IS NULL'
                        '    AND d.status IN (''starting'', ''connecting'', ''sending'', ''running'')'
                        '    AND d.command = j.command AND d.command = pg_catalog.current_query() AND j.active'
                        '    AND j.username = session_user AND j.database = pg_catalog.current_database())'
                   INTO v_recorded;
                EXIT WHEN v_recorded;
                PERFORM pg_catalog.pg_sleep(0.05);
            END LOOP;
            v_scheduled := v_scheduled AND v_recorded;
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
                  HINT = 'idemctl retention set ... prints the request; idemctl job approve --request N --spec ...;'
                         ' idemctl retention apply --request N --spec ...';
    END IF;
    RAISE EXCEPTION 'manual purges need a second person''s approval (the approval policy): request one'
                    ' (idem_request_purge, idemctl purge), have another login approve it, then run it'
        USING ERRCODE = 'ID003',
              HINT = 'Scheduled purges (CALL idem_purge_run from pg_cron, with cron.log_run on) keep running. idemctl'
                     ' purge prints the request; idemctl job approve --request N --spec ...; idemctl purge --request N'
                     ' --spec ...';
END
$guard$;

REVOKE ALL ON FUNCTION idem_change_guard(text, jsonb) FROM PUBLIC;
