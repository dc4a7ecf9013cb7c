-- Idem schema v7: audit appends serialise on a lock only Idem's own functions can take, a
-- recovery action that times out waiting says what it waited for, and a reason needs a visible
-- character (issue #12, items 5 and 6).
--
-- Up to v6 an append took pg_advisory_xact_lock(hashtext('idem.audit'), hashtext(<schema>)).
-- Any login role may take any advisory lock, so any of them could hold up every recovery
-- action. Now an append locks the one row of task_idempotency_audit_head FOR UPDATE. Nobody but
-- the owner holds any privilege on that table (SELECT ... FOR UPDATE needs UPDATE, LOCK TABLE
-- needs a privilege on the table, even for ACCESS SHARE), so only the owner and the SECURITY
-- DEFINER actions can lock it. The row is only a lock: the chain still continues from the
-- newest entry in the trail, so ids stay dense, a gap still means a deleted entry, and the
-- entry hash (audit_entry_hash, operations/audit.cpp) is unchanged: entries written before and
-- after this migration verify alike.

CREATE TABLE task_idempotency_audit_head (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one)
);
INSERT INTO task_idempotency_audit_head VALUES (true);

-- No grant at all, whatever default privileges the schema's owner may have set up.
DO $head$
DECLARE
    g record;
BEGIN
    REVOKE ALL ON task_idempotency_audit_head FROM PUBLIC;
    FOR g IN SELECT DISTINCT a.grantee::regrole::text AS name
               FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.oid = 'task_idempotency_audit_head'::regclass AND a.grantee <> c.relowner AND a.grantee <> 0
    LOOP
        EXECUTE format('REVOKE ALL ON task_idempotency_audit_head FROM %s', g.name);
    END LOOP;
END
$head$;

-- audit_reason_blank(): defined in functions/audit_reason_blank.sql

-- The v3 body (0003_actions.sql) with three changes, marked "v7": the reason check, the row
-- lock's timeout named, and the append's lock.
-- recovery_action_apply(): changed in functions/recovery_action_apply.sql
