-- Idem schema v17: latency (issue #27).
--
-- Three figures per operation (and tenant), all by the server's clock, for every worker including
-- those that speak only the SQL API, with no write on the claim path beyond the row's own:
-- - run time of each attempt: from the claim that acquired or took over the key to complete() or
--   fail() (attempt_started_at, set by claim(); fail() writes the attempt's run_us into its
--   errors entry, since a retry sets attempt_started_at again);
-- - time to success of each key: from its first claim (created_at) to complete(), across retries,
--   takeovers and requeues;
-- - the attempts a success took.
-- idem_latency_rollup() folds closed minutes from the rows (the succeeded index per operation and
-- the unfinished index) into idem_latency, one row per minute, tenant, operation and kind, with a
-- log-spaced histogram: slot s holds values in (10^(s/32), 10^((s+1)/32)] microseconds (7.5 %
-- wide; a percentile read as the slot's geometric middle is within 3.7 % of the exact one), and
-- for attempts slot s is s attempts. A minute is folded once, when it has been closed for a
-- minute: a completion whose transaction commits more than a minute after complete() ran is not
-- in the figures. Readers call the roll-up (it does nothing until a minute is due) and read only
-- folded minutes, so figures never change once shown and the exporter's histograms only grow.
ALTER TABLE task_idempotency ADD COLUMN attempt_started_at TIMESTAMPTZ;  -- NULL before v17

CREATE TABLE idem_latency (
    bucket    TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc('minute', bucket)),
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('run', 'tts', 'attempts')),
    n         BIGINT NOT NULL CHECK (n > 0),
    total     NUMERIC NOT NULL CHECK (total >= 0),  -- sum of the values: microseconds, or attempts
    slots     SMALLINT[] NOT NULL,  -- ascending, each once
    counts    BIGINT[] NOT NULL,    -- values in slots[i]
    CHECK (cardinality(slots) = cardinality(counts) AND cardinality(slots) >= 1),
    PRIMARY KEY (bucket, tenant, operation, kind)
);
REVOKE ALL ON idem_latency FROM PUBLIC;

-- Where the roll-up stands: every minute before folded_to is in idem_latency. Starts at the
-- migration: durations from before it are not reconstructed.
CREATE TABLE idem_latency_state (
    one       BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    folded_to TIMESTAMPTZ NOT NULL CHECK (folded_to = date_trunc('minute', folded_to)),
    folded_at TIMESTAMPTZ
);
REVOKE ALL ON idem_latency_state FROM PUBLIC;
INSERT INTO idem_latency_state (one, folded_to) VALUES (true, date_trunc('minute', now()));

-- Marks that explain a change in a chart: an operator's annotation (idem_annotate: "deploy
-- v2.3.1", "gateway vendor incident") is an audit entry of its own, action 'annotate', on the
-- existing chain; idem_events() lists it with the other audited actions of a window.
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume', 'annotate')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume', 'annotate')));
-- idem_events() reads the trail by time.
CREATE INDEX task_idempotency_audit_at_idx ON task_idempotency_audit (at);
