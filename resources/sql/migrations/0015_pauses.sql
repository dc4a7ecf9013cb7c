-- Idem schema v15: pauses (issue #26).
--
-- An operator stops the work that hammers a broken downstream without losing any of it: a pause
-- names a tenant, an operation or both ('*' for all), with a reason, who, and optionally until
-- when. claim() honours it for every worker in every language: a key under a pause is neither
-- acquired nor taken over; the caller gets the decision 'paused' and asks again later. Replays,
-- conflicts and the other answers from stored state are unchanged.
--
-- One row per (tenant, operation): setting it again changes it, lifting it deletes it, each
-- through an audited function (idem_pause, idem_resume; one entry each, actions 'pause' and
-- 'resume'). A row past its expiry no longer pauses anything (claim() compares with the server's
-- clock) and stays, shown as expired, until it is lifted or set again. The table stays tiny, so
-- the check on the claim path is one probe of its primary key.
CREATE TABLE idem_pauses (
    tenant     TEXT NOT NULL CHECK (tenant = '*' OR tenant ~ '^[!-9;-~]{1,64}$'),
    operation  TEXT NOT NULL CHECK (operation = '*' OR operation ~ '^[!-9;-~]{1,64}$'),
    reason     TEXT NOT NULL,
    paused_by  TEXT NOT NULL,  -- session user (actor), as the audit entry names them
    paused_at  TIMESTAMPTZ NOT NULL,  -- first set; kept when the pause is changed
    changed_at TIMESTAMPTZ NOT NULL,
    until      TIMESTAMPTZ,  -- NULL: until resumed
    audit_id   BIGINT NOT NULL,  -- the entry that set it last
    PRIMARY KEY (tenant, operation),
    CHECK (until IS NULL OR until > changed_at)
);
REVOKE ALL ON idem_pauses FROM PUBLIC;

-- What claim() reads first: one row per tenant that some pause names ('*' included), with the
-- operations paused for it, in force or expired. A key whose tenant and operation no pause names
-- is told so by a scan of a few narrow rows, however many pauses other tenants and operations
-- have (bench/README.md, "Session 10"); only a possible match reads idem_pauses itself. Kept
-- equal to idem_pauses by idem_pause_summarise(), which idem_pause and idem_resume call in their
-- transaction; a row too many only costs that second read, a row too few would let claims through,
-- so whoever writes idem_pauses otherwise (the owner, by hand) calls it after.
CREATE TABLE idem_pause_tenants (
    tenant     TEXT PRIMARY KEY,
    operations TEXT[] NOT NULL
);
REVOKE ALL ON idem_pause_tenants FROM PUBLIC;

-- The two new audit actions. Like retention and purge they name no single task key: the scope
-- is in the entry's before and after images.
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume')));

-- A claim turned away by a pause is counted as the outcome 'paused' (workers using the library
-- count it; add_counters() of an older schema would refuse the batch, so migrate first).
ALTER TABLE idem_counters DROP CONSTRAINT idem_counters_outcome_check;
ALTER TABLE idem_counters ADD CONSTRAINT idem_counters_outcome_check CHECK (outcome IN (
    'acquired', 'reacquired_lease', 'reacquired_retry', 'replayed', 'in_progress', 'conflict', 'retry_later',
    'rejected_failed', 'stale_token', 'succeeded', 'failed_retryable', 'failed_permanent', 'failed_unknown',
    'exhausted', 'retry_failed',
    'paused'));

-- idem_pause(), idem_resume(), idem_pause_list(), idem_pause_match(): defined in functions/.
