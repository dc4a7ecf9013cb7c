-- idem_job_batch (schema v19; the history is in git log).
-- One batch of recovery job p_job, in the caller's transaction, by its runner (idem_job_attach):
-- takes the job's row lock, then up to p_batch (1 to 10000) of its pending rows, untried ones
-- first in key order, then the ones found locked before once their wait is over. Each task row
-- is locked with SKIP LOCKED, so the job never waits for a worker (a row somebody holds is tried
-- again later: after 0.2, 0.4, 0.8, 1.6 s, then refused as busy), and the action is applied by
-- recovery_action_apply, the single actions' body, under its guard: the row must still have the
-- status and updated_at it had at the job's moment, else it is refused as moved_on and nothing
-- changes. A changed row gets its own audit entry, "job_id" in its after image. Every outcome
-- is recorded in the job's items and counts in this same transaction, so a batch commits whole
-- or not at all. When no row is left the job is finished (its closing audit entry). A job that
-- has ended (cancelled meanwhile) returns its state and does nothing. Returns the job's state,
-- the rows this batch did, those still pending, and how long to wait before the next batch
-- when every pending row is waiting for a retry (else 0).
-- v21: each batch checks that the runner (idem_caller) and the job's starter still hold the job's
-- action right (42501 else: revoking the starter's right stops the job at its next batch).
-- v25: a job started with p_redrive also queues a re-drive item for each row it requeues
-- (idem_redrive_enqueue), in the same transaction.
CREATE OR REPLACE FUNCTION idem_job_batch(p_job bigint, p_batch integer DEFAULT 100)
RETURNS TABLE (state text, done bigint, pending bigint, wait_ms integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '5s'
AS $batch$
DECLARE
    c_tries constant integer := 5;
    j idem_jobs;
    it record;
    r task_idempotency%ROWTYPE;
    a record;
    v_actor text;
    v_changed bigint := 0;
    v_moved bigint := 0;
    v_busy bigint := 0;
    v_gone bigint := 0;
    v_done bigint := 0;
    v_pending bigint;
    v_next timestamptz;
    v_state text;
    v_why text;
    v_tries integer;
    v_ns text;
    v_nu bigint;
    v_aid bigint;
    v_seqs integer[] := '{}';
    v_states text[] := '{}';
    v_whys text[] := '{}';
    v_triess integer[] := '{}';
    v_now_statuses text[] := '{}';
    v_now_us bigint[] := '{}';
    v_audits bigint[] := '{}';
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'a job''s batch must be 1 to 10000 rows, not %', COALESCE(p_batch::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a job''s batch runs in a READ COMMITTED transaction, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO j FROM idem_jobs x WHERE x.id = p_job FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no job %', p_job USING ERRCODE = 'ID002';
    END IF;
    v_pending := j.matched - j.changed - j.refused_moved_on - j.refused_busy - j.refused_gone
                 - j.skipped_not_applicable - j.skipped_cancelled;
    IF j.state <> 'active' THEN
        RETURN QUERY SELECT j.state, 0::bigint, v_pending, 0;
        RETURN;
    END IF;
    IF j.runner_pid IS DISTINCT FROM pg_backend_pid() OR NOT idem_job_runner_alive(j) THEN
        RAISE EXCEPTION 'this session is not the runner of job %: attach first (idem_job_attach)', p_job
            USING ERRCODE = 'ID004';
    END IF;
    PERFORM idem_job_check_rights(j, 'batch');
    v_actor := COALESCE(j.runner_actor, j.actor);

    FOR it IN SELECT i.seq, i.idempotency_key, i.seen_status, i.seen_updated_at, i.tries
                FROM idem_job_items i
               WHERE i.job_id = p_job AND i.state = 'pending'
                 AND (i.next_try_at IS NULL OR i.next_try_at <= clock_timestamp())
               ORDER BY i.tries, i.seq
               LIMIT p_batch LOOP
        v_done := v_done + 1;
        v_ns := NULL;
        v_nu := NULL;
        v_aid := NULL;
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = it.idempotency_key FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            IF NOT EXISTS (SELECT FROM task_idempotency t WHERE t.idempotency_key = it.idempotency_key) THEN
                v_state := 'refused';
                v_why := 'gone';
                v_gone := v_gone + 1;
            ELSIF it.tries + 1 >= c_tries THEN
                v_state := 'refused';
                v_why := 'busy';
                v_busy := v_busy + 1;
            ELSE
                v_state := 'pending';
                v_why := NULL;
            END IF;
            v_tries := it.tries + 1;
        ELSE
            SELECT * INTO a FROM recovery_action_apply(j.action, it.idempotency_key, it.seen_status,
                                                       (extract(epoch FROM it.seen_updated_at) * 1000000)::bigint,
                                                       j.extra_attempts, j.reason, v_actor, j.id, j.redrive) x;
            v_tries := it.tries;
            v_ns := a.o_status;
            v_nu := a.o_updated_at_us;
            v_aid := a.o_audit_id;
            IF a.o_outcome = 'applied' THEN
                IF j.redrive THEN
                    -- v25: a job that re-executes queues each row it requeued for the operation's
                    -- re-drivers, with its job id (idem_redrive_outcomes counts them).
                    PERFORM idem_redrive_enqueue(it.idempotency_key, j.id, a.o_audit_id, j.starter_role, v_actor);
                END IF;
                v_state := 'changed';
                v_why := NULL;
                v_changed := v_changed + 1;
            ELSIF a.o_outcome = 'not_found' THEN
                v_state := 'refused';
                v_why := 'gone';
                v_gone := v_gone + 1;
            ELSE
                -- stale: the row moved on since the moment (wrong_state cannot follow an
                -- unchanged version the action applied to, and is refused alike).
                v_state := 'refused';
                v_why := 'moved_on';
                v_moved := v_moved + 1;
            END IF;
        END IF;
        -- Recorded together after the loop: one statement for the batch's rows.
        v_seqs := v_seqs || it.seq;
        v_states := v_states || v_state;
        v_whys := v_whys || v_why;
        v_triess := v_triess || v_tries;
        v_now_statuses := v_now_statuses || v_ns;
        v_now_us := v_now_us || v_nu;
        v_audits := v_audits || v_aid;
    END LOOP;
    UPDATE idem_job_items i
       SET state = u.state, why = u.why, tries = u.tries,
           next_try_at = CASE WHEN u.state = 'pending'
                              THEN clock_timestamp() + (200 << (u.tries - 1)) * interval '1 millisecond' END,
           done_at = CASE WHEN u.state <> 'pending' THEN clock_timestamp() END,
           now_status = u.now_status,
           now_updated_at = to_timestamp(0) + u.now_us * interval '1 microsecond', audit_id = u.audit_id
      FROM unnest(v_seqs, v_states, v_whys, v_triess, v_now_statuses, v_now_us, v_audits)
           AS u(seq, state, why, tries, now_status, now_us, audit_id)
     WHERE i.job_id = p_job AND i.seq = u.seq;

    UPDATE idem_jobs x
       SET changed = x.changed + v_changed, refused_moved_on = x.refused_moved_on + v_moved,
           refused_busy = x.refused_busy + v_busy, refused_gone = x.refused_gone + v_gone,
           batches = x.batches + 1, last_batch_at = clock_timestamp()
     WHERE x.id = p_job
    RETURNING * INTO j;
    v_pending := v_pending - v_changed - v_moved - v_busy - v_gone;
    IF v_pending = 0 THEN
        PERFORM idem_job_close(j, 'finished');
        RETURN QUERY SELECT 'finished'::text, v_done, 0::bigint, 0;
        RETURN;
    END IF;
    IF v_done = 0 THEN
        SELECT min(i.next_try_at) INTO v_next FROM idem_job_items i WHERE i.job_id = p_job AND i.state = 'pending';
    END IF;
    RETURN QUERY SELECT 'active'::text, v_done, v_pending,
                        CASE WHEN v_next IS NULL THEN 0
                             ELSE GREATEST(10, ceil(extract(epoch FROM v_next - clock_timestamp()) * 1000))::integer END;
END
$batch$;

REVOKE ALL ON FUNCTION idem_job_batch(bigint, integer) FROM PUBLIC;
