-- Idem schema v33: a resume that ramps, and the audit actions as a registry (issue 46 item 4).
--
-- A ramp is a resume in steps on the pause mechanism itself: the pause row of a scope carries the
-- percentages of keys admitted step by step (e.g. {10,25,50,100}), each step's length, when the
-- ramp began and the failure rate of admitted claims past which it re-pauses. A key is in or out
-- by its hash (idem_ramp_bucket: 0 to 9999 from the MD5 of the key, stable across servers and
-- versions): admitted while its bucket is below the step's percentage times 100. The step is
-- computed from the server's clock at check time (idem_ramp_step), so no runner advances it; the
-- row's until is the moment the last step (100 %) begins, after which the row no longer pauses
-- anything, like any pause past its end. claim() reads it through idem_pause_check, so the check
-- stays the catalog lookup of v16/v18 while nothing is paused or ramping.
ALTER TABLE idem_pauses
    ADD COLUMN ramp_steps        SMALLINT[],        -- percent of keys admitted per step, rising, the last 100
    ADD COLUMN ramp_step_ms      BIGINT,            -- each step's length
    ADD COLUMN ramp_started_at   TIMESTAMPTZ,       -- step 0 began (NULL: a plain pause)
    ADD COLUMN ramp_abort_above  DOUBLE PRECISION,  -- re-pause when failed / claimed of a step exceeds it
    ADD COLUMN ramp_min_claims   INTEGER,           -- ... once the step has admitted at least this many claims
    ADD COLUMN ramp_step_audited SMALLINT,          -- the last step with its audit entry
    ADD COLUMN ramp_aborted_at   TIMESTAMPTZ,       -- a ramp's automatic re-pause set this pause (the exporter's alert)
    ADD CONSTRAINT idem_pauses_ramp_check CHECK (
        (ramp_started_at IS NULL) = (ramp_steps IS NULL)
        AND (ramp_started_at IS NULL) = (ramp_step_ms IS NULL)
        AND (ramp_started_at IS NULL) = (ramp_abort_above IS NULL)
        AND (ramp_started_at IS NULL) = (ramp_min_claims IS NULL)
        AND (ramp_started_at IS NULL) = (ramp_step_audited IS NULL)
        AND (ramp_started_at IS NULL OR (cardinality(ramp_steps) BETWEEN 2 AND 20
                                         AND ramp_steps[cardinality(ramp_steps)] = 100
                                         AND ramp_step_ms BETWEEN 1000 AND 86400000
                                         AND ramp_abort_above > 0 AND ramp_abort_above <= 1
                                         AND ramp_min_claims BETWEEN 1 AND 1000000
                                         AND until IS NOT NULL)));

-- What the admitted keys of a ramp's step did: claims admitted and failures recorded, by step and
-- by one of 16 slots (the key's bucket modulo 16), so concurrent claims and failures of one
-- operation write different rows (no hot row). claim() counts an admitted acquisition or takeover,
-- fail() a failure of an admitted key, and fail() re-pauses the scope when the step's failures
-- over its claims pass ramp_abort_above. A new ramp of the scope starts from empty rows.
CREATE TABLE idem_ramp_tally (
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    step      SMALLINT NOT NULL CHECK (step BETWEEN 0 AND 19),
    slot      SMALLINT NOT NULL CHECK (slot BETWEEN 0 AND 15),
    claimed   BIGINT NOT NULL DEFAULT 0,
    failed    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, operation, step, slot)
);
REVOKE ALL ON idem_ramp_tally FROM PUBLIC;

-- The audit actions, one row each: adding an action is an INSERT here (keyless says whether its
-- entries name no task key), not a CHECK list restated. The list is seeded from the CHECK
-- constraints this migration replaces, whatever actions earlier migrations added to them, then
-- with the ramp's own: 'ramp' (a ramped resume began), 'ramp_step' (a step began, written by the
-- first claim that read it) and 'ramp_abort' (the automatic re-pause). audit_append refuses an
-- entry whose key does not match its action's keyless (ID003), as the dropped key CHECK did.
CREATE TABLE idem_audit_actions (
    action  TEXT PRIMARY KEY CHECK (action ~ '^[a-z][a-z0-9_]{0,63}$'),
    keyless BOOLEAN NOT NULL
);
REVOKE ALL ON idem_audit_actions FROM PUBLIC;

DO $actions$
DECLARE
    v_actions text;
    v_keyless text;
BEGIN
    SELECT pg_get_constraintdef(c.oid) INTO v_actions FROM pg_constraint c
     WHERE c.conrelid = 'task_idempotency_audit'::regclass AND c.conname = 'task_idempotency_audit_action_check';
    SELECT pg_get_constraintdef(c.oid) INTO v_keyless FROM pg_constraint c
     WHERE c.conrelid = 'task_idempotency_audit'::regclass AND c.conname = 'task_idempotency_audit_key_check';
    IF v_actions IS NULL OR v_keyless IS NULL THEN
        RAISE EXCEPTION 'task_idempotency_audit has no action or key CHECK to turn into idem_audit_actions';
    END IF;
    INSERT INTO idem_audit_actions (action, keyless)
    SELECT a.m[1], false FROM regexp_matches(v_actions, '''([a-z0-9_]+)''', 'g') AS a(m)
    ON CONFLICT DO NOTHING;
    UPDATE idem_audit_actions a SET keyless = true
     WHERE a.action IN (SELECT k.m[1] FROM regexp_matches(v_keyless, '''([a-z0-9_]+)''', 'g') AS k(m));
END
$actions$;
INSERT INTO idem_audit_actions (action, keyless) VALUES ('ramp', true), ('ramp_step', true), ('ramp_abort', true);

ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_action_check;
ALTER TABLE task_idempotency_audit DROP CONSTRAINT task_idempotency_audit_key_check;
ALTER TABLE task_idempotency_audit
    ADD CONSTRAINT task_idempotency_audit_action_fkey FOREIGN KEY (action) REFERENCES idem_audit_actions (action);

-- idem_pause_list gains the ramp's columns (a new result type: dropped here, defined in functions/).
DROP FUNCTION IF EXISTS idem_pause_list(integer);

-- idem_resume_ramp(), idem_pause_check(), idem_ramp_bucket(), idem_ramp_step(), idem_ramp_image(),
-- idem_ramp_failed(), idem_pause_forecast(): defined in functions/.
