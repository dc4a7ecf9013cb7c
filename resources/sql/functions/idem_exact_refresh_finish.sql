-- idem_exact_refresh_finish (schema v8, changed in v9, v13; the history is in git log).
-- The refresh's second call: counts the exact figures (idem_exact_stats, unfiltered) and stores
-- them in idem_stats_exact if p_token is still the current attempt's; then a batch of counter
-- upkeep (a failure of which never stops the refresh) and a size sample if due. Returns whether
-- it stored them.
CREATE OR REPLACE FUNCTION idem_exact_refresh_finish(p_token uuid, p_long_after_minutes integer)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET max_parallel_workers_per_gather = 0
AS $finish$
DECLARE
    v idem_stats_exact;
    v_start timestamptz;
    v_cost double precision;
    v_locked boolean := false;
BEGIN
    IF p_long_after_minutes IS NULL OR p_long_after_minutes NOT BETWEEN 1 AND 525600 THEN
        RAISE EXCEPTION 'long-unfinished threshold must be 1 to 525600 minutes' USING ERRCODE = 'ID003';
    END IF;
    FOR i IN 1..200 LOOP
        IF p_token IS NULL OR NOT EXISTS (SELECT FROM idem_stats_exact x WHERE x.attempt_token = p_token) THEN
            RETURN false;
        END IF;
        SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        EXIT WHEN v_locked;
        PERFORM pg_sleep(0.01);
    END LOOP;
    IF NOT v_locked OR v.attempt_token IS DISTINCT FROM p_token THEN
        RETURN false;
    END IF;
    v_start := clock_timestamp();
    UPDATE idem_stats_exact AS x
       SET (processing, expired_leases, oldest_processing_created_at, retryable_failed, uncertain,
            failed_permanent, failed_exhausted, long_unfinished, attempts_histogram)
           = (SELECT e.processing, e.expired_leases, e.oldest_processing_created_at, e.retryable_failed, e.uncertain,
                     e.failed_permanent, e.failed_exhausted, e.long_unfinished, e.attempts_histogram
                FROM idem_exact_stats(NULL, NULL, p_long_after_minutes) e),
           taken_at = now(),
           long_unfinished_after_minutes = p_long_after_minutes,
           taken_by = session_user,
           attempt_at = NULL,
           attempt_token = NULL;
    v_cost := extract(epoch FROM clock_timestamp() - v_start) * 1000;
    UPDATE idem_stats_exact
       SET cost_ms = v_cost,
           period_s = least(greatest(v_cost / 1000 * 50, 20), 900),
           refreshes = refreshes + 1;
    BEGIN -- v13
        PERFORM idem_counters_maintain(2000);
    EXCEPTION WHEN others THEN
        RAISE WARNING 'counter upkeep failed (%: %); the exact figures are stored', SQLSTATE, SQLERRM;
    END;
    PERFORM idem_storage_sample();
    RETURN true;
END
$finish$;

REVOKE ALL ON FUNCTION idem_exact_refresh_finish(uuid, integer) FROM PUBLIC;
