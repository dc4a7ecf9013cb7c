-- Idem schema v3: audited manual recovery actions (DESIGN section 5).
--
-- idem_requeue, idem_release and idem_fail are the only way an operator changes a task. Each is
-- SECURITY DEFINER (the operator role has no UPDATE on any Idem table) and, in one transaction:
-- locks the row, checks it still has the status and updated_at the operator saw, changes it and
-- appends an entry to the hash-chained audit. A refusal (stale view, wrong state, no such key) is
-- a result row, not an error, and changes nothing. Invalid arguments raise ID003.
--
-- updated_at travels as integer microseconds since the Unix epoch (exact: PostgreSQL's own
-- resolution); read it as (extract(epoch FROM updated_at) * 1000000)::bigint.
--
-- search_path: migrate runs this with search_path = <schema>, pg_temp, which SET search_path
-- FROM CURRENT pins on every function below. pg_catalog is searched first implicitly and
-- pg_temp last explicitly, so a caller's temporary objects can never shadow what a definer
-- function refers to.

-- Where the request came from, as the server saw it: application_name of the acting session.
ALTER TABLE task_idempotency_audit ADD COLUMN application TEXT NOT NULL DEFAULT '';

-- audit_netstring and audit_task_image name only pg_catalog functions (always searched first)
-- and carry no SET clause, so the planner can inline them; only the definer functions, which pin
-- the path, and the owner can call them. audit_entry_hash pins the path: it names audit_netstring.

-- One chain field: a netstring of its UTF-8 bytes ("<byte length>:<bytes>,").
CREATE FUNCTION audit_netstring(p text)
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT
AS $$
    SELECT convert_to(octet_length(convert_to(p, 'UTF8'))::text || ':', 'UTF8') || convert_to(p, 'UTF8')
           || convert_to(',', 'UTF8')
$$;

