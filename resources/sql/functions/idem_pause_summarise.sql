-- idem_pause_summarise (schema v15; the history is in git log).
-- Rebuilds idem_pause_tenants from idem_pauses: one row per tenant a pause names, with its paused
-- operations. Takes the summary's EXCLUSIVE lock first (claims only read it, under ACCESS SHARE,
-- so none waits), so rebuilds run one at a time and each reads, READ COMMITTED, every pause
-- committed before it: a concurrent change is summarised by its own call, after this one.
-- idem_pause and idem_resume call it; the owner calls it after writing idem_pauses by hand.
CREATE OR REPLACE FUNCTION idem_pause_summarise()
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $summarise$
BEGIN
    LOCK TABLE idem_pause_tenants IN EXCLUSIVE MODE;
    DELETE FROM idem_pause_tenants;
    INSERT INTO idem_pause_tenants (tenant, operations)
    SELECT p.tenant, array_agg(p.operation ORDER BY p.operation)
      FROM idem_pauses p
     GROUP BY p.tenant;
END
$summarise$;

REVOKE ALL ON FUNCTION idem_pause_summarise() FROM PUBLIC;
