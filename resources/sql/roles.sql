-- Idem roles and grants. idemctl migrate re-applies this after every migration run
-- (skip with --no-roles), with search_path set to the Idem schema. Roles are cluster-wide
-- and NOLOGIN: give them to login roles with GRANT idem_operator TO alice.
-- Schema v21: one role per right (README, "Roles and rights"): idem_reader reads; each idem_may_*
-- role allows one kind of change. The rights, their roles and which of them idem_operator holds
-- are one list, idem_right_list() (functions/idem_right_list.sql, schema v29): the roles, the
-- memberships, the schema's USAGE and what every right's role may call (the $every_right$ block)
-- follow from it; what each right may change is granted below, function by function.
-- Grants name each Idem object, so adopting a table in a shared schema such as public
-- never widens access to anything else there.
DO $roles$
DECLARE
    r text;
BEGIN
    -- migrate's lock is per database but roles are per cluster: a migrate of another database
    -- may create the same role at the same moment, which surfaces here as a duplicate.
    FOR r IN SELECT x FROM unnest(ARRAY['idem_operator', 'idem_worker']) x
             UNION ALL SELECT l.grant_role FROM idem_right_list() l LOOP
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;
            END;
        END IF;
    END LOOP;
    -- Only when missing: granting a membership needs CREATEROLE (or ADMIN OPTION) even when it
    -- exists already, and a database owner re-running migrate against existing roles has neither.
    FOR r IN SELECT l.grant_role FROM idem_right_list() l WHERE l.operator_holds LOOP
        IF NOT pg_has_role('idem_operator', r, 'MEMBER') THEN
            BEGIN
                EXECUTE format('GRANT %I TO idem_operator', r);
            EXCEPTION WHEN unique_violation THEN
                NULL;
            END;
        END IF;
    END LOOP;
END
$roles$;

DO $grants$
DECLARE
    s text := current_schema();
    r name;
BEGIN
    -- Every right's role too, in the list's order (a schema made new and one upgraded list the
    -- grantees alike).
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO idem_reader, idem_operator, idem_worker', s);
    FOR r IN SELECT l.grant_role FROM idem_right_list() l ORDER BY l.ordinal LOOP
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', s, r);
    END LOOP;

    -- Readers (the console) see everything and change nothing.
    EXECUTE format('GRANT SELECT ON %I.task_idempotency, %I.idem_counters, %I.task_idempotency_audit,'
                   ' %I.idem_schema_version TO idem_reader', s, s, s, s);

    -- Workers have no privilege on any Idem table (schema v6): the SECURITY DEFINER protocol
    -- functions below are their only way in, so no worker can rewrite, forge or lock a task.
    -- They may read the schema version.
    EXECUTE format('REVOKE ALL ON %I.task_idempotency, %I.idem_counters, %I.task_idempotency_audit FROM idem_worker',
                   s, s, s);
    EXECUTE format('GRANT SELECT ON %I.idem_schema_version TO idem_worker', s);

    -- Nobody but the owner changes or removes history.
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I.task_idempotency_audit'
                   ' FROM PUBLIC, idem_reader, idem_operator, idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %I.task_idempotency, %I.idem_counters'
                   ' FROM idem_reader, idem_operator', s, s);
END
$grants$;

-- The protocol functions and the counters flush (schema v6) are SECURITY DEFINER with a pinned
-- path: a worker runs them and nothing else.
DO $protocol$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.claim(text, text, uuid, bigint, integer, bigint),'
                   ' %1$I.fence(text, uuid), %1$I.complete(text, uuid, jsonb, integer),'
                   ' %1$I.heartbeat(text, uuid, bigint), %1$I.fail(text, uuid, text, text, bigint, bigint),'
                   ' %1$I.add_counters(jsonb),'
                   ' %1$I.idem_claim_local(text, text, uuid, bigint, integer, bigint, integer),'
                   ' %1$I.idem_record_local(text, text, jsonb, integer, bigint, integer, integer),'
                   ' %1$I.idem_peek_local(text, text, integer, bigint) TO idem_worker', s);
