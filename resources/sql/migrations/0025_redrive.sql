-- Idem schema v25: re-execution that really runs (issue #42). docs/redrive.md describes the whole.
--
-- An operation may be registered as re-drivable (idem_redrive_register, by a worker or the HTTP
-- middleware); its claims (idem_claim_stored) then store the canonical request beside the key, in
-- a table of its own so task_idempotency stays narrow, bounded per operation and checked against
-- the row's request_hash, removed with its key. A requeue may ask to re-execute
-- (idem_requeue_reexecute, or a requeue job started with p_redrive): each requeued key gets a
-- re-drive item, which a registered re-driver of the operation takes (idem_redrive_take: SKIP
-- LOCKED, held by a pause), runs through the ordinary claim / fence / complete path with the same
-- key, and finishes (idem_redrive_finish). Re-drivers report themselves (idem_redriver_seen), so
-- operators see who can re-execute what (idem_redrive_status). Reading a stored request is a
-- right of its own, read_requests (role idem_may_read_requests; payloads hold personal data):
-- idem_stored_request shows everyone who reads tasks that one is stored, its content only to
-- holders of that right, with the fields the operation names redacted.

-- The re-drivable operations. tenant '*': every tenant of the operation. registered_by is the
-- login that registered it first: only its members (or the owner's) may update the registration,
-- report as its re-drivers and take its items, so a worker login of another operation never reads
-- one of its requests.
CREATE TABLE idem_redrive_operations (
    tenant            TEXT NOT NULL CHECK (tenant = '*' OR tenant ~ '^[!-9;-~]{1,64}$'),
    operation         TEXT NOT NULL CHECK (operation ~ '^[!-9;-~]{1,64}$'),
    max_request_bytes INTEGER NOT NULL DEFAULT 65536 CHECK (max_request_bytes BETWEEN 1 AND 1048576),
    -- Top-level JSON field names shown as "[redacted]" to holders of read_requests.
    redact            TEXT[] NOT NULL DEFAULT '{}' CHECK (cardinality(redact) <= 64),
    registered_at     TIMESTAMPTZ NOT NULL,
    registered_by     TEXT NOT NULL,  -- session_user of the first registration
    updated_at        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (operation, tenant)
);
REVOKE ALL ON idem_redrive_operations FROM PUBLIC;

-- The stored requests: the canonical JSON text whose v1 digest is the key's request_hash. Deleted
-- with the key (every purge path deletes task rows).
CREATE TABLE idem_stored_requests (
    idempotency_key TEXT PRIMARY KEY REFERENCES task_idempotency (idempotency_key) ON DELETE CASCADE,
    request         TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    bytes           INTEGER NOT NULL CHECK (bytes BETWEEN 1 AND 1048576),
    stored_at       TIMESTAMPTZ NOT NULL
);
REVOKE ALL ON idem_stored_requests FROM PUBLIC;

-- Re-drivers' presence. Online: last_seen within 30 s. At most 1000 rows per login (rows of the
-- login not seen for a day make room first).
CREATE TABLE idem_redrivers (
    tenant     TEXT NOT NULL,
    operation  TEXT NOT NULL,
    worker     TEXT NOT NULL,
    version    TEXT NOT NULL,
    db_role    TEXT NOT NULL,  -- session_user
    first_seen TIMESTAMPTZ NOT NULL,
    last_seen  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (operation, tenant, worker)
);
REVOKE ALL ON idem_redrivers FROM PUBLIC;
CREATE INDEX idem_redrivers_role_idx ON idem_redrivers (db_role, last_seen);

-- One re-execution asked for by a requeue:
--   queued     waiting for a re-driver (not before not_before)
--   running    taken by worker (its login worker_role) until lease_until; an expired one is taken again
--   succeeded  the key succeeded (or had already: replayed)
--   failed     the run failed (or gave up after 20 tries; detail says why)
--   conflict   the key's digest is not the stored request's
--   gone       the key was purged, or has no stored request (detail says which)
CREATE TABLE idem_redrive_items (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    idempotency_key TEXT NOT NULL,
    tenant          TEXT NOT NULL,
    operation       TEXT NOT NULL,
    job_id          BIGINT REFERENCES idem_jobs (id),
    state           TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'conflict', 'gone')),
    worker          TEXT,
    worker_role     TEXT,
    tries           INTEGER NOT NULL DEFAULT 0 CHECK (tries >= 0),
    lease_until     TIMESTAMPTZ,
    not_before      TIMESTAMPTZ,
    requested_at    TIMESTAMPTZ NOT NULL,
    requested_role  TEXT NOT NULL,  -- idem_caller() of the requeue (or the job's starter)
    requested_actor TEXT NOT NULL,
    taken_at        TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ,
    detail          TEXT,
    audit_id        BIGINT,  -- the requeue's audit entry
    CHECK ((state IN ('queued', 'running')) = (finished_at IS NULL)),
    CHECK (state <> 'running' OR (worker IS NOT NULL AND lease_until IS NOT NULL))
);
REVOKE ALL ON idem_redrive_items FROM PUBLIC;
-- At most one open item per key.
CREATE UNIQUE INDEX idem_redrive_items_open_key_idx ON idem_redrive_items (idempotency_key)
    WHERE state IN ('queued', 'running');
-- What a re-driver takes: the open items of its operation (and tenant).
CREATE INDEX idem_redrive_items_take_idx ON idem_redrive_items (operation, tenant, id)
    WHERE state IN ('queued', 'running');
CREATE INDEX idem_redrive_items_job_idx ON idem_redrive_items (job_id, state) WHERE job_id IS NOT NULL;
CREATE INDEX idem_redrive_items_key_idx ON idem_redrive_items (idempotency_key, id);

-- A requeue job may re-execute what it requeues (idem_job_start's p_redrive); part of its spec.
ALTER TABLE idem_jobs
    ADD COLUMN redrive BOOLEAN NOT NULL DEFAULT false,
    ADD CONSTRAINT idem_jobs_redrive_check CHECK (NOT redrive OR action = 'requeue');

-- New signatures (their files define them): idem_job_start gains p_redrive, recovery_action_apply
-- p_redrive (the audit entry's after image says "redrive": true).
DROP FUNCTION IF EXISTS idem_job_start(text, jsonb, bigint, text, text, integer);
DROP FUNCTION IF EXISTS recovery_action_apply(text, text, text, bigint, integer, text, text, bigint);

-- idem_redrive_register(), idem_redriver_seen(), idem_claim_stored(), idem_redrive_take(),
-- idem_redrive_finish(), idem_requeue_reexecute(), idem_redrive_status(), idem_redrive_outcomes(),
-- idem_redrive_items_of(), idem_stored_request() and their helpers: defined in functions/.
