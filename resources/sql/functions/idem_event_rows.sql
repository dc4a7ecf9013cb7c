-- idem_event_rows (schema v24; the history is in git log).
-- Every event of [p_from, p_to) concerning tenant / operation (NULL: any; '*' events always concern
-- them), unbounded and unordered, with the source that wrote it: 'audit' (the audit trail:
-- recovery actions, retention changes and purges, pauses and resumes, operators' annotations),
-- 'deploy' (idem_deploys, written by workers' version reports) or 'failover' (idem_timelines rows
-- after the system's first). The one definition of what an event is, for idem_events (which
-- bounds each source on its own) and idem_events_omitted (which counts what the bounds leave
-- out). Both run as their caller, so it is granted to idem_reader as they are: it reads nothing
-- a reader cannot read.
CREATE OR REPLACE FUNCTION idem_event_rows(p_from timestamptz, p_to timestamptz, p_tenant text, p_operation text)
RETURNS TABLE (source text, id bigint, at timestamptz, action text, tenant text, operation text, actor text,
               text text, worker text, old_version text, new_version text)
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $rows$
    SELECT e.source, e.id, e.at, e.action, e.tenant, e.operation, e.actor, e.reason, e.worker, e.old_version,
           e.new_version
      FROM ((SELECT 'audit'::text AS source, a.id, a.at, a.action,
                    CASE WHEN a.idempotency_key <> '' THEN split_part(a.idempotency_key, ':', 1)
                         ELSE COALESCE(a.after_image->>'tenant', a.before_image->>'tenant', '*') END AS tenant,
                    CASE WHEN a.idempotency_key <> '' THEN split_part(a.idempotency_key, ':', 2)
                         ELSE COALESCE(a.after_image->>'operation', a.before_image->>'operation', '*') END AS operation,
                    format('%s (%s)', a.db_role, a.os_user) AS actor, a.reason,
                    NULL::text AS worker, NULL::text AS old_version, NULL::text AS new_version
               FROM task_idempotency_audit a
              WHERE a.at >= p_from AND a.at < p_to)
            UNION ALL
            (SELECT 'deploy'::text, d.id, d.at, 'deploy'::text, '*'::text, '*'::text, format('%s (%s)', d.db_role, d.worker),
                    CASE WHEN d.old_version IS NULL THEN format('%s: %s (the first version reported)', d.worker, d.new_version)
                         ELSE format('%s: %s -> %s', d.worker, d.old_version, d.new_version) END
                    || CASE WHEN d.coalesced > 0
                            THEN format(' (and %s more new versions from login %s within the hour, not marked: the last %s)',
                                        d.coalesced, d.db_role, d.last_coalesced_version)
                            ELSE '' END,
                    d.worker, d.old_version, d.new_version
               FROM idem_deploys d
              WHERE d.at >= p_from AND d.at < p_to)
            UNION ALL
            (SELECT 'failover'::text, f.timeline::bigint, f.first_seen, 'failover'::text, '*'::text, '*'::text,
                    format('%s (%s)', f.db_role, f.node),
                    format('a new primary: timeline %s -> %s, at %s', f.previous_timeline, f.timeline, f.node),
                    NULL::text, NULL::text, NULL::text
               FROM idem_timelines f
              WHERE f.first_seen >= p_from AND f.first_seen < p_to AND f.previous_timeline IS NOT NULL)) e
     WHERE (p_tenant IS NULL OR e.tenant IN (p_tenant, '*'))
       AND (p_operation IS NULL OR e.operation IN (p_operation, '*'))
$rows$;

REVOKE ALL ON FUNCTION idem_event_rows(timestamptz, timestamptz, text, text) FROM PUBLIC;
