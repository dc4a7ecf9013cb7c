-- idem_rights (schema v21, changed in v25 and v29; the history is in git log).
-- What the caller (idem_caller: the role taken with SET ROLE, else the login) may do: one row per
-- right of the one list (idem_right_list), in its order, with the role that grants it, whether
-- the caller holds it and what it allows, plus the caller's login and role. For the console,
-- which greys out what it may not do, and idemctl rights. Changes nothing.
CREATE OR REPLACE FUNCTION idem_rights()
RETURNS TABLE (login name, caller name, right_name text, grant_role name, granted boolean, description text)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
    SELECT session_user, idem_caller(), l.right_name, l.grant_role, idem_has_right(idem_caller(), l.right_name),
           l.description
      FROM idem_right_list() l
     ORDER BY l.ordinal
$$;

REVOKE ALL ON FUNCTION idem_rights() FROM PUBLIC;