END
$protocol$;

-- The audited recovery actions (schema v3) are SECURITY DEFINER: operators run them without any
-- write grant on the tables, and readers cannot run them at all (granted per right since v21,
-- the $rights$ block at the end).
DO $actions$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('REVOKE INSERT ON %I.task_idempotency_audit FROM PUBLIC, idem_reader, idem_operator, idem_worker', s);
END
$actions$;

-- Digest conflicts per key (schema v5): claim() records them (as a definer since v6), the
-- console reads them.
DO $conflicts$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %I.task_idempotency_conflicts TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %I.task_idempotency_conflicts FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %I.task_idempotency_conflicts FROM idem_reader, idem_operator', s);
END
$conflicts$;

-- The shared exact figures and the counter roll-ups (schema v8): readers see them and may run
-- the refresh (it refreshes only when due, so a reader cannot make it run more often); operators
-- may also run the counter upkeep (idemctl counters maintain, or a scheduler). Workers: nothing
-- beyond add_counters, which writes the totals itself.
DO $scale$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_stats_exact, %1$I.idem_stats_live, %1$I.idem_counters_total, %1$I.idem_counters_hourly,'
                   ' %1$I.idem_counters_policy TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_stats_exact, %1$I.idem_stats_live, %1$I.idem_counters_total, %1$I.idem_counters_hourly,'
                   ' %1$I.idem_counters_policy FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_stats_exact, %1$I.idem_stats_live, %1$I.idem_counters_total,'
                   ' %1$I.idem_counters_hourly, %1$I.idem_counters_policy FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_exact_stats(text, text, integer),'
                   ' %1$I.idem_live_stats(text, text, integer), %1$I.idem_data_time(), %1$I.idem_exact_refresh_begin(),'
                   ' %1$I.idem_exact_refresh_finish(uuid, integer) TO idem_reader', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_counters_maintain(integer) TO idem_operator', s);
END
$scale$;

-- Key lifecycle (schema v9): readers see the retention policy, the purge runs, the size samples
-- and the storage figures, and may take a size sample (at most one per 15 minutes whoever calls);
-- operators change the policy and run the purge, each audited. Workers: nothing.
DO $lifecycle$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_retention_policy, %1$I.idem_purge_runs, %1$I.idem_storage_samples'
                   ' TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_retention_policy, %1$I.idem_purge_runs, %1$I.idem_storage_samples'
                   ' FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_retention_policy, %1$I.idem_purge_runs,'
                   ' %1$I.idem_storage_samples FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_succeeded_operations(), %1$I.idem_retention_horizon(text),'
                   ' %1$I.idem_retention_due(bigint), %1$I.idem_storage_tables(), %1$I.idem_storage_sample()'
                   ' TO idem_reader', s);
    -- Policy and purge: idem_may_purge since v21 ($rights$ below).
    -- Readers tell a purge run that is running from one whose session is gone (a failover, a
    -- killed process), which stays 'running' until the next purge closes it.
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_purge_alive(%1$I.idem_purge_runs) TO idem_reader', s);
END
$lifecycle$;

DO $lowroles$
DECLARE
    s text := current_schema();
BEGIN
    -- Schema v13: the refused counter flushes are for readers to see; the procedure releases its
    -- run's lock as its caller (idem_purge_release); readers name the exact refresh's holder.
    EXECUTE format('GRANT SELECT ON %1$I.idem_counters_refused TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_counters_refused FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_counters_refused FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_exact_refresh_holder() TO idem_reader', s);
END
$lowroles$;

-- Schema v14: which function files are applied, with their checksums, is for readers to see
-- (like the schema version).
DO $functions$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_schema_functions TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_schema_functions FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_schema_functions FROM idem_reader, idem_operator', s);
END
$functions$;

