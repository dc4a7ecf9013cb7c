-- Idem schema v7: audit appends serialise on a lock only Idem's own functions can take, a
-- recovery action that times out waiting says what it waited for, and a reason needs a visible
-- character (issue #12, items 5 and 6).
--
-- Up to v6 an append took pg_advisory_xact_lock(hashtext('idem.audit'), hashtext(<schema>)).
-- Any login role may take any advisory lock, so any of them could hold up every recovery
-- action. Now an append locks the one row of task_idempotency_audit_head FOR UPDATE. Nobody but
-- the owner holds any privilege on that table (SELECT ... FOR UPDATE needs UPDATE, LOCK TABLE
-- needs a privilege on the table, even for ACCESS SHARE), so only the owner and the SECURITY
-- DEFINER actions can lock it. The row is only a lock: the chain still continues from the
-- newest entry in the trail, so ids stay dense, a gap still means a deleted entry, and the
-- entry hash (audit_entry_hash, operations/audit.cpp) is unchanged: entries written before and
-- after this migration verify alike.

CREATE TABLE task_idempotency_audit_head (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one)
);
INSERT INTO task_idempotency_audit_head VALUES (true);

-- No grant at all, whatever default privileges the schema's owner may have set up.
DO $head$
DECLARE
    g record;
BEGIN
    REVOKE ALL ON task_idempotency_audit_head FROM PUBLIC;
    FOR g IN SELECT DISTINCT a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = 'task_idempotency_audit_head'::regclass AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON task_idempotency_audit_head FROM %s', g.name);
    END LOOP;
END
$head$;

-- True when the text has no visible character: every character is White_Space, a control (Cc)
-- or one rendered invisible (Default_Ignorable_Code_Point, which holds the format characters
-- U+00AD, U+180E, U+200B-U+200F, U+202A-U+202E, U+2060-U+206F, U+FEFF and the plane 14 tags,
-- plus the interlinear annotation controls U+FFF9-U+FFFB and the braille blank U+2800).
-- operations/actions.cpp (reasonIsBlank) holds the same list; tests/support/reasons.h the
-- cases both are checked against. No NUL: PostgreSQL text cannot hold one. An E'' literal, so
-- the escapes mean the same whatever standard_conforming_strings says; no SET clause, so it is
-- inlined.
CREATE FUNCTION audit_reason_blank(p text)
RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT
AS $$
    SELECT p ~ (E'^[\\u0001-\\u0020\\u007F-\\u00A0\\u00AD\\u034F\\u061C\\u115F\\u1160\\u1680\\u17B4\\u17B5'
                || E'\\u180B-\\u180F\\u2000-\\u200F\\u2028-\\u202F\\u205F-\\u206F\\u2800\\u3000\\u3164'
                || E'\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFFB\\U0001BCA0-\\U0001BCA3\\U0001D173-\\U0001D17A'
                || E'\\U000E0000-\\U000E0FFF]*$')
$$;

-- The v3 body (0003_actions.sql) with three changes, marked "v7": the reason check, the row
-- lock's timeout named, and the append's lock.
CREATE OR REPLACE FUNCTION recovery_action_apply(p_action text, p_key text, p_expected_status text,
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
    v_found boolean;
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
    -- v7: white space alone was refused, invisible characters (U+00A0, U+200B, ...) were not.
    IF p_reason IS NULL OR audit_reason_blank(p_reason) THEN
        RAISE EXCEPTION 'a reason is required: it needs a visible character, not only white space or invisible'
                        ' characters' USING ERRCODE = 'ID003';
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
    -- v7: on the head row, which only the owner can lock, held until this transaction ends.
    BEGIN
        PERFORM FROM task_idempotency_audit_head h FOR UPDATE;
        v_found := FOUND;
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'the audit trail stayed locked for % (lock_timeout): another recovery action has appended'
                        ' to it and its transaction has not ended', current_setting('lock_timeout')
            USING ERRCODE = 'lock_not_available',
                  HINT = 'Nothing changed. An open transaction that called idem_requeue, idem_release or idem_fail'
                         ' holds the trail until it commits or rolls back (pg_stat_activity: idle in transaction).';
    END;
    IF NOT v_found THEN
        -- The owner emptied the head table: put the row back. Concurrent appenders meet at the
        -- primary key (the second waits for the first to commit), then at the row lock.
        INSERT INTO task_idempotency_audit_head VALUES (true) ON CONFLICT DO NOTHING;
        PERFORM FROM task_idempotency_audit_head h FOR UPDATE;
    END IF;
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

REVOKE ALL ON FUNCTION audit_reason_blank(text) FROM PUBLIC;
