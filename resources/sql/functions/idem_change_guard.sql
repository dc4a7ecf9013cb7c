-- idem_change_guard (schema v22, changed in v28; the history is in git log).
-- The gate of a change the approval policy may hold for a second person (p_kind: a gated kind of
-- idem_approval_kinds other than 'job', today 'retention' or 'purge'), called by idem_set_retention, idem_clear_retention (p_spec: the change, as
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
-- and refuses anything else with ID004 (ID003 before v28), saying to request the change. ID002 for
-- a kind that is not registered. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_change_guard(p_kind text, p_spec jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $guard$
DECLARE
    k idem_approval_kinds;
    v_scheduled boolean := false;
    v_recorded boolean := false;
BEGIN
    SELECT * INTO k FROM idem_approval_kinds x WHERE x.kind = p_kind AND x.kind <> 'job';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no gated change %', COALESCE(quote_literal(left(p_kind, 64)), 'NULL')
            USING ERRCODE = 'ID002';
    END IF;
    IF NOT k.gated THEN
        RETURN;
    END IF;
    -- The use of an approved request of that kind in this very transaction, once: a purge's run
    -- not begun yet; any other kind's change only with the request's exact spec, not made yet (a
    -- kind added since v28 is marked made here, applied_audit_id 0, for idem_change_use leaves the
    -- change to its caller, in the same transaction).
    IF p_kind = 'purge' THEN
        IF EXISTS (SELECT FROM idem_approval_requests r
                    WHERE r.used_xid = pg_catalog.pg_current_xact_id() AND r.kind = p_kind AND r.state = 'used'
                      AND r.purge_run_id IS NULL) THEN
            RETURN;
        END IF;
    ELSIF p_kind = 'retention' THEN
        IF EXISTS (SELECT FROM idem_approval_requests r
                    WHERE r.used_xid = pg_catalog.pg_current_xact_id() AND r.kind = p_kind AND r.state = 'used'
                      AND r.applied_audit_id IS NULL AND r.spec = p_spec) THEN
            RETURN;
        END IF;
    ELSE
        UPDATE idem_approval_requests r SET applied_audit_id = 0
         WHERE r.id = (SELECT x.id FROM idem_approval_requests x
                        WHERE x.used_xid = pg_catalog.pg_current_xact_id() AND x.kind = p_kind AND x.state = 'used'
                          AND x.applied_audit_id IS NULL AND x.spec = p_spec
                        ORDER BY x.id LIMIT 1);
        IF FOUND THEN
            RETURN;
        END IF;
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
            USING ERRCODE = 'ID004',
                  HINT = 'idemctl retention set ... prints the request; idemctl approvals approve N --spec SHA256'
                         ' --reason ...; idemctl retention apply --request N --spec SHA256';
    END IF;
    IF p_kind = 'purge' THEN
        RAISE EXCEPTION 'manual purges need a second person''s approval (the approval policy): request one'
                        ' (idem_request_purge, idemctl purge), have another login approve it, then run it'
            USING ERRCODE = 'ID004',
                  HINT = 'Scheduled purges (CALL idem_purge_run from pg_cron, with cron.log_run on) keep running. idemctl'
                         ' purge prints the request; idemctl approvals approve N --spec SHA256 --reason ...; idemctl'
                         ' purge --request N --spec SHA256';
    END IF;
    RAISE EXCEPTION '% needs a second person''s approval (the approval policy): request it, have another login'
                    ' approve it, then use it', k.what
        USING ERRCODE = 'ID004', HINT = 'idemctl approvals list; idemctl approvals approve N --spec SHA256 --reason ...';
END
$guard$;

REVOKE ALL ON FUNCTION idem_change_guard(text, jsonb) FROM PUBLIC;