-- Schema v15: pauses. Readers see them (the console's banner, idemctl pauses); operators set and
-- lift them, each audited; claim() reads them as its definer. Workers: nothing.
DO $pauses$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_pauses TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_pauses FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_pauses FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_pause_list(integer) TO idem_reader', s);
    -- Schema v33: the forecast before a resume, and the audit actions' registry, read by readers.
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_pause_forecast(text, text, integer, integer),'
                   ' %1$I.idem_ramp_step(%1$I.idem_pauses), %1$I.idem_ramp_bucket(text) TO idem_reader', s);
    EXECUTE format('GRANT SELECT ON %1$I.idem_audit_actions TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_ramp_tally FROM idem_worker', s);
    EXECUTE format('GRANT SELECT ON %1$I.idem_ramp_tally TO idem_reader', s);
END
$pauses$;

-- Latency (schema v17): readers read the folded histograms and may fold the minutes that are due
-- (idem_latency_rollup, as their definer; it never waits); nobody else writes them. Workers:
-- nothing (claim(), complete() and fail() record what is folded, as their definer). Readers list
-- the events of a window (idem_events, and since v24 idem_events_omitted: what its per-source
-- bounds left out); operators annotate (idem_annotate, audited).
DO $latency$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_latency, %1$I.idem_latency_state TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_latency, %1$I.idem_latency_state FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_latency, %1$I.idem_latency_state'
                   ' FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_latency_rollup(integer),'
                   ' %1$I.idem_latency_histogram(timestamptz, timestamptz, text, text, boolean, boolean),'
                   ' %1$I.idem_latency_percentiles(timestamptz, timestamptz, text, text, boolean, boolean),'
                   ' %1$I.idem_latency_quantile(text, smallint[], bigint[], double precision),'
                   ' %1$I.idem_latency_value(text, integer), %1$I.idem_latency_slot(double precision),'
                   ' %1$I.idem_events(timestamptz, timestamptz, text, text, integer),'
                   -- v24: what the events' bounds leave out, and the two that both run as their caller
                   ' %1$I.idem_events_omitted(timestamptz, timestamptz, text, text, integer),'
                   ' %1$I.idem_event_rows(timestamptz, timestamptz, text, text),'
                   ' %1$I.idem_events_check(timestamptz, timestamptz, integer) TO idem_reader', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_annotate(text, text, text, text) TO idem_operator', s);
END
$latency$;

-- Deploys (schema v18): workers report their version through idem_report_version (as its
-- definer; it writes only when something changes) and touch neither table; readers see both and
-- list deploys with the other events (idem_events, granted above).
DO $deploys$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_worker_versions, %1$I.idem_deploys TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_worker_versions, %1$I.idem_deploys FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_worker_versions, %1$I.idem_deploys'
                   ' FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_report_version(text, text) TO idem_worker', s);
END
$deploys$;

-- Recovery jobs (schema v19): readers see the jobs and their rows (status, the refused list) and
-- may preview a filter and ask whether a job's runner is alive; operators start, run (attach,
-- batches, detach, or CALL idem_job_run) and cancel them, each audited. Workers: nothing.
DO $jobs$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_jobs, %1$I.idem_job_items TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_jobs, %1$I.idem_job_items, %1$I.idem_job_start_lock FROM idem_worker', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_job_start_lock FROM idem_reader, idem_operator', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_jobs, %1$I.idem_job_items'
                   ' FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_job_preview(text, jsonb, bigint),'
                   ' %1$I.idem_job_runner_alive(%1$I.idem_jobs) TO idem_reader', s);
    -- The task filter's predicate (schema v24), as text: the Tasks page and idemctl tasks read
    -- with the one a job matches with.
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_task_filter_where(jsonb) TO idem_reader', s);
END
$jobs$;

