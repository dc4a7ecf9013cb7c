-- audit_entry_hash (schema v3; the history is in git log).
-- The chain hash; operations/audit.cpp (auditCanonicalBytes) computes exactly the same in C++.
-- PL/pgSQL rather than SQL: a SQL function with a SET clause is parsed and planned on every call.
CREATE OR REPLACE FUNCTION audit_entry_hash(p_id bigint, p_at_us bigint, p_key text, p_action text, p_reason text,
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

REVOKE ALL ON FUNCTION audit_entry_hash(bigint, bigint, text, text, text, text, text, text, text, jsonb, jsonb, text) FROM PUBLIC;
