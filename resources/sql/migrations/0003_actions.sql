-- Idem schema v3: audited manual recovery actions (DESIGN section 5).
--
-- idem_requeue, idem_release and idem_fail are the only way an operator changes a task. Each is
-- SECURITY DEFINER (the operator role has no UPDATE on any Idem table) and, in one transaction:
-- locks the row, checks it still has the status and updated_at the operator saw, changes it and
-- appends an entry to the hash-chained audit. A refusal (stale view, wrong state, no such key) is
-- a result row, not an error, and changes nothing. Invalid arguments raise ID003.
--
-- updated_at travels as integer microseconds since the Unix epoch (exact: PostgreSQL's own
-- resolution); read it as (extract(epoch FROM updated_at) * 1000000)::bigint.
--
-- search_path: migrate runs this with search_path = <schema>, pg_temp, which SET search_path
-- FROM CURRENT pins on every function below. pg_catalog is searched first implicitly and
-- pg_temp last explicitly, so a caller's temporary objects can never shadow what a definer
-- function refers to.

-- Where the request came from, as the server saw it: application_name of the acting session.
ALTER TABLE task_idempotency_audit ADD COLUMN application TEXT NOT NULL DEFAULT '';

-- audit_netstring and audit_task_image name only pg_catalog functions (always searched first)
-- and carry no SET clause, so the planner can inline them; only the definer functions, which pin
-- the path, and the owner can call them. audit_entry_hash pins the path: it names audit_netstring.

-- audit_netstring(): defined in functions/audit_netstring.sql

-- audit_entry_hash(): defined in functions/audit_entry_hash.sql

-- audit_task_image(): defined in functions/audit_task_image.sql

-- recovery_action_apply(): defined in functions/recovery_action_apply.sql

-- idem_requeue(): defined in functions/idem_requeue.sql

-- idem_release(): defined in functions/idem_release.sql

-- idem_fail(): defined in functions/idem_fail.sql
