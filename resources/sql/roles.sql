-- Idem roles and grants. idemctl migrate re-applies this after every migration run
-- (skip with --no-roles), with search_path set to the Idem schema. Roles are cluster-wide
-- and NOLOGIN: give them to login roles with GRANT idem_operator TO alice.
-- Grants name each Idem object, so adopting a table in a shared schema such as public
-- never widens access to anything else there.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_reader') THEN
        CREATE ROLE idem_reader NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_operator') THEN
        CREATE ROLE idem_operator NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_worker') THEN
        CREATE ROLE idem_worker NOLOGIN;
    END IF;
END
$roles$;

GRANT idem_reader TO idem_operator;

DO $grants$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO idem_reader, idem_operator, idem_worker', s);

    -- Readers (the console) see everything and change nothing.
    EXECUTE format('GRANT SELECT ON %I.task_idempotency, %I.idem_counters, %I.task_idempotency_audit,'
                   ' %I.idem_schema_version TO idem_reader', s, s, s, s);

    -- Workers run the protocol: their own rows and the counters, never the audit.
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %I.task_idempotency TO idem_worker', s);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %I.idem_counters TO idem_worker', s);
    EXECUTE format('GRANT SELECT ON %I.idem_schema_version TO idem_worker', s);

    -- Nobody but the owner changes or removes history.
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I.task_idempotency_audit'
                   ' FROM PUBLIC, idem_reader, idem_operator, idem_worker', s);
    EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %I.task_idempotency, %I.idem_counters'
                   ' FROM idem_reader, idem_operator', s, s);
END
$grants$;
