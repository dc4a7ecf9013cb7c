-- idem_pause_covering (schema v15; the history is in git log).
-- The pause in force that covers key p_key (tenant and operation are its first two ':' fields, as
-- idem_key_matches reads them), the longest-lasting first; no row when none does. One probe of
-- idem_pauses' primary key (the four pairs tenant|'*' x operation|'*'), by the server's clock.
-- Named with @extschema@ and pg_catalog, without SET search_path, so it stays inlinable: claim()
-- runs it on every acquisition and takeover (bench/README.md, "Session 10").
CREATE OR REPLACE FUNCTION idem_pause_covering(p_key text)
RETURNS SETOF @extschema@.idem_pauses
LANGUAGE sql
STABLE
AS $covering$
    SELECT p.*
      FROM @extschema@.idem_pauses p
     WHERE p.tenant OPERATOR(pg_catalog.=) ANY (ARRAY[pg_catalog.split_part(p_key, ':'::text, 1), '*'::text])
       AND p.operation OPERATOR(pg_catalog.=) ANY (ARRAY[pg_catalog.split_part(p_key, ':'::text, 2), '*'::text])
       AND (p.until IS NULL OR p.until OPERATOR(pg_catalog.>) pg_catalog.now())
     ORDER BY p.until DESC NULLS FIRST
     LIMIT 1
$covering$;

REVOKE ALL ON FUNCTION idem_pause_covering(text) FROM PUBLIC;
