-- Idem schema v13: the lowest roles cannot blind or impersonate the operators (issue #31).
--
-- 1. Counters (add_counters, the roll-up, every reader): a sum never overflows. A flush that
--    claims more in one minute and outcome than idem_counters_policy.max_flush_per_minute (10^7,
--    a worker flushes about a second of its counts) is refused whole, recorded in
--    idem_counters_refused with who sent it (role, application_name, client address, when, what)
--    and shown to operators (idemctl stats, the exporter, the console); nothing of it lands, and
--    honest flushes for the same minutes still do. Stored counts saturate at 10^15 instead of
--    overflowing; the roll-up sums in numeric. A minute after the server's current minute (a
--    worker's clock ahead by up to the hour the bounds allow) is counted in the current minute:
--    no figure counts the future.
-- 2. Every function pins its search_path or names pg_catalog for what it calls: idem_exact_stats
--    and the other inlined SQL functions qualify their operators and functions (a SET clause
--    would stop the inlining the callers' plans rely on), idem_purge_run (a procedure that
--    commits may not carry a SET clause) pins its path at the start of each of its
--    transactions. A planted public.*(integer, interval) no longer runs as the operator.
-- 4. A purge run's liveness is its own backend holding an advisory lock under a random key
--    recorded in its row, checked in pg_locks by pid: nobody can predict the next run's key, a
--    key someone else holds keeps no run alive, and two Idem schemas in one database never share
--    one.
-- 6. The shared exact refresh names who holds it (idem_exact_refresh_holder: pid, role, since),
--    and readers count for themselves when it is held past its due time (operations/statsrefresh.cpp).
-- 7. complete() stamps updated_at with clock_timestamp(): retention counts from the completion,
--    not from the start of the business transaction that made it.
-- 9. A reason needs a visible character by a positive list: letters, numbers, punctuation and
--    symbols (General_Category L, N, P, S); a lone combining mark, a format character, private
--    use or an unassigned code point is not one.
-- 10. claim()'s conflict answer no longer carries the stored digest (request_hash NULL): a
--    worker that knows a key cannot learn the digest that replays its result.

-- 7 and 10: v6's complete() and claim() (0006_protocol_hardening.sql), changes marked v13.
-- complete(): changed in functions/complete.sql

-- claim(): changed in functions/claim.sql

-- 9: true when the text has no visible character. Visible is a positive list (see
-- scripts/gen-visible-ranges.py, which also writes operations/visibleranges.h for the C++
-- reasonIsBlank): the assigned letters, numbers, punctuation and symbols of Unicode 14, minus
-- the fillers and the braille blank. Still inlined (no SET clause), so its operators are named.
-- audit_reason_blank(): changed in functions/audit_reason_blank.sql

-- 2: v11's one-pass idem_exact_stats (0011_exact_one_pass.sql), every function and operator
-- named in pg_catalog: it runs with its caller's search_path (it stays LANGUAGE sql without a
-- SET clause, so it is inlined and a caller's EXPLAIN shows its index-only scan), and a caller's
-- path may hold a schema others can write (public before PostgreSQL 15), where an operator such
-- as *(integer, interval), a closer match than pg_catalog's *(double precision, interval), would
-- run as the caller. Same signature, columns and meaning.
-- idem_exact_stats(): changed in functions/idem_exact_stats.sql

-- v8's idem_key_matches, named the same way (inlined into callers' queries).
-- idem_key_matches(): changed in functions/idem_key_matches.sql

-- 4: a run's liveness. v9 made it a session advisory lock on a key computed from the run's id
-- (idem_purge_lock_key): any login role could take the keys of the next runs (every purge then
-- failed with 55P03) or the key of a dead run (which then looked alive for ever), and two Idem
-- schemas in one database computed the same keys. Now each run takes a lock under a random key
-- (62 bits from gen_random_uuid, taken with a try: a key someone holds is never waited for, the
-- next one is drawn), records the key and its backend's pid in its row, and is alive only while
-- that backend holds that lock (pg_locks, which every role sees). A key held by anyone else
-- keeps nothing alive; nobody can know a key before the run draws it.
ALTER TABLE idem_purge_runs ADD COLUMN backend_pid integer, ADD COLUMN lock_key1 integer, ADD COLUMN lock_key2 integer;

