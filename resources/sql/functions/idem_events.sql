-- idem_events (schema v17, changed in v18 and v20; the history is in git log).
-- The events of [p_from, p_to) that explain a change in a chart, oldest first, at most p_limit
-- (1 to 10000): from the audit trail, recovery actions, retention changes and purges, pauses and
-- resumes, and operators' annotations, each with the tenant and operation it concerns ('*' for
-- all: a recovery action's are its key's), actor and text (the entry's reason); and (v18) deploys
-- (idem_deploys, action 'deploy', id the deploy's own, not an audit entry's), which concern every
-- tenant and operation, with the worker that reported the new version, the old and the new
-- version (NULL on the other events), the reporting role and the worker as actor, and a text that
-- says it; and (v20) failovers (idem_timelines rows after the system's first, action 'failover',
-- id the row's timeline), which concern every tenant and operation, with the role that first
-- noticed the new timeline and the primary's address as actor, and a text that names both
-- timelines. With p_tenant / p_operation, only the events that concern them, '*' included. Reads
-- each table through its index on the time; an audit entry, a deploy and a failover at the same time
-- come in that order.
CREATE OR REPLACE FUNCTION idem_events(p_from timestamptz, p_to timestamptz, p_tenant text DEFAULT NULL,
                                       p_operation text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (id bigint, at timestamptz, action text, tenant text, operation text, actor text, text text,
               worker text, old_version text, new_version text)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $events$
BEGIN
    IF p_from IS NULL OR p_to IS NULL OR p_to < p_from OR p_to - p_from > interval '31 days' THEN
        RAISE EXCEPTION 'a window needs a start and an end at most 31 days after it, not % to %', p_from, p_to
            USING ERRCODE = 'ID003';
    END IF;
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'limit must be 1 to 10000, not %', p_limit USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    SELECT e.id, e.at, e.action, e.tenant, e.operation, e.actor, e.reason, e.worker, e.old_version, e.new_version
      FROM ((SELECT a.id, a.at, a.action,
                    CASE WHEN a.idempotency_key <> '' THEN split_part(a.idempotency_key, ':', 1)
                         ELSE COALESCE(a.after_image->>'tenant', a.before_image->>'tenant', '*') END AS tenant,
                    CASE WHEN a.idempotency_key <> '' THEN split_part(a.idempotency_key, ':', 2)
                         ELSE COALESCE(a.after_image->>'operation', a.before_image->>'operation', '*') END AS operation,
                    format('%s (%s)', a.db_role, a.os_user) AS actor, a.reason,
                    NULL::text AS worker, NULL::text AS old_version, NULL::text AS new_version
               FROM task_idempotency_audit a
              WHERE a.at >= p_from AND a.at < p_to)
            UNION ALL
            (SELECT d.id, d.at, 'deploy'::text, '*'::text, '*'::text, format('%s (%s)', d.db_role, d.worker),
                    CASE WHEN d.old_version IS NULL THEN format('%s: %s (the first version reported)', d.worker, d.new_version)
                         ELSE format('%s: %s -> %s', d.worker, d.old_version, d.new_version) END,
                    d.worker, d.old_version, d.new_version
               FROM idem_deploys d
              WHERE d.at >= p_from AND d.at < p_to)
            UNION ALL
            (SELECT f.timeline::bigint, f.first_seen, 'failover'::text, '*'::text, '*'::text,
                    format('%s (%s)', f.db_role, f.node),
                    format('a new primary: timeline %s -> %s, at %s', f.previous_timeline, f.timeline, f.node),
                    NULL::text, NULL::text, NULL::text
               FROM idem_timelines f
              WHERE f.first_seen >= p_from AND f.first_seen < p_to AND f.previous_timeline IS NOT NULL)) e
     WHERE (p_tenant IS NULL OR e.tenant IN (p_tenant, '*'))
       AND (p_operation IS NULL OR e.operation IN (p_operation, '*'))
     ORDER BY e.at, e.action = 'deploy', e.action = 'failover', e.id
     LIMIT p_limit;
END
$events$;

REVOKE ALL ON FUNCTION idem_events(timestamptz, timestamptz, text, text, integer) FROM PUBLIC;
