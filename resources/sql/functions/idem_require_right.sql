-- idem_require_right (schema v21; the history is in git log).
-- Raises 42501 (insufficient_privilege), in words with the GRANT that would allow it, unless
-- role p_role (default: the caller, idem_caller) holds right p_right; p_doing says what was
-- refused ("start a requeue job").
CREATE OR REPLACE FUNCTION idem_require_right(p_right text, p_doing text, p_role name DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $$
DECLARE
    v_role name := COALESCE(p_role, idem_caller());
BEGIN
    IF NOT idem_has_right(v_role, p_right) THEN
        RAISE EXCEPTION 'role % may not %: that needs the % right (role %)', v_role, p_doing, p_right,
                        idem_right_role(p_right)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('An administrator grants it with: GRANT %I TO %I;', idem_right_role(p_right), v_role);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION idem_require_right(text, text, name) FROM PUBLIC;
