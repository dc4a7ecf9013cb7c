-- idem_pause_covering (schema v15; the history is in git log).
-- The pause in force that covers a key of tenant p_tenant and operation p_operation (the key's
-- first two ':' fields, as idem_key_matches reads them), the longest-lasting first; no row when
-- none does, by the server's clock. claim() runs it on every acquisition and takeover, with the
-- two names already split off into variables: as plain equalities against them (no array, no
-- split_part per row) the probe stays a few comparisons per pause row however the plan reads the
-- tiny table (bench/README.md, "Session 10"). Named with @extschema@ and pg_catalog, without SET
-- search_path, so it stays inlinable.
CREATE OR REPLACE FUNCTION idem_pause_covering(p_tenant text, p_operation text)
RETURNS SETOF @extschema@.idem_pauses
LANGUAGE sql
STABLE
AS $covering$
    SELECT p.*
      FROM @extschema@.idem_pauses p
     WHERE (p.tenant OPERATOR(pg_catalog.=) p_tenant OR p.tenant OPERATOR(pg_catalog.=) '*'::text)
       AND (p.operation OPERATOR(pg_catalog.=) p_operation OR p.operation OPERATOR(pg_catalog.=) '*'::text)
       AND (p.until IS NULL OR p.until OPERATOR(pg_catalog.>) pg_catalog.now())
     ORDER BY p.until DESC NULLS FIRST
     LIMIT 1
$covering$;

REVOKE ALL ON FUNCTION idem_pause_covering(text, text) FROM PUBLIC;
