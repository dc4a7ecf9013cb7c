-- idem_horizon_holders (schema v26; the history is in git log).
-- Who holds back the database's transaction horizon, oldest first, at most p_limit (1..50) rows:
-- VACUUM cannot remove a row version that died after the oldest snapshot still in use, so a
-- transaction left open (an analytics query, a REPEATABLE READ report, an idle in transaction
-- session), a replication slot, a standby's hot_standby_feedback or a prepared transaction keeps
-- the Idem tables' dead rows from being removed while the claims keep making more.
--
-- kind: 'session' (a backend of this database: its backend_xmin or, for a writer, its xid),
-- 'prepared' (pg_prepared_xacts of this database), 'slot' (a replication slot's xmin),
-- 'slot_catalog' (a slot's catalog_xmin: it holds back the system catalogues only), 'standby' (a
-- walsender's backend_xmin: a standby's hot_standby_feedback). xid_age: age() of what it holds, in
-- transaction ids; age_seconds: since its transaction (or the prepared one) began, NULL for a
-- slot or a standby, whose snapshots carry no time.
--
-- SECURITY DEFINER so that idem_reader sees who holds it: pg_stat_activity shows another role's
-- backend_xmin only to pg_read_all_stats (this function's owner should have it; a superuser does).
-- What it adds for every caller: pid, role, application, backend type, state and its times. The
-- client address and the query text stay what pg_stat_activity would show the caller itself:
-- NULL (query_hidden) unless the login (session_user) has pg_read_all_stats or is the holder's
-- role. Text is bounded (200 characters of query) and its control characters replaced by spaces.
CREATE OR REPLACE FUNCTION idem_horizon_holders(p_limit integer)
RETURNS TABLE (kind text, pid integer, role text, application text, client text, state text, backend_type text,
               xact_start timestamptz, query_start timestamptz, xid_age integer, age_seconds double precision,
               name text, query text, query_hidden boolean)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $holders$
DECLARE
    v_all boolean := pg_has_role(session_user, 'pg_read_all_stats', 'USAGE');
BEGIN
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 50 THEN
        RAISE EXCEPTION 'limit must be 1 to 50, not %', COALESCE(p_limit::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    WITH h AS (
        SELECT 'session'::text AS kind, a.pid, a.usename::text AS role, a.application_name::text AS application,
               CASE WHEN a.client_addr IS NULL THEN 'local' ELSE host(a.client_addr) || ':' || a.client_port END AS client,
               a.state::text AS state, a.backend_type::text AS backend_type, a.xact_start, a.query_start,
               GREATEST(age(a.backend_xmin), age(a.backend_xid)) AS xid_age,
               extract(epoch FROM now() - a.xact_start)::float8 AS age_seconds, NULL::text AS name,
               a.query::text AS query,
               (v_all OR (a.usesysid IS NOT NULL AND pg_has_role(session_user, a.usesysid, 'USAGE'))) AS visible
          FROM pg_stat_activity a
         WHERE a.datid = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
           AND (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)
           AND a.pid <> pg_backend_pid()
           AND a.backend_type NOT IN ('walsender', 'autovacuum worker')
        UNION ALL
        SELECT 'prepared', NULL, p.owner::text, NULL, NULL, 'prepared', NULL, p.prepared, NULL, age(p.transaction),
               extract(epoch FROM now() - p.prepared)::float8, p.gid, NULL, true
          FROM pg_prepared_xacts p
         WHERE p.database = current_database()
        UNION ALL
        SELECT 'slot', s.active_pid, NULL, NULL, NULL, CASE WHEN s.active THEN 'active' ELSE 'inactive' END,
               s.slot_type, NULL, NULL, age(s.xmin), NULL, s.slot_name::text, NULL, true
          FROM pg_replication_slots s
         WHERE s.xmin IS NOT NULL AND (s.database IS NULL OR s.database = current_database())
        UNION ALL
        SELECT 'slot_catalog', s.active_pid, NULL, NULL, NULL, CASE WHEN s.active THEN 'active' ELSE 'inactive' END,
               s.slot_type, NULL, NULL, age(s.catalog_xmin), NULL, s.slot_name::text, NULL, true
          FROM pg_replication_slots s
         WHERE s.catalog_xmin IS NOT NULL AND (s.database IS NULL OR s.database = current_database())
        UNION ALL
        SELECT 'standby', r.pid, r.usename::text, r.application_name::text,
               CASE WHEN r.client_addr IS NULL THEN 'local' ELSE host(r.client_addr) || ':' || r.client_port END,
               r.state::text, 'walsender', NULL, NULL, age(r.backend_xmin), NULL, NULL, NULL,
               (v_all OR (r.usesysid IS NOT NULL AND pg_has_role(session_user, r.usesysid, 'USAGE')))
          FROM pg_stat_replication r
         WHERE r.backend_xmin IS NOT NULL
    )
    SELECT h.kind, h.pid, left(h.role, 64), regexp_replace(left(h.application, 64), '[[:cntrl:]]', ' ', 'g'),
           CASE WHEN h.visible THEN h.client END, h.state, h.backend_type, h.xact_start, h.query_start, h.xid_age,
           h.age_seconds, regexp_replace(left(h.name, 200), '[[:cntrl:]]', ' ', 'g'),
           CASE WHEN h.visible THEN regexp_replace(left(h.query, 200), '[[:cntrl:]]', ' ', 'g') END,
           NOT h.visible AND h.kind IN ('session', 'standby')
      FROM h
     ORDER BY h.xid_age DESC NULLS LAST, h.age_seconds DESC NULLS LAST, h.pid
     LIMIT p_limit;
END
$holders$;

REVOKE ALL ON FUNCTION idem_horizon_holders(integer) FROM PUBLIC;
