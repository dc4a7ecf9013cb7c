-- idem_job_run (schema v19; the history is in git log).
-- Runs recovery job p_job (NULL: the oldest active job nobody is running, for a scheduler such
-- as pg_cron; nothing when there is none): CALL <schema>.idem_job_run(42). Attaches as its runner
-- (idem_job_attach; refused while another session runs it), then runs idem_job_batch with
-- p_batch rows, committing after each, until the job has ended (finished, or cancelled by
-- idem_job_cancel) or p_max_seconds have passed; then lets go of the job, unless
-- p_stay_attached and the job is still active (a client that calls it again and again, reading
-- the job's progress between calls, stays its runner throughout; idem_job_detach ends it).
-- After each batch it sleeps, holding no lock and (in slices of 50 ms, each its own transaction)
-- no old snapshot, so that batches take at most p_duty of the time (after a batch of t ms,
-- t * (1 - p_duty) / p_duty ms, at most 10 s; as the purge), or until the next retry of a row
-- found locked is due. A batch that times out on a lock (the job's row, held by a cancel, or
-- the audit trail's, held by another audited change) is tried again after a second, ten times at
-- most. Killed or cancelled, it has lost only the batch it was in: idem_job_run again (any
-- session with idem_operator) goes on from there. Transaction control needs a CALL outside any
-- transaction block and no SET clause on the procedure, hence the schema written into its body.
CREATE OR REPLACE PROCEDURE idem_job_run(p_job bigint, p_batch integer DEFAULT 100,
                                         p_duty double precision DEFAULT 0.2, p_max_seconds integer DEFAULT 86400,
                                         p_actor text DEFAULT NULL, p_stay_attached boolean DEFAULT false)
LANGUAGE plpgsql
AS $run$
DECLARE
    v_job bigint;
    v_state text;
    v_wait_ms integer;
    v_locked integer := 0;
    v_start timestamptz := pg_catalog.clock_timestamp();
    v_batch_start timestamptz;
    v_until timestamptz;
BEGIN
    PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'a job''s batch must be 1 to 10000 rows, not %', COALESCE(p_batch::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_duty IS NULL OR NOT (p_duty >= 0.01 AND p_duty <= 1) THEN
        RAISE EXCEPTION 'duty must be 0.01 to 1, not %', COALESCE(p_duty::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_seconds IS NULL OR p_max_seconds NOT BETWEEN 1 AND 86400 THEN
        RAISE EXCEPTION 'max_seconds must be 1 to 86400, not %', COALESCE(p_max_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    v_job := @extschema@.idem_job_attach(p_job, COALESCE(p_actor, current_setting('application_name', true)));
    COMMIT;
    IF v_job IS NULL THEN
        RETURN;
    END IF;
    LOOP
        PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
        v_batch_start := clock_timestamp();
        BEGIN
            SELECT b.state, b.wait_ms INTO v_state, v_wait_ms FROM @extschema@.idem_job_batch(v_job, p_batch) b;
            v_locked := 0;
        EXCEPTION
            WHEN lock_not_available THEN
                v_locked := v_locked + 1;
                IF v_locked >= 10 THEN
                    PERFORM @extschema@.idem_job_detach(v_job);
                    RAISE;
                END IF;
                v_state := 'active';
                v_wait_ms := 1000;
            WHEN query_canceled OR others THEN
                PERFORM @extschema@.idem_job_detach(v_job);
                RAISE;
        END;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
        EXIT WHEN v_state <> 'active';
        -- The pause, in slices of at most 50 ms each ending its transaction: a statement holds a
        -- snapshot while it sleeps, and an old snapshot keeps every backend's dead row versions
        -- from being pruned (the claims' updates then stop being HOT and the table grows).
        v_until := clock_timestamp()
                   + least(greatest(extract(epoch FROM clock_timestamp() - v_batch_start) * (1 - p_duty) / p_duty,
                                    v_wait_ms / 1000.0), 10) * interval '1 second';
        WHILE pg_catalog.clock_timestamp() < v_until LOOP
            BEGIN
                PERFORM pg_catalog.pg_sleep(least(0.05, extract(epoch FROM v_until - pg_catalog.clock_timestamp())));
            EXCEPTION WHEN query_canceled OR others THEN
                PERFORM @extschema@.idem_job_detach(v_job);
                RAISE;
            END;
            COMMIT;
        END LOOP;
        PERFORM pg_catalog.set_config('search_path', '@extschema@, pg_temp', true);
        EXIT WHEN clock_timestamp() >= v_start + p_max_seconds * interval '1 second';
    END LOOP;
    IF v_state <> 'active' OR NOT COALESCE(p_stay_attached, false) THEN
        PERFORM @extschema@.idem_job_detach(v_job);
    END IF;
    COMMIT;
END
$run$;

REVOKE ALL ON PROCEDURE idem_job_run(bigint, integer, double precision, integer, text, boolean) FROM PUBLIC;
