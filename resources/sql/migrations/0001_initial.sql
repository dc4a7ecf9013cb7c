-- Idem schema v1.
-- idemctl migrate runs this in one transaction with search_path set to the target schema,
-- so every name below lands there. No triggers on the Idem tables: they must stay
-- distributable by idempotency_key (Citus), see DESIGN section 7.

-- The article's table, verbatim. IF NOT EXISTS adopts a table of exactly this shape.
CREATE TABLE IF NOT EXISTS task_idempotency (
    idempotency_key TEXT PRIMARY KEY,
    request_hash    TEXT NOT NULL,
    status          TEXT NOT NULL
                    CHECK (status IN ('processing', 'succeeded', 'retryable_failed', 'failed')),
    result_json     JSONB,
    error_message   TEXT,
    owner_token     UUID,
    lease_until     TIMESTAMPTZ,
    attempts        INTEGER NOT NULL DEFAULT 0,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Additive columns. Added nullable first so adopted rows can be filled from what they hold.
ALTER TABLE task_idempotency
    ADD COLUMN IF NOT EXISTS created_at      TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS next_attempt_at TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS max_attempts    INTEGER,
    ADD COLUMN IF NOT EXISTS error_class     TEXT,
    ADD COLUMN IF NOT EXISTS errors          JSONB;

-- Adopted rows: first seen is the last update we know of; a retryable row is due now;
-- the error the article kept becomes the first entry of the error history.
UPDATE task_idempotency
   SET created_at      = updated_at,
       next_attempt_at = CASE WHEN status = 'retryable_failed' THEN updated_at END,
       max_attempts    = GREATEST(attempts, 5),
       error_class     = CASE status WHEN 'retryable_failed' THEN 'retryable'
                                     WHEN 'failed' THEN 'permanent' END,
       errors          = CASE WHEN error_message IS NULL THEN '[]'::jsonb
                              ELSE jsonb_build_array(jsonb_build_object(
                                       'attempt', attempts,
                                       'at', updated_at,
                                       'class', CASE status WHEN 'failed' THEN 'permanent' ELSE 'retryable' END,
                                       'message', error_message)) END
 WHERE created_at IS NULL;

ALTER TABLE task_idempotency
    ALTER COLUMN created_at SET DEFAULT now(),
    ALTER COLUMN created_at SET NOT NULL,
    ALTER COLUMN max_attempts SET DEFAULT 5,
    ALTER COLUMN max_attempts SET NOT NULL,
    ALTER COLUMN errors SET DEFAULT '[]'::jsonb,
    ALTER COLUMN errors SET NOT NULL,
    ADD CONSTRAINT task_idempotency_error_class_check
        CHECK (error_class IN ('retryable', 'permanent', 'unknown')),
    ADD CONSTRAINT task_idempotency_attempts_check CHECK (attempts >= 0),
    ADD CONSTRAINT task_idempotency_max_attempts_check CHECK (max_attempts >= 1),
    ADD CONSTRAINT task_idempotency_errors_check CHECK (jsonb_typeof(errors) = 'array');

-- The console's polls read only these small sets; none of them holds a succeeded row
-- except the retried index, which new claims never enter (attempts = 1).
CREATE INDEX IF NOT EXISTS task_idempotency_processing_idx
    ON task_idempotency (lease_until) WHERE status = 'processing';
CREATE INDEX IF NOT EXISTS task_idempotency_unfinished_idx
    ON task_idempotency (updated_at) WHERE status <> 'succeeded';
CREATE INDEX IF NOT EXISTS task_idempotency_retry_due_idx
    ON task_idempotency (next_attempt_at) WHERE status = 'retryable_failed';
CREATE INDEX IF NOT EXISTS task_idempotency_retried_idx
    ON task_idempotency (updated_at) WHERE attempts > 1;

-- Per-minute outcome counts, flushed in batches by the workers (never on the claim's lock).
CREATE TABLE idem_counters (
    bucket    TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc('minute', bucket)),
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    outcome   TEXT NOT NULL CHECK (outcome IN (
                  'acquired',          -- claim created the key
                  'reacquired_lease',  -- claim took over an expired lease
                  'reacquired_retry',  -- claim took a retryable row whose backoff had elapsed
                  'replayed',          -- duplicate of a succeeded key, stored result returned
                  'in_progress',       -- duplicate while a live lease runs
                  'conflict',          -- same key, different request digest
                  'retry_later',       -- retryable row still in backoff
                  'rejected_failed',   -- claim on a failed row
                  'stale_token',       -- complete/fail/heartbeat with a token that lost the row
                  'succeeded',
                  'failed_retryable',
                  'failed_permanent',
                  'failed_unknown',    -- outcome unknown: kept retryable with the same key
                  'exhausted')),
    n         BIGINT NOT NULL CHECK (n >= 0),
    PRIMARY KEY (bucket, tenant, operation, outcome)
);

-- Append-only record of every manual recovery action. Each entry_hash is the SHA-256 of the
-- entry's fields and prev_hash, so editing, removing or reordering an entry breaks the chain.
CREATE TABLE task_idempotency_audit (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at              TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    idempotency_key TEXT NOT NULL,
    action          TEXT NOT NULL CHECK (action IN ('requeue', 'release', 'fail')),
    reason          TEXT NOT NULL CHECK (length(btrim(reason)) > 0),
    db_role         TEXT NOT NULL,
    os_user         TEXT NOT NULL,
    client_host     TEXT NOT NULL,
    before_image    JSONB NOT NULL,
    after_image     JSONB NOT NULL,
    prev_hash       TEXT NOT NULL,
    entry_hash      TEXT NOT NULL UNIQUE
);
CREATE INDEX task_idempotency_audit_key_idx ON task_idempotency_audit (idempotency_key, id);
