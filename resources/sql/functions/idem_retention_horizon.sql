-- idem_retention_horizon (schema v9; the history is in git log).
-- The horizon that applies to an operation: its own row, else '*'.
CREATE OR REPLACE FUNCTION idem_retention_horizon(p_operation text)
RETURNS interval
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $h$
    SELECT COALESCE((SELECT p.horizon FROM idem_retention_policy p WHERE p.operation = p_operation),
                    (SELECT p.horizon FROM idem_retention_policy p WHERE p.operation = '*'))
$h$;

REVOKE ALL ON FUNCTION idem_retention_horizon(text) FROM PUBLIC;
