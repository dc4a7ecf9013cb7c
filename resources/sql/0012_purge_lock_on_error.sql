-- Idem schema v12: a purge that fails lets go of its run's lock. A run's liveness is a session
-- advisory lock (idem_purge_begin), and PostgreSQL keeps a session lock through a rollback: a
-- scheduled idem_purge() or CALL idem_purge_run() cancelled by a statement timeout (or failing
-- for any other reason) left it on the session. Behind a connection pooler that session is a
-- pooled backend that lives on: the lock stayed with it, and the run (committed as running by
-- the procedure) looked alive to every later purge, which never closed it as abandoned. Both are
-- v9's (0009_key_lifecycle.sql) with the failure paths marked v12: the lock is released, the
-- error raised as it was. Nothing else changes.
CREATE OR REPLACE FUNCTION idem_purge(p_batch integer DEFAULT 1000, p_max_batches integer DEFAULT 1,
                                      p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL)
RETURNS TABLE (run_id bigint, rows_removed bigint, batches bigint, audit_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $purge$
DECLARE
    v_n bigint;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_batches IS NULL OR p_max_batches NOT BETWEEN 1 AND 100 THEN
        RAISE EXCEPTION 'max_batches must be 1 to 100, not %', COALESCE(p_max_batches::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    run_id := idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    BEGIN -- v12
        FOR i IN 1..p_max_batches LOOP
            SELECT b.removed INTO v_n FROM idem_purge_batch(run_id, p_batch) b;
            EXIT WHEN v_n < p_batch;
        END LOOP;
        SELECT f.audit_id, f.rows_removed, f.batches INTO audit_id, rows_removed, batches FROM idem_purge_finish(run_id) f;
    EXCEPTION WHEN query_canceled OR others THEN -- v12: the run rolls back; its lock would not
        PERFORM pg_advisory_unlock(idem_purge_lock_key(run_id));
        RAISE;
    END;
    RETURN NEXT;
END
$purge$;

-- The procedure commits between batches, which a block with an exception handler may not
-- enclose: each statement after the run's begin has its own handler.
DO $proc$
BEGIN
    EXECUTE format($p$
CREATE OR REPLACE PROCEDURE idem_purge_run(p_batch integer DEFAULT 1000, p_max_seconds integer DEFAULT 60,
                                           p_reason text DEFAULT 'scheduled purge', p_actor text DEFAULT NULL,
                                           p_duty double precision DEFAULT 0.1)
LANGUAGE plpgsql
AS $run$
DECLARE
    v_run bigint;
    v_n bigint;
    v_start timestamptz := clock_timestamp();
    v_batch_start timestamptz;
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %%', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_max_seconds IS NULL OR p_max_seconds NOT BETWEEN 1 AND 86400 THEN
        RAISE EXCEPTION 'max_seconds must be 1 to 86400, not %%', COALESCE(p_max_seconds::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_duty IS NULL OR NOT (p_duty >= 0.01 AND p_duty <= 1) THEN
        RAISE EXCEPTION 'duty must be 0.01 to 1, not %%', COALESCE(p_duty::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    v_run := %1$I.idem_purge_begin(p_reason, COALESCE(p_actor, current_setting('application_name', true)));
    COMMIT;
    LOOP
        v_batch_start := clock_timestamp();
        BEGIN -- v12
            SELECT b.removed INTO v_n FROM %1$I.idem_purge_batch(v_run, p_batch) b;
        EXCEPTION WHEN query_canceled OR others THEN
            PERFORM pg_advisory_unlock(%1$I.idem_purge_lock_key(v_run));
            RAISE;
        END;
        COMMIT;
        EXIT WHEN v_n < p_batch OR clock_timestamp() >= v_start + p_max_seconds * interval '1 second';
        BEGIN -- v12
            PERFORM pg_sleep(least(extract(epoch FROM clock_timestamp() - v_batch_start) * (1 - p_duty) / p_duty, 10));
        EXCEPTION WHEN query_canceled OR others THEN
            PERFORM pg_advisory_unlock(%1$I.idem_purge_lock_key(v_run));
            RAISE;
        END;
    END LOOP;
    BEGIN -- v12
        PERFORM %1$I.idem_purge_finish(v_run);
    EXCEPTION WHEN query_canceled OR others THEN
        PERFORM pg_advisory_unlock(%1$I.idem_purge_lock_key(v_run));
        RAISE;
    END;
    COMMIT;
END
$run$
$p$, current_schema());
END
$proc$;
