-- idem_succeeded_operations (schema v9; the history is in git log).
-- Operations that hold succeeded rows: one probe of task_idempotency_succeeded_idx each (a
-- loose index scan), however many rows each holds.
CREATE OR REPLACE FUNCTION idem_succeeded_operations()
RETURNS SETOF text
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $ops$
    WITH RECURSIVE ops(op) AS (
        (SELECT split_part(t.idempotency_key, ':', 2) FROM task_idempotency t WHERE t.status = 'succeeded'
          ORDER BY split_part(t.idempotency_key, ':', 2) LIMIT 1)
        UNION ALL
        SELECT (SELECT split_part(t.idempotency_key, ':', 2) FROM task_idempotency t
                 WHERE t.status = 'succeeded' AND split_part(t.idempotency_key, ':', 2) > o.op
                 ORDER BY split_part(t.idempotency_key, ':', 2) LIMIT 1)
          FROM ops o WHERE o.op IS NOT NULL
    )
    SELECT o.op FROM ops o WHERE o.op IS NOT NULL
$ops$;

REVOKE ALL ON FUNCTION idem_succeeded_operations() FROM PUBLIC;
