-- idem_storage_tables (schema v9; the history is in git log).
-- Sizes, tuples and vacuum times of the schema's Idem tables (task_idempotency* and idem_*),
-- largest first. From the catalogue and the statistics views: nothing is scanned.
CREATE OR REPLACE FUNCTION idem_storage_tables()
RETURNS TABLE (name text, table_bytes bigint, index_bytes bigint, total_bytes bigint, rows_estimate bigint,
               live_tuples bigint, dead_tuples bigint, last_vacuum timestamptz, last_autovacuum timestamptz,
               last_analyze timestamptz)
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $tables$
    SELECT c.relname::text, pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
           CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END,
           COALESCE(s.n_live_tup, 0), COALESCE(s.n_dead_tup, 0), s.last_vacuum, s.last_autovacuum,
           GREATEST(s.last_analyze, s.last_autoanalyze)
      FROM pg_class c
      LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE c.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())
       AND c.relkind IN ('r', 'p')
       AND (c.relname = 'task_idempotency' OR c.relname LIKE 'task\_idempotency\_%' OR c.relname LIKE 'idem\_%')
     ORDER BY pg_total_relation_size(c.oid) DESC, c.relname
$tables$;

REVOKE ALL ON FUNCTION idem_storage_tables() FROM PUBLIC;
