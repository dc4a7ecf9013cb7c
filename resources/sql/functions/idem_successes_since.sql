-- idem_successes_since (issue #29; the history is in git log).
-- How many keys succeeded at or after p_since, counted up to p_cap: the console's "acknowledged
-- successes at risk" (operations/node.cpp). With asynchronous standbys a failover loses what the
-- promoted standby had not received yet, and a succeeded key lost that way runs again when its
-- client retries; the console asks for the successes since now() minus a standby's lag.
-- A succeeded row never changes while it lives, so its updated_at is when it succeeded (the
-- completing transaction's start, a moment before its commit). Counted through
-- task_idempotency_succeeded_idx, one operation at a time (idem_succeeded_operations), and stopped
-- at p_cap + 1 rows, so a long window costs at most that many index entries: a result above p_cap
-- means "more than p_cap".
--   p_since NULL, or p_cap NULL or outside 1..10,000,000: refused with ID003.
--   p_since in the future (a caller's clock ahead of the server's): 0, nothing succeeded then yet.
CREATE OR REPLACE FUNCTION idem_successes_since(p_since timestamptz, p_cap integer DEFAULT 100000)
RETURNS bigint
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $since$
BEGIN
    IF p_since IS NULL THEN
        RAISE EXCEPTION 'idem_successes_since: the time to count from is NULL' USING ERRCODE = 'ID003';
    END IF;
    IF p_cap IS NULL OR p_cap < 1 OR p_cap > 10000000 THEN
        RAISE EXCEPTION 'idem_successes_since: the cap must be 1 to 10000000, not %', coalesce(p_cap::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_since > now() THEN
        RETURN 0;
    END IF;
    RETURN (SELECT count(*) FROM (
        SELECT 1 FROM idem_succeeded_operations() o(op)
        CROSS JOIN LATERAL (SELECT 1 FROM task_idempotency t
                             WHERE t.status = 'succeeded' AND split_part(t.idempotency_key, ':', 2) = o.op
                               AND t.updated_at >= p_since) s
        LIMIT p_cap::bigint + 1) c);
END
$since$;

REVOKE ALL ON FUNCTION idem_successes_since(timestamptz, integer) FROM PUBLIC;
