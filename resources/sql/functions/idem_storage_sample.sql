-- idem_storage_sample (schema v9; the history is in git log).
-- Takes a sample if this bucket has none (a primary, read-write, READ COMMITTED), and removes
-- samples older than the counters' expire_after. Returns whether it took one. Readers may call
-- it: it writes at most one row per 15 minutes, whoever calls it how often. Since v26 a sample
-- also keeps the table's dead rows and the vacuums run on it so far (the statistics views').
CREATE OR REPLACE FUNCTION idem_storage_sample()
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '1s'
AS $sample$
DECLARE
    v_bucket timestamptz := to_timestamp(floor(extract(epoch FROM now()) / 900) * 900);
    v_n integer;
BEGIN
    IF pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'
       OR current_setting('transaction_isolation') <> 'read committed'
       OR EXISTS (SELECT FROM idem_storage_samples s WHERE s.bucket = v_bucket) THEN
        RETURN false;
    END IF;
    INSERT INTO idem_storage_samples (bucket, taken_at, table_bytes, index_bytes, rows_estimate, dead_tuples, vacuums)
    SELECT v_bucket, now(), pg_table_size(c.oid), pg_indexes_size(c.oid),
           CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END,
           s.n_dead_tup, s.vacuum_count + s.autovacuum_count
      FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE c.oid = 'task_idempotency'::regclass
    ON CONFLICT (bucket) DO NOTHING;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    DELETE FROM idem_storage_samples s
     WHERE s.bucket < now() - (SELECT p.expire_after FROM idem_counters_policy p);
    RETURN v_n > 0;
END
$sample$;

REVOKE ALL ON FUNCTION idem_storage_sample() FROM PUBLIC;
