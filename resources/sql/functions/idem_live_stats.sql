-- idem_live_stats (schema v8, changed with v21; the history is in git log).
-- The bounded figures, for one tenant / operation or (both NULL) for all. Each count stops at
-- 10,000 rows through its own index (at most 60,006 index entries in all, whatever the table
-- holds); a count that reached the cap is returned as 10,000 with its *_capped flag. The
-- oldest processing row and long-unfinished come from the processing and retry rows those
-- counts visited: exact when neither was capped, otherwise a lower bound. With a filter, the
-- same index entries are visited and the filter applied to them, so a capped filtered figure is
-- the lower bound the visited rows prove.
--
-- Unfiltered, the figures are shared: if the stored ones are at most a second old they are
-- returned (shared true) and nothing is counted; otherwise the first caller that gets the row
-- lock (SKIP LOCKED: nobody waits) counts and stores them, and callers meanwhile get the
-- previous ones. Read-only callers, REPEATABLE READ snapshots and standbys, which cannot
-- store, count for themselves when the stored figures are stale (shared false).
--
-- Lease expiry and long-unfinished are judged at the data's time (idem_data_time(): now() on a
-- primary, a lagging standby's replay point), returned as taken_at.
CREATE OR REPLACE FUNCTION idem_live_stats(p_tenant text, p_operation text, p_long_after_minutes integer)
RETURNS TABLE (processing bigint, processing_capped boolean, expired_leases bigint, expired_leases_capped boolean,
               oldest_processing_created_at timestamptz, oldest_processing_capped boolean,
               retryable_failed bigint, retryable_failed_capped boolean, uncertain bigint, uncertain_capped boolean,
               failed_permanent bigint, failed_permanent_capped boolean, failed_exhausted bigint,
               failed_exhausted_capped boolean, long_unfinished bigint, long_unfinished_capped boolean,
               taken_at timestamptz, shared boolean, cost_ms double precision)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET max_parallel_workers_per_gather = 0
-- Every count must stop at the cap: an index scan does, a sequential or bitmap scan reads its
-- whole input first. On a small or freshly loaded table the planner may price those lower.
SET enable_seqscan = off
SET enable_bitmapscan = off
-- (which prices the one-row tables' scans at 10^10, past the JIT thresholds: 50-120 ms of
-- compiling for a 2 ms count)
SET jit = off
AS $live$
DECLARE
    c_cap constant bigint := 10000;
    v idem_stats_live;
    v_all boolean := p_tenant IS NULL AND p_operation IS NULL;
    v_can_store boolean := false;
    v_shared boolean := false;
    v_start timestamptz;
    v_at timestamptz; -- the data's time, see above
    v_cutoff timestamptz;
    v_live bigint; v_expired bigint; v_nolease bigint;
    v_retry bigint; v_unc bigint; v_fp bigint; v_fe bigint;
    -- what matched the filter (unfiltered: everything counted)
    v_live_n bigint; v_expired_n bigint; v_proc_old_n bigint; v_oldest_n timestamptz;
    v_retry_n bigint; v_retry_old_n bigint; v_unc_n bigint; v_fp_n bigint; v_fe_n bigint;
