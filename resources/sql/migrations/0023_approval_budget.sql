-- Idem schema v23: what one login changes without a second person, bounded over a window; an
-- approved purge held to its spec (issue #40, items 1 and 5).
--
-- The budget: with the approval policy's budget_rows set (idem_set_approval_budget, the owner's,
-- audited as action 'approval_policy'), one login (session_user) changes at most budget_rows task
-- rows without an approval within any budget_window_seconds, whatever path it takes: the single
-- actions (idem_requeue, idem_release, idem_fail: what idemctl requeue/release/fail, --keys-from
-- and the console's bulk actions run, one row each) and recovery jobs (their rows to act on, taken
-- at the start) count together. Every one of those paths consults one function,
-- idem_approval_gate, which takes the rows from the budget (a row of idem_approval_uses) or says
-- why they need approval: a job then starts awaiting approval (approval_why 'budget'), a single
-- action is refused with SQLSTATE ID004 saying how to get it approved (a job, which another login
-- approves). Rows of an approved job never count. A login is not a person: two logins of one
-- person have a budget each (docs/operators-guide.md, threat model).
--
-- Purges: a run begun by the use of an approved request (idem_change_use) records the request's
-- spec (batch, max_seconds, duty) and idem_purge_batch holds the run to it: no larger batch, no
-- batch after max_seconds, none sooner than the duty allows after the last one (ID004 else).
-- Scheduled runs are recognised by pg_cron's own record of the run (cron.job_run_details naming
-- this backend and the command it runs, cron.log_run on), not by application_name.
ALTER TABLE idem_approval_policy
    ADD COLUMN budget_rows           BIGINT CHECK (budget_rows BETWEEN 0 AND 1000000),
    ADD COLUMN budget_window_seconds INTEGER NOT NULL DEFAULT 3600 CHECK (budget_window_seconds BETWEEN 60 AND 604800);

-- What each login changed without an approval: one row per single action applied, one per job
-- started without one. Kept for the longest window (a week), pruned by the gate.
CREATE TABLE idem_approval_uses (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    login    TEXT NOT NULL,  -- session_user
    at       TIMESTAMPTZ NOT NULL,
    row_count BIGINT NOT NULL CHECK (row_count > 0),
    kind     TEXT NOT NULL,  -- requeue, release, fail (a single action), job
    job_id   BIGINT
);
CREATE INDEX idem_approval_uses_login ON idem_approval_uses (login, at);
REVOKE ALL ON idem_approval_uses FROM PUBLIC;

-- Why a job waits for approval: 'rows' (more than job_rows) or 'budget' (over its login's budget).
ALTER TABLE idem_jobs ADD COLUMN approval_why TEXT CHECK (approval_why IN ('rows', 'budget'));
UPDATE idem_jobs SET approval_why = 'rows' WHERE needs_approval;

ALTER TABLE idem_purge_runs
    ADD COLUMN change_request_id BIGINT,
    ADD COLUMN spec_batch        INTEGER,
    ADD COLUMN spec_max_seconds  INTEGER,
    ADD COLUMN spec_duty         DOUBLE PRECISION,
    ADD COLUMN last_batch_ms     DOUBLE PRECISION;

-- idem_approval_gate(), idem_approval_budget(), idem_set_approval_budget(): defined in functions/.
