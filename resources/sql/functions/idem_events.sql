-- idem_events (schema v17; the history is in git log).
-- The audited events of [p_from, p_to) that explain a change in a chart, oldest first, at most
-- p_limit (1 to 10000): recovery actions, retention changes and purges, pauses and resumes, and
-- operators' annotations, each with the tenant and operation it concerns ('*' for all: a recovery
-- action's are its key's) and its text (the entry's reason). With p_tenant / p_operation, only the
-- events that concern them, '*' included. Reads the audit trail through its primary key order.
CREATE OR REPLACE FUNCTION idem_events(p_from timestamptz, p_to timestamptz, p_tenant text DEFAULT NULL,
                                       p_operation text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (id bigint, at timestamptz, action text, tenant text, operation text, actor text, text text)
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
    SELECT e.id, e.at, e.action, e.tenant, e.operation, e.actor, e.reason
      FROM (SELECT a.id, a.at, a.action,
                   CASE WHEN a.idempotency_key <> '' THEN split_part(a.idempotency_key, ':', 1)
                        ELSE COALESCE(a.after_image->>'tenant', a.before_image->>'tenant', '*') END AS tenant,
                   CASE WHEN a.idempotency_key <> '' THEN split_part(a.idempotency_key, ':', 2)
                        ELSE COALESCE(a.after_image->>'operation', a.before_image->>'operation', '*') END AS operation,
                   format('%s (%s)', a.db_role, a.os_user) AS actor, a.reason
              FROM task_idempotency_audit a
             WHERE a.at >= p_from AND a.at < p_to) e
     WHERE (p_tenant IS NULL OR e.tenant IN (p_tenant, '*'))
       AND (p_operation IS NULL OR e.operation IN (p_operation, '*'))
     ORDER BY e.at, e.id
     LIMIT p_limit;
END
$events$;

REVOKE ALL ON FUNCTION idem_events(timestamptz, timestamptz, text, text, integer) FROM PUBLIC;