-- The chain hash; core/audit.cpp (auditCanonicalBytes) computes exactly the same in C++.
-- PL/pgSQL rather than SQL: a SQL function with a SET clause is parsed and planned on every call.
CREATE FUNCTION audit_entry_hash(p_id bigint, p_at_us bigint, p_key text, p_action text, p_reason text,
                                 p_db_role text, p_os_user text, p_client_host text, p_application text,
                                 p_before jsonb, p_after jsonb, p_prev_hash text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN encode(sha256(audit_netstring('idem-audit-v1') || audit_netstring(p_id::text)
                         || audit_netstring(p_at_us::text) || audit_netstring(p_key) || audit_netstring(p_action)
                         || audit_netstring(p_reason) || audit_netstring(p_db_role) || audit_netstring(p_os_user)
                         || audit_netstring(p_client_host) || audit_netstring(p_application)
                         || audit_netstring(p_before::text) || audit_netstring(p_after::text)
                         || audit_netstring(p_prev_hash)), 'hex');
END
$$;

-- A row as the audit keeps it: every column, except that result_json (up to a megabyte or more)
-- is replaced by the SHA-256 of its text, result_json_sha256. Callers set TimeZone to UTC.
CREATE FUNCTION audit_task_image(r task_idempotency)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT (to_jsonb(r) - 'result_json')
           || jsonb_build_object('result_json_sha256',
                                 CASE WHEN r.result_json IS NULL THEN NULL
                                      ELSE encode(sha256(convert_to(r.result_json::text, 'UTF8')), 'hex') END)
$$;

-- The three actions share this body; only the definer wrappers below are granted to anyone.
CREATE FUNCTION recovery_action_apply(p_action text, p_key text, p_expected_status text,
                                      p_expected_updated_at_us bigint, p_extra_attempts integer,
                                      p_reason text, p_actor text)
RETURNS TABLE (o_outcome text, o_status text, o_updated_at_us bigint, o_row_image jsonb, o_audit_id bigint,
               o_message text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $apply$
DECLARE
    r task_idempotency%ROWTYPE;
    a task_idempotency%ROWTYPE;
    v_seen_us bigint;
    v_before jsonb;
    v_after jsonb;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_updated timestamptz;
    v_fail_message text;
    v_prev_id bigint;
    v_prev_hash text;
    v_id bigint;
    v_at timestamptz;
    v_at_us bigint;
    v_host text := COALESCE(host(inet_client_addr()), '[local]');
    v_app text := COALESCE(current_setting('application_name', true), '');
    v_hash text;
BEGIN
    IF p_action IS NULL OR p_action NOT IN ('requeue', 'release', 'fail') THEN
        RAISE EXCEPTION 'unknown recovery action %', p_action USING ERRCODE = 'ID003';
    END IF;
    IF p_key IS NULL OR p_key = '' THEN
        RAISE EXCEPTION 'a key is required' USING ERRCODE = 'ID003';
    END IF;
    IF p_expected_status IS NULL OR p_expected_updated_at_us IS NULL THEN
        RAISE EXCEPTION 'the status and updated_at the operator saw are required' USING ERRCODE = 'ID003';
    END IF;
    IF p_reason IS NULL OR p_reason ~ '^[[:space:]]*$' THEN
        RAISE EXCEPTION 'a reason is required' USING ERRCODE = 'ID003';
    END IF;
    IF char_length(p_reason) > 16384 THEN
        RAISE EXCEPTION 'the reason is % characters, more than the 16384 allowed', char_length(p_reason)
            USING ERRCODE = 'ID003';
    END IF;
    IF p_action = 'requeue' AND (p_extra_attempts IS NULL OR p_extra_attempts < 1 OR p_extra_attempts > 1000) THEN
        RAISE EXCEPTION 'extra attempts must be 1 to 1000, not %', p_extra_attempts USING ERRCODE = 'ID003';
    END IF;
    IF char_length(v_actor) > 256 THEN
        RAISE EXCEPTION 'the actor name is longer than 256 characters' USING ERRCODE = 'ID003';
    END IF;
    -- The chain append reads the last entry under a lock; an older snapshot would fork it (the
    -- dense id then collides and the append fails, but a clear error beats a unique violation).
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'recovery actions run in READ COMMITTED transactions, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;

    -- Waits for an executor that holds the row (it is completing right now): afterwards the row
    -- is its newest version, and the version check below sees what the executor did.
    SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
    IF NOT FOUND THEN
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

    -- One chain per schema: appends serialise here (after the row lock, so an operator waiting
    -- for a busy row never holds up everyone else's actions). Ids are allocated densely under
    -- the lock, so a missing id always means a deleted entry.
    PERFORM pg_advisory_xact_lock(hashtext('idem.audit'), hashtext(current_schema()));
    -- Planned afresh each time (EXECUTE): a plan cached while the trail was empty must not
    -- outlive it in a long bulk session.
    EXECUTE 'SELECT au.id, au.entry_hash FROM task_idempotency_audit au ORDER BY au.id DESC LIMIT 1'
       INTO v_prev_id, v_prev_hash;
    v_id := COALESCE(v_prev_id, 0) + 1;
    v_prev_hash := COALESCE(v_prev_hash, repeat('0', 64));
    v_at := clock_timestamp();
    v_at_us := (extract(epoch FROM v_at) * 1000000)::bigint;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    v_hash := audit_entry_hash(v_id, v_at_us, p_key, p_action, p_reason, session_user::text, v_actor, v_host, v_app,
                               v_before, v_after, v_prev_hash);
    INSERT INTO task_idempotency_audit (id, at, idempotency_key, action, reason, db_role, os_user, client_host,
                                        application, before_image, after_image, prev_hash, entry_hash)
    OVERRIDING SYSTEM VALUE
    VALUES (v_id, v_at, p_key, p_action, p_reason, session_user, v_actor, v_host, v_app, v_before, v_after,
            v_prev_hash, v_hash);

    RETURN QUERY SELECT 'applied'::text, a.status, (extract(epoch FROM a.updated_at) * 1000000)::bigint, v_after, v_id,
                        CASE p_action
                            WHEN 'requeue' THEN format('requeued: retryable_failed, due now, %s more attempt(s) (max_attempts %s)',
                                                       p_extra_attempts, a.max_attempts)
                            WHEN 'release' THEN 'lease released: the old token is revoked, the next claim takes over'
                            ELSE 'marked failed: no further retries' END;
END
$apply$;

-- The callable actions. Outcome: applied | stale | wrong_state | not_found; status and
-- updated_at_us are the row after the action (applied) or as it is now (refusals); row_image is
-- the row as the audit keeps it; audit_id the new entry. p_actor: who is acting as the client
-- knows it (OS user, host), recorded next to session_user, application_name and the client address.
CREATE FUNCTION idem_requeue(p_key text, p_expected_status text, p_expected_updated_at_us bigint,
                             p_extra_attempts integer, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, updated_at_us bigint, row_image jsonb, audit_id bigint, message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY SELECT * FROM recovery_action_apply('requeue', p_key, p_expected_status, p_expected_updated_at_us,
                                        p_extra_attempts, p_reason, p_actor);
END
$$;

CREATE FUNCTION idem_release(p_key text, p_expected_status text, p_expected_updated_at_us bigint, p_reason text,
                             p_actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, updated_at_us bigint, row_image jsonb, audit_id bigint, message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY SELECT * FROM recovery_action_apply('release', p_key, p_expected_status, p_expected_updated_at_us, NULL,
                                        p_reason, p_actor);
END
$$;

CREATE FUNCTION idem_fail(p_key text, p_expected_status text, p_expected_updated_at_us bigint, p_reason text,
                          p_actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, updated_at_us bigint, row_image jsonb, audit_id bigint, message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY SELECT * FROM recovery_action_apply('fail', p_key, p_expected_status, p_expected_updated_at_us, NULL, p_reason,
                                        p_actor);
END
$$;

REVOKE ALL ON FUNCTION audit_netstring(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION audit_entry_hash(bigint, bigint, text, text, text, text, text, text, text, jsonb, jsonb, text)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION audit_task_image(task_idempotency) FROM PUBLIC;
REVOKE ALL ON FUNCTION recovery_action_apply(text, text, text, bigint, integer, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION idem_requeue(text, text, bigint, integer, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION idem_release(text, text, bigint, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION idem_fail(text, text, bigint, text, text) FROM PUBLIC;
