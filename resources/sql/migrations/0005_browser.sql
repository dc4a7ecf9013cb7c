-- Idem schema v5: a per-key record of digest conflicts, for the task browser's
-- "digest-conflict keys" filter and the detail pane.
--
-- claim() (v2) answers a conflict without writing anything, and idem_counters only counts
-- conflicts per tenant/operation/minute, so which keys saw one was not recorded. Here claim()
-- is replaced by the same function plus one upsert on its conflict path: a conflict is an
-- error path (a client reused a key for a different request), so the claims that matter for
-- throughput (new, replay, in progress, takeover) run exactly the v2 code. The table is keyed
-- and distributable by idempotency_key like task_idempotency; no trigger is involved.

CREATE TABLE task_idempotency_conflicts (
    idempotency_key TEXT PRIMARY KEY,
    first_at        TIMESTAMPTZ NOT NULL,
    last_at         TIMESTAMPTZ NOT NULL,
    n               BIGINT NOT NULL CHECK (n >= 1),
    last_digest     TEXT NOT NULL  -- the conflicting request's digest (the stored one stays on the task)
);

-- claim(): changed in functions/claim.sql

