-- idem_pause_named (schema v15; the history is in git log).
-- Whether some pause, in force or expired, names tenant p_tenant (or '*') with operation
-- p_operation (or '*'): the first, cheap half of claim()'s pause check, over idem_pause_tenants'
-- few narrow rows; only when it says yes does claim() read idem_pauses (idem_pause_covering).
-- Named with @extschema@ and pg_catalog, without SET search_path, so it stays inlinable.
CREATE OR REPLACE FUNCTION idem_pause_named(p_tenant text, p_operation text)
RETURNS boolean
LANGUAGE sql
STABLE
AS $named$
    SELECT EXISTS (
        SELECT FROM @extschema@.idem_pause_tenants s
         WHERE (s.tenant OPERATOR(pg_catalog.=) p_tenant OR s.tenant OPERATOR(pg_catalog.=) '*'::text)
           AND (p_operation OPERATOR(pg_catalog.=) ANY (s.operations) OR '*'::text OPERATOR(pg_catalog.=) ANY (s.operations)))
$named$;

REVOKE ALL ON FUNCTION idem_pause_named(text, text) FROM PUBLIC;
