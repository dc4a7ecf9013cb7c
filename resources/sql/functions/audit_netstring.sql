-- audit_netstring (schema v3; the history is in git log).
-- One chain field: a netstring of its UTF-8 bytes ("<byte length>:<bytes>,").
CREATE OR REPLACE FUNCTION audit_netstring(p text)
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT
SET search_path FROM CURRENT
AS $$
    SELECT convert_to(octet_length(convert_to(p, 'UTF8'))::text || ':', 'UTF8') || convert_to(p, 'UTF8')
           || convert_to(',', 'UTF8')
$$;

REVOKE ALL ON FUNCTION audit_netstring(text) FROM PUBLIC;
