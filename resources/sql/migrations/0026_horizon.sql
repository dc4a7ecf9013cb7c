-- Idem schema v26: the table's health over time (issue 46 item 1). Each size sample of
-- task_idempotency (idem_storage_sample, at most one per 15 minutes) also keeps its dead rows
-- (pg_stat_user_tables.n_dead_tup) and how many vacuums had run on it (vacuum_count +
-- autovacuum_count), so the Storage page and `idemctl storage` show dead rows over time and the
-- vacuums that removed nothing (a sample after a vacuum with as many dead rows as before it: the
-- rows died after the oldest snapshot still in use). NULL in the samples taken before v26.
-- Who holds that snapshot: idem_horizon_holders(), in functions/idem_horizon_holders.sql.
ALTER TABLE idem_storage_samples
    ADD COLUMN dead_tuples BIGINT,
    ADD COLUMN vacuums     BIGINT;

-- idem_storage_sample(): changed in functions/idem_storage_sample.sql
-- idem_horizon_holders(integer): defined in functions/idem_horizon_holders.sql
