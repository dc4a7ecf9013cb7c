-- idem_redrivers_seen (schema v27; the history is in git log).
-- idem_redrive_status's list of re-drivers: p_rows (rows of idem_redrivers; NULL: none) as a JSON
-- array, online ones (seen within 30 s) first, then the most recently seen, at most 50:
-- [{"worker", "version", "last_seen" (ISO 8601 UTC with microseconds), "seconds_ago", "online"}].
-- Called by idem_redrive_status only (no grant).
CREATE OR REPLACE FUNCTION idem_redrivers_seen(p_rows idem_redrivers[])
RETURNS jsonb
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $seen$
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'worker', r.worker, 'version', r.version,
               'last_seen', to_char(r.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
               'seconds_ago', GREATEST(0, floor(extract(epoch FROM now() - r.last_seen)))::bigint,
               'online', r.last_seen > now() - interval '30 seconds')
               ORDER BY r.last_seen > now() - interval '30 seconds' DESC, r.last_seen DESC, r.worker), '[]'::jsonb)
      FROM (SELECT x.* FROM unnest(p_rows) x
             ORDER BY x.last_seen > now() - interval '30 seconds' DESC, x.last_seen DESC, x.worker
             LIMIT 50) r
$seen$;

REVOKE ALL ON FUNCTION idem_redrivers_seen(idem_redrivers[]) FROM PUBLIC;