BEGIN
    IF p_long_after_minutes IS NULL OR p_long_after_minutes NOT BETWEEN 1 AND 525600 THEN
        RAISE EXCEPTION 'long-unfinished threshold must be 1 to 525600 minutes' USING ERRCODE = 'ID003';
    END IF;
    IF v_all THEN
        SELECT * INTO v FROM idem_stats_live x;
        -- Fresh: within its period by this server's clock (a standby reads the primary's row;
        -- one stamped more than 5 s ahead of this clock is not trusted).
        v_shared := v.long_unfinished_after_minutes = p_long_after_minutes
                    AND v.taken_at BETWEEN clock_timestamp() - v.period_s * interval '1 second'
                                       AND clock_timestamp() + interval '5 seconds';
        v_can_store := NOT v_shared AND NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'
                       AND current_setting('transaction_isolation') = 'read committed';
        IF v_can_store THEN
            SELECT * INTO v FROM idem_stats_live x FOR UPDATE SKIP LOCKED;
            IF NOT FOUND THEN
                -- Someone is counting right now: the figures it replaces, if recent enough.
                SELECT * INTO v FROM idem_stats_live x;
                v_can_store := false;
                v_shared := v.long_unfinished_after_minutes = p_long_after_minutes
                            AND v.taken_at BETWEEN clock_timestamp() - interval '5 seconds'
                                               AND clock_timestamp() + interval '5 seconds';
            ELSE
                -- Stored by another caller between our first look and the lock?
                v_shared := v.long_unfinished_after_minutes = p_long_after_minutes
                            AND v.taken_at BETWEEN clock_timestamp() - v.period_s * interval '1 second'
                                               AND clock_timestamp() + interval '5 seconds';
                v_can_store := NOT v_shared;
            END IF;
        END IF;
        IF v_shared THEN
            RETURN QUERY SELECT v.processing, v.processing_capped, v.expired_leases, v.expired_leases_capped,
                v.oldest_processing_created_at, v.oldest_processing_capped, v.retryable_failed, v.retryable_failed_capped,
                v.uncertain, v.uncertain_capped, v.failed_permanent, v.failed_permanent_capped, v.failed_exhausted,
                v.failed_exhausted_capped, v.long_unfinished, v.long_unfinished_capped, v.taken_at, true, v.cost_ms;
            RETURN;
        END IF;
    END IF;

    v_start := clock_timestamp();
    v_at := idem_data_time();
    v_cutoff := v_at - p_long_after_minutes * interval '1 minute';
    -- One statement, one snapshot; each figure's rows defined once, filtered or not (the filter
    -- matches every key when both are NULL). Every branch is an index-only scan of the figure's
    -- own partial index that stops at the cap; the filter applies to the entries visited, so a
    -- capped filtered figure is the lower bound those entries prove.
    WITH p AS (
        (SELECT 1 AS b, t.created_at, t.idempotency_key AS k FROM task_idempotency t
          WHERE t.status = 'processing' AND t.lease_until > v_at LIMIT c_cap + 1)
        UNION ALL
        (SELECT 2, t.created_at, t.idempotency_key FROM task_idempotency t
          WHERE t.status = 'processing' AND t.lease_until <= v_at LIMIT c_cap + 1)
        UNION ALL
        (SELECT 3, t.created_at, t.idempotency_key FROM task_idempotency t
          WHERE t.status = 'processing' AND t.lease_until IS NULL ORDER BY t.lease_until LIMIT c_cap + 1)
    ), r AS (
        SELECT t.created_at, t.idempotency_key AS k FROM task_idempotency t
         WHERE t.status = 'retryable_failed' LIMIT c_cap + 1
    ), u AS (
        SELECT t.idempotency_key AS k FROM task_idempotency t
         WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown' LIMIT c_cap + 1
    ), fp AS (
        SELECT t.idempotency_key AS k FROM task_idempotency t
         WHERE t.status = 'failed' AND t.error_class = 'permanent' LIMIT c_cap + 1
    ), fe AS (
        SELECT t.idempotency_key AS k FROM task_idempotency t
         WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent' LIMIT c_cap + 1
    )
    SELECT pp.live, pp.expired, pp.nolease, rr.n, (SELECT count(*) FROM u), (SELECT count(*) FROM fp),
           (SELECT count(*) FROM fe), pp.live_m, pp.expired_m, pp.old_m, pp.oldest_m, rr.n_m, rr.old_m,
           (SELECT count(*) FROM u WHERE v_all OR idem_key_matches(u.k, p_tenant, p_operation)),
           (SELECT count(*) FROM fp WHERE v_all OR idem_key_matches(fp.k, p_tenant, p_operation)),
           (SELECT count(*) FROM fe WHERE v_all OR idem_key_matches(fe.k, p_tenant, p_operation))
      FROM (SELECT count(*) FILTER (WHERE x.b = 1) AS live, count(*) FILTER (WHERE x.b = 2) AS expired,
                   count(*) FILTER (WHERE x.b = 3) AS nolease, count(*) FILTER (WHERE x.b = 1 AND x.m) AS live_m,
                   count(*) FILTER (WHERE x.b > 1 AND x.m) AS expired_m,
                   count(*) FILTER (WHERE x.created_at < v_cutoff AND x.m) AS old_m,
                   min(x.created_at) FILTER (WHERE x.m) AS oldest_m
              FROM (SELECT p.b, p.created_at, v_all OR idem_key_matches(p.k, p_tenant, p_operation) AS m FROM p) x) pp,
           (SELECT count(*) AS n, count(*) FILTER (WHERE x.m) AS n_m,
                   count(*) FILTER (WHERE x.created_at < v_cutoff AND x.m) AS old_m
              FROM (SELECT r.created_at, v_all OR idem_key_matches(r.k, p_tenant, p_operation) AS m FROM r) x) rr
      INTO v_live, v_expired, v_nolease, v_retry, v_unc, v_fp, v_fe,
           v_live_n, v_expired_n, v_proc_old_n, v_oldest_n, v_retry_n, v_retry_old_n, v_unc_n, v_fp_n, v_fe_n;

    -- A branch asks for one row past the cap: if it got it, it stopped early and the figure is a
    -- lower bound, shown as the cap.
    v.processing := least(v_live_n, c_cap);         v.processing_capped := v_live > c_cap;
    v.expired_leases := least(v_expired_n, c_cap);  v.expired_leases_capped := v_expired > c_cap OR v_nolease > c_cap;
    v.oldest_processing_created_at := v_oldest_n;
    v.oldest_processing_capped := v_live > c_cap OR v_expired > c_cap OR v_nolease > c_cap;
    v.retryable_failed := least(v_retry_n, c_cap);  v.retryable_failed_capped := v_retry > c_cap;
    v.uncertain := least(v_unc_n, c_cap);           v.uncertain_capped := v_unc > c_cap;
    v.failed_permanent := least(v_fp_n, c_cap);     v.failed_permanent_capped := v_fp > c_cap;
    v.failed_exhausted := least(v_fe_n, c_cap);     v.failed_exhausted_capped := v_fe > c_cap;
    v.long_unfinished := v_proc_old_n + v_retry_old_n;
    v.long_unfinished_capped := v.oldest_processing_capped OR v_retry > c_cap;
    v.taken_at := v_at;
    v.cost_ms := extract(epoch FROM clock_timestamp() - v_start) * 1000;
    IF v_all AND v_can_store THEN
        UPDATE idem_stats_live x
           SET taken_at = v.taken_at, long_unfinished_after_minutes = p_long_after_minutes, cost_ms = v.cost_ms,
               computations = x.computations + 1,
               period_s = least(greatest(v.cost_ms / 1000 * 50, 1), 10),
               processing = v.processing, processing_capped = v.processing_capped,
               expired_leases = v.expired_leases, expired_leases_capped = v.expired_leases_capped,
               oldest_processing_created_at = v.oldest_processing_created_at,
               oldest_processing_capped = v.oldest_processing_capped,
               retryable_failed = v.retryable_failed, retryable_failed_capped = v.retryable_failed_capped,
               uncertain = v.uncertain, uncertain_capped = v.uncertain_capped,
               failed_permanent = v.failed_permanent, failed_permanent_capped = v.failed_permanent_capped,
               failed_exhausted = v.failed_exhausted, failed_exhausted_capped = v.failed_exhausted_capped,
               long_unfinished = v.long_unfinished, long_unfinished_capped = v.long_unfinished_capped;
    END IF;
    RETURN QUERY SELECT v.processing, v.processing_capped, v.expired_leases, v.expired_leases_capped,
        v.oldest_processing_created_at, v.oldest_processing_capped, v.retryable_failed, v.retryable_failed_capped,
        v.uncertain, v.uncertain_capped, v.failed_permanent, v.failed_permanent_capped, v.failed_exhausted,
        v.failed_exhausted_capped, v.long_unfinished, v.long_unfinished_capped, v.taken_at, v_all AND v_can_store,
        v.cost_ms;
END
$live$;

REVOKE ALL ON FUNCTION idem_live_stats(text, text, integer) FROM PUBLIC;
