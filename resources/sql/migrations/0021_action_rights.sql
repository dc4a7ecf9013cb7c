-- Idem schema v21: per-action rights and a second person's approval (issue #28, second part).
--
-- Rights: each action is granted through a NOLOGIN role of its own (resources/sql/roles.sql):
-- idem_reader (read), idem_may_requeue, idem_may_release, idem_may_fail, idem_may_pause,
-- idem_may_purge (purge and retention), idem_may_approve. idem_operator is a member of all of
-- them, so a login granted idem_operator keeps every right it had. The database enforces them:
-- the single actions, pauses, purge and retention by EXECUTE grants; recovery jobs, whose one set
-- of functions serves three actions, by idem_has_right inside: the role that calls (idem_caller:
-- the role set with SET ROLE, else the login) must hold the job's action at its start, its
-- cancel, and each attach and batch of a runner, and so must the role that started it (a job's
-- rows are applied with its starter's rights: revoking them stops the job at its next batch).
--
-- Approval: with a policy set (idem_set_approval, the owner's), a job that would act on more
-- rows than its threshold is started awaiting approval; a second login holding idem_may_approve
-- approves it (idem_job_approve) naming its spec_sha256 (its action, extra attempts, filter,
-- moment, cap and count), so nothing else can run under that approval. "Another login": the
-- approver's session_user is not the starter's, and neither is a member of the other (neither can
-- SET ROLE to the other); a superuser, member of every role, neither approves nor is approved.
-- A request not approved within the policy's time to live can no longer be approved; an approval
-- lets the job start or resume until it expires, then a runner is refused (a batch already
-- running goes on to its end). Both the request (the job's start entry) and the approval (action
-- 'approve') are on the audit chain, as is every change of the policy (action 'approval_policy').
ALTER TABLE idem_jobs
    ADD COLUMN starter_role             TEXT,  -- idem_caller() at the start: whose rights the rows are applied with
    ADD COLUMN needs_approval           BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN approval_threshold       BIGINT,  -- the policy's threshold when it was started
    ADD COLUMN approval_requested_until TIMESTAMPTZ,  -- approvable until then
    ADD COLUMN approved_login           TEXT,  -- the approver's session_user
    ADD COLUMN approved_role            TEXT,  -- the approver's idem_caller()
    ADD COLUMN approved_actor           TEXT,
    ADD COLUMN approved_reason          TEXT,
    ADD COLUMN approved_spec_sha256     TEXT,
    ADD COLUMN approved_at              TIMESTAMPTZ,
    ADD COLUMN approval_expires_at      TIMESTAMPTZ,
    ADD COLUMN approval_audit_id        BIGINT,
    ADD CONSTRAINT idem_jobs_approval_check
        CHECK (needs_approval OR (approval_requested_until IS NULL AND approved_at IS NULL)),
    ADD CONSTRAINT idem_jobs_awaiting_check CHECK (state <> 'awaiting_approval' OR needs_approval),
    ADD CONSTRAINT idem_jobs_approved_check
        CHECK ((approved_at IS NULL) = (approved_login IS NULL) AND (approved_at IS NULL) = (approval_expires_at IS NULL)
               AND (approved_at IS NULL) = (approved_spec_sha256 IS NULL));

-- The approval policy: one row. job_rows NULL: no job waits for approval (as before v21).
CREATE TABLE idem_approval_policy (
    one         BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    job_rows    BIGINT CHECK (job_rows BETWEEN 0 AND 1000000),  -- a job acting on more rows waits
    ttl_seconds INTEGER NOT NULL DEFAULT 3600 CHECK (ttl_seconds BETWEEN 60 AND 604800),
    updated_at  TIMESTAMPTZ,
    updated_by  TEXT,
    audit_id    BIGINT
);
REVOKE ALL ON idem_approval_policy FROM PUBLIC;
INSERT INTO idem_approval_policy (one) VALUES (true);

ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                          'approve', 'approval_policy')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                                                     'approve', 'approval_policy')));

-- idem_caller(), idem_has_right(), idem_rights(), idem_job_approve(), idem_set_approval(),
-- idem_clear_approval(): defined in functions/.
