-- recovery_action_apply (schema v3, changed in v7, v19; the history is in git log).
-- The three actions share this body; only the definer wrappers below are granted to anyone.
-- v19: p_job_id, the recovery job whose batch applies it (idem_job_batch), goes into the audit
-- entry's after image as "job_id"; NULL for a single action, whose entry is as before.
-- v23: a single action that would change the row first passes the approval policy's gate
-- (idem_approval_gate: one row of its login's budget; SQLSTATE ID004, nothing changed, over it).
-- v25: p_redrive, a requeue that re-executes (idem_requeue_reexecute, a job started with
-- p_redrive): the audit entry's after image says "redrive": true.
CREATE OR REPLACE FUNCTION recovery_action_apply(p_action text, p_key text, p_expected_status text,
                                                 p_expected_updated_at_us bigint, p_extra_attempts integer,
                                                 p_reason text, p_actor text, p_job_id bigint DEFAULT NULL,
                                                 p_redrive boolean DEFAULT false)
RETURNS TABLE (o_outcome text, o_status text, o_updated_at_us bigint, o_row_image jsonb, o_audit_id bigint,
               o_message text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $apply$
DECLARE
    r task_idempotency%ROWTYPE;
    a task_idempotency%ROWTYPE;
    v_found boolean;
    v_seen_us bigint;
    v_before jsonb;
    v_after jsonb;
    v_updated timestamptz;
    v_fail_message text;
    v_id bigint;
BEGIN
    IF p_action IS NULL OR p_action NOT IN ('requeue', 'release', 'fail') THEN
        RAISE EXCEPTION 'unknown recovery action %', p_action USING ERRCODE = 'ID003';
    END IF;
    IF p_redrive IS NULL OR (p_redrive AND p_action <> 'requeue') THEN
        RAISE EXCEPTION 'only a requeue re-executes' USING ERRCODE = 'ID003';
    END IF;
    IF p_job_id IS NULL THEN
        PERFORM idem_require_right(p_action, CASE p_action WHEN 'fail' THEN 'mark a task failed'
                                                          ELSE p_action || ' a task' END);
    END IF;
    IF p_key IS NULL OR p_key = '' THEN
        RAISE EXCEPTION 'a key is required' USING ERRCODE = 'ID003';
    END IF;
    IF p_expected_status IS NULL OR p_expected_updated_at_us IS NULL THEN
        RAISE EXCEPTION 'the status and updated_at the operator saw are required' USING ERRCODE = 'ID003';
    END IF;
    -- A visible reason of at most 16384 characters, an actor of at most 256 (as every audited change).
    PERFORM audit_check_reason(p_reason, p_actor);
    IF p_action = 'requeue' AND (p_extra_attempts IS NULL OR p_extra_attempts < 1 OR p_extra_attempts > 1000) THEN
        RAISE EXCEPTION 'extra attempts must be 1 to 1000, not %', p_extra_attempts USING ERRCODE = 'ID003';
    END IF;
    -- The chain append reads the last entry under a lock; an older snapshot would fork it (the
    -- dense id then collides and the append fails, but a clear error beats a unique violation).
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'recovery actions run in READ COMMITTED transactions, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;

    -- Waits for an executor that holds the row (it is completing right now): afterwards the row
    -- is its newest version, and the version check below sees what the executor did.
    -- v7: a lock timeout here says it was the row (the caller sets lock_timeout, SET LOCAL).
    BEGIN
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
        v_found := FOUND;
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'the task''s row stayed locked for % (lock_timeout): its executor holds it, completing it'
                        ' right now, or another action on this key has not ended', current_setting('lock_timeout')
            USING ERRCODE = 'lock_not_available', HINT = 'Nothing changed. Read the task again and retry.';
    END;
    IF NOT v_found THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::bigint, NULL::jsonb, NULL::bigint,
                            'no task with that key'::text;
        RETURN;
    END IF;
    v_seen_us := (extract(epoch FROM r.updated_at) * 1000000)::bigint;
    v_before := audit_task_image(r);
    IF r.status <> p_expected_status OR v_seen_us <> p_expected_updated_at_us THEN
        RETURN QUERY SELECT 'stale'::text, r.status, v_seen_us, v_before, NULL::bigint,
                            format('the task changed after it was read: it is now %s, updated %s, attempts %s/%s'
                                   ' (it was read as %s, updated %s)', r.status,
                                   to_char(r.updated_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), r.attempts,
                                   r.max_attempts, p_expected_status,
                                   to_char(to_timestamp(0) + p_expected_updated_at_us * interval '1 microsecond',
                                           'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
        RETURN;
    END IF;
    IF NOT ((p_action = 'requeue' AND r.status IN ('failed', 'retryable_failed'))
            OR (p_action = 'release' AND r.status = 'processing')
            OR (p_action = 'fail' AND r.status IN ('processing', 'retryable_failed'))) THEN
        RETURN QUERY SELECT 'wrong_state'::text, r.status, v_seen_us, v_before, NULL::bigint,
                            format('%s does not apply to a %s task (%s)', p_action, r.status,
                                   CASE p_action WHEN 'requeue' THEN 'only failed or retryable_failed'
                                                 WHEN 'release' THEN 'only processing'
                                                 ELSE 'only processing or retryable_failed' END);
        RETURN;
    END IF;

    -- What a login changes without a second person is bounded (schema v23); a job's rows were
    -- counted when it started, or approved.
    IF p_job_id IS NULL THEN
        PERFORM idem_approval_gate(p_action, 1);
    END IF;

    -- Every action moves updated_at forward, even within one transaction, so a view taken
    -- before it is always recognised as stale.
    v_updated := GREATEST(now(), r.updated_at + interval '1 microsecond');
    IF p_action = 'requeue' THEN
        UPDATE task_idempotency t
           SET status = 'retryable_failed', next_attempt_at = now(), max_attempts = t.attempts + p_extra_attempts,
               error_class = CASE WHEN t.error_class = 'unknown' THEN 'unknown' ELSE 'retryable' END,
               owner_token = NULL, lease_until = NULL, updated_at = v_updated
         WHERE t.idempotency_key = p_key
        RETURNING t.* INTO STRICT a;
    ELSIF p_action = 'release' THEN
        -- The token goes: the old executor's fence, complete, heartbeat and fail now raise ID001.
        -- The lease ends now, so the next claim takes over (attempts + 1, new token).
        UPDATE task_idempotency t
           SET owner_token = NULL, lease_until = now(), updated_at = v_updated
         WHERE t.idempotency_key = p_key
        RETURNING t.* INTO STRICT a;
    ELSE
        v_fail_message := left('marked failed by an operator: ' || p_reason, 8192);
        UPDATE task_idempotency t
           SET status = 'failed', error_class = 'permanent', error_message = v_fail_message,
               errors = (CASE WHEN jsonb_array_length(t.errors) >= 20 THEN t.errors - 0 ELSE t.errors END)
                        || jsonb_build_array(jsonb_build_object('attempt', t.attempts, 'at', now(),
                                                                'class', 'permanent', 'message', v_fail_message)),
               owner_token = NULL, lease_until = NULL, next_attempt_at = NULL, updated_at = v_updated
         WHERE t.idempotency_key = p_key
        RETURNING t.* INTO STRICT a;
    END IF;
    v_after := audit_task_image(a);

    -- The entry, on the schema's one chain: audit_append serialises appends on the head row, after
    -- the task's row lock above, so an operator waiting for a busy row never holds up everyone
    -- else's actions.
    v_id := audit_append(p_key, p_action, p_reason, p_actor, v_before,
                         CASE WHEN p_job_id IS NULL THEN v_after ELSE v_after || jsonb_build_object('job_id', p_job_id) END
                         || CASE WHEN p_redrive THEN jsonb_build_object('redrive', true) ELSE '{}'::jsonb END);

    RETURN QUERY SELECT 'applied'::text, a.status, (extract(epoch FROM a.updated_at) * 1000000)::bigint, v_after, v_id,
                        CASE p_action
                            WHEN 'requeue' THEN format('requeued: retryable_failed, due now, %s more attempt(s) (max_attempts %s)',
                                                       p_extra_attempts, a.max_attempts)
                            WHEN 'release' THEN 'lease released: the old token is revoked, the next claim takes over'
                            ELSE 'marked failed: no further retries' END;
END
$apply$;

REVOKE ALL ON FUNCTION recovery_action_apply(text, text, text, bigint, integer, text, text, bigint, boolean) FROM PUBLIC;
