-- idem_ramp_bucket (schema v33; the history is in git log).
-- A key's place in a ramp: 0 to 9999, from the first 32 bits of the MD5 of the whole key (tenant,
-- operation and business id as the key carries them), taken as an unsigned number modulo 10000.
-- A ramp step of P % admits exactly the keys whose bucket is below P * 100, so a key admitted by
-- one step is admitted by every later one, and every server, version and client computes the same
-- set (md5 is PostgreSQL's own and fixed; hashtext is not promised to stay).
CREATE OR REPLACE FUNCTION idem_ramp_bucket(p_key text)
RETURNS integer
LANGUAGE sql
IMMUTABLE
STRICT
AS $bucket$
    SELECT (('x' OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.md5(p_key), 1, 8))::bit(32)::bigint
            OPERATOR(pg_catalog.%) 10000)::integer
$bucket$;

REVOKE ALL ON FUNCTION idem_ramp_bucket(text) FROM PUBLIC;
