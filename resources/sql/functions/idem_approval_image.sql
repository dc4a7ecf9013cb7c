-- idem_approval_image (schema v28; the history is in git log).
-- A request of the approval mechanism (idem_approval_requests, any gated kind) as its audit
-- entries show it (before and after images).
CREATE OR REPLACE FUNCTION idem_approval_image(r idem_approval_requests)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $$
    SELECT jsonb_build_object('request_id', r.id, 'kind', r.kind, 'job_id', r.job_id, 'spec', r.spec,
                              'spec_sha256', r.spec_sha256, 'state', r.state, 'requested_login', r.requested_login,
                              'requested_role', r.requested_role, 'requested_at', r.requested_at,
                              'approvable_until', r.approvable_until, 'approved_login', r.approved_login,
                              'approved_role', r.approved_role, 'approved_at', r.approved_at,
                              'approval_expires_at', r.approval_expires_at, 'declined_login', r.declined_login,
                              'declined_at', r.declined_at, 'used_login', r.used_login, 'used_at', r.used_at,
                              'purge_run_id', r.purge_run_id)
$$;

REVOKE ALL ON FUNCTION idem_approval_image(idem_approval_requests) FROM PUBLIC;