-- idem_purge_alive(): defined in functions/idem_purge_alive.sql

-- idem_purge_release(): defined in functions/idem_purge_release.sql

-- v9's begin with v13's liveness.
-- idem_purge_begin(): changed in functions/idem_purge_begin.sql

-- v9's finish, releasing v13's lock.
-- idem_purge_finish(): changed in functions/idem_purge_finish.sql

-- v12's idem_purge, releasing v13's lock when it fails.
-- idem_purge(): changed in functions/idem_purge.sql

-- v12's procedure: v13's lock, and (2) its search_path pinned at the start of each of its
-- transactions, before any expression of its own is planned. A procedure that commits may carry
-- no SET clause, and it runs as its caller, with the caller's path: p_max_seconds * interval,
-- p_duty >= 0.01 and the pause's arithmetic would otherwise resolve through it.
-- idem_purge_run(): changed in functions/idem_purge_run.sql

-- 1: counters that no flush can overflow or fill with the implausible.
ALTER TABLE idem_counters_policy
    ADD COLUMN max_flush_per_minute BIGINT NOT NULL DEFAULT 10000000
        CHECK (max_flush_per_minute BETWEEN 1 AND 1000000000000000);

-- Flushes refused as implausible, newest 1000 kept: who sent it and what.
CREATE TABLE idem_counters_refused (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    db_role     TEXT NOT NULL,
    application TEXT NOT NULL,
    client_addr INET,
    rows        INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    batch       TEXT NOT NULL  -- its first 2000 characters
);

-- Counts stored before v13 past what a count may now hold (a flush that poisoned a minute) are
-- cut to it, so that no sum over them overflows.
UPDATE idem_counters SET n = 1000000000000000 WHERE n > 1000000000000000;
UPDATE idem_counters_total SET n = 1000000000000000 WHERE n > 1000000000000000;
UPDATE idem_counters_hourly SET n = 1000000000000000 WHERE n > 1000000000000000;

-- idem_counters_check(): defined in functions/idem_counters_check.sql

-- The detailed rows of a checked batch. A minute after the server's current one is counted in
-- the current one (no figure counts the future); a stored count saturates at 10^15 rather than
-- overflow (a batch adds at most 10000 x 10^14 before the ceiling, far below bigint's range).
-- idem_counters_add_detail(): changed in functions/idem_counters_add_detail.sql

-- The flush. Checked (ID003 as before), then judged: a batch that counts more in one minute
-- and outcome, over all its tenants and operations, than idem_counters_policy.max_flush_per_minute
-- is implausible (one flush is about a second of one process's counts). It is refused whole
-- and recorded with who sent it, and the call returns 0 with a WARNING: not an error, so the
-- record stays, and a flusher drops the batch as it drops a refused one. Nothing of it lands;
-- every other flush, for the same minutes too, does.
-- add_counters(): changed in functions/add_counters.sql

-- v8's roll-up, summing in numeric and saturating as the flush does: a poisoned hour can no
-- longer stop it (nor, through it, the shared exact refresh).
-- idem_counters_maintain(): changed in functions/idem_counters_maintain.sql

-- idem_exact_refresh_holder(): defined in functions/idem_exact_refresh_holder.sql

-- v9's finish (0009_key_lifecycle.sql) with the roll-up kept from stopping the refresh: the
-- figures are stored whatever the upkeep meets (marked v13).
-- idem_exact_refresh_finish(): changed in functions/idem_exact_refresh_finish.sql

-- Nobody but the owner holds any privilege on the new table beyond what roles.sql grants.
DO $private$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT c.relname, a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = 'idem_counters_refused'::regclass AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM %s', g.relname, g.name);
    END LOOP;
    REVOKE ALL ON idem_counters_refused FROM PUBLIC;
END
$private$;

-- 2: the SQL helpers only the pinned functions call, pinned too, so that no caller's path can
-- ever reach into them (a SET clause costs them their inlining: a few microseconds per audit
-- entry or purge run).
