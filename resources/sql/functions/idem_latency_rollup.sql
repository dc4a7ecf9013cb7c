-- idem_latency_rollup (schema v17, changed in v31; the history is in git log).
-- Folds the minutes from idem_latency_state.folded_to up to the last one closed for a minute
-- (at most p_max_minutes of them) into idem_latency, moves folded_to on, and drops minutes older
-- than 8 days (10,000 rows a call at most). Returns the minutes folded: 0 when none is due or
-- another session is folding (it never waits for one). Readers call it before they read; pg_cron
-- may call it every minute. Each minute is folded once: a completion committed more than a
-- minute after its complete() ran is missed (0017_latency.sql). v31: the same minutes' leases
-- (idem_lease_fold into idem_lease), dropped after 8 days as well.
CREATE OR REPLACE FUNCTION idem_latency_rollup(p_max_minutes integer DEFAULT 60)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $rollup$
DECLARE
    v_from timestamptz;
    v_to timestamptz;
BEGIN
    IF p_max_minutes IS NULL OR p_max_minutes NOT BETWEEN 1 AND 1440 THEN
        RAISE EXCEPTION 'max_minutes must be 1 to 1440, not %', p_max_minutes USING ERRCODE = 'ID003';
    END IF;
    SELECT s.folded_to INTO v_from FROM idem_latency_state s FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    v_to := least(date_trunc('minute', clock_timestamp() - interval '1 minute'),
                  v_from + p_max_minutes * interval '1 minute');
    IF v_to <= v_from THEN
        RETURN 0;
    END IF;
    INSERT INTO idem_latency (bucket, tenant, operation, kind, n, total, slots, counts)
    SELECT f.bucket, f.tenant, f.operation, f.kind, sum(f.n), sum(f.total),
           array_agg(f.slot ORDER BY f.slot), array_agg(f.n ORDER BY f.slot)
      FROM idem_latency_fold(v_from, v_to) f
     GROUP BY 1, 2, 3, 4;
    INSERT INTO idem_lease (bucket, tenant, operation, lease_ms, attempts, overruns)
    SELECT f.bucket, f.tenant, f.operation, f.lease_ms, f.attempts, f.overruns FROM idem_lease_fold(v_from, v_to) f;
    UPDATE idem_latency_state SET folded_to = v_to, folded_at = clock_timestamp();
    DELETE FROM idem_latency l
     WHERE l.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_latency d WHERE d.bucket < now() - interval '8 days'
                                ORDER BY d.bucket LIMIT 10000));
    DELETE FROM idem_lease l
     WHERE l.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_lease d WHERE d.bucket < now() - interval '8 days'
                                ORDER BY d.bucket LIMIT 10000));
    RETURN (extract(epoch FROM v_to - v_from) / 60)::integer;
END
$rollup$;

REVOKE ALL ON FUNCTION idem_latency_rollup(integer) FROM PUBLIC;
