-- idem_retention_due (schema v9; the history is in git log).
-- Per operation with succeeded rows or a policy row of its own: the horizon, the cutoff, the
-- oldest succeeded row's completion and the rows due, counted up to p_cap (due_capped: the
-- count stopped there, the figure is a lower bound). At most p_cap + 2 index entries per operation.
CREATE OR REPLACE FUNCTION idem_retention_due(p_cap bigint)
RETURNS TABLE (operation text, policy_operation text, horizon_seconds bigint, cutoff timestamptz,
               oldest_completed_at timestamptz, due bigint, due_capped boolean, policy_changed_at timestamptz,
               policy_changed_by text)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
SET enable_seqscan = off
SET enable_bitmapscan = off
SET max_parallel_workers_per_gather = 0
AS $due$
DECLARE
    v_op text;
    v_n bigint;
BEGIN
    IF p_cap IS NULL OR p_cap NOT BETWEEN 1 AND 10000000 THEN
        RAISE EXCEPTION 'cap must be 1 to 10000000 rows, not %', p_cap USING ERRCODE = 'ID003';
    END IF;
    FOR v_op IN SELECT o FROM idem_succeeded_operations() o
                UNION SELECT p.operation FROM idem_retention_policy p WHERE p.operation <> '*'
                ORDER BY 1 LOOP
        SELECT v_op, p.operation, extract(epoch FROM p.horizon)::bigint, now() - p.horizon, p.changed_at, p.changed_by
          INTO operation, policy_operation, horizon_seconds, cutoff, policy_changed_at, policy_changed_by
          FROM idem_retention_policy p
         WHERE p.operation IN (v_op, '*')
         ORDER BY p.operation = '*' LIMIT 1;
        oldest_completed_at := (SELECT t.updated_at FROM task_idempotency t
                                 WHERE split_part(t.idempotency_key, ':', 2) = v_op AND t.status = 'succeeded'
                                 ORDER BY split_part(t.idempotency_key, ':', 2), t.updated_at LIMIT 1);
        SELECT count(*) INTO v_n
          FROM (SELECT FROM task_idempotency t
                 WHERE split_part(t.idempotency_key, ':', 2) = v_op AND t.status = 'succeeded'
                   AND t.updated_at < cutoff
                 LIMIT p_cap + 1) x;
        due := least(v_n, p_cap);
        due_capped := v_n > p_cap;
        RETURN NEXT;
    END LOOP;
END
$due$;

REVOKE ALL ON FUNCTION idem_retention_due(bigint) FROM PUBLIC;
