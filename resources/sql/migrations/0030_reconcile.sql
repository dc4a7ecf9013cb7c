-- Idem schema v30: continuous reconciliation (issue 46 item 5). `idemctl verify` checks effects
-- against records once; a reconcile probe does it on a schedule. The owner of the Idem schema
-- registers, per operation, a read-only query that counts the business effect of one key (its
-- business id bound as $1, never spliced): "SELECT count(*) FROM shop.payments WHERE order_id = $1".
-- A runner (the exporter's loop, or idemctl reconcile run) samples recently succeeded keys of the
-- operation, runs the query for each as role idem_reconcile in a READ ONLY transaction under a
-- statement timeout, and records here how many effects each key had: exactly one is ok, none is
-- missing, more than one is duplicated. Functions: functions/idem_reconcile_*.sql.
CREATE TABLE idem_reconcile_probes (
    operation      TEXT PRIMARY KEY CHECK (operation ~ '^[!-9;-~]{1,64}$' AND operation <> '*'),
    query          TEXT NOT NULL CHECK (char_length(query) BETWEEN 1 AND 4000),
    sample_size    INTEGER NOT NULL CHECK (sample_size BETWEEN 1 AND 1000),
    window_seconds INTEGER NOT NULL CHECK (window_seconds BETWEEN 60 AND 2592000),
    every_seconds  INTEGER NOT NULL CHECK (every_seconds BETWEEN 60 AND 86400),
    timeout_ms     INTEGER NOT NULL CHECK (timeout_ms BETWEEN 10 AND 60000),
    created_at     TIMESTAMPTZ NOT NULL,
    created_by     TEXT NOT NULL,
    next_run_at    TIMESTAMPTZ NOT NULL,
    audit_id       BIGINT NOT NULL
);

-- One row per run, the newest 100 per operation kept (idem_reconcile_finish trims). offenders:
-- at most 50 keys whose count was not one, each {"key", "count"} or {"key", "error"}.
CREATE TABLE idem_reconcile_runs (
    id          BIGSERIAL PRIMARY KEY,
    operation   TEXT NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    runner      TEXT NOT NULL,
    sample_size INTEGER NOT NULL,
    sampled     INTEGER,
    ok          INTEGER,
    missing     INTEGER,
    duplicated  INTEGER,
    errors      INTEGER,
    offenders   JSONB NOT NULL DEFAULT '[]'::jsonb,
    problem     TEXT,
    CHECK (finished_at IS NULL OR (sampled IS NOT NULL AND ok IS NOT NULL AND missing IS NOT NULL
                                   AND duplicated IS NOT NULL AND errors IS NOT NULL
                                   AND sampled = ok + missing + duplicated + errors))
);
CREATE INDEX idem_reconcile_runs_operation_idx ON idem_reconcile_runs (operation, id DESC);

-- Registering or removing a probe is audited (action 'reconcile_probe', no key). Merging another
-- migration that adds actions: the two lists are one.
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_check
        CHECK (action IN ('requeue', 'release', 'fail', 'retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                          'approve', 'approval_policy', 'change_request', 'change_approve', 'change_use',
                          'decline', 'reconcile_probe')),
    ADD CONSTRAINT task_idempotency_audit_key_check
        CHECK ((idempotency_key = '') = (action IN ('retention', 'purge', 'pause', 'resume', 'annotate', 'job',
                                                     'approve', 'approval_policy', 'change_request', 'change_approve',
                                                     'change_use', 'decline', 'reconcile_probe')));

-- idem_reconcile_check_query(), idem_reconcile_add(), idem_reconcile_remove(), idem_reconcile_begin(),
-- idem_reconcile_finish(): defined in functions/.
