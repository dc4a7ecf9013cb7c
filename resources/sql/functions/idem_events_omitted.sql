-- idem_events_omitted (schema v24; the history is in git log).
-- What idem_events(the same arguments) leaves out: for each source (audit, deploy, failover, in
-- that order, one row each), how many of its events of the window and scope are older than the
-- p_limit newest it lists. A reader calls it when a source came back full, and says the number
-- (idemctl events, the console's charts).
CREATE OR REPLACE FUNCTION idem_events_omitted(p_from timestamptz, p_to timestamptz, p_tenant text DEFAULT NULL,
                                               p_operation text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (source text, omitted bigint)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $omitted$
BEGIN
    PERFORM idem_events_check(p_from, p_to, p_limit);
    RETURN QUERY
    SELECT s.source, greatest(count(e.id) - p_limit, 0)
      FROM (VALUES (1, 'audit'), (2, 'deploy'), (3, 'failover')) s(n, source)
      LEFT JOIN idem_event_rows(p_from, p_to, p_tenant, p_operation) e ON e.source = s.source
     GROUP BY s.n, s.source
     ORDER BY s.n;
END
$omitted$;

REVOKE ALL ON FUNCTION idem_events_omitted(timestamptz, timestamptz, text, text, integer) FROM PUBLIC;
