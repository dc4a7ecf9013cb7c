-- idem_job_start (schema v19; the history is in git log).
-- Starts a recovery job: action p_action (requeue with p_extra_attempts, 1 to 1000, default 1;
-- release; fail) on every task row filter p_filter matches now, the job's moment. In one
-- transaction: the job's row, its items (the rows matched, in key order, each with the status
-- and updated_at it has now; the ones the action does not apply to are skipped as
-- not_applicable at once) and the job's first audit entry (action 'job'). It changes no task row:
-- a runner does (idem_job_run). Refused, with nothing written:
--   ID003  bad arguments (action, filter, reason, actor, p_cap outside 1 to 1000000, extra
--          attempts for an action other than requeue); a transaction that is not READ COMMITTED
--   ID003  the filter matches more than p_cap rows
--   ID002  the filter matches no row; or the action applies to none of those it matches
--   ID003  rows it matches are still to be done by another open job (its id in the message):
--          two jobs never hold the same row pending
-- Starts serialise on idem_job_start_lock, so two at once see each other's rows.
-- v21: the caller (idem_caller) needs the action's right (42501, in words, else), recorded as
-- starter_role: the job's rows are applied with its rights. With gated kind 'job' on
-- (idem_approval_kinds) and more rows to act on than its over_rows, the job starts awaiting
-- approval: its request (idem_approval_requests, v28) waits for another login
-- (idem_approval_approve), approvable for the kind's ttl_seconds.
-- v23: the rows are counted against the cap, and checked, before anything is written (a refused
-- start at the cap wrote and rolled back up to a million items); the approval policy's one gate
-- (idem_approval_gate) decides whether the job waits for approval: more rows than job_rows
-- (approval_why 'rows'), or more than the login's budget has left in its window ('budget');
-- otherwise the job's rows are taken from that budget.
-- v25: p_redrive (requeue only): each row the job requeues also gets a re-drive item
-- (idem_redrive_enqueue, with the job's id), run by the operation's re-drivers once the job runs
-- (so a job awaiting approval re-executes nothing before it is approved). Part of its spec.
CREATE OR REPLACE FUNCTION idem_job_start(p_action text, p_filter jsonb, p_cap bigint, p_reason text,
                                          p_actor text DEFAULT NULL, p_extra_attempts integer DEFAULT NULL,
                                          p_redrive boolean DEFAULT false)
RETURNS TABLE (job_id bigint, moment timestamptz, matched bigint, pending bigint, skipped bigint, spec_sha256 text,
               audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $start$
DECLARE
    v_filter jsonb;
    v_extra integer := p_extra_attempts;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_job idem_jobs;
    v_moment timestamptz;
    v_matched bigint;
    v_skipped bigint;
    v_other bigint;
    v_overlap bigint;
    v_audit bigint;
    v_kind idem_approval_kinds;
    v_why text;
BEGIN
    IF p_action IS NULL OR p_action NOT IN ('requeue', 'release', 'fail') THEN
        RAISE EXCEPTION 'a job''s action is requeue, release or fail, not %', COALESCE(left(p_action, 64), 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    PERFORM idem_require_right(p_action, format('start a %s job', p_action));
    IF p_action = 'requeue' THEN
        v_extra := COALESCE(v_extra, 1);
        IF v_extra NOT BETWEEN 1 AND 1000 THEN
            RAISE EXCEPTION 'extra attempts must be 1 to 1000, not %', v_extra USING ERRCODE = 'ID003';
        END IF;
    ELSIF v_extra IS NOT NULL THEN
        RAISE EXCEPTION 'extra attempts are for requeue, not %', p_action USING ERRCODE = 'ID003';
    END IF;
    IF p_redrive IS NULL OR (p_redrive AND p_action <> 'requeue') THEN
        RAISE EXCEPTION 'only a requeue job re-executes (p_redrive true or false, not NULL)' USING ERRCODE = 'ID003';
    END IF;
    IF p_cap IS NULL OR p_cap NOT BETWEEN 1 AND 1000000 THEN
        RAISE EXCEPTION 'a job''s cap must be 1 to 1000000 rows, not %', COALESCE(p_cap::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_filter := idem_job_filter_check(p_filter);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a job starts in a READ COMMITTED transaction, not %', current_setting('transaction_isolation')
            USING ERRCODE = 'ID003';
    END IF;

    PERFORM FROM idem_job_start_lock l FOR UPDATE;
    -- The moment: what the filter sees is this statement's snapshot, taken after it.
    v_moment := clock_timestamp();
    -- Counted first, writing nothing: a filter over the cap or matching nothing the action applies
    -- to is refused before any row is written (the items are matched again below, in a statement
    -- of their own, and checked again).
    SELECT count(*), count(*) FILTER (WHERE NOT CASE p_action WHEN 'requeue' THEN m.status IN ('failed', 'retryable_failed')
                                                              WHEN 'release' THEN m.status = 'processing'
                                                              ELSE m.status IN ('processing', 'retryable_failed') END)
      INTO v_matched, v_skipped
      FROM idem_job_match(v_filter, v_moment, p_cap + 1) m;
    PERFORM idem_job_start_check(p_action, p_cap, v_matched, v_skipped, NULL, NULL);
    -- A row another open job has still to do: two jobs would race for it (the guard would keep
    -- the row safe, the second job would refuse it as moved on), so refuse the second job.
    IF v_matched <= p_cap AND EXISTS (SELECT FROM idem_jobs x WHERE x.state IN ('awaiting_approval', 'active')) THEN
        SELECT o.job_id, count(*) INTO v_other, v_overlap
          FROM idem_job_match(v_filter, v_moment, p_cap) m
          JOIN idem_job_items o ON o.idempotency_key = m.idempotency_key AND o.state = 'pending'
         WHERE CASE p_action WHEN 'requeue' THEN m.status IN ('failed', 'retryable_failed')
                             WHEN 'release' THEN m.status = 'processing'
                             ELSE m.status IN ('processing', 'retryable_failed') END
         GROUP BY o.job_id ORDER BY o.job_id LIMIT 1;
        PERFORM idem_job_start_check(p_action, p_cap, v_matched, v_skipped, v_other, v_overlap);
    END IF;
    INSERT INTO idem_jobs (state, action, extra_attempts, filter, moment, cap, reason, db_role, starter_role, actor,
                           application, redrive)
    VALUES ('active', p_action, v_extra, v_filter, v_moment, p_cap, p_reason, session_user, idem_caller(),
            CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END,
            COALESCE(current_setting('application_name', true), ''), p_redrive)
    RETURNING * INTO v_job;

    INSERT INTO idem_job_items (job_id, seq, idempotency_key, seen_status, seen_updated_at, state, why)
    SELECT v_job.id, row_number() OVER (ORDER BY m.idempotency_key), m.idempotency_key, m.status, m.updated_at,
           CASE WHEN a.applies THEN 'pending' ELSE 'skipped' END,
           CASE WHEN a.applies THEN NULL ELSE 'not_applicable' END
      FROM idem_job_match(v_filter, v_moment, p_cap + 1) m,
           LATERAL (SELECT CASE p_action WHEN 'requeue' THEN m.status IN ('failed', 'retryable_failed')
                                         WHEN 'release' THEN m.status = 'processing'
                                         ELSE m.status IN ('processing', 'retryable_failed') END AS applies) a;
    GET DIAGNOSTICS v_matched = ROW_COUNT;
    SELECT count(*) INTO v_skipped FROM idem_job_items i WHERE i.job_id = v_job.id AND i.state = 'skipped';
    -- Rows written since the count may have tipped it over, or joined another open job.
    SELECT o.job_id, count(*) INTO v_other, v_overlap
      FROM idem_job_items n
      JOIN idem_job_items o ON o.idempotency_key = n.idempotency_key AND o.state = 'pending' AND o.job_id <> n.job_id
     WHERE n.job_id = v_job.id AND n.state = 'pending'
     GROUP BY o.job_id ORDER BY o.job_id LIMIT 1;
    PERFORM idem_job_start_check(p_action, p_cap, v_matched, v_skipped, v_other, v_overlap);

    SELECT * INTO v_kind FROM idem_approval_kinds k WHERE k.kind = 'job';
    v_why := idem_approval_gate('job', v_matched - v_skipped, v_job.id);
    IF v_why IS NOT NULL THEN
        UPDATE idem_jobs j
           SET matched = v_matched, skipped_not_applicable = v_skipped, state = 'awaiting_approval',
               needs_approval = true, approval_why = v_why,
               approval_threshold = CASE WHEN v_kind.gated THEN COALESCE(v_kind.over_rows, 0) END
         WHERE j.id = v_job.id
        RETURNING * INTO v_job;
    ELSE
        UPDATE idem_jobs j SET matched = v_matched, skipped_not_applicable = v_skipped WHERE j.id = v_job.id
        RETURNING * INTO v_job;
    END IF;
    UPDATE idem_jobs j SET spec_sha256 = encode(sha256(convert_to(idem_job_spec(v_job)::text, 'UTF8')), 'hex')
     WHERE j.id = v_job.id
    RETURNING * INTO v_job;
    IF v_job.needs_approval THEN
        -- Its request, which the job's start entry audits.
        PERFORM idem_approval_request_add('job', idem_job_spec(v_job), p_reason, p_actor, v_job.id);
    END IF;
    v_audit := audit_append('', 'job', p_reason, p_actor, jsonb_build_object('job_id', v_job.id, 'state', NULL),
                            idem_job_image(v_job) || jsonb_build_object('event', 'start'));
    UPDATE idem_jobs j SET start_audit_id = v_audit WHERE j.id = v_job.id;
    UPDATE idem_approval_requests r SET request_audit_id = v_audit WHERE r.job_id = v_job.id;
    RETURN QUERY SELECT v_job.id, v_moment, v_matched, v_matched - v_skipped, v_skipped, v_job.spec_sha256, v_audit;
END
$start$;

REVOKE ALL ON FUNCTION idem_job_start(text, jsonb, bigint, text, text, integer, boolean) FROM PUBLIC;
