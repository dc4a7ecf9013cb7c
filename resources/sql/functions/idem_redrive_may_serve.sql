-- idem_redrive_may_serve (schema v25; the history is in git log).
-- Whether the calling login (session_user) may act for a re-drivable operation registered by
-- login p_registered_by: it is that login or a member of it, or a member of the owner of the Idem
-- tables. So a worker login of another operation never takes (and reads) its stored requests.
CREATE OR REPLACE FUNCTION idem_redrive_may_serve(p_registered_by text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $may$
DECLARE
    v_owner oid;
BEGIN
    IF p_registered_by = session_user THEN
        RETURN true;
    END IF;
    SELECT c.relowner INTO v_owner FROM pg_catalog.pg_class c WHERE c.oid = 'task_idempotency'::regclass;
    IF pg_catalog.pg_has_role(session_user, v_owner, 'MEMBER') THEN
        RETURN true;
    END IF;
    RETURN EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = p_registered_by)
           AND pg_catalog.pg_has_role(session_user, p_registered_by::name, 'MEMBER');
END
$may$;

REVOKE ALL ON FUNCTION idem_redrive_may_serve(text) FROM PUBLIC;
