-- Idem schema v10: failed retries are counted as such.
--
-- idem_counters has no attempt number, so "failed retries" summed every retryable, unknown and
-- exhausted failure, first attempts included (most of them, under faults). A worker now counts
-- 'retry_failed' beside a failure's own outcome (failed_retryable / failed_permanent /
-- failed_unknown) when the attempt that failed was the second or a later one: a failure of a
-- retry. Only the set of outcome names grows; nothing already counted changes, and minutes
-- flushed before this version have no retry_failed (they read 0).
--
-- Migrate before starting workers of this version: add_counters() of an older schema refuses a
-- batch that names an outcome it does not know.

-- The CHECK of 0001, with one name more. Found by what it checks: its name was given by the
-- server (idem_counters_outcome_check), not written in 0001.
DO $check$
DECLARE
    c text;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
              WHERE conrelid = 'idem_counters'::regclass AND contype = 'c'
                AND pg_get_constraintdef(oid) LIKE '%outcome%'
    LOOP
        EXECUTE format('ALTER TABLE idem_counters DROP CONSTRAINT %I', c);
    END LOOP;
END
$check$;

ALTER TABLE idem_counters ADD CONSTRAINT idem_counters_outcome_check CHECK (outcome IN (
    'acquired', 'reacquired_lease', 'reacquired_retry', 'replayed', 'in_progress', 'conflict', 'retry_later',
    'rejected_failed', 'stale_token', 'succeeded', 'failed_retryable', 'failed_permanent', 'failed_unknown',
    'exhausted',
    'retry_failed'));
  -- a failure of attempt 2 or later, counted beside the failure's own outcome

-- idem_counters_add_detail(): defined in functions/idem_counters_add_detail.sql
