-- idem_right_role (schema v21, changed in v25 and v29; the history is in git log).
-- The NOLOGIN role that grants right p_right, as the one list of rights has it (idem_right_list:
-- idem_reader for read, idem_may_<right> for the others). ID003 for NULL, ID002 for a name that
-- is no right (the message lists the rights).
CREATE OR REPLACE FUNCTION idem_right_role(p_right text)
RETURNS name
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $$
DECLARE
    v_role name;
    v_names text[];
BEGIN
    IF p_right IS NULL THEN
        RAISE EXCEPTION 'name a right, not NULL' USING ERRCODE = 'ID003';
    END IF;
    SELECT l.grant_role INTO v_role FROM idem_right_list() l WHERE l.right_name = p_right;
    IF v_role IS NULL THEN
        v_names := ARRAY(SELECT l.right_name FROM idem_right_list() l ORDER BY l.ordinal);
        RAISE EXCEPTION 'a right is % or %, not %', array_to_string(v_names[1:cardinality(v_names) - 1], ', '),
            v_names[cardinality(v_names)], quote_literal(left(p_right, 64)) USING ERRCODE = 'ID002';
    END IF;
    RETURN v_role;
END
$$;

REVOKE ALL ON FUNCTION idem_right_role(text) FROM PUBLIC;
