-- idem_exact_refresh_holder (schema v13; the history is in git log).
-- Who holds the shared exact refresh. A session that called idem_exact_refresh_begin() or
-- _finish() and kept its transaction open holds the one row's lock: nobody else can refresh
-- until it ends. The lock shows in the row's xmax and, for as long as that transaction lives,
-- as its transactionid lock in pg_locks, with its pid. NULL when nobody holds it. Readers count
-- for themselves while it is held past its due time (operations/statsrefresh.cpp, needsOwnExact).
CREATE OR REPLACE FUNCTION idem_exact_refresh_holder()
RETURNS TABLE (pid integer, db_role text, application text, since timestamptz)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $holder$
    SELECT l.pid, COALESCE(a.usename::text, ''), COALESCE(a.application_name, ''), COALESCE(a.xact_start, a.backend_start)
      FROM idem_stats_exact x
      JOIN pg_locks l ON l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                     AND l.transactionid = x.xmax
      LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.pid <> pg_backend_pid()
     LIMIT 1
$holder$;

REVOKE ALL ON FUNCTION idem_exact_refresh_holder() FROM PUBLIC;
