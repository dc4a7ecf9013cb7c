-- idem_rights (schema v21, changed in v25; the history is in git log).
-- What the caller (idem_caller: the role taken with SET ROLE, else the login) may do: one row per
-- right (read, requeue, release, fail, pause, purge, approve, v25 read_requests) with the role that grants it and
-- whether the caller holds it, plus the caller's login and role. For the console, which greys out
-- what it may not do, and idemctl rights. Changes nothing.
CREATE OR REPLACE FUNCTION idem_rights()
RETURNS TABLE (login name, caller name, right_name text, grant_role name, granted boolean)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
    SELECT session_user, idem_caller(), r.right_name, idem_right_role(r.right_name),
           idem_has_right(idem_caller(), r.right_name)
      FROM unnest(ARRAY['read', 'requeue', 'release', 'fail', 'pause', 'purge', 'approve', 'read_requests']) WITH ORDINALITY
           AS r(right_name, n)
     ORDER BY r.n
$$;

REVOKE ALL ON FUNCTION idem_rights() FROM PUBLIC;