-- Failovers (schema v20): every client that reads the primary records a new timeline through
-- idem_note_timeline (as its definer; it writes only the first time a timeline is seen); nobody
-- touches the table; readers see it and list failovers with the other events (idem_events).
DO $failovers$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_timelines TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_timelines FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_timelines FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_note_timeline() TO idem_reader, idem_worker', s);
    -- The acknowledged successes a lagging asynchronous standby does not have yet (the Connection page).
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_successes_since(timestamptz, integer) TO idem_reader', s);
END
$failovers$;

-- Per-action rights (schema v21): each change is granted to the role of its right, no longer to
-- idem_operator itself (a member of every one of them, so it keeps each). The single actions,
-- pauses, purge and retention are enforced by these EXECUTE grants; the job functions, shared
-- by three actions, are granted to the three and check the job's action inside (idem_has_right).
-- Every right sees what it is for: readers' grants go to idem_reader, to be granted alongside.
DO $rights$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %1$I.idem_requeue(text, text, bigint, integer, text, text),'
                   ' %1$I.idem_release(text, text, bigint, text, text), %1$I.idem_fail(text, text, bigint, text, text),'
                   ' %1$I.idem_pause(text, text, text, text, bigint, timestamptz), %1$I.idem_resume(text, text, text, text),'
                   ' %1$I.idem_set_retention(text, bigint, text, text), %1$I.idem_clear_retention(text, text, text),'
                   ' %1$I.idem_purge_begin(text, text), %1$I.idem_purge_batch(bigint, integer),'
                   ' %1$I.idem_purge_finish(bigint), %1$I.idem_purge(integer, integer, text, text),'
                   ' %1$I.idem_purge_lock_key(bigint), %1$I.idem_purge_release(bigint),'
                   ' %1$I.idem_job_start(text, jsonb, bigint, text, text, integer, boolean), %1$I.idem_job_attach(bigint, text),'
                   ' %1$I.idem_job_batch(bigint, integer), %1$I.idem_job_detach(bigint),'
                   ' %1$I.idem_job_cancel(bigint, text, text) FROM idem_operator', s);
    EXECUTE format('REVOKE EXECUTE ON PROCEDURE %1$I.idem_purge_run(integer, integer, text, text, double precision),'
                   ' %1$I.idem_job_run(bigint, integer, double precision, integer, text, boolean) FROM idem_operator', s);

    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_requeue(text, text, bigint, integer, text, text)'
                   ' TO idem_may_requeue', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_release(text, text, bigint, text, text) TO idem_may_release', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_fail(text, text, bigint, text, text) TO idem_may_fail', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_pause(text, text, text, text, bigint, timestamptz),'
                   ' %1$I.idem_resume(text, text, text, text),'
                   ' %1$I.idem_resume_ramp(text, text, integer[], bigint, double precision, integer, text, text)'
                   ' TO idem_may_pause', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_set_retention(text, bigint, text, text),'
                   ' %1$I.idem_clear_retention(text, text, text), %1$I.idem_purge_begin(text, text),'
                   ' %1$I.idem_purge_batch(bigint, integer), %1$I.idem_purge_finish(bigint),'
                   ' %1$I.idem_purge(integer, integer, text, text), %1$I.idem_purge_lock_key(bigint),'
                   ' %1$I.idem_purge_release(bigint) TO idem_may_purge', s);
    EXECUTE format('GRANT EXECUTE ON PROCEDURE %1$I.idem_purge_run(integer, integer, text, text, double precision)'
                   ' TO idem_may_purge', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_job_start(text, jsonb, bigint, text, text, integer, boolean),'
                   ' %1$I.idem_job_attach(bigint, text), %1$I.idem_job_batch(bigint, integer),'
                   ' %1$I.idem_job_detach(bigint), %1$I.idem_job_cancel(bigint, text, text)'
                   ' TO idem_may_requeue, idem_may_release, idem_may_fail', s);
    EXECUTE format('GRANT EXECUTE ON PROCEDURE %1$I.idem_job_run(bigint, integer, double precision, integer, text, boolean)'
                   ' TO idem_may_requeue, idem_may_release, idem_may_fail', s);
    -- Approvers approve (idem_job_approve: kept for older clients, it calls idem_approval_approve).
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_job_approve(bigint, text, text, text) TO idem_may_approve', s);
    -- v28: the approve right turns a job's request down (idem_approval_decline), it cancels no job.
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %1$I.idem_job_cancel(bigint, text, text) FROM idem_may_approve', s);
    -- Readers see the approval policy (anyone with an Idem role may ask what it may do: $every_right$).
    EXECUTE format('GRANT SELECT ON %1$I.idem_approval_policy TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_approval_policy FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_approval_policy FROM idem_reader, idem_operator', s);
