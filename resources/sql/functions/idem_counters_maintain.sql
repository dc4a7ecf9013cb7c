-- idem_counters_maintain (schema v8, changed in v13, v31; the history is in git log).
-- One batch of counter upkeep: at most p_batch minute rows past the roll-up horizon move into
-- hours (detailed and total alike), and at most p_batch rows past the expiry go. Rows another
-- session is writing are skipped (SKIP LOCKED), never waited for. Returns the rows moved and
-- removed; run it until both are 0 to catch up. Counts are moved, never lost: a late flush
-- into a minute that was rolled up already rolls up again the next time. v31: the per-worker
-- minutes (idem_counters_workers) past the roll-up horizon go (they have no hourly form).
CREATE OR REPLACE FUNCTION idem_counters_maintain(p_batch integer)
RETURNS TABLE (rolled_up bigint, expired bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $maintain$
DECLARE
    c_cap constant numeric := 1000000000000000;
    v_policy idem_counters_policy;
    v_rollup timestamptz;
    v_expire timestamptz;
    v_rolled bigint := 0;
    v_expired bigint := 0;
    v_n bigint;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows' USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_policy FROM idem_counters_policy;
    v_rollup := date_trunc('hour', now() - v_policy.rollup_after);
    v_expire := date_trunc('hour', now() - v_policy.expire_after);

    WITH moved AS (
        DELETE FROM idem_counters c
         WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters d WHERE d.bucket < v_rollup
                                    ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED))
        RETURNING c.bucket, c.tenant, c.operation, c.outcome, c.n
    ), hourly AS (
        INSERT INTO idem_counters_hourly AS h (bucket, tenant, operation, outcome, n)
        SELECT date_trunc('hour', m.bucket), m.tenant, m.operation, m.outcome, least(sum(m.n), c_cap)::bigint
          FROM moved m GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = least(h.n::numeric + EXCLUDED.n, c_cap)::bigint
    )
    SELECT count(*) INTO v_n FROM moved;
    v_rolled := v_rolled + v_n;

    WITH moved AS (
        DELETE FROM idem_counters_total c
         WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_total d WHERE d.minutes = 1 AND d.bucket < v_rollup
                                    ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED))
        RETURNING c.bucket, c.outcome, c.n
    ), hourly AS (
        INSERT INTO idem_counters_total AS h (minutes, bucket, outcome, n)
        SELECT 60, date_trunc('hour', m.bucket), m.outcome, least(sum(m.n), c_cap)::bigint
          FROM moved m GROUP BY 2, 3 ORDER BY 2, 3
        ON CONFLICT (minutes, bucket, outcome) DO UPDATE SET n = least(h.n::numeric + EXCLUDED.n, c_cap)::bigint
    )
    SELECT count(*) INTO v_n FROM moved;
    v_rolled := v_rolled + v_n;

    DELETE FROM idem_counters_hourly c
     WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_hourly d WHERE d.bucket < v_expire
                                ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_expired := v_expired + v_n;
    DELETE FROM idem_counters_total c
     WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_total d WHERE d.minutes = 60 AND d.bucket < v_expire
                                ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_expired := v_expired + v_n;
    DELETE FROM idem_counters_workers c
     WHERE c.ctid = ANY (ARRAY(SELECT d.ctid FROM idem_counters_workers d WHERE d.bucket < v_rollup
                                ORDER BY d.bucket LIMIT p_batch FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_expired := v_expired + v_n;
    DELETE FROM idem_counters_refused r WHERE r.at < now() - v_policy.expire_after;
    RETURN QUERY SELECT v_rolled, v_expired;
END
$maintain$;

REVOKE ALL ON FUNCTION idem_counters_maintain(integer) FROM PUBLIC;
