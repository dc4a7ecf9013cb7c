-- idem_redrive_check_scope (schema v25; the history is in git log).
-- The scope of a re-drivable operation or of a re-driver: a tenant ('*': every tenant) and an
-- operation, each a name as keys have them (1 to 64 visible ASCII characters without ':',
-- core/key.h; the operation not '*', which pauses read as every operation). ID003 otherwise.
CREATE OR REPLACE FUNCTION idem_redrive_check_scope(p_tenant text, p_operation text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_tenant IS NULL OR NOT (p_tenant = '*' OR p_tenant ~ '^[!-9;-~]{1,64}$') THEN
        RAISE EXCEPTION 'tenant must be ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
            COALESCE(quote_literal(left(p_tenant, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_operation IS NULL OR p_operation !~ '^[!-9;-~]{1,64}$' OR p_operation = '*' THEN
        RAISE EXCEPTION 'operation must be 1 to 64 visible ASCII characters without '':'', and not ''*'', not %',
            COALESCE(quote_literal(left(p_operation, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_redrive_check_scope(text, text) FROM PUBLIC;
