-- Idem schema v8: the console at 10M rows (issue #13). A tick's cost no longer grows with the
-- table, the unfinished set or the number of tenants, and 20 consoles cost the database what
-- one does:
--
-- 1. Bounded figures (idem_live_stats): every per-row figure is counted up to a cap of 10,000
--    through an index that stops there; above it the figure is a proven lower bound ("at least
--    10,000"). The unfiltered figures are computed at most once a period per database (a
--    second, or 50x what counting cost, up to 10 s), by
--    whichever reader asks first, and shared through idem_stats_live. For that, each figure
--    has an index of its own: the processing and retry indexes now carry created_at (the
--    oldest processing row and long-unfinished without a heap visit), and three small partial
--    indexes give uncertain outcomes and the two kinds of failed rows (terminal rows that pile
--    up for months: no tick visits more than the cap of them). A claim that succeeds never
--    enters the three; a worker's fail() enters one.
-- 2. Exact figures (idem_exact_stats, one pass over the unfinished rows) are computed by one
--    reader per period (idem_exact_refresh_begin / _finish), stored in idem_stats_exact with
--    when and what they cost; the period is 50x that cost, 20 s to 15 min, so the shared
--    refresh uses at most ~2 % of one core whatever the table holds.
-- 3. Counters summed over tenants and operations (idem_counters_total), written by add_counters()
--    beside the detailed rows, so the headline tick reads at most 15 x 14 rows whatever the
--    tenant count; minutes roll up to hours (idem_counters_hourly) after two days and expire
--    after 90 days (idem_counters_policy), in small batches (idem_counters_maintain).
--
-- The indexes are built here inside the migration's transaction: a SHARE lock on
-- task_idempotency for one scan of the table per index (claims wait; 7.8 s for all five on a
-- 10M-row table here). For a big live table, build them first, outside any transaction:
--   CREATE INDEX CONCURRENTLY task_idempotency_processing_idx_v8 ON <schema>.task_idempotency
--       (lease_until) INCLUDE (created_at, idempotency_key) WHERE status = 'processing';
--   CREATE INDEX CONCURRENTLY task_idempotency_retry_due_idx_v8 ON <schema>.task_idempotency
--       (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE status = 'retryable_failed';
--   CREATE INDEX CONCURRENTLY task_idempotency_uncertain_idx ON <schema>.task_idempotency
--       (next_attempt_at) INCLUDE (idempotency_key) WHERE status = 'retryable_failed' AND error_class = 'unknown';
--   CREATE INDEX CONCURRENTLY task_idempotency_failed_permanent_idx ON <schema>.task_idempotency
--       (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class = 'permanent';
--   CREATE INDEX CONCURRENTLY task_idempotency_failed_exhausted_idx ON <schema>.task_idempotency
--       (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class IS DISTINCT FROM 'permanent';
-- This migration then takes them as they are (the two _v8 ones replace the indexes of the same
-- name without it: an ACCESS EXCLUSIVE lock for the drop and rename, milliseconds). An invalid
-- or differently defined one stops it.

DO $indexes$
DECLARE
    v_def record;
    v_name text;
    v_idx regclass;
BEGIN
    -- name, whether it replaces the index of that name (then it is built as name_v8 beside
    -- it, the old one goes and it is renamed), the definition it must have, the DDL's tail.
    FOR v_def IN SELECT * FROM (VALUES
        ('task_idempotency_processing_idx', true,
         $d$USING btree (lease_until) INCLUDE (created_at, idempotency_key) WHERE (status = 'processing'::text)$d$,
         $d$ON task_idempotency (lease_until) INCLUDE (created_at, idempotency_key) WHERE status = 'processing'$d$),
        ('task_idempotency_retry_due_idx', true,
         $d$USING btree (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE (status = 'retryable_failed'::text)$d$,
         $d$ON task_idempotency (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE status = 'retryable_failed'$d$),
        ('task_idempotency_uncertain_idx', false,
         $d$USING btree (next_attempt_at) INCLUDE (idempotency_key) WHERE ((status = 'retryable_failed'::text) AND (error_class = 'unknown'::text))$d$,
         $d$ON task_idempotency (next_attempt_at) INCLUDE (idempotency_key) WHERE status = 'retryable_failed' AND error_class = 'unknown'$d$),
        ('task_idempotency_failed_permanent_idx', false,
         $d$USING btree (updated_at) INCLUDE (idempotency_key) WHERE ((status = 'failed'::text) AND (error_class = 'permanent'::text))$d$,
         $d$ON task_idempotency (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class = 'permanent'$d$),
        ('task_idempotency_failed_exhausted_idx', false,
         $d$USING btree (updated_at) INCLUDE (idempotency_key) WHERE ((status = 'failed'::text) AND (error_class IS DISTINCT FROM 'permanent'::text))$d$,
         $d$ON task_idempotency (updated_at) INCLUDE (idempotency_key) WHERE status = 'failed' AND error_class IS DISTINCT FROM 'permanent'$d$)
    ) AS d(name, replaces, target, ddl) LOOP
        v_name := v_def.name || CASE WHEN v_def.replaces THEN '_v8' ELSE '' END;
        v_idx := to_regclass(quote_ident(current_schema()) || '.' || quote_ident(v_name));
        IF v_idx IS NULL AND v_def.replaces
           AND substring(pg_get_indexdef(to_regclass(quote_ident(current_schema()) || '.' || quote_ident(v_def.name)))
                         FROM ' (USING .*)$') = v_def.target THEN
            CONTINUE; -- replaced by hand already
        ELSIF v_idx IS NULL THEN
            EXECUTE format('CREATE INDEX %I ', v_name) || v_def.ddl;
        ELSIF NOT (SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = v_idx)
              OR (SELECT i.indrelid FROM pg_index i WHERE i.indexrelid = v_idx) <> 'task_idempotency'::regclass THEN
            RAISE EXCEPTION 'index % exists but is not a valid index on task_idempotency (a failed CREATE INDEX CONCURRENTLY?)', v_name
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
        ELSIF substring(pg_get_indexdef(v_idx) FROM ' (USING .*)$') IS DISTINCT FROM v_def.target THEN
            RAISE EXCEPTION 'index % is defined as "%", expected "... %"', v_name, pg_get_indexdef(v_idx), v_def.target
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
        END IF;
        IF v_def.replaces THEN
            EXECUTE format('DROP INDEX IF EXISTS %I', v_def.name);
            EXECUTE format('ALTER INDEX %I RENAME TO %I', v_name, v_def.name);
        END IF;
    END LOOP;
END
$indexes$;

-- idem_exact_stats(): defined in functions/idem_exact_stats.sql

-- The shared bounded figures (idem_live_stats), at most a second old. One row; readers see it
-- with SELECT only, so none of them can lock it and hold up the others. *_capped: the count
-- reached the cap, the figure is a lower bound.
CREATE TABLE idem_stats_live (
    one                           BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    taken_at                      TIMESTAMPTZ NOT NULL,
    long_unfinished_after_minutes INTEGER NOT NULL,
    cost_ms                       DOUBLE PRECISION NOT NULL,
    period_s                      DOUBLE PRECISION NOT NULL,
    computations                  BIGINT NOT NULL,
    processing                    BIGINT NOT NULL,
    processing_capped             BOOLEAN NOT NULL,
    expired_leases                BIGINT NOT NULL,
    expired_leases_capped         BOOLEAN NOT NULL,
    oldest_processing_created_at  TIMESTAMPTZ,
    oldest_processing_capped      BOOLEAN NOT NULL,
    retryable_failed              BIGINT NOT NULL,
    retryable_failed_capped       BOOLEAN NOT NULL,
    uncertain                     BIGINT NOT NULL,
    uncertain_capped              BOOLEAN NOT NULL,
    failed_permanent              BIGINT NOT NULL,
    failed_permanent_capped       BOOLEAN NOT NULL,
    failed_exhausted              BIGINT NOT NULL,
    failed_exhausted_capped       BOOLEAN NOT NULL,
    long_unfinished               BIGINT NOT NULL,
    long_unfinished_capped        BOOLEAN NOT NULL
);
INSERT INTO idem_stats_live VALUES (true, '-infinity', 60, 0, 1, 0, 0, false, 0, false, NULL, false, 0, false, 0, false,
                                    0, false, 0, false, 0, false);

-- idem_live_stats(): defined in functions/idem_live_stats.sql

-- idem_key_matches(): defined in functions/idem_key_matches.sql

-- The shared exact figures: one row, refreshed by one reader per period. taken_at '-infinity'
-- until the first refresh. A refresh is two calls, each its own transaction:
-- idem_exact_refresh_begin() marks an attempt and returns its token, to one caller only, when
-- the figures are due (taken_at + period_s passed) and no attempt is under way (attempt_at more
-- than max(period_s, 60 s) ago, so an attempt that died, timed out or was cancelled does not
-- stop the next one for long); idem_exact_refresh_finish(token, ...) counts and stores them if
-- the token is still the current attempt's. A computation that is cancelled or times out has
-- still taken its turn: the budget holds whatever happens to the callers.
CREATE TABLE idem_stats_exact (
    one                           BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    taken_at                      TIMESTAMPTZ NOT NULL,
    long_unfinished_after_minutes INTEGER NOT NULL,
    cost_ms                       DOUBLE PRECISION NOT NULL,
    period_s                      DOUBLE PRECISION NOT NULL,
    refreshes                     BIGINT NOT NULL,
    taken_by                      TEXT NOT NULL,
    attempt_at                    TIMESTAMPTZ,
    attempt_token                 UUID,
    processing                    BIGINT,
    expired_leases                BIGINT,
    oldest_processing_created_at  TIMESTAMPTZ,
    retryable_failed              BIGINT,
    uncertain                     BIGINT,
    failed_permanent              BIGINT,
    failed_exhausted              BIGINT,
    long_unfinished               BIGINT,
    attempts_histogram            JSONB
);
INSERT INTO idem_stats_exact (taken_at, long_unfinished_after_minutes, cost_ms, period_s, refreshes, taken_by)
VALUES ('-infinity', 60, 0, 0, 0, '');

-- idem_exact_refresh_begin(): defined in functions/idem_exact_refresh_begin.sql

-- idem_exact_refresh_finish(): defined in functions/idem_exact_refresh_finish.sql

-- Counters summed over tenants and operations: what the unfiltered tick and the charts read.
-- minutes 1: a minute bucket (as idem_counters); 60: an hour, after the roll-up.
CREATE TABLE idem_counters_total (
    minutes  SMALLINT NOT NULL CHECK (minutes IN (1, 60)),
    bucket   TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc(CASE minutes WHEN 1 THEN 'minute' ELSE 'hour' END, bucket)),
    outcome  TEXT NOT NULL,
    n        BIGINT NOT NULL CHECK (n >= 0),
    PRIMARY KEY (minutes, bucket, outcome)
);

-- Detailed counters older than the roll-up horizon, per hour.
CREATE TABLE idem_counters_hourly (
    bucket    TIMESTAMPTZ NOT NULL CHECK (bucket = date_trunc('hour', bucket)),
    tenant    TEXT NOT NULL,
    operation TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    n         BIGINT NOT NULL CHECK (n >= 0),
    PRIMARY KEY (bucket, tenant, operation, outcome)
);

-- A tenant-filtered view reads the detailed rows of one tenant, not of every tenant in the window.
CREATE INDEX idem_counters_tenant_idx ON idem_counters (tenant, bucket);

CREATE TABLE idem_counters_policy (
    one          BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    rollup_after INTERVAL NOT NULL CHECK (rollup_after >= interval '1 hour'),
    expire_after INTERVAL NOT NULL,
    CHECK (expire_after > rollup_after)
);
INSERT INTO idem_counters_policy VALUES (true, interval '2 days', interval '90 days');

-- What the counters held before v8, summed. A flush that was running while this migration
-- waited for its lock may be missing here for its minute (it used the v6 add_counters).
LOCK TABLE idem_counters IN SHARE MODE;
INSERT INTO idem_counters_total (minutes, bucket, outcome, n)
SELECT 1, c.bucket, c.outcome, sum(c.n)::bigint FROM idem_counters c GROUP BY c.bucket, c.outcome;

-- idem_counters_maintain(): defined in functions/idem_counters_maintain.sql

-- The counters flush: v6's add_counters() keeps its checks and its detailed rows under the name
-- idem_counters_add_detail(); add_counters() calls it and then adds the batch into
-- idem_counters_total. Detailed rows first, then totals, each in key order: two flushers lock in
-- the same order and cannot deadlock. Same bounds, same errors: a batch out of bounds is refused
-- whole (ID003) before anything is written.

-- add_counters(): changed in functions/add_counters.sql

-- idem_counters_add_detail(): renamed from v6's add_counters(), now in functions/idem_counters_add_detail.sql;
-- workers reach it only through add_counters() (roles.sql grants them that one).

-- Nobody but the owner holds any privilege on the shared row beyond what roles.sql grants
-- (SELECT to readers), whatever default privileges the schema's owner set up.
DO $private$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT c.relname, a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid IN ('idem_stats_exact'::regclass, 'idem_stats_live'::regclass, 'idem_counters_total'::regclass,
                              'idem_counters_hourly'::regclass, 'idem_counters_policy'::regclass)
                AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM %s', g.relname, g.name);
    END LOOP;
    REVOKE ALL ON idem_stats_exact, idem_stats_live, idem_counters_total, idem_counters_hourly, idem_counters_policy FROM PUBLIC;
END
$private$;
