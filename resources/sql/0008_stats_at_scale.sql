-- Idem schema v8: the console at 10M rows (issue #13). A tick's cost no longer grows with the
-- table, the unfinished set or the number of tenants, and 20 consoles cost the database what
-- one does:
--
-- 1. Bounded figures (idem_live_stats): every per-row figure is counted up to a cap of 10,000
--    through an index that stops there; above it the figure is a proven lower bound ("at least
--    10,000"). The unfiltered figures are computed at most once a period per database (a
--    second, or 50x what counting cost, up to 10 s), by
--    whichever reader asks first, and shared through idem_stats_live. For that, each figure
--    has an index of its own: the processing and retry indexes now carry created_at (the
--    oldest processing row and long-unfinished without a heap visit), and three small partial
--    indexes give uncertain outcomes and the two kinds of failed rows (terminal rows that pile
--    up for months: no tick visits more than the cap of them). A claim that succeeds never
--    enters the three; a worker's fail() enters one.
-- 2. Exact figures (idem_exact_stats, one pass over the unfinished rows) are computed by one
--    reader per period (idem_exact_refresh_begin / _finish), stored in idem_stats_exact with
--    when and what they cost; the period is 50x that cost, 20 s to 15 min, so the shared
--    refresh uses at most ~2 % of one core whatever the table holds.
-- 3. Counters summed over tenants and operations (idem_counters_total), written by add_counters()
--    beside the detailed rows, so the headline tick reads at most 15 x 14 rows whatever the
--    tenant count; minutes roll up to hours (idem_counters_hourly) after two days and expire
--    after 90 days (idem_counters_policy), in small batches (idem_counters_maintain).
--
-- The indexes are built here inside the migration's transaction: a SHARE lock on
-- task_idempotency for one scan of the table per index (claims wait; 7.8 s for all five on a
-- 10M-row table here). For a big live table, build them first, outside any transaction:
--   CREATE INDEX CONCURRENTLY task_idempotency_processing_idx_v8 ON <schema>.task_idempotency
--       (lease_until) INCLUDE (created_at, idempotency_key) WHERE status = 'processing';
--   CREATE INDEX CONCURRENTLY task_idempotency_retry_due_idx_v8 ON <schema>.task_idempotency
--       (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE status = 'retryable_failed';
--   CREATE INDEX CONCURRENTLY task_idempotency_uncertain_idx ON <schema>.task_idempotency
--       (next_attempt_at) INCLUDE (idempotency_key) WHERE status = 'retryable_failed' AND error_class = 'unknown';
--   CREATE INDEX CONCURRENTLY task_idempotency_failed_permanent_idx ON <schema>.task_idempotency
--       (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class = 'permanent';
--   CREATE INDEX CONCURRENTLY task_idempotency_failed_exhausted_idx ON <schema>.task_idempotency
--       (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class IS DISTINCT FROM 'permanent';
-- This migration then takes them as they are (the two _v8 ones replace the indexes of the same
-- name without it: an ACCESS EXCLUSIVE lock for the drop and rename, milliseconds). An invalid
-- or differently defined one stops it.

DO $indexes$
DECLARE
    v_def record;
    v_name text;
    v_idx regclass;
BEGIN
    -- name, whether it replaces the index of that name (then it is built as name_v8 beside
    -- it, the old one goes and it is renamed), the definition it must have, the DDL's tail.
    FOR v_def IN SELECT * FROM (VALUES
        ('task_idempotency_processing_idx', true,
         $d$USING btree (lease_until) INCLUDE (created_at, idempotency_key) WHERE (status = 'processing'::text)$d$,
         $d$ON task_idempotency (lease_until) INCLUDE (created_at, idempotency_key) WHERE status = 'processing'$d$),
        ('task_idempotency_retry_due_idx', true,
         $d$USING btree (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE (status = 'retryable_failed'::text)$d$,
         $d$ON task_idempotency (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE status = 'retryable_failed'$d$),
        ('task_idempotency_uncertain_idx', false,
         $d$USING btree (next_attempt_at) INCLUDE (idempotency_key) WHERE ((status = 'retryable_failed'::text) AND (error_class = 'unknown'::text))$d$,
         $d$ON task_idempotency (next_attempt_at) INCLUDE (idempotency_key) WHERE status = 'retryable_failed' AND error_class = 'unknown'$d$),
        ('task_idempotency_failed_permanent_idx', false,
         $d$USING btree (updated_at) INCLUDE (idempotency_key) WHERE ((status = 'failed'::text) AND (error_class = 'permanent'::text))$d$,
         $d$ON task_idempotency (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class = 'permanent'$d$),
        ('task_idempotency_failed_exhausted_idx', false,
         $d$USING btree (updated_at) INCLUDE (idempotency_key) WHERE ((status = 'failed'::text) AND (error_class IS DISTINCT FROM 'permanent'::text))$d$,
         $d$ON task_idempotency (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class IS DISTINCT FROM 'permanent'$d$)
    ) AS d(name, replaces, target, ddl) LOOP
        v_name := v_def.name || CASE WHEN v_def.replaces THEN '_v8' ELSE '' END;
        v_idx := to_regclass(quote_ident(current_schema()) || '.' || quote_ident(v_name));
        IF v_idx IS NULL AND v_def.replaces
           AND substring(pg_get_indexdef(to_regclass(quote_ident(current_schema()) || '.' || quote_ident(v_def.name)))
                         FROM ' (USING .*)$') = v_def.target THEN
            CONTINUE; -- replaced by hand already
        ELSIF v_idx IS NULL THEN
            EXECUTE format('CREATE INDEX %I ', v_name) || v_def.ddl;
        ELSIF NOT (SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = v_idx)
              OR (SELECT i.indrelid FROM pg_index i WHERE i.indexrelid = v_idx) <> 'task_idempotency'::regclass THEN
            RAISE EXCEPTION 'index % exists but is not a valid index on task_idempotency (a failed CREATE INDEX CONCURRENTLY?)', v_name
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
        ELSIF substring(pg_get_indexdef(v_idx) FROM ' (USING .*)$') IS DISTINCT FROM v_def.target THEN
            RAISE EXCEPTION 'index % is defined as "%", expected "... %"', v_name, pg_get_indexdef(v_idx), v_def.target
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
        END IF;
        IF v_def.replaces THEN
            EXECUTE format('DROP INDEX IF EXISTS %I', v_def.name);
            EXECUTE format('ALTER INDEX %I RENAME TO %I', v_name, v_def.name);
        END IF;
    END LOOP;
END
$indexes$;

-- The exact figures, each defined here once. Processing and retryable rows first seen more
-- than p_long_after_minutes ago are long-unfinished (work still in flight; failed rows have
-- their own figures). One pass over the unfinished rows (task_idempotency_unfinished_idx,
-- covering since v4): its cost follows the unfinished set, which is why no tick runs it.
-- Written out with the schema's name in it, not SET search_path: so it stays inlinable and
-- EXPLAIN of a caller shows (and tests check) the index-only scan it makes. Callers set
-- max_parallel_workers_per_gather = 0 for it.
DO $exact_fn$
BEGIN
    EXECUTE format($f$
CREATE FUNCTION idem_exact_stats(p_tenant text, p_operation text, p_long_after_minutes integer)
RETURNS TABLE (processing bigint, expired_leases bigint, oldest_processing_created_at timestamptz,
               retryable_failed bigint, uncertain bigint, failed_permanent bigint, failed_exhausted bigint,
               long_unfinished bigint, attempts_histogram jsonb)
LANGUAGE sql
STABLE
AS $exact$
    WITH rows AS (
        SELECT t.status, t.error_class, t.lease_until, t.created_at, least(t.attempts, 10) AS bin
          FROM %I.task_idempotency t
         WHERE t.status <> 'succeeded'
           AND (p_tenant IS NULL OR split_part(t.idempotency_key, ':', 1) = p_tenant)
           AND (p_operation IS NULL OR split_part(t.idempotency_key, ':', 2) = p_operation)
    ), bins AS (
        SELECT r.bin, count(*) AS n FROM rows r GROUP BY r.bin
    )
    SELECT count(*) FILTER (WHERE r.status = 'processing' AND r.lease_until > now()),
           count(*) FILTER (WHERE r.status = 'processing' AND (r.lease_until IS NULL OR r.lease_until <= now())),
           min(r.created_at) FILTER (WHERE r.status = 'processing'),
           count(*) FILTER (WHERE r.status = 'retryable_failed'),
           count(*) FILTER (WHERE r.status = 'retryable_failed' AND r.error_class = 'unknown'),
           count(*) FILTER (WHERE r.status = 'failed' AND r.error_class = 'permanent'),
           count(*) FILTER (WHERE r.status = 'failed' AND r.error_class IS DISTINCT FROM 'permanent'),
           count(*) FILTER (WHERE r.status IN ('processing', 'retryable_failed')
                              AND r.created_at < now() - least(greatest(p_long_after_minutes, 1), 525600) * interval '1 minute'),
           (SELECT coalesce(jsonb_agg(jsonb_build_array(b.bin, b.n) ORDER BY b.bin), '[]'::jsonb) FROM bins b)
      FROM rows r
$exact$
$f$, current_schema());
END
$exact_fn$;

-- The shared bounded figures (idem_live_stats), at most a second old. One row; readers see it
-- with SELECT only, so none of them can lock it and hold up the others. *_capped: the count
-- reached the cap, the figure is a lower bound.
CREATE TABLE idem_stats_live (
    one                           BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    taken_at                      TIMESTAMPTZ NOT NULL,
    long_unfinished_after_minutes INTEGER NOT NULL,
    cost_ms                       DOUBLE PRECISION NOT NULL,
    period_s                      DOUBLE PRECISION NOT NULL,
    computations                  BIGINT NOT NULL,
    processing                    BIGINT NOT NULL,
    processing_capped             BOOLEAN NOT NULL,
    expired_leases                BIGINT NOT NULL,
    expired_leases_capped         BOOLEAN NOT NULL,
    oldest_processing_created_at  TIMESTAMPTZ,
    oldest_processing_capped      BOOLEAN NOT NULL,
    retryable_failed              BIGINT NOT NULL,
    retryable_failed_capped       BOOLEAN NOT NULL,
    uncertain                     BIGINT NOT NULL,
    uncertain_capped              BOOLEAN NOT NULL,
    failed_permanent              BIGINT NOT NULL,
    failed_permanent_capped       BOOLEAN NOT NULL,
    failed_exhausted              BIGINT NOT NULL,
    failed_exhausted_capped       BOOLEAN NOT NULL,
    long_unfinished               BIGINT NOT NULL,
    long_unfinished_capped        BOOLEAN NOT NULL
);
INSERT INTO idem_stats_live VALUES (true, '-infinity', 60, 0, 1, 0, 0, false, 0, false, NULL, false, 0, false, 0, false,
                                    0, false, 0, false, 0, false);

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
CREATE FUNCTION idem_live_stats(p_tenant text, p_operation text, p_long_after_minutes integer)
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
    v_cutoff timestamptz;
    v_live bigint; v_expired bigint; v_nolease bigint; v_proc_old bigint; v_oldest timestamptz;
    v_retry bigint; v_retry_old bigint; v_unc bigint; v_fp bigint; v_fe bigint;
    -- what matched the filter (unfiltered: the same)
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
    v_cutoff := now() - p_long_after_minutes * interval '1 minute';
    IF v_all THEN
        -- One statement, one snapshot. Every branch is an index scan that stops at the cap
        -- (index-only where the heap pages are all-visible: nothing but created_at is read).
        WITH p AS (
            (SELECT 1 AS b, t.created_at FROM task_idempotency t
              WHERE t.status = 'processing' AND t.lease_until > now() LIMIT c_cap + 1)
            UNION ALL
            (SELECT 2, t.created_at FROM task_idempotency t
              WHERE t.status = 'processing' AND t.lease_until <= now() LIMIT c_cap + 1)
            UNION ALL
            (SELECT 3, t.created_at FROM task_idempotency t
              WHERE t.status = 'processing' AND t.lease_until IS NULL ORDER BY t.lease_until LIMIT c_cap + 1)
        ), r AS (
            SELECT t.created_at FROM task_idempotency t WHERE t.status = 'retryable_failed' LIMIT c_cap + 1
        )
        SELECT (SELECT count(*) FROM p WHERE p.b = 1), (SELECT count(*) FROM p WHERE p.b = 2),
               (SELECT count(*) FROM p WHERE p.b = 3), (SELECT count(*) FROM p WHERE p.created_at < v_cutoff),
               (SELECT min(p.created_at) FROM p),
               (SELECT count(*) FROM r), (SELECT count(*) FROM r WHERE r.created_at < v_cutoff),
               (SELECT count(*) FROM (SELECT 1 FROM task_idempotency t
                                       WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown' LIMIT c_cap + 1) s),
               (SELECT count(*) FROM (SELECT 1 FROM task_idempotency t
                                       WHERE t.status = 'failed' AND t.error_class = 'permanent' LIMIT c_cap + 1) s),
               (SELECT count(*) FROM (SELECT 1 FROM task_idempotency t
                                       WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent' LIMIT c_cap + 1) s)
          INTO v_live, v_expired, v_nolease, v_proc_old, v_oldest, v_retry, v_retry_old, v_unc, v_fp, v_fe;
        v_live_n := v_live; v_expired_n := v_expired + v_nolease; v_proc_old_n := v_proc_old; v_oldest_n := v_oldest;
        v_retry_n := v_retry; v_retry_old_n := v_retry_old; v_unc_n := v_unc; v_fp_n := v_fp; v_fe_n := v_fe;
    ELSE
        -- The same index entries, with the filter applied to the rows they lead to.
        WITH p AS (
            (SELECT 1 AS b, t.created_at, t.idempotency_key AS k FROM task_idempotency t
              WHERE t.status = 'processing' AND t.lease_until > now() LIMIT c_cap + 1)
            UNION ALL
            (SELECT 2, t.created_at, t.idempotency_key FROM task_idempotency t
              WHERE t.status = 'processing' AND t.lease_until <= now() LIMIT c_cap + 1)
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
        SELECT (SELECT count(*) FROM p WHERE p.b = 1), (SELECT count(*) FROM p WHERE p.b = 2),
               (SELECT count(*) FROM p WHERE p.b = 3), (SELECT count(*) FROM r), (SELECT count(*) FROM u),
               (SELECT count(*) FROM fp), (SELECT count(*) FROM fe),
               (SELECT count(*) FROM p WHERE p.b = 1 AND idem_key_matches(p.k, p_tenant, p_operation)),
               (SELECT count(*) FROM p WHERE p.b > 1 AND idem_key_matches(p.k, p_tenant, p_operation)),
               (SELECT count(*) FROM p WHERE p.created_at < v_cutoff AND idem_key_matches(p.k, p_tenant, p_operation)),
               (SELECT min(p.created_at) FROM p WHERE idem_key_matches(p.k, p_tenant, p_operation)),
               (SELECT count(*) FROM r WHERE idem_key_matches(r.k, p_tenant, p_operation)),
               (SELECT count(*) FROM r WHERE r.created_at < v_cutoff AND idem_key_matches(r.k, p_tenant, p_operation)),
               (SELECT count(*) FROM u WHERE idem_key_matches(u.k, p_tenant, p_operation)),
               (SELECT count(*) FROM fp WHERE idem_key_matches(fp.k, p_tenant, p_operation)),
               (SELECT count(*) FROM fe WHERE idem_key_matches(fe.k, p_tenant, p_operation))
          INTO v_live, v_expired, v_nolease, v_retry, v_unc, v_fp, v_fe,
               v_live_n, v_expired_n, v_proc_old_n, v_oldest_n, v_retry_n, v_retry_old_n, v_unc_n, v_fp_n, v_fe_n;
    END IF;

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
    v.taken_at := now();
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

-- Whether a key belongs to a tenant and operation (NULL: any), the first two fields of
-- tenant:operation:business_id.
CREATE FUNCTION idem_key_matches(p_key text, p_tenant text, p_operation text)
RETURNS boolean
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $$
    SELECT (p_tenant IS NULL OR split_part(p_key, ':', 1) = p_tenant)
       AND (p_operation IS NULL OR split_part(p_key, ':', 2) = p_operation)
$$;

-- The shared exact figures: one row, refreshed by one reader per period. taken_at '-infinity'
-- until the first refresh. A refresh is two calls, each its own transaction:
-- idem_exact_refresh_begin() marks an attempt and returns its token, to one caller only, when
-- the figures are due (taken_at + period_s passed) and no attempt is under way (attempt_at more
-- than max(period_s, 60 s) ago, so an attempt that died, timed out or was cancelled does not
-- stop the next one for long); idem_exact_refresh_finish(token, ...) counts and stores them if
-- the token is still the current attempt's. A computation that is cancelled or times out has
-- still taken its turn: the budget holds whatever happens to the callers.
CREATE TABLE idem_stats_exact (
    one                           BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    taken_at                      TIMESTAMPTZ NOT NULL,
    long_unfinished_after_minutes INTEGER NOT NULL,
    cost_ms                       DOUBLE PRECISION NOT NULL,
    period_s                      DOUBLE PRECISION NOT NULL,
    refreshes                     BIGINT NOT NULL,
    taken_by                      TEXT NOT NULL,
    attempt_at                    TIMESTAMPTZ,
    attempt_token                 UUID,
    processing                    BIGINT,
    expired_leases                BIGINT,
    oldest_processing_created_at  TIMESTAMPTZ,
    retryable_failed              BIGINT,
    uncertain                     BIGINT,
    failed_permanent              BIGINT,
    failed_exhausted              BIGINT,
    long_unfinished               BIGINT,
    attempts_histogram            JSONB
);
INSERT INTO idem_stats_exact (taken_at, long_unfinished_after_minutes, cost_ms, period_s, refreshes, taken_by)
VALUES ('-infinity', 60, 0, 0, 0, '');

CREATE FUNCTION idem_exact_refresh_begin()
RETURNS uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $begin$
DECLARE
    v idem_stats_exact;
    v_token uuid;
BEGIN
    SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
    IF NOT FOUND OR v.taken_at + v.period_s * interval '1 second' > clock_timestamp()
       OR (v.attempt_at IS NOT NULL
           AND v.attempt_at > clock_timestamp() - greatest(v.period_s, 60) * interval '1 second') THEN
        RETURN NULL;
    END IF;
    v_token := gen_random_uuid();
    UPDATE idem_stats_exact SET attempt_at = clock_timestamp(), attempt_token = v_token;
    RETURN v_token;
END
$begin$;

CREATE FUNCTION idem_exact_refresh_finish(p_token uuid, p_long_after_minutes integer)
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
BEGIN
    IF p_long_after_minutes IS NULL OR p_long_after_minutes NOT BETWEEN 1 AND 525600 THEN
        RAISE EXCEPTION 'long-unfinished threshold must be 1 to 525600 minutes' USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
    IF NOT FOUND OR p_token IS NULL OR v.attempt_token IS DISTINCT FROM p_token THEN
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
    PERFORM idem_counters_maintain(2000);
    RETURN true;
END
$finish$;

-- Counters summed over tenants and operations: what the unfiltered tick and the charts read.
-- minutes 1: a minute bucket (as idem_counters); 60: an hour, after the roll-up.
CREATE TABLE idem_counters_total (
    minutes  SMALLINT NOT NULL CHECK (minutes IN (1, 60)),
    bucket   TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc(CASE minutes WHEN 1 THEN 'minute' ELSE 'hour' END, bucket)),
    outcome  TEXT NOT NULL,
    n        BIGINT NOT NULL CHECK (n >= 0),
    PRIMARY KEY (minutes, bucket, outcome)
);

-- Detailed counters older than the roll-up horizon, per hour.
CREATE TABLE idem_counters_hourly (
    bucket    TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc('hour', bucket)),
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    n         BIGINT NOT NULL CHECK (n >= 0),
    PRIMARY KEY (bucket, tenant, operation, outcome)
);

-- A tenant-filtered view reads the detailed rows of one tenant, not of every tenant in the window.
CREATE INDEX idem_counters_tenant_idx ON idem_counters (tenant, bucket);

CREATE TABLE idem_counters_policy (
    one          BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    rollup_after INTERVAL NOT NULL CHECK (rollup_after >= interval '1 hour'),
    expire_after INTERVAL NOT NULL,
    CHECK (expire_after > rollup_after)
);
INSERT INTO idem_counters_policy VALUES (true, interval '2 days', interval '90 days');

-- What the counters held before v8, summed. A flush that was running while this migration
-- waited for its lock may be missing here for its minute (it used the v6 add_counters).
LOCK TABLE idem_counters IN SHARE MODE;
INSERT INTO idem_counters_total (minutes, bucket, outcome, n)
SELECT 1, c.bucket, c.outcome, sum(c.n)::bigint FROM idem_counters c GROUP BY c.bucket, c.outcome;

-- One batch of counter upkeep: at most p_batch minute rows past the roll-up horizon move into
-- hours (detailed and total alike), and at most p_batch rows past the expiry go. Rows another
-- session is writing are skipped (SKIP LOCKED), never waited for. Returns the rows moved and
-- removed; run it until both are 0 to catch up. Counts are moved, never lost: a late flush
-- into a minute that was rolled up already rolls up again the next time.
CREATE FUNCTION idem_counters_maintain(p_batch integer)
RETURNS TABLE (rolled_up bigint, expired bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $maintain$
DECLARE
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
        SELECT date_trunc('hour', m.bucket), m.tenant, m.operation, m.outcome, sum(m.n)::bigint
          FROM moved m GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = h.n + EXCLUDED.n
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
        SELECT 60, date_trunc('hour', m.bucket), m.outcome, sum(m.n)::bigint
          FROM moved m GROUP BY 2, 3 ORDER BY 2, 3
        ON CONFLICT (minutes, bucket, outcome) DO UPDATE SET n = h.n + EXCLUDED.n
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
    RETURN QUERY SELECT v_rolled, v_expired;
END
$maintain$;

-- The counters flush: v6's add_counters() keeps its checks and its detailed rows under the name
-- idem_counters_add_detail(); add_counters() calls it and then adds the batch into
-- idem_counters_total. Detailed rows first, then totals, each in key order: two flushers lock in
-- the same order and cannot deadlock. Same bounds, same errors: a batch out of bounds is refused
-- whole (ID003) before anything is written.
ALTER FUNCTION add_counters(jsonb) RENAME TO idem_counters_add_detail;

CREATE FUNCTION add_counters(p_batch jsonb)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $add_counters$
DECLARE
    v_rows integer;
BEGIN
    v_rows := idem_counters_add_detail(p_batch);
    INSERT INTO idem_counters_total AS c (minutes, bucket, outcome, n)
    SELECT 1, to_timestamp(r.m), r.w, sum(r.n)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     GROUP BY 2, 3
     ORDER BY 2, 3
    ON CONFLICT (minutes, bucket, outcome) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN v_rows;
END
$add_counters$;

-- Workers reach the detail only through add_counters() (roles.sql grants them that one).
DO $detail$
BEGIN
    REVOKE ALL ON FUNCTION idem_counters_add_detail(jsonb) FROM PUBLIC;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_worker') THEN
        REVOKE ALL ON FUNCTION idem_counters_add_detail(jsonb) FROM idem_worker;
    END IF;
END
$detail$;

REVOKE ALL ON FUNCTION add_counters(jsonb), idem_exact_stats(text, text, integer),
    idem_live_stats(text, text, integer), idem_exact_refresh_begin(), idem_exact_refresh_finish(uuid, integer),
    idem_counters_maintain(integer) FROM PUBLIC;

-- Nobody but the owner holds any privilege on the shared row beyond what roles.sql grants
-- (SELECT to readers), whatever default privileges the schema's owner set up.
DO $private$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT c.relname, a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid IN ('idem_stats_exact'::regclass, 'idem_stats_live'::regclass, 'idem_counters_total'::regclass,
                              'idem_counters_hourly'::regclass, 'idem_counters_policy'::regclass)
                AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM %s', g.relname, g.name);
    END LOOP;
    REVOKE ALL ON idem_stats_exact, idem_stats_live, idem_counters_total, idem_counters_hourly, idem_counters_policy FROM PUBLIC;
END
$private$;
