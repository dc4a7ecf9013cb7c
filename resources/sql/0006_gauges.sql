-- Idem schema v6: per-status counts kept up to date as rows change ("gauges").
--
-- Until v5 every console tick counted the unfinished rows (an index-only scan of
-- task_idempotency_unfinished_idx): its cost followed the unfinished set, 300k rows at a 10M
-- table with 3 % unfinished, and twenty consoles polling once a second took a large share of
-- the database's CPU (bench/README.md). Now the status counts are maintained by triggers in the
-- same transaction as the row change, so they are exact in every snapshot (a REPEATABLE READ
-- export sees the gauges and the rows at the same instant), and the tick reads 64 small rows
-- plus the few sets that move with time (live leases, recently created rows): core/stats.cpp.
--
-- Contention: a change updates one row per backend (shard = pg_backend_pid() % 64), locked until
-- the transaction ends. Two backends share a row only when their pids are equal modulo 64; each
-- transaction locks one gauge row, so the gauges add no lock cycle of their own. A heartbeat, a
-- fence or a replay changes neither status nor error_class and fires nothing (the triggers'
-- WHEN); a new key and its completion each fire once.
--
-- Any writer is counted: the protocol functions, the audited actions, a DBA's UPDATE or DELETE,
-- COPY, TRUNCATE. idem_gauges_recount() recounts from the rows under a lock that holds writers
-- back for the length of one index-only scan of the unfinished rows; `idemctl stats --check`
-- compares the gauges with a count in one snapshot.

CREATE TABLE task_idempotency_gauges (
    shard            SMALLINT PRIMARY KEY CHECK (shard BETWEEN 0 AND 63),
    processing       BIGINT NOT NULL DEFAULT 0, -- status processing, live or expired
    retryable_failed BIGINT NOT NULL DEFAULT 0,
    uncertain        BIGINT NOT NULL DEFAULT 0, -- retryable_failed with error_class unknown (also in retryable_failed)
    failed_permanent BIGINT NOT NULL DEFAULT 0, -- failed with error_class permanent
    failed_other     BIGINT NOT NULL DEFAULT 0  -- failed with any other class (exhausted, NULL)
) WITH (fillfactor = 10); -- room on the page for HOT updates: 64 rows updated thousands of times a second

-- How a change reaches the gauges. A transaction's first few changes (the protocol's
-- transactions make one: a new key, a completion, a failure) each update the backend's gauge row
-- at once: one trigger call and one UPDATE. Past that, the deltas are summed in a
-- transaction-local setting (idem.gauge_pending: {processing, retryable, uncertain, permanent,
-- other}) and written once, at commit, by a deferred constraint trigger that the first summed
-- change queues through task_idempotency_gauge_flush. So a transaction that changes 100k rows
-- updates its gauge row nine times: updating it per change would make it quadratic (each update
-- of a row walks the versions the same transaction already made of it). A savepoint rolled back
-- takes its changes with it (gauge updates, settings and queued trigger events all roll back).
-- The old image counts -1 and the new one +1. SECURITY DEFINER: workers and operators change
-- task rows, never the gauges directly.
CREATE TABLE task_idempotency_gauge_flush (
    requested_by INT NOT NULL DEFAULT pg_backend_pid()
);

CREATE FUNCTION task_idempotency_gauge_note() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
    d int[] := '{0,0,0,0,0}';
    direct int := coalesce(nullif(current_setting('idem.gauge_direct', true), ''), '0')::int;
    pending text;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        IF OLD.status = 'processing' THEN
            d[1] := -1;
        ELSIF OLD.status = 'retryable_failed' THEN
            d[2] := -1;
            IF OLD.error_class = 'unknown' THEN d[3] := -1; END IF;
        ELSIF OLD.status = 'failed' THEN
            IF OLD.error_class = 'permanent' THEN d[4] := -1; ELSE d[5] := -1; END IF;
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        IF NEW.status = 'processing' THEN
            d[1] := d[1] + 1;
        ELSIF NEW.status = 'retryable_failed' THEN
            d[2] := d[2] + 1;
            IF NEW.error_class = 'unknown' THEN d[3] := d[3] + 1; END IF;
        ELSIF NEW.status = 'failed' THEN
            IF NEW.error_class = 'permanent' THEN d[4] := d[4] + 1; ELSE d[5] := d[5] + 1; END IF;
        END IF;
    END IF;
    IF direct < 8 THEN
        UPDATE task_idempotency_gauges
           SET processing = processing + d[1], retryable_failed = retryable_failed + d[2],
               uncertain = uncertain + d[3], failed_permanent = failed_permanent + d[4],
               failed_other = failed_other + d[5]
         WHERE shard = pg_backend_pid() % 64;
        PERFORM set_config('idem.gauge_direct', (direct + 1)::text, true);
        RETURN NULL;
    END IF;
    pending := current_setting('idem.gauge_pending', true);
    IF pending IS NULL OR pending = '' THEN
        INSERT INTO task_idempotency_gauge_flush DEFAULT VALUES; -- queues the flush at commit
    ELSE
        d := ARRAY(SELECT a + b FROM unnest(d, pending::int[]) AS x(a, b));
    END IF;
    PERFORM set_config('idem.gauge_pending', d::text, true);
    RETURN NULL;
