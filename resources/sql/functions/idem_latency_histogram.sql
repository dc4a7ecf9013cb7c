-- idem_latency_histogram (schema v17; the history is in git log).
-- The folded latency histograms of [p_from, p_to) (whole minutes; only minutes before
-- idem_latency_state.folded_to exist), of one tenant and/or operation or all (NULL), one row per
-- kind ('run', 'tts', 'attempts') and operation (p_by_operation; else operation '*') and minute
-- (p_per_minute; else bucket NULL): how many values, their sum (microseconds, or attempts), and
-- the merged slots with their counts (slot meaning: idem_latency_value).
CREATE OR REPLACE FUNCTION idem_latency_histogram(p_from timestamptz, p_to timestamptz, p_tenant text DEFAULT NULL,
                                                  p_operation text DEFAULT NULL, p_by_operation boolean DEFAULT true,
                                                  p_per_minute boolean DEFAULT false)
RETURNS TABLE (bucket timestamptz, operation text, kind text, n bigint, total numeric, slots smallint[], counts bigint[])
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $histogram$
BEGIN
    IF p_from IS NULL OR p_to IS NULL OR p_to < p_from OR p_to - p_from > interval '31 days' THEN
        RAISE EXCEPTION 'a window needs a start and an end at most 31 days after it, not % to %', p_from, p_to
            USING ERRCODE = 'ID003';
    END IF;
    IF p_by_operation IS NULL OR p_per_minute IS NULL THEN
        RAISE EXCEPTION 'by_operation and per_minute must be true or false' USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    WITH picked AS (
        SELECT CASE WHEN p_per_minute THEN l.bucket END AS b,
               CASE WHEN p_by_operation THEN l.operation ELSE '*' END AS op,
               l.kind AS k, l.n AS cnt, l.total AS tot, l.slots AS ss, l.counts AS cs
          FROM idem_latency l
         WHERE l.bucket >= p_from AND l.bucket < p_to
           AND (p_tenant IS NULL OR l.tenant = p_tenant) AND (p_operation IS NULL OR l.operation = p_operation)
    ), sums AS (
        SELECT p.b, p.op, p.k, sum(p.cnt)::bigint AS cnt, sum(p.tot) AS tot FROM picked p GROUP BY 1, 2, 3
    ), cells AS (
        SELECT p.b, p.op, p.k, u.s, sum(u.c)::bigint AS c
          FROM picked p CROSS JOIN LATERAL unnest(p.ss, p.cs) u(s, c)
         GROUP BY 1, 2, 3, 4
    )
    SELECT s.b, s.op, s.k, s.cnt, s.tot,
           (SELECT array_agg(c.s ORDER BY c.s) FROM cells c
             WHERE c.b IS NOT DISTINCT FROM s.b AND c.op = s.op AND c.k = s.k),
           (SELECT array_agg(c.c ORDER BY c.s) FROM cells c
             WHERE c.b IS NOT DISTINCT FROM s.b AND c.op = s.op AND c.k = s.k)
      FROM sums s
     ORDER BY s.b NULLS FIRST, s.op, s.k;
END
$histogram$;

REVOKE ALL ON FUNCTION idem_latency_histogram(timestamptz, timestamptz, text, text, boolean, boolean) FROM PUBLIC;
