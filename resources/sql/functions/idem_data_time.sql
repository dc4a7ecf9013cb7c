-- idem_data_time (issue #29, with schema v21; the history is in git log).
-- The time the data a session reads is as of, at which lease expiry and long-unfinished are judged
-- (idem_live_stats, idem_exact_stats and the stats reading's exact path): now() on a primary; on
-- a standby the time of its replay point (the commit time of the last transaction it replayed, by
-- the primary's clock), never later than now(). A standby that streams and has replayed all it
-- received is as current as its primary: now(), as before anything was replayed. A lease that ran
-- out after the replay point was live there; judged by the standby's clock it would look expired,
-- and replication lag alone would turn the expired figure red. The stats reading's replication
-- lag (operations/statssql.cpp) is zero exactly when this is now().
-- A SQL function with every name qualified, so callers that are SQL functions stay inlinable.
CREATE OR REPLACE FUNCTION idem_data_time()
RETURNS timestamptz
LANGUAGE sql
STABLE
AS $data_time$
    SELECT CASE WHEN pg_catalog.pg_is_in_recovery()
                 AND NOT coalesce(pg_catalog.pg_last_wal_replay_lsn() OPERATOR(pg_catalog.>=)
                                      pg_catalog.pg_last_wal_receive_lsn()
                                  AND EXISTS (SELECT FROM pg_catalog.pg_stat_wal_receiver), false)
                THEN LEAST(pg_catalog.now(), coalesce(pg_catalog.pg_last_xact_replay_timestamp(), pg_catalog.now()))
                ELSE pg_catalog.now() END
$data_time$;

REVOKE ALL ON FUNCTION idem_data_time() FROM PUBLIC;
