-- idem_caller (schema v21; the history is in git log).
-- The role a call acts as: the role the session took with SET ROLE, else its login
-- (session_user). Inside a SECURITY DEFINER function current_user is the function's owner, but
-- the setting "role" is still the caller's, so the definer functions check the caller's rights
-- against this. A login that took a role with fewer rights acts with those; a superuser's
-- SET SESSION AUTHORIZATION changes the login.
CREATE OR REPLACE FUNCTION idem_caller()
RETURNS name
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $$
    SELECT CASE WHEN pg_catalog.current_setting('role') = 'none' THEN session_user
                ELSE pg_catalog.current_setting('role')::name END
$$;

REVOKE ALL ON FUNCTION idem_caller() FROM PUBLIC;
