-- idem_right_role (schema v21, changed in v25; the history is in git log).
-- The NOLOGIN role that grants right p_right: read idem_reader; requeue, release, fail, pause,
-- purge (purge and retention), approve and (v25) read_requests idem_may_<right>
-- (resources/sql/roles.sql).
-- ID003 for any other name.
CREATE OR REPLACE FUNCTION idem_right_role(p_right text)
RETURNS name
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $$
BEGIN
    IF p_right IS NULL OR p_right NOT IN ('read', 'requeue', 'release', 'fail', 'pause', 'purge', 'approve',
                                          'read_requests') THEN
        RAISE EXCEPTION 'a right is read, requeue, release, fail, pause, purge, approve or read_requests, not %',
            COALESCE(quote_literal(left(p_right, 64)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    RETURN CASE p_right WHEN 'read' THEN 'idem_reader' ELSE 'idem_may_' || p_right END;
END
$$;

REVOKE ALL ON FUNCTION idem_right_role(text) FROM PUBLIC;
