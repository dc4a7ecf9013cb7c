-- idem_counters_add_detail (schema v10, changed in v13; the history is in git log).
-- The flush's checks (v6's add_counters(), renamed idem_counters_add_detail() by v8) with the
-- same name added; everything else as it was. CREATE OR REPLACE keeps its owner and privileges.
-- idem_counters_total (v8) has no CHECK on outcome: add_counters() writes there only what
-- passed this function.
CREATE OR REPLACE FUNCTION idem_counters_add_detail(p_batch jsonb)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $detail$
DECLARE
    c_cap constant numeric := 1000000000000000;
    v_now timestamptz := date_trunc('minute', now());
    v_rows integer;
BEGIN
    INSERT INTO idem_counters AS c (bucket, tenant, operation, outcome, n)
    SELECT least(to_timestamp(r.m), v_now), r.t, r.o, r.w, least(sum(r.n), c_cap)::bigint
      FROM jsonb_to_recordset(p_batch) AS r(m bigint, t text, o text, w text, n bigint)
     GROUP BY 1, 2, 3, 4
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = least(c.n::numeric + EXCLUDED.n, c_cap)::bigint;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END
$detail$;

-- Workers reach the detail only through add_counters() (roles.sql grants them that one).
REVOKE ALL ON FUNCTION idem_counters_add_detail(jsonb) FROM PUBLIC;
