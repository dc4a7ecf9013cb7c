-- Idem schema v28: one approval mechanism (issue #44, item 1).
--
-- Until v27 jobs (v21) and changes (v22) each had their own policy columns, approve function and
-- list, and they had begun to differ. Now:
--   - The policy is a registry of gated kinds, idem_approval_kinds: one row per kind of action a
--     second person may have to approve ('job', 'retention', 'purge'; a new gated action adds a
--     row, not a column, a CHECK list or a function argument), with whether it is gated, the rows
--     above which a row-counting kind waits (a job: over_rows), and how long a request stays
--     approvable and its approval usable (ttl_seconds). idem_set_approval_policy(kind, ...) is the
--     one setter (the owner's, audited as action 'approval_policy'); idem_approval_policy keeps
--     only the per-login budget (v23), which is not a kind's.
--   - Change requests live in idem_approval_requests (idem_change_requests renamed), whose kind is
--     any registered kind (a foreign key, not a CHECK list). A request waiting for approval may be
--     declined (state 'declined', audited as action 'decline').
--   - A recovery job's request is a row there too (kind 'job', job_id): idem_jobs loses its nine
--     approval_*/approved_* columns (keeping why it needed one). idem_approval_approve and
--     idem_approval_decline take a request id, whatever its kind; approving a job's request makes
--     the job active, declining it cancels the job, which is possible only while it waits: the
--     approve right no longer cancels an active job (idem_job_cancel).
-- Existing requests keep their state; the policy's v21/v22 columns become the registry's rows.
-- Function files v28 removed (migrate drops no routine by itself; none exists yet on a fresh install).
DROP FUNCTION IF EXISTS idem_change_request_add(text, jsonb, text, text);
DROP FUNCTION IF EXISTS idem_change_image(idem_change_requests);

CREATE TABLE idem_approval_kinds (
    kind        TEXT PRIMARY KEY CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$'),
    gated       BOOLEAN NOT NULL DEFAULT false,  -- its requests wait for another login's approval
    over_rows   BIGINT CHECK (over_rows BETWEEN 0 AND 1000000),  -- a row-counting kind waits only above it
    ttl_seconds INTEGER NOT NULL DEFAULT 3600 CHECK (ttl_seconds BETWEEN 60 AND 604800),
    what        TEXT NOT NULL CHECK (char_length(what) BETWEEN 1 AND 200),  -- for people
    updated_at  TIMESTAMPTZ,
    updated_by  TEXT,
    audit_id    BIGINT
);
REVOKE ALL ON idem_approval_kinds FROM PUBLIC;
INSERT INTO idem_approval_kinds (kind, gated, over_rows, ttl_seconds, what, updated_at, updated_by, audit_id)
SELECT 'job', p.job_rows IS NOT NULL, p.job_rows, p.ttl_seconds, 'a recovery job over more rows than over_rows',
       p.updated_at, p.updated_by, p.audit_id
  FROM idem_approval_policy p
UNION ALL
SELECT 'retention', p.retention_changes_need_approval, NULL, p.change_ttl_seconds, 'a retention change',
       p.updated_at, p.updated_by, p.audit_id
  FROM idem_approval_policy p
UNION ALL
SELECT 'purge', p.manual_purges_need_approval, NULL, p.change_ttl_seconds, 'a manual purge', p.updated_at,
       p.updated_by, p.audit_id
  FROM idem_approval_policy p;

ALTER TABLE idem_approval_policy
    DROP COLUMN job_rows,
    DROP COLUMN ttl_seconds,
    DROP COLUMN retention_changes_need_approval,
    DROP COLUMN manual_purges_need_approval,
    DROP COLUMN change_ttl_seconds;

ALTER TABLE idem_change_requests RENAME TO idem_approval_requests;
ALTER TABLE idem_approval_requests DROP CONSTRAINT idem_change_requests_kind_check;
ALTER TABLE idem_approval_requests DROP CONSTRAINT idem_change_requests_state_check;
ALTER TABLE idem_approval_requests DROP CONSTRAINT idem_change_requests_approved_check;
ALTER TABLE idem_approval_requests RENAME CONSTRAINT idem_change_requests_used_check TO idem_approval_requests_used_check;
ALTER TABLE idem_approval_requests RENAME CONSTRAINT idem_change_requests_pkey TO idem_approval_requests_pkey;
ALTER TABLE idem_approval_requests RENAME CONSTRAINT idem_change_requests_spec_sha256_check
    TO idem_approval_requests_spec_sha256_check;
ALTER SEQUENCE idem_change_requests_id_seq RENAME TO idem_approval_requests_id_seq;
DROP INDEX idem_change_requests_pending;
ALTER INDEX idem_change_requests_used_xid RENAME TO idem_approval_requests_used_xid;
ALTER TABLE idem_approval_requests
    ADD COLUMN declined_login  TEXT,
    ADD COLUMN declined_role   TEXT,
    ADD COLUMN declined_actor  TEXT,
    ADD COLUMN declined_reason TEXT,
    ADD COLUMN declined_at     TIMESTAMPTZ,
    ADD COLUMN decline_audit_id BIGINT,
    ADD CONSTRAINT idem_approval_requests_kind_fkey FOREIGN KEY (kind) REFERENCES idem_approval_kinds (kind),
    ADD CONSTRAINT idem_approval_requests_state_check
        CHECK (state IN ('awaiting_approval', 'approved', 'used', 'declined')),
    ADD CONSTRAINT idem_approval_requests_approved_check
        CHECK ((approved_at IS NULL) = (approved_login IS NULL) AND (approved_at IS NULL) = (approval_expires_at IS NULL)
               AND (state IN ('awaiting_approval', 'declined')) = (approved_at IS NULL)),
    ADD CONSTRAINT idem_approval_requests_declined_check
        CHECK ((state = 'declined') = (declined_at IS NOT NULL) AND (declined_at IS NULL) = (declined_login IS NULL));
CREATE INDEX idem_approval_requests_open ON idem_approval_requests (id) WHERE state IN ('awaiting_approval', 'approved');

-- A recovery job's request is a row like any other (kind 'job', job_id its job): the job keeps
-- why it needed one (needs_approval, approval_threshold, approval_why), the request its life.
ALTER TABLE idem_approval_requests
    ADD COLUMN job_id BIGINT UNIQUE REFERENCES idem_jobs (id),
    ADD CONSTRAINT idem_approval_requests_job_check CHECK ((kind = 'job') = (job_id IS NOT NULL));
INSERT INTO idem_approval_requests AS r (kind, job_id, spec, spec_sha256, state, requested_login, requested_role,
                                         requested_actor, requested_reason, requested_at, approvable_until,
                                         request_audit_id, approved_login, approved_role, approved_actor,
                                         approved_reason, approved_at, approval_expires_at, approval_audit_id,
                                         declined_login, declined_reason, declined_at)
SELECT 'job', j.id,
       -- The job's spec as idem_job_spec writes it (that function is not defined yet on a fresh install).
       jsonb_build_object('action', j.action, 'extra_attempts', j.extra_attempts, 'filter', j.filter,
                          'moment_us', (extract(epoch FROM j.moment) * 1000000)::bigint, 'cap', j.cap,
                          'matched', j.matched)
       || CASE WHEN j.redrive THEN jsonb_build_object('redrive', true) ELSE '{}'::jsonb END,
       j.spec_sha256,
       CASE WHEN j.approved_at IS NOT NULL THEN 'approved'
            WHEN j.state = 'awaiting_approval' THEN 'awaiting_approval' ELSE 'declined' END,
       j.db_role, COALESCE(j.starter_role, j.db_role), j.actor, j.reason,
       j.moment, COALESCE(j.approval_requested_until, j.moment),
       COALESCE(j.start_audit_id, 0), j.approved_login, j.approved_role, j.approved_actor, j.approved_reason,
       j.approved_at, j.approval_expires_at, j.approval_audit_id,
       -- Cancelled while it waited: turned down by whoever cancelled it.
       CASE WHEN j.approved_at IS NULL AND j.state <> 'awaiting_approval'
            THEN COALESCE(split_part(j.cancelled_by, ' ', 1), 'unknown') END,
       CASE WHEN j.approved_at IS NULL AND j.state <> 'awaiting_approval' THEN COALESCE(j.cancel_reason, 'ended') END,
       CASE WHEN j.approved_at IS NULL AND j.state <> 'awaiting_approval' THEN COALESCE(j.finished_at, j.moment) END
  FROM idem_jobs j
 WHERE j.needs_approval AND j.spec_sha256 IS NOT NULL
 ORDER BY j.id;
ALTER TABLE idem_jobs
    DROP CONSTRAINT idem_jobs_approval_check,
    DROP CONSTRAINT idem_jobs_approved_check,
    DROP COLUMN approval_requested_until,
    DROP COLUMN approved_login,
    DROP COLUMN approved_role,
    DROP COLUMN approved_actor,
    DROP COLUMN approved_reason,
    DROP COLUMN approved_spec_sha256,
    DROP COLUMN approved_at,
    DROP COLUMN approval_expires_at,
    DROP COLUMN approval_audit_id;

ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                          'approve', 'approval_policy', 'change_request', 'change_approve', 'change_use', 'decline')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                                                     'approve', 'approval_policy', 'change_request', 'change_approve',
                                                     'change_use', 'decline')));

-- idem_set_approval_policy(), idem_approval_request_add(), idem_approval_image(), idem_approval_approve(),
-- idem_approval_decline(): defined in functions/. Readers list the requests from the table itself
-- (operations/approvals.h, idemctl approvals list, the console's Approvals dialog).
