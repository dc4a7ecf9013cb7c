-- idem_pause_may_cover (schema v18; the history is in git log).
-- Whether a pause may cover key p_key, asked of the catalog alone: claim() calls it first, where
-- it would acquire or take over the key, and reads the pause tables only when it says yes. It is
-- a lookup or two in the backend's catalog cache: no table read, no lock, no snapshot.
-- - No while the view idem_pauses_none exists (nothing is paused; v16).
-- - Otherwise no while the view idem_pauses_by_operation exists and no view named
--   "idem_paused:<operation>" does for the key's operation: idem_pause_summarise() keeps one such
--   view per paused operation while every pause names its operation (none is '*'), they are at
--   most idem_pause_summarise's limit, and each name fits a relation name.
-- - Yes otherwise: a missing view only costs claim() the read, so the answer is never a wrong no
--   for want of a view (a database upgraded with pauses in force has neither view until the next
--   summary). Only the owner can create or drop a relation in this schema, and every name here
--   carries the schema, so no caller can make claim() skip a pause.
-- SQL, named with @extschema@ and pg_catalog and without SET search_path, so the planner inlines
-- it into claim()'s IF, which stays a simple expression.
CREATE OR REPLACE FUNCTION idem_pause_may_cover(p_key text)
RETURNS boolean
LANGUAGE sql
STABLE
AS $may$
    SELECT pg_catalog.to_regclass('@extschema@.idem_pauses_none') IS NULL
       AND (pg_catalog.to_regclass('@extschema@.idem_pauses_by_operation') IS NULL
            OR pg_catalog.to_regclass('@extschema@.' OPERATOR(pg_catalog.||)
                   pg_catalog.quote_ident('idem_paused:' OPERATOR(pg_catalog.||) pg_catalog.split_part(p_key, ':', 2)))
               IS NOT NULL)
$may$;

REVOKE ALL ON FUNCTION idem_pause_may_cover(text) FROM PUBLIC;
