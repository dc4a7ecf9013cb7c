-- idem_events (schema v17, changed in v18, v20, v24; the history is in git log).
-- The events of [p_from, p_to) that explain a change in a chart, oldest first (idem_event_rows
-- says what they are: the audit trail's recovery actions, retention changes, purges, pauses,
-- resumes and annotations; deploys, with the worker and the old and new version, NULL on the
-- others; failovers). With p_tenant / p_operation, only the events that concern them, '*'
-- included. Since v24 each source (audit, deploy, failover) is bounded on its own, at most
-- p_limit (1 to 10000) each, its newest ones when it has more: workers' reports can never
-- crowd an operator's pause or annotation out of a window (issue 40). idem_events_omitted(same
-- arguments) counts what the bounds leave out. An audit entry, a deploy and a failover at the
-- same time come in that order.
CREATE OR REPLACE FUNCTION idem_events(p_from timestamptz, p_to timestamptz, p_tenant text DEFAULT NULL,
                                       p_operation text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (id bigint, at timestamptz, action text, tenant text, operation text, actor text, text text,
               worker text, old_version text, new_version text)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $events$
BEGIN
    PERFORM idem_events_check(p_from, p_to, p_limit);
    RETURN QUERY
    WITH e AS MATERIALIZED (SELECT * FROM idem_event_rows(p_from, p_to, p_tenant, p_operation))
    SELECT b.id, b.at, b.action, b.tenant, b.operation, b.actor, b.text, b.worker, b.old_version, b.new_version
      FROM ((SELECT * FROM e WHERE e.source = 'audit' ORDER BY e.at DESC, e.id DESC LIMIT p_limit)
            UNION ALL
            (SELECT * FROM e WHERE e.source = 'deploy' ORDER BY e.at DESC, e.id DESC LIMIT p_limit)
            UNION ALL
            (SELECT * FROM e WHERE e.source = 'failover' ORDER BY e.at DESC, e.id DESC LIMIT p_limit)) b
     ORDER BY b.at, b.action = 'deploy', b.action = 'failover', b.id;
END
$events$;

REVOKE ALL ON FUNCTION idem_events(timestamptz, timestamptz, text, text, integer) FROM PUBLIC;
