-- idem_report_version (schema v18, changed in v24, v25; the history is in git log).
-- What a worker calls when it starts and when it reconnects (never per task): the version string
-- its build carries, under a name that stays the same across its restarts (host and service, say).
-- Returns what came of it:
--   unchanged   the worker's recorded version is this one: one read, nothing written
--   new_worker  a name not seen before: its row is written
--   changed     the worker ran another version (previous_version): its row is updated
-- and deploy_id, the idem_deploys row this report made when the fleet had never reported the
-- version before (a deploy: idem_events() lists it, action 'deploy'), else NULL. See
-- 0018_worker_versions.sql for what counts as a deploy and its old version.
--   not_recorded (v24) a name not seen before, but the login has named 200 new workers within
--               the hour already: nothing written, a WARNING
-- Bounds per login (session_user), v24: at most 200 new worker names and 20 deploys an hour, so
-- no worker login can make the tables grow without limit or flood the charts' marks. A deploy
-- past the bound is coalesced into the login's newest deploy (coalesced + 1, its version in
-- last_coalesced_version; idem_events says so) and deploy_id is NULL, with a WARNING. Old rows go
-- with the counter upkeep (idem_deploys_expire).
-- Worker and version: 1 to 200 characters, no leading or trailing space, a visible character
-- (audit_reason_blank), no control or format character (C0, DEL, C1, U+2028/U+2029, category Cf:
-- core/utf8.cpp isDisplayControl holds the same list); NULL or anything else is ID003, nothing
-- written.
CREATE OR REPLACE FUNCTION idem_report_version(p_worker text, p_version text)
RETURNS TABLE (outcome text, previous_version text, deploy_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $report$
DECLARE
    c_new_workers_per_hour constant integer := 200;
    c_deploys_per_hour constant integer := 20;
    v_old text;
    v_from text;
    v_what text;
BEGIN
    FOREACH v_what IN ARRAY ARRAY['worker', 'version'] LOOP
        PERFORM idem_check_worker_text(v_what, CASE v_what WHEN 'worker' THEN p_worker ELSE p_version END);
    END LOOP;

    -- The report of every start and reconnect: a read by primary key, nothing written.
    SELECT w.version INTO v_old FROM idem_worker_versions w WHERE w.worker = p_worker;
    IF FOUND AND v_old = p_version THEN
        RETURN QUERY SELECT 'unchanged'::text, v_old, NULL::bigint;
        RETURN;
    END IF;

    -- Something changes: the login's bounds are judged one report at a time (a lock of this
    -- login's reports for the rest of the transaction), over its rows of the last hour.
    PERFORM pg_advisory_xact_lock(hashtext('idem_report_version'), hashtext(session_user));
    IF v_old IS NULL AND (SELECT count(*) FROM (SELECT FROM idem_worker_versions w
                                                 WHERE w.db_role = session_user AND w.first_seen > now() - interval '1 hour'
                                                 LIMIT c_new_workers_per_hour) n) >= c_new_workers_per_hour THEN
        RAISE WARNING 'worker % not recorded: login % named % new workers within the hour already', p_worker,
            session_user, c_new_workers_per_hour;
        RETURN QUERY SELECT 'not_recorded'::text, NULL::text, NULL::bigint;
        RETURN;
    END IF;

    -- The old version of a deploy by a worker new by name: the version most
    -- recently taken up by another worker (read before this worker's row is written).
    IF v_old IS NULL THEN
        SELECT w.version INTO v_from FROM idem_worker_versions w WHERE w.worker <> p_worker
         ORDER BY w.since DESC LIMIT 1;
    END IF;
    INSERT INTO idem_worker_versions AS w (worker, version, first_seen, since, db_role)
    VALUES (p_worker, p_version, now(), now(), session_user)
    ON CONFLICT (worker) DO NOTHING;
    IF FOUND THEN
        outcome := 'new_worker';
        previous_version := NULL;
    ELSE
        -- The row exists (or a report of the same name committed it meanwhile): lock it and
        -- decide from what it holds now.
        SELECT w.version INTO v_old FROM idem_worker_versions w WHERE w.worker = p_worker FOR UPDATE;
        IF v_old = p_version THEN
            RETURN QUERY SELECT 'unchanged'::text, v_old, NULL::bigint;
            RETURN;
        END IF;
        UPDATE idem_worker_versions w SET version = p_version, since = now(), db_role = session_user
         WHERE w.worker = p_worker;
        outcome := 'changed';
        previous_version := v_old;
        v_from := v_old;
    END IF;

    -- A version the fleet has not reported before is a deploy, once: a concurrent first report of
    -- the same version waits on the unique index for this one and then writes nothing. Past the
    -- login's bound it is coalesced into the login's newest deploy instead.
    IF NOT EXISTS (SELECT FROM idem_deploys e WHERE e.new_version = p_version)
       AND (SELECT count(*) FROM (SELECT FROM idem_deploys d WHERE d.db_role = session_user
                                     AND d.at > now() - interval '1 hour' LIMIT c_deploys_per_hour) n)
           >= c_deploys_per_hour THEN
        UPDATE idem_deploys d SET coalesced = d.coalesced + 1, last_coalesced_version = p_version
         WHERE d.id = (SELECT l.id FROM idem_deploys l WHERE l.db_role = session_user ORDER BY l.at DESC, l.id DESC LIMIT 1);
        RAISE WARNING 'version % not marked as a deploy: login % marked % deploys within the hour already', p_version,
            session_user, c_deploys_per_hour;
        deploy_id := NULL;
        RETURN NEXT;
        RETURN;
    END IF;
    INSERT INTO idem_deploys AS d (at, worker, old_version, new_version, db_role)
    SELECT now(), p_worker, v_from, p_version, session_user
     WHERE NOT EXISTS (SELECT FROM idem_deploys e WHERE e.new_version = p_version)
    ON CONFLICT (new_version) DO NOTHING
    RETURNING d.id INTO deploy_id;
    RETURN NEXT;
END
$report$;

REVOKE ALL ON FUNCTION idem_report_version(text, text) FROM PUBLIC;
