-- idem_pause_check_scope (schema v15; the history is in git log).
-- The scope of a pause: a tenant and an operation, each '*' (all) or a name as keys have them
-- (1 to 64 visible ASCII characters without ':', core/key.h). ID003 otherwise.
CREATE OR REPLACE FUNCTION idem_pause_check_scope(p_tenant text, p_operation text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_tenant IS NULL OR NOT (p_tenant = '*' OR p_tenant ~ '^[!-9;-~]{1,64}$') THEN
        RAISE EXCEPTION 'tenant must be ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
            COALESCE(quote_literal(p_tenant), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_operation IS NULL OR NOT (p_operation = '*' OR p_operation ~ '^[!-9;-~]{1,64}$') THEN
        RAISE EXCEPTION 'operation must be ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
            COALESCE(quote_literal(p_operation), 'NULL') USING ERRCODE = 'ID003';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_pause_check_scope(text, text) FROM PUBLIC;