END
$rights$;

-- Approvals (schema v22, one mechanism since v28): a request of any gated kind (a recovery job, a
-- retention change, a manual purge) is approved by the approve right (idem_approval_approve) and
-- declined by it or withdrawn by the login that asked (idem_approval_decline, which checks that
-- inside, so the rights that request may call it); readers see the requests and the registry of
-- gated kinds (the console's Approvals dialog, idemctl approvals). Nobody writes the tables but
-- the functions; the policy is the owner's (idem_set_approval_policy, granted to nobody). A
-- retention change or a manual purge is requested and used by the purge right.
DO $changes$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_approval_requests, %1$I.idem_approval_kinds TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_approval_requests, %1$I.idem_approval_kinds FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_approval_requests, %1$I.idem_approval_kinds'
                   ' FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_approval_approve(bigint, text, text, text) TO idem_may_approve', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_approval_decline(bigint, text, text) TO idem_may_approve,'
                   ' idem_may_purge, idem_may_requeue, idem_may_release, idem_may_fail', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_request_retention(text, text, bigint, text, text),'
                   ' %1$I.idem_request_purge(integer, integer, double precision, text, text),'
                   ' %1$I.idem_change_use(bigint, text, text) TO idem_may_purge', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_change_approve(bigint, text, text, text) TO idem_may_approve', s);
END
$changes$;

-- The approval budget (schema v23): anyone with an Idem role may ask whether a change of theirs
-- would need approval (idem_approval_needed: the Tasks page and idemctl say so before they start);
-- readers see the policy (above). What each login changed without approval is read only through
-- that function; the budget is the owner's (idem_set_approval_budget, granted to nobody).
DO $budget$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('REVOKE ALL ON %1$I.idem_approval_uses FROM idem_worker, idem_reader, idem_operator', s);
    -- Granted to every right's role in the $every_right$ block.
END
$budget$;

-- The transaction horizon (schema v26): readers see who holds it back (idem_horizon_holders, as
-- its definer: pid, role, application, state and times of every holder; a holder's client and
-- query text only to a login with pg_read_all_stats or of the holder's own role). Nobody else.
DO $horizon$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_horizon_holders(integer) TO idem_reader', s);
END
$horizon$;
-- Re-execution (schema v25, docs/redrive.md): workers register re-drivable operations, report
-- their re-drivers, claim with the request stored, take and finish re-drive items, all through
-- these definers (each checks the login against the operation's registration). A requeue that
-- re-executes is the requeue right's. Readers see registrations, re-drivers and items (never a
-- request: idem_stored_requests is nobody's but the owner's), and through idem_stored_request
-- that a request is stored and its size; its content needs idem_may_read_requests.
DO $redrive$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_redrive_operations, %1$I.idem_redrivers, %1$I.idem_redrive_items'
                   ' TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_redrive_operations, %1$I.idem_redrivers, %1$I.idem_redrive_items,'
                   ' %1$I.idem_stored_requests FROM idem_worker', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_stored_requests FROM idem_reader, idem_operator, idem_may_read_requests', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_redrive_operations, %1$I.idem_redrivers,'
                   ' %1$I.idem_redrive_items FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_redrive_register(text, text, integer, text[]),'
                   ' %1$I.idem_redriver_seen(text, text, text, text),'
                   ' %1$I.idem_claim_stored(text, text, uuid, bigint, integer, bigint, text),'
                   ' %1$I.idem_redrive_take(text, text, text, integer, bigint),'
                   ' %1$I.idem_redrive_finish(bigint, text, text, text, integer) TO idem_worker', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_requeue_reexecute(text, text, bigint, integer, text, text)'
                   ' TO idem_may_requeue', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_redrive_status(text, text) TO idem_reader, idem_may_requeue', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_redrive_outcomes(bigint), %1$I.idem_redrive_items_of(text),'
                   ' %1$I.idem_redrive_outcomes_of(bigint[]) TO idem_reader', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_stored_request(text) TO idem_reader, idem_may_read_requests', s);
END
$redrive$;
-- Field fingerprints (schema v32): workers claim through idem_claim_fields; readers see the
-- fingerprints (keyed hashes, never a value), as they see the conflict records.
DO $fields$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_request_fields TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_request_fields FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_request_fields FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION'
                   ' %1$I.idem_claim_fields(text, text, uuid, bigint, integer, bigint, jsonb, integer, text)'
                   ' TO idem_worker', s);
END
$fields$;

-- Every right's role (idem_right_list, schema v29) may use the schema ($grants$), ask what its
-- role may do (idem_rights) and whether a change of theirs would need approval
-- (idem_approval_needed). What a right may change is granted above, function by function.
DO $every_right$
DECLARE
    s text := current_schema();
    r name;
BEGIN
    FOR r IN SELECT l.grant_role FROM idem_right_list() l ORDER BY l.ordinal LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_rights(), %1$I.idem_approval_needed(text, bigint) TO %2$I',
                       s, r);
    END LOOP;
