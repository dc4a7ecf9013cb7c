-- Idem schema v31: proof that fencing works, and a lease advisor (issue 46 item 2).
--
-- A worker whose lease ran out while it still worked finds, when it completes, fails, heartbeats
-- or fences, that another attempt took the key over: complete() and the others refuse its token
-- (ID001), the refusal aborts its transaction, and the library counts it as the outcome
-- 'stale_token' (the takeover that caused it is the claimer's 'reacquired_lease'). Those counters
-- say which operation; this schema adds which worker, and the lease each claim asked for, so that
-- an operation's run times can be compared with it.
--
-- The lease of the attempt: claim() writes p_lease_ms into the row it writes anyway (the insert
-- of a new key, the update of a takeover): four bytes, no other write. NULL before v31.
ALTER TABLE task_idempotency ADD COLUMN lease_ms INTEGER;

-- Per minute, operation and lease asked: the succeeded attempts measured (a run time from
-- attempt_started_at to complete(), as idem_latency's 'run') and how many of them ran longer
-- than their lease: each of those could have been taken over, and its completion refused.
-- Folded by idem_latency_rollup() with the latency minutes (idem_lease_fold); kept 8 days.
CREATE TABLE idem_lease (
    bucket    TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc('minute', bucket)),
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    lease_ms  INTEGER NOT NULL CHECK (lease_ms BETWEEN 1 AND 86400000),
    attempts  BIGINT NOT NULL CHECK (attempts > 0),
    overruns  BIGINT NOT NULL CHECK (overruns BETWEEN 0 AND attempts),
    PRIMARY KEY (bucket, tenant, operation, lease_ms)
);
REVOKE ALL ON idem_lease FROM PUBLIC;

-- The takeovers and the refused late calls per minute, operation and worker: what add_counters()
-- receives as 'reacquired_lease' and 'stale_token', by the flushing session's application_name
-- (its login role when it has none). A worker's library flushes its own counts on its own
-- connection, so the name is the worker's. Minute rows go when the counters roll up into hours
-- (idem_counters_maintain).
CREATE TABLE idem_counters_workers (
    bucket    TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc('minute', bucket)),
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    worker    TEXT NOT NULL CHECK (octet_length(worker) BETWEEN 1 AND 256),
    outcome   TEXT NOT NULL CHECK (outcome IN ('reacquired_lease', 'stale_token')),
    n         BIGINT NOT NULL CHECK (n >= 0),
    PRIMARY KEY (bucket, tenant, operation, worker, outcome)
);
REVOKE ALL ON idem_counters_workers FROM PUBLIC;
