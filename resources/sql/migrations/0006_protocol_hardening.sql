-- Idem schema v6: the protocol hardened (issue 12).
--
-- 1. A NULL token is refused and "no owner" never passes for "this owner". After idem_release a
--    row is processing with owner_token NULL, and v2's `owner_token IS DISTINCT FROM p_token` is
--    false for NULL and NULL: a client that sent on the NULL token of a claim it had not won could
--    fence, write its business row and fail() the row into a retry, and the next worker paid again.
-- 2. Every argument is checked, before any arithmetic on it, against these bounds; anything
--    outside raises ID003 and changes nothing (2^63-1 ms used to raise 22008, 10^15 ms passed):
--      key               1 .. 1024 bytes
--      request_hash      1 .. 256 bytes of visible ASCII (0x21 .. 0x7e); a v1 digest is 67
--      token             not NULL
--      lease_ms          1 .. 86 400 000 (24 h), claim and heartbeat
--      max_attempts      1 .. 1000
--      max_age_ms        NULL (no limit) or 1 .. 31 536 000 000 (365 days), claim and fail
--      class             retryable | permanent | unknown
--      message           not NULL; stored cut to its first 8192 characters, as in v2
--      retry_delay_ms    0 .. 604 800 000 (7 days)
--      result            not NULL (the JSON value null is a result)
--      max_result_bytes  1 .. 67 108 864 (64 MiB)
--    core/taskstore.cpp refuses the same values with std::invalid_argument before any I/O.
-- 3. The protocol functions are SECURITY DEFINER. roles.sql leaves idem_worker no privilege on
--    any Idem table (it may read idem_schema_version), so these functions, whose checks hold the
--    state machine, are a worker's only way in: it cannot put a succeeded row back, forge one, or
--    lock a table. The path is pinned as in v3: migrate runs this with search_path =
--    <schema>, pg_temp, which SET search_path FROM CURRENT captures (pg_catalog first implicitly,
--    pg_temp last explicitly), so no object of the caller's can stand in for one named here.
--    The functions already had a SET clause, so the call already went through the definer
--    wrapper; only the user switch is new (measured in bench/README.md, "Session 4").
-- 4. claim() reads the row before it tries the insert. A replay (what a retry storm is made of)
--    is then one index lookup instead of a speculative insert that finds the conflict, then the
--    lookup; it takes no ROW EXCLUSIVE table lock either, so replays go on while something holds
--    SHARE (a plain CREATE INDEX). A new key pays one extra index miss. The decisions and the
--    race of two claimers of a new key are unchanged: both miss, both insert, one wins, and the
--    other waits for its commit in the insert, then reads the row as before.
-- 5. add_counters(batch) is the counters flush (core/counters.cpp): the worker has no write on
--    idem_counters any more. Bounded: at most 10000 rows per call; tenant and operation 1 .. 64
--    bytes (core/key.h); a known outcome; n 0 .. 10^14; buckets on the minute, from 31 days before
--    the server's clock to one hour after it.
--
-- Signatures, defaults, results and decisions are those of v2 and v5; 0005's digest-conflict
-- record stays on claim()'s conflict path, now with the whole (bounded) digest.

-- claim(): changed in functions/claim.sql

-- In the caller's business transaction, before its writes: locks the row and checks the token
-- still owns it. Raises ID001 otherwise, which aborts the caller's transaction.
-- fence(): changed in functions/fence.sql

-- Marks the row succeeded with its result, in the caller's business transaction (after fence
-- and the business writes). Raises ID001 if the token lost the row: the caller's commit must
-- not happen, and since the error aborts the transaction it cannot.
-- complete(): changed in functions/complete.sql

-- Extends a live lease. Raises ID001 if the token lost the row.
-- heartbeat(): changed in functions/heartbeat.sql

-- Records a failed attempt, fenced by the token (classes as in v2). The last 20 failures are
-- kept in errors.
-- fail(): changed in functions/fail.sql

-- add_counters(): defined in functions/add_counters.sql

-- The table privileges a worker had until v5 go now (roles.sql no longer grants them; it runs
-- after this on every migrate, and also grants EXECUTE on add_counters). A database migrated
-- with --no-roles may have no idem_worker yet: then there is nothing to revoke.
DO $worker$
DECLARE
    s text := current_schema();
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_worker') THEN
        EXECUTE format('REVOKE ALL ON %1$I.task_idempotency, %1$I.idem_counters, %1$I.task_idempotency_conflicts,'
                       ' %1$I.task_idempotency_audit FROM idem_worker', s);
    END IF;
END
$worker$;