END
$every_right$;

-- Continuous reconciliation (schema v30, docs/operators-guide.md "Reconcile probes"): the owner
-- registers and removes probes (idem_reconcile_add, idem_reconcile_remove: granted to nobody,
-- since a probe's query runs on a schedule). idem_reconcile runs them: its members (the exporter's
-- login, or whoever runs idemctl reconcile run) take a due run and record its results, and each
-- probe query runs as idem_reconcile itself (SET LOCAL ROLE in a READ ONLY transaction), so it
-- reads only what the DBA granted to idem_reconcile (GRANT SELECT ON shop.payments TO
-- idem_reconcile) and nothing of Idem. Readers see the probes and their runs. Workers: nothing.
DO $reconcile$
DECLARE
    s text := current_schema();
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_reconcile') THEN
        BEGIN
            CREATE ROLE idem_reconcile NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO idem_reconcile', s);
    EXECUTE format('GRANT SELECT ON %1$I.idem_reconcile_probes, %1$I.idem_reconcile_runs TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_reconcile_probes, %1$I.idem_reconcile_runs FROM idem_worker, idem_reconcile', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_reconcile_probes, %1$I.idem_reconcile_runs'
                   ' FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_reconcile_begin(text, boolean, text),'
                   ' %1$I.idem_reconcile_finish(bigint, jsonb, text) TO idem_reconcile', s);
END
$reconcile$;

-- Fencing and the lease advisor (schema v31, docs/operators-guide.md "Fencing and leases"):
-- claim() records the lease, add_counters() the takeovers and refused late calls by worker, and
-- idem_latency_rollup() folds the leases, each as its definer; readers read the figures
-- (idem_fencing) and the tables. Workers: nothing more.
DO $fencing$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT SELECT ON %1$I.idem_lease, %1$I.idem_counters_workers TO idem_reader', s);
    EXECUTE format('REVOKE ALL ON %1$I.idem_lease, %1$I.idem_counters_workers FROM idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %1$I.idem_lease, %1$I.idem_counters_workers'
                   ' FROM idem_reader, idem_operator', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %1$I.idem_fencing(timestamptz, timestamptz, integer) TO idem_reader', s);
END
$fencing$;
