-- Idem schema v18: deploys (issue #27): the version string each worker reports, and a mark on the
-- charts' time axis when the fleet runs a version it has not run before.
--
-- A worker calls idem_report_version(worker, version) when it starts and when it reconnects, never
-- per task. A report that changes nothing (the worker's recorded version is the one it reports) is
-- one read by primary key and writes nothing. A row is written only when something changes: a
-- worker name not seen before (its row in idem_worker_versions), or a worker whose version differs
-- from its last (its row updated). Different workers write different rows: no hot row.
--
-- A deploy is the first report of a version the fleet has not reported before (since v18): one
-- row in idem_deploys, whatever the number of workers that take the version up after it, so a
-- rolling restart of 50 workers is one mark, and workers named anew at every start (one name per
-- container) mark it too. Its old version is the reporting worker's previous one or, for a worker
-- new by name, the version most recently taken up by any other worker (NULL for the very first
-- report). Going back to a version reported before (a rollback) is not a deploy: annotate it
-- (idemctl annotate). idem_events() lists deploys with the audited events, action 'deploy'.
CREATE TABLE idem_worker_versions (
    worker     TEXT PRIMARY KEY,
    version    TEXT NOT NULL,
    first_seen TIMESTAMPTZ NOT NULL,  -- the worker's first report
    since      TIMESTAMPTZ NOT NULL,  -- its first report of this version
    db_role    TEXT NOT NULL          -- the login role that reported it (session_user)
);
REVOKE ALL ON idem_worker_versions FROM PUBLIC;
-- The version most recently taken up (the old version of a new worker's deploy).
CREATE INDEX idem_worker_versions_since_idx ON idem_worker_versions (since);

CREATE TABLE idem_deploys (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL,
    worker      TEXT NOT NULL,         -- the worker whose report it was
    old_version TEXT,                  -- NULL: nothing was reported before
    new_version TEXT NOT NULL UNIQUE,  -- each version is a deploy once
    db_role     TEXT NOT NULL
);
REVOKE ALL ON idem_deploys FROM PUBLIC;
-- idem_events() reads deploys by time.
CREATE INDEX idem_deploys_at_idx ON idem_deploys (at);

-- idem_events() returns three more columns (worker, old_version, new_version): a function's
-- result type cannot be replaced in place. Its file (functions/idem_events.sql) creates it again
-- in the same migrate run, after the migrations, and roles.sql grants it again; its recorded
-- checksum goes so that the file is applied whatever it holds. (A fresh install has no function
-- yet at this point: the files come after every migration.) Readers calling it between the two
-- transactions get 42883 once.
DROP FUNCTION IF EXISTS idem_events(timestamptz, timestamptz, text, text, integer);
DELETE FROM idem_schema_functions WHERE name = 'idem_events';
