-- idem_redrive_registration (schema v25; the history is in git log).
-- The registration that makes keys of tenant p_tenant and operation p_operation re-drivable: the
-- tenant's own, else the operation's for every tenant ('*'); no row when there is none.
CREATE OR REPLACE FUNCTION idem_redrive_registration(p_tenant text, p_operation text)
RETURNS SETOF idem_redrive_operations
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $registration$
    SELECT o.* FROM idem_redrive_operations o
     WHERE o.operation = p_operation AND o.tenant IN (p_tenant, '*')
     ORDER BY o.tenant = '*'
     LIMIT 1
$registration$;

REVOKE ALL ON FUNCTION idem_redrive_registration(text, text) FROM PUBLIC;
