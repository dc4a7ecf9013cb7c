-- idem_has_right (schema v21; the history is in git log).
-- Whether role p_role holds right p_right (idem_right_role): it is a member of its role with
-- its privileges (pg_has_role USAGE, as an inherited grant works), or of the owner of the Idem
-- tables (who may do everything; a superuser is a member of every role). A role that does not
-- exist (dropped since it started a job) holds nothing; with the right's role missing
-- (migrate --no-roles) only the owner's members hold it.
CREATE OR REPLACE FUNCTION idem_has_right(p_role name, p_right text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $$
DECLARE
    v_right name := idem_right_role(p_right);
    v_owner oid;
BEGIN
    IF p_role IS NULL OR NOT EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = p_role) THEN
        RETURN false;
    END IF;
    SELECT c.relowner INTO v_owner FROM pg_catalog.pg_class c WHERE c.oid = 'task_idempotency'::regclass;
    IF pg_catalog.pg_has_role(p_role, v_owner, 'USAGE') THEN
        RETURN true;
    END IF;
    RETURN EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = v_right)
           AND pg_catalog.pg_has_role(p_role, v_right, 'USAGE');
END
$$;

REVOKE ALL ON FUNCTION idem_has_right(name, text) FROM PUBLIC;
