-- idem_purge_run (schema v9, changed in v12, v13, v19; the history is in git log).
-- The same as idemctl purge, for pg_cron: CALL <schema>.idem_purge_run(1000, 300). Each batch
-- commits on its own, then it sleeps (holding no lock, and in slices of 50 ms each its own
-- transaction, so holding no snapshot either) so that batches take at most p_duty of the time: after a batch of t ms, t * (1 - p_duty) / p_duty ms (on a small machine a purge at
-- full speed takes CPU from the claims, see bench/README.md, "Session 6"); stops after
-- p_max_seconds or when nothing more is due. Transaction
-- control needs a CALL outside any transaction block (pg_cron calls it so) and no SET clause on
-- the procedure, hence the schema written into its body.
CREATE OR REPLACE PROCEDURE idem_purge_run(p_batch integer DEFAULT 1000, p_max_seconds integer DEFAULT 60,
                                           p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL,
                                           p_duty double precision DEFAULT 0.1)
LANGUAGE plpgsql
AS $run$
DECLARE
    v_run bigint;
    v_n bigint;
    v_start timestamptz := pg_catalog.clock_timestamp();
    v_batch_start timestamptz;
    v_until timestamptz;
BEGIN
    PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_seconds IS NULL OR p_max_seconds NOT BETWEEN 1 AND 86400 THEN
        RAISE EXCEPTION 'max_seconds must be 1 to 86400, not %', COALESCE(p_max_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_duty IS NULL OR NOT (p_duty >= 0.01 AND p_duty <= 1) THEN
        RAISE EXCEPTION 'duty must be 0.01 to 1, not %', COALESCE(p_duty::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    v_run := @extschema@.idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    COMMIT;
    LOOP
        PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
        v_batch_start := clock_timestamp();
        BEGIN
            SELECT b.removed INTO v_n FROM @extschema@.idem_purge_batch(v_run, p_batch) b;
        EXCEPTION WHEN query_canceled OR others THEN
            PERFORM @extschema@.idem_purge_release(v_run);
            RAISE;
        END;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
        EXIT WHEN v_n < p_batch OR clock_timestamp() >= v_start + p_max_seconds * interval '1 second';
        -- The pause, in slices of at most 50 ms each ending its transaction: a statement holds a
        -- snapshot while it sleeps, and an old snapshot keeps every backend's dead row versions
        -- from being pruned (the claims' updates then stop being HOT and the table grows; the
        -- recovery jobs' runner measured it, bench/README.md "Session 14").
        v_until := clock_timestamp()
                   + least(extract(epoch FROM clock_timestamp() - v_batch_start) * (1 - p_duty) / p_duty, 10)
                     * interval '1 second';
        WHILE pg_catalog.clock_timestamp() < v_until LOOP
            BEGIN
                PERFORM pg_catalog.pg_sleep(least(0.05, extract(epoch FROM v_until - pg_catalog.clock_timestamp())));
            EXCEPTION WHEN query_canceled OR others THEN
                PERFORM @extschema@.idem_purge_release(v_run);
                RAISE;
            END;
            COMMIT;
        END LOOP;
        PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
    END LOOP;
    BEGIN
        PERFORM @extschema@.idem_purge_finish(v_run);
    EXCEPTION WHEN query_canceled OR others THEN
        PERFORM @extschema@.idem_purge_release(v_run);
        RAISE;
    END;
    COMMIT;
END
$run$;

REVOKE ALL ON PROCEDURE idem_purge_run(integer, integer, text, text, double precision) FROM PUBLIC;
