-- Idem schema v14: functions as code.
--
-- Up to v13 every migration also (re)defined the functions of its version, so claim() was
-- written in four files and the live one was whichever came last. Since v14 the migrations hold
-- tables, indexes and data only, and each function or procedure is one file under
-- resources/sql/functions, its one live definition. migrate applies a function file when its
-- checksum differs from the one recorded here (after any pending migration, in one transaction
-- for all of them), so changing a function is changing its file; a new table or column is still
-- a new migration. The migrations of v1 to v13 were rewritten without their functions: a database
-- migrated before records their former checksums (migrations/superseded.sha256), which migrate
-- accepts for the same versions. resources/sql/schema.sql is the schema this produces, generated
-- by scripts/gen-schema-sql and checked by the test command.
CREATE TABLE idem_schema_functions (
    name       TEXT PRIMARY KEY,
    checksum   TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_by TEXT NOT NULL DEFAULT current_user
);
REVOKE ALL ON idem_schema_functions FROM PUBLIC;
