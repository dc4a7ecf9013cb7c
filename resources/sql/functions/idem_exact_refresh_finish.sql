-- idem_exact_refresh_finish (schema v8, changed in v9, v13, v24; the history is in git log).
-- The refresh's second call: counts the exact figures (idem_exact_stats, unfiltered) and stores
-- them in idem_stats_exact if p_token is still the current attempt's; before storing, a batch of
-- counter upkeep and of expired deploys (a failure of which never stops the refresh) and a size
-- sample if due. Returns whether it stored them. Since v24 the count and the upkeep hold no lock
-- on the row: a holder stopped while counting holds nothing up, and once its lease ends
-- (idem_exact_refresh_begin) another reader takes the refresh over and its token is no longer
-- the current one, so its figures are never stored. The store itself waits at most 2 s for the
-- row (another store or begin holds it for a moment), else stores nothing.
CREATE OR REPLACE FUNCTION idem_exact_refresh_finish(p_token uuid, p_long_after_minutes integer)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET max_parallel_workers_per_gather = 0
AS $finish$
DECLARE
    e record;
    v_start timestamptz;
    v_cost double precision;
    v_lock_timeout text := current_setting('lock_timeout');
    v_stored integer;
BEGIN
    IF p_long_after_minutes IS NULL OR p_long_after_minutes NOT BETWEEN 1 AND 525600 THEN
        RAISE EXCEPTION 'long-unfinished threshold must be 1 to 525600 minutes' USING ERRCODE = 'ID003';
    END IF;
    IF p_token IS NULL OR NOT EXISTS (SELECT FROM idem_stats_exact x WHERE x.attempt_token = p_token) THEN
        RETURN false;
    END IF;
    v_start := clock_timestamp();
    SELECT * INTO e FROM idem_exact_stats(NULL, NULL, p_long_after_minutes);
    v_cost := extract(epoch FROM clock_timestamp() - v_start) * 1000;
    IF NOT EXISTS (SELECT FROM idem_stats_exact x WHERE x.attempt_token = p_token) THEN
        RETURN false; -- taken over while counting
    END IF;
    BEGIN -- v13
        PERFORM idem_counters_maintain(2000);
        PERFORM idem_deploys_expire(2000); -- v24
    EXCEPTION WHEN others THEN
        RAISE WARNING 'counter upkeep failed (%: %); the exact figures are stored', SQLSTATE, SQLERRM;
    END;
    PERFORM idem_storage_sample();
    BEGIN
        PERFORM set_config('lock_timeout', '2s', true);
        UPDATE idem_stats_exact AS x
           SET (processing, expired_leases, oldest_processing_created_at, retryable_failed, uncertain,
                failed_permanent, failed_exhausted, long_unfinished, attempts_histogram)
               = (e.processing, e.expired_leases, e.oldest_processing_created_at, e.retryable_failed, e.uncertain,
                  e.failed_permanent, e.failed_exhausted, e.long_unfinished, e.attempts_histogram),
               taken_at = now(),
               long_unfinished_after_minutes = p_long_after_minutes,
               taken_by = session_user,
               attempt_at = NULL,
               attempt_token = NULL,
               attempt_until = NULL,
               attempt_takeovers = 0,
               cost_ms = v_cost,
               period_s = least(greatest(v_cost / 1000 * 50, 20), 900),
               refreshes = x.refreshes + 1
         WHERE x.attempt_token = p_token;
        GET DIAGNOSTICS v_stored = ROW_COUNT;
        PERFORM set_config('lock_timeout', v_lock_timeout, true);
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;
    END;
    RETURN v_stored = 1;
END
$finish$;

REVOKE ALL ON FUNCTION idem_exact_refresh_finish(uuid, integer) FROM PUBLIC;
