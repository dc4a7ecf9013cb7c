-- audit_append (schema v9, changed in v33; the history is in git log).
-- The one append to the audit chain, for entries of every kind (recovery actions, retention
-- changes, purge runs): serialised on the head row (v7), which only the owner can lock, held until
-- the transaction ends; ids allocated densely under that lock, so a missing id always means a
-- deleted entry; the hash as audit_entry_hash computes it. The caller checks its arguments,
-- runs READ COMMITTED and holds no lock an audited action could be waiting behind. The action is
-- one of idem_audit_actions (v33, a foreign key), and its entries name a key exactly when the
-- registry says it is not keyless (ID003 otherwise: the rule the key CHECK held before v33).
CREATE OR REPLACE FUNCTION audit_append(p_key text, p_action text, p_reason text, p_actor text, p_before jsonb, p_after jsonb)
RETURNS bigint
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $append$
DECLARE
    v_found boolean;
    v_prev_id bigint;
    v_prev_hash text;
    v_id bigint;
    v_at timestamptz;
    v_at_us bigint;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_host text := COALESCE(host(inet_client_addr()), '[local]');
    v_app text := COALESCE(current_setting('application_name', true), '');
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'audited changes run in READ COMMITTED transactions, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;
    IF NOT EXISTS (SELECT FROM idem_audit_actions a WHERE a.action = p_action AND a.keyless = (p_key = '')) THEN
        RAISE EXCEPTION 'audit action % is not in idem_audit_actions or does not take % key', quote_literal(p_action),
            CASE WHEN p_key = '' THEN 'an empty' ELSE 'a' END USING ERRCODE = 'ID003';
    END IF;
    BEGIN
        PERFORM FROM task_idempotency_audit_head h FOR UPDATE;
        v_found := FOUND;
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'the audit trail stayed locked for % (lock_timeout): another audited change has appended'
                        ' to it and its transaction has not ended', current_setting('lock_timeout')
            USING ERRCODE = 'lock_not_available',
                  HINT = 'Nothing changed. An open transaction that made an audited change (idem_requeue, idem_release,'
                         ' idem_fail, a retention change or a purge) holds the trail until it commits or rolls back'
                         ' (pg_stat_activity: idle in transaction).';
    END;
    IF NOT v_found THEN
        INSERT INTO task_idempotency_audit_head VALUES (true) ON CONFLICT DO NOTHING;
        PERFORM FROM task_idempotency_audit_head h FOR UPDATE;
    END IF;
    EXECUTE 'SELECT au.id, au.entry_hash FROM task_idempotency_audit au ORDER BY au.id DESC LIMIT 1'
       INTO v_prev_id, v_prev_hash;
    v_id := COALESCE(v_prev_id, 0) + 1;
    v_prev_hash := COALESCE(v_prev_hash, repeat('0', 64));
    v_at := clock_timestamp();
    v_at_us := (extract(epoch FROM v_at) * 1000000)::bigint;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    INSERT INTO task_idempotency_audit (id, at, idempotency_key, action, reason, db_role, os_user, client_host,
                                        application, before_image, after_image, prev_hash, entry_hash)
    OVERRIDING SYSTEM VALUE
    VALUES (v_id, v_at, p_key, p_action, p_reason, session_user, v_actor, v_host, v_app, p_before, p_after,
            v_prev_hash,
            audit_entry_hash(v_id, v_at_us, p_key, p_action, p_reason, session_user::text, v_actor, v_host, v_app,
                             p_before, p_after, v_prev_hash));
    RETURN v_id;
END
$append$;

REVOKE ALL ON FUNCTION audit_append(text, text, text, text, jsonb, jsonb) FROM PUBLIC;
