-- idem_job_image (schema v19; the history is in git log).
-- A recovery job as its audit entries keep it: what it is (action, filter, moment, cap, spec),
-- who started it, where it stands (state, counts), and, for idem_events, the tenant and operation
-- it concerns ('*' when its filter names none). v21: starter_role, and its approval when it needs one. "job_id" is its id, as in the entries of the rows
-- it changed. Callers set TimeZone to UTC.
CREATE OR REPLACE FUNCTION idem_job_image(j idem_jobs)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $$
    SELECT jsonb_build_object(
        'job_id', j.id, 'state', j.state, 'action', j.action, 'extra_attempts', j.extra_attempts,
        'filter', j.filter, 'moment', j.moment, 'cap', j.cap, 'spec_sha256', j.spec_sha256,
        'tenant', COALESCE(j.filter ->> 'tenant', '*'), 'operation', COALESCE(j.filter ->> 'operation', '*'),
        'started_by', format('%s (%s)', j.db_role, j.actor),
        'matched', j.matched, 'changed', j.changed,
        'refused', jsonb_build_object('moved_on', j.refused_moved_on, 'busy', j.refused_busy, 'gone', j.refused_gone),
        'skipped', jsonb_build_object('not_applicable', j.skipped_not_applicable, 'cancelled', j.skipped_cancelled),
        'pending', j.matched - j.changed - j.refused_moved_on - j.refused_busy - j.refused_gone
                   - j.skipped_not_applicable - j.skipped_cancelled,
        'batches', j.batches, 'attaches', j.attaches, 'finished_at', j.finished_at,
        'cancelled_by', j.cancelled_by, 'cancel_reason', j.cancel_reason)
        -- v21: who it runs as and its approval, when it needs one.
        || jsonb_build_object('starter_role', j.starter_role)
        -- v28: the approval from the job's request (idem_approval_requests).
        || CASE WHEN j.needs_approval
                THEN jsonb_build_object('approval', (
                         SELECT jsonb_build_object(
                                    'threshold', j.approval_threshold, 'why', j.approval_why, 'request_id', r.id,
                                    'requested_until', r.approvable_until,
                                    'approved_by', CASE WHEN r.approved_login IS NULL THEN NULL
                                                        ELSE format('%s as %s (%s)', r.approved_login, r.approved_role,
                                                                    r.approved_actor) END,
                                    'approved_at', r.approved_at, 'expires_at', r.approval_expires_at)
                           FROM idem_approval_requests r WHERE r.job_id = j.id))
                ELSE '{}'::jsonb END
        -- v25: a requeue job that re-executes what it requeues.
        || CASE WHEN j.redrive THEN jsonb_build_object('redrive', true) ELSE '{}'::jsonb END
$$;

REVOKE ALL ON FUNCTION idem_job_image(idem_jobs) FROM PUBLIC;
