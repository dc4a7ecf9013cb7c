-- idem_change_approve (schema v22, a delegate since v28; the history is in git log).
-- Kept for the clients of v22 to v27: approves change request p_request through
-- idem_approval_approve, the one approve (its refusals and its audit entry).
CREATE OR REPLACE FUNCTION idem_change_approve(p_request bigint, p_spec_sha256 text, p_reason text,
                                               p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, approved_at timestamptz, expires_at timestamptz, audit_id bigint)
LANGUAGE sql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $approve$
    SELECT a.request_id, a.approved_at, a.expires_at, a.audit_id
      FROM idem_approval_approve(p_request, p_spec_sha256, p_reason, p_actor) a
$approve$;

REVOKE ALL ON FUNCTION idem_change_approve(bigint, text, text, text) FROM PUBLIC;
