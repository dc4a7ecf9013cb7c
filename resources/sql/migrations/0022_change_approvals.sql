-- Idem schema v22: a second person's approval for retention changes and manual purges (issue #28,
-- its last part).
--
-- Two switches on the approval policy, the owner's (idem_set_change_approval, audited as action
-- 'approval_policy' like the job threshold): retention_changes_need_approval and
-- manual_purges_need_approval. Off (the default) nothing changes from v21. On, the direct calls
-- (idem_set_retention, idem_clear_retention; idem_purge_begin and idem_purge, what idemctl purge
-- and the console run) are refused with SQLSTATE ID004, saying to request the change instead:
-- idem_request_retention / idem_request_purge record the exact spec as JSON and its SHA-256; a
-- second login holding idem_may_approve approves it naming that SHA-256 (idem_change_approve;
-- "another login" as in v21: not the requester, neither a member of the other, no superuser); the
-- approved request is then used exactly once (idem_change_use, naming the SHA-256 again): the
-- retention change applied, or the purge run begun. The request is approvable for the policy's
-- change_ttl_seconds, its approval usable as long. Each request, approval and use is on the audit
-- chain (actions change_request, change_approve, change_use), with the change itself (action
-- retention, or the purge run's own entry).
--
-- Scheduled purges keep running: CALL idem_purge_run(...) from a pg_cron job in this database
-- (pg_cron's record of the running job names the session, or the session is one pg_cron opened
-- for a login with an active purge job) follows the current retention policy, itself under
-- approval, and is not a manual purge. The same CALL by hand is refused while the switch is on.
ALTER TABLE idem_approval_policy
    ADD COLUMN retention_changes_need_approval BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN manual_purges_need_approval     BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN change_ttl_seconds              INTEGER NOT NULL DEFAULT 3600
        CHECK (change_ttl_seconds BETWEEN 60 AND 604800);

CREATE TABLE idem_change_requests (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind              TEXT NOT NULL CHECK (kind IN ('retention', 'purge')),
    spec              JSONB NOT NULL,
    spec_sha256       TEXT NOT NULL CHECK (spec_sha256 ~ '^[0-9a-f]{64}$'),
    state             TEXT NOT NULL DEFAULT 'awaiting_approval'
                          CHECK (state IN ('awaiting_approval', 'approved', 'used')),
    requested_login   TEXT NOT NULL,  -- session_user
    requested_role    TEXT NOT NULL,  -- idem_caller()
    requested_actor   TEXT NOT NULL,
    requested_reason  TEXT NOT NULL,
    requested_at      TIMESTAMPTZ NOT NULL,
    approvable_until  TIMESTAMPTZ NOT NULL,
    request_audit_id  BIGINT NOT NULL,
    approved_login    TEXT,
    approved_role     TEXT,
    approved_actor    TEXT,
    approved_reason   TEXT,
    approved_at       TIMESTAMPTZ,
    approval_expires_at TIMESTAMPTZ,
    approval_audit_id BIGINT,
    used_login        TEXT,
    used_at           TIMESTAMPTZ,
    used_xid          xid8,  -- the transaction that used it: the guarded change runs in it, once
    use_audit_id      BIGINT,
    applied_audit_id  BIGINT,  -- retention: the change's own entry
    purge_run_id      BIGINT,  -- purge: the run it began
    CONSTRAINT idem_change_requests_approved_check
        CHECK ((approved_at IS NULL) = (approved_login IS NULL) AND (approved_at IS NULL) = (approval_expires_at IS NULL)
               AND (state = 'awaiting_approval') = (approved_at IS NULL)),
    CONSTRAINT idem_change_requests_used_check
        CHECK ((state = 'used') = (used_at IS NOT NULL) AND (used_at IS NULL) = (used_xid IS NULL))
);
CREATE INDEX idem_change_requests_pending ON idem_change_requests (id) WHERE state <> 'used';
CREATE INDEX idem_change_requests_used_xid ON idem_change_requests (used_xid) WHERE used_xid IS NOT NULL;
REVOKE ALL ON idem_change_requests FROM PUBLIC;

ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                          'approve', 'approval_policy', 'change_request', 'change_approve', 'change_use')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                                                     'approve', 'approval_policy', 'change_request', 'change_approve',
                                                     'change_use')));

-- idem_set_change_approval(), idem_change_guard(), idem_change_image(), idem_request_retention(),
-- idem_request_purge(), idem_change_approve(), idem_change_use(), idem_change_list(): defined in
-- functions/.
