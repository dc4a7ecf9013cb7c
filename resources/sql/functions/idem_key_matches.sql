-- idem_key_matches (schema v8, changed in v13; the history is in git log).
-- Whether a key belongs to a tenant and operation (NULL: any), the first two fields of
-- tenant:operation:business_id.
CREATE OR REPLACE FUNCTION idem_key_matches(p_key text, p_tenant text, p_operation text)
RETURNS boolean
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $$
    SELECT (p_tenant IS NULL OR pg_catalog.split_part(p_key, ':'::text, 1) OPERATOR(pg_catalog.=) p_tenant)
       AND (p_operation IS NULL OR pg_catalog.split_part(p_key, ':'::text, 2) OPERATOR(pg_catalog.=) p_operation)
$$;
