-- idem_redrive_status (schema v25, changed in v27; the history is in git log).
-- Who can re-execute what: one row per re-drivable operation (tenant '*': registered for every
-- tenant) matching p_tenant and p_operation (NULL: any), with its online re-drivers (seen within
-- 30 s: their number, names, the latest last_seen) and its open re-drive items (queued, running).
-- With both named, exactly one row for that tenant and operation: registered false (and no
-- workers) when neither it nor '*' of the operation is registered. For "3 workers of charge are
-- online" / "no re-driver for ship is online: the key waits for its client".
-- v27: last_seen is the latest of every re-driver of the registration, online or not (before v27:
-- of the online ones, NULL when none was), and redrivers lists each of them, online first, then
-- the most recently seen, at most 50: [{"worker", "version", "last_seen" (ISO 8601 UTC),
-- "seconds_ago", "online"}], so an operator reads "w1 was last seen 3 min ago" of one that is not.
CREATE OR REPLACE FUNCTION idem_redrive_status(p_tenant text DEFAULT NULL, p_operation text DEFAULT NULL)
RETURNS TABLE (tenant text, operation text, registered boolean, online_workers integer, workers text[],
               last_seen timestamptz, queued bigint, running bigint, redrivers jsonb)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $status$
#variable_conflict use_column
BEGIN
    IF p_tenant IS NOT NULL AND NOT (p_tenant = '*' OR p_tenant ~ '^[!-9;-~]{1,64}$') THEN
        RAISE EXCEPTION 'tenant must be NULL, ''*'' or 1 to 64 visible ASCII characters without '':'', not %',
            quote_literal(left(p_tenant, 80)) USING ERRCODE = 'ID003';
    END IF;
    IF p_operation IS NOT NULL AND p_operation !~ '^[!-9;-~]{1,64}$' THEN
        RAISE EXCEPTION 'operation must be NULL or 1 to 64 visible ASCII characters without '':'', not %',
            quote_literal(left(p_operation, 80)) USING ERRCODE = 'ID003';
    END IF;
    IF p_tenant IS NOT NULL AND p_tenant <> '*' AND p_operation IS NOT NULL THEN
        RETURN QUERY
        SELECT p_tenant, p_operation,
               EXISTS (SELECT FROM idem_redrive_operations o WHERE o.operation = p_operation AND o.tenant IN (p_tenant, '*')),
               w.n::integer, w.names, w.seen,
               (SELECT count(*) FROM idem_redrive_items i WHERE i.operation = p_operation AND i.tenant = p_tenant
                   AND i.state = 'queued'),
               (SELECT count(*) FROM idem_redrive_items i WHERE i.operation = p_operation AND i.tenant = p_tenant
                   AND i.state = 'running'),
               w.list
          FROM (SELECT count(*) FILTER (WHERE d.last_seen > now() - interval '30 seconds') AS n,
                       COALESCE(array_agg(DISTINCT d.worker ORDER BY d.worker)
                                    FILTER (WHERE d.last_seen > now() - interval '30 seconds'), '{}') AS names,
                       max(d.last_seen) AS seen,
                       idem_redrivers_seen(array_agg(d)) AS list
                  FROM idem_redrivers d
                 WHERE d.operation = p_operation AND d.tenant IN (p_tenant, '*')
                   AND EXISTS (SELECT FROM idem_redrive_operations o WHERE o.operation = p_operation
                                  AND o.tenant IN (p_tenant, '*'))) w;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT o.tenant, o.operation, true,
           w.n::integer, w.names, w.seen,
           (SELECT count(*) FROM idem_redrive_items i WHERE i.operation = o.operation
               AND (o.tenant = '*' OR i.tenant = o.tenant) AND i.state = 'queued'),
           (SELECT count(*) FROM idem_redrive_items i WHERE i.operation = o.operation
               AND (o.tenant = '*' OR i.tenant = o.tenant) AND i.state = 'running'),
           w.list
      FROM idem_redrive_operations o,
           LATERAL (SELECT count(*) FILTER (WHERE d.last_seen > now() - interval '30 seconds') AS n,
                           COALESCE(array_agg(d.worker ORDER BY d.worker)
                                        FILTER (WHERE d.last_seen > now() - interval '30 seconds'), '{}') AS names,
                           max(d.last_seen) AS seen,
                           idem_redrivers_seen(array_agg(d)) AS list
                      FROM idem_redrivers d
                     WHERE d.operation = o.operation AND d.tenant = o.tenant) w
     WHERE (p_tenant IS NULL OR o.tenant = p_tenant) AND (p_operation IS NULL OR o.operation = p_operation)
     ORDER BY o.operation, o.tenant;
END
$status$;

REVOKE ALL ON FUNCTION idem_redrive_status(text, text) FROM PUBLIC;
