-- Idem schema v19: recovery jobs (issue #28, first part).
--
-- A recovery job applies one recovery action (requeue, release, fail) to every task a filter
-- matched as of one moment, run by the database in batches that commit on their own:
-- - idem_job_start records the job and the rows the filter matches in the start's snapshot (the
--   job's moment), each with the status and updated_at it had then, in one transaction with the
--   job's first audit entry; nothing is changed yet. A filter matching nothing, more rows than
--   the cap, no row the action applies to, or rows another open job still has to do: refused,
--   nothing written.
-- - CALL idem_job_run(id) runs it: a runner attaches (a session advisory lock under random keys,
--   one runner per job), then each batch takes the job's row lock and up to N pending rows, locks
--   each task row with SKIP LOCKED (a row somebody holds is tried again later, then refused as
--   busy) and applies the action under the single actions' compare-and-set guard
--   (recovery_action_apply: a row whose status or updated_at moved on since the moment is
--   refused, never changed), one audit entry per changed row, linked to the job by "job_id" in
--   its after image. The batch records every outcome in the same transaction as the change, so a
--   killed runner leaves every committed batch recorded and nothing of the one it was in; anyone
--   with idem_operator resumes it from there.
-- - idem_job_cancel stops it at the next batch: the rows not yet done are recorded as skipped
--   (cancelled), with the job's closing audit entry.
-- A job has two audit entries of its own (action 'job', no key): its start, and its end
-- (finished or cancelled), each with the job as JSON in its images.
CREATE TABLE idem_jobs (
    id                     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- awaiting_approval: reserved for the approval of a later version (a job whose spec a second
    -- person must approve before a runner may attach); no function of v19 creates one.
    state                  TEXT NOT NULL CHECK (state IN ('awaiting_approval', 'active', 'finished', 'cancelled')),
    action                 TEXT NOT NULL CHECK (action IN ('requeue', 'release', 'fail')),
    extra_attempts         INTEGER CHECK (extra_attempts BETWEEN 1 AND 1000),
    filter                 JSONB NOT NULL,  -- as idem_job_filter_check returned it (canonical)
    moment                 TIMESTAMPTZ NOT NULL,  -- the filter matched the rows as of this instant
    cap                    BIGINT NOT NULL CHECK (cap BETWEEN 1 AND 1000000),
    matched                BIGINT NOT NULL DEFAULT 0 CHECK (matched >= 0),
    -- SHA-256 of the job's spec as JSON text: action, extra attempts, filter, moment, cap and
    -- matched (idem_job_spec). What an approval will name, so that nothing else runs under it.
    spec_sha256            TEXT,
    reason                 TEXT NOT NULL,
    db_role                TEXT NOT NULL,  -- who started it: session_user
    actor                  TEXT NOT NULL,  -- as the client named itself
    application            TEXT NOT NULL,
    changed                BIGINT NOT NULL DEFAULT 0 CHECK (changed >= 0),
    refused_moved_on       BIGINT NOT NULL DEFAULT 0 CHECK (refused_moved_on >= 0),
    refused_busy           BIGINT NOT NULL DEFAULT 0 CHECK (refused_busy >= 0),
    refused_gone           BIGINT NOT NULL DEFAULT 0 CHECK (refused_gone >= 0),
    skipped_not_applicable BIGINT NOT NULL DEFAULT 0 CHECK (skipped_not_applicable >= 0),
    skipped_cancelled      BIGINT NOT NULL DEFAULT 0 CHECK (skipped_cancelled >= 0),
    batches                BIGINT NOT NULL DEFAULT 0 CHECK (batches >= 0),
    attaches               INTEGER NOT NULL DEFAULT 0 CHECK (attaches >= 0),
    -- The runner attached last: its backend holds the advisory lock (runner_key1, runner_key2)
    -- while it runs (idem_job_runner_alive); a killed runner's lock is gone with its session.
    runner_pid             INTEGER,
    runner_key1            INTEGER,
    runner_key2            INTEGER,
    runner_role            TEXT,
    runner_actor           TEXT,
    runner_application     TEXT,
    runner_since           TIMESTAMPTZ,
    last_batch_at          TIMESTAMPTZ,
    cancelled_by           TEXT,  -- "session_user (actor)" of the cancel
    cancel_reason          TEXT,
    finished_at            TIMESTAMPTZ,
    start_audit_id         BIGINT,
    end_audit_id           BIGINT,
    CHECK ((action = 'requeue') = (extra_attempts IS NOT NULL)),
    CHECK (changed + refused_moved_on + refused_busy + refused_gone + skipped_not_applicable + skipped_cancelled
           <= matched),
    CHECK ((state IN ('finished', 'cancelled')) = (finished_at IS NOT NULL)),
    CHECK ((state = 'cancelled') = (cancel_reason IS NOT NULL))
);
REVOKE ALL ON idem_jobs FROM PUBLIC;
CREATE INDEX idem_jobs_open_idx ON idem_jobs (id) WHERE state IN ('awaiting_approval', 'active');

-- The rows a job matched, in key order (seq 1..matched), with the version each had at the
-- moment, and what became of it:
--   pending                  not done yet (tries: times its row was found locked)
--   changed                  the action applied; audit_id is its entry
--   refused  moved_on        its status or updated_at differed from the moment's (now_status,
--                            now_updated_at: as the job found it): somebody acted on it since
--            busy            its row was locked every time the job tried it (5 tries)
--            gone            no such row any more
--   skipped  not_applicable  the action does not apply to its status at the moment (requeue:
--                            failed, retryable_failed; release: processing; fail: processing,
--                            retryable_failed)
--            cancelled       the job was cancelled first
CREATE TABLE idem_job_items (
    job_id          BIGINT NOT NULL REFERENCES idem_jobs (id),
    seq             INTEGER NOT NULL CHECK (seq >= 1),
    idempotency_key TEXT NOT NULL,
    seen_status     TEXT NOT NULL,
    seen_updated_at TIMESTAMPTZ NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'changed', 'refused', 'skipped')),
    why             TEXT CHECK (why IN ('moved_on', 'busy', 'gone', 'not_applicable', 'cancelled')),
    tries           SMALLINT NOT NULL DEFAULT 0 CHECK (tries >= 0),
    next_try_at     TIMESTAMPTZ,
    done_at         TIMESTAMPTZ,
    now_status      TEXT,
    now_updated_at  TIMESTAMPTZ,
    audit_id        BIGINT,
    PRIMARY KEY (job_id, seq),
    CHECK (CASE state WHEN 'refused' THEN why IN ('moved_on', 'busy', 'gone')
                      WHEN 'skipped' THEN why IN ('not_applicable', 'cancelled')
                      ELSE why IS NULL END),
    CHECK ((state = 'changed') = (audit_id IS NOT NULL))
);
REVOKE ALL ON idem_job_items FROM PUBLIC;
-- What a batch takes next: untried rows in key order, then the ones found locked.
CREATE INDEX idem_job_items_pending_idx ON idem_job_items (job_id, tries, seq) WHERE state = 'pending';
-- Whether a new job's rows are still to be done by an open one.
CREATE INDEX idem_job_items_pending_key_idx ON idem_job_items (idempotency_key) WHERE state = 'pending';

-- One row, only ever locked: job starts take it (FOR UPDATE) so that two starting at once see
-- each other's rows. No role but the owner has any privilege on it, so nobody else can hold it.
CREATE TABLE idem_job_start_lock (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one)
);
REVOKE ALL ON idem_job_start_lock FROM PUBLIC;
INSERT INTO idem_job_start_lock VALUES (true);

-- The job's own entries: action 'job', no key, the job as JSON in the images. The entries of the
-- rows it changed keep their action (requeue, release, fail) and key, with "job_id" in the after
-- image; every entry of job N has after_image -> 'job_id' = N.
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume', 'annotate', 'job')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume', 'annotate', 'job')));
CREATE INDEX task_idempotency_audit_job_idx ON task_idempotency_audit ((after_image -> 'job_id'), id)
    WHERE after_image ? 'job_id';

-- recovery_action_apply gains p_job_id (the job whose batch applies it; NULL for a single
-- action): its file defines the new signature, the old one goes.
DROP FUNCTION IF EXISTS recovery_action_apply(text, text, text, bigint, integer, text, text);

-- idem_job_start(), idem_job_run(), idem_job_cancel() and their helpers: defined in functions/.
