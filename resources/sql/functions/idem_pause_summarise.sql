-- idem_pause_summarise (schema v15, changed in v16; the history is in git log).
-- Rebuilds idem_pause_tenants from idem_pauses: one row per tenant a pause names, with its paused
-- operations; and (v16) keeps the empty view idem_pauses_none existing exactly while idem_pauses
-- has no row, which claim() looks up in its catalog cache before it reads anything else
-- (0016_pause_signal.sql). Only a change from none to some pauses or back writes the catalog. Takes the summary's EXCLUSIVE lock first (claims only read it, under ACCESS SHARE,
-- so none waits), so rebuilds run one at a time and each reads, READ COMMITTED, every pause
-- committed before it: a concurrent change is summarised by its own call, after this one.
-- idem_pause and idem_resume call it; the owner calls it after writing idem_pauses by hand.
CREATE OR REPLACE FUNCTION idem_pause_summarise()
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $summarise$
DECLARE
    v_paused boolean;
BEGIN
    LOCK TABLE idem_pause_tenants IN EXCLUSIVE MODE;
    DELETE FROM idem_pause_tenants;
    INSERT INTO idem_pause_tenants (tenant, operations)
    SELECT p.tenant, array_agg(p.operation ORDER BY p.operation)
      FROM idem_pauses p
     GROUP BY p.tenant;
    v_paused := EXISTS (SELECT FROM idem_pauses);
    IF v_paused AND to_regclass('@extschema@.idem_pauses_none') IS NOT NULL THEN
        DROP VIEW @extschema@.idem_pauses_none;
    ELSIF NOT v_paused AND to_regclass('@extschema@.idem_pauses_none') IS NULL THEN
        CREATE VIEW @extschema@.idem_pauses_none AS SELECT;
    END IF;
END
$summarise$;

REVOKE ALL ON FUNCTION idem_pause_summarise() FROM PUBLIC;
