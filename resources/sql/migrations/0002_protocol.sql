-- Idem schema v2: the idempotency protocol as SQL functions, one round trip each, for
-- workers in any language. The C++ library (core/taskstore.cpp) calls exactly these.
--
-- Errors raised here carry Idem's own SQLSTATEs (class ID, unused by PostgreSQL):
--   ID001  the caller's owner_token no longer owns the row (lease lost, released or taken
--          over, or the row already finished): nothing of the caller's transaction may commit
--   ID002  no record for that key
--   ID003  an argument is invalid (empty key, non-positive lease, unknown error class, oversize result)
--
-- Every statement filters on idempotency_key = p_key and touches one row: the functions stay
-- valid when task_idempotency is distributed by that key. now() is the transaction's start,
-- which is what a short claim transaction wants.

-- claim(): defined in functions/claim.sql

-- fence(): defined in functions/fence.sql

-- complete(): defined in functions/complete.sql

-- heartbeat(): defined in functions/heartbeat.sql

-- fail(): defined in functions/fail.sql