END
$$;

CREATE FUNCTION task_idempotency_gauge_flush() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
    pending text := current_setting('idem.gauge_pending', true);
    d int[];
BEGIN
    DELETE FROM task_idempotency_gauge_flush WHERE ctid = NEW.ctid;
    IF pending IS NULL OR pending = '' THEN
        RETURN NULL;
    END IF;
    d := pending::int[];
    UPDATE task_idempotency_gauges
       SET processing = processing + d[1], retryable_failed = retryable_failed + d[2], uncertain = uncertain + d[3],
           failed_permanent = failed_permanent + d[4], failed_other = failed_other + d[5]
     WHERE shard = pg_backend_pid() % 64;
    PERFORM set_config('idem.gauge_pending', '', true);
    RETURN NULL;
END
$$;

CREATE FUNCTION task_idempotency_gauge_truncate() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    UPDATE task_idempotency_gauges
       SET processing = 0, retryable_failed = 0, uncertain = 0, failed_permanent = 0, failed_other = 0;
    -- What this transaction noted before the TRUNCATE is gone with the rows.
    PERFORM set_config('idem.gauge_pending', '', true);
    RETURN NULL;
END
$$;

-- Recounts every gauge from the rows. SHARE ROW EXCLUSIVE lets readers on and holds writers
-- (claims, completions, actions) back until the recount commits.
CREATE FUNCTION idem_gauges_recount() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    LOCK TABLE task_idempotency IN SHARE ROW EXCLUSIVE MODE;
    INSERT INTO task_idempotency_gauges (shard) SELECT s FROM generate_series(0, 63) s ON CONFLICT (shard) DO NOTHING;
    UPDATE task_idempotency_gauges g
       SET processing = CASE WHEN g.shard = 0 THEN c.processing ELSE 0 END,
           retryable_failed = CASE WHEN g.shard = 0 THEN c.retryable_failed ELSE 0 END,
           uncertain = CASE WHEN g.shard = 0 THEN c.uncertain ELSE 0 END,
           failed_permanent = CASE WHEN g.shard = 0 THEN c.failed_permanent ELSE 0 END,
           failed_other = CASE WHEN g.shard = 0 THEN c.failed_other ELSE 0 END
      FROM (SELECT count(*) FILTER (WHERE t.status = 'processing') AS processing,
                   count(*) FILTER (WHERE t.status = 'retryable_failed') AS retryable_failed,
                   count(*) FILTER (WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown') AS uncertain,
                   count(*) FILTER (WHERE t.status = 'failed' AND t.error_class = 'permanent') AS failed_permanent,
                   count(*) FILTER (WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent')
                       AS failed_other
              FROM task_idempotency t
             WHERE t.status <> 'succeeded') c;
END
$$;
REVOKE ALL ON FUNCTION idem_gauges_recount() FROM PUBLIC;
REVOKE ALL ON FUNCTION task_idempotency_gauge_note() FROM PUBLIC;
REVOKE ALL ON FUNCTION task_idempotency_gauge_flush() FROM PUBLIC;
REVOKE ALL ON FUNCTION task_idempotency_gauge_truncate() FROM PUBLIC;

SELECT idem_gauges_recount();

CREATE TRIGGER task_idempotency_gauges_insert AFTER INSERT ON task_idempotency
    FOR EACH ROW EXECUTE FUNCTION task_idempotency_gauge_note();
CREATE TRIGGER task_idempotency_gauges_update AFTER UPDATE ON task_idempotency
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.error_class IS DISTINCT FROM NEW.error_class)
    EXECUTE FUNCTION task_idempotency_gauge_note();
CREATE TRIGGER task_idempotency_gauges_delete AFTER DELETE ON task_idempotency
    FOR EACH ROW EXECUTE FUNCTION task_idempotency_gauge_note();
CREATE TRIGGER task_idempotency_gauges_truncate AFTER TRUNCATE ON task_idempotency
    FOR EACH STATEMENT EXECUTE FUNCTION task_idempotency_gauge_truncate();
CREATE CONSTRAINT TRIGGER task_idempotency_gauges_flush AFTER INSERT ON task_idempotency_gauge_flush
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION task_idempotency_gauge_flush();

-- The tick's time-dependent figures count the small side: rows created within the
-- long-unfinished threshold per unfinished status, and the oldest processing row (the first
-- entry under 'processing'). New claims enter it as they enter the unfinished index. Built here
-- in the migration's transaction (a SHARE lock for one scan of the table, as 0004's index).
CREATE INDEX task_idempotency_unfinished_created_idx
    ON task_idempotency (status, created_at) WHERE status <> 'succeeded';
