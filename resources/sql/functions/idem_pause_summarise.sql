-- idem_pause_summarise (schema v15, changed in v16, v18; the history is in git log).
-- Rebuilds idem_pause_tenants from idem_pauses: one row per tenant a pause names, with its paused
-- operations; and keeps the empty views claim() looks up in its catalog cache before it reads
-- anything else (idem_pause_may_cover):
-- - idem_pauses_none exists exactly while idem_pauses has no row (v16, 0016_pause_signal.sql);
-- - while some pause is in idem_pauses, none names operation '*', the paused operations are at
--   most 256 and "idem_paused:<operation>" fits a relation name (63 bytes) for each, there is one
--   view of that name per paused operation and the view idem_pauses_by_operation says so (v18);
--   otherwise neither kind exists, and every claim reads the pause tables.
-- Only what changed is written to the catalog: summarising twice writes nothing, and a pause on one
-- more operation creates one view. Takes the summary's EXCLUSIVE lock first (claims only read it,
-- under ACCESS SHARE, so none waits), so rebuilds run one at a time and each reads, READ
-- COMMITTED, every pause committed before it: a concurrent change is summarised by its own call,
-- after this one. DDL is transactional: claims see the tables and the views change together.
-- idem_pause and idem_resume call it; the owner calls it after writing idem_pauses by hand.
CREATE OR REPLACE FUNCTION idem_pause_summarise()
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $summarise$
DECLARE
    v_paused boolean;
    v_operations text[];
    v_by_operation boolean;
    v_name text;
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

    SELECT array_agg(DISTINCT 'idem_paused:' || p.operation) INTO v_operations FROM idem_pauses p;
    v_by_operation := v_paused
        AND NOT EXISTS (SELECT FROM idem_pauses p WHERE p.operation = '*')
        AND cardinality(v_operations) <= 256
        AND NOT EXISTS (SELECT FROM unnest(v_operations) n WHERE octet_length(n) > 63);
    IF NOT v_by_operation THEN
        v_operations := '{}';
    END IF;
    -- The gate goes first and comes last, though claims see the transaction's end state only.
    IF NOT v_by_operation AND to_regclass('@extschema@.idem_pauses_by_operation') IS NOT NULL THEN
        DROP VIEW @extschema@.idem_pauses_by_operation;
    END IF;
    FOR v_name IN
        SELECT c.relname FROM pg_class c
         WHERE c.relnamespace = '@extschema@'::regnamespace AND c.relkind = 'v'
           AND c.relname LIKE 'idem\_paused:%' AND c.relname <> ALL (v_operations)
    LOOP
        EXECUTE format('DROP VIEW @extschema@.%I', v_name);
    END LOOP;
    FOR v_name IN
        SELECT n FROM unnest(v_operations) n
         WHERE to_regclass('@extschema@.' || quote_ident(n)) IS NULL
    LOOP
        EXECUTE format('CREATE VIEW @extschema@.%I AS SELECT', v_name);
    END LOOP;
    IF v_by_operation AND to_regclass('@extschema@.idem_pauses_by_operation') IS NULL THEN
        CREATE VIEW @extschema@.idem_pauses_by_operation AS SELECT;
    END IF;
END
$summarise$;

REVOKE ALL ON FUNCTION idem_pause_summarise() FROM PUBLIC;
